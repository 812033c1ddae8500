"""Compiled prequential block loop of ALD-KRLS, kernel recursive least squares with the
approximate-linear-dependence dictionary (Engel, Mannor and Meir 2004).

The dictionary and its coefficients α are the learner's kernel expansion (the store, as
for every expansion loop); :class:`KrlsState` holds the rest, typed: the inverse K̃⁻¹ of
the dictionary's kernel matrix and the matrix P, each ``cap × cap`` (row-major), of which
the leading ``m × m`` block is in use. The O(m²) products go to the BLAS; a row-major
matrix M with leading dimension cap is, to the BLAS, Mᵀ in column-major order.
"""
cimport numpy as cnp
from libc.float cimport DBL_EPSILON
from libc.stdlib cimport free
from scipy.linalg.cython_blas cimport dgemv, dger

import numpy as np

from kbench.cython_core._loop cimport *

cnp.import_array()


cdef class KrlsState:
    """K̃⁻¹ and P of ALD-KRLS (``Kinv``, ``P``: ``cap × cap`` float64, the leading m × m
    block in use), grown with the learner's store; picklable."""

    cdef public object Kinv
    cdef public object P

    def __init__(self, Kinv=None, P=None):
        self.Kinv = np.zeros((0, 0)) if Kinv is None else Kinv
        self.P = np.zeros((0, 0)) if P is None else P

    def __reduce__(self):
        return KrlsState, (self.Kinv, self.P)

    @property
    def cap(self):
        return self.Kinv.shape[0]

    def ensure(self, Py_ssize_t cap):
        """Room for ``cap`` dictionary entries, the entries in use kept."""
        if cap > self.Kinv.shape[0]:
            self.Kinv = _grown(self.Kinv, (cap, cap))
            self.P = _grown(self.P, (cap, cap))


def krls_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
               bint have_row=False, double kxx=0.0, *, KrlsState state not None,
               double tolerance):
    """Predict then learn rows start, start+1, … (regression): f(x) = Σ αⱼ k(dⱼ, x); with
    k the kernel row of x against the dictionary and a = K̃⁻¹k, x joins the dictionary when
    δ = k(x, x) − kᵀa > ``tolerance`` (K̃⁻¹ and P grow, α takes the new coefficient),
    else P and α take the recursive least-squares update. Calling convention and result
    as :func:`kbench.cython_core._perceptron.perceptron_block`.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "krls needs one coefficient column, got {}")
    state.ensure(A.cap)
    cdef double[:, ::1] Kinv = state.Kinv
    cdef double[:, ::1] P = state.P
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, r
    cdef long long evals = 0
    cdef double f, xsq, kx, delta, e, ka, denom, counted = 0.0
    cdef double* a = _doubles(4 * (A.cap + 1))
    cdef double* Pa = a + A.cap + 1
    cdef double* aP = Pa + A.cap + 1
    cdef double* q = aP + A.cap + 1
    cdef double* K = &Kinv[0, 0]
    cdef double* PP = &P[0, 0]
    cdef int mm, ld = <int>A.cap, one = 1
    cdef double d1 = 1.0, d0 = 0.0, scale
    cdef char tr = b'T', nt = b'N'
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, A.krow)
            kx = _self_at(&R, i, xsq, have_row and i == 0, kxx, &counted)
            f = _dot(A.krow, A.alpha, <int>m) if m > 0 else 0.0
            A.pred[i] = f
            if m == 0:
                if kx > DBL_EPSILON or kx < -DBL_EPSILON:
                    _store_at(&R, i, 0)
                    R.sq[0] = xsq
                    Kinv[0, 0] = 1.0 / kx
                    P[0, 0] = 1.0
                    A.alpha[0] = A.y[i] / kx
                    m = 1
                i += 1
                continue
            mm = <int>m
            dgemv(&tr, &mm, &mm, &d1, K, &ld, A.krow, &one, &d0, a, &one)  # a = K̃⁻¹ k
            delta = kx - _dot(A.krow, a, <int>m)
            e = A.y[i] - f
            if delta > tolerance:
                if _store_full(m, A.cap, have_row and i == 0, &evals, m):
                    break
                scale = 1.0 / delta
                dger(&mm, &mm, &scale, a, &one, a, &one, K, &ld)  # K̃⁻¹ + a aᵀ/δ
                for r in range(m):
                    Kinv[r, m] = -a[r] / delta
                    Kinv[m, r] = -a[r] / delta
                    P[r, m] = 0.0
                    P[m, r] = 0.0
                Kinv[m, m] = 1.0 / delta
                P[m, m] = 1.0
                ka = e / delta
                for r in range(m):
                    A.alpha[r] -= a[r] * ka
                A.alpha[m] = ka
                _store_at(&R, i, m)
                R.sq[m] = xsq
                m += 1
            else:
                dgemv(&tr, &mm, &mm, &d1, PP, &ld, a, &one, &d0, Pa, &one)  # P a
                dgemv(&nt, &mm, &mm, &d1, PP, &ld, a, &one, &d0, aP, &one)  # (aᵀ P)ᵀ
                denom = 1.0 + _dot(a, Pa, <int>m)
                for r in range(m):
                    q[r] = Pa[r] / denom
                scale = -1.0
                dger(&mm, &mm, &scale, aP, &one, q, &one, PP, &ld)  # P − q aᵀP
                dgemv(&tr, &mm, &mm, &e, K, &ld, q, &one, &d1, A.alpha, &one)  # α + K̃⁻¹q e
            i += 1
    free(a)
    return i, m, evals + <long long>counted
