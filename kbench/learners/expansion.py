"""A kernel expansion without a budget, grown by one compiled block loop.

Its loops only append rows (they never replace or move one), so the kernel row of a stored
example stays valid until the next row is appended.

``f(x) = Σᵢ αᵢ k(xᵢ, x)`` (one coefficient column per output) in a growable store of
support vectors: a :class:`SupportBuffer` for dense rows, a :class:`SparseSupportBuffer`
for CSR rows (kept sparse), chosen by the first rows learned. :meth:`Expansion.learn`
drives a block loop over any rows:

* dense blocks: one call over the block, the store doubled whenever the loop stops full;
* CSR blocks: one call per :data:`~kbench.learners.rows.BLOCK_ROWS` rows, the store's
  pool reserved for them beforehand (the loop writes the rows it keeps into it);
* one dense row (``learn_one``), or any dense row with a kernel the loop cannot compute:
  the kernel row from the store (cached when ``predict_one`` of the same row came just
  before), handed to the loop with ``have_row``.

A block loop follows one convention (``kbench.cython_core._perceptron.perceptron_block``):
``loop(spec, rows, store, y, pred, start, have_row, kxx, **params)`` returns ``(next, size,
kernel_evals)``, with ``rows`` a :class:`~kbench.cython_core._sparse.BlockRows` and
``store`` the store, whose arrays it writes in place. Arrays with one entry per row (the
averaged perceptron's example ids) go in ``per_row``: each call gets the slice of its rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from kbench.core.components import Kernel
from kbench.cython_core._kernels import KernelSpec
from kbench.cython_core._sparse import BlockRows
from kbench.learners.rows import BLOCK_ROWS, Rows, labels
from kbench.learners.sparse_buffer import SparseSupportBuffer
from kbench.learners.support_buffer import SupportBuffer

_F64 = np.dtype(np.float64)

Store = SupportBuffer | SparseSupportBuffer
BlockLoop = Callable[..., tuple[int, int, int]]

#: Rows allocated at first without a limit; the store then grows by ``growth`` when full.
FIRST_CAPACITY = 64
#: A limit up to this many rows (a learner's budget) is allocated at once, so that the
#: store and the loop's own arrays sized by it never grow while the learner runs.
WHOLE_LIMIT = 4096

#: The last row learned alone and its block: the reductions hand one row to each of their
#: learners in turn, which then share one view of it (a view: always x's current values).
_last_one: tuple[np.ndarray, BlockRows] | None = None


def _block_of(x: np.ndarray) -> BlockRows:
    """One dense row x (1-D, C-contiguous float64) as a block of one row."""
    global _last_one
    last = _last_one  # one read: threads see a row and block that belong together
    if last is not None and last[0] is x:
        return last[1]
    block = BlockRows(x[None, :])
    _last_one = (x, block)
    return block


def refuse_switch(owner: str, sparse: bool) -> None:
    """Raise the one-line TypeError of a learner handed CSR rows after dense ones (``sparse``)
    or dense rows after CSR ones: its stored rows are of the other kind."""
    learned, given = ("dense", "sparse") if sparse else ("sparse", "dense")
    raise TypeError(f"{owner} has learned {learned} rows; it cannot continue on {given} ones")


def expansion_stats(store: Store | None) -> dict[str, Any]:
    """What a kernel expansion reports: support vectors, kernel evaluations, bytes."""
    return {
        "n_support": store.size if store else 0,
        "kernel_evals": store.kernel_evals if store else 0,
        "model_bytes": store.nbytes() if store else 0,
    }


class Expansion:
    """The growable kernel expansion of a learner (the support vectors and coefficients).

    Parameters
    ----------
    owner
        The learner's name, for error messages.
    kernel
        The kernel k; a third-party kernel (no compiled form) is learned row by row, its
        rows computed in Python.
    n_outputs
        Coefficient columns: 1, or the number of classes.
    self_kernel
        Whether the block loop reads k(x, x), which a third-party kernel's ``diag`` gives.
    limit
        The most rows the store needs (a learner's budget, whose loop replaces rows once
        that many are stored): it never grows past them. None: no limit.

    A learner that shrinks every coefficient at once keeps the factor apart, as ``scale``
    (the expansion is ``scale · Σᵢ αᵢ k(xᵢ, x)``): its loop updates the factor, the learner
    sets ``scale`` after each call, and the outputs are multiplied by it.

    A loop that writes rows of its own into a CSR store (BSGD's merged points) needs pool
    entries beyond the examples': the learner sets ``make_room(store, rows)``, called
    before the CSR rows are learned and whenever the loop stops short of a block with rows
    to spare in the store (it stopped for pool room), to set ``store.spare``.
    """

    #: Reserves pool entries for rows a loop writes into a CSR store (see above), or None.
    make_room: Callable[[SparseSupportBuffer, Rows], None] | None = None
    #: Called with the store whenever a loop returns it holding ``limit`` rows, or None: a
    #: learner that changes phase there (NOGD builds its Nyström map) stops its loop after
    #: the row that filled the store, and the loop resumes after the call; the store never
    #: grows past the limit.
    at_limit: Callable[[Store], None] | None = None
    #: The factor by which a full store grows. A learner whose own state is quadratic in
    #: the capacity (POLK's inverse Gram matrix) grows by less, to spare copying it.
    growth: float = 2.0

    def __init__(
        self,
        owner: str,
        kernel: Kernel,
        n_outputs: int = 1,
        self_kernel: bool = False,
        limit: int | None = None,
    ):
        self.owner, self.kernel, self.n_outputs = owner, kernel, n_outputs
        self.spec = KernelSpec.of(kernel)
        #: What the store's ``row`` takes: the spec of a built-in kernel (no spec made per
        #: row), a third-party kernel itself.
        self.row_kernel: Kernel | KernelSpec = self.spec if self.spec.compiled else kernel
        self.self_kernel = self_kernel
        self.limit = limit
        self.scale = 1.0
        self.store: Store | None = None
        self._pred = np.empty(1)  # learn_one's prediction, which it does not return
        self._stopped_at = -1  # the row a loop last stopped at, at the limit

    def _first_capacity(self) -> int:
        """Rows of a new store: a limit up to WHOLE_LIMIT at once, else FIRST_CAPACITY."""
        if self.limit is None:
            return FIRST_CAPACITY
        return self.limit if self.limit <= WHOLE_LIMIT else FIRST_CAPACITY

    def _room_for_next(self, store: Store) -> None:
        """Grow a store that is full below its limit: at the end of a block, so that the
        next call (often one row: the runner's learn_one, a benchmark's window) does not
        pay for the copy of every stored row, and before a row that would not fit. A store
        at its limit does not grow: its loop replaces a row. (``len(sq)``: the capacity of
        either store, without a property.)"""
        if store.size == len(store.sq) and (self.limit is None or store.size < self.limit):
            self._grow(store)

    def _grow(self, store: Store) -> None:
        """Grow the store's rows by ``growth``, up to ``limit``."""
        new = max(store.capacity + 1, int(store.capacity * self.growth))
        if self.limit is not None:
            new = min(new, self.limit)
        if new <= store.capacity:  # a loop that stops full at the limit would loop forever
            raise RuntimeError(
                f"kbench: {self.owner}'s loop outgrew its limit of {self.limit} rows"
            )
        store.grow(new)

    # -- learning ---------------------------------------------------------------------------

    def _store_for(self, rows: Rows) -> tuple[Store, Rows]:
        """The store for these rows (made by the first rows), and the rows in its kind:
        dense rows become CSR once CSR rows were learned; CSR rows after dense are refused."""
        store = self.store
        if type(store) is SupportBuffer and rows.csr is None and rows.d == store.d:
            return store, rows  # dense rows into dense rows: the per-example case
        if store is None:
            if rows.sparse and not self.spec.compiled:
                raise TypeError(
                    f"sparse input needs a built-in kernel, not {type(self.kernel).__name__}"
                )
            kind = SparseSupportBuffer if rows.sparse else SupportBuffer
            store = self.store = kind(
                rows.d,
                self._first_capacity(),
                n_outputs=self.n_outputs,
                growable=True,
            )
        elif rows.sparse and isinstance(store, SupportBuffer):
            refuse_switch(self.owner, True)
        if rows.d != store.d:
            raise ValueError(f"X has {rows.d} columns but {self.owner} holds rows of {store.d}")
        if isinstance(store, SparseSupportBuffer):
            rows = rows.as_sparse()
        return store, rows

    def learn(
        self,
        loop: BlockLoop,
        rows: Rows,
        y: np.ndarray,
        *,
        per_row: Mapping[str, np.ndarray] | None = None,
        **params: Any,
    ) -> np.ndarray:
        """Predict then learn ``rows`` (labels ``y``, checked) with the block loop; the
        predictions made before each update. ``per_row``: the loop's parameters with one
        entry per row, sliced as ``y`` is; ``params``: the others, passed as they are."""
        return self.learn_block(loop, rows, y, params, per_row)

    def learn_block(
        self,
        loop: BlockLoop,
        rows: Rows,
        y: np.ndarray,
        params: Mapping[str, Any],
        per_row: Mapping[str, np.ndarray] | None = None,
    ) -> np.ndarray:
        """:meth:`learn` with the loop's keywords as one mapping, which is read, never
        changed: a learner's, made once (no mapping packed per call of the runner)."""
        store, rows = self._store_for(rows)
        per_row = per_row or {}
        if rows.csr is not None:
            return self._learn_csr(loop, store, rows, y, params, per_row)  # type: ignore[arg-type]
        if rows.row0 is not None or not self.spec.compiled:
            return self._learn_given_rows(loop, store, rows, y, params, per_row)  # type: ignore[arg-type]
        assert rows.X is not None  # dense rows (a CSR block took the branch above)
        return self._learn_dense(
            loop,
            store,  # type: ignore[arg-type]
            rows.X,
            y,
            {**params, **per_row} if per_row else params,
        )

    def learn_array(
        self,
        loop: BlockLoop,
        X: Any,
        y: Any,
        params: Mapping[str, Any],
        signs: str | None = None,
        per_row: Mapping[str, np.ndarray] | None = None,
    ) -> np.ndarray:
        """:meth:`learn_block` on any rows and labels (checked: :class:`Rows` and
        :func:`labels`, ``signs`` as there). The runner's block, a C-contiguous float64
        array of the dense store's width with float64 labels, goes straight to the loop:
        what the checks would make of it is itself, and in a short block (a benchmark's
        window, a reduction's calls) they cost as much as the block's kernel rows."""
        store = self.store
        if (
            type(X) is np.ndarray
            and type(y) is np.ndarray
            and type(store) is SupportBuffer
            and X.dtype is _F64
            and y.dtype is _F64
            and X.ndim == 2
            and y.ndim == 1
            and X.shape[1] == store.d
            and y.shape[0] == X.shape[0]
            and X.flags.c_contiguous
            and y.flags.c_contiguous
            and self.spec.compiled
        ):
            if signs is not None:
                labels(y, X.shape[0], signs=signs)  # its one-line error
            return self._learn_dense(
                loop, store, X, y, {**params, **per_row} if per_row else params
            )
        rows = Rows.of(X)
        return self.learn_block(loop, rows, labels(y, rows.n, signs=signs), params, per_row)

    def _learn_dense(
        self,
        loop: BlockLoop,
        store: SupportBuffer,
        X: np.ndarray,
        y: np.ndarray,
        params: Mapping[str, Any],
    ) -> np.ndarray:
        """The block loop on dense rows X of a dense store, the store grown (and the
        learner's ``at_limit`` called) whenever the loop stops short of the end."""
        n, spec, pred, i = X.shape[0], self.spec, np.empty(X.shape[0]), 0
        block = BlockRows(X)
        while True:
            i, size, evals = loop(spec, block, store, y, pred, i, **params)
            store.size = size
            store.kernel_evals += evals
            store._version += 1  # touch(), once per block of the runner
            if self.at_limit is not None and self._reached_limit(store, i, n):
                continue
            if i == n:
                self._room_for_next(store)
                return pred
            self._grow(store)

    def _reached_limit(self, store: Store, i: int, n: int) -> bool:
        """Whether ``at_limit`` took the store at its limit (a loop that stopped at row i of
        n resumes there); a loop that stops at the limit twice without a row learned
        between would never end, and is refused."""
        if self.at_limit is None or store.size != self.limit:
            return False
        stuck = i < n and i == self._stopped_at
        self._stopped_at = i if i < n else -1
        if stuck:
            raise RuntimeError(f"kbench: {self.owner}'s loop stopped at its limit twice on row {i}")
        self.at_limit(store)
        return i < n

    def learn_one(
        self, loop: BlockLoop, x: np.ndarray, y: np.ndarray, params: Mapping[str, Any]
    ) -> None:
        """Predict then learn one dense 1-D float64 row x (label ``y``, one checked value):
        :meth:`learn` on ``Rows.one(x)``, without its dispatch when a dense store of x's
        width holds the rows."""
        store = self.store
        if type(store) is SupportBuffer and x.shape[0] == store.d and x.flags.c_contiguous:
            self._learn_row(loop, store, x, _block_of(x), y, self._pred, params)
        else:
            self.learn(loop, Rows.one(x), y, **params)

    def _learn_given_rows(
        self,
        loop: BlockLoop,
        store: SupportBuffer,
        rows: Rows,
        y: np.ndarray,
        params: Mapping[str, Any],
        per_row: Mapping[str, np.ndarray],
    ) -> np.ndarray:
        """Each dense row on its own, its kernel row (and k(x, x) for a third-party kernel
        when the loop reads it) computed here and handed to the loop."""
        X, pred, row0 = rows.X, np.empty(rows.n), rows.row0
        assert X is not None  # dense rows: one row's X is that row as a 1 × d block
        if row0 is not None:  # learn_one: the row and its label as they are
            kw = {**params, **per_row} if per_row else params
            self._learn_row(loop, store, row0, BlockRows(X), y, pred, kw)
            return pred
        for i in range(rows.n):
            ri = {name: a[i : i + 1] for name, a in per_row.items()}
            kw = {**params, **ri} if ri else params
            self._learn_row(
                loop, store, X[i], BlockRows(X[i : i + 1]), y[i : i + 1], pred[i : i + 1], kw
            )
        return pred

    def _learn_row(
        self,
        loop: BlockLoop,
        store: SupportBuffer,
        x: np.ndarray,
        one: BlockRows,
        y: np.ndarray,
        pred: np.ndarray,
        kw: Mapping[str, Any],
    ) -> None:
        """The loop on one row x (``one``: x as a block), given x's kernel row."""
        store.row(self.row_kernel, x)  # into store.krow; cached after predict_one(x)
        self._room_for_next(store)  # krow's values kept
        kxx = 0.0
        if self.self_kernel and not self.spec.compiled:
            kxx = float(np.asarray(self.kernel.diag(x[None, :]))[0])
            store.kernel_evals += 1
        _, store.size, evals = loop(self.spec, one, store, y, pred, 0, True, kxx, **kw)
        store.kernel_evals += evals
        # A row appended, or one replaced in place (a budget or a window): either way the
        # cached kernel row may be out of date.
        store.touch()
        if self.at_limit is not None and store.size == self.limit:
            self.at_limit(store)

    def _learn_csr(
        self,
        loop: BlockLoop,
        store: SparseSupportBuffer,
        rows: Rows,
        y: np.ndarray,
        params: Mapping[str, Any],
        per_row: Mapping[str, np.ndarray],
    ) -> np.ndarray:
        """CSR rows, BLOCK_ROWS a call: the loop writes the rows it keeps into the store's
        pool, reserved beforehand; a loop that stops full resumes on a new block after the
        store doubles."""
        indptr, indices, data = rows.parts
        pred = np.empty(rows.n)
        if self.make_room is not None:
            self.make_room(store, rows)
        for a in range(0, rows.n, BLOCK_ROWS):
            b = min(a + BLOCK_ROWS, rows.n)
            i = 0
            ra = {name: v[a:b] for name, v in per_row.items()}
            while True:
                block = store.block(self.spec, indptr[a : b + 1], indices, data)
                i, size, evals = loop(
                    self.spec, BlockRows.csr(block), store, y[a:b], pred[a:b], i, **params, **ra
                )
                store.absorb(block, size)
                store.kernel_evals += evals
                if self._reached_limit(store, i, b - a):
                    continue
                if i == b - a:
                    break
                if size < store.capacity:  # rows to spare: it stopped for pool room
                    if self.make_room is None:
                        raise RuntimeError(
                            f"kbench: {self.owner}'s loop stopped with room in its store"
                        )
                    self.make_room(store, rows)
                else:
                    self._grow(store)
        if self.make_room is not None:
            store.spare = 0
        self._room_for_next(store)
        return pred

    # -- predicting -------------------------------------------------------------------------

    def decisions(self, rows: Rows) -> np.ndarray:
        """The outputs (n × n_outputs) of the expansion at every row, without learning."""
        store = self.store
        if store is None or store.size == 0:
            return np.zeros((rows.n, self.n_outputs))
        if isinstance(store, SparseSupportBuffer):
            return store.decision_many(self.kernel, rows.as_sparse().csr, scale=self.scale)
        return store.decision_many(self.kernel, rows.dense(), scale=self.scale)

    def decision_one(self, x: Any) -> np.ndarray:
        """The outputs at one row x (dense 1-D, or sparse); for a dense row and a dense store
        its kernel row stays in the store, so that learning the same row next costs none."""
        store = self.store
        if type(x) is np.ndarray and type(store) is SupportBuffer and store.size:
            if x.ndim != 1 or x.dtype is not _F64 or not x.flags.c_contiguous:
                x = Rows.one(x).row0
            scores: np.ndarray = store.scores(store.row(self.row_kernel, x), self.scale)
            return scores
        first: np.ndarray = self.decisions(Rows.one(x))[0]
        return first

    # -- inspection -------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """``n_support``, ``kernel_evals``, ``model_bytes``."""
        return expansion_stats(self.store)

    def support_vectors(self) -> Any:
        """Copies of the stored rows in slot order: dense, or a CSR matrix."""
        store = self.store
        if store is None:
            return np.zeros((0, 0))
        if isinstance(store, SparseSupportBuffer):
            return store.to_csr()
        return store.X[: store.size].copy()
