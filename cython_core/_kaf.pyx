"""Compiled prequential block loops of the kernel adaptive filters (regression).

KLMS (Liu, Pokharel and Príncipe 2008), QKLMS (Chen, Zhao, Zhu and Príncipe 2012) and
KNLMS with the coherence criterion (Richard, Bermudez and Honeine 2009). Each predicts
f(x) = Σ αⱼ k(cⱼ, x) from the one kernel row of the example against the dictionary, takes
the error e = y − f(x), and updates: KLMS appends x with α = η e; QKLMS adds η e to the
coefficient of the nearest centre when it lies within ε, else appends x; KNLMS appends x
(α = 0) when no centre is coherent with it beyond μ₀, then moves every coefficient along
the kernel row, α += η e h / (ε + ‖h‖²).

The calling convention is :func:`kbench.cython_core._perceptron.perceptron_block`'s.
"""
cimport numpy as cnp
from libc.math cimport exp, fabs

from kbench.cython_core._loop cimport *
from kbench.cython_core._kernels cimport K_RBF

cnp.import_array()


def klms_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
               bint have_row=False, double kxx=0.0, *, double eta):
    """KLMS: predict f(x), then store x with α = η (y − f(x)). Every example becomes a
    centre. Returns ``(next_index, size, kernel_evals)``."""
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "klms needs one coefficient column, got {}")
    cdef Py_ssize_t m = A.m, n = rows.n, i = start
    cdef long long evals = 0
    cdef double f, xsq
    with nogil:
        while i < n:
            if m == A.cap:
                break  # the store grows, then the loop resumes at this example
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, A.krow)
            f = _dot(A.krow, A.alpha, <int>m) if m > 0 else 0.0
            A.pred[i] = f
            _store_at(&R, i, m)
            R.sq[m] = xsq
            A.alpha[m] = eta * (A.y[i] - f)
            m += 1
            i += 1
    return i, m, evals


def qklms_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
                bint have_row=False, double kxx=0.0, *, double eta, double epsilon):
    """QKLMS with the Gaussian kernel k = exp(−γ‖x − c‖²): the nearest centre is the one of
    largest k, and it lies within ε of x when k ≥ exp(−γ ε²); then its coefficient takes
    η (y − f(x)), else x is stored with it. Returns ``(next_index, size, kernel_evals)``."""
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "qklms needs one coefficient column, got {}")
    if R.kind != K_RBF:
        raise ValueError("kbench: qklms quantizes by the Gaussian kernel's distance (rbf)")
    cdef double within = exp(-R.gamma * epsilon * epsilon)
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, j, near
    cdef long long evals = 0
    cdef double f, xsq, e, best
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, A.krow)
            f = _dot(A.krow, A.alpha, <int>m) if m > 0 else 0.0
            e = A.y[i] - f
            near, best = -1, -1.0
            for j in range(m):
                if A.krow[j] > best:
                    near, best = j, A.krow[j]
            if near >= 0 and best >= within:
                A.alpha[near] += eta * e
            else:
                if _store_full(m, A.cap, have_row and i == 0, &evals, m):
                    break
                _store_at(&R, i, m)
                R.sq[m] = xsq
                A.alpha[m] = eta * e
                m += 1
            A.pred[i] = f
            i += 1
    return i, m, evals


def knlms_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
                bint have_row=False, double kxx=0.0, *, double eta, double epsilon,
                double mu0):
    """KNLMS with the coherence criterion, for a kernel with k(x, x) = 1: x joins the
    dictionary when max |k(x, cⱼ)| ≤ μ₀; then α += η (y − f(x)) h / (ε + ‖h‖²), h the
    kernel row of x against the dictionary (k(x, x) last when x joined). Returns
    ``(next_index, size, kernel_evals)``."""
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "knlms needs one coefficient column, got {}")
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, j
    cdef long long evals = 0
    cdef double f, xsq, e, coherence, hh, step, counted = 0.0
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, A.krow)
            f = _dot(A.krow, A.alpha, <int>m) if m > 0 else 0.0
            A.pred[i] = f
            coherence = 0.0
            for j in range(m):
                if fabs(A.krow[j]) > coherence:
                    coherence = fabs(A.krow[j])
            if coherence <= mu0:
                if m == A.cap:
                    if not (have_row and i == 0):
                        evals -= m
                    break
                _store_at(&R, i, m)
                R.sq[m] = xsq
                A.krow[m] = _self_at(&R, i, xsq, have_row and i == 0, kxx, &counted)
                A.alpha[m] = 0.0
                m += 1
            e = A.y[i] - f
            hh = _dot(A.krow, A.krow, <int>m)
            step = eta * e / (epsilon + hh)
            for j in range(m):
                A.alpha[j] += step * A.krow[j]
            i += 1
    return i, m, evals + <long long>counted
