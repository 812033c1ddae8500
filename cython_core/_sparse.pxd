# Declarations of kbench.cython_core._sparse that the learners' block loops cimport: the
# sparse kernel row, and a block of CSR examples learned against a sparse store of support
# vectors (SparseBlock). A loop that takes a SparseBlock runs its dense update on one-value
# stand-in rows (the examples' marks, see plugins/algorithms/_sparse_rows.py) and calls the
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
cdef double _block_self(const SparseRows* R, double xsq) noexcept nogil
cdef SparseRows* _attach(object block, Py_ssize_t n, Py_ssize_t cap) except? NULL


# -- what a learner's loop calls (sp NULL: dense rows) ----------------------------------------

cdef inline Py_ssize_t _row_at(SparseRows* sp, Py_ssize_t i, int kind, double gamma,
                               double scale, double offset, double degree, const double* S,
                               Py_ssize_t m, Py_ssize_t d, const double* sq, const double* x,
                               bint have_row, double* xsq, double* out) noexcept nogil:
    """``_sq_row`` of example i: ‖x‖² into xsq and its kernel row against the first m stored
    rows into out; the number of kernel values computed."""
    if sp == NULL:
        return _sq_row(kind, gamma, scale, offset, degree, S, m, d, sq, x, have_row, xsq, out)
    return _block_row(sp, i, m, xsq, out)


cdef inline Py_ssize_t _scores_at(SparseRows* sp, Py_ssize_t i, int kind, double gamma,
                                  double scale, double offset, double degree, const double* S,
                                  Py_ssize_t m, Py_ssize_t d, const double* sq, const double* x,
                                  bint have_row, double* xsq, double* krow, const double* A,
                                  Py_ssize_t nc, double cs, double* out) noexcept nogil:
    """The first steps of a budget learner's loop: ``_row_at`` into krow, then the scores
    out = cs · Aᵀ krow of the expansion over the m × nc coefficient block A; the number of
    kernel values computed."""
    cdef Py_ssize_t evals = _row_at(sp, i, kind, gamma, scale, offset, degree, S, m, d, sq, x,
                                    have_row, xsq, krow)
    _expansion(krow, A, m, nc, cs, out)
    return evals


cdef inline void _store_at(SparseRows* sp, Py_ssize_t i, double* SV, Py_ssize_t slot,
                           const double* x, Py_ssize_t d) noexcept nogil:
    """Copy example i (its dense row, or its mark) into slot, and its CSR row and squared
    norm into the store."""
    memcpy(SV + slot * d, x, d * sizeof(double))
    if sp != NULL:
        _block_put(sp, i, slot)


cdef inline double _self_at(SparseRows* sp, int kind, double gamma, double scale,
                            double offset, double degree, const double* x, Py_ssize_t d,
                            double xsq) noexcept nogil:
    """k(x, x) of the example (x its dense row, unread for a CSR row)."""
    if sp == NULL:
        return _kernel_one(kind, gamma, scale, offset, degree, x, x, d, xsq, xsq)
    return _block_self(sp, xsq)


cdef inline Py_ssize_t _stored_row_at(SparseRows* sp, Py_ssize_t r, int kind, double gamma,
                                      double scale, double offset, double degree,
                                      const double* S, Py_ssize_t m, Py_ssize_t d,
                                      const double* sq, double* out) noexcept nogil:
    """The kernel row of stored row r against the first m stored rows; m."""
    if sp == NULL:
        _kernel_row(kind, gamma, scale, offset, degree, S, m, d, sq, S + r * d, sq[r], out)
        return m
    return _block_stored_row(sp, r, m, out)
