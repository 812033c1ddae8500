"""Kernel rows, matrices and diagonals for the built-in kernels.

Each function takes the kernel as ``(kind, gamma, scale, offset, degree)`` and
squared row norms that the caller caches (see ``kbench.buffer.SupportBuffer``).
Inputs are validated by the Python wrappers in ``kbench.kernels_api``.
"""
from libc.math cimport exp
from scipy.linalg.cython_blas cimport dgemm

include "_kernel_ops.pxi"


def kernel_row(int kind, double gamma, double scale, double offset, double degree,
               const double[:, ::1] S, const double[::1] sq, const double[::1] x,
               double xsq, double[::1] out, Py_ssize_t m=-1):
    """Write k(S[i], x) for i < m into out (m defaults to every row of S)."""
    if m < 0:
        m = S.shape[0]
    if m == 0:
        return
    with nogil:
        _kernel_row(kind, gamma, scale, offset, degree, &S[0, 0], m, S.shape[1],
                    &sq[0], &x[0], xsq, &out[0])


def kernel_matrix(int kind, double gamma, double scale, double offset, double degree,
                  const double[:, ::1] A, const double[::1] asq,
                  const double[:, ::1] B, const double[::1] bsq, double[:, ::1] out):
    """Write the Gram block k(A[i], B[j]) into out (shape len(A) × len(B))."""
    cdef Py_ssize_t i, j, na = A.shape[0], nb = B.shape[0], d = A.shape[1]
    cdef int m = <int>nb, n = <int>na, k = <int>d
    cdef double one = 1.0, zero = 0.0
    cdef char tr = b'T', nt = b'N'
    if na == 0 or nb == 0:
        return
    with nogil:
        if kind == K_LAPLACIAN:
            for i in range(na):
                for j in range(nb):
                    out[i, j] = exp(-gamma * _l1(&A[i, 0], &B[j, 0], d))
        else:
            # Row-major out = A Bᵀ is column-major outᵀ = B Aᵀ.
            dgemm(&tr, &nt, &m, &n, &k, &one, <double*>&B[0, 0], &k,
                  <double*>&A[0, 0], &k, &zero, &out[0, 0], &m)
            if kind != K_LINEAR:
                for i in range(na):
                    for j in range(nb):
                        out[i, j] = _transform(kind, out[i, j], asq[i], bsq[j], gamma,
                                               scale, offset, degree)


def kernel_diag(int kind, double gamma, double scale, double offset, double degree,
                const double[:, ::1] A, const double[::1] asq, double[::1] out):
    """Write k(A[i], A[i]) into out."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(A.shape[0]):
            if kind == K_RBF or kind == K_LAPLACIAN:
                out[i] = 1.0
            else:
                out[i] = _transform(kind, asq[i], asq[i], asq[i], gamma, scale, offset, degree)


def sq_norms(const double[:, ::1] A, double[::1] out):
    """Write the squared Euclidean norm of each row of A into out."""
    cdef Py_ssize_t i
    cdef int d = <int>A.shape[1]
    if d == 0:
        out[:] = 0.0
        return
    with nogil:
        for i in range(A.shape[0]):
            out[i] = _dot(&A[i, 0], &A[i, 0], d)


def expansion(const double[::1] k, const double[:, ::1] alpha, Py_ssize_t m, double[::1] out):
    """out[c] = Σ_{i<m} k[i]·alpha[i, c]: the weighted sum behind every decision value."""
    cdef int n = <int>m, nc = <int>alpha.shape[1], one = 1
    cdef double a = 1.0, b = 0.0
    cdef char nt = b'N'
    if m == 0:
        out[:] = 0.0
        return
    with nogil:
        # alpha (row-major m×C) is column-major C×m: out = alphaᵀ k.
        dgemv(&nt, &nc, &n, &a, <double*>&alpha[0, 0], &nc, <double*>&k[0], &one, &b,
              &out[0], &one)


def decision_block(int kind, double gamma, double scale, double offset, double degree,
                   const double[:, ::1] S, const double[::1] sq, const double[:, ::1] alpha,
                   Py_ssize_t m, const double[:, ::1] X, const double[::1] xsq,
                   double[:, ::1] K, double[:, ::1] out):
    """out = k(X, S[:m]) @ alpha[:m] using the caller's scratch Gram block K (len(X) × ≥m)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], i, j
    cdef int mm = <int>m, nn = <int>n, dd = <int>d, nc = <int>alpha.shape[1], ldk = <int>K.shape[1]
    cdef double one = 1.0, zero = 0.0
    cdef char tr = b'T', nt = b'N'
    if n == 0:
        return
    if m == 0:
        out[:, :] = 0.0
        return
    with nogil:
        if kind == K_LAPLACIAN:
            for i in range(n):
                for j in range(m):
                    K[i, j] = exp(-gamma * _l1(&X[i, 0], &S[j, 0], d))
        else:
            dgemm(&tr, &nt, &mm, &nn, &dd, &one, <double*>&S[0, 0], &dd,
                  <double*>&X[0, 0], &dd, &zero, &K[0, 0], &ldk)
            if kind != K_LINEAR:
                for i in range(n):
                    for j in range(m):
                        K[i, j] = _transform(kind, K[i, j], xsq[i], sq[j], gamma, scale,
                                             offset, degree)
        # out (n×C) = K[:, :m] (n×m) @ alpha[:m] (m×C); column-major: outᵀ = alphaᵀ Kᵀ.
        dgemm(&nt, &nt, &nc, &nn, &mm, &one, <double*>&alpha[0, 0], &nc, &K[0, 0], &ldk,
              &zero, &out[0, 0], &nc)
