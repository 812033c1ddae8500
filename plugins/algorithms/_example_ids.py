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

The module name starts with an underscore, so the registry does not load it as a plugin.
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
