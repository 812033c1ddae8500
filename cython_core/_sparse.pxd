# Declarations of kbench.cython_core._sparse that the learners' block loops cimport: the
# sparse kernel row, and a block of CSR examples learned against a sparse store of support
# vectors (SparseBlock). A loop that takes a SparseBlock runs its dense update on one-value
# stand-in rows (BlockRows.csr) and calls the
# inline functions below wherever the dense loop reads or copies a row: they do the dense
# work and, given a block, the same on the CSR rows and the sparse store.
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy

from kbench.cython_core._kernels cimport _expansion, _kernel_one, _kernel_row, _sq_row


# The store (a pool of indices and values; row j is [starts[j], ends[j]), of which it owns
# room[j] entries), the kernel, and the block's examples (example i is
# xi[xp[i]:xp[i + 1]], xd[...]). pool_end, owned: as SparseSupportBuffer's pool_end and
# _owned; pool_len: the pool's length, reserved by the caller for every example of the block.
cdef struct SparseRows:
    int kind
    double gamma, scale, offset, degree
    int strategy
    double* work
    int64_t* starts
    int64_t* ends
    int64_t* room
    int32_t* indices
    double* data
    double* sq
    Py_ssize_t cap
    int64_t pool_end, pool_len, owned
    const int64_t* xp
    const int32_t* xi
    const double* xd
    Py_ssize_t n
    bint overflow


cdef class SparseBlock:
    cdef SparseRows r
    cdef object _keep


cdef void _sparse_row(int kind, double gamma, double scale, double offset, double degree,
                      const int32_t* xi, const double* xd, Py_ssize_t nx, double xsq,
                      const int64_t* starts, const int64_t* ends, const int32_t* si,
                      const double* sd, const double* sq, Py_ssize_t m, int strategy,
                      double* work, double* out) noexcept nogil
cdef Py_ssize_t _block_row(SparseRows* R, Py_ssize_t i, Py_ssize_t m, double* xsq,
                           double* out) noexcept nogil
cdef void _block_put(SparseRows* R, Py_ssize_t i, Py_ssize_t slot) noexcept nogil
cdef Py_ssize_t _block_stored_row(SparseRows* R, Py_ssize_t r, Py_ssize_t m,
                                  double* out) noexcept nogil
cdef Py_ssize_t _block_merge(SparseRows* R, Py_ssize_t p, Py_ssize_t q,
                              double h) noexcept nogil
cdef int64_t _block_widest(const SparseRows* R, Py_ssize_t m) noexcept nogil
cdef double _block_self(const SparseRows* R, double xsq) noexcept nogil
cdef SparseRows* _attach(object block, Py_ssize_t n, Py_ssize_t cap) except? NULL


# -- what a learner's loop calls -------------------------------------------------------------

# The rows a learner's loop reads and writes: the kernel, the stored rows SV (cap × d) and
# their squared norms, the examples X (n × d), and sp: NULL for dense rows, else the CSR
# rows and store of a SparseBlock (SV and X then hold one-value stand-ins, d = 1).
cdef struct LoopRows:
    int kind
    double gamma, scale, offset, degree
    double* SV
    double* sq
    const double* X
    Py_ssize_t d
    SparseRows* sp


# The examples a block loop predicts then learns, dense or CSR, in one typed object: X holds
# the dense rows, or for CSR rows their one-value stand-ins (``block`` a SparseBlock of the
# rows against the store, ``stand_in`` the store's stand-in rows, cap × 1).
cdef class BlockRows:
    cdef const double[:, ::1] X
    cdef readonly object block
    cdef object stand_in
    cdef readonly Py_ssize_t n


# The LoopRows of a block loop over rows, with the stored rows of ``store`` (an object with
# the arrays ``X`` (dense rows only) and ``sq``: SupportBuffer or SparseSupportBuffer).
cdef LoopRows _loop_rows(kernel, BlockRows rows, object store) except *


cdef inline Py_ssize_t _row_at(const LoopRows* R, Py_ssize_t i, Py_ssize_t m, bint have_row,
                               double* xsq, double* out) noexcept nogil:
    """``_sq_row`` of example i: ‖x‖² into xsq and its kernel row against the first m stored
    rows into out (unless ``have_row``, dense rows only); the kernel values computed."""
    if R.sp == NULL:
        return _sq_row(R.kind, R.gamma, R.scale, R.offset, R.degree, R.SV, m, R.d, R.sq,
                       R.X + i * R.d, have_row, xsq, out)
    return _block_row(R.sp, i, m, xsq, out)


cdef inline Py_ssize_t _scores_at(const LoopRows* R, Py_ssize_t i, Py_ssize_t m, bint have_row,
                                  double* xsq, double* krow, const double* A, Py_ssize_t nc,
                                  double cs, double* out) noexcept nogil:
    """The first steps of a budget learner's loop: ``_row_at`` into krow, then the scores
    out = cs · Aᵀ krow of the expansion over the m × nc coefficient block A; the number of
    kernel values computed."""
    cdef Py_ssize_t evals = _row_at(R, i, m, have_row, xsq, krow)
    _expansion(krow, A, m, nc, cs, out)
    return evals


cdef inline void _copy_at(SparseRows* sp, Py_ssize_t i, double* SV, Py_ssize_t slot,
                          const double* x, Py_ssize_t d) noexcept nogil:
    """Copy example i, x (its dense row, or its stand-in), into slot of SV, and with CSR rows
    (sp not NULL) its CSR row and squared norm into the store."""
    memcpy(SV + slot * d, x, d * sizeof(double))
    if sp != NULL:
        _block_put(sp, i, slot)


cdef inline void _store_at(const LoopRows* R, Py_ssize_t i, Py_ssize_t slot) noexcept nogil:
    """Copy example i into slot (``_copy_at``)."""
    _copy_at(R.sp, i, R.SV, slot, R.X + i * R.d, R.d)


cdef inline double _self_at(const LoopRows* R, Py_ssize_t i, double xsq, bint have_row,
                            double kxx_given, double* evals) noexcept nogil:
    """k(x, x) of example i, whose squared norm is xsq: ``kxx_given`` when the loop was
    handed it with the example's kernel row (``have_row``, a kernel the loop cannot
    compute), else computed here and counted in evals."""
    cdef const double* x
    if R.kind < 0 and have_row:
        return kxx_given
    evals[0] += 1.0
    if R.sp == NULL:
        x = R.X + i * R.d
        return _kernel_one(R.kind, R.gamma, R.scale, R.offset, R.degree, x, x, R.d, xsq, xsq)
    return _block_self(R.sp, xsq)


cdef inline Py_ssize_t _stored_row_at(const LoopRows* R, Py_ssize_t r, Py_ssize_t m,
                                      double* out) noexcept nogil:
    """The kernel row of stored row r against the first m stored rows into out; m."""
    if R.sp == NULL:
        _kernel_row(R.kind, R.gamma, R.scale, R.offset, R.degree, R.SV, m, R.d, R.sq,
                    R.SV + r * R.d, R.sq[r], out)
        return m
    return _block_stored_row(R.sp, r, m, out)



cdef inline void _block_move(SparseRows* sp, Py_ssize_t p, Py_ssize_t last) noexcept nogil:
    """The store's side of a removal, as SparseSupportBuffer.remove: slot p's pool region is
    freed and the last row's span and squared norm move into slot p."""
    sp.owned -= sp.room[p]
    if p != last:
        sp.starts[p] = sp.starts[last]
        sp.ends[p] = sp.ends[last]
        sp.room[p] = sp.room[last]
        sp.sq[p] = sp.sq[last]
    sp.starts[last] = sp.ends[last] = sp.room[last] = 0
    sp.sq[last] = 0.0


cdef inline void _move_at(const LoopRows* R, Py_ssize_t p, Py_ssize_t last) noexcept nogil:
    """Delete stored row p, the last stored row taking its slot: the dense row, and with CSR
    rows the store's entry (``_block_move``)."""
    if p != last:
        memcpy(R.SV + p * R.d, R.SV + last * R.d, R.d * sizeof(double))
    if R.sp != NULL:
        _block_move(R.sp, p, last)
cdef int _check_labels(const LoopRows* R, Py_ssize_t n, Py_ssize_t start, bint have_row,
                       Py_ssize_t ny, Py_ssize_t npred) except -1
