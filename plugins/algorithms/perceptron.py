"""The kernel perceptron, binary and multiclass, without a budget."""

from __future__ import annotations

import numpy as np

from kbench import hookimpl
from kbench.core.components import Algorithm
from kbench.cython_core import _perceptron
from kbench.learners.sparse_buffer import SparseSupportBuffer
from kbench.learners.support_buffer import SupportBuffer
from kbench.plugins.algorithms._budget import expansion_stats, run_growing
from kbench.plugins.algorithms._sparse_rows import (
    OneRowMethods,
    buffer_rows,
    compiled_kernel,
    growing_buffer,
    learn_into_store,
)


class KernelPerceptron(OneRowMethods, Algorithm):
    """Kernel perceptron (Rosenblatt 1958, in the kernel form of Freund and Schapire 1999).

    Binary: predict ``sign f(x)``, ``f = Σ αᵢ k(xᵢ, x)``; when ``y f(x) ≤ 0`` store x with
    ``α = y``. Multiclass (Crammer and Singer's multiclass perceptron with one score per
    class): predict the argmax; on a mistake store x with +1 for the true class and −1
    for the predicted one. Every mistake adds a support vector; there is no budget.
    """

    name = "perceptron"
    tasks = frozenset({"binary", "multiclass"})
    #: CSR rows are learned with support vectors kept sparse (the same buffer interface).
    sparse_input = True

    def __post_init__(self) -> None:
        self._outputs = self.n_classes if self.task == "multiclass" else 1
        self._buf: SupportBuffer | SparseSupportBuffer | None = None

    def _buffer(self, d: int, sparse: bool = False) -> SupportBuffer | SparseSupportBuffer:
        self._buf = growing_buffer(self.name, self._buf, d, self._outputs, sparse)
        return self._buf

    def _rows_learned(self):
        return buffer_rows(self._buf)

    def _learn_predict_sparse(self, X, y):
        """Predict then learn the CSR rows with the compiled loop, which stores them in the
        sparse buffer (its pool reserved for the rows beforehand, the buffer doubled when
        full), on stand-in rows that it copies and never reads."""
        compiled = compiled_kernel(self.kernel)
        buf = self._buffer(X.shape[1], sparse=True)
        scores = np.empty(self._outputs)

        def step(stand_in, y, pred, block, i):
            return _perceptron.perceptron_block(
                compiled, np.zeros((buf.capacity, 1)), buf.sq, buf.alpha, buf.size, stand_in, y,
                pred, buf.krow, scores, i, block,
            )  # fmt: skip

        return learn_into_store(buf, compiled, X, y, step, buf.grow)

    def _decision_dense(self, x):
        buf = self._buffer(len(x))
        s = buf.scores(buf.row(self.kernel, x))
        return s if self.task == "multiclass" else float(s[0])

    def _learn_dense(self, x, y):
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
        if (csr := self._csr_block(X)) is not None:
            return self._learn_predict_sparse(csr, y)
        compiled = self.kernel.compiled()
        if compiled is None:
            return super().learn_predict_many(X, y)
        buf = self._buffer(X.shape[1])
        pred = np.empty(len(X))
        scores = np.empty(self._outputs)
        run_growing(buf, len(X), lambda i: _perceptron.perceptron_block(
            compiled, buf.X, buf.sq, buf.alpha, buf.size, X, y, pred, buf.krow, scores, i
        ))  # fmt: skip
        return pred

    def _decisions(self, X):
        if self._buf is None:
            out = np.zeros((X.shape[0], self._outputs))
        else:
            out = self._buf.decision_many(self.kernel, X)
        return out if self.task == "multiclass" else out[:, 0]

    def stats(self):
        return expansion_stats(self._buf)


@hookimpl
def kbench_register_algorithms(register):
    """Register the kernel perceptron."""
    register(KernelPerceptron)
