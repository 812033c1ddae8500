"""The kernel perceptron, binary and multiclass, without a budget."""

from __future__ import annotations

import numpy as np
from kbench.cython_core import _perceptron

from kbench import hookimpl
from kbench.core.components import Algorithm
from kbench.core.support_buffer import SupportBuffer


class KernelPerceptron(Algorithm):
    """Kernel perceptron (Rosenblatt 1958, in the kernel form of Freund and Schapire 1999).

    Binary: predict ``sign f(x)``, ``f = Σ αᵢ k(xᵢ, x)``; when ``y f(x) ≤ 0`` store x with
    ``α = y``. Multiclass (Crammer and Singer's multiclass perceptron with one score per
    class): predict the argmax; on a mistake store x with +1 for the true class and −1
    for the predicted one. Every mistake adds a support vector; there is no budget.
    """

    name = "perceptron"
    tasks = frozenset({"binary", "multiclass"})

    def __init__(self, *, kernel=None, loss=None, task="binary", n_classes=2, seed=0) -> None:
        super().__init__(kernel=kernel, loss=loss, task=task, n_classes=n_classes, seed=seed)
        self._outputs = n_classes if task == "multiclass" else 1
        self._buf: SupportBuffer | None = None

    def _buffer(self, d: int) -> SupportBuffer:
        if self._buf is None:
            self._buf = SupportBuffer(d, 64, n_outputs=self._outputs, growable=True)
        return self._buf

    def decision_one(self, x):
        buf = self._buffer(len(x))
        s = buf.scores(buf.row(self.kernel, x))
        return s if self.task == "multiclass" else float(s[0])

    def learn_one(self, x, y):
        buf = self._buffer(len(x))
        s = buf.scores(buf.row(self.kernel, x))
        if self.task == "multiclass":
            guess = int(np.argmax(s))
            if guess != int(y):
                coef = np.zeros(self._outputs)
                coef[int(y)] = 1.0
                coef[guess] = -1.0
                buf.add(x, coef)
        elif y * s[0] <= 0.0:
            buf.add(x, y)

    def learn_predict_many(self, X, y):
        compiled = self.kernel.compiled()
        if compiled is None:
            return super().learn_predict_many(X, y)
        buf = self._buffer(X.shape[1])
        pred = np.empty(len(X))
        scores = np.empty(self._outputs)
        i = 0
        while True:
            i, buf.size, evals = _perceptron.perceptron_block(
                *compiled, buf.X, buf.sq, buf.alpha, buf.size, X, y, pred, buf.krow, scores, i
            )
            buf.kernel_evals += evals
            buf.touch()
            if i == len(X):
                return pred
            buf.grow()

    def predict_many(self, X):
        if self._buf is None:
            return np.full(len(X), 0.0 if self.task == "multiclass" else 1.0)
        out = self._buf.decision_many(self.kernel, X)
        return self.labels_of(out if self.task == "multiclass" else out[:, 0])

    def stats(self):
        buf = self._buf
        return {
            "n_support": buf.size if buf else 0,
            "kernel_evals": buf.kernel_evals if buf else 0,
            "model_bytes": buf.nbytes() if buf else 0,
        }


@hookimpl
def kbench_register_algorithms(register):
    """Register the kernel perceptron."""
    register(KernelPerceptron)
