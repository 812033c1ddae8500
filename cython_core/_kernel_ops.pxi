# Shared inline kernel arithmetic, included by every .pyx that computes kernel rows.
# It is an include rather than a cimported .pxd so that no module imports another at
# run time: each compiled module is self-contained.
from libc.math cimport exp, fabs, pow, sqrt
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport ddot, dgemv

# Kernel kinds. Keep in sync with kbench/kernels_api.py (KIND_*).
cdef enum:
    K_LINEAR = 0
    K_RBF = 1
    K_POLY = 2
    K_LAPLACIAN = 3


cdef inline double _dot(const double* a, const double* b, int d) noexcept nogil:
    cdef int one = 1
    return ddot(&d, <double*>a, &one, <double*>b, &one)


cdef inline double _transform(int kind, double dot, double asq, double bsq, double gamma,
                              double scale, double offset, double degree) noexcept nogil:
    """Map an inner product (and squared norms) to a kernel value."""
    cdef double dist
    if kind == K_LINEAR:
        return dot
    elif kind == K_RBF:
        dist = asq + bsq - 2.0 * dot
        if dist < 0.0:  # rounding can make ‖a−b‖² slightly negative when a ≈ b
            dist = 0.0
        return exp(-gamma * dist)
    else:  # K_POLY
        return pow(scale * dot + offset, degree)


cdef inline double _l1(const double* a, const double* b, Py_ssize_t d) noexcept nogil:
    # Four partial sums let the compiler keep several additions in flight (it may not
    # reorder one floating-point sum by itself).
    cdef Py_ssize_t j, d4 = d - d % 4
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    for j in range(0, d4, 4):
        s0 += fabs(a[j] - b[j])
        s1 += fabs(a[j + 1] - b[j + 1])
        s2 += fabs(a[j + 2] - b[j + 2])
        s3 += fabs(a[j + 3] - b[j + 3])
    for j in range(d4, d):
        s0 += fabs(a[j] - b[j])
    return (s0 + s1) + (s2 + s3)


cdef inline void _kernel_row(int kind, double gamma, double scale, double offset,
                             double degree, const double* S, Py_ssize_t m, Py_ssize_t d,
                             const double* sq, const double* x, double xsq,
                             double* out) noexcept nogil:
    """out[i] = k(S[i], x) for the first m rows of the C-contiguous m×d block S.

    One BLAS dgemv computes every inner product (S is read once, at memory
    bandwidth); the kernel's transform is then applied in place.
    """
    cdef Py_ssize_t i
    cdef int n = <int>m, dd = <int>d, one = 1
    cdef double alpha = 1.0, beta = 0.0
    cdef char trans = b'T'
    if m <= 0:
        return
    if kind == K_LAPLACIAN:
        for i in range(m):
            out[i] = exp(-gamma * _l1(S + i * d, x, d))
        return
    # S (row-major m×d) is column-major d×m for BLAS: out = Sᵀᵀ x.
    dgemv(&trans, &dd, &n, &alpha, <double*>S, &dd, <double*>x, &one, &beta, out, &one)
    if kind == K_LINEAR:
        return
    for i in range(m):
        out[i] = _transform(kind, out[i], sq[i], xsq, gamma, scale, offset, degree)


cdef inline double _kernel_one(int kind, double gamma, double scale, double offset,
                               double degree, const double* a, const double* b,
                               Py_ssize_t d, double asq, double bsq) noexcept nogil:
    if kind == K_LAPLACIAN:
        return exp(-gamma * _l1(a, b, d))
    return _transform(kind, _dot(a, b, <int>d), asq, bsq, gamma, scale, offset, degree)
