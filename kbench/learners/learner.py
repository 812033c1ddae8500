"""The base of a learner whose model is one kernel expansion grown by one compiled loop.

A subclass declares its parameters and its one learning path: its compiled block loop and
the loop's keyword arguments, given once to :meth:`ExpansionLearner.learn_with`, or, when
it needs more (a loss without a compiled form, arrays made per call), its own
``learn_predict_many(X, y)`` around ``self.model.learn(loop, Rows.of(X), y, **params)``.
Every other method of the online protocol (one row or a block, dense or CSR) comes from
here and goes through that one path: ``learn_one`` is ``learn_predict_many`` on a one-row
:class:`Rows`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from kbench.core.components import Algorithm
from kbench.learners.expansion import BlockLoop, Expansion
from kbench.learners.rows import Rows, labels

_F64 = np.dtype(np.float64)


class ExpansionLearner(Algorithm):
    """An online learner over one growable kernel expansion (:class:`Expansion`,
    ``self.model``), dense or CSR rows, binary or multiclass (one column per class)."""

    #: CSR rows are learned with the support vectors kept sparse.
    sparse_input: ClassVar[bool] = True
    #: The learner's loop reads k(x, x): a third-party kernel's ``diag`` then gives it.
    reads_self_kernel: ClassVar[bool] = False
    _loop: BlockLoop | None = None
    #: learn_one calls the model's one-row step itself: the learner learns through
    #: ``learn_with``'s loop alone (no ``learn_predict_many`` of its own).
    _direct = False

    def __post_init__(self) -> None:
        super().__post_init__()
        assert self.kernel is not None  # uses_kernel: Algorithm refuses a missing kernel
        outputs = self.n_classes if self.task == "multiclass" else 1
        self.model = Expansion(self.name, self.kernel, outputs, self.reads_self_kernel)
        self._label = np.empty(1)

    def choice(self, name: str, options: dict[str, Any]) -> Any:
        """The option of parameter ``name`` (its value a key of ``options``), or a one-line
        error listing them."""
        value = getattr(self, name)
        if value not in options:
            raise ValueError(
                f"{self.name}: unknown {name} {value!r} (choose from {', '.join(options)})"
            )
        return options[value]

    def learn_with(self, loop: BlockLoop, *, signs: bool = False, **params: Any) -> None:
        """Declare the learning path: the block ``loop`` and its keyword arguments (made once
        here: ``learn_one`` passes them once per example, so they are the learner's state
        objects and parameters, never values that change between calls); ``signs``: labels
        must be −1 or +1."""
        self._loop, self._params = loop, params
        self._signs = self.name if signs else None
        self._direct = type(self).learn_predict_many is ExpansionLearner.learn_predict_many

    def learn_predict_many(self, X: Any, y: np.ndarray) -> np.ndarray:
        """Predict then learn the rows of X: one call of ``self.model.learn`` with the loop
        of :meth:`learn_with`, or a subclass's own path. One of the two is required:
        Algorithm's default, a loop over ``learn_one``, would come back here."""
        if self._loop is None:
            raise NotImplementedError(
                f"{type(self).__name__} must call learn_with or define learn_predict_many"
            )
        return self.model.learn_array(self._loop, X, y, self._params, self._signs)

    def learn_rows(
        self,
        rows: Rows,
        y: np.ndarray,
        *,
        per_row: Mapping[str, np.ndarray] | None = None,
        **more: Any,
    ) -> np.ndarray:
        """The loop of :meth:`learn_with` on checked rows and labels, its keywords and
        ``more``, this call's own (a gradient given from Python, arrays made per call;
        ``per_row`` as for :meth:`Expansion.learn`): the call of a learner that writes its
        own ``learn_predict_many``."""
        assert self._loop is not None  # learn_with came first, in __post_init__
        params = {**self._params, **more} if more else self._params
        return self.model.learn_block(self._loop, rows, y, params, per_row)

    def learn_one(self, x: Any, y: float) -> None:
        label = self._label
        label[0] = y  # one array reused: learn_one runs once per example
        if self._direct and type(x) is np.ndarray and x.dtype is _F64 and x.ndim == 1:
            # The runner's row, once per example: the same loop, called with fewer steps.
            if self._signs and y != 1.0 and y != -1.0:
                labels(label, 1, signs=self._signs)  # its one-line error
            self.model.learn_one(self._loop, x, label, self._params)  # type: ignore[arg-type]
        else:
            self.learn_predict_many(Rows.one(x), label)

    def decision_one(self, x: Any) -> Any:
        f = self.model.decision_one(x)
        return f.copy() if self.task == "multiclass" else float(f[0])

    def decision_many(self, X: Any) -> np.ndarray:
        """Decision values of the rows of X (dense or CSR), without learning: shape (n,),
        or (n, C) class scores on multiclass tasks."""
        F = self.model.decisions(Rows.of(X))
        return F if self.task == "multiclass" else F[:, 0]

    def predict_many(self, X: Any) -> np.ndarray:
        return self.labels_of(self.decision_many(X))

    def stats(self) -> dict[str, Any]:
        return self.model.stats()
