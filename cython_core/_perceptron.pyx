"""Compiled prequential block loop of the kernel perceptron (binary and multiclass)."""
cimport numpy as cnp
from libc.stdlib cimport free
from scipy.linalg.cython_blas cimport dgemv

from kbench.cython_core._loop cimport *
from kbench.cython_core._labels cimport _class_label, _sign_label

cnp.import_array()


def perceptron_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
                     bint have_row=False, double kxx=0.0):
    """Predict then learn rows start, start+1, … of ``rows`` until done or the store is full.

    Binary (one coefficient column): predict sign(f), f = Σ αᵢ k(xᵢ, x); on y·f ≤ 0 store x
    with α = y. Multiclass (C columns): predict argmax of the scores; on a mistake store x
    with +1 for the true class and −1 for the predicted one.

    ``kernel`` is a :class:`~kbench.cython_core._kernels.KernelSpec`; ``store`` the support
    vectors (``X`` for dense rows, ``sq``, ``alpha``, ``krow``, ``size``: a SupportBuffer or
    SparseSupportBuffer), written in place but for its size; ``y`` and ``pred`` float64
    vectors of a label and a prediction per row. ``have_row``: the kernel row of the first
    row is already in ``store.krow`` (``kxx``, k(x, x), is not read: the perceptron needs
    none). Returns ``(next_index, size, kernel_evals)``; next_index short of the rows means
    the store is full and must grow before the loop resumes there.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A)
    cdef double* alpha = A.alpha
    cdef double* krow = A.krow
    cdef const double* Y = A.y
    cdef double* P = A.pred
    cdef Py_ssize_t m = A.m, n = rows.n, cap = A.cap, C = A.C, i, c, best, yi
    cdef long long evals = 0
    cdef double f, xsq, bestv
    cdef int one = 1, mm, nc = <int>C
    cdef double a1 = 1.0, b0 = 0.0
    cdef char nt = b'N'
    cdef double* scores = _doubles(C)
    i = start
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, krow)
            if C == 1:
                f = _dot(krow, alpha, <int>m) if m > 0 else 0.0
                P[i] = _sign_label(f)
                if Y[i] * f <= 0.0:
                    if _store_full(m, cap, have_row and i == 0, &evals, m):
                        break
                    _store_at(&R, i, m)
                    R.sq[m] = xsq
                    alpha[m] = Y[i]
                    m += 1
            else:
                if m > 0:
                    mm = <int>m
                    dgemv(&nt, &nc, &mm, &a1, alpha, &nc, krow, &one, &b0, scores, &one)
                else:
                    for c in range(C):
                        scores[c] = 0.0
                best = 0
                bestv = scores[0]
                for c in range(1, C):
                    if scores[c] > bestv:
                        best = c
                        bestv = scores[c]
                P[i] = _class_label(<double>best, scores, C)
                yi = <Py_ssize_t>Y[i]
                if best != yi:
                    if m == cap:
                        if not (have_row and i == 0):
                            evals -= m
                        break
                    _store_at(&R, i, m)
                    R.sq[m] = xsq
                    for c in range(C):
                        alpha[m * C + c] = 0.0
                    alpha[m * C + yi] = 1.0
                    alpha[m * C + best] = -1.0
                    m += 1
            i += 1
    free(scores)
    return i, m, evals
