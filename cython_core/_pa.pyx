"""Compiled prequential block loop of the kernel passive–aggressive learners (binary).

PA, PA-I and PA-II (Crammer, Dekel, Keshet, Shalev-Shwartz and Singer 2006) with a
kernel and no budget: on a hinge loss ℓ = max(0, 1 − y f(x)) > 0 the example is stored
with coefficient τ y, τ = ℓ/k(x, x) (PA), min(C, ℓ/k(x, x)) (PA-I) or
ℓ/(k(x, x) + 1/(2C)) (PA-II).
"""
from kbench.cython_core._kernels cimport K_LAPLACIAN, K_RBF, _dot, _kernel_one
from kbench.cython_core._labels cimport _sign_label
from kbench.cython_core._sparse cimport LoopRows, _block_self, _row_at, _rows_of, _store_at


cdef enum:
    NOT_COMPILED = -1  # a third-party kernel: rows and k(x, x) come from Python
    V_PA = 0
    V_PA1 = 1
    V_PA2 = 2


cdef inline double _pa_tau(int variant, double loss, double kxx, double C) noexcept nogil:
    if variant == V_PA:
        return loss / kxx
    if variant == V_PA1:
        return loss / kxx if loss / kxx < C else C
    return loss / (kxx + 0.5 / C)


def pa_block(kernel,
             double[:, ::1] SV, double[::1] sq, double[:, ::1] alpha, Py_ssize_t m,
             const double[:, ::1] X, const double[::1] y, double[::1] pred,
             double[::1] krow, int variant, double C, bint have_row, double kxx_given,
             Py_ssize_t start, sparse=None):
    """Predict then learn rows start, start+1, … of X until done or the buffer is full.

    ``have_row``: the kernel row of X[0] against the m stored vectors is already in krow
    (and, for a kernel the loop cannot compute, k(X[0], X[0]) is ``kxx_given``).
    Returns ``(next_index, m, kernel_evals)``; next_index < len(X) means the buffer is full
    and must grow before the loop resumes there. ``sparse``: CSR rows, as for
    :func:`kbench.cython_core._budget_perceptrons.rbp_block` (the rows of X and SV then
    hold marks, which are not read).
    """
    cdef LoopRows R = _rows_of(kernel, SV, sq, X, sparse)
    cdef int kind = R.kind
    cdef Py_ssize_t n = X.shape[0], cap = SV.shape[0], i
    cdef long long evals = 0
    cdef double f, xsq, loss, kxx, tau
    i = start
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, &krow[0])
            f = _dot(&krow[0], &alpha[0, 0], <int>m) if m > 0 else 0.0
            pred[i] = _sign_label(f)
            loss = 1.0 - y[i] * f
            if loss > 0.0:
                if kind == NOT_COMPILED:
                    kxx = kxx_given
                elif kind == K_RBF or kind == K_LAPLACIAN:
                    kxx = 1.0
                elif R.sp != NULL:
                    kxx = _block_self(R.sp, xsq)
                    evals += 1
                else:
                    kxx = _kernel_one(kind, R.gamma, R.scale, R.offset, R.degree, &X[i, 0],
                                      &X[i, 0], R.d, xsq, xsq)
                    evals += 1
                if kxx > 0.0:  # k(x, ·) = 0 gives no direction to move in
                    if m == cap:
                        if not (have_row and i == 0):
                            evals -= m  # this example is redone after the buffer grows
                        if kind != K_RBF and kind != K_LAPLACIAN and kind != NOT_COMPILED:
                            evals -= 1
                        break
                    tau = _pa_tau(variant, loss, kxx, C)
                    _store_at(&R, i, m)
                    sq[m] = xsq
                    alpha[m, 0] = tau * y[i]
                    m += 1
            i += 1
    return i, m, evals
