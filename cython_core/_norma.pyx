"""Compiled NORMA (Kivinen, Smola and Williamson 2004): its block loop over the learner
toolkit's kernel expansion, and its state.

f ← (1 − η_t c) f − η_t Σ_y ξ_{t,y} k((x_t, y), ·), with the ω most recent non-zero terms
kept in a circular buffer (the store, at most ω rows). Scores are vectors (one per class
for multiclass through the delta kernel on labels, F = kᵀA; one otherwise). The shrinking
is lazy: stored coefficients are A and the true ones are scale·A, so a step costs one
kernel row and no pass over the store.
"""
cimport numpy as cnp
from libc.math cimport sqrt
from libc.stdlib cimport free

from kbench.cython_core._loop cimport *
from kbench.cython_core._online_ops cimport (
    Cfg, NU_MARGIN, NU_OFF, OnlineConfig, _check_given, _clipped_exp, _gradient, _predict,
    _ring_slot,
)

cnp.import_array()


cpdef enum Schedule:
    S_CONSTANT = 0
    S_INV_SQRT = 1
    S_DECAY_TAU = 2


cdef class NormaState:
    """NORMA's running state; picklable: the oldest stored row ``head`` (replaced next once
    the store holds ω rows), the examples seen ``t``, the lazy ``scale`` of the stored
    coefficients, the margin ``eps`` of the ν-trick, the margin ``violations`` and the
    ``evictions``, and the offsets ``b`` (one per score)."""

    cdef public Py_ssize_t head
    cdef public double t, scale, eps, violations, evictions
    cdef public cnp.ndarray b

    def __init__(self, b, double eps=0.0, *, Py_ssize_t head=0, double t=0.0,
                 double scale=1.0, double violations=0.0, double evictions=0.0):
        self.b, self.eps, self.head, self.t = b, eps, head, t
        self.scale, self.violations, self.evictions = scale, violations, evictions

    def __reduce__(self):
        return _rebuild, (self.b, self.eps, self.head, self.t, self.scale, self.violations,
                          self.evictions)


def _rebuild(b, eps, head, t, scale, violations, evictions):
    return NormaState(b, eps, head=head, t=t, scale=scale, violations=violations,
                      evictions=evictions)


cdef inline double _step(int schedule, double eta0, double tau, double t) noexcept nogil:
    """η_t with t the number of examples seen before this one (so the first step is η0)."""
    if schedule == S_CONSTANT:
        return eta0
    elif schedule == S_INV_SQRT:
        return eta0 / sqrt(t + 1.0)
    return eta0 * sqrt(tau / (tau + t))


def step_size(Schedule schedule, double eta0, double tau, double t):
    """η_t of ``schedule`` after t examples, as the loop takes it."""
    return _step(schedule, eta0, tau, t)


def norma_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
                bint have_row=False, double kxx=0.0, *, OnlineConfig cfg not None,
                NormaState state not None, Py_ssize_t budget,
                const double[::1] xi_given=None, int s_given=0):
    """NORMA on rows start, start+1, … of ``rows``, at most ``budget`` = ω stored rows.

    Each example: the scores F + b (scale·kᵀA + b), the prediction (binary ±1, ties to +1;
    multiclass the arg-max; novelty +1 unless F + b falls below the margin; regression
    F + b; NaN once a score is not finite), the gradient ξ and the violation s at them
    (``xi_given`` and ``s_given`` for a loss without a compiled form: one row a call);
    then the shrinking, a new term −η ξ when ξ ≠ 0 (into the oldest row once ω are
    stored), the offsets and the ν-trick's margin. ``cfg`` holds the task, the loss and
    NORMA's settings (eta0, c, schedule, tau, use_offset, the ν-trick's). Calling
    convention and result as :func:`kbench.cython_core._perceptron.perceptron_block`.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A)
    cdef Cfg g = cfg.c
    cdef Py_ssize_t C = g.C, m = A.m, n = rows.n, cap = A.cap, i = start, c, j, slot
    cdef double[::1] b = state.b
    if A.C != C or b.shape[0] != C:
        raise ValueError(f"kbench: NORMA's store and offsets need {C} columns")
    if cap > budget:
        raise ValueError(f"kbench: NORMA's store holds {cap} rows, above its budget {budget}")
    _check_given(xi_given, C, n - start, g.loss < 0 and g.nu_mode == NU_OFF)
    cdef double* coef = A.alpha
    cdef double* krow = A.krow
    cdef const double* Y = A.y
    cdef double* P = A.pred
    cdef long long evals = 0
    cdef Py_ssize_t head = state.head
    cdef double t = state.t, cs = state.scale, eps = state.eps, viol = state.violations
    cdef double evict = state.evictions, xsq, eta, eta_e, grad
    cdef bint first, nonzero, given = xi_given is not None
    cdef int s
    cdef double* work = _doubles(3 * C)
    cdef double* F = work
    cdef double* xi = work + C
    cdef double* chi = work + 2 * C
    with nogil:
        while i < n:
            first = have_row and i == 0
            evals += _row_at(&R, i, m, first, &xsq, krow)
            _expansion(krow, coef, m, C, 1.0, F)
            for c in range(C):
                F[c] = cs * F[c] + b[c]
            if not given:
                s = _gradient(&g, eps, F, F, Y[i], xi, chi)
            else:
                for c in range(C):
                    xi[c] = xi_given[c]
                s = s_given
            nonzero = False
            for c in range(C):
                if xi[c] != 0.0:
                    nonzero = True
            if nonzero and cap < budget and _store_full(m, cap, first, &evals, m):
                break
            P[i] = _predict(&g, F, eps if g.nu_mode != NU_OFF else g.margin)
            # The step: shrink, store −η ξ, move the offset and the margin.
            eta = _step(g.schedule, g.eta0, g.tau, t)
            cs *= 1.0 - eta * g.c
            if cs < 1e-200:
                # Fold the global scale into the coefficients before it underflows (or,
                # with η c = 1, when the old terms have been cancelled exactly).
                for j in range(m * C):
                    coef[j] *= cs
                cs = 1.0
            if nonzero:
                slot = _ring_slot(&m, &head, cap, &evict)
                _store_at(&R, i, slot)
                R.sq[slot] = xsq
                for c in range(C):
                    coef[slot * C + c] = -eta * xi[c] / cs
                if g.use_offset:
                    for c in range(C):
                        b[c] -= eta * xi[c]
            if g.nu_mode != NU_OFF:
                # The margin's plain step follows the same schedule as η, started at η_ε,0.
                eta_e = g.eta_eps0 * _step(g.schedule, 1.0, g.tau, t)
                # ∂J/∂ε = s − ν for margins, ν − s for a regression tube.
                grad = (s - g.nu) if g.nu_mode == NU_MARGIN else (g.nu - s)
                if g.nu_additive:
                    eps -= eta_e * grad
                    if eps < 0.0:
                        eps = 0.0
                else:
                    # Log-space step ε ← ε exp(−η_ε ε ∂J/∂ε).
                    eps *= _clipped_exp(-eta_e * eps * grad)
            viol += s
            t += 1.0
            i += 1
    free(work)
    state.head, state.t, state.scale, state.eps = head, t, cs, eps
    state.violations, state.evictions = viol, evict
    return i, m, evals
