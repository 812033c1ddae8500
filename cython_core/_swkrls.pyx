"""Compiled prequential block loop of sliding-window KRLS (Van Vaerenbergh, Vía and
Santamaría 2006): kernel ridge regression on the last M examples, kept exact by one
rank-one update and one block-inverse growth per example.

The window's examples and their coefficients α = (K + cI)⁻¹ y are the learner's kernel
expansion (the store); :class:`SwkrlsState` holds the rest, typed: the inverse P of
K + cI (``cap × cap``, row-major, its leading m × m block in use), the target of the
example in each slot, and the slot of the oldest example. The window is a ring over the
slots: the newest example takes the oldest one's slot, so no row moves.
"""
cimport numpy as cnp
from libc.stdlib cimport free
from scipy.linalg.cython_blas cimport dgemv, dger

import numpy as np

from kbench.cython_core._loop cimport *

cnp.import_array()


cdef class SwkrlsState:
    """P = (K + cI)⁻¹ of the window (``P``, ``cap × cap`` float64, the leading m × m block in
    use), the targets of the window's slots (``targets``) and the oldest example's slot
    (``head``), grown with the learner's store; picklable."""

    cdef public object P
    cdef public object targets
    cdef public Py_ssize_t head

    def __init__(self, P=None, targets=None, Py_ssize_t head=0):
        self.P = np.zeros((0, 0)) if P is None else P
        self.targets = np.zeros(0) if targets is None else targets
        self.head = head

    def __reduce__(self):
        return SwkrlsState, (self.P, self.targets, self.head)

    def ensure(self, Py_ssize_t cap):
        """Room for ``cap`` examples in the window, those stored kept."""
        if cap > self.P.shape[0]:
            self.P = _grown(self.P, (cap, cap))
            self.targets = _grown(self.targets, (cap,))


cdef void _forget(double* P, Py_ssize_t ld, Py_ssize_t m, Py_ssize_t j,
                  double* col) noexcept nogil:
    """P ← the inverse of the matrix without row and column j, left in place with row and
    column j zero: with e = P[j, j] and p = P[:, j], P − p pᵀ / e."""
    cdef int mm = <int>m, ldd = <int>ld, one = 1
    cdef double scale = -1.0 / P[j * ld + j]
    cdef Py_ssize_t r
    for r in range(m):
        col[r] = P[r * ld + j]
    dger(&mm, &mm, &scale, col, &one, col, &one, P, &ldd)
    for r in range(m):
        P[r * ld + j] = 0.0
        P[j * ld + r] = 0.0


cdef void _join(double* P, Py_ssize_t ld, Py_ssize_t m, Py_ssize_t j, double* b,
                double kx, double* Pb) noexcept nogil:
    """Grow P (the inverse over m slots, row and column j zero or beyond m) by the example
    in slot j, with kernel row b against the slots (b[j] = 0) and k(x, x) + c = kx: the
    block-inverse formula, s = kx − bᵀPb, P + Pb Pbᵀ/s, −Pb/s, 1/s."""
    cdef int mm = <int>m, ldd = <int>ld, one = 1
    cdef double d1 = 1.0, d0 = 0.0, s, inv
    cdef char tr = b'T'
    cdef Py_ssize_t r
    if m > 0:
        dgemv(&tr, &mm, &mm, &d1, P, &ldd, b, &one, &d0, Pb, &one)
    s = kx - (_dot(b, Pb, mm) if m > 0 else 0.0)
    inv = 1.0 / s
    if m > 0:
        dger(&mm, &mm, &inv, Pb, &one, Pb, &one, P, &ldd)
    for r in range(m):
        P[r * ld + j] = -Pb[r] * inv
        P[j * ld + r] = -Pb[r] * inv
    P[j * ld + j] = inv


def swkrls_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
                 bint have_row=False, double kxx=0.0, *, SwkrlsState state not None,
                 Py_ssize_t window, double c):
    """Predict then learn rows start, start+1, … (regression): f(x) = Σ αⱼ k(xⱼ, x) over the
    window; x then joins the window, in the oldest example's slot once ``window`` are held
    (that example leaves first), and α = (K + cI)⁻¹ y is recomputed. Calling convention and
    result as :func:`kbench.cython_core._perceptron.perceptron_block`.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "swkrls needs one coefficient column, got {}")
    if window < 1 or not c > 0:
        raise ValueError(f"kbench: swkrls needs window ≥ 1 and c > 0, got {window} and {c}")
    state.ensure(A.cap)
    cdef double[:, ::1] P = state.P
    cdef double[::1] targets = state.targets
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, j, size, ld = A.cap
    cdef long long evals = 0
    cdef double f, xsq, kx, counted = 0.0
    cdef double* work = _doubles(2 * (A.cap + 1))
    cdef double* Pb = work + A.cap + 1
    cdef int mm, ldd = <int>ld, one = 1
    cdef double d1 = 1.0, d0 = 0.0
    cdef char tr = b'T'
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, A.krow)
            kx = _self_at(&R, i, xsq, have_row and i == 0, kxx, &counted)
            f = _dot(A.krow, A.alpha, <int>m) if m > 0 else 0.0
            A.pred[i] = f
            if m < window:
                if _store_full(m, A.cap, have_row and i == 0, &evals, m):
                    break
                j = m
            else:
                j = state.head
                state.head = (j + 1) % window
                _forget(&P[0, 0], ld, m, j, work)
                A.krow[j] = 0.0  # the leaving example's kernel value
            _join(&P[0, 0], ld, m, j, A.krow, kx + c, Pb)
            _store_at(&R, i, j)
            R.sq[j] = xsq
            targets[j] = A.y[i]
            if j == m:
                m += 1
            mm = <int>m
            dgemv(&tr, &mm, &mm, &d1, &P[0, 0], &ldd, &targets[0], &one, &d0, A.alpha, &one)
            i += 1
    free(work)
    return i, m, evals + <long long>counted
