"""Compiled prequential block loop of the kernel perceptron (binary and multiclass)."""
from scipy.linalg.cython_blas cimport dgemv

import numpy as np

from kbench.cython_core._kernels cimport _dot
from kbench.cython_core._labels cimport _class_label, _sign_label
from kbench.cython_core._sparse cimport (
    BlockRows, LoopRows, _check_labels, _loop_rows, _row_at, _store_at,
)


def perceptron_block(kernel, BlockRows rows not None, store, const double[::1] y,
                     double[::1] pred, Py_ssize_t start=0, bint have_row=False,
                     double kxx=0.0):
    """Predict then learn rows start, start+1, … of ``rows`` until done or the store is full.

    Binary (one coefficient column): predict sign(f), f = Σ αᵢ k(xᵢ, x); on y·f ≤ 0 store x
    with α = y. Multiclass (C columns): predict argmax of the scores; on a mistake store x
    with +1 for the true class and −1 for the predicted one.

    ``kernel`` is a :class:`~kbench.cython_core._kernels.KernelSpec`; ``store`` the support
    vectors (``X`` for dense rows, ``sq``, ``alpha``, ``krow``, ``size``: a SupportBuffer or
    SparseSupportBuffer), written in place but for its size. ``have_row``: the kernel row
    of the first row is already in ``store.krow`` (``kxx``, k(x, x), is not read: the
    perceptron needs none). Returns ``(next_index, size, kernel_evals)``; next_index short
    of the rows means the store is full and must grow before the loop resumes there.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef double[:, ::1] alpha = store.alpha
    cdef double[::1] sq = store.sq
    cdef double[::1] krow = store.krow
    cdef double[::1] scores = np.empty(alpha.shape[1])
    cdef Py_ssize_t m = store.size
    cdef Py_ssize_t n = rows.n, cap = alpha.shape[0]
    cdef Py_ssize_t C = alpha.shape[1], i, c, best, yi
    cdef long long evals = 0
    cdef double f, xsq, bestv
    cdef int one = 1, mm, nc = <int>C
    cdef double a1 = 1.0, b0 = 0.0
    cdef char nt = b'N'
    _check_labels(&R, n, start, have_row, y, pred)
    i = start
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, &krow[0])
            if C == 1:
                f = _dot(&krow[0], &alpha[0, 0], <int>m) if m > 0 else 0.0
                pred[i] = _sign_label(f)
                if y[i] * f <= 0.0:
                    if m == cap:
                        if not (have_row and i == 0):
                            evals -= m  # this example is redone after the store grows
                        break
                    _store_at(&R, i, m)
                    sq[m] = xsq
                    alpha[m, 0] = y[i]
                    m += 1
            else:
                if m > 0:
                    mm = <int>m
                    dgemv(&nt, &nc, &mm, &a1, &alpha[0, 0], &nc, &krow[0], &one, &b0,
                          &scores[0], &one)
                else:
                    for c in range(C):
                        scores[c] = 0.0
                best = 0
                bestv = scores[0]
                for c in range(1, C):
                    if scores[c] > bestv:
                        best = c
                        bestv = scores[c]
                pred[i] = _class_label(<double>best, &scores[0], C)
                yi = <Py_ssize_t>y[i]
                if best != yi:
                    if m == cap:
                        if not (have_row and i == 0):
                            evals -= m
                        break
                    _store_at(&R, i, m)
                    sq[m] = xsq
                    for c in range(C):
                        alpha[m, c] = 0.0
                    alpha[m, yi] = 1.0
                    alpha[m, best] = -1.0
                    m += 1
            i += 1
    return i, m, evals
