"""The base of a learner whose model is one kernel expansion grown by one compiled loop.

A subclass declares its parameters and writes ``learn_predict_many(X, y)`` as one call of
``self.model.learn(loop, Rows.of(X), y, **its parameters)``; every other method of the
online protocol (one row or a block, dense or CSR) comes from here and goes through that
one path: ``learn_one`` is ``learn_predict_many`` on a one-row :class:`Rows`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from kbench.core.components import Algorithm
from kbench.learners.expansion import Expansion
from kbench.learners.rows import Rows


class ExpansionLearner(Algorithm):
    """An online learner over one growable kernel expansion (:class:`Expansion`,
    ``self.model``), dense or CSR rows, binary or multiclass (one column per class)."""

    #: CSR rows are learned with the support vectors kept sparse.
    sparse_input: ClassVar[bool] = True
    #: The learner's loop reads k(x, x): a third-party kernel's ``diag`` then gives it.
    reads_self_kernel: ClassVar[bool] = False

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

    def learn_predict_many(self, X: Any, y: np.ndarray) -> np.ndarray:
        """Predict then learn the rows of X: each subclass's one learning path (one call of
        ``self.model.learn`` with its block loop). Required: Algorithm's default, a loop
        over ``learn_one``, would come back here, since ``learn_one`` calls this."""
        raise NotImplementedError(
            f"{type(self).__name__} must define learn_predict_many (its one learning path)"
        )

    def learn_one(self, x: Any, y: float) -> None:
        label = self._label
        label[0] = y  # one array reused: learn_one runs once per example
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
