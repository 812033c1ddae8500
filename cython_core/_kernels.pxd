# Shared inline kernel arithmetic, cimported by every module that computes kernel rows
# (``from kbench.cython_core._kernels cimport ...``): the functions are inline, so a module
# that cimports them does not import kbench.cython_core._kernels at run time.
#
# The elementwise loops (exp of RBF and Laplacian rows, integer polynomial degrees, the
# inner products of short rows, L1 distances) live in _kernel_simd.h, a C header, because
# they need to be compiled for several instruction sets and chosen at run time (see the
# header); Cython cannot put target attributes on a function.
#
# float32 and float64: kernel rows, their transforms, inner products and expansions are
# written once, over the fused type ``floating`` (float32 stored vectors halve the memory a
# row reads; kbench.cython_core._kernels takes either). The two variants differ only by the
# type and by which C function does the work (ddot or sdot, kb_rbf_d or kb_rbf_f, pow or
# powf), which the small dispatchers below choose at compile time (``floating is double``),
# as scikit-learn's _cython_blas does. Fused types cover every variant here, so no Tempita
# template (.pyx.tp) is generated: a template is the tool for what fused types cannot
# express (extension types or module-level names per dtype), and nothing here needs one.
# The float64 specialisation makes exactly the calls the float64-only code made, so
# compiled block loops and per-example paths still sum in the same order, to the last bit.
from libc.math cimport exp, pow, powf
from scipy.linalg.cython_blas cimport ddot, dgemv, sdot, sgemv


ctypedef fused floating:
    float
    double


# Kernel kinds, the first entry of ``Kernel.compiled()``. A cpdef enum: the Python side
# (kbench.core.kernel_rows) reads them from kbench.cython_core._kernels.KernelKind.
cpdef enum KernelKind:
    K_NOT_COMPILED = -1  # a third-party kernel: its rows (and k(x, x)) come from Python
    K_LINEAR = 0
    K_RBF = 1
    K_POLY = 2
    K_LAPLACIAN = 3


# The kernel as every compiled loop takes it: typed fields instead of an untyped 5-tuple,
# read in C by ``params`` (no Python object per field). ``as_spec`` also takes the
# ``(kind, gamma, scale, offset, degree)`` tuple of ``Kernel.compiled()``, so that callers
# not yet migrated keep working (the adapter: one KernelSpec made per call).
cdef class KernelSpec:
    cdef readonly int kind
    cdef readonly double gamma, scale, offset, degree
    cdef (int, double, double, double, double) params(self) noexcept


cdef KernelSpec as_spec(object kernel)


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


# -- the float32 / float64 dispatchers --------------------------------------------------------

cdef inline floating _dot(const floating* a, const floating* b, int d) noexcept nogil:
    cdef int one = 1
    if floating is double:
        return ddot(&d, <double*>a, &one, <double*>b, &one)
    else:
        return sdot(&d, <float*>a, &one, <float*>b, &one)


cdef inline void _gemv(char trans, int rows, int cols, double alpha, const floating* A,
                       const floating* x, floating* out) noexcept nogil:
    """out = alpha·op(A) x for the column-major rows×cols A (BLAS gemv, beta = 0)."""
    cdef int one = 1
    cdef floating a = <floating>alpha, beta = 0.0
    if floating is double:
        dgemv(&trans, &rows, &cols, &a, <double*>A, &rows, <double*>x, &one, &beta, out, &one)
    else:
        sgemv(&trans, &rows, &cols, &a, <float*>A, &rows, <float*>x, &one, &beta, out, &one)


cdef inline floating _pow(floating base, double degree) noexcept nogil:
    if floating is double:
        return pow(base, degree)
    else:
        return powf(base, <float>degree)


cdef inline void _rbf(floating* out, const floating* sq, double xsq, double gamma,
                      Py_ssize_t m) noexcept nogil:
    if floating is double:
        kb_rbf_d(out, sq, xsq, gamma, m)
    else:
        kb_rbf_f(out, sq, <float>xsq, <float>gamma, m)


cdef inline void _poly(floating* out, double scale, double offset, int degree,
                       Py_ssize_t m) noexcept nogil:
    if floating is double:
        kb_poly_d(out, scale, offset, degree, m)
    else:
        kb_poly_f(out, <float>scale, <float>offset, degree, m)


cdef inline void _dots(const floating* S, Py_ssize_t m, int d, const floating* x,
                       floating* out) noexcept nogil:
    if floating is double:
        kb_dots_d(S, m, d, x, out)
    else:
        kb_dots_f(S, m, d, x, out)


cdef inline void _laplacian(const floating* S, Py_ssize_t m, Py_ssize_t d, const floating* x,
                            double gamma, floating* out) noexcept nogil:
    if floating is double:
        kb_laplacian_d(S, m, d, x, gamma, out)
    else:
        kb_laplacian_f(S, m, d, x, <float>gamma, out)


# -- kernels --------------------------------------------------------------------------------


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
                                double degree, const floating* sq, double xsq, floating* out,
                                Py_ssize_t m) noexcept nogil:
    """Turn m inner products with x, in place, into kernel values (RBF and polynomial), in
    the precision of out."""
    cdef Py_ssize_t i
    cdef int k
    if kind == K_RBF:
        _rbf(out, sq, xsq, gamma, m)
    elif kind == K_POLY:
        k = _small_degree(degree)
        if k:
            _poly(out, scale, offset, k, m)
        else:
            for i in range(m):
                out[i] = _pow(<floating>scale * out[i] + <floating>offset, degree)


cdef inline void _kernel_row(int kind, double gamma, double scale, double offset,
                             double degree, const floating* S, Py_ssize_t m, Py_ssize_t d,
                             const floating* sq, const floating* x, double xsq,
                             floating* out) noexcept nogil:
    """out[i] = k(S[i], x) for the first m rows of the C-contiguous m×d block S, in the
    precision of the stored vectors.

    The inner products come from one BLAS gemv (S is read once, at memory bandwidth),
    or for d ≤ KB_DOTS_MAX_D from a loop specialised for d, which costs less than the
    call; the kernel's transform is then applied in place by a vectorised loop.
    """
    if m <= 0:
        return
    if kind == K_LAPLACIAN:
        _laplacian(S, m, d, x, gamma, out)
        return
    if d <= KB_DOTS_MAX_D:
        _dots(S, m, <int>d, x, out)
    else:
        # S (row-major m×d) is column-major d×m for BLAS: out = Sᵀᵀ x.
        _gemv(c'T', <int>d, <int>m, 1.0, S, x, out)
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


cdef inline void _expansion(const floating* k, const floating* A, Py_ssize_t m, Py_ssize_t nc,
                            double cs, floating* out) noexcept nogil:
    """out[c] = cs · Σ_{i<m} k[i] A[i, c] for the row-major m×nc block A: the scores of a
    kernel expansion from its kernel row.

    One column uses a dot product, several one gemv (a one-row gemv reads with a stride
    and is slower). Every compiled learner and kbench.cython_core._kernels.expansion make
    these same calls, so block loops and per-example paths sum in the same order.
    """
    cdef Py_ssize_t c
    if m <= 0:
        for c in range(nc):
            out[c] = 0.0
        return
    if nc == 1:
        out[0] = <floating>cs * _dot(k, A, <int>m)
        return
    _gemv(c'N', <int>nc, <int>m, cs, A, k, out)
