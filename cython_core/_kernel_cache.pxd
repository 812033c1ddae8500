# An LRU cache of kernel rows between support vectors, with a byte budget, cimported by
# the learners that revisit their support vectors: the Huller's removal attempts, LASVM's
# REPROCESS. Its functions are inline (kbench.cython_core._kernel_cache wraps them for
# Python); the state is a handful of arrays owned by the caller. The two learners' cores
# subclass CachedStore (at the end), so importing them imports that module too.
#
# Keys are support-vector slots 0..L-1 of the learner's buffer. The row of key i holds
# k(SV[i], SV[j]) for j < length (a valid prefix: LIBSVM's lazily extended rows). A row is
# extended, not recomputed, when more support vectors have been added since it was filled.
# When the learner removes the support vector of slot i and moves its last one (slot
# `last`) into i, _kc_move mirrors the move in every cached row (LIBSVM's swap_index).
#
# Pool slots (rows of `rows`) sit on a doubly linked LRU list with a sentinel at index
# n_slots: nxt[sentinel] is the most recently used row, prv[sentinel] the least; free pool
# slots are kept at the least-recently-used end, so taking the back one either reuses a
# free row or evicts the oldest.

from libc.string cimport memcpy

from kbench.cython_core._kernels cimport _kernel_row
from kbench.cython_core._sparse cimport SparseRows, _block_move, _sparse_row


# Indices of the ``counters`` array; _kernel_cache.COUNTERS names them, in this order.
cdef enum:
    KC_HITS = 0       # rows found complete
    KC_PARTIAL = 1    # rows found and extended
    KC_MISSES = 2     # rows computed from scratch
    KC_EVALS = 3      # kernel values computed by the cache
    KC_NCOUNTERS = 4


cdef struct KCache:
    double* rows            # n_slots × L
    Py_ssize_t L            # row length: the learner's support-vector capacity
    Py_ssize_t n_slots      # rows the budget holds (0: nothing is cached)
    long long* length       # per pool slot: valid prefix
    long long* key          # per pool slot: the key it holds, or -1 when free
    long long* prv          # n_slots + 1 entries, the last is the sentinel
    long long* nxt
    long long* key_slot     # per key: its pool slot, or -1
    long long* counters     # KC_HITS .. KC_EVALS


cdef struct KParams:
    int kind
    double gamma, scale, offset, degree


cdef inline void _kp_row(const KParams* kp, const double* S, Py_ssize_t m, Py_ssize_t d,
                         const double* sq, const double* x, double xsq,
                         double* out) noexcept nogil:
    """_kernel_row with the kernel of kp."""
    _kernel_row(kp.kind, kp.gamma, kp.scale, kp.offset, kp.degree, S, m, d, sq, x, xsq, out)


cdef inline KCache _kc_view(double[:, ::1] rows, long long[:, ::1] meta,
                            long long[::1] key_slot, long long[::1] counters) noexcept:
    """The cache whose arrays these are; ``meta`` rows: length, key, prv, nxt."""
    cdef KCache c
    c.n_slots = meta.shape[1] - 1
    c.L = rows.shape[1]
    c.rows = &rows[0, 0] if c.n_slots > 0 else NULL
    c.length = &meta[0, 0]
    c.key = &meta[1, 0]
    c.prv = &meta[2, 0]
    c.nxt = &meta[3, 0]
    c.key_slot = &key_slot[0]
    c.counters = &counters[0]
    return c


cdef inline void _kc_unlink(KCache* c, long long s) noexcept nogil:
    c.nxt[c.prv[s]] = c.nxt[s]
    c.prv[c.nxt[s]] = c.prv[s]


cdef inline void _kc_link(KCache* c, long long s, long long before,
                          long long after) noexcept nogil:
    """Put pool slot s (unlinked) on the LRU list between two neighbours."""
    c.prv[s] = before
    c.nxt[s] = after
    c.nxt[before] = s
    c.prv[after] = s


cdef inline void _kc_front(KCache* c, long long s) noexcept nogil:
    _kc_link(c, s, c.n_slots, c.nxt[c.n_slots])


cdef inline void _kc_back(KCache* c, long long s) noexcept nogil:
    _kc_link(c, s, c.prv[c.n_slots], c.n_slots)


cdef inline long long _kc_take(KCache* c, long long key) noexcept nogil:
    """A pool slot for key, empty: a free one, else the least recently used row (evicted)."""
    cdef long long s = c.prv[c.n_slots]
    if c.key[s] >= 0:
        c.key_slot[c.key[s]] = -1
    c.key[s] = key
    c.length[s] = 0
    c.key_slot[key] = s
    _kc_unlink(c, s)
    _kc_front(c, s)
    return s


cdef inline long long _kc_lookup(KCache* c, long long key, Py_ssize_t m,
                                 long long* have) noexcept nogil:
    """The pool slot of key's row (marked most recent, taken if absent) and its valid prefix.

    Counts a hit, a partial hit or a miss for a row needed to length m; -1 when nothing
    can be cached (the caller computes the row into its own scratch).
    """
    cdef long long s
    if c.n_slots == 0:
        c.counters[KC_MISSES] += 1
        have[0] = 0
        return -1
    s = c.key_slot[key]
    if s >= 0:
        _kc_unlink(c, s)
        _kc_front(c, s)
        have[0] = c.length[s]
        if have[0] >= m:
            c.counters[KC_HITS] += 1
        else:
            c.counters[KC_PARTIAL] += 1
        return s
    c.counters[KC_MISSES] += 1
    have[0] = 0
    return _kc_take(c, key)


cdef inline void _stored_rows(const KParams* kp, SparseRows* sp, Py_ssize_t key,
                              Py_ssize_t a, Py_ssize_t b, const double* SV, const double* sq,
                              Py_ssize_t d, double* out) noexcept nogil:
    """k(S[key], S[j]) for a <= j < b into out[0:b-a]: S the dense rows SV, or (sp not
    NULL) the CSR rows of the sparse store."""
    cdef long long s
    if sp == NULL:
        _kp_row(kp, SV + a * d, b - a, d, sq + a, SV + key * d, sq[key], out)
        return
    s = sp.starts[key]
    _sparse_row(kp.kind, kp.gamma, kp.scale, kp.offset, kp.degree, sp.indices + s,
                sp.data + s, sp.ends[key] - s, sp.sq[key], sp.starts + a, sp.ends + a,
                sp.indices, sp.data, sp.sq + a, b - a, sp.strategy, sp.work, out)


cdef inline double* _kc_fetch(KCache* c, KParams* kp, long long key, Py_ssize_t m,
                              const double* SV, const double* sq, Py_ssize_t d,
                              double* scratch, SparseRows* sp=NULL) noexcept nogil:
    """k(SV[key], SV[j]) for j < m: a cached row, extended as needed, or scratch (the rows
    of the sparse store sp when it is given)."""
    cdef long long have
    cdef long long s = _kc_lookup(c, key, m, &have)
    cdef double* row = scratch if s < 0 else c.rows + s * c.L
    if have < m:
        _stored_rows(kp, sp, key, have, m, SV, sq, d, row + have)
        c.counters[KC_EVALS] += m - have
        if s >= 0:
            c.length[s] = m
    return row


cdef inline void _kc_store(KCache* c, long long key, const double* src,
                           Py_ssize_t m) noexcept nogil:
    """Cache a row computed elsewhere (the row of an example that just became a support vector)."""
    cdef long long s
    if c.n_slots == 0 or m > c.L:
        return
    s = c.key_slot[key]
    if s < 0:
        s = _kc_take(c, key)
    else:
        _kc_unlink(c, s)
        _kc_front(c, s)
    memcpy(c.rows + s * c.L, src, m * sizeof(double))
    c.length[s] = m


cdef inline void _kc_drop(KCache* c, long long key) noexcept nogil:
    cdef long long s
    if c.n_slots == 0:
        return
    s = c.key_slot[key]
    if s < 0:
        return
    c.key_slot[key] = -1
    c.key[s] = -1
    c.length[s] = 0
    _kc_unlink(c, s)
    _kc_back(c, s)


cdef inline void _kc_move(KCache* c, long long i, long long last) noexcept nogil:
    """The support vector of slot i was removed and that of slot `last` moved into i.

    Drops i's row; in every other row entry `last` moves to entry i and the prefix ends
    at `last`. A row that stopped between i and last loses the stale entry i and
    everything after it (it is extended again when next needed).
    """
    cdef long long s, s_last, n
    cdef double* row
    if c.n_slots == 0:
        return
    _kc_drop(c, i)
    for s in range(c.n_slots):
        if c.key[s] < 0:
            continue
        n = c.length[s]
        row = c.rows + s * c.L
        if n > last:
            row[i] = row[last]
            c.length[s] = last
        elif n > i:
            c.length[s] = i
    if i != last:
        s_last = c.key_slot[last]
        if s_last >= 0:
            c.key[s_last] = i
            c.key_slot[i] = s_last
            c.key_slot[last] = -1


cdef inline void _kc_clear(KCache* c) noexcept nogil:
    cdef long long s
    if c.n_slots == 0:
        return
    for s in range(c.n_slots):
        if c.key[s] >= 0:
            c.key_slot[c.key[s]] = -1
        c.key[s] = -1
        c.length[s] = 0


cdef inline void _kc_remove_slot(KCache* c, double* SV, double* sq, double* lab,
                                 long long* ids, long long* id_slot, Py_ssize_t n_ids,
                                 Py_ssize_t d, Py_ssize_t i, Py_ssize_t last,
                                 SparseRows* sp=NULL) noexcept nogil:
    """Delete support vector i of a learner's store of ``last + 1``: its training id (ids,
    mapped back by id_slot for ids below n_ids) is forgotten, and the last vector, its norm,
    label and id move into slot i, here and in the cache. With a sparse store sp the moved
    vector is its CSR row (sq is then the store's). The learner moves its own coefficients
    and shrinks its count."""
    if ids[i] >= 0 and ids[i] < n_ids:
        id_slot[ids[i]] = -1
    if sp != NULL:
        _block_move(sp, i, last)
    if i != last:
        if sp == NULL:
            memcpy(SV + i * d, SV + last * d, d * sizeof(double))
            sq[i] = sq[last]
        lab[i] = lab[last]
        ids[i] = ids[last]
        if ids[i] >= 0 and ids[i] < n_ids:
            id_slot[ids[i]] = i
    _kc_move(c, i, last)


cdef inline object _base(view):
    """The array a typed memoryview was bound to (None before binding): what a store pickles."""
    return None if view is None else view.base


# The store of a learner that revisits its support vectors (HullerCore, LASVM's LasvmCore
# subclass it and add their coefficients): vectors, squared norms, labels and training ids
# in slots 0..m-1, the map from training ids to slots, the kernel, and the cache of rows
# between support vectors. The Python wrapper allocates and grows the arrays and binds
# them; _kernel_cache.pyx defines the methods. On CSR rows (``attach``) the vectors are the
# CSR rows of a sparse store (kbench.learners.sparse_buffer.SparseSupportBuffer, through the
# SparseBlock of the call): kernel rows come from its pool, a stored example goes into it.
cdef class CachedStore:
    cdef KParams kp
    cdef public bint compiled_kernel
    cdef double[:, ::1] SV
    cdef double[::1] sq, lab, krow, scratch
    cdef long long[::1] ids, id_slot
    cdef double[:, ::1] c_rows
    cdef long long[:, ::1] c_meta
    cdef long long[::1] c_key_slot, c_counters
    cdef KCache cache
    cdef public Py_ssize_t m, cap, d, n_ids
    cdef public long long n_pos, n_neg, n_pending
    cdef public long long removed
    cdef public long long row_evals                 # kernel values of rows outside the cache
    cdef SparseRows* sp                             # CSR rows of the attached block, or NULL
    cdef object sp_block

    cdef void _bind_store(self, double[:, ::1] SV, double[::1] sq, double[::1] lab,
                          long long[::1] ids, double[::1] krow, double[::1] scratch)
    cdef long long _slot_of(self, long long xid) noexcept nogil
    cdef const double* _cached_row(self, Py_ssize_t s, double* scratch) noexcept nogil
    cdef double _new_row(self, Py_ssize_t i, const double* x, double* xsq) noexcept nogil
    cdef void _put(self, Py_ssize_t s, Py_ssize_t i, const double* x, double xsq) noexcept nogil
    cdef void _row_into(self, const double* x, double xsq, double* out) noexcept nogil
    cdef void _drop_slot(self, Py_ssize_t i) noexcept nogil
    cpdef dict _state(self)
    cpdef _set_state(self, dict state)
