"""Compiled NORMA (Kivinen, Smola and Williamson 2004): the block loop and the one-step update.

f ← (1 − η_t c) f − η_t Σ_y ξ_{t,y} k((x_t, y), ·), with the ω most recent non-zero terms
kept in a circular buffer. Scores are vectors (one per class for multiclass through the
delta kernel on labels, F = kᵀA; one otherwise). The shrinking is lazy: stored
coefficients are A and the true ones are scale·A, so a step costs one kernel row and no
pass over the buffer.

``norma_block`` runs the prequential loop (predict, then learn) for compiled kernels and
losses. ``norma_apply`` is the update alone, given the loss gradient; the Python path of
the learner calls it after computing the gradient with the loss plugin, so that both
paths share one implementation of the update.
"""
from libc.math cimport sqrt

from kbench.cython_core._online_ops cimport (
    Cfg, Model, NU_MARGIN, NU_OFF, OnlineConfig, _clipped_exp, _gradient, _predict, _ring_slot,
    _row_scores, model_of,
)
from kbench.cython_core._sparse cimport SparseRows, _attach, _copy_at


cdef enum:
    S_CONSTANT = 0
    S_INV_SQRT = 1
    S_DECAY_TAU = 2

# Indices of the state array. Keep STATE_FIELDS in the same order.
cdef enum:
    N_M = 0
    N_HEAD = 1
    N_T = 2
    N_SCALE = 3
    N_EVALS = 4
    N_EPS = 5
    N_VIOL = 6
    N_EVICT = 7
    N_SIZE = 8

STATE_FIELDS = ("m", "head", "t", "scale", "kernel_evals", "eps", "violations", "evictions")


cdef inline double _step(int schedule, double eta0, double tau, double t) noexcept nogil:
    """η_t with t the number of examples seen before this one (so the first step is η0)."""
    if schedule == S_CONSTANT:
        return eta0
    elif schedule == S_INV_SQRT:
        return eta0 / sqrt(t + 1.0)
    return eta0 * sqrt(tau / (tau + t))


cdef inline void _norma_update(const Cfg* g, double* st, double* b, double* SV, double* sq,
                               double* A, Py_ssize_t d, Py_ssize_t cap, const double* x,
                               double xsq, const double* xi, int s, SparseRows* sp,
                               Py_ssize_t i) noexcept nogil:
    """One NORMA step after the prediction: shrink, store −η ξ, move the offset and margin.
    With sparse rows ``sp``, x is example i's mark and its CSR row is stored too."""
    cdef Py_ssize_t C = g.C, m = <Py_ssize_t>st[N_M], head = <Py_ssize_t>st[N_HEAD]
    cdef Py_ssize_t c, j, slot
    cdef double t = st[N_T], cs = st[N_SCALE], eta, eta_e, grad
    cdef bint nonzero = False
    eta = _step(g.schedule, g.eta0, g.tau, t)
    cs *= 1.0 - eta * g.c
    if cs < 1e-200:
        # Fold the global scale into the coefficients before it underflows (or, with
        # η c = 1, when the old terms have been cancelled exactly).
        for j in range(m * C):
            A[j] *= cs
        cs = 1.0
    for c in range(C):
        if xi[c] != 0.0:
            nonzero = True
    if nonzero:
        slot = _ring_slot(&m, &head, cap, &st[N_EVICT])
        _copy_at(sp, i, SV, slot, x, d)
        sq[slot] = xsq
        for c in range(C):
            A[slot * C + c] = -eta * xi[c] / cs
        if g.use_offset:
            for c in range(C):
                b[c] -= eta * xi[c]
    if g.nu_mode != NU_OFF:
        # The margin's plain step follows the same schedule as η, started at η_ε,0.
        eta_e = g.eta_eps0 * _step(g.schedule, 1.0, g.tau, t)
        # ∂J/∂ε = s − ν for margins, ν − s for a regression tube.
        grad = (s - g.nu) if g.nu_mode == NU_MARGIN else (g.nu - s)
        if g.nu_additive:
            st[N_EPS] -= eta_e * grad
            if st[N_EPS] < 0.0:
                st[N_EPS] = 0.0
        else:
            # Log-space step ε ← ε exp(−η_ε ε ∂J/∂ε).
            st[N_EPS] *= _clipped_exp(-eta_e * st[N_EPS] * grad)
    st[N_VIOL] += s
    st[N_M] = m
    st[N_HEAD] = head
    st[N_T] = t + 1.0
    st[N_SCALE] = cs


def norma_block(OnlineConfig cfg not None, tuple model, const double[:, ::1] X,
                const double[::1] y, double[::1] pred, double[::1] krow, double[::1] work,
                sparse=None):
    """Predict then learn every row of X; predictions (made before each update) go to pred.

    ``model`` is ``(SV, sq, A, state, b)``: the buffer's rows and squared norms, ``A`` its
    cap × C coefficient block, ``state`` the array named by
    STATE_FIELDS, ``b`` the offsets (C) and ``work`` scratch of at least 3·C entries.
    Binary predictions are ±1 (ties to +1), multiclass the arg-max (lowest index on
    ties), novelty +1 unless f + b falls below the margin, regression f + b; NaN once a
    score is not finite. With a ``sparse`` block (:class:`kbench.cython_core._sparse.SparseBlock`)
    the rows of X and SV are the examples' marks, the kernel rows come from the block's CSR
    rows against its store and a stored example goes into the store too.
    """
    cdef Model mo = model_of(model)
    cdef Cfg g = cfg.c
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], cap = mo.cap, i, c, m
    cdef Py_ssize_t C = g.C
    cdef double xsq, cs, eps
    cdef double* F = &work[0]
    cdef double* xi = &work[C]
    cdef double* chi = &work[2 * C]
    cdef int s
    if mo.ncol != C or mo.nb != C or work.shape[0] < 3 * C or mo.nstate != N_SIZE:
        raise ValueError("kbench: norma_block array shapes do not match the configuration")
    if X.shape[0] and (d != mo.d or krow.shape[0] < cap):
        raise ValueError("kbench: norma_block got rows of the wrong dimension")
    cdef SparseRows* sp = _attach(sparse, n, cap)
    if n == 0:
        return
    with nogil:
        for i in range(n):
            m = <Py_ssize_t>mo.state[N_M]
            mo.state[N_EVALS] += _row_scores(&g, mo.SV, mo.sq, m, d, &X[i, 0], &xsq, &krow[0],
                                             mo.A, C, F, sp, i)
            cs = mo.state[N_SCALE]
            for c in range(C):
                F[c] = cs * F[c] + mo.b[c]
            eps = mo.state[N_EPS]
            pred[i] = _predict(&g, F, eps if g.nu_mode != NU_OFF else g.margin)
            s = _gradient(&g, eps, F, F, y[i], xi, chi)
            _norma_update(&g, mo.state, mo.b, mo.SV, mo.sq, mo.A, d, cap, &X[i, 0], xsq, xi, s,
                          sp, i)


def norma_apply(OnlineConfig cfg not None, tuple model, const double[::1] x, double xsq,
                const double[::1] xi, int s):
    """The update of one example whose gradient ξ (and violation indicator s) the caller
    computed at the current scores; the per-example Python path of the learner. ``model``
    as for :func:`norma_block`."""
    cdef Model mo = model_of(model)
    cdef Cfg g = cfg.c
    if mo.ncol != g.C or mo.nb != g.C or xi.shape[0] != g.C or mo.nstate != N_SIZE:
        raise ValueError("kbench: norma_apply array shapes do not match the configuration")
    if x.shape[0] != mo.d:
        raise ValueError("kbench: norma_apply got a row of the wrong dimension")
    _norma_update(&g, mo.state, mo.b, mo.SV, mo.sq, mo.A, mo.d, mo.cap,
                  &x[0] if x.shape[0] else NULL, xsq, &xi[0], s, NULL, 0)
