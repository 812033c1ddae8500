"""The kernel-row cache of ``_kernel_cache.pxd``, callable from Python.

The learners' compiled loops use the inline functions of the include directly; these
wrappers serve their Python paths (kernels without a compiled form), the Python class
``kbench.plugins.algorithms._kernel_cache.KernelCache`` that owns the arrays, and tests.
Every function takes the cache's four arrays: ``rows`` (n_slots × L float64), ``meta``
(4 × (n_slots + 1) int64: length, key, prv, nxt), ``key_slot`` (L int64) and
``counters`` (hits, partial hits, misses, kernel values computed).
"""
import numpy as np


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
             long long[::1] counters, int kind, double gamma, double scale, double offset,
             double degree, long long key, Py_ssize_t m, const double[:, ::1] SV,
             const double[::1] sq, double[::1] scratch):
    """k(SV[key], SV[j]) for j < m through the cache (compiled kernels); a view of the row."""
    cdef KCache c = _kc_view(rows, meta, key_slot, counters)
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
