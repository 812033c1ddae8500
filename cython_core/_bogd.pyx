"""Compiled prequential block loop of bounded online gradient descent (BOGD), binary, over
the learner toolkit's kernel expansion."""
cimport numpy as cnp
from libc.math cimport fabs
from libc.stdint cimport uint64_t

from kbench.cython_core._loop cimport *
from kbench.cython_core._budget_ops cimport _fold_scale, _rng_below, _rng_uniform
from kbench.cython_core._labels cimport _sign_label
from kbench.cython_core._losses cimport _loss_deriv

cnp.import_array()


cdef enum:
    NOT_COMPILED = -1  # a third-party kernel (or loss): values come from Python


cdef class BogdState:
    """BOGD's scale cs of the stored coefficients (the true ones are cs·αⱼ) and the number of
    removals; picklable."""

    cdef public double cs
    cdef public long long removals

    def __init__(self, double cs=1.0, long long removals=0):
        self.cs, self.removals = cs, removals

    def __reduce__(self):
        return BogdState, (self.cs, self.removals)


def bogd_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
               bint have_row=False, double kxx=0.0, *, BogdState state not None, rng,
               Py_ssize_t budget, double eta, double lam, bint weighted, int loss_kind,
               double loss_p1, double g_given=0.0):
    """BOGD (Zhao et al. 2012) on rows start, start+1, … of ``rows``, at most ``budget`` ≥ 2
    support vectors.

    Each step: g = ℓ'(f(x), y); f ← (1 − ηλ) f; if g ≠ 0 and B vectors are stored, remove
    one, r, drawn uniformly (or with probability p_j = (1 − |α_j|/Σ|α|)/(B − 1) when
    ``weighted``) from the SplitMix64 state ``rng``, and rescale the others by 1/(1 − p_j)
    so that the expected function is unchanged; then add x with coefficient −ηg. With
    ``loss_kind`` < 0 (a loss without a compiled form: one row a call) the derivative is
    ``g_given``. Calling convention and result as
    :func:`kbench.cython_core._perceptron.perceptron_block`.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "BOGD is binary (got {} columns)")
    if budget < 2:
        raise ValueError(f"kbench: BOGD's budget must be at least 2, got {budget}")
    if loss_kind == NOT_COMPILED and rows.n - start > 1:
        raise ValueError("kbench: a loss's derivative from Python is one row a call")
    cdef uint64_t[::1] g64 = rng
    cdef double* a = A.alpha
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, B = budget, j, r
    cdef double cs = state.cs
    cdef long long evals = 0, removals = state.removals
    cdef double f, xsq, g, total, u, acc, pj
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, A.krow)
            _expansion(A.krow, a, m, 1, cs, &f)
            A.pred[i] = _sign_label(f)
            if loss_kind == NOT_COMPILED:
                g = g_given
            else:
                g = _loss_deriv(loss_kind, f, A.y[i], loss_p1)
            if g != 0.0 and m < B and _store_full(m, A.cap, have_row and i == 0, &evals, m):
                break
            cs *= 1.0 - eta * lam
            if g == 0.0:
                i += 1
                continue
            if m < B:
                r = m
                m += 1
            else:
                removals += 1
                total = 0.0
                if weighted:
                    for j in range(m):
                        total += fabs(a[j])
                if not weighted or total <= 0.0:
                    r = _rng_below(&g64[0], B)
                    cs *= <double>B / <double>(B - 1)
                else:
                    u = _rng_uniform(&g64[0])
                    acc = 0.0
                    r = m - 1
                    for j in range(m):
                        acc += (1.0 - fabs(a[j]) / total) / <double>(B - 1)
                        if u < acc:
                            r = j
                            break
                    for j in range(m):
                        if j == r:
                            continue
                        pj = (1.0 - fabs(a[j]) / total) / <double>(B - 1)
                        if pj < 1.0:
                            a[j] /= 1.0 - pj
            _store_at(&R, i, r)
            R.sq[r] = xsq
            a[r] = -eta * g / cs
            if cs < 1e-200 or cs > 1e200:
                cs = _fold_scale(a, m, cs)
            i += 1
    state.cs, state.removals = cs, removals
    return i, m, evals
