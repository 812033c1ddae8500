"""Argument checks of kbench's sparse kernel rows (``_sparse``): dtypes, lengths, index
lists and pool spans, each a one-line ValueError naming the argument.

``check_indices`` and ``check_rows`` are public (``_sparse`` re-exports them); the rest are
the C-level checks of ``_sparse``'s entry points and of its blocks of CSR rows.
"""
cimport numpy as cnp

import numpy as np

cnp.import_array()

from libc.stdint cimport int32_t, int64_t

from kbench.cython_core._kernels cimport K_LAPLACIAN, K_LINEAR


cdef str _dtype_name(object a):
    return str(a.dtype) if isinstance(a, np.ndarray) else type(a).__name__


cdef int _need(object a, int typenum, bint write, str name, str what) except -1:
    if not _is(a, typenum, write):
        raise ValueError(f"kbench: sparse kernel row needs {name} as a C-contiguous 1-D "
                         f"{what}{' (writeable)' if write else ''} array, got {_dtype_name(a)}")
    return 0


cdef int _need_n(object a, int typenum, bint write, str name, str what, Py_ssize_t n,
                 str call) except -1:
    """_need, and at least n entries (one per row of the call)."""
    _need(a, typenum, write, name, what)
    if _len(a) < n:
        raise ValueError(f"kbench: sparse {call} over {n} rows needs {name} of at least {n} "
                         f"entries (got {_len(a)})")
    return 0


cdef Py_ssize_t _bad_index(const int32_t* idx, Py_ssize_t n, Py_ssize_t d) noexcept nogil:
    """Position of the first index that is negative, ≥ d (when d ≥ 0) or not above the one
    before it; −1 when the list is strictly increasing within bounds."""
    cdef Py_ssize_t t
    for t in range(n):
        if idx[t] < 0 or (d >= 0 and idx[t] >= d) or (t > 0 and idx[t] <= idx[t - 1]):
            return t
    return -1


cdef str _index_reason(const int32_t* idx, Py_ssize_t t, Py_ssize_t d):
    if idx[t] < 0:
        return f"index {idx[t]} at position {t} is negative"
    if d >= 0 and idx[t] >= d:
        return f"index {idx[t]} at position {t} is not below the dimension {d}"
    if idx[t] == idx[t - 1]:
        return f"index {idx[t]} is repeated at position {t}"
    return f"indices are not sorted (index {idx[t]} at position {t} follows {idx[t - 1]})"


cdef int _check_index_list(object indices, Py_ssize_t d) except -1:
    """Raise ValueError unless indices (an int32 array, checked by the caller) are strictly
    increasing, ≥ 0 and < d (d ≥ 0)."""
    cdef const int32_t* p = <const int32_t*>_data(indices)
    cdef Py_ssize_t n = _len(indices), bad
    with nogil:
        bad = _bad_index(p, n, d)
    if bad >= 0:
        raise ValueError(f"kbench: sparse row: {_index_reason(p, bad, d)}")
    return 0


cdef int _span_error(Py_ssize_t row, const int64_t* ps, const int64_t* pe,
                     Py_ssize_t pool) except -1:
    raise ValueError(f"kbench: sparse row {row} spans [{ps[row]}, {pe[row]}), outside the "
                     f"pool of {pool} entries")


def check_indices(indices, Py_ssize_t d=-1):
    """Raise ValueError unless indices (int32) are strictly increasing, ≥ 0 and < d (d ≥ 0)."""
    _need(indices, cnp.NPY_INT32, False, "indices", "int32")
    _check_index_list(indices, d)


def check_rows(starts, ends, indices, Py_ssize_t d=-1):
    """Raise ValueError unless every row of the pool is a valid sparse row.

    Row i is ``indices[starts[i]:ends[i]]``: it must lie within the pool and hold strictly
    increasing indices in ``[0, d)`` (any non-negative index when d < 0).
    """
    _need(starts, cnp.NPY_INT64, False, "starts", "int64")
    _need(ends, cnp.NPY_INT64, False, "ends", "int64")
    _need(indices, cnp.NPY_INT32, False, "indices", "int32")
    cdef Py_ssize_t m = _len(starts), pool = _len(indices), i, bad = -1, row = -1
    if _len(ends) != m:
        raise ValueError(f"kbench: sparse rows: {m} starts but {_len(ends)} ends")
    cdef const int64_t* ps = <const int64_t*>_data(starts)
    cdef const int64_t* pe = <const int64_t*>_data(ends)
    cdef const int32_t* pi = <const int32_t*>_data(indices)
    with nogil:
        for i in range(m):
            if not (0 <= ps[i] <= pe[i] <= pool):
                row = i
                break
            bad = _bad_index(pi + ps[i], pe[i] - ps[i], d)
            if bad >= 0:
                row = i
                break
    if row >= 0 and bad < 0:
        _span_error(row, ps, pe, pool)
    if row >= 0:
        raise ValueError(f"kbench: sparse row {row}: {_index_reason(pi + ps[row], bad, d)}")


cdef int _choose(int kind, int strategy, object work, str what, Py_ssize_t* d) except -1:
    """Check the kernel kind and the strategy; the strategy to use, with d the length of the
    work vector when it scatters (its indices' bound), else -1."""
    if kind < K_LINEAR or kind > K_LAPLACIAN:
        raise ValueError(f"kbench: sparse {what}: unknown kernel kind {kind}")
    if strategy == S_AUTO:
        # The scatter wins whenever it may be used (scripts/bench_sparse.py): its inner loop
        # is a branch-free gather, the merge's an unpredictable walk over two lists.
        strategy = S_SCATTER if work is not None else S_MERGE
    elif strategy != S_MERGE and strategy != S_SCATTER:
        raise ValueError(f"kbench: sparse kernel row: unknown strategy {strategy} "
                         f"(0 auto, 1 merge, 2 scatter)")
    d[0] = -1
    if strategy == S_SCATTER:
        if work is None:
            raise ValueError("kbench: the scatter strategy needs a work vector")
        _need(work, cnp.NPY_DOUBLE, True, "work", "float64")
        d[0] = _len(work)
    return strategy


cdef Py_ssize_t _check_store(object starts, object ends, object indices, object data,
                             object sq, Py_ssize_t m, bint need_sq, Store* st) except -2:
    """Check the store's arrays for m rows (all of them when m < 0) and point st at them;
    the number of rows."""
    _need(starts, cnp.NPY_INT64, False, "starts", "int64")
    _need(ends, cnp.NPY_INT64, False, "ends", "int64")
    _need(indices, cnp.NPY_INT32, False, "indices", "int32")
    _need(data, cnp.NPY_DOUBLE, False, "data", "float64")
    if _len(indices) != _len(data):
        raise ValueError(f"kbench: sparse kernel row: the pool has {_len(indices)} indices but "
                         f"{_len(data)} values")
    if m < 0:
        m = _len(starts)
    if _len(starts) < m or _len(ends) < m:
        raise ValueError(f"kbench: sparse kernel row over {m} rows needs at least {m} starts "
                         f"and ends (got {_len(starts)}, {_len(ends)})")
    if need_sq:
        _need_n(sq, cnp.NPY_DOUBLE, False, "sq", "float64", m, "kernel row")
    # O(m): every row lies within the pool (its indices were checked when it was stored).
    cdef const int64_t* ps = <const int64_t*>_data(starts)
    cdef const int64_t* pe = <const int64_t*>_data(ends)
    cdef Py_ssize_t pool = _len(indices), i, bad = -1
    with nogil:
        for i in range(m):
            if not (0 <= ps[i] <= pe[i] <= pool):
                bad = i
                break
    if bad >= 0:
        _span_error(bad, ps, pe, pool)
    st.starts, st.ends = ps, pe
    st.indices = <const int32_t*>_data(indices)
    st.data = <const double*>_data(data)
    st.sq = <const double*>_data(sq) if need_sq else NULL
    return m


cdef int _check_x(object xi, object xd, Py_ssize_t d) except -1:
    _need(xi, cnp.NPY_INT32, False, "x_indices", "int32")
    _need(xd, cnp.NPY_DOUBLE, False, "x_data", "float64")
    if _len(xi) != _len(xd):
        raise ValueError(f"kbench: sparse row has {_len(xi)} indices but {_len(xd)} values")
    return _check_index_list(xi, d)
