"""Which training example a row is, so that a learner run for several passes knows it again.

The runner's ``epochs`` option replays the same read-only stream arrays on every pass,
and the block fast path receives slices of them (views, not copies). A row's identity is
therefore its index in the stream's array: the offset of its data from the array's start.
:class:`ExampleIds` registers the first read-only 2-D float64 array whose rows it is
given and keeps a reference to it, so the memory cannot be reused by another array while
the ids are in use. A row that is not a row of that array (a copy, or rows of a writeable
array that could change under the learner) gets id -1: a new example, never matched.

Learners that revisit support vectors need this: the Huller's soft margin adds 1/C only
between an example and itself (δᵢⱼ on identities, not on equal feature vectors), and
LASVM's PROCESS skips an example already in its active set; treating the second pass's
copy as a new example would double it in the optimisation problem.
"""

from __future__ import annotations

import numpy as np


def _root(a: np.ndarray) -> np.ndarray:
    """The array that owns a view's memory (the last ndarray along ``.base``)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


class ExampleIds:
    """Ids of training examples: row indices in the stream's read-only array, else -1."""

    def __init__(self) -> None:
        self.base: np.ndarray | None = None
        self._addr = 0
        self._stride = 0
        self._end = 0

    @property
    def n(self) -> int:
        """Rows of the registered array (0 before one is registered)."""
        return 0 if self.base is None else len(self.base)

    def _register(self, root: np.ndarray, d: int) -> bool:
        if self.base is not None:
            return root is self.base
        if (
            root.ndim != 2
            or root.dtype != np.float64
            or root.flags.writeable
            or not root.flags.c_contiguous
            or root.shape[1] != d
            or len(root) == 0
        ):
            return False
        self.base = root
        self._addr = root.__array_interface__["data"][0]
        self._stride = root.strides[0]
        self._end = self._addr + self._stride * len(root)
        return True

    def _index(self, addr: int) -> int:
        off = addr - self._addr
        if self._stride == 0 or off < 0 or addr >= self._end or off % self._stride:
            return -1
        return off // self._stride

    def block(self, X: np.ndarray) -> np.ndarray:
        """Ids of the rows of a 2-D block (int64)."""
        n, d = X.shape
        if n == 0 or not self._register(_root(X), d) or X.strides[0] != self._stride:
            return np.full(n, -1, dtype=np.int64)
        start = self._index(X.__array_interface__["data"][0])
        if start < 0 or start + n > len(self.base):  # type: ignore[arg-type]
            return np.full(n, -1, dtype=np.int64)
        return np.arange(start, start + n, dtype=np.int64)

    def one(self, x: np.ndarray) -> int:
        """Id of one row (a 1-D view)."""
        if x.ndim != 1 or not self._register(_root(x), len(x)) or x.strides[0] != 8:
            return -1
        return self._index(x.__array_interface__["data"][0])


_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, elementwise on uint64 (wrapping)."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    out: np.ndarray = z ^ (z >> np.uint64(31))
    return out


def row_hashes(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each CSR row's content (its indices, the bits of its values and
    its length), vectorised: O(nnz)."""
    with np.errstate(over="ignore"):
        terms = _mix(data.view(np.uint64) ^ (indices.astype(np.uint64) * _GOLD))
        sums = np.concatenate([np.zeros(1, np.uint64), np.cumsum(terms, dtype=np.uint64)])
        lo, hi = indptr[:-1], indptr[1:]
        return _mix((sums[hi] - sums[lo]) ^ ((hi - lo).astype(np.uint64) * _MIX2))  # wraps mod 2^64


class PassIds:
    """Ids of CSR rows by their position in the pass, so that a runner's passes over a
    sparse stream know their rows again although each CSR block is a copy.

    The runner gives the rows of every pass in the same order and calls ``end_pass``
    after the last one: row k of a pass gets id k, kept only when its content hash is
    that of row k of the first pass (a caller that gives other rows gets id -1, a new
    example). Without ``end_pass`` the positions keep counting, so rows are never known
    again (as dense rows that are not views of the stream).
    """

    def __init__(self) -> None:
        self.hashes = np.zeros(0, dtype=np.uint64)
        self.n = 0  # ids assigned (rows of the longest pass so far)
        self.position = 0  # rows given in the current pass

    def block(self, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray) -> np.ndarray:
        """Ids of the rows of a CSR block (int64)."""
        h = row_hashes(indptr, indices, data)
        ids = self.position + np.arange(len(h), dtype=np.int64)
        self.position += len(h)
        known = ids < self.n
        ids[known] = np.where(self.hashes[ids[known]] == h[known], ids[known], -1)
        fresh = ~known
        if fresh.any():
            end = int(ids[fresh][-1]) + 1
            if end > len(self.hashes):
                grown = np.zeros(max(end, 2 * len(self.hashes)), dtype=np.uint64)
                grown[: self.n] = self.hashes[: self.n]
                self.hashes = grown
            self.hashes[ids[fresh]] = h[fresh]
            self.n = end
        return ids

    def end_pass(self) -> None:
        """The next row starts a pass."""
        self.position = 0
