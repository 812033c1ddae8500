"""Sparse rows beside a dense learner's stand-in rows, kept in step by marks.

A learner whose compiled update copies, overwrites and moves the rows of a dense
support-vector array (POLK's dictionary) learns CSR rows through the same update: it runs
on one-value stand-in rows holding each example's *mark* (its serial number), and
:class:`MarkedRows` then reads from the marks where the update put, overwrote or moved
examples and mirrors that in a :class:`~kbench.learners.sparse_buffer.SparseSupportBuffer`.
So the update arithmetic is the dense learner's, and the support vectors stay CSR; the
kernel rows and Gram blocks of CSR rows come from the store.

:class:`OneRowMethods` gives such a learner its one-row methods for dense rows or CSR
ones, whichever rows it learned: once the dense array holds marks, a dense row's kernel
values against it would be meaningless, so decisions then come from the block scores of
the row as a one-row CSR block, and learning from ``learn_predict_many`` on that block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from kbench.core.arrays import grown, is_sparse
from kbench.core.components import Kernel
from kbench.core.dense_rows import dense, dense_blocks, takes_csr
from kbench.cython_core import _sparse
from kbench.learners.expansion import refuse_switch
from kbench.learners.rows import BLOCK_ROWS, as_csr, csr_parts, one_row, packed_rows
from kbench.learners.sparse_buffer import SparseRow, SparseSupportBuffer
from kbench.learners.support_buffer import SupportBuffer

__all__ = ["MarkedRows", "OneRowMethods", "csr_rows", "open_rows", "stored_rows"]


def csr_rows(X: Any) -> Iterator[tuple[int, SparseRow, float]]:
    """``(i, x, ‖x‖²)`` for every row of a CSR block, x a pair of views of its arrays."""
    indptr, indices, data = csr_parts(X)
    for i in range(X.shape[0]):
        a, b = indptr[i], indptr[i + 1]
        values = data[a:b]
        yield i, (indices[a:b], values), float(values @ values)


def open_rows(
    owner: str,
    rows: MarkedRows | None,
    buf: SupportBuffer | None,
    X: Any,
    make_buffer: Callable[[int], SupportBuffer],
) -> MarkedRows:
    """The marked rows of a learner about to learn the CSR block X: ``rows`` when it has
    them, else new ones beside a buffer of one-value stand-in rows (``make_buffer(1)``); a
    learner that has learned dense rows (``buf`` without ``rows``) cannot switch."""
    if rows is not None:
        return rows
    if buf is not None:
        refuse_switch(owner, True)
    buf = make_buffer(1)  # stand-in rows of one value: the examples' marks
    return MarkedRows(X.shape[1], buf.capacity, buf.alpha.shape[1])


class OneRowMethods:
    """``decision_one``, ``learn_one``, ``decision_many`` and ``predict_many`` of a learner
    that may take CSR blocks, for dense rows or CSR ones whichever rows it learned.

    The learner defines its dense one-row methods, ``_decision_dense(x)`` and
    ``_learn_dense(x, y)``, and ``_decisions(X)``, the decision values of a block of the
    rows it holds (CSR once it has learned CSR rows, dense once it has learned dense ones,
    either before). Then:

    * decisions of a learner that learned CSR rows (or of a CSR row before it learned any)
      come from ``_decisions`` on the row as a one-row CSR block: its dense array holds
      one-value stand-ins, not rows;
    * a learner that learned dense rows, or takes only dense rows, is handed a CSR row
      densified;
    * ``learn_one`` of a CSR row, or once CSR rows were learned, is ``learn_predict_many``
      on the one-row CSR block (which a learner that learned dense rows refuses, as it
      refuses a CSR block).

    Listed first among the bases, before :class:`~kbench.core.components.Algorithm`.
    """

    def _rows_learned(self) -> str | None:
        """``"csr"`` or ``"dense"``: the rows the learner's model holds; None before it
        holds any (or for a model that keeps no rows, e.g. a feature map). A learner that
        takes only dense rows answers ``"dense"``."""
        if not takes_csr(self):
            return "dense"
        if getattr(self, "_sparse", None) is not None:
            return "csr"
        return "dense" if getattr(self, "_buf", None) is not None else None

    def _csr_block(self, X: Any) -> Any:
        """X as CSR when the learner must learn it on its CSR path (X is CSR, or the
        learner has learned CSR rows: its dense array holds stand-ins), else None."""
        if is_sparse(X) or self._rows_learned() == "csr":
            return as_csr(X)
        return None

    def _decision_dense(self, x: np.ndarray) -> Any:
        raise NotImplementedError

    def _learn_dense(self, x: np.ndarray, y: float) -> None:
        raise NotImplementedError

    def _decisions(self, X: Any) -> np.ndarray:
        raise NotImplementedError

    def decision_one(self, x: Any) -> Any:
        # A dense row to a learner of dense rows first: the per-example path of the runner.
        sparse = type(x) is not np.ndarray and is_sparse(x)
        rows = self._rows_learned()
        if rows == "dense" or (rows is None and not sparse):
            return self._decision_dense(dense(x).reshape(-1) if sparse else x)
        F = self._decisions(one_row(x))
        return F[0].copy() if F.ndim == 2 else float(F[0])

    def learn_one(self, x: Any, y: float) -> None:
        sparse = type(x) is not np.ndarray and is_sparse(x)
        rows = self._rows_learned()
        if rows == "csr" or (sparse and takes_csr(self)):
            self.learn_predict_many(one_row(x), np.array([float(y)]))  # type: ignore[attr-defined]
        else:
            self._learn_dense(dense(x).reshape(-1) if sparse else x, y)

    def decision_many(self, X: Any) -> np.ndarray:
        """Decision values of the rows of X (dense or CSR), without learning: shape (n,),
        or (n, C) class scores on multiclass tasks; ``predict_many`` gives their labels."""
        rows = self._rows_learned()
        if rows == "csr" and not is_sparse(X):
            X = as_csr(X)
        elif rows == "dense" and is_sparse(X):
            parts = [self._decisions(block) for _, _, block in dense_blocks(X)]
            return np.concatenate(parts) if parts else self._decisions(np.zeros((0, X.shape[1])))
        return self._decisions(X)

    def predict_many(self, X: Any) -> np.ndarray:
        labels: np.ndarray = self.labels_of(self.decision_many(X))  # type: ignore[attr-defined]
        return labels


class MarkedRows:
    """The sparse rows of a dense learner's support vectors, kept in step by marks.

    Parameters
    ----------
    d
        Dimension of the sparse examples.
    capacity
        Rows allocated at first (the dense buffer's capacity).
    n_outputs
        Coefficient columns (the dense buffer's).
    """

    def __init__(self, d: int, capacity: int, n_outputs: int = 1) -> None:
        self.store = SparseSupportBuffer(d, capacity, n_outputs=n_outputs, growable=True)
        self.marks = np.zeros(capacity)
        self.count = 0.0
        self._mark = np.zeros((1, 1))

    def next_mark(self) -> np.ndarray:
        """The stand-in row of the next example, ``(1, 1)``: its mark (1, 2, ...; exact in
        float64). The same array each time: the update copies the value it stores."""
        self.count += 1.0
        self._mark[0, 0] = self.count
        return self._mark

    def row(
        self,
        compiled: tuple[int, float, float, float, float],
        x: SparseRow,
        xsq: float,
        buf: SupportBuffer,
    ) -> np.ndarray:
        """The kernel row of x (‖x‖² = xsq) against the stored rows, written into
        ``buf.krow`` (one compiled call, which checks x's indices in O(nnz))."""
        store = self.store
        m = store.size
        _sparse.kernel_row(
            compiled,
            x[0],
            x[1],
            xsq,
            store.starts,
            store.ends,
            store.indices,
            store.data,
            store.sq,
            buf.krow,
            m,
            store._strategy,
            store.work,
        )
        store.kernel_evals += m
        buf.kernel_evals += m
        return buf.krow[:m]

    def learn(
        self,
        compiled: tuple[int, float, float, float, float],
        X: Any,
        y: np.ndarray,
        buf: SupportBuffer,
        step: Callable[[np.ndarray, np.ndarray, np.ndarray, _sparse.SparseBlock], int | None],
        rows: int | None = None,
        grow: Callable[[], None] | None = None,
    ) -> np.ndarray:
        """Predict then learn the CSR block X with labels y through a compiled loop that
        takes a :class:`~kbench.cython_core._sparse.SparseBlock`, ``rows`` examples a call
        (``BLOCK_ROWS`` by default); return the predictions.

        ``step(marks, y, pred, block)`` runs the learner's loop on a run of examples:
        ``marks`` (n × 1) are their stand-in rows, ``y`` their labels, ``pred`` (a view)
        receives the predictions, ``block`` holds their CSR rows against the store, whose
        pool is reserved for them beforehand (so it grows, or is compacted, only between
        calls). The loop updates the dense stand-in rows as on dense data and the store in
        step; :meth:`settle` then records the store's new size. A loop over a growable
        buffer may stop when it is full: ``step`` then returns the number of examples it
        learned, and is called again on the rest (a new block) once the buffer (``grow``,
        ``buf.grow`` by default) and the store have doubled; None means all of them.
        """
        if X.shape[1] != self.store.d:
            raise ValueError(f"X has {X.shape[1]} columns but the rows have {self.store.d}")
        indptr, indices, data = csr_parts(X)
        indptr = indptr.astype(np.int64, copy=False)
        y = np.ascontiguousarray(y, dtype=np.float64)
        pred = np.empty(X.shape[0])
        rows = rows or BLOCK_ROWS
        for a in range(0, X.shape[0], rows):
            b = min(a + rows, X.shape[0])
            marks = (self.count + np.arange(1.0, b - a + 1.0))[:, None]
            self.count += b - a
            while a < b:
                if self.store.capacity < buf.capacity:
                    self.store.grow(buf.capacity)
                block = self.store.block(compiled, indptr[a : b + 1], indices, data)
                done = step(marks, y[a:b], pred[a:b], block)
                self.settle(block, buf)
                if done is None or done == len(marks):
                    break
                a, marks = a + done, marks[done:]
                (grow or buf.grow)()
        buf.touch()
        return pred

    def settle(self, block: _sparse.SparseBlock, buf: SupportBuffer) -> None:
        """After a compiled loop on ``block``: the store takes the dense buffer's size, the
        marks and the dense squared norms follow the rows."""
        m = buf.size
        self.store.absorb(block, m)
        if len(self.marks) < buf.capacity:
            self.marks = grown(self.marks, buf.capacity)
        self.marks[:m] = buf.X[:m, 0]
        buf.sq[:m] = self.store.sq[:m]

    def sync(self, buf: SupportBuffer, x: SparseRow, mark: float) -> None:
        """Mirror in the sparse store what the update did to the dense stand-in rows."""
        store = self.store
        m_old, m_new = store.size, buf.size
        if len(self.marks) < buf.capacity:
            marks = np.zeros(buf.capacity)
            marks[: len(self.marks)] = self.marks
            self.marks = marks
        new = buf.X[:m_new, 0]
        old = self.marks[:m_old]
        if m_new == m_old and not (new != old).any():
            return  # the update stored nothing (the common case)
        common = min(m_old, m_new)
        changed = np.flatnonzero(new[:common] != old[:common]).tolist()
        changed += range(m_old, m_new)
        rows: dict[int, SparseRow] = {}
        for slot in changed:
            got = new[slot]
            if got == mark:
                rows[slot] = x
            else:  # moved from another slot
                rows[slot] = store.get(int(np.flatnonzero(old == got)[0]))
        while store.size > m_new:
            store.remove(store.size - 1)
        for slot in changed:
            if slot < store.size:
                store.replace(slot, rows[slot], 0.0)
            else:
                store.add(rows[slot], 0.0)
        self.marks[:m_new] = new
        # The dense learner's squared norms are those of the real rows (a linear or
        # polynomial k(x_j, x_j) may be read from them).
        buf.sq[:m_new] = store.sq[:m_new]

    def sync_many(self, buf: SupportBuffer, pending: dict[float, SparseRow]) -> None:
        """Mirror an update that stored several examples at once: ``pending`` maps the mark
        of each example it may have stored to its row; other changed slots hold rows moved
        from elsewhere in the store."""
        store = self.store
        m_old, m_new = store.size, buf.size
        if len(self.marks) < buf.capacity:
            self.marks = np.concatenate([self.marks, np.zeros(buf.capacity - len(self.marks))])
        new, old = buf.X[:m_new, 0], self.marks[:m_old]
        common = min(m_old, m_new)
        changed = np.flatnonzero(new[:common] != old[:common]).tolist() + list(range(m_old, m_new))
        placed = {
            slot: pending[new[slot]]
            if new[slot] in pending
            else store.get(int(np.flatnonzero(old == new[slot])[0]))
            for slot in changed
        }  # read before any write: a moved row's old slot may change below
        while store.size > m_new:
            store.remove(store.size - 1)
        for slot, x in placed.items():
            if slot < store.size:
                store.replace(slot, x, 0.0)
            else:
                store.add(x, 0.0)
        self.marks[:m_new] = new
        buf.sq[:m_new] = store.sq[:m_new]

    def gram_into(
        self,
        compiled: tuple[int, float, float, float, float],
        out: np.ndarray,
        rows: list[SparseRow] | None = None,
    ) -> None:
        """The Gram matrix of the stored rows (or of ``rows``) into ``out[:n, :n]``, one
        compiled call (``out`` C-contiguous)."""
        store = self.store
        if rows is None:
            n = store.size
            starts, ends, sq = store.starts[:n], store.ends[:n], store.sq[:n]
            indices, data = store.indices, store.data
        else:
            n = len(rows)
            indptr, indices, data = packed_rows(rows)
            starts, ends = indptr[:-1], indptr[1:]
            sq = np.array([float(r[1] @ r[1]) for r in rows])
        if n == 0:
            return
        _sparse.kernel_block(
            compiled,
            starts,
            ends,
            indices,
            data,
            sq,
            starts,
            ends,
            indices,
            data,
            sq,
            out,
            n,
            store._strategy,
            store.work,
        )
        store.kernel_evals += n * n

    def decision_many(self, kernel: Kernel, X: Any, alpha: np.ndarray, scale: float) -> np.ndarray:
        """Outputs for the rows of the CSR matrix X with the dense learner's coefficients."""
        store = self.store
        m = store.size
        store.alpha[:m] = alpha[:m]
        return store.decision_many(kernel, X, scale=scale)

    def gram(self, kernel: Kernel) -> np.ndarray:
        """The kernel matrix of the stored rows (one row per stored row, O(m²·nnz))."""
        m = self.store.size
        K = np.empty((m, m))
        for i in range(m):
            K[i] = self.store.row(kernel, self.store.get(i))
        return K

    def nbytes(self) -> int:
        """Memory held by the sparse rows."""
        return self.store.nbytes() + self.marks.nbytes


def stored_rows(buf: SupportBuffer | None, rows: MarkedRows | None) -> Any:
    """Copies of a learner's stored rows in slot order, for its inspection methods: the
    dense rows, or, once it has learned CSR rows, a CSR matrix of them (its dense array then
    holds the one-value stand-in marks, which are no support vectors)."""
    if buf is None:
        return np.zeros((0, 0))
    if rows is None:
        return buf.X[: buf.size].copy()
    return rows.store.to_csr()  # the store follows the buffer's slots
