"""Compiled prequential block loop of the kernel passive–aggressive learners (binary).

PA, PA-I and PA-II (Crammer, Dekel, Keshet, Shalev-Shwartz and Singer 2006) with a
kernel and no budget: on a hinge loss ℓ = max(0, 1 − y f(x)) > 0 the example is stored
with coefficient τ y, τ = ℓ/k(x, x) (PA), min(C, ℓ/k(x, x)) (PA-I) or
ℓ/(k(x, x) + 1/(2C)) (PA-II).
"""
from libc.string cimport memcpy

from kbench.cython_core._kernels cimport K_LAPLACIAN, K_RBF, _dot, _kernel_one, _sq_row
from kbench.cython_core._labels cimport _sign_label


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


def pa_block(tuple kernel,
             double[:, ::1] SV, double[::1] sq, double[:, ::1] alpha, Py_ssize_t m,
             const double[:, ::1] X, const double[::1] y, double[::1] pred,
             double[::1] krow, int variant, double C, bint have_row, double kxx_given,
             Py_ssize_t start):
    """Predict then learn rows start, start+1, … of X until done or the buffer is full.

    ``have_row``: the kernel row of X[0] against the m stored vectors is already in krow
    (and, for a kernel the loop cannot compute, k(X[0], X[0]) is ``kxx_given``).
    Returns ``(next_index, m, kernel_evals)``; next_index < len(X) means the buffer is full
    and must grow before the loop resumes there.
    """
    cdef int kind
    cdef double gamma, scale, offset, degree
    kind, gamma, scale, offset, degree = kernel  # unpacked once, outside the nogil loop
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], cap = SV.shape[0], i
    cdef long long evals = 0
    cdef double f, xsq, loss, kxx, tau
    i = start
    with nogil:
        while i < n:
            evals += _sq_row(kind, gamma, scale, offset, degree, &SV[0, 0], m, d, &sq[0],
                             &X[i, 0], have_row and i == 0, &xsq, &krow[0])
            f = _dot(&krow[0], &alpha[0, 0], <int>m) if m > 0 else 0.0
            pred[i] = _sign_label(f)
            loss = 1.0 - y[i] * f
            if loss > 0.0:
                if kind == NOT_COMPILED:
                    kxx = kxx_given
                elif kind == K_RBF or kind == K_LAPLACIAN:
                    kxx = 1.0
                else:
                    kxx = _kernel_one(kind, gamma, scale, offset, degree, &X[i, 0], &X[i, 0],
                                      d, xsq, xsq)
                    evals += 1
                if kxx > 0.0:  # k(x, ·) = 0 gives no direction to move in
                    if m == cap:
                        if not (have_row and i == 0):
                            evals -= m  # this example is redone after the buffer grows
                        if kind != K_RBF and kind != K_LAPLACIAN and kind != NOT_COMPILED:
                            evals -= 1
                        break
                    tau = _pa_tau(variant, loss, kxx, C)
                    memcpy(&SV[m, 0], &X[i, 0], d * sizeof(double))
                    sq[m] = xsq
                    alpha[m, 0] = tau * y[i]
                    m += 1
            i += 1
    return i, m, evals
