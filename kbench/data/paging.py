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
import os
import weakref
from typing import Any

import numpy as np

from kbench.core.arrays import is_sparse

#: The read-only file maps the data cache made (weakly held: a map lives as long as the
#: arrays over it).
_MAPS: weakref.WeakSet[mmap.mmap] = weakref.WeakSet()
#: The file behind each map, kept open while the map lives: rows scattered over a large
#: map are read from it (:func:`read_rows`) rather than through the map.
_FILES: weakref.WeakKeyDictionary[mmap.mmap, Any] = weakref.WeakKeyDictionary()
_PAGE = mmap.PAGESIZE
#: Also given back: this much before the rows. A page fault maps the cached pages of the
#: aligned block around it ("fault-around", 64 kB by default), which reaches back into rows
#: released with the chunk before; without the margin they would stay mapped, a few pages
#: per chunk.
_MARGIN = 1 << 20


def register_map(buffer: mmap.mmap, file: Any = None) -> None:
    """Declare ``buffer`` a read-only map of a file, whose pages may be given back;
    ``file``, open for reading, is the file it maps from offset 0."""
    _MAPS.add(buffer)
    if file is not None:
        _FILES[buffer] = file
        weakref.finalize(buffer, file.close)  # closed with the map


def read_rows(a: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
    """``a[rows]`` read from the file behind ``a``'s map (``os.preadv``, a row at a time),
    or None when ``a`` is not a C-ordered array over a registered map with its file.

    A page fault maps the cached pages around it, a whole folio (up to megabytes of a file
    the kernel cached in large folios), so gathering scattered rows through the map made
    the resident set grow by up to a folio per row until the pages were given back (1 GB
    for 2 048 rows of an 8 GB file). A read copies the row alone, and maps nothing.
    """
    buffer = _map_of(a) if isinstance(a, np.ndarray) and a.ndim == 2 else None
    file = None if buffer is None else _FILES.get(buffer)
    if buffer is None or file is None or not a.flags.c_contiguous:
        return None
    origin = np.frombuffer(buffer, dtype=np.uint8).__array_interface__["data"][0]
    start = a.__array_interface__["data"][0] - origin
    out = np.empty((len(rows), *a.shape[1:]), dtype=a.dtype)
    if out.size == 0:
        return out
    size = a.strides[0]
    view = memoryview(out).cast("B")
    fd = file.fileno()
    for i, r in enumerate(rows.tolist()):
        if not 0 <= r < a.shape[0]:
            raise IndexError(f"index {r} is out of bounds for axis 0 with size {a.shape[0]}")
        if os.preadv(fd, [view[i * size : (i + 1) * size]], start + r * size) != size:
            raise OSError(f"{file.name}: short read at row {r} (the file was truncated)")
    return out


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
