# Shared inline kernel arithmetic, cimported by every module that computes kernel rows
# (``from kbench.cython_core._kernels cimport ...``): the functions are inline, so a module
# that cimports them does not import kbench.cython_core._kernels at run time.
#
# The elementwise loops (exp of RBF and Laplacian rows, integer polynomial degrees, the
# inner products of short rows, L1 distances) live in _kernel_simd.h, a C header, because
# they need to be compiled for several instruction sets and chosen at run time (see the
# header); Cython cannot put target attributes on a function.
from libc.math cimport exp, pow
from scipy.linalg.cython_blas cimport ddot, dgemv


# Kernel kinds, the first entry of ``Kernel.compiled()``. A cpdef enum: the Python side
# (kbench.core.kernel_rows) reads them from kbench.cython_core._kernels.KernelKind.
cpdef enum KernelKind:
    K_LINEAR = 0
    K_RBF = 1
    K_POLY = 2
    K_LAPLACIAN = 3


cdef extern from "_kernel_simd.h" nogil:
    int KB_DOTS_MAX_D
    double kb_exp_d(double x)
    # exp of every entry of v, in place, vectorised for the CPU (see the header).
    void kb_vexp_d(double* v, Py_ssize_t n)
    void kb_rbf_d(double* out, const double* sq, double xsq, double gamma, Py_ssize_t m)
    void kb_poly_d(double* out, double scale, double offset, int degree, Py_ssize_t m)
    void kb_dots_d(const double* S, Py_ssize_t m, int d, const double* x, double* out)
    void kb_laplacian_d(const double* S, Py_ssize_t m, Py_ssize_t d, const double* x,
                        double gamma, double* out)
    # The float32 rows of kbench.cython_core._kernels.
    void kb_rbf_f(float* out, const float* sq, float xsq, float gamma, Py_ssize_t m)
    void kb_poly_f(float* out, float scale, float offset, int degree, Py_ssize_t m)
    void kb_dots_f(const float* S, Py_ssize_t m, int d, const float* x, float* out)
    void kb_laplacian_f(const float* S, Py_ssize_t m, Py_ssize_t d, const float* x,
                        float gamma, float* out)


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


cdef inline int _small_degree(double degree) noexcept nogil:
    """The degree as an int when it is 1..4 (computed by multiplication), else 0 (pow)."""
    cdef int k = <int>degree
    return k if k == degree and 1 <= k <= 4 else 0


cdef inline void _transform_row(int kind, double gamma, double scale, double offset,
                                double degree, const double* sq, double xsq, double* out,
                                Py_ssize_t m) noexcept nogil:
    """Turn m inner products with x, in place, into kernel values (RBF and polynomial)."""
    cdef Py_ssize_t i
    cdef int k
    if kind == K_RBF:
        kb_rbf_d(out, sq, xsq, gamma, m)
    elif kind == K_POLY:
        k = _small_degree(degree)
        if k:
            kb_poly_d(out, scale, offset, k, m)
        else:
            for i in range(m):
                out[i] = pow(scale * out[i] + offset, degree)


cdef inline void _kernel_row(int kind, double gamma, double scale, double offset,
                             double degree, const double* S, Py_ssize_t m, Py_ssize_t d,
                             const double* sq, const double* x, double xsq,
                             double* out) noexcept nogil:
    """out[i] = k(S[i], x) for the first m rows of the C-contiguous m×d block S.

    The inner products come from one BLAS dgemv (S is read once, at memory bandwidth),
    or for d ≤ KB_DOTS_MAX_D from a loop specialised for d, which costs less than the
    call; the kernel's transform is then applied in place by a vectorised loop.
    """
    cdef int n = <int>m, dd = <int>d, one = 1
    cdef double alpha = 1.0, beta = 0.0
    cdef char trans = b'T'
    if m <= 0:
        return
    if kind == K_LAPLACIAN:
        kb_laplacian_d(S, m, d, x, gamma, out)
        return
    if d <= KB_DOTS_MAX_D:
        kb_dots_d(S, m, dd, x, out)
    else:
        # S (row-major m×d) is column-major d×m for BLAS: out = Sᵀᵀ x.
        dgemv(&trans, &dd, &n, &alpha, <double*>S, &dd, <double*>x, &one, &beta, out, &one)
    if kind != K_LINEAR:
        _transform_row(kind, gamma, scale, offset, degree, sq, xsq, out, m)


cdef inline double _kernel_one(int kind, double gamma, double scale, double offset,
                               double degree, const double* a, const double* b,
                               Py_ssize_t d, double asq, double bsq) noexcept nogil:
    cdef double out
    if kind == K_LAPLACIAN:
        # The row loop itself, so that k(a, b) equals the entry of a row to the last bit.
        kb_laplacian_d(a, 1, d, b, gamma, &out)
        return out
    return _transform(kind, _dot(a, b, <int>d), asq, bsq, gamma, scale, offset, degree)


cdef inline Py_ssize_t _sq_row(int kind, double gamma, double scale, double offset,
                               double degree, const double* S, Py_ssize_t m, Py_ssize_t d,
                               const double* sq, const double* x, bint have_row, double* xsq,
                               double* out) noexcept nogil:
    """The first steps of every compiled block loop: ‖x‖² into xsq, then the kernel row of x
    against the first m rows of S into out, unless ``have_row`` (the caller put it there).
    Returns the number of kernel values computed (m, or 0)."""
    xsq[0] = _dot(x, x, <int>d) if d > 0 else 0.0
    if have_row:
        return 0
    _kernel_row(kind, gamma, scale, offset, degree, S, m, d, sq, x, xsq[0], out)
    return m


cdef inline void _expansion(const double* k, const double* A, Py_ssize_t m, Py_ssize_t nc,
                            double cs, double* out) noexcept nogil:
    """out[c] = cs · Σ_{i<m} k[i] A[i, c] for the row-major m×nc block A: the scores of a
    kernel expansion from its kernel row.

    One column uses ddot, several one dgemv (a one-row gemv reads with a stride and is
    slower). Every compiled learner and kbench.cython_core._kernels.expansion make these
    same calls, so block loops and per-example paths sum in the same order.
    """
    cdef int one = 1, mm = <int>m, ncc = <int>nc
    cdef double b0 = 0.0
    cdef char nt = b'N'
    cdef Py_ssize_t c
    if m <= 0:
        for c in range(nc):
            out[c] = 0.0
        return
    if nc == 1:
        out[0] = cs * _dot(k, A, mm)
        return
    dgemv(&nt, &ncc, &mm, &cs, <double*>A, &ncc, <double*>k, &one, &b0, out, &one)
