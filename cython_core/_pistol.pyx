"""Compiled PiSTOL (Orabona 2014, Alg. 3) and kernel SGD with its averaged solution.

Both keep ``g = Σ_i c_i k(x_i, ·)`` (one column per output) and, per stored vector, the
second column ``u_i = c_i · W_(i)`` with ``W_t = Σ_{τ≤t} w_τ`` the running sum of the
multipliers and ``W_(i)`` its value right after round i. Then

* the iterate of round t is ``f_t = w_t · g_{t−1}``;
* the average ``f̄_T = (1/T) Σ_{t≤T} f_t = (W_T · g − u) / T`` (specs/002 §1.1), so one kernel
  row and one two-column expansion give the online, the last and the averaged predictions.

PiSTOL: ``w_t = (b / α_{t−1}) exp(‖g_{t−1}‖² / (2 α_{t−1}))``, computed in log space, and the
new coefficient is ``−s_t`` (the loss gradient at the online prediction). SGD: ``w_t = 1``
and the new coefficient is ``−η_t s_t``, so ``W_(i) = i``. ``‖g‖²`` is updated exactly from
the kernel row already computed: ``‖g + c k(x,·)‖² = ‖g‖² + 2 c·g(x) + ‖c‖² k(x, x)``.

``pistol_block`` runs the prequential loop; ``pistol_multiplier``, ``pistol_gradient`` and
``pistol_apply`` are its pieces for the per-example Python path (third-party kernels and
losses), so that both paths do the same arithmetic.
"""
from libc.math cimport exp, log, sqrt
from libc.string cimport memcpy

from kbench.cython_core._online_ops cimport Cfg, OnlineConfig, _gradient, _predict, _row_scores, _self_kernel
from kbench.cython_core._sparse cimport SparseRows, _attach, _block_put
from kbench.cython_core._online_ops import compiled_gradient, compiled_self_kernel


# Modes and outputs. Keep in sync with plugins/algorithms/_averaged.py.
cdef enum:
    M_PISTOL = 0
    M_SGD = 1
    O_AVERAGE = 0
    O_LAST = 1
    S_CONSTANT = 0
    S_INV_SQRT = 1

# Indices of the parameter array. Keep PARAM_FIELDS in the same order.
cdef enum:
    P_MODE = 0
    P_OUTPUT = 1
    P_LOG_B = 2
    P_A = 3
    P_L = 4
    P_ETA = 5
    P_SCHEDULE = 6
    P_SIZE = 7

PARAM_FIELDS = ("mode", "output", "log_b", "a", "L", "eta", "schedule")

# Indices of the state array. Keep STATE_FIELDS in the same order.
cdef enum:
    S_T = 0
    S_M = 1
    S_NORM2 = 2
    S_ALPHA = 3
    S_W = 4
    S_EVALS = 5
    S_MAX_EXP = 6
    S_SUP_KXX = 7
    S_OVERFLOW = 8
    S_SIZE = 9

STATE_FIELDS = ("t", "m", "norm2", "acc_alpha", "W", "kernel_evals", "max_exponent",
                "sup_kxx", "overflow")

# Largest log w_t kept: exp(700) is near the top of float64 (exp(709.8) overflows).
cdef double _LOG_W_MAX = 700.0
LOG_W_MAX = _LOG_W_MAX


cdef struct PCfg:
    int mode, output, schedule
    double log_b, a, L, eta


cdef inline PCfg _read_params(const double[::1] p) except *:
    cdef PCfg q
    if p.shape[0] != P_SIZE:
        raise ValueError(f"kbench: PiSTOL parameter array has {p.shape[0]} entries, expected {P_SIZE}")
    q.mode = <int>p[P_MODE]
    q.output = <int>p[P_OUTPUT]
    q.log_b = p[P_LOG_B]
    q.a = p[P_A]
    q.L = p[P_L]
    q.eta = p[P_ETA]
    q.schedule = <int>p[P_SCHEDULE]
    return q


cdef inline double _log_w(const PCfg* q, const double* st) noexcept nogil:
    """log w_t from the state after round t − 1: log b − log α + ‖g‖²/(2α) (SGD: 0)."""
    if q.mode == M_SGD:
        return 0.0
    return q.log_b - log(st[S_ALPHA]) + st[S_NORM2] / (2.0 * st[S_ALPHA])


cdef inline void _outputs(const PCfg* q, const double* st, const double* GU, Py_ssize_t C,
                          double w, double* Fon, double* Fout) noexcept nogil:
    """Online scores w·g(x) (Fon) and the returned decision (Fout): the same for the last
    iterate, (W·g(x) − u(x))/T for the average of the T rounds learned (0 before any)."""
    cdef Py_ssize_t c
    cdef double T = st[S_T], W = st[S_W]
    for c in range(C):
        Fon[c] = w * GU[c]
    if q.output == O_LAST:
        for c in range(C):
            Fout[c] = Fon[c]
    elif T > 0.0:
        for c in range(C):
            Fout[c] = (W * GU[c] - GU[C + c]) / T
    else:
        for c in range(C):
            Fout[c] = 0.0


cdef inline void _learn(const PCfg* q, Py_ssize_t C, double* st, double* SV, double* sq,
                        double* A, Py_ssize_t d, const double* x, double xsq, double kxx,
                        const double* GU, double w, const double* xi) noexcept nogil:
    """Round t's update given the gradient ξ at the online scores: W += w_t always; when
    ξ ≠ 0 append x with coefficient −scale·ξ (and u = coefficient·W_t), update ‖g‖² and α.

    The caller guarantees room for one more row (m < capacity)."""
    cdef Py_ssize_t c, m = <Py_ssize_t>st[S_M]
    cdef double scale, dot = 0.0, nx2 = 0.0, norm2, coef
    cdef bint nonzero = False
    st[S_W] += w
    for c in range(C):
        if xi[c] != 0.0:
            nonzero = True
    if nonzero:
        if q.mode == M_PISTOL:
            scale = 1.0
        elif q.schedule == S_INV_SQRT:
            scale = q.eta / sqrt(st[S_T] + 1.0)  # η/√t at round t = T + 1
        else:
            scale = q.eta
        for c in range(C):
            dot += xi[c] * GU[c]
            nx2 += xi[c] * xi[c]
        # ‖g − scale·ξ k(x,·)‖²; cancellation can take it a hair below 0 (specs/002 P4).
        norm2 = st[S_NORM2] - 2.0 * scale * dot + scale * scale * nx2 * kxx
        st[S_NORM2] = norm2 if norm2 > 0.0 else 0.0
        if q.mode == M_PISTOL:
            # The increment is a·|s_t|·‖k(x_t,·)‖: the RKHS norm, sqrt(k(x, x)) (P6).
            st[S_ALPHA] += q.a * sqrt(nx2) * sqrt(kxx)
        memcpy(SV + m * d, x, d * sizeof(double))
        sq[m] = xsq
        for c in range(C):
            coef = -scale * xi[c]
            A[m * 2 * C + c] = coef
            A[m * 2 * C + C + c] = coef * st[S_W]
        st[S_M] = m + 1
        if kxx > st[S_SUP_KXX]:
            st[S_SUP_KXX] = kxx
    st[S_T] += 1.0


def pistol_block(OnlineConfig cfg not None, const double[::1] params, double[::1] state,
                 double[:, ::1] SV, double[::1] sq, double[:, ::1] A, const double[:, ::1] X,
                 const double[::1] y, double[::1] pred, double[::1] krow, double[::1] work,
                 Py_ssize_t start, sparse=None):
    """Predict then learn rows start, start+1, … of X; predictions go to pred.

    ``cfg`` is the online learners' OnlineConfig (kernel, task, loss),
    ``params`` the array named by PARAM_FIELDS, ``state`` by STATE_FIELDS; ``A`` is the
    buffer's cap × 2C block [c | u] and ``work`` scratch of at least 6·C entries.

    Returns the index of the first row not processed: len(X) when done, else the buffer
    is full (grow it and resume there) or, with ``state["overflow"]`` set to log w, the
    multiplier would overflow float64. ``sparse``: CSR rows, as for
    :func:`kbench.cython_core._budget_perceptrons.rbp_block` (the rows of X and SV then
    hold marks, which are copied, never read).
    """
    cdef Cfg g = cfg.c
    cdef PCfg q = _read_params(params)
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], cap = SV.shape[0], i, m, C = g.C
    cdef double xsq, kxx, logw, w, expo
    cdef double* GU = &work[0]
    cdef double* Fon = &work[2 * C]
    cdef double* Fout = &work[3 * C]
    cdef double* xi = &work[4 * C]
    cdef double* chi = &work[5 * C]
    if A.shape[1] != 2 * C or work.shape[0] < 6 * C or state.shape[0] != S_SIZE:
        raise ValueError("kbench: pistol_block array shapes do not match the configuration")
    if n and (d != SV.shape[1] or krow.shape[0] < cap or pred.shape[0] < n or y.shape[0] < n):
        raise ValueError("kbench: pistol_block got arrays of the wrong size")
    if g.kind < 0:
        raise ValueError("kbench: pistol_block needs a compiled kernel")
    cdef SparseRows* sp = _attach(sparse, n, cap)
    i = start
    with nogil:
        while i < n:
            m = <Py_ssize_t>state[S_M]
            if m == cap:
                break
            logw = _log_w(&q, &state[0])
            if logw > _LOG_W_MAX:
                state[S_OVERFLOW] = logw
                break
            w = exp(logw)
            if q.mode == M_PISTOL:
                expo = state[S_NORM2] / (2.0 * state[S_ALPHA])
                if expo > state[S_MAX_EXP]:
                    state[S_MAX_EXP] = expo
            state[S_EVALS] += _row_scores(&g, &SV[0, 0], &sq[0], m, d, &X[i, 0], &xsq, &krow[0],
                                          &A[0, 0], 2 * C, GU, sp, i)
            _outputs(&q, &state[0], GU, C, w, Fon, Fout)
            pred[i] = _predict(&g, Fout, g.margin)
            _gradient(&g, 0.0, Fon, Fon, y[i], xi, chi)
            kxx = _self_kernel(&g, &X[i, 0], d, xsq)
            _learn(&q, C, &state[0], &SV[0, 0], &sq[0], &A[0, 0], d, &X[i, 0], xsq, kxx, GU,
                   w, xi)
            if sp != NULL and state[S_M] > m:  # stored: its CSR row goes into the store
                _block_put(sp, i, m)
            i += 1
    return i


def pistol_multiplier(const double[::1] params, double[::1] state):
    """log w of the next round (0 for SGD); also raises the state's max exponent."""
    cdef PCfg q = _read_params(params)
    cdef double expo
    if state.shape[0] != S_SIZE:
        raise ValueError("kbench: pistol_multiplier got a state of the wrong size")
    if q.mode == M_PISTOL:
        expo = state[S_NORM2] / (2.0 * state[S_ALPHA])
        if expo > state[S_MAX_EXP]:
            state[S_MAX_EXP] = expo
    return _log_w(&q, &state[0])


def pistol_outputs(const double[::1] params, const double[::1] state, const double[::1] GU,
                   double w, double[::1] Fon, double[::1] Fout):
    """Online scores and the returned decision from the expansion GU = [g(x) | u(x)]."""
    cdef PCfg q = _read_params(params)
    cdef Py_ssize_t C = Fon.shape[0]
    if GU.shape[0] != 2 * C or Fout.shape[0] != C or state.shape[0] != S_SIZE:
        raise ValueError("kbench: pistol_outputs array shapes do not match")
    _outputs(&q, &state[0], &GU[0], C, w, &Fon[0], &Fout[0])


# The per-example path's gradient and k(x, x), shared with POLK.
pistol_gradient = compiled_gradient
pistol_self_kernel = compiled_self_kernel


def pistol_apply(const double[::1] params, double[::1] state, double[:, ::1] SV,
                 double[::1] sq, double[:, ::1] A, const double[::1] x, double xsq,
                 double kxx, const double[::1] GU, double w, const double[::1] xi):
    """The update of one round given the expansion GU = [g(x) | u(x)] at x, the multiplier w
    and the gradient ξ at the online scores; the buffer must have room for one more row."""
    cdef PCfg q = _read_params(params)
    cdef Py_ssize_t C = xi.shape[0]
    if (A.shape[1] != 2 * C or GU.shape[0] != 2 * C or state.shape[0] != S_SIZE
            or x.shape[0] != SV.shape[1]):
        raise ValueError("kbench: pistol_apply array shapes do not match")
    if <Py_ssize_t>state[S_M] >= SV.shape[0]:
        raise ValueError("kbench: pistol_apply needs room for one more support vector")
    _learn(&q, C, &state[0], &SV[0, 0], &sq[0], &A[0, 0], SV.shape[1],
           &x[0] if x.shape[0] else NULL, xsq, kxx, &GU[0], w, &xi[0])
