"""Stream rows read from a mapped data set a chunk at a time, never all at once.

A seeded order (``order=shuffle``, a counting order, ``test_size``, ``n``) is a list of row
indices into the data set's arrays, and ``dense=true`` and ``scale=...`` change each row on
its own. For a data set served from the data cache (a read-only map of a file) and a stream
large enough for a copy to matter, the stream's features are a :class:`RowGather`: the
indices (mapped from the stream's order file in the cache, or the first ``n`` rows), the
map, and the row transform, applied when a slice of the stream is asked for (``X[a:b]``, as
the runner asks for each chunk). The stream then holds no copy of its rows, and every slice
is exactly the rows the eager stream gives, so outcomes and ``stream_id`` do not depend on it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.core.arrays import is_sparse
from kbench.data.paging import is_mapped, read_rows, release_all, release_rows

#: A stream whose features and labels would take more than this many bytes is read a chunk
#: at a time (a smaller one is gathered once, as plain arrays).
LAZY_BYTES = 256 * 2**20
#: Rows read at once when the whole stream is read (its id, its scale).
_CHUNK = 1 << 16
#: At most this many bytes of dense rows at once: a densified wide stream (``dense=true``
#: on 10^5 features: 800 kB a row) is read a few rows at a time.
CHUNK_BYTES = 64 * 2**20
#: Rows gathered between two releases of the map's pages: each row read maps its page
#: (and the kernel maps cached pages around it), so a task's resident memory is bounded by
#: this batch, not by how many rows it has read.
_BATCH = 2048
_INT32_MAX = np.iinfo(np.int32).max


class RowGather:
    """The rows ``rows`` of a read-only array or CSR matrix ``base``, in that order,
    densified (``dense``) and scaled (``(x − center) / width``) as the stream asks.

    ``rows`` is an array of row indices, or a ``range`` (the first rows, in file order).
    Supports what the runner needs of a stream's features: ``shape``, ``ndim``, ``sparse``,
    ``len`` and slicing with step 1, which returns the rows as a read-only C-ordered
    float64 array or a CSR matrix over read-only arrays (int32 indices while they fit), as
    the eager stream ``base[rows][a:b]`` (densified, scaled) would.
    """

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(
        self,
        base: Any,
        rows: np.ndarray | range,
        *,
        dense: bool = False,
        center: np.ndarray | None = None,
        width: np.ndarray | None = None,
    ) -> None:
        self.base = base
        if isinstance(rows, range) or is_mapped(rows):
            self.rows = rows  # a range, or the read-only map of the stream's order file
        else:
            # A copy, as int32 while the rows fit (4 bytes per example): ``rows`` is often
            # the first n of a permutation of every row, which a view would keep whole.
            small = base.shape[0] <= _INT32_MAX
            self.rows = np.array(rows, dtype=np.int32 if small else np.intp)
            self.rows.setflags(write=False)
        self.densify = bool(dense and is_sparse(base))
        self.center, self.width = center, width
        self.sparse = is_sparse(base) and not self.densify
        self.shape = (len(self.rows), base.shape[1])
        self._nnz: int | None = None

    def __len__(self) -> int:
        return self.shape[0]

    def scaled(self, center: np.ndarray, width: np.ndarray) -> RowGather:
        """The same rows, scaled."""
        return RowGather(self.base, self.rows, dense=self.densify, center=center, width=width)

    def window(self, start: int, stop: int) -> RowGather:
        """Rows ``start:stop`` as a gather of their own (nothing is read)."""
        return RowGather(
            self.base,
            self.rows[start:stop],
            dense=self.densify,
            center=self.center,
            width=self.width,
        )

    @property
    def nnz(self) -> int:
        """Stored values of the gathered CSR rows (sparse only)."""
        if self._nnz is None:
            p = self.base.indptr
            if isinstance(self.rows, range):
                self._nnz = int(p[self.rows.stop]) - int(p[self.rows.start])
            else:
                self._nnz = sum(
                    int((p[r + 1] - p[r]).sum(dtype=np.int64))
                    for r in self._row_chunks(0, len(self))
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
        stop = max(start, stop)
        out = self._rows(self.rows[start:stop])
        if not isinstance(self.rows, range):
            release_rows(None, start, stop, self.rows)  # the order file's pages just read
        return _frozen(out, self.sparse)

    def _rows(self, rows: np.ndarray | range) -> Any:
        """The stream's rows ``rows`` of ``base``: gathered, densified, scaled."""
        part = self._gather(rows)
        if self.densify:
            part = part.toarray()
        if self.center is not None:
            part = (part - self.center) / self.width
        return part

    def _gather(self, rows: np.ndarray | range) -> Any:
        """``base[rows]``, in batches, giving the map's pages back after each."""
        if isinstance(rows, range):
            lo, hi = rows.start, rows.stop
            part = self.base[lo:hi]  # a dense slice is a view: copied below, pages released
            part = part.copy() if isinstance(part, np.ndarray) else part
            release_rows(self.base, lo, hi)
            return part
        read = None if is_sparse(self.base) else read_rows(self.base, np.asarray(rows))
        if read is not None:
            return read  # read from the file: nothing mapped, nothing to give back
        parts = []
        for lo in range(0, max(1, len(rows)), _BATCH):
            parts.append(self.base[rows[lo : lo + _BATCH]])
            release_all(self.base)
        if len(parts) == 1:
            return parts[0]
        if not is_sparse(self.base):
            return np.concatenate(parts)
        import scipy.sparse as sp

        return sp.vstack(parts, format="csr")

    def chunks(self) -> Any:
        """The stream's rows, a chunk at a time (as slices give them)."""
        step = chunk_rows(_CHUNK, self.shape[1], self.sparse)
        for lo in range(0, len(self), step):
            yield self[lo : lo + step]

    def hash_into(self, h: Any) -> None:
        """Feed ``h`` the bytes the eager gather's stream id hashes, a chunk at a time."""
        if not self.sparse:
            for chunk in self.chunks():
                h.update(chunk)
            return
        h.update(f"csr{self.shape}{self.index_dtype}".encode())
        p = self.base.indptr
        h.update(np.zeros(1, dtype=np.int64))
        offset = 0
        for r in self._row_chunks(0, len(self)):
            r = np.arange(r.start, r.stop) if isinstance(r, range) else r
            ends = offset + np.cumsum(p[r + 1] - p[r], dtype=np.int64)
            h.update(ends)
            offset = int(ends[-1]) if len(ends) else offset
        release_all(self.base)
        for part in ("indices", "data"):
            for chunk in self.chunks():
                values = getattr(chunk, part)
                h.update(
                    np.ascontiguousarray(values, dtype=self.index_dtype)
                    if part == "indices"
                    else np.ascontiguousarray(values)
                )


def chunk_rows(rows: int, d: int, sparse: bool) -> int:
    """``rows``, or fewer dense rows of ``d`` values: at most :data:`CHUNK_BYTES` at once."""
    return rows if sparse else max(1, min(rows, CHUNK_BYTES // (8 * max(1, d))))


def rows_between(X: Any, start: int, stop: int) -> Any:
    """Rows ``start:stop`` of a stream's features without reading them: a gathered
    stream's window, a gather of the rows of a CSR map of the cache (scipy's slice would
    copy them), or the slice of anything else (of a dense map, a view)."""
    if isinstance(X, RowGather):
        return X.window(start, stop)
    if is_sparse(X) and is_mapped(X.data):
        return RowGather(X, range(start, stop))
    return X[start:stop]


def column_scale(X: RowGather, scale: str) -> tuple[np.ndarray, np.ndarray]:
    """The centre and half-width (or standard deviation) of each column of ``X``, read a
    chunk at a time, bit for bit as NumPy computes them on the whole array.

    NumPy sums the rows of a C-ordered array of two or more columns one after another, as
    done here; a single column it sums pairwise, so that one is read whole.
    """
    if X.shape[1] == 1:
        whole = np.concatenate([np.asarray(c) for c in X.chunks()]) if len(X) else X[0:0]
        if scale == "standard":
            return whole.mean(axis=0), whole.std(axis=0)
        lo, hi = whole.min(axis=0), whole.max(axis=0)
        return (hi + lo) / 2.0, (hi - lo) / 2.0
    if scale != "standard":
        lo = hi = None
        for c in X.chunks():
            lo = c.min(axis=0) if lo is None else np.minimum(lo, c.min(axis=0))
            hi = c.max(axis=0) if hi is None else np.maximum(hi, c.max(axis=0))
        return (hi + lo) / 2.0, (hi - lo) / 2.0
    n = len(X)
    mean = _row_sum(X.chunks()) / n
    # as numpy.std: the squared deviations from the mean, summed, over n
    squares = _row_sum(np.multiply(d, d, out=d) for d in (c - mean for c in X.chunks()))
    return mean, np.sqrt(squares / n)


def _row_sum(chunks: Any) -> np.ndarray:
    """The sum of the rows of the chunks, in order, as ``np.add.reduce`` of their stack."""
    total: Any = None
    for c in chunks:
        total = c.sum(axis=0) if total is None else np.concatenate([total[None], c]).sum(axis=0)
    return total


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
