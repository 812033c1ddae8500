"""Compiled prequential block loop of the budget passive–aggressive learner BPA-S (Wang and
Vucetic 2010), binary, over the learner toolkit's kernel expansion."""
cimport numpy as cnp

import numpy as np

from kbench.cython_core._loop cimport *
from kbench.cython_core._labels cimport _sign_label

cnp.import_array()


cdef class BpaState:
    """k(x_j, x_j) of each support vector (``kdiag``, grown with the store) and the number of
    removals made; picklable."""

    cdef public object kdiag
    cdef public long long removals

    def __init__(self, kdiag=None, long long removals=0):
        self.kdiag = np.zeros(0) if kdiag is None else kdiag
        self.removals = removals

    def __reduce__(self):
        return BpaState, (self.kdiag, self.removals)

    def ensure(self, Py_ssize_t cap):
        """Room for ``cap`` support vectors, those stored kept."""
        if cap > self.kdiag.shape[0]:
            self.kdiag = _grown(self.kdiag, (cap,))


def bpa_s_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
                bint have_row=False, double kxx=0.0, *, BpaState state not None,
                Py_ssize_t budget, double C):
    """Predict then learn rows start, start+1, … of ``rows`` (labels ±1). On a hinge loss
    ℓ = 1 − y f(x) > 0: τ = min(C, ℓ / k(x, x)); below the budget x is added with α = τy;
    at the budget the support vector r minimising α_r² (k(x_r, x_r) − k(x_r, x)²/k(x, x))
    is replaced by x with α = τy + α_r k(x_r, x)/k(x, x). Calling convention and result as
    :func:`kbench.cython_core._perceptron.perceptron_block`.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "BPA-S is binary (got {} columns)")
    if not (budget >= 1 and C > 0):
        raise ValueError(f"kbench: BPA-S needs budget >= 1 and C > 0, got {budget}, {C}")
    state.ensure(A.cap)
    cdef double[::1] kdiag = state.kdiag
    cdef double* a = A.alpha
    cdef double* krow = A.krow
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, j, r
    cdef long long evals = 0, removals = state.removals
    cdef double f, xsq, kx, loss, tau, cost, best, counted = 0.0
    with nogil:
        while i < n:
            evals += _scores_at(&R, i, m, have_row and i == 0, &xsq, krow, a, 1, 1.0, &f)
            A.pred[i] = _sign_label(f)
            loss = 1.0 - A.y[i] * f
            if loss <= 0.0:
                i += 1
                continue
            kx = _self_at(&R, i, xsq, have_row and i == 0, kxx, &counted)
            if kx <= 0.0:  # k(x, ·) = 0: there is no direction to move in
                i += 1
                continue
            tau = loss / kx
            if tau > C:
                tau = C
            if m < budget:
                # m + 1: its kernel row and k(x, x) are computed again
                if _store_full(m, A.cap, have_row and i == 0, &evals, m + 1):
                    break
                r = m
                m += 1
                a[r] = tau * A.y[i]
            else:
                r = 0
                best = 0.0
                for j in range(m):
                    cost = a[j] * a[j] * (kdiag[j] - krow[j] * krow[j] / kx)
                    if j == 0 or cost < best:
                        best = cost
                        r = j
                a[r] = tau * A.y[i] + a[r] * krow[r] / kx
                removals += 1
            _store_at(&R, i, r)
            R.sq[r] = xsq
            kdiag[r] = kx
            i += 1
    state.removals = removals
    return i, m, evals + <long long>counted
