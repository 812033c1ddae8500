"""Kernel rows of a sparse example against sparse stored support vectors.

An example is one CSR row: ``indices`` (int32, strictly increasing) and ``data``
(float64) of the same length. The stored vectors are rows of a pool: row i is
``indices[starts[i]:ends[i]]``, ``data[starts[i]:ends[i]]`` (starts and ends int64), so a
scipy CSR matrix is the pool with ``starts = indptr[:-1]``, ``ends = indptr[1:]``, and a
store can reuse pool regions in any order. Squared norms of the stored rows are cached by
the caller (read by the RBF kernel only).

Each kernel value costs O(nnz), by one of two inner products:

- merge (``STRATEGY_MERGE``): walk the two sorted index lists together, O(nnz(x) + nnz(s));
- scatter (``STRATEGY_SCATTER``): write x into a dense work vector of the dimension once per
  row, then gather it at each stored row's indices, O(nnz(s)) per stored row, and clear the
  work vector again (O(nnz(x))), so it is all zeros between calls.

Both sum the products of the shared indices in increasing index order (the scatter adds
exact zeros for the others), so for the inner-product kernels they give the same bits.
The transforms (RBF, polynomial) are the dense kernels' own loops (``_kernels.pxd``),
so a sparse row differs from the dense row of the densified data only by the order in
which the inner product is summed.

Arguments are checked through the NumPy C API (a few pointer reads; typed memoryviews
cost several hundred nanoseconds per array, more than a whole row of a small store), and
the loops run without the GIL. Stored indices must lie in ``[0, len(work))`` when the
scatter is used: ``check_rows`` verifies a pool once (``kbench.learners.sparse_buffer`` checks each
row as it is stored), rather than on every row.
"""
cimport numpy as cnp

import numpy as np

cnp.import_array()

from libc.math cimport fabs
from libc.stdint cimport int32_t, int64_t

from kbench.cython_core._arrays cimport _f64
from kbench.cython_core._sparse_checks cimport (
    S_AUTO, S_MERGE, S_SCATTER, Store, _check_store, _check_x, _choose, _data, _len, _need,
    _need_n, _span_error,
)
from kbench.cython_core._kernels cimport as_spec
from kbench.cython_core._kernels cimport (
    K_LAPLACIAN, K_LINEAR, K_NOT_COMPILED, K_RBF, _transform, _transform_row, kb_vexp_d,
)

from kbench.cython_core._sparse_checks import check_indices, check_rows  # re-exported

STRATEGY_AUTO = 0
STRATEGY_MERGE = 1
STRATEGY_SCATTER = 2



# -- inner products and L1 distances ----------------------------------------------------------

cdef inline double _merge_dot(const int32_t* ai, const double* ad, Py_ssize_t na,
                              const int32_t* bi, const double* bd,
                              Py_ssize_t nb) noexcept nogil:
    """Σ a_j b_j over the shared indices of two sorted index lists, in index order."""
    cdef Py_ssize_t i = 0, j = 0
    cdef int32_t a, b
    cdef double s = 0.0
    while i < na and j < nb:
        a = ai[i]
        b = bi[j]
        if a == b:
            s += ad[i] * bd[j]
        # Advance without a three-way branch: the comparisons are unpredictable.
        i += a <= b
        j += b <= a
    return s


cdef inline double _merge_l1(const int32_t* ai, const double* ad, Py_ssize_t na,
                             const int32_t* bi, const double* bd, Py_ssize_t nb) noexcept nogil:
    """Σ_j |a_j − b_j| over the union of two sorted index lists."""
    cdef Py_ssize_t i = 0, j = 0
    cdef int32_t a, b
    cdef double s = 0.0
    while i < na and j < nb:
        a = ai[i]
        b = bi[j]
        if a == b:
            s += fabs(ad[i] - bd[j])
            i += 1
            j += 1
        elif a < b:
            s += fabs(ad[i])
            i += 1
        else:
            s += fabs(bd[j])
            j += 1
    while i < na:
        s += fabs(ad[i])
        i += 1
    while j < nb:
        s += fabs(bd[j])
        j += 1
    return s


cdef inline double _gather_dot(const double* w, const int32_t* bi, const double* bd,
                               Py_ssize_t nb) noexcept nogil:
    cdef Py_ssize_t t
    cdef double s = 0.0
    for t in range(nb):
        s += w[bi[t]] * bd[t]
    return s


cdef inline double _gather_l1(const double* w, const int32_t* bi, const double* bd,
                              Py_ssize_t nb, double xl1) noexcept nogil:
    """‖x − s‖₁ = ‖x‖₁ + Σ_{j ∈ s} (|s_j − x_j| − |x_j|), with x scattered into w."""
    cdef Py_ssize_t t
    cdef double s = 0.0, v
    for t in range(nb):
        v = w[bi[t]]
        s += fabs(bd[t] - v) - fabs(v)
    s += xl1
    return s if s > 0.0 else 0.0


# -- one row ----------------------------------------------------------------------------------

cdef void _sparse_row(int kind, double gamma, double scale, double offset, double degree,
                      const int32_t* xi, const double* xd, Py_ssize_t nx, double xsq,
                      const int64_t* starts, const int64_t* ends, const int32_t* si,
                      const double* sd, const double* sq, Py_ssize_t m, int strategy,
                      double* work, double* out) noexcept nogil:
    """out[i] = k(S_i, x) for i < m; the work vector (all zeros) is left all zeros."""
    cdef Py_ssize_t i, t
    cdef int64_t a
    cdef double xl1 = 0.0
    if m <= 0:
        return
    if strategy == S_SCATTER:
        for t in range(nx):
            work[xi[t]] = xd[t]
        if kind == K_LAPLACIAN:
            for t in range(nx):
                xl1 += fabs(xd[t])
            for i in range(m):
                a = starts[i]
                out[i] = -gamma * _gather_l1(work, si + a, sd + a, ends[i] - a, xl1)
        else:
            for i in range(m):
                a = starts[i]
                out[i] = _gather_dot(work, si + a, sd + a, ends[i] - a)
        for t in range(nx):
            work[xi[t]] = 0.0
    else:
        if kind == K_LAPLACIAN:
            for i in range(m):
                a = starts[i]
                out[i] = -gamma * _merge_l1(xi, xd, nx, si + a, sd + a, ends[i] - a)
        else:
            for i in range(m):
                a = starts[i]
                out[i] = _merge_dot(xi, xd, nx, si + a, sd + a, ends[i] - a)
    if kind == K_LAPLACIAN:
        kb_vexp_d(out, m)
    elif kind != K_LINEAR:
        _transform_row(kind, gamma, scale, offset, degree, sq, xsq, out, m)


# -- entry points -----------------------------------------------------------------------------

def kernel_row(kernel,
               x_indices, x_data, double xsq, starts, ends, indices, data, sq, out,
               Py_ssize_t m=-1, int strategy=0, work=None):
    """Write k(S_i, x) for the first m stored rows into out (m defaults to len(starts)).

    x is the sparse row (x_indices int32 strictly increasing, x_data float64) with squared
    norm xsq (read by the RBF kernel only; a negative xsq has it computed here); the store is the pool described in the module
    docstring, with squared norms sq (float64; read by the RBF kernel only, may be None
    otherwise). strategy: 0 chooses, 1 merges, 2 scatters into work (float64, all zeros, of
    the dimension; left all zeros). x's indices are checked (sorted, below len(work) when
    scattering) in O(nnz(x)); the stored rows' spans in O(m).
    """
    cdef int kind
    cdef double gamma, scale, offset, degree
    kind, gamma, scale, offset, degree = as_spec(kernel).params()  # unpacked once, outside the nogil loop
    cdef bint rbf = kind == K_RBF
    cdef Py_ssize_t d
    strategy = _choose(kind, strategy, work, "kernel row", &d)
    _check_x(x_indices, x_data, d)
    cdef Store st
    m = _check_store(starts, ends, indices, data, sq, m, rbf, &st)
    _need_n(out, cnp.NPY_DOUBLE, True, "out", "float64", m, "kernel row")
    cdef const int32_t* xi = <const int32_t*>_data(x_indices)
    cdef const double* xd = <const double*>_data(x_data)
    cdef Py_ssize_t nx = _len(x_indices)
    cdef double* pw = <double*>_data(work) if strategy == S_SCATTER else NULL
    cdef double* po = <double*>_data(out)
    cdef Py_ssize_t t
    with nogil:
        if rbf and xsq < 0.0:
            # In index order, as row_sq_norms sums a stored row.
            xsq = 0.0
            for t in range(nx):
                xsq += xd[t] * xd[t]
        _sparse_row(kind, gamma, scale, offset, degree, xi, xd, nx, xsq, st.starts,
                    st.ends, st.indices, st.data, st.sq, m, strategy, pw, po)


def kernel_block(kernel,
                 x_starts, x_ends, x_indices, x_data, xsq, starts, ends, indices, data, sq,
                 double[:, ::1] K, Py_ssize_t m=-1, int strategy=0, work=None):
    """Write the Gram block k(X_r, S_i) into K[r, :m] for every row r of a pool of examples.

    The examples are a pool like the store's (x_starts, x_ends, x_indices, x_data) with
    squared norms xsq; each row of K holds the same values as ``kernel_row`` of that example.
    The examples' rows are checked in full (sorted, below len(work) when scattering).
    """
    cdef int kind
    cdef double gamma, scale, offset, degree
    kind, gamma, scale, offset, degree = as_spec(kernel).params()  # unpacked once, outside the nogil loop
    cdef bint rbf = kind == K_RBF
    cdef Py_ssize_t d
    strategy = _choose(kind, strategy, work, "kernel block", &d)
    _need(x_data, cnp.NPY_DOUBLE, False, "x_data", "float64")
    if _len(x_indices) != _len(x_data):
        raise ValueError(f"kbench: sparse examples: {_len(x_indices)} indices but "
                         f"{_len(x_data)} values")
    check_rows(x_starts, x_ends, x_indices, d)
    cdef Py_ssize_t n = _len(x_starts), r
    if rbf:
        _need_n(xsq, cnp.NPY_DOUBLE, False, "xsq", "float64", n, "kernel block")
    cdef Store st
    m = _check_store(starts, ends, indices, data, sq, m, rbf, &st)
    if K.shape[0] < n or K.shape[1] < m:
        raise ValueError(f"kbench: sparse kernel block needs K of at least {n} × {m} "
                         f"(got {K.shape[0]} × {K.shape[1]})")
    if n == 0 or m == 0:
        return
    cdef const int64_t* xs = <const int64_t*>_data(x_starts)
    cdef const int64_t* xe = <const int64_t*>_data(x_ends)
    cdef const int32_t* xi = <const int32_t*>_data(x_indices)
    cdef const double* xd = <const double*>_data(x_data)
    cdef const double* xq = <const double*>_data(xsq) if rbf else NULL
    cdef double* pw = <double*>_data(work) if strategy == S_SCATTER else NULL
    with nogil:
        for r in range(n):
            _sparse_row(kind, gamma, scale, offset, degree, xi + xs[r], xd + xs[r],
                        xe[r] - xs[r], xq[r] if rbf else 0.0, st.starts, st.ends,
                        st.indices, st.data, st.sq, m, strategy, pw, &K[r, 0])


def row_sq_norms(starts, ends, data, out):
    """out[i] = Σ data[starts[i]:ends[i]]², summed in index order."""
    _need(starts, cnp.NPY_INT64, False, "starts", "int64")
    _need(ends, cnp.NPY_INT64, False, "ends", "int64")
    _need(data, cnp.NPY_DOUBLE, False, "data", "float64")
    _need(out, cnp.NPY_DOUBLE, True, "out", "float64")
    cdef Py_ssize_t m = _len(starts), i, pool = _len(data), bad = -1
    cdef int64_t t
    if _len(ends) != m or _len(out) < m:
        raise ValueError(f"kbench: row_sq_norms needs {m} ends and out of at least {m} entries")
    cdef const int64_t* ps = <const int64_t*>_data(starts)
    cdef const int64_t* pe = <const int64_t*>_data(ends)
    cdef const double* pd = <const double*>_data(data)
    cdef double* po = <double*>_data(out)
    cdef double s
    with nogil:
        for i in range(m):
            if not (0 <= ps[i] <= pe[i] <= pool):
                bad = i
                break
            s = 0.0
            for t in range(ps[i], pe[i]):
                s += pd[t] * pd[t]
            po[i] = s
    if bad >= 0:
        _span_error(bad, ps, pe, pool)


# -- a block of CSR examples learned against a sparse store --------------------------------------

cdef Py_ssize_t _block_row(SparseRows* R, Py_ssize_t i, Py_ssize_t m, double* xsq,
                           double* out) noexcept nogil:
    """‖x_i‖² (in index order, as row_sq_norms) into xsq and the kernel row of example i
    against the first m stored rows into out; m."""
    cdef int64_t a = R.xp[i], b = R.xp[i + 1], t
    cdef double s = 0.0
    for t in range(a, b):
        s += R.xd[t] * R.xd[t]
    xsq[0] = s
    _sparse_row(R.kind, R.gamma, R.scale, R.offset, R.degree, R.xi + a, R.xd + a, b - a, s,
                R.starts, R.ends, R.indices, R.data, R.sq, m, R.strategy, R.work, out)
    return m


cdef void _block_put(SparseRows* R, Py_ssize_t i, Py_ssize_t slot) noexcept nogil:
    """Write example i and its squared norm into the store's slot: in the slot's own region
    when it fits, else at the pool's end (reserved for the block by the caller), as
    SparseSupportBuffer places a row."""
    cdef int64_t a = R.xp[i], n = R.xp[i + 1] - a, start, t
    cdef double s = 0.0
    if n <= R.room[slot]:
        start = R.starts[slot]
    else:
        if R.pool_end + n > R.pool_len:  # not reserved: the caller raises after the loop
            R.overflow = True
            return
        R.owned += n - R.room[slot]
        start = R.pool_end
        R.pool_end += n
        R.room[slot] = n
    memcpy(R.indices + start, R.xi + a, n * sizeof(int32_t))
    memcpy(R.data + start, R.xd + a, n * sizeof(double))
    R.starts[slot] = start
    R.ends[slot] = start + n
    for t in range(a, a + n):  # as _block_row sums it
        s += R.xd[t] * R.xd[t]
    R.sq[slot] = s


cdef Py_ssize_t _block_stored_row(SparseRows* R, Py_ssize_t r, Py_ssize_t m,
                                  double* out) noexcept nogil:
    """The kernel row of stored row r against the first m stored rows into out; m."""
    cdef int64_t a = R.starts[r]
    _sparse_row(R.kind, R.gamma, R.scale, R.offset, R.degree, R.indices + a, R.data + a,
                R.ends[r] - a, R.sq[r], R.starts, R.ends, R.indices, R.data, R.sq, m,
                R.strategy, R.work, out)
    return m


cdef Py_ssize_t _block_merge(SparseRows* R, Py_ssize_t p, Py_ssize_t q,
                              double h) noexcept nogil:
    """Write the merged point h·S_p + (1 − h)·S_q and its squared norm into slot p; its
    number of non-zeros.

    The row is the union of the two rows' indices, in increasing order, with the values
    ``h·a + (1 − h)·b`` (a missing value is 0, so each value has the bits of the dense
    merge of the densified rows); values that come out exactly zero are left out. It is
    built at the pool's end, which must hold nnz(S_p) + nnz(S_q) free entries (the caller
    reserves them; else ``overflow`` is set and nothing is written), then copied into slot
    p's own region when it fits there, or kept where it is (a new region for p)."""
    cdef int64_t a = R.starts[p], na = R.ends[p] - a, b = R.starts[q], nb = R.ends[q] - b
    cdef int64_t out = R.pool_end, i = 0, j = 0, n = 0
    cdef int32_t ia, ib, idx
    cdef double g = 1.0 - h, v, s = 0.0
    if out + na + nb > R.pool_len:  # not reserved: the caller raises after the loop
        R.overflow = True
        return 0
    cdef const int32_t* ai = R.indices + a
    cdef const double* ad = R.data + a
    cdef const int32_t* bi = R.indices + b
    cdef const double* bd = R.data + b
    cdef int32_t* oi = R.indices + out
    cdef double* od = R.data + out
    while i < na or j < nb:
        ia = ai[i] if i < na else 2147483647
        ib = bi[j] if j < nb else 2147483647
        if ia == ib:
            idx = ia
            v = h * ad[i] + g * bd[j]
            i += 1
            j += 1
        elif ia < ib:
            idx = ia
            v = h * ad[i] + g * 0.0
            i += 1
        else:
            idx = ib
            v = h * 0.0 + g * bd[j]
            j += 1
        if v != 0.0:
            oi[n] = idx
            od[n] = v
            s += v * v  # in index order, as row_sq_norms sums a stored row
            n += 1
    if n <= R.room[p]:
        # The pool's end is beyond every row's region: the copy cannot overlap.
        memcpy(R.indices + a, oi, n * sizeof(int32_t))
        memcpy(R.data + a, od, n * sizeof(double))
        R.ends[p] = a + n
    else:
        R.owned += n - R.room[p]
        R.starts[p] = out
        R.ends[p] = out + n
        R.room[p] = n
        R.pool_end = out + n
    R.sq[p] = s
    return n


cdef int64_t _block_widest(const SparseRows* R, Py_ssize_t m) noexcept nogil:
    """The largest number of non-zeros of the first m stored rows."""
    cdef Py_ssize_t j
    cdef int64_t w = 0
    for j in range(m):
        if R.ends[j] - R.starts[j] > w:
            w = R.ends[j] - R.starts[j]
    return w


cdef double _block_self(const SparseRows* R, double xsq) noexcept nogil:
    """k(x, x) from ‖x‖², as kbench.cython_core._kernels.kernel_diag gives it."""
    if R.kind == K_RBF or R.kind == K_LAPLACIAN:
        return 1.0
    return _transform(R.kind, xsq, xsq, xsq, R.gamma, R.scale, R.offset, R.degree)


cdef SparseRows* _attach(object block, Py_ssize_t n, Py_ssize_t cap) except? NULL:
    """The rows of a SparseBlock for a loop over n examples that may write slots below cap;
    NULL for None (dense rows)."""
    if block is None:
        return NULL
    if not isinstance(block, SparseBlock):
        raise TypeError(f"kbench: expected a SparseBlock, got {type(block).__name__}")
    cdef SparseBlock b = <SparseBlock>block
    if b.r.n != n:
        raise ValueError(f"kbench: a sparse block of {b.r.n} examples given for {n}")
    if b.r.cap < cap:
        raise ValueError(f"kbench: a sparse store of {b.r.cap} rows given for {cap} slots")
    return &b.r


cdef class SparseBlock:
    """CSR examples to learn against a sparse store, for one call of a learner's block loop.

    The store's arrays (``starts``, ``ends``, ``room`` int64; pool ``indices`` int32 and
    ``data`` float64; ``sq`` float64; one entry per row, ``cap`` rows) are written in place
    by the loop; ``pool_end`` and ``owned`` are the pool's entries in use and owned by live
    rows, read back after the call. The examples are rows ``xp[i]:xp[i + 1]`` (int64) of
    ``x_indices`` (int32) and ``x_data`` (float64), checked here (strictly increasing, below
    ``len(work)`` when scattering). The pool must have room for every example of the block
    beyond ``pool_end``, so that nothing grows inside the loop.
    """

    def __init__(self, kernel, int strategy, work, starts, ends, room, indices, data,
                 sq, Py_ssize_t pool_end, Py_ssize_t owned, xp, x_indices, x_data):
        cdef int kind
        cdef double gamma, scale, offset, degree
        kind, gamma, scale, offset, degree = as_spec(kernel).params()
        cdef Py_ssize_t d
        strategy = _choose(kind, strategy, work, "block", &d)
        for a, name in ((starts, "starts"), (ends, "ends"), (room, "room")):
            _need(a, cnp.NPY_INT64, True, name, "int64")
        _need(indices, cnp.NPY_INT32, True, "indices", "int32")
        _need(data, cnp.NPY_DOUBLE, True, "data", "float64")
        cdef Py_ssize_t cap = _len(starts)
        if _len(ends) != cap or _len(room) != cap:
            raise ValueError("kbench: sparse block: starts, ends and room differ in length")
        _need_n(sq, cnp.NPY_DOUBLE, True, "sq", "float64", cap, "block")
        if _len(indices) != _len(data):
            raise ValueError(f"kbench: sparse block: the pool has {_len(indices)} indices but "
                             f"{_len(data)} values")
        _need(xp, cnp.NPY_INT64, False, "xp", "int64")
        _need(x_indices, cnp.NPY_INT32, False, "x_indices", "int32")
        _need(x_data, cnp.NPY_DOUBLE, False, "x_data", "float64")
        if _len(xp) < 1 or _len(x_indices) != _len(x_data):
            raise ValueError("kbench: sparse block: xp needs n + 1 entries, x_indices and "
                             "x_data one length")
        cdef Py_ssize_t n = _len(xp) - 1
        check_rows(xp[:n], xp[1:], x_indices, d)
        cdef const int64_t* p = <const int64_t*>_data(xp)
        if not (0 <= owned <= pool_end <= _len(indices)):
            raise ValueError(f"kbench: sparse block: pool_end {pool_end} outside the pool")
        if pool_end + (p[n] - p[0]) > _len(indices):
            raise ValueError(f"kbench: sparse block: the pool has {_len(indices) - pool_end} "
                             f"free entries for {p[n] - p[0]} non-zeros; reserve them first")
        self._keep = (work, starts, ends, room, indices, data, sq, xp, x_indices, x_data)
        cdef SparseRows* r = &self.r
        r.kind, r.gamma, r.scale, r.offset, r.degree = kind, gamma, scale, offset, degree
        r.strategy = strategy
        r.work = <double*>_data(work) if strategy == S_SCATTER else NULL
        r.starts = <int64_t*>_data(starts)
        r.ends = <int64_t*>_data(ends)
        r.room = <int64_t*>_data(room)
        r.indices = <int32_t*>_data(indices)
        r.data = <double*>_data(data)
        r.sq = <double*>_data(sq)
        r.cap = cap
        r.pool_end, r.pool_len, r.owned = pool_end, _len(indices), owned
        r.xp = p
        r.xi = <const int32_t*>_data(x_indices)
        r.xd = <const double*>_data(x_data)
        r.n = n
        r.overflow = False

    @property
    def n(self):
        """Number of examples."""
        return self.r.n

    @property
    def pool_end(self):
        """Pool entries in use after the loop (live or freed)."""
        return self.r.pool_end

    @property
    def owned(self):
        """Pool entries owned by live rows after the loop."""
        return self.r.owned

    def check(self):
        """Raise RuntimeError if a loop wrote beyond the reserved pool (never, when the
        pool was reserved for the block)."""
        if self.r.overflow:
            raise RuntimeError("kbench: a sparse block outgrew its reserved pool")


cdef class BlockRows:
    """The examples of one call of a block loop: dense rows, or CSR rows learned against a
    sparse store (``BlockRows.csr``). Every block loop of the toolkit takes one.

    Parameters
    ----------
    X
        Dense rows, a C-contiguous float64 array n × d (not copied, not written).
    """

    def __init__(self, const double[:, ::1] X not None):
        self.X = X
        self.block = None
        self.stand_in = None
        self.n = X.shape[0]

    @staticmethod
    def csr(SparseBlock block not None):
        """The CSR rows of ``block`` (a SparseBlock over a store of ``cap`` rows): the loop
        runs on one-value stand-in rows, which it copies and never reads."""
        cdef BlockRows rows = BlockRows.__new__(BlockRows)
        rows.X = np.zeros((block.r.n, 1))
        rows.block = block
        rows.stand_in = np.zeros((block.r.cap, 1))
        rows.n = block.r.n
        return rows

    @property
    def sparse(self):
        """True for CSR rows."""
        return self.block is not None


def all_signs(const double[::1] y):
    """Whether every label of y is −1 or +1 (what a learner of signs takes), in one pass: the
    check before each block, cheaper than NumPy's three calls on a short one."""
    cdef Py_ssize_t i
    for i in range(y.shape[0]):
        if y[i] != 1.0 and y[i] != -1.0:
            return False
    return True


cdef LoopRows _loop_rows(kernel, BlockRows rows, object store) except *:
    """The LoopRows of a block loop over ``rows`` with the stored rows of ``store`` (read
    through the NumPy C API: the loops also run once per row)."""
    cdef LoopRows R
    cdef Py_ssize_t sv[2]
    cdef Py_ssize_t nsq[1]
    R.kind, R.gamma, R.scale, R.offset, R.degree = as_spec(kernel).params()
    R.SV = _f64(store.X if rows.block is None else rows.stand_in, 2, True, "store.X", sv)
    R.sq = _f64(store.sq, 1, True, "store.sq", nsq)
    R.d = rows.X.shape[1]
    if sv[1] != R.d:
        raise ValueError(f"kbench: rows of {R.d} values for stored rows of {sv[1]}")
    if nsq[0] < sv[0]:
        raise ValueError(f"kbench: {nsq[0]} squared norms for {sv[0]} stored rows")
    R.X = &rows.X[0, 0] if rows.n > 0 and R.d > 0 else NULL
    R.sp = _attach(rows.block, rows.n, sv[0])
    return R


cdef int _check_labels(const LoopRows* R, Py_ssize_t n, Py_ssize_t start, bint have_row,
                       Py_ssize_t ny, Py_ssize_t npred) except -1:
    """A block loop runs unchecked: a label and a prediction slot for each of its n rows, and
    a kernel it cannot compute only on one row whose kernel row it is given."""
    if ny < n or npred < n:
        raise ValueError(f"kbench: a block of {n} rows needs y and pred of {n} entries "
                         f"(got {ny}, {npred})")
    if R.kind == K_NOT_COMPILED and not (have_row and n - start <= 1):
        raise ValueError("kbench: a third-party kernel's rows come from Python: one row a "
                         "call, its kernel row given (have_row)")
    return 0
