"""Kernel rows, matrices and diagonals for the built-in kernels.

Each function takes the kernel as a :class:`KernelSpec` (or the tuple
``(kind, gamma, scale, offset, degree)`` of ``Kernel.compiled()``) and
squared row norms that the caller caches (see ``kbench.learners.support_buffer.SupportBuffer``).
Inputs are validated by the Python wrappers in ``kbench.core.kernel_rows``.

Kernel rows, squared norms and weighted sums take float64 or float32 arrays (all arrays
of a call share the dtype): float32 stored vectors halve the memory a row reads. Matrices,
diagonals and decision blocks are float64.

The two precisions are one implementation over the fused type ``floating`` of
``_kernels.pxd`` (``_kernel_row``, ``_expansion``, ``_dot``), which the learners cimport in
its float64 form: the functions here pick the specialisation from the dtype of the arrays
and call it. Fused types cover every float32/float64 variant, so no Tempita template is
generated for this module (see the top of ``_kernels.pxd``).
"""
cimport numpy as cnp
from scipy.linalg.cython_blas cimport dgemm

import numpy as np

cnp.import_array()


# -- argument checks ----------------------------------------------------------------------
# The row and weighted-sum entry points run once per example, so they check their arguments
# through the NumPy C API (a few pointer reads) rather than by acquiring typed memoryviews,
# which cost several hundred nanoseconds per array: more than a whole row at small M·d.

cdef inline bint _is(object a, int typenum, int ndim, bint write):
    """a is an aligned, C-contiguous ndarray of this dtype and dimension (writeable if asked)."""
    if not cnp.PyArray_Check(a):
        return False
    cdef cnp.ndarray arr = <cnp.ndarray>a
    return (cnp.PyArray_NDIM(arr) == ndim and cnp.PyArray_TYPE(arr) == typenum
            and cnp.PyArray_ISCARRAY_RO(arr) and (not write or cnp.PyArray_ISWRITEABLE(arr)))


cdef inline Py_ssize_t _len(object a):
    return cnp.PyArray_DIMS(<cnp.ndarray>a)[0]


cdef inline void* _data(object a):
    return cnp.PyArray_DATA(<cnp.ndarray>a)


# -- the kernel spec ------------------------------------------------------------------------


cdef class KernelSpec:
    """A built-in kernel as the compiled loops take it: ``kind`` (a :class:`KernelKind`) and
    its parameters ``gamma`` (RBF, Laplacian), ``scale``, ``offset`` and ``degree``
    (polynomial). Immutable, comparable, hashable and picklable (it travels with a learner to
    worker processes).

    ``KernelSpec(K_NOT_COMPILED)`` stands for a third-party kernel: the loops then read
    the rows (and k(x, x)) their caller computed in Python.
    """

    def __init__(self, int kind, double gamma=0.0, double scale=1.0, double offset=0.0,
                 double degree=1.0):
        if kind < K_NOT_COMPILED or kind > K_LAPLACIAN:
            raise ValueError(f"kbench: unknown kernel kind {kind} (KernelKind: -1 to 3)")
        self.kind, self.gamma, self.scale, self.offset, self.degree = (
            kind, gamma, scale, offset, degree)

    @staticmethod
    def of(kernel):
        """The spec of a :class:`kbench.api.Kernel` (``K_NOT_COMPILED`` when it has no
        compiled form), of a spec, or of a ``Kernel.compiled()`` tuple."""
        if isinstance(kernel, (KernelSpec, tuple)):
            return as_spec(kernel)
        compiled = kernel.compiled()
        return KernelSpec(K_NOT_COMPILED) if compiled is None else as_spec(compiled)

    @property
    def compiled(self):
        """True unless the kernel is a third-party one (``K_NOT_COMPILED``)."""
        return self.kind != K_NOT_COMPILED

    cdef (int, double, double, double, double) params(self) noexcept:
        return self.kind, self.gamma, self.scale, self.offset, self.degree

    def astuple(self):
        """``(kind, gamma, scale, offset, degree)``, as ``Kernel.compiled()`` gives it."""
        return (self.kind, self.gamma, self.scale, self.offset, self.degree)

    def self_kernel(self, double xsq):
        """k(x, x) from ‖x‖² (every compiled kernel's diagonal depends on it alone)."""
        if self.kind == K_NOT_COMPILED:
            raise TypeError("kbench: k(x, x) of a third-party kernel comes from its diag")
        if self.kind == K_RBF or self.kind == K_LAPLACIAN:
            return 1.0
        return _transform(self.kind, xsq, xsq, xsq, self.gamma, self.scale, self.offset,
                          self.degree)

    def __reduce__(self):
        return (KernelSpec, self.astuple())

    def __eq__(self, other):
        if not isinstance(other, KernelSpec):
            return NotImplemented
        return self.astuple() == (<KernelSpec>other).astuple()

    def __hash__(self):
        return hash(self.astuple())

    def __repr__(self):
        names = {K_NOT_COMPILED: "not compiled", K_LINEAR: "linear", K_RBF: "rbf",
                 K_POLY: "poly", K_LAPLACIAN: "laplacian"}
        return (f"KernelSpec({names[self.kind]}, gamma={self.gamma!r}, scale={self.scale!r}, "
                f"offset={self.offset!r}, degree={self.degree!r})")


cdef KernelSpec as_spec(object kernel):
    """kernel as a KernelSpec: itself, or made from a (kind, gamma, scale, offset, degree)
    tuple; anything else is refused in one line."""
    if type(kernel) is KernelSpec:
        return <KernelSpec>kernel
    if isinstance(kernel, tuple) and len(<tuple>kernel) == 5:
        return KernelSpec(*kernel)
    raise TypeError(f"kbench: kernel must be a KernelSpec or (kind, gamma, scale, offset, "
                    f"degree), got {type(kernel).__name__}")


cdef int _row_dtype(object S) except -1:
    if cnp.PyArray_Check(S) and cnp.PyArray_TYPE(<cnp.ndarray>S) == cnp.NPY_FLOAT:
        return cnp.NPY_FLOAT
    return cnp.NPY_DOUBLE


cdef Py_ssize_t _check_row(object S, object sq, object x, object out, Py_ssize_t m,
                           bint need_sq) except -2:
    """Validate the arrays of one row (one dtype, taken from S); return m."""
    cdef int t = _row_dtype(S)
    name = "float32" if t == cnp.NPY_FLOAT else "float64"
    if not _is(S, t, 2, False):
        raise ValueError(f"kbench: kernel_row needs S as a C-contiguous 2-D {name} array")
    if not _is(x, t, 1, False) or not _is(out, t, 1, True):
        raise ValueError(f"kbench: kernel_row needs x and a writeable out as C-contiguous 1-D {name} "
                         f"arrays, like S")
    if need_sq and not _is(sq, t, 1, False):
        raise ValueError(f"kbench: kernel_row needs sq as a C-contiguous 1-D {name} array, like S")
    cdef Py_ssize_t rows = cnp.PyArray_DIMS(<cnp.ndarray>S)[0]
    cdef Py_ssize_t d = cnp.PyArray_DIMS(<cnp.ndarray>S)[1]
    if m < 0:
        m = rows
    if m > rows or _len(out) < m or (need_sq and _len(sq) < m):
        raise ValueError(f"kbench: kernel_row over {m} rows needs S, sq and out of at least {m} "
                         f"(got {rows}, {_len(sq) if need_sq else '-'}, {_len(out)})")
    if _len(x) != d:
        raise ValueError(f"kbench: kernel_row: S has {d} columns but x has {_len(x)} entries")
    return m


cdef inline void _row_call(int kind, double gamma, double scale, double offset, double degree,
                           object S, object sq, object x, double xsq, object out,
                           Py_ssize_t m, bint have_sq):
    """Run one validated row; sq is only read by the RBF kernel, and a negative xsq of a
    float64 row is summed here as :func:`sqnorm` sums it (one call less per row)."""
    cdef Py_ssize_t d = cnp.PyArray_DIMS(<cnp.ndarray>S)[1]
    cdef void* ps = _data(S)
    cdef void* px = _data(x)
    cdef void* po = _data(out)
    cdef void* pq = _data(sq) if have_sq else NULL
    if m == 0:
        return
    cdef bint f32 = _row_dtype(S) == cnp.NPY_FLOAT
    if xsq < 0.0 and have_sq:
        if f32:  # float32 rows have no kbench sum of their own to match: the caller's
            raise ValueError("kbench: kernel_row on float32 rows needs ‖x‖² ≥ 0 as xsq")
        xsq = _dot(<const double*>px, <const double*>px, <int>d) if d > 0 else 0.0
    if f32:
        with nogil:
            _kernel_row(kind, gamma, scale, offset, degree, <const float*>ps, m, d,
                        <const float*>pq, <const float*>px, xsq, <float*>po)
    else:
        with nogil:
            _kernel_row(kind, gamma, scale, offset, degree, <const double*>ps, m, d,
                        <const double*>pq, <const double*>px, xsq, <double*>po)


def kernel_row(kernel,
               S, sq, x, double xsq, out, Py_ssize_t m=-1):
    """Write k(S[i], x) for i < m into out (m defaults to every row of S).

    S, sq, x and out are C-contiguous arrays of one dtype, float64 or float32 (computed in
    float32); sq holds the squared norms of the rows of S and xsq that of x (read by the
    RBF kernel only; a negative xsq of float64 rows is computed here, as ``sqnorm(x)``).
    """
    cdef int kind
    cdef double gamma, scale, offset, degree
    kind, gamma, scale, offset, degree = as_spec(kernel).params()  # unpacked once, outside the nogil loop
    m = _check_row(S, sq, x, out, m, kind == K_RBF)
    _row_call(kind, gamma, scale, offset, degree, S, sq, x, xsq, out, m, kind == K_RBF)


def _as_array(a, str name, int ndim, object dtype):
    arr = np.asarray(a)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=dtype)


def compiled_row(self, S, x, *, out=None, sq=None, xsq=None):
    """Kernel values between each row of ``S`` and ``x`` (``Kernel.row`` of compiled kernels).

    ``sq`` (squared norms of the rows of S) and ``xsq`` (of x) are optional caches; ``out``
    an optional output buffer of at least len(S) entries. float32 S (with float32 ``out``
    when one is given) is computed in float32 and gives float32 values; anything else is
    computed in float64.
    """
    kind, gamma, scale, offset, degree = self.compiled()
    cdef int t = _row_dtype(S)
    if t == cnp.NPY_FLOAT and out is not None and not _is(out, t, 1, True):
        t = cnp.NPY_DOUBLE  # a float64 output buffer asks for float64 values
    dtype = np.float32 if t == cnp.NPY_FLOAT else np.float64
    if not _is(S, t, 2, False):
        S = _as_array(S, "S", 2, dtype)
    if not _is(x, t, 1, False):
        x = _as_array(x, "x", 1, dtype)
    cdef Py_ssize_t m = cnp.PyArray_DIMS(<cnp.ndarray>S)[0]
    cdef Py_ssize_t d = cnp.PyArray_DIMS(<cnp.ndarray>S)[1]
    if _len(x) != d:
        raise ValueError(f"kernel row: S has {d} columns but x has {_len(x)} entries")
    if out is None:
        out = np.empty(m, dtype=dtype)
    elif not _is(out, t, 1, True) or _len(out) < m:
        raise ValueError(f"kernel row: out must be a writeable C-contiguous 1-D {np.dtype(dtype).name} "
                         f"array of at least {m} entries")
    cdef bint rbf = kind == K_RBF
    if rbf:
        if sq is None:
            sq = np.empty(m, dtype=dtype)
            if m:
                sq_norms(S, sq)
        elif not _is(sq, t, 1, False) or _len(sq) < m:
            sq = _as_array(sq, "sq", 1, dtype)
            if _len(sq) < m:
                raise ValueError(f"kernel row: sq has {_len(sq)} entries for {m} rows")
        if xsq is None:
            xsq = float(np.dot(x, x))
    _row_call(kind, gamma, scale, offset, degree, S, sq, x, xsq if rbf else 0.0, out, m, rbf)
    return out if _len(out) == m else out[:m]


cdef void _gram(int kind, double gamma, double scale, double offset, double degree,
                const double* A, const double* asq, Py_ssize_t na, const double* B,
                const double* bsq, Py_ssize_t nb, Py_ssize_t d, double* out,
                Py_ssize_t ld) noexcept nogil:
    """out[i, j] = k(A[i], B[j]) for the C-contiguous na×d A and nb×d B (na, nb ≥ 1), into
    the row-major out of leading dimension ld: row i holds the values of A[i]'s kernel row
    against B (the same loops). asq and bsq are read by the RBF and polynomial kernels."""
    cdef Py_ssize_t i, j
    cdef int m = <int>nb, n = <int>na, k = <int>d, ldo = <int>ld
    cdef double one = 1.0, zero = 0.0
    cdef char tr = b'T', nt = b'N'
    if kind == K_LAPLACIAN:
        for i in range(na):
            kb_laplacian_d(B, nb, d, A + i * d, gamma, out + i * ld)
        return
    if d == 0:
        for i in range(na):
            for j in range(nb):
                out[i * ld + j] = 0.0
    else:
        # Row-major out = A Bᵀ is column-major outᵀ = B Aᵀ.
        dgemm(&tr, &nt, &m, &n, &k, &one, <double*>B, &k, <double*>A, &k, &zero, out, &ldo)
    if kind != K_LINEAR:
        for i in range(na):
            _transform_row(kind, gamma, scale, offset, degree, bsq, asq[i], out + i * ld, nb)


cdef inline int _check_norms(str where, int kind, Py_ssize_t na_sq, Py_ssize_t na,
                             Py_ssize_t nb_sq, Py_ssize_t nb) except -1:
    """_gram reads both sides' squared norms for every kernel but the linear and the Laplacian."""
    if kind != K_LINEAR and kind != K_LAPLACIAN and (na_sq < na or nb_sq < nb):
        raise ValueError(f"kbench: {where} needs the squared norms of both blocks, {na} and "
                         f"{nb} (got {na_sq} and {nb_sq})")
    return 0


def kernel_matrix(kernel,
                  const double[:, ::1] A, const double[::1] asq,
                  const double[:, ::1] B, const double[::1] bsq, double[:, ::1] out):
    """Write the Gram block k(A[i], B[j]) into out (shape len(A) × len(B))."""
    cdef int kind
    cdef double gamma, scale, offset, degree
    kind, gamma, scale, offset, degree = as_spec(kernel).params()  # unpacked once, outside the nogil loop
    cdef Py_ssize_t na = A.shape[0], nb = B.shape[0]
    cdef Py_ssize_t d = A.shape[1]
    if B.shape[1] != d:
        raise ValueError(f"kbench: kernel_matrix: A has {d} columns but B has {B.shape[1]}")
    if out.shape[0] < na or out.shape[1] < nb:
        raise ValueError(f"kbench: kernel_matrix of {na}×{nb} needs out of at least that size "
                         f"(got {out.shape[0]}×{out.shape[1]})")
    _check_norms("kernel_matrix", kind, asq.shape[0], na, bsq.shape[0], nb)
    if na == 0 or nb == 0:
        return
    with nogil:
        _gram(kind, gamma, scale, offset, degree, &A[0, 0] if d else NULL,
              &asq[0] if asq.shape[0] else NULL, na, &B[0, 0] if d else NULL,
              &bsq[0] if bsq.shape[0] else NULL, nb, d, &out[0, 0], out.shape[1])


def kernel_diag(kernel,
                const double[:, ::1] A, const double[::1] asq, double[::1] out):
    """Write k(A[i], A[i]) into out."""
    cdef int kind
    cdef double gamma, scale, offset, degree
    kind, gamma, scale, offset, degree = as_spec(kernel).params()  # unpacked once, outside the nogil loop
    cdef Py_ssize_t i
    with nogil:
        for i in range(A.shape[0]):
            if kind == K_RBF or kind == K_LAPLACIAN:
                out[i] = 1.0
            else:
                out[i] = _transform(kind, asq[i], asq[i], asq[i], gamma, scale, offset, degree)


cdef inline void _sq_norms(const floating* A, Py_ssize_t n, int d,
                           floating* out) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = _dot(A + i * d, A + i * d, d) if d > 0 else 0.0


def sqnorm(const double[::1] x):
    """‖x‖² of one float64 row, summed as every compiled loop sums it (``_dot``)."""
    return _dot(&x[0], &x[0], <int>x.shape[0]) if x.shape[0] > 0 else 0.0


def sq_norms(A, out):
    """Write the squared Euclidean norm of each row of A into out (float64 or float32, one dtype)."""
    cdef int t = _row_dtype(A)
    if not _is(A, t, 2, False) or not _is(out, t, 1, True) or _len(out) < _len(A):
        raise ValueError("kbench: sq_norms needs a C-contiguous 2-D A and a writeable 1-D out "
                         "of at least len(A) entries, both float64 or both float32")
    cdef Py_ssize_t n = _len(A)
    cdef int d = <int>cnp.PyArray_DIMS(<cnp.ndarray>A)[1]
    cdef void* pa = _data(A)
    cdef void* po = _data(out)
    with nogil:
        if t == cnp.NPY_DOUBLE:
            _sq_norms(<const double*>pa, n, d, <double*>po)
        else:
            _sq_norms(<const float*>pa, n, d, <float*>po)



def expansion(k, alpha, Py_ssize_t m, out, double scale=1.0):
    """out[c] = scale · Σ_{i<m} k[i]·alpha[i, c]: the weighted sum behind every decision
    value (``scale``: a learner's lazy factor on all coefficients), summed as the block
    loops sum it.

    C-contiguous arrays of one dtype, float64 or float32; alpha is m' × C with m' ≥ m.
    """
    cdef int t = _row_dtype(alpha)
    if not (_is(k, t, 1, False) and _is(alpha, t, 2, False) and _is(out, t, 1, True)):
        raise ValueError("kbench: expansion needs C-contiguous k (1-D), alpha (2-D) and a writeable "
                         "out (1-D), all float64 or all float32")
    cdef Py_ssize_t nc = cnp.PyArray_DIMS(<cnp.ndarray>alpha)[1]
    if m < 0 or m > _len(alpha) or m > _len(k) or _len(out) < nc:
        raise ValueError(f"kbench: expansion over {m} rows needs k and alpha of at least {m} rows "
                         f"and out of {nc} entries")
    cdef void* pk = _data(k)
    cdef void* pa = _data(alpha)
    cdef void* po = _data(out)
    with nogil:
        if t == cnp.NPY_FLOAT:
            _expansion(<const float*>pk, <const float*>pa, m, nc, scale, <float*>po)
        else:
            _expansion(<const double*>pk, <const double*>pa, m, nc, scale, <double*>po)


def decision_block(kernel,
                   const double[:, ::1] S, const double[::1] sq, const double[:, ::1] alpha,
                   Py_ssize_t m, const double[:, ::1] X, const double[::1] xsq,
                   double[:, ::1] K, double[:, ::1] out):
    """out = k(X, S[:m]) @ alpha[:m] using the caller's scratch Gram block K (len(X) × ≥m).

    Each row of K holds the same values as the kernel row of that example (same loops),
    so block predictions agree with one-by-one ones.
    """
    cdef int kind
    cdef double gamma, scale, offset, degree
    kind, gamma, scale, offset, degree = as_spec(kernel).params()  # unpacked once, outside the nogil loop
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1]
    cdef int mm = <int>m, nn = <int>n, nc = <int>alpha.shape[1], ldk = <int>K.shape[1]
    cdef double one = 1.0, zero = 0.0
    cdef char nt = b'N'
    # Checked once per block: the loops below trust every length (a row of X longer than
    # S's would read past the stored rows, quietly).
    if S.shape[1] != d:
        raise ValueError(f"kbench: decision_block: S has {S.shape[1]} columns but X has {d}")
    if m < 0 or m > S.shape[0] or m > alpha.shape[0]:
        raise ValueError(f"kbench: decision_block over {m} rows needs S and alpha of at least "
                         f"{m} rows (got {S.shape[0]} and {alpha.shape[0]})")
    if K.shape[0] < n or K.shape[1] < m or out.shape[0] < n or out.shape[1] != nc:
        raise ValueError(f"kbench: decision_block of {n} rows over {m} needs K of at least "
                         f"{n}×{m} and out of {n}×{nc} (got {K.shape[0]}×{K.shape[1]} and "
                         f"{out.shape[0]}×{out.shape[1]})")
    _check_norms("decision_block", kind, xsq.shape[0], n, sq.shape[0], m)
    if n == 0:
        return
    if m == 0:
        out[:n, :] = 0.0
        return
    with nogil:
        _gram(kind, gamma, scale, offset, degree, &X[0, 0] if d else NULL,
              &xsq[0] if xsq.shape[0] else NULL, n, &S[0, 0] if d else NULL,
              &sq[0] if sq.shape[0] else NULL, m, d, &K[0, 0], K.shape[1])
        # out (n×C) = K[:, :m] (n×m) @ alpha[:m] (m×C); column-major: outᵀ = alphaᵀ Kᵀ.
        dgemm(&nt, &nt, &nc, &nn, &mm, &one, <double*>&alpha[0, 0], &nc, &K[0, 0], &ldk,
              &zero, &out[0, 0], &nc)
