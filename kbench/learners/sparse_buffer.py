"""Sparse support vectors: a CSR store whose kernel rows cost O(nnz) per stored row.

The sparse counterpart of :class:`kbench.learners.support_buffer.SupportBuffer`. ``f(x) = Σ_i alpha[i] ·
k(S_i, x)`` with the rows S_i kept as sparse rows (int32 indices, strictly increasing;
float64 values) in one pool that grows, and their squared norms cached; a kernel row
against a sparse example is one compiled call (:mod:`kbench.cython_core._sparse`).

A sparse row is given as a pair ``(indices, data)`` of NumPy arrays (int32 and float64,
same length, indices strictly increasing and below the dimension) or as a one-row
``scipy.sparse`` matrix or array, which is converted.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from kbench.core.arrays import grown
from kbench.core.components import Kernel
from kbench.cython_core import _kernels, _sparse
from kbench.learners.support_buffer import RowStore

STRATEGIES = {
    "auto": _sparse.STRATEGY_AUTO,
    "merge": _sparse.STRATEGY_MERGE,
    "scatter": _sparse.STRATEGY_SCATTER,
}

# The largest dimension whose scatter work vector (8 bytes a value) the store allocates by
# itself: 128 MB. url (3.2 M features) takes 26 MB.
SCATTER_MAX_D = 1 << 24

SparseRow = tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]


def as_sparse_row(x: Any, d: int | None = None) -> SparseRow:
    """Return x as ``(indices, data)``, checked: int32 indices, strictly increasing, ≥ 0
    and below d (when given), float64 data of the same length.

    A pair must already have those dtypes (a wrong dtype is an error, not a silent copy);
    a one-row ``scipy.sparse`` matrix is converted.

    Raises
    ------
    ValueError
        With a one-line message saying what is wrong.
    """
    if hasattr(x, "tocsr") and hasattr(x, "shape"):
        if len(x.shape) != 2 or x.shape[0] != 1:
            raise ValueError(f"a sparse row must have one row, got shape {x.shape}")
        if d is not None and x.shape[1] != d:
            raise ValueError(f"a sparse row of dimension {x.shape[1]} where {d} is expected")
        csr = x.tocsr()
        if not csr.has_canonical_format:
            csr = csr.copy()
            csr.sum_duplicates()  # also sorts the indices
        if csr.indices.size and int(csr.indices[-1]) > np.iinfo(np.int32).max:
            raise ValueError("a sparse row's indices must fit in int32")
        x = (
            np.ascontiguousarray(csr.indices, dtype=np.int32),
            np.ascontiguousarray(csr.data, dtype=np.float64),
        )
    if not isinstance(x, tuple) or len(x) != 2:
        raise ValueError("a sparse row is a pair (indices, data) or a one-row scipy.sparse matrix")
    indices, data = x
    if not isinstance(indices, np.ndarray) or indices.dtype != np.int32 or indices.ndim != 1:
        raise ValueError(
            f"a sparse row's indices must be a 1-D int32 array, got "
            f"{getattr(indices, 'dtype', type(indices).__name__)}"
        )
    if not isinstance(data, np.ndarray) or data.dtype != np.float64 or data.ndim != 1:
        raise ValueError(
            f"a sparse row's data must be a 1-D float64 array, got "
            f"{getattr(data, 'dtype', type(data).__name__)}"
        )
    if len(indices) != len(data):
        raise ValueError(f"a sparse row has {len(indices)} indices but {len(data)} values")
    indices = np.ascontiguousarray(indices)
    data = np.ascontiguousarray(data)
    _sparse.check_indices(indices, -1 if d is None else d)
    return indices, data


def _csr_parts(S: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """starts, ends (int64), indices (int32), data (float64) of a scipy CSR matrix, checked."""
    if not hasattr(S, "tocsr"):
        raise ValueError(f"expected a scipy.sparse matrix, got {type(S).__name__}")
    S = S.tocsr()
    if S.indices.size and int(S.indices.max()) > np.iinfo(np.int32).max:
        raise ValueError("a sparse matrix's indices must fit in int32")
    indptr = S.indptr.astype(np.int64)
    starts, ends = indptr[:-1], indptr[1:]
    indices = np.ascontiguousarray(S.indices, dtype=np.int32)
    data = np.ascontiguousarray(S.data, dtype=np.float64)
    # Duplicate or unsorted indices are an error, as in a sparse row (no silent summing).
    _sparse.check_rows(starts, ends, indices, S.shape[1])
    return starts, ends, indices, data


def sparse_kernel_row(
    kernel: Kernel,
    S: Any,
    x: Any,
    *,
    out: np.ndarray | None = None,
    sq: np.ndarray | None = None,
    xsq: float | None = None,
    strategy: str = "auto",
) -> np.ndarray:
    """Kernel values between the rows of the CSR matrix S and the sparse row x.

    The sparse counterpart of :func:`kbench.core.kernel_rows.kernel_row` for compiled kernels
    (linear, poly, rbf, laplacian): each value costs O(nnz). ``strategy`` is ``"merge"``,
    ``"scatter"`` (through a dense work vector of S's dimension, allocated here) or
    ``"auto"`` (the scatter up to ``SCATTER_MAX_D`` features). Every input is checked;
    for one row per example against a store that changes, use
    :class:`SparseSupportBuffer`, which checks each stored row once.
    """
    if strategy not in STRATEGIES:
        raise ValueError(
            f"unknown sparse strategy {strategy!r}: use one of {', '.join(STRATEGIES)}"
        )
    compiled = kernel.compiled()
    if compiled is None:
        raise ValueError(f"sparse kernel rows need a built-in kernel, not {type(kernel).__name__}")
    starts, ends, indices, data = _csr_parts(S)
    d = S.shape[1]
    xi, xd = as_sparse_row(x, d)
    m = len(starts)
    if sq is None:
        sq = np.empty(m)
        _sparse.row_sq_norms(starts, ends, data, sq)
    if xsq is None:
        xsq = float(xd @ xd)
    if out is None:
        out = np.empty(m)
    if strategy == "auto":
        strategy = "scatter" if d <= SCATTER_MAX_D else "merge"
    work = np.zeros(d) if strategy == "scatter" else None
    _sparse.kernel_row(
        compiled,
        xi,
        xd,
        xsq,
        starts,
        ends,
        indices,
        data,
        np.ascontiguousarray(sq, dtype=np.float64),
        out,
        m,
        STRATEGIES[strategy],
        work,
    )
    return out[:m]


class GrowableArray:
    """A 1-D array whose capacity doubles when more is reserved than it holds.

    Parameters
    ----------
    dtype
        Element type.
    capacity
        Entries allocated at first.
    """

    def __init__(self, dtype: npt.DTypeLike, capacity: int = 64) -> None:
        self.array = np.zeros(max(1, capacity), dtype=dtype)

    def reserve(self, n: int) -> np.ndarray:
        """Make room for at least n entries (keeping the contents); return the array."""
        if n > len(self.array):
            self.array = grown(self.array, max(n, 2 * len(self.array)))
        return self.array


class SparseSupportBuffer(RowStore):
    """Sparse support vectors, their squared norms and coefficients.

    Rows live in a pool of indices and values that grows (doubling) as needed; the
    number of rows is fixed (``capacity``, the budget) unless ``growable``. Like
    :class:`kbench.learners.support_buffer.SupportBuffer`, a full fixed-capacity buffer overwrites its
    oldest row on :meth:`add`; :meth:`replace` overwrites a chosen slot and
    :meth:`remove` deletes one (the last row takes its place). A row that shrinks or is
    replaced by one no longer than it keeps its pool region; freed regions are reclaimed
    by compacting the pool when it would otherwise have to grow and at least half of it
    is free, so the pool stays within twice the stored non-zeros (amortised O(nnz)).

    Parameters
    ----------
    d
        Dimension of the examples.
    capacity
        Number of rows (the budget when ``growable`` is False).
    n_outputs
        Columns of ``alpha``: 1 for scalar scores, C for multiclass.
    growable
        Double the rows when full instead of overwriting the oldest row.
    nnz_capacity
        Pool entries allocated at first (default 16 per row).
    strategy
        Sparse inner product: ``"merge"``, ``"scatter"`` (through a dense work vector of
        d values) or ``"auto"``: the scatter, measured faster at every shape tried
        (``scripts/bench_sparse.py``), unless its work vector would exceed
        ``SCATTER_MAX_D`` values, then the merge.
    """

    _ROW_ARRAYS = ("starts", "ends", "room", "sq", "alpha", "krow")

    def __init__(
        self,
        d: int,
        capacity: int,
        *,
        n_outputs: int = 1,
        growable: bool = False,
        nnz_capacity: int | None = None,
        strategy: str = "auto",
    ) -> None:
        if capacity < 1:
            raise ValueError(f"buffer capacity must be at least 1, got {capacity}")
        if d < 0 or d > np.iinfo(np.int32).max:
            raise ValueError(f"a sparse buffer's dimension must be in [0, 2^31), got {d}")
        if strategy not in STRATEGIES:
            raise ValueError(
                f"unknown sparse strategy {strategy!r}: use one of {', '.join(STRATEGIES)}"
            )
        self.d = d
        self.growable = growable
        if strategy == "auto":
            strategy = "scatter" if d <= SCATTER_MAX_D else "merge"
        self.strategy = strategy
        self._strategy = STRATEGIES[strategy]
        self.starts = np.zeros(capacity, dtype=np.int64)
        self.ends = np.zeros(capacity, dtype=np.int64)
        self.room = np.zeros(capacity, dtype=np.int64)  # pool entries owned by each row
        self.sq = np.zeros(capacity)
        self.alpha = np.zeros((capacity, n_outputs))
        self.krow = np.zeros(capacity)
        pool = 16 * capacity if nnz_capacity is None else nnz_capacity
        self._indices = GrowableArray(np.int32, pool)
        self._data = GrowableArray(np.float64, pool)
        self.pool_end = 0  # pool entries in use, live or freed
        self._owned = 0  # pool entries owned by live rows
        # Pool entries block() reserves beyond its examples' non-zeros: room for rows a
        # compiled loop writes that are no examples (BSGD's merged points).
        self.spare = 0
        # The scatter's dense work vector: all zeros between calls (the compiled row
        # clears what it wrote).
        self.work = np.zeros(d) if strategy == "scatter" else None
        self.size = 0
        self.head = 0  # oldest row once a fixed-capacity buffer is full
        self.kernel_evals = 0
        self._last_x: Any = None
        self._version = 0
        self._last_version = -1

    # -- sizes ------------------------------------------------------------------------------

    @property
    def capacity(self) -> int:
        """Number of allocated rows."""
        return len(self.starts)

    @property
    def nnz(self) -> int:
        """Non-zeros of the stored rows."""
        m = self.size
        return int((self.ends[:m] - self.starts[:m]).sum())

    @property
    def indices(self) -> np.ndarray:
        """The pool's indices (row i is ``indices[starts[i]:ends[i]]``)."""
        return self._indices.array

    @property
    def data(self) -> np.ndarray:
        """The pool's values."""
        return self._data.array

    # -- the pool ---------------------------------------------------------------------------

    def _compact(self) -> None:
        """Move the live rows to the front of the pool, in slot order (one vectorised copy)."""
        m = self.size
        lengths = self.ends[:m] - self.starts[:m]
        new_starts = np.zeros(m, dtype=np.int64)
        np.cumsum(lengths[:-1], out=new_starts[1:])
        total = int(lengths.sum())
        source = np.repeat(self.starts[:m] - new_starts, lengths) + np.arange(total)
        self.indices[:total] = self.indices[source]
        self.data[:total] = self.data[source]
        self.starts[:m] = new_starts
        self.ends[:m] = new_starts + lengths
        self.room[:m] = lengths
        self.pool_end = self._owned = total

    def _reserve(self, n: int) -> None:
        """Make room for n more entries at the pool's end, compacting it first when it would
        otherwise grow and at least half of it is free."""
        if (
            self.pool_end + n > len(self.indices)
            and 2 * (self.pool_end - self._owned) >= self.pool_end > 0
        ):
            self._compact()
        self._indices.reserve(self.pool_end + n)
        self._data.reserve(self.pool_end + n)

    def block(
        self,
        compiled: _kernels.KernelSpec | tuple[int, float, float, float, float],
        xp: np.ndarray,
        indices: np.ndarray,
        data: np.ndarray,
    ) -> _sparse.SparseBlock:
        """CSR examples for one call of a compiled learner's loop against this store.

        Example i is ``indices[xp[i]:xp[i + 1]]``, ``data[...]`` (xp int64; the rows are
        checked). The pool is compacted if need be and reserved for every non-zero of the
        examples (and ``spare`` entries more), so that the loop, which writes the rows it
        stores in place (:class:`kbench.cython_core._sparse.SparseBlock`), never has to grow
        it. Call :meth:`absorb` after the loop, and make a new block after the store grows.
        """
        self._reserve(int(xp[-1] - xp[0]) + self.spare)
        return _sparse.SparseBlock(
            compiled,
            self._strategy,
            self.work,
            self.starts,
            self.ends,
            self.room,
            self.indices,
            self.data,
            self.sq,
            self.pool_end,
            self._owned,
            xp,
            indices,
            data,
        )

    def absorb(self, block: _sparse.SparseBlock, size: int) -> None:
        """Take in what a compiled loop did through ``block``: the pool's use and the
        number of rows, ``size`` (the rows themselves were written in place)."""
        block.check()
        self.pool_end, self._owned = block.pool_end, block.owned
        self.size = size
        self._version += 1

    def _place(self, slot: int, indices: np.ndarray, data: np.ndarray, fresh: bool) -> None:
        """Write a row into slot: in its own region when it fits, else at the pool's end."""
        n = len(indices)
        if not fresh and n <= self.room[slot]:
            start = int(self.starts[slot])
        else:
            if not fresh:
                self._owned -= int(self.room[slot])
                self.room[slot] = 0
                self.starts[slot] = self.ends[slot] = 0
            self._reserve(n)
            start = self.pool_end
            self.pool_end += n
            self.room[slot] = n
            self._owned += n
        self.indices[start : start + n] = indices
        self.data[start : start + n] = data
        self.starts[slot] = start
        self.ends[slot] = start + n

    # -- rows -------------------------------------------------------------------------------

    def add(self, x: Any, coef: float | np.ndarray, xsq: float | None = None) -> int:
        """Store x with coefficient(s) coef; return its slot (evicting the oldest when full)."""
        indices, data = as_sparse_row(x, self.d)
        fresh = True
        if self.size < self.capacity:
            slot = self.size
        elif self.growable:
            self.grow()
            slot = self.size
        else:
            slot = self.head
            self.head = (self.head + 1) % self.capacity
            fresh = False
        self._place(slot, indices, data, fresh)
        if fresh:
            self.size += 1
        self.sq[slot] = float(data @ data) if xsq is None else xsq
        self.alpha[slot] = coef
        self._version += 1
        return slot

    def replace(
        self, slot: int, x: Any, coef: float | np.ndarray, xsq: float | None = None
    ) -> None:
        """Overwrite the row in slot (< size) with x and coefficient(s) coef."""
        if not 0 <= slot < self.size:
            raise ValueError(f"slot {slot} is not a stored row (size {self.size})")
        indices, data = as_sparse_row(x, self.d)
        self._place(slot, indices, data, False)
        self.sq[slot] = float(data @ data) if xsq is None else xsq
        self.alpha[slot] = coef
        self._version += 1

    def remove(self, slot: int) -> int:
        """Delete the row in slot; the last row takes its place. Return the slot the moved
        row came from, or −1 when slot was the last row."""
        if not 0 <= slot < self.size:
            raise ValueError(f"slot {slot} is not a stored row (size {self.size})")
        last = self.size - 1
        self._owned -= int(self.room[slot])
        moved = -1
        if slot != last:
            for arr in (self.starts, self.ends, self.room, self.sq, self.alpha):
                arr[slot] = arr[last]
            moved = last
        self.starts[last] = self.ends[last] = self.room[last] = 0
        self.sq[last] = 0.0
        self.alpha[last] = 0.0
        self.size -= 1
        if self.head >= max(self.size, 1):
            self.head = 0
        self._version += 1
        return moved

    def get(self, slot: int) -> SparseRow:
        """The stored row in slot, as copies of its indices and values."""
        if not 0 <= slot < self.size:
            raise ValueError(f"slot {slot} is not a stored row (size {self.size})")
        a, b = int(self.starts[slot]), int(self.ends[slot])
        return self.indices[a:b].copy(), self.data[a:b].copy()

    def packed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The stored rows, in slot order, as CSR arrays: row pointers (int64), indices
        (int32) and values, copied out of the pool (whose spans may have holes)."""
        m = self.size
        lengths = self.ends[:m] - self.starts[:m]
        indptr = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        pos = np.repeat(self.starts[:m] - indptr[:-1], lengths) + np.arange(int(indptr[-1]))
        return indptr, self.indices[pos], self.data[pos]

    def to_csr(self) -> Any:
        """The stored rows as a ``size × d`` CSR matrix (a copy)."""
        import scipy.sparse as sp  # only here: dense streams never import scipy.sparse

        indptr, indices, data = self.packed()
        return sp.csr_matrix((data, indices, indptr), shape=(self.size, self.d))

    def to_dense(self) -> np.ndarray:
        """The stored rows as a dense ``size × d`` array (for checks and small stores)."""
        indptr, indices, data = self.packed()
        out = np.zeros((self.size, self.d))
        out[np.repeat(np.arange(self.size), np.diff(indptr)), indices] = data
        return out

    def row(self, kernel: Kernel, x: Any, xsq: float | None = None) -> np.ndarray:
        """Kernel values between the stored rows and the sparse row x (a view of length
        ``size``), O(nnz) per stored row.

        x is a pair (int32 indices, float64 data) or a one-row scipy.sparse matrix; the
        compiled call checks a pair's indices in O(nnz(x)). Asking again for the same
        object with the buffer unchanged returns the cached row without recomputing it.
        """
        m = self.size
        if x is self._last_x and self._version == self._last_version:
            return self.krow[:m]
        key = x
        if not isinstance(x, tuple):
            x = as_sparse_row(x, self.d)
        compiled = kernel.compiled()
        if compiled is None:
            raise ValueError(
                f"sparse kernel rows need a built-in kernel, not {type(kernel).__name__}"
            )
        indices, data = x
        if xsq is None:
            xsq = -1.0  # the compiled row computes ‖x‖² itself (RBF only), in O(nnz)
        # Called with an empty store too, so that a bad x is refused from the first example.
        _sparse.kernel_row(
            compiled,
            indices,
            data,
            xsq,
            self.starts,
            self.ends,
            self.indices,
            self.data,
            self.sq,
            self.krow,
            m,
            self._strategy,
            self.work,
        )
        self.kernel_evals += m
        self._last_x, self._last_version = key, self._version
        return self.krow[:m]

    def decision_many(
        self,
        kernel: Kernel,
        X: Any,
        *,
        scale: float = 1.0,
        block: int = 2048,
        coef: np.ndarray | None = None,
    ) -> np.ndarray:
        """Outputs for every row of the CSR matrix X (shape ``n × n_outputs``), in blocks of
        Gram rows; ``coef``: coefficients (``size`` × outputs) in place of the store's."""
        rows = self._rows_of(kernel, X)
        n, m = X.shape[0], self.size
        alpha = self.alpha if coef is None else coef
        out = np.zeros((n, alpha.shape[1]))
        if m == 0 or n == 0:
            return out
        block = max(1, min(block, 4_000_000 // m))  # keep the Gram scratch block under 32 MB
        K = np.empty((min(block, n), m))
        for a in range(0, n, block):
            b = min(a + block, n)
            self._kernel_block(rows, a, b, K)
            out[a:b] = K[: b - a] @ alpha[:m]
        return out * scale if scale != 1.0 else out

    def gram(self, kernel: Kernel, X: Any) -> np.ndarray:
        """Kernel values between every row of the CSR matrix X and the stored rows
        (shape ``n × size``)."""
        rows = self._rows_of(kernel, X)
        K = np.empty((X.shape[0], self.size))
        if K.size:
            self._kernel_block(rows, 0, X.shape[0], K)
        return K

    def _rows_of(self, kernel: Kernel, X: Any) -> tuple[Any, ...]:
        """The compiled kernel, X's checked CSR arrays and its rows' squared norms."""
        if X.shape[1] != self.d:
            raise ValueError(f"X has {X.shape[1]} columns but the buffer holds {self.d}")
        compiled = kernel.compiled()
        if compiled is None:
            raise ValueError(
                f"sparse kernel rows need a built-in kernel, not {type(kernel).__name__}"
            )
        xs, xe, xi, xd = _csr_parts(X)
        xsq = np.empty(len(xs))
        _sparse.row_sq_norms(xs, xe, xd, xsq)
        return compiled, xs, xe, xi, xd, xsq

    def _kernel_block(self, rows: tuple[Any, ...], a: int, b: int, K: np.ndarray) -> None:
        """Rows a:b of X against the stored rows, into ``K[: b - a]``."""
        compiled, xs, xe, xi, xd, xsq = rows
        _sparse.kernel_block(
            compiled,
            xs[a:b],
            xe[a:b],
            xi,
            xd,
            xsq[a:b],
            self.starts,
            self.ends,
            self.indices,
            self.data,
            self.sq,
            K,
            self.size,
            self._strategy,
            self.work,
        )

    def nbytes(self) -> int:
        """Memory held by the buffer's arrays."""
        arrays = (
            self.starts,
            self.ends,
            self.room,
            self.sq,
            self.alpha,
            self.krow,
            self.indices,
            self.data,
        )
        return sum(a.nbytes for a in arrays) + (self.work.nbytes if self.work is not None else 0)
