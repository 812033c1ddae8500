"""Stream rows gathered from a mapped data set a chunk at a time, never all at once.

A seeded order (``order=shuffle``, a counting order, ``test_size``, ``n``) is a list of row
indices into the data set's arrays. For a data set served from the data cache (a read-only
map of a file) and a stream large enough for a copy to matter, the stream's features are a
:class:`RowGather`: the indices and the map, gathered when a slice of the stream is asked
for (``X[a:b]``, as the runner asks for each chunk). The stream then holds 4 bytes per
example (its row indices, int32) instead of a copy of every row, and every slice is exactly the
rows the eager gather would give, so outcomes and ``stream_id`` do not depend on it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.core.arrays import is_sparse
from kbench.data.paging import release_all

#: A stream whose gathered features would take more than this many bytes is gathered a
#: chunk at a time (a smaller one is gathered once, as a plain array).
LAZY_BYTES = 256 * 2**20
#: Rows gathered at once when the whole stream is read (its id, a materialised slice).
_CHUNK = 1 << 16
#: Rows gathered between two releases of the map's pages: each row read maps its page
#: (and the kernel maps cached pages around it), so a task's resident memory is bounded by
#: this batch, not by how many rows it has read.
_BATCH = 2048
_INT32_MAX = np.iinfo(np.int32).max


class RowGather:
    """The rows ``rows`` of a read-only array or CSR matrix ``base``, in that order.

    Supports what the runner needs of a stream's features: ``shape``, ``ndim``,
    ``sparse``, ``len`` and slicing with step 1, which returns the rows as a read-only
    C-ordered float64 array or a CSR matrix over read-only arrays (int32 indices while they
    fit), as the eager gather ``base[rows][a:b]`` would.
    """

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, base: Any, rows: np.ndarray) -> None:
        self.base = base
        # A copy, as int32 while the rows fit (4 bytes per example): ``rows`` is often the
        # first n of a permutation of every row, which a view would keep whole.
        small = base.shape[0] <= _INT32_MAX
        self.rows = np.array(rows, dtype=np.int32 if small else np.intp)
        self.rows.setflags(write=False)
        self.sparse = is_sparse(base)
        self.shape = (len(self.rows), base.shape[1])
        self._nnz: int | None = None

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def nnz(self) -> int:
        """Stored values of the gathered CSR rows (sparse only)."""
        if self._nnz is None:
            p = self.base.indptr
            self._nnz = sum(
                int((p[r + 1] - p[r]).sum(dtype=np.int64)) for r in self._row_chunks(0, len(self))
            )
            release_all(self.base)
        return self._nnz

    @property
    def index_dtype(self) -> np.dtype:
        """The index type of the eager gather: int32 while the values and columns fit."""
        small = self.nnz < _INT32_MAX and self.shape[1] <= _INT32_MAX
        return np.dtype(np.int32 if small else np.int64)

    def _row_chunks(self, start: int, stop: int) -> Any:
        for lo in range(start, stop, _CHUNK):
            yield self.rows[lo : min(stop, lo + _CHUNK)]

    def __getitem__(self, key: Any) -> Any:
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("a gathered stream is sliced by contiguous ranges of rows only")
        start, stop, _ = key.indices(len(self))
        return _frozen(self._gather(self.rows[start : max(start, stop)]), self.sparse)

    def _gather(self, rows: np.ndarray) -> Any:
        """``base[rows]``, in batches, giving the map's pages back after each."""
        parts = []
        for lo in range(0, max(1, len(rows)), _BATCH):
            parts.append(self.base[rows[lo : lo + _BATCH]])
            release_all(self.base)
        if len(parts) == 1:
            return parts[0]
        if not self.sparse:
            return np.concatenate(parts)
        import scipy.sparse as sp

        return sp.vstack(parts, format="csr")

    def hash_into(self, h: Any) -> None:
        """Feed ``h`` the bytes the eager gather's stream id hashes, a chunk at a time."""
        if not self.sparse:
            for r in self._row_chunks(0, len(self)):
                h.update(np.ascontiguousarray(self._gather(r)))
            return
        h.update(f"csr{self.shape}{self.index_dtype}".encode())
        p = self.base.indptr
        h.update(np.zeros(1, dtype=np.int64))
        offset = 0
        for r in self._row_chunks(0, len(self)):
            ends = offset + np.cumsum(p[r + 1] - p[r], dtype=np.int64)
            h.update(ends)
            offset = int(ends[-1]) if len(ends) else offset
        release_all(self.base)
        for part in ("indices", "data"):
            for r in self._row_chunks(0, len(self)):
                chunk = self._gather(r)
                values = getattr(chunk, part)
                h.update(
                    np.ascontiguousarray(values, dtype=self.index_dtype)
                    if part == "indices"
                    else np.ascontiguousarray(values)
                )


def _frozen(a: Any, sparse: bool) -> Any:
    if not sparse:
        a = np.ascontiguousarray(a, dtype=np.float64)
        a.setflags(write=False)
        return a
    small = a.nnz < _INT32_MAX and a.shape[1] <= _INT32_MAX
    index = np.int32 if small else np.int64
    parts = [
        np.asarray(a.data, dtype=np.float64),
        np.asarray(a.indices, dtype=index),
        np.asarray(a.indptr, dtype=index),
    ]
    for part in parts:
        part.setflags(write=False)
    import scipy.sparse as sp

    return sp.csr_matrix(tuple(parts), shape=a.shape, copy=False)
