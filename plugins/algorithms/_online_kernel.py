"""Shared Python side of kbench's online kernel learners with a circular buffer (NORMA, SVMD).

It turns a loss and a task into the codes of the compiled loops
(``cython_core/_online_ops.pxd``), computes the loss gradient ξ, the Hessian–trace
product χ = Λ·V and the margin-violation indicator s with the loss plugins (the Python
path, which runs any registered loss and kernel), and holds what both learners share:
the buffer, the prediction rules and the checks of the ν-trick.

The module name starts with an underscore, so the registry does not load it as a plugin.
Every formula here mirrors one in ``_online_ops.pxd`` operation for operation: the
compiled block loop and the per-example path must make the same predictions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from kbench.core.components import Algorithm, param
from kbench.cython_core import _kernels
from kbench.cython_core._online_ops import OnlineConfig
from kbench.learners.online_loss import (
    L_PYTHON,
    NU_OFF,
    TASK_CODES,
    LossSetup,
    make_cfg,
    setup_loss,
)
from kbench.learners.support_buffer import SupportBuffer
from kbench.plugins.algorithms._sparse_rows import (
    MarkedRows,
    OneRowMethods,
    compiled_kernel,
    open_rows,
)


class OnlineKernelLearner(OneRowMethods, Algorithm):
    """Common machinery of NORMA and SVMD: a circular buffer of the ω most recent terms.
    Its one-row methods take dense or CSR rows (:class:`OneRowMethods`).

    Not registered itself. Subclasses set ``columns_per_output`` (coefficient columns per
    score: 1 for f alone, 2 for f and SVMD's trace v) and implement the update.
    """

    tasks = frozenset(TASK_CODES)
    uses_loss = True
    default_loss = "hinge"
    columns_per_output: ClassVar[int] = 1

    _buf: SupportBuffer | None
    _sparse: MarkedRows | None  # the support vectors as CSR rows (sparse_input subclasses)
    _setup: LossSetup
    _cfg: OnlineConfig
    _state: np.ndarray
    #: Position of each field of ``_state`` (the compiled module's ``STATE_FIELDS``).
    _fields: ClassVar[dict[str, int]]

    eta: float = param(0.5, low=0.0, low_open=True)
    c: float = param(0.01, low=0.0)
    budget: int = param(1000, low=1)
    offset: bool = param(False)
    nu: float = param(0.0, low=0.0, high=1.0, high_open=True)
    margin0: float = param(1.0, low=0.0, low_open=True)
    eta_eps: float = param(1.0, low=0.0, low_open=True)

    def __post_init__(self) -> None:
        assert self.loss is not None  # Algorithm.__init__ checked it (uses_loss)
        self._setup = setup_loss(
            self.name, self.loss, self.task, self.n_classes, self.nu, self.margin0
        )
        self._buf = None
        self._one = np.zeros(1)

    def _setup_loops(self, **values: Any) -> None:
        """The compiled loops' configuration (the kernel's and the loss's codes, η₀, c, the
        offset and ``values``, the learner's own fields) and a fresh state, the margin at ε₀."""
        assert self.kernel is not None
        self._cfg = make_cfg(
            self.kernel, self._setup, eta0=self.eta, c=self.c, use_offset=self.offset, **values
        )
        self._state = np.zeros(len(self._fields))
        self._state[self._fields["eps"]] = self._setup.margin0

    @property
    def n_outputs(self) -> int:
        """Scores per example: the number of classes for multiclass, else 1."""
        return self._setup.n_out

    def _buffer(self, d: int) -> SupportBuffer:
        if self._buf is None:
            self._buf = SupportBuffer(
                d, self.budget, n_outputs=self.columns_per_output * self._setup.n_out
            )
        return self._buf

    def _xsq(self, x: np.ndarray) -> float:
        """‖x‖² computed by the compiled core, as the block loop computes it."""
        _kernels.sq_norms(x.reshape(1, -1), self._one)
        return float(self._one[0])

    def _compiled_block(self) -> bool:
        """Whether the compiled block loop can run this kernel and loss."""
        assert self.kernel is not None
        s = self._setup
        return self.kernel.compiled() is not None and (s.loss_id != L_PYTHON or s.nu_mode != NU_OFF)

    def _margin(self) -> float:
        """The margin below which novelty detection flags a point."""
        return self._setup.margin

    def _output(self, Fb: np.ndarray) -> Any:
        """The decision value returned by ``decision_one`` for scores Fb (offsets included)."""
        if self.task == "multiclass":
            return Fb
        if self.task == "novelty":
            return float(Fb[0] - self._margin())
        return float(Fb[0])

    def _decision_values(self, F: np.ndarray) -> np.ndarray:
        """The decision values of a block of scores (n × C, offsets included), as
        :meth:`_output` gives them one row at a time."""
        if self.task == "multiclass":
            return F
        if self.task == "novelty":
            return F[:, 0] - self._margin()
        return F[:, 0]

    def _sync(self) -> None:
        """Record the compiled update's new buffer size and head (from the state vector) in
        the buffer object."""
        buf, st, S = self._buf, self._state, self._fields
        assert buf is not None
        buf.size, buf.head = int(st[S["m"]]), int(st[S["head"]])
        buf.touch()

    def learn_predict_many(self, X, y):
        """CSR rows through ``_learn_predict_sparse``; dense rows through the compiled block
        loop (``_learn_predict_block``) when it can run this kernel and loss, else one at a
        time."""
        if (csr := self._csr_block(X)) is not None:
            return self._learn_predict_sparse(csr, y)
        if not self._compiled_block():
            return super().learn_predict_many(X, y)
        return self._learn_predict_block(X, y)

    def _loop(self) -> tuple[Callable[..., None], tuple[np.ndarray, ...]]:
        """The subclass's compiled block loop and the arrays it takes after the kernel row
        (offsets, then work), read once the buffer exists (an abstract hook: NORMA and SVMD,
        the registered subclasses, define it)."""
        raise NotImplementedError(f"{type(self).__name__} must define _loop")

    def _learn_predict_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Predict then learn the rows of X with the compiled block loop (:meth:`_loop`)."""
        self._buffer(X.shape[1])  # the loop's arrays are sized with the buffer
        loop, args = self._loop()
        return self._run_block(loop, X, y, *args)

    def _learn_predict_sparse(self, X: Any, y: np.ndarray) -> np.ndarray:
        """Predict then learn CSR rows (a subclass that declares ``sparse_input``; any other
        refuses them): with a compiled kernel and loss, the block loop on the examples'
        marks and CSR rows, one call per block of rows (:meth:`MarkedRows.learn`), else one
        row at a time (:meth:`_learn_predict_marked`)."""
        if not getattr(self, "sparse_input", False):
            raise TypeError(f"{self.name} takes only dense rows; add dense=true to the data set")
        if not self._compiled_block():
            return self._learn_predict_marked(X, y)
        kern = compiled_kernel(self.kernel)
        self._sparse = rows = open_rows(self.name, self._sparse, self._buf, X, self._buffer)
        loop, args = self._loop()

        def step(marks: np.ndarray, y: np.ndarray, pred: np.ndarray, sparse: Any) -> None:
            self._run_block(loop, marks, y, *args, pred=pred, sparse=sparse)

        assert self._buf is not None
        return rows.learn(kern, X, y, self._buf, step)

    def _learn_predict_marked(self, X: Any, y: np.ndarray) -> np.ndarray:
        """Predict then learn each CSR row from Python (an abstract hook, as :meth:`_loop`:
        NORMA and SVMD define it)."""
        raise NotImplementedError(f"{type(self).__name__} must define _learn_predict_marked")

    def _model(self, offsets: np.ndarray) -> tuple[np.ndarray, ...]:
        """What the compiled loops update: the buffer's rows, squared norms and
        coefficients, the state array and ``offsets``."""
        buf = self._buf
        assert buf is not None
        return buf.X, buf.sq, buf.alpha, self._state, offsets

    def _run_block(
        self,
        block: Callable[..., None],
        X: np.ndarray,
        y: np.ndarray,
        offsets: np.ndarray,
        *work: np.ndarray,
        pred: np.ndarray | None = None,
        sparse: Any = None,
    ) -> np.ndarray:
        """Predict then learn every row of X with the compiled block loop ``block`` (its
        arguments: the configuration, the model (:meth:`_model`), the examples, the
        predictions (into ``pred`` when given), the kernel row, ``work`` and ``sparse``, a
        SparseBlock of CSR rows whose marks X holds); return the predictions."""
        buf = self._buffer(X.shape[1])
        pred = np.empty(len(X)) if pred is None else pred
        st, evals = self._state, self._fields["kernel_evals"]
        st[evals] = buf.kernel_evals
        block(self._cfg, self._model(offsets), X, y, pred, buf.krow, *work, sparse)
        buf.kernel_evals = int(st[evals])
        self._sync()
        return pred
