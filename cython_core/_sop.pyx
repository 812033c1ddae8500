"""Compiled prequential block loop of the kernel second-order perceptron (Cesa-Bianchi,
Conconi and Gentile 2005), binary.

With S the examples stored on mistakes (labels y_S), x the current one and G the Gram
matrix of (S, x), the prediction is sign f(x), f(x) = (y_S, 0)ᵀ (aI + G)⁻¹ k, k the kernel
column of x against (S, x). By the block inverse of aI + G, with M = (aI + G_S)⁻¹,
b = M k_S and s = a + k(x, x) − k_Sᵀ b > 0: f(x) = (a / s) · (M y_S)ᵀ k_S. So the learner's
expansion holds w = M y_S (its decision value is f·s/a: the same sign), and only a mistake
costs O(m²): M grows by the block inverse and w is recomputed. :class:`SopState` holds M
and y_S, typed, grown with the store.
"""
cimport numpy as cnp
from libc.stdlib cimport free
from scipy.linalg.cython_blas cimport dgemv, dger

import numpy as np

from kbench.cython_core._loop cimport *
from kbench.cython_core._labels cimport _sign_label

cnp.import_array()


cdef class SopState:
    """M = (aI + G_S)⁻¹ (``M``, ``cap × cap``, the leading m × m block in use) and the
    stored labels y_S (``labels``); picklable."""

    cdef public object M
    cdef public object labels

    def __init__(self, M=None, labels=None):
        self.M = np.zeros((0, 0)) if M is None else M
        self.labels = np.zeros(0) if labels is None else labels

    def __reduce__(self):
        return SopState, (self.M, self.labels)

    def ensure(self, Py_ssize_t cap):
        """Room for ``cap`` stored examples, those stored kept."""
        if cap > self.M.shape[0]:
            self.M = _grown(self.M, (cap, cap))
            self.labels = _grown(self.labels, (cap,))


def sop_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
              bint have_row=False, double kxx=0.0, *, SopState state not None, double a):
    """Predict then learn rows start, start+1, … of ``rows`` (labels ±1): on a mistake,
    y·f(x) ≤ 0, store x. Calling convention and result as
    :func:`kbench.cython_core._perceptron.perceptron_block`; ``a`` > 0 is the paper's
    regularization."""
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "the second-order perceptron is binary (got {} columns)")
    if not a > 0:
        raise ValueError(f"kbench: the second-order perceptron needs a > 0, got {a}")
    state.ensure(A.cap)
    cdef double[:, ::1] Mv = state.M
    cdef double[::1] ys = state.labels
    cdef double* M = &Mv[0, 0]
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, r
    cdef long long evals = 0
    cdef double f, xsq, kx, s, counted = 0.0
    cdef double* b = _doubles(A.cap + 1)
    cdef int mm, m1, ld = <int>A.cap, one = 1
    cdef double d1 = 1.0, d0 = 0.0, scale
    cdef char tr = b'T'
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, A.krow)
            f = _dot(A.krow, A.alpha, <int>m) if m > 0 else 0.0
            A.pred[i] = _sign_label(f)
            if A.y[i] * f <= 0.0:
                if _store_full(m, A.cap, have_row and i == 0, &evals, m):
                    break
                kx = _self_at(&R, i, xsq, have_row and i == 0, kxx, &counted)
                mm = <int>m
                if m > 0:
                    dgemv(&tr, &mm, &mm, &d1, M, &ld, A.krow, &one, &d0, b, &one)  # b = M k
                    s = a + kx - _dot(A.krow, b, mm)
                    scale = 1.0 / s
                    dger(&mm, &mm, &scale, b, &one, b, &one, M, &ld)  # M + b bᵀ/s
                else:
                    s = a + kx
                for r in range(m):
                    Mv[r, m] = -b[r] / s
                    Mv[m, r] = -b[r] / s
                Mv[m, m] = 1.0 / s
                ys[m] = A.y[i]
                _store_at(&R, i, m)
                R.sq[m] = xsq
                m += 1
                m1 = <int>m  # w = M y_S, the expansion's coefficients
                dgemv(&tr, &m1, &m1, &d1, M, &ld, &ys[0], &one, &d0, A.alpha, &one)
            i += 1
    free(b)
    return i, m, evals + <long long>counted
