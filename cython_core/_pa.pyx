"""Compiled prequential block loop of the kernel passive–aggressive learners (binary).

PA, PA-I and PA-II (Crammer, Dekel, Keshet, Shalev-Shwartz and Singer 2006) with a
kernel and no budget: on a hinge loss ℓ = max(0, 1 − y f(x)) > 0 the example is stored
with coefficient τ y, τ = ℓ/k(x, x) (PA), min(C, ℓ/k(x, x)) (PA-I) or
ℓ/(k(x, x) + 1/(2C)) (PA-II).
"""
cimport numpy as cnp

from kbench.cython_core._loop cimport *
from kbench.cython_core._labels cimport _sign_label
from kbench.cython_core._kernels cimport K_LAPLACIAN, K_NOT_COMPILED, K_RBF, _kernel_one
from kbench.cython_core._sparse cimport _block_self

cnp.import_array()


#: The variants, shared with the Python side (``_pa.Variant``), never copied.
cpdef enum Variant:
    PA = 0
    PA_I = 1
    PA_II = 2


cdef inline double _pa_tau(int variant, double loss, double kxx, double C) noexcept nogil:
    if variant == PA:
        return loss / kxx
    if variant == PA_I:
        return loss / kxx if loss / kxx < C else C
    return loss / (kxx + 0.5 / C)


def pa_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
             bint have_row=False, double kxx=0.0, *, int variant, double C):
    """Predict then learn rows start, start+1, … of ``rows`` until done or the store is full.

    ``kernel``, ``store``, ``y``, ``pred``, ``have_row`` and the result as for
    :func:`kbench.cython_core._perceptron.perceptron_block`; for a kernel the loop cannot
    compute (``K_NOT_COMPILED``, ``have_row`` set) ``kxx`` is k(x, x) of the first row.
    ``variant`` is a :class:`Variant`, ``C`` the aggressiveness of PA-I and PA-II.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "PA needs one coefficient column, got {}")
    cdef double* alpha = A.alpha
    cdef double* krow = A.krow
    cdef const double* Y = A.y
    cdef double* P = A.pred
    cdef Py_ssize_t m = A.m, n = rows.n, cap = A.cap, d = R.d, i
    cdef const double* X = R.X
    cdef int kind = R.kind
    cdef long long evals = 0
    cdef double f, xsq, loss, kx, tau
    if variant < PA or variant > PA_II:
        raise ValueError(f"kbench: unknown PA variant {variant}")
    i = start
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, krow)
            f = _dot(krow, alpha, <int>m) if m > 0 else 0.0
            P[i] = _sign_label(f)
            loss = 1.0 - Y[i] * f
            if loss > 0.0:
                if kind == K_NOT_COMPILED:
                    kx = kxx
                elif kind == K_RBF or kind == K_LAPLACIAN:
                    kx = 1.0
                elif R.sp != NULL:
                    kx = _block_self(R.sp, xsq)
                    evals += 1
                else:
                    kx = _kernel_one(kind, R.gamma, R.scale, R.offset, R.degree, X + i * d,
                                      X + i * d, d, xsq, xsq)
                    evals += 1
                if kx > 0.0:  # k(x, ·) = 0 gives no direction to move in
                    if _store_full(m, cap, have_row and i == 0, &evals, m):
                        if kind != K_RBF and kind != K_LAPLACIAN and kind != K_NOT_COMPILED:
                            evals -= 1
                        break
                    tau = _pa_tau(variant, loss, kx, C)
                    _store_at(&R, i, m)
                    R.sq[m] = xsq
                    alpha[m] = tau * Y[i]
                    m += 1
            i += 1
    return i, m, evals
