"""The averaged kernel perceptron (Freund and Schapire 1999), binary and multiclass, without a budget.

The baseline of the Huller paper (specs/003 §3.7), run for one or several passes. It
learns exactly like the kernel perceptron (``perceptron``) and predicts with the average
of all its iterates, kept in closed form: per stored example the sum α of its updates
and the sum β of its updates weighted by the round before them, so that the average
after T rounds is Σᵢ (αᵢ − βᵢ/T) k(xᵢ, ·).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.api import hookimpl
from kbench.cython_core._averaged_perceptron import AveragedPerceptronState, averaged_block
from kbench.learners import ExampleIds, Expansion, ExpansionLearner, Rows, labels

_F64 = np.dtype(np.float64)


class AveragedPerceptron(ExpansionLearner):
    """Averaged kernel perceptron: the mistake-driven perceptron, predicting with the mean of its iterates.

    Binary: on ``y f(x) ≤ 0`` (f the current perceptron) add ``y k(x, ·)``. Multiclass
    (one score per class, as ``perceptron``): on a wrong argmax add k(x, ·) to the true
    class and subtract it from the predicted one. Predictions use the average of the
    perceptrons after rounds 1..T (an update made in round t counts (T − t + 1)/T); rounds
    continue across the passes of the runner's ``epochs``. An example stored in an earlier
    pass (known by its row in the stream, see :class:`~kbench.learners.ExampleIds`) is
    updated in place when it is a mistake again, not stored twice. No bias, no budget, no
    hyper-parameters.

    CSR rows are learned with the support vectors kept sparse. They have no identity
    across passes: a row stored in an earlier pass is stored again, which leaves the
    averaged function unchanged (its coefficients are summed over equal rows) but counts
    it twice in ``n_support``.
    """

    name = "averaged_perceptron"
    paper = "Freund and Schapire (1999). Large margin classification using the perceptron algorithm. Machine Learning 37."
    tasks = frozenset({"binary", "multiclass"})

    def __post_init__(self) -> None:
        super().__post_init__()
        self._C = self.n_classes if self.task == "multiclass" else 1
        # Two columns per output: α, then β.
        self.model = Expansion(self.name, self.model.kernel, 2 * self._C)
        self._ids = ExampleIds()
        self._state = AveragedPerceptronState()
        self.learn_with(averaged_block, state=self._state)
        # learn_one's keywords, made once: the row's id goes into one reused array.
        self._id1 = np.full(1, -1, dtype=np.int64)
        self._one = {**self._params, "ids": self._id1}

    def learn_one(self, x: Any, y: float) -> None:
        if type(x) is np.ndarray and x.dtype == np.float64 and x.ndim == 1:
            # The runner's row, once per example: learn_predict_many's steps, inline.
            self._id1[0] = self._ids.one(x)
            self._state.know(self._ids.n)
            self._label[0] = y
            self.model.learn_one(averaged_block, x, self._label, self._one)
        else:
            super().learn_one(x, y)

    def learn_predict_many(self, X: Any, y: Any) -> np.ndarray:
        if type(X) is np.ndarray and X.dtype is _F64 and X.ndim == 2 and X.flags.c_contiguous:
            # The runner's block: its ids, then the model's own checks (Rows made only if
            # they find the block is not one it takes as it is).
            y = labels(y, X.shape[0])
            ids = self._ids.block(X)
            self._state.know(self._ids.n)
            return self.model.learn_array(averaged_block, X, y, self._params, per_row={"ids": ids})
        rows = Rows.of(X)
        y = labels(y, rows.n)
        if rows.sparse:
            ids = np.full(rows.n, -1, dtype=np.int64)
        elif rows.row0 is not None:
            ids = np.full(1, self._ids.one(rows.row0), dtype=np.int64)
        else:
            ids = self._ids.block(rows.X)
        self._state.know(self._ids.n)
        return self.learn_rows(rows, y, per_row={"ids": ids})

    def _averaged(self, raw: np.ndarray) -> np.ndarray:
        """The averaged scores (n × C) from the raw ones [α·k | β·k] (n × 2C)."""
        averaged = np.empty((raw.shape[0], self._C))
        self._state.outputs(raw, averaged)  # compiled: NumPy's calls cost more on one row
        return averaged

    def decision_one(self, x: Any) -> Any:
        raw, C, T = self.model.decision_one(x), self._C, self._state.rounds
        if C == 1:  # in scalars: NumPy's calls would cost more than the sum
            return float(raw[0] - raw[1] / T) if T else 0.0
        return self._averaged(raw[None, :])[0]

    def decision_function(self, X: Any, *, average: bool = True) -> np.ndarray:
        """Scores of the averaged hypothesis (or of the current perceptron, ``average=False``)."""
        raw = self.model.decisions(Rows.of(X))
        out = self._averaged(raw) if average else raw[:, : self._C]
        return out if self.task == "multiclass" else out[:, 0]

    def decision_many(self, X: Any) -> np.ndarray:
        return self.decision_function(X)

    def stats(self) -> dict[str, Any]:
        st = self.model.stats()
        return {
            "n_support": st["n_support"],
            "kernel_evals": st["kernel_evals"],
            "rounds": self._state.rounds,
            "mistakes": self._state.mistakes,
            "model_bytes": st["model_bytes"],
        }


@hookimpl
def kbench_register_algorithms(register):
    """Register the averaged kernel perceptron."""
    register(AveragedPerceptron)
