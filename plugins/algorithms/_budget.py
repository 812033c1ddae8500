"""Shared machinery of the budgeted kernel learners (not a plugin: the name starts with _).

A learner keeps its support vectors in a :class:`~kbench.learners.support_buffer.SupportBuffer` and runs a
compiled block loop over examples. ``learn_one`` runs the same loop on one example with the
kernel row already computed (``have_row``), so the per-example path and the block path
execute the same update code; with a third-party kernel, which the compiled loop cannot
evaluate, the row (and any other kernel value the update needs) comes from Python and only
the per-example path is used. The learners without a budget (perceptron, PA) share its
kernel tuple for a kernel the compiled loops cannot compute, its statistics and the loop
that grows their buffer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from kbench.core.arrays import grown
from kbench.core.components import Algorithm
from kbench.cython_core import _bsgd, _budget_perceptrons, _kernels
from kbench.learners.support_buffer import SupportBuffer
from kbench.plugins.algorithms._sparse_rows import (
    MarkedRows,
    OneRowMethods,
    compiled_kernel,
    csr_rows,
    open_rows,
    self_kernel,
)

#: The kernel tuple the compiled loops receive for a kernel they cannot compute.
NOT_COMPILED = (-1, 0.0, 1.0, 0.0, 1.0)


def sqnorm(x: np.ndarray) -> float:
    """‖x‖² computed exactly as the compiled loops compute it."""
    return _kernels.sqnorm(x)


def expansion_stats(buf: Any, nbytes: int | None = None) -> dict[str, Any]:
    """What a kernel expansion in the buffer ``buf`` (None before the first example)
    reports: its support vectors, the kernel evaluations and ``nbytes``, the model's
    size (by default the buffer's)."""
    if nbytes is None:
        nbytes = buf.nbytes() if buf else 0
    return {
        "n_support": buf.size if buf else 0,
        "kernel_evals": buf.kernel_evals if buf else 0,
        "model_bytes": nbytes,
    }


def run_growing(buf: Any, n: int, loop: Callable[[int], tuple[int, int, int]]) -> None:
    """Learn n rows with a compiled loop that stops when the growable buffer ``buf`` is
    full: ``loop(i)`` runs from row i and returns the row it stopped at, the buffer's new
    size and its kernel evaluations; the buffer doubles until every row is learned."""
    i = 0
    while True:
        i, buf.size, evals = loop(i)
        buf.kernel_evals += evals
        buf.touch()
        if i == n:
            return
        buf.grow()


class CompiledBlocks(OneRowMethods, Algorithm):
    """The block path of a learner whose compiled loop ``_run`` predicts then learns the
    rows of a block in its buffer (``_buffer``): CSR rows through ``_learn_predict_sparse``,
    the per-example path when the loop cannot run on its own, else the loop. Its one-row
    methods take dense or CSR rows (:class:`OneRowMethods`)."""

    _compiled: Any
    _buf: SupportBuffer | None

    def _buffer(self, d: int) -> SupportBuffer:
        """The support-vector buffer for d features, made on first use (each learner's)."""
        raise NotImplementedError

    def _learn_predict_sparse(self, X: Any, y: np.ndarray) -> np.ndarray:
        """Predict then learn every CSR row of X (BudgetLearner's, for every learner here)."""
        raise NotImplementedError

    def _fast_ok(self) -> bool:
        """Whether the compiled block loop can run on its own (compiled kernel and loss)."""
        return self._compiled is not None

    def _run(self, X: np.ndarray, y: np.ndarray, pred: np.ndarray, have_row: bool) -> None:
        """Predict then learn every row of X in compiled code, writing the predictions."""
        raise NotImplementedError

    def learn_predict_many(self, X, y):
        if (csr := self._csr_block(X)) is not None:
            return self._learn_predict_sparse(csr, np.asarray(y, dtype=np.float64))
        if not self._fast_ok():
            return super().learn_predict_many(X, y)
        self._buffer(X.shape[1])
        pred = np.empty(len(X))
        if len(X):
            self._run(X, np.ascontiguousarray(y, dtype=np.float64), pred, False)
            self._buf.touch()
        return pred


class _Counted:
    """The context of :meth:`BudgetLearner._counted`. A plain class, not a generator
    context manager: it wraps every per-example update, where a generator costs 2-3 µs."""

    __slots__ = ("before", "buf", "evals", "st")

    def __init__(self, learner: Any, evals: int) -> None:
        self.buf, self.st, self.evals = learner._buf, learner._state, evals

    def __enter__(self) -> np.ndarray:
        self.st[0] = self.buf.size
        self.before = self.st[self.evals]
        return self.st

    def __exit__(self, exc_type: object, *_: object) -> None:
        if exc_type is None:  # as the generator did: an update that raised records nothing
            self.buf.size = int(self.st[0])
            self.buf.kernel_evals += int(self.st[self.evals] - self.before)


class BudgetLearner(CompiledBlocks):
    """Base of the kernel-expansion learners with a budget of support vectors.

    Subclasses set ``capacity`` handling through :meth:`_capacity`, implement
    :meth:`_run` (the compiled loop on a block) and may extend :meth:`_allocate`.
    """

    #: Whether the expansion's arrays double when full (learners without a budget).
    growable = False
    #: What :meth:`stats` reports beyond the expansion's: name → index of the counter in
    #: ``_state`` (which the compiled loop updates).
    state_stats: ClassVar[dict[str, int]] = {}
    #: The learner's own arrays beside the buffer (set by :meth:`_allocate`), counted in
    #: ``model_bytes``.
    model_arrays: ClassVar[tuple[str, ...]] = ()
    #: Whether :meth:`_run` takes CSR rows (a trailing ``SparseBlock``, on the examples'
    #: marks, see ``_sparse_rows``): then a CSR block is learned in compiled code.
    sparse_loop = False

    def __post_init__(self) -> None:
        self._outputs = self.n_classes if self.task == "multiclass" else 1
        self._buf: SupportBuffer | None = None
        self._compiled = self.kernel.compiled() if self.kernel is not None else None
        # Sparse input (learners that set sparse_input): the CSR support vectors, and
        # k(x, x) of the example being learned, which the compiled update then reads.
        self._sparse: MarkedRows | None = None
        self._given_kxx: float | None = None

    # -- storage ------------------------------------------------------------------------------

    def _capacity(self) -> int:
        return int(self.budget)  # type: ignore[attr-defined]

    def _buffer(self, d: int) -> SupportBuffer:
        if self._buf is None:
            self._buf = SupportBuffer(d, self._capacity(), n_outputs=self._outputs)
            self._allocate(d)
        return self._buf

    def _allocate(self, d: int) -> None:
        """Allocate the learner's own arrays beside the buffer (called once, on first use)."""

    def _kargs(self) -> tuple[int, float, float, float, float]:
        return self._compiled if self._compiled is not None else NOT_COMPILED

    def _scale(self) -> float:
        """The factor that multiplies every stored coefficient (lazy shrinking)."""
        return 1.0

    # -- the online protocol --------------------------------------------------------------------

    def _row(self, x: np.ndarray) -> np.ndarray:
        buf = self._buffer(len(x))
        return buf.row(self.kernel, x, xsq=sqnorm(x))

    def _self_kernel(self, x: np.ndarray) -> float:
        """k(x, x) from Python, for the per-example path of a third-party kernel."""
        if self._given_kxx is not None:
            return self._given_kxx
        if self._compiled is not None:
            return float("nan")  # the compiled loop computes it itself
        return float(np.asarray(self.kernel.diag(x[None, :]))[0])

    def _loop_kxx(self, X: np.ndarray, have_row: bool) -> float:
        """The k(x, x) a compiled loop is handed: the example's on the per-example path,
        NaN on a block (the loop computes it itself)."""
        return self._self_kernel(X[0]) if have_row else float("nan")

    def _counted(self, evals: int) -> _Counted:
        """Around a compiled loop: hand it the buffer's size in ``state[0]``, then take back
        the new size and the kernel evaluations it counted in ``state[evals]``."""
        return _Counted(self, evals)

    def _decision_dense(self, x):
        self._row(x)
        buf = self._buf
        out = np.empty(self._outputs)
        _budget_perceptrons.scores(buf.krow, buf.alpha, buf.size, self._scale(), out)
        return out if self.task == "multiclass" else float(out[0])

    def _learn_dense(self, x, y):
        self._row(x)
        pred = np.empty(1)
        self._run(x[None, :], np.array([float(y)]), pred, True)
        self._buf.touch()

    def _sparse_rows(self, X: Any) -> MarkedRows:
        if not getattr(self, "sparse_input", False):
            raise TypeError(f"{self.name} takes only dense rows; add dense=true to the data set")
        self._sparse = open_rows(self.name, self._sparse, self._buf, X, self._buffer)
        return self._sparse

    def _learn_predict_sparse(self, X: Any, y: np.ndarray) -> np.ndarray:
        """Predict then learn the CSR rows: with a loop that takes them (``sparse_loop``),
        one compiled call per block of rows (:meth:`MarkedRows.learn`), else one call per
        row (:meth:`_learn_predict_marked`)."""
        if not self.sparse_loop:
            return self._learn_predict_marked(X, y)
        rows = self._sparse_rows(X)
        kern = compiled_kernel(self.kernel)
        grow = self._grow if self.growable else None
        return rows.learn(kern, X, y, self._buf, self._run_sparse, grow=grow)

    def _run_sparse(
        self, marks: np.ndarray, y: np.ndarray, pred: np.ndarray, block: Any
    ) -> int | None:
        """:meth:`_run` on a run of CSR rows (the step of :meth:`MarkedRows.learn`): the
        examples learned before a growable buffer filled, or None for all."""
        return self._run(marks, y, pred, False, block)

    def _learn_predict_marked(self, X: Any, y: np.ndarray) -> np.ndarray:
        """Predict then learn each CSR row: the kernel row from the sparse store, then the
        compiled update on the example's mark with that row (as for a Python kernel)."""
        rows = self._sparse_rows(X)
        buf = self._buf
        pred = np.empty(X.shape[0])
        one, label = np.empty(1), np.empty(1)
        kern = compiled_kernel(self.kernel)
        compiled, self._compiled = self._compiled, None  # the update reads krow and kxx
        try:
            for i, x, xsq in csr_rows(X):
                rows.row(kern, x, xsq, buf)
                mark = rows.next_mark()
                self._given_kxx = self_kernel(kern, xsq)
                label[0] = y[i]
                self._run(mark, label, one, True)
                pred[i] = one[0]
                rows.sync(buf, x, rows.count)
        finally:
            self._compiled, self._given_kxx = compiled, None
            buf.touch()
        return pred

    def _decisions(self, X):
        if self._buf is None or self._buf.size == 0:
            out = np.zeros((X.shape[0], self._outputs))
        elif self._sparse is not None:
            out = self._sparse.decision_many(self.kernel, X, self._buf.alpha, self._scale())
        else:
            out = self._buf.decision_many(self.kernel, X, scale=self._scale())
        return out if self.task == "multiclass" else out[:, 0]

    def stats(self) -> dict[str, Any]:
        return expansion_stats(self._buf, self._nbytes()) | {
            name: float(self._state[i]) for name, i in self.state_stats.items()
        }

    def _nbytes(self) -> int:
        if self._buf is None:
            return 0
        own = sum(getattr(self, name).nbytes for name in self.model_arrays)
        return own + self._buf.nbytes() + (self._sparse.nbytes() if self._sparse is not None else 0)


class PegasosFamily(BudgetLearner):
    """Shared driver of kernel Pegasos and budgeted SGD (``cython_core/_bsgd.pyx``).

    Subclasses set ``_mode`` (0 none, 1 removal, 2 projection, 3 merge) and the
    attributes ``lam`` and, for BSGD, ``budget``; Pegasos sets ``project``.
    """

    _mode = 0
    state_stats: ClassVar[dict[str, int]] = {"scale": 2, "maintenance_steps": 4}
    model_arrays = ("_kdiag", "_stamp", "_krow2", "_dvec", "_Kinv")

    def _init_state(self) -> None:
        # m, t, coefficient scale, kernel evaluations in the loop, maintenance steps, ‖f‖².
        self._state = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])

    def _capacity(self):
        # One spare slot: the new vector is stored, then maintenance brings m back to B.
        return 64 if self._mode == 0 else int(self.budget) + 1  # type: ignore[attr-defined]

    def _allocate(self, d):
        cap = self._buf.capacity
        self._kdiag = np.zeros(cap)
        self._stamp = np.zeros(cap)  # the step at which each vector entered (ties → oldest)
        self._krow2 = np.zeros(cap)
        self._dvec = np.zeros(cap)
        self._Kinv = np.zeros((cap, cap)) if self._mode == 2 else np.zeros((1, 1))
        self._scores = np.empty(self._outputs)

    def _grow(self) -> None:
        buf = self._buf
        buf.grow()
        cap = buf.capacity
        for attr in ("_kdiag", "_stamp", "_krow2", "_dvec"):
            setattr(self, attr, grown(getattr(self, attr), cap))

    def _scale(self):
        return float(self._state[2])

    sparse_loop = True

    def _run(self, X, y, pred, have_row, sparse=None):
        buf = self._buf
        kxx = self._loop_kxx(X, have_row)
        budget = int(getattr(self, "budget", 0) or 0)
        project = bool(getattr(self, "project", False))
        start = 0
        while True:
            with self._counted(evals=3) as st:
                start = _bsgd.bsgd_block(
                    self._kargs(), buf.X, buf.sq, buf.alpha, self._kdiag, self._stamp,
                    self._Kinv, st, self.lam, self._mode, budget, project,
                    X, y, pred, buf.krow, self._krow2, self._dvec, self._scores,
                    have_row, kxx, start, sparse,
                )  # fmt: skip
            if start == len(X) or sparse is not None:
                return start  # on CSR rows, MarkedRows.learn grows and goes on
            self._grow()
