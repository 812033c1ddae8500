"""Giving back the pages of a memory-mapped stream once a task has read them.

A stream served from the data cache is a read-only map of a file. Each page a task reads
stays in its resident set until the map is closed, so reading a whole 8 GB stream would
grow the task's resident memory to 8 GB, although none of it is the task's own. After each
chunk of examples the runner calls :func:`release_rows`, which tells the kernel
(``madvise(MADV_DONTNEED)``) that the chunk's pages are no longer needed: they leave the
task's resident set, stay in the page cache, and are read again from it if needed (a
second pass). Only maps registered by the cache (:func:`register_map`: read-only, backed
by a file) are released; for any other array the call does nothing, since dropping the
pages of anonymous or copy-on-write memory would lose its contents.
"""

from __future__ import annotations

import mmap
import weakref
from typing import Any

import numpy as np

from kbench.core.arrays import is_sparse

#: The read-only file maps the data cache made (weakly held: a map lives as long as the
#: arrays over it).
_MAPS: weakref.WeakSet[mmap.mmap] = weakref.WeakSet()
_PAGE = mmap.PAGESIZE
#: Also given back: this much before the rows. A page fault maps the cached pages of the
#: aligned block around it ("fault-around", 64 kB by default), which reaches back into rows
#: released with the chunk before; without the margin they would stay mapped, a few pages
#: per chunk.
_MARGIN = 1 << 20


def register_map(buffer: mmap.mmap) -> None:
    """Declare ``buffer`` a read-only map of a file, whose pages may be given back."""
    _MAPS.add(buffer)


def _map_of(a: np.ndarray) -> mmap.mmap | None:
    base: Any = a
    while isinstance(base, np.ndarray):
        base = base.base
    return base if isinstance(base, mmap.mmap) and base in _MAPS else None


def is_mapped(a: Any) -> bool:
    """Whether ``a`` is an array over a map the data cache registered."""
    return isinstance(a, np.ndarray) and _map_of(a) is not None


def _release(a: np.ndarray, start: int, stop: int) -> None:
    """Give back the pages holding ``a[start:stop]`` (rows of a C-ordered array)."""
    if stop <= start or not isinstance(a, np.ndarray):
        return
    buffer = _map_of(a)
    if buffer is None:
        return
    origin = np.frombuffer(buffer, dtype=np.uint8).__array_interface__["data"][0]
    first = a.__array_interface__["data"][0] + start * a.strides[0] - origin
    last = first + (stop - start) * a.strides[0]
    # Whole pages around the rows: a page shared with the next rows is read again from
    # the page cache when they are (the map is read-only: nothing is lost).
    lo = max(0, (first - _MARGIN) // _PAGE * _PAGE)
    hi = min(len(buffer), -(-last // _PAGE) * _PAGE)
    if hi > lo:
        buffer.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


def release_all(X: Any) -> None:
    """Give back every page of ``X`` (dense or CSR), where it is a map of the data cache."""
    if is_sparse(X):
        for part in (X.data, X.indices, X.indptr):
            _release(part, 0, len(part))
    elif isinstance(X, np.ndarray) and X.ndim >= 1:
        _release(X, 0, X.shape[0])


def release_rows(X: Any, start: int, stop: int, *labels: np.ndarray | None) -> None:
    """Give back the pages of rows ``start:stop`` of ``X`` (dense or CSR) and of each
    array in ``labels``, where they are maps of the data cache; otherwise do nothing."""
    if is_sparse(X):
        lo, hi = int(X.indptr[start]), int(X.indptr[stop])
        _release(X.data, lo, hi)
        _release(X.indices, lo, hi)
        _release(X.indptr, start, stop)
    elif X is not None and getattr(X, "ndim", 0) == 2:
        _release(X, start, stop)
    for y in labels:
        if y is not None:
            _release(y, start, stop)
