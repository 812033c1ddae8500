"""Compiled prequential block loop of the kernel perceptron (binary and multiclass)."""
from scipy.linalg.cython_blas cimport dgemv

from kbench.cython_core._kernels cimport _dot
from kbench.cython_core._labels cimport _class_label, _sign_label
from kbench.cython_core._sparse cimport LoopRows, _row_at, _rows_of, _store_at


def perceptron_block(kernel,
                     double[:, ::1] SV, double[::1] sq, double[:, ::1] alpha,
                     Py_ssize_t m, const double[:, ::1] X, const double[::1] y,
                     double[::1] pred, double[::1] krow, double[::1] scores,
                     Py_ssize_t start, sparse=None):
    """Predict then learn examples start, start+1, … of X until done or the buffer is full.

    Binary (alpha has one column): predict sign(f), f = Σ αᵢ k(xᵢ, x); on y·f ≤ 0 store x
    with α = y. Multiclass (C columns): predict argmax of the scores; on a mistake store x
    with +1 for the true class and −1 for the predicted one.

    Returns ``(next_index, m, kernel_evals)``; next_index < len(X) means the buffer is
    full and must grow before the loop is resumed from there. ``sparse``: CSR rows, as for
    :func:`kbench.cython_core._budget_perceptrons.rbp_block` (the rows of X and SV then
    hold marks, which are not read).
    """
    cdef LoopRows R = _rows_of(kernel, SV, sq, X, sparse)
    cdef Py_ssize_t n = X.shape[0], cap = SV.shape[0]
    cdef Py_ssize_t C = alpha.shape[1], i, c, best, yi
    cdef long long evals = 0
    cdef double f, xsq, bestv
    cdef int one = 1, mm, nc = <int>C
    cdef double a1 = 1.0, b0 = 0.0
    cdef char nt = b'N'
    i = start
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, False, &xsq, &krow[0])
            if C == 1:
                f = _dot(&krow[0], &alpha[0, 0], <int>m) if m > 0 else 0.0
                pred[i] = _sign_label(f)
                if y[i] * f <= 0.0:
                    if m == cap:
                        evals -= m  # this example is redone after the buffer grows
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
