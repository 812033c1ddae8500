"""The kernel-row cache of ``_kernel_cache.pxd``, callable from Python.

The learners' compiled loops use the inline functions of the include directly; these
wrappers serve their Python paths (kernels without a compiled form), the Python class
``kbench.plugins.algorithms._kernel_cache.KernelCache`` that owns the arrays, and tests.
Every function takes the cache's four arrays: ``rows`` (n_slots × L float64), ``meta``
(4 × (n_slots + 1) int64: length, key, prv, nxt), ``key_slot`` (L int64) and
``counters`` (hits, partial hits, misses, kernel values computed).

``CachedStore`` is the support-vector store of the learners that revisit their support
vectors (the Huller's and LASVM's cores subclass it): what they share of binding the
arrays, finding a training id's slot, computing and caching rows, and removing a slot.
"""
import numpy as np

from kbench.cython_core._kernels cimport as_spec
from kbench.cython_core._kernels cimport _dot, _kernel_one
from libc.string cimport memcpy

from kbench.cython_core._sparse cimport _attach, _block_put, _block_row, _block_self


#: The counters' names, in the order of the ``counters`` array (KC_HITS ... KC_EVALS).
COUNTERS = ("hits", "partial", "misses", "evals")


def kc_init(long long[:, ::1] meta, long long[::1] key_slot):
    """Empty the cache: every pool slot free and on the LRU list, every key absent."""
    cdef Py_ssize_t n = meta.shape[1] - 1, s
    for s in range(n):
        meta[0, s] = 0
        meta[1, s] = -1
        meta[2, s] = s - 1 if s > 0 else n
        meta[3, s] = s + 1
    meta[0, n] = 0
    meta[1, n] = -1
    meta[2, n] = n - 1 if n > 0 else n
    meta[3, n] = 0 if n > 0 else n
    key_slot[:] = -1


def kc_lookup(double[:, ::1] rows, long long[:, ::1] meta, long long[::1] key_slot,
              long long[::1] counters, long long key, Py_ssize_t m):
    """``(pool slot, valid prefix)`` of key's row needed to length m; slot -1: not cacheable.

    The row becomes the most recent (taken, possibly by eviction, if absent); the caller
    computes entries prefix..m-1 into ``rows[slot]`` and calls :func:`kc_filled`.
    """
    cdef KCache c = _kc_view(rows, meta, key_slot, counters)
    cdef long long have
    cdef long long s = _kc_lookup(&c, key, m, &have)
    return s, have


def kc_filled(long long[:, ::1] meta, long long[::1] counters, long long slot,
              Py_ssize_t have, Py_ssize_t m):
    """Record that the row in pool slot ``slot`` (-1: scratch) is valid up to m."""
    if m > have:
        counters[KC_EVALS] += m - have
        if slot >= 0:
            meta[0, slot] = m


def kc_fetch(double[:, ::1] rows, long long[:, ::1] meta, long long[::1] key_slot,
             long long[::1] counters, kernel, long long key, Py_ssize_t m,
             const double[:, ::1] SV,
             const double[::1] sq, double[::1] scratch):
    """k(SV[key], SV[j]) for j < m through the cache (compiled kernels); a view of the row."""
    cdef KCache c = _kc_view(rows, meta, key_slot, counters)
    cdef int kind
    cdef double gamma, scale, offset, degree
    kind, gamma, scale, offset, degree = as_spec(kernel).params()  # unpacked once into C locals
    cdef KParams kp = KParams(kind, gamma, scale, offset, degree)
    cdef double* row
    if m > SV.shape[0] or key >= m or key < 0 or m > scratch.shape[0] or m > rows.shape[1]:
        raise ValueError("kernel cache: key and length must fit the buffer, the scratch and the rows")
    row = _kc_fetch(&c, &kp, key, m, &SV[0, 0], &sq[0], SV.shape[1], &scratch[0])
    if row == &scratch[0]:
        return np.asarray(scratch)[:m]
    return np.asarray(rows)[c.key_slot[key], :m]


def kc_store(double[:, ::1] rows, long long[:, ::1] meta, long long[::1] key_slot,
             long long[::1] counters, long long key, const double[::1] row):
    """Cache a row computed elsewhere under key."""
    cdef KCache c = _kc_view(rows, meta, key_slot, counters)
    if row.shape[0] > 0:
        _kc_store(&c, key, &row[0], row.shape[0])


def kc_move(double[:, ::1] rows, long long[:, ::1] meta, long long[::1] key_slot,
            long long[::1] counters, long long i, long long last):
    """Key i's support vector was removed and key ``last``'s moved into slot i."""
    cdef KCache c = _kc_view(rows, meta, key_slot, counters)
    _kc_move(&c, i, last)


def kc_clear(double[:, ::1] rows, long long[:, ::1] meta, long long[::1] key_slot,
             long long[::1] counters):
    """Forget every row (counters are kept)."""
    cdef KCache c = _kc_view(rows, meta, key_slot, counters)
    _kc_clear(&c)


def kc_order(long long[:, ::1] meta):
    """Pool slots holding a row, most recently used first."""
    cdef Py_ssize_t head = meta.shape[1] - 1
    cdef long long s = meta[3, head]
    out = []
    while s != head:
        if meta[1, s] >= 0:
            out.append(s)
        s = meta[3, s]
    return out


def check_block(CachedStore store, Py_ssize_t n, str who):
    """Raise ValueError unless ``who``'s compiled block loop can run over n rows: a
    compiled kernel, and as many rows as the attached CSR block's."""
    if not store.compiled_kernel:
        raise ValueError(f"kbench {who}: block needs a compiled kernel")
    if store.sp != NULL and store.sp.n != n:
        raise ValueError(f"kbench: a sparse block of {store.sp.n} examples given with {n} rows")


def _restore(cls, dict state):
    """Unpickle a CachedStore (or subclass): a bare object given its fields."""
    cdef CachedStore store = cls.__new__(cls)
    store._set_state(state)
    return store


cdef class CachedStore:
    """Slots 0..m-1 of support vectors with their kernel-row cache; see _kernel_cache.pxd.

    The Python wrapper allocates the arrays, grows them and binds the cache's arrays
    (``bind_cache``); this class only reads and writes them.
    """

    cdef void _bind_store(self, double[:, ::1] SV, double[::1] sq, double[::1] lab,
                          long long[::1] ids, double[::1] krow, double[::1] scratch):
        """Use these arrays (capacity = their length; the first m rows are kept by the caller)."""
        self.SV, self.sq, self.lab, self.ids, self.krow, self.scratch = SV, sq, lab, ids, krow, scratch
        self.cap = SV.shape[0]
        self.d = SV.shape[1]

    # -- pickling -------------------------------------------------------------------------
    # The arrays are the Python wrapper's own (a memoryview's base is the array it was bound
    # to), so pickle's memo restores one array for both, as they were shared before; the
    # cache's view and the kernel's parameters are rebuilt from them.

    def __reduce__(self):
        if self.sp != NULL:
            raise TypeError("kbench: a store cannot be pickled while a CSR block is attached")
        return _restore, (type(self), self._state())

    cpdef dict _state(self):
        """Everything but the attached block, by field name (extended by subclasses)."""
        return {
            "kp": self.kp, "compiled_kernel": self.compiled_kernel,
            "SV": _base(self.SV), "sq": _base(self.sq), "lab": _base(self.lab),
            "krow": _base(self.krow), "scratch": _base(self.scratch), "ids": _base(self.ids),
            "id_slot": _base(self.id_slot), "c_rows": _base(self.c_rows),
            "c_meta": _base(self.c_meta), "c_key_slot": _base(self.c_key_slot),
            "c_counters": _base(self.c_counters), "m": self.m, "cap": self.cap, "d": self.d,
            "n_ids": self.n_ids, "n_pos": self.n_pos, "n_neg": self.n_neg,
            "n_pending": self.n_pending, "removed": self.removed, "row_evals": self.row_evals,
        }

    cpdef _set_state(self, dict state):
        self.kp = state["kp"]
        self.compiled_kernel = state["compiled_kernel"]
        if state["SV"] is not None:
            self._bind_store(state["SV"], state["sq"], state["lab"], state["ids"],
                             state["krow"], state["scratch"])
        if state["c_rows"] is not None:
            self.bind_cache(state["c_rows"], state["c_meta"], state["c_key_slot"],
                            state["c_counters"])
        if state["id_slot"] is not None:
            self.bind_ids(state["id_slot"])
        for name in ("m", "cap", "d", "n_ids", "n_pos", "n_neg", "n_pending", "removed",
                     "row_evals"):
            setattr(self, name, state[name])

    def bind_cache(self, double[:, ::1] rows, long long[:, ::1] meta, long long[::1] key_slot,
                   long long[::1] counters):
        """Use the kernel cache with these arrays (see _kernel_cache.KernelCache)."""
        self.c_rows, self.c_meta, self.c_key_slot, self.c_counters = rows, meta, key_slot, counters
        self.cache = _kc_view(rows, meta, key_slot, counters)

    def bind_ids(self, long long[::1] id_slot):
        """Map training ids 0..len-1 to slots (-1: not stored)."""
        self.id_slot = id_slot
        self.n_ids = id_slot.shape[0]

    def slot_of(self, long long xid):
        """The slot of training id xid, or -1."""
        return self._slot_of(xid)

    cdef long long _slot_of(self, long long xid) noexcept nogil:
        if xid < 0 or xid >= self.n_ids:
            return -1
        return self.id_slot[xid]

    def attach(self, block):
        """Learn the CSR rows of a SparseBlock (kbench.cython_core._sparse) until
        :meth:`detach`: the support vectors are the block's sparse store (its capacity at
        least this store's), the loops' example i is the block's example i. None: dense
        rows again."""
        self.sp = _attach(block, block.n if block is not None else 0, self.cap)
        self.sp_block = block

    def detach(self):
        """Stop using the attached block (the caller then absorbs it into its store)."""
        self.sp = NULL
        self.sp_block = None

    @property
    def sparse(self):
        """Whether a block of CSR rows is attached."""
        return self.sp != NULL

    cdef const double* _cached_row(self, Py_ssize_t s, double* scratch) noexcept nogil:
        """k(SV[s], SV[j]) for j < m, through the cache (or computed into scratch)."""
        return _kc_fetch(&self.cache, &self.kp, s, self.m, &self.SV[0, 0], &self.sq[0],
                         self.d, scratch, self.sp)

    cdef double _new_row(self, Py_ssize_t i, const double* x, double* xsq) noexcept nogil:
        """The kernel row of an example not stored (x dense, or example i of the attached
        block), into krow (counted), and ‖x‖² into xsq; returns k(x, x)."""
        self.row_evals += self.m
        if self.sp != NULL:
            _block_row(self.sp, i, self.m, xsq, &self.krow[0])
            return _block_self(self.sp, xsq[0])
        xsq[0] = _dot(x, x, <int>self.d) if self.d > 0 else 0.0
        self._row_into(x, xsq[0], &self.krow[0])
        return _kernel_one(self.kp.kind, self.kp.gamma, self.kp.scale, self.kp.offset,
                           self.kp.degree, x, x, self.d, xsq[0], xsq[0])

    cdef void _put(self, Py_ssize_t s, Py_ssize_t i, const double* x,
                   double xsq) noexcept nogil:
        """Store the example (x dense, or example i of the attached block) and its squared
        norm in slot s."""
        if self.sp != NULL:
            _block_put(self.sp, i, s)
            return
        memcpy(&self.SV[s, 0], x, self.d * sizeof(double))
        self.sq[s] = xsq

    cdef void _row_into(self, const double* x, double xsq, double* out) noexcept nogil:
        """k(SV[j], x) for j < m into out."""
        _kp_row(&self.kp, &self.SV[0, 0], self.m, self.d, &self.sq[0], x, xsq, out)

    cdef void _drop_slot(self, Py_ssize_t i) noexcept nogil:
        """Delete support vector i once the subclass has moved its coefficients: its class
        count, its id, and the last vector moving into slot i (and in the cache)."""
        cdef Py_ssize_t last = self.m - 1
        if self.lab[i] > 0:
            self.n_pos -= 1
        else:
            self.n_neg -= 1
        _kc_remove_slot(&self.cache, &self.SV[0, 0], &self.sq[0], &self.lab[0], &self.ids[0],
                        &self.id_slot[0] if self.n_ids > 0 else NULL, self.n_ids, self.d, i,
                        last, self.sp)
        self.m = last
        self.removed += 1
