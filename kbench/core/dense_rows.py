"""Learners that take only dense rows, on sparse streams: CSR rows densified a bounded
block at a time.

A learner declares ``sparse_input`` (a class attribute, or a property when it depends on
the learner's parameters) when its methods take CSR blocks as they are. Any other learner
runs on a sparse stream behind :class:`DenseRows`: each block it is handed is densified
at most :data:`BLOCK_BYTES` at a time, so the stream itself stays CSR (its memory is
O(nnz), not O(n·d)) and the learner sees exactly the dense rows of the same data, hence
makes exactly the predictions it makes on them. What the learner keeps (its support
vectors) is dense: d·8 bytes a row.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from kbench.core.arrays import is_sparse

#: The largest dense block (bytes) a densified learner is handed at once: 8 MB, i.e.
#: 8 192 rows of a9a (123 features), 22 of rcv1 (47 236), one of url (3.2 M).
BLOCK_BYTES = 8 << 20

#: The methods that take one row; the densified learner is handed it dense.
_ONE_ROW = frozenset({"predict_one", "decision_one", "learn_one", "wants_label"})


def takes_csr(learner: Any) -> bool:
    """Whether ``learner`` (an instance) takes CSR blocks as they are."""
    return bool(getattr(learner, "sparse_input", False))


def for_sparse_rows(learner: Any) -> Any:
    """``learner`` itself when it takes CSR rows, else the learner behind :class:`DenseRows`."""
    return learner if takes_csr(learner) else DenseRows(learner)


def dense_blocks(X: Any, max_bytes: int = BLOCK_BYTES) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(start, stop, rows)`` over the rows of X, each block densified (C-contiguous
    float64) and at most ``max_bytes`` large (at least one row)."""
    n, d = X.shape
    step = max(1, max_bytes // (8 * max(1, d)))
    for a in range(0, n, step):
        b = min(n, a + step)
        yield a, b, dense(X[a:b])


def dense(X: Any) -> np.ndarray:
    """X as a C-contiguous float64 array (a CSR block densified, a dense one as it is)."""
    if is_sparse(X):
        X = X.toarray()
    return np.ascontiguousarray(X, dtype=np.float64)


def row_blocks(learner: Any, X: Any) -> Iterator[tuple[int, int, Any, Any]]:
    """``(start, stop, rows, taker)`` blocks of X for a loop that hands ``learner`` one row
    at a time: X whole and the learner itself, or, for a learner behind :class:`DenseRows`
    and CSR rows, blocks densified once and the learner inside (slicing one CSR row at a
    time costs tens of µs, and so would the wrapper's lookups)."""
    if isinstance(learner, DenseRows) and is_sparse(X):
        for a, b, rows in learner.blocks(X):
            yield a, b, rows, learner.learner
    else:
        yield 0, X.shape[0], X, learner


class DenseRows:
    """A learner that takes only dense rows, handed CSR rows densified a block at a time.

    Every attribute is the learner's own, except the methods that take rows: blocks
    (``learn_predict_many``, ``predict_many``, ``fit``) are densified at most
    :data:`BLOCK_BYTES` at a time, one-row methods (``predict_one``, ``decision_one``,
    ``learn_one``, ``wants_label``) get the row densified. ``stats()`` adds
    ``densified_rows``, the rows densified so far, so that a result says how its learner
    saw the stream.

    Parameters
    ----------
    learner
        The learner (an :class:`~kbench.core.components.Algorithm` instance).
    """

    def __init__(self, learner: Any) -> None:
        self.learner = learner
        self.densified_rows = 0

    def __getattr__(self, name: str) -> Any:
        if name == "learner":  # not set yet (while unpickling): no recursion
            raise AttributeError(name)
        value = getattr(self.learner, name)
        if name in _ONE_ROW and callable(value):

            def one_row(x: Any, *args: Any) -> Any:
                return value(self._row(x), *args)

            return one_row
        return value

    def __repr__(self) -> str:
        return f"DenseRows({self.learner!r})"

    def _row(self, x: Any) -> np.ndarray:
        if not is_sparse(x):
            row: np.ndarray = x  # a dense row already
            return row
        self.densified_rows += 1
        return dense(x).reshape(-1)

    def blocks(self, X: Any) -> Iterator[tuple[int, int, np.ndarray]]:
        """:func:`dense_blocks` of the CSR rows X, counted in ``densified_rows``."""
        for a, b, rows in dense_blocks(X):
            self.densified_rows += b - a
            yield a, b, rows

    def learn_predict_many(self, X: Any, y: np.ndarray) -> np.ndarray:
        if not is_sparse(X):
            pred: np.ndarray = self.learner.learn_predict_many(X, y)
            return pred
        pred = np.empty(X.shape[0])
        for a, b, rows in self.blocks(X):
            pred[a:b] = self.learner.learn_predict_many(rows, y[a:b])
        return pred

    def predict_many(self, X: Any) -> np.ndarray:
        if not is_sparse(X):
            pred: np.ndarray = self.learner.predict_many(X)
            return pred
        pred = np.empty(X.shape[0])
        for a, b, rows in self.blocks(X):
            pred[a:b] = self.learner.predict_many(rows)
        return pred

    def fit(self, X: Any, y: np.ndarray) -> None:
        # A batch learner takes the stream at once: it is densified whole (the learner
        # keeps every example anyway).
        self.densified_rows += X.shape[0] if is_sparse(X) else 0
        self.learner.fit(dense(X), y)

    def stats(self) -> dict[str, Any]:
        return dict(self.learner.stats()) | {"densified_rows": self.densified_rows}
