"""The budget perceptron: a kernel perceptron that drops its most redundant support vector.

It is written in plain Python on kbench's public building blocks: a
:class:`~kbench.api.SupportBuffer` holds the support vectors, and
:meth:`SupportBuffer.row` computes one kernel row per example, in kbench's compiled
core for the built-in kernels and through ``Kernel.row`` for any other.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from kbench.api import Algorithm, SupportBuffer, param


class BudgetPerceptron(Algorithm):
    """Budget perceptron (Crammer, Kandola and Singer, NIPS 2003): drop the most redundant vector.

    Predict ``sign f(x)`` with ``f(x) = Σ αᵢ k(xᵢ, x)``. When ``y f(x) ≤ beta``, x joins
    the support set with ``α = y``. Once the set holds ``budget`` vectors, the vector
    that the rest of the model classifies with the largest margin,
    ``argmax_i yᵢ (f(xᵢ) − αᵢ k(xᵢ, xᵢ))``, makes room for x: it is the one the model
    needs least. The values ``f(xᵢ)`` are kept up to date from the kernel row each
    update computes anyway, so a removal costs one extra kernel row.

    Parameters
    ----------
    budget
        Maximum number of support vectors.
    beta
        Margin at or below which an example updates the model (0: mistakes only).
    """

    name = "budget_perceptron"
    tasks = frozenset({"binary"})
    test_params: ClassVar[dict[str, Any]] = {"budget": 20}

    budget: int = param(100, low=1)
    beta: float = param(0.0, low=0.0)

    def __post_init__(self) -> None:
        self._buf: SupportBuffer | None = None
        self._f = np.zeros(self.budget)  # f(xᵢ) of each stored vector, with xᵢ itself included
        self._kdiag = np.zeros(self.budget)  # k(xᵢ, xᵢ)
        self._removals = 0
        self._diag_evals = 0

    def _buffer(self, d: int) -> SupportBuffer:
        # Allocated on the first example, when the dimension is known.
        if self._buf is None:
            self._buf = SupportBuffer(d, self.budget)
        return self._buf

    def decision_one(self, x: np.ndarray) -> float:
        """``f(x)``; the buffer keeps the kernel row for the ``learn_one`` that follows."""
        buf = self._buffer(len(x))
        return float(buf.scores(buf.row(self.kernel, x))[0])

    def learn_one(self, x: np.ndarray, y: float) -> None:
        """Add x on a margin error, first removing the most redundant vector when full."""
        buf = self._buffer(len(x))
        k = buf.row(self.kernel, x)  # reuses the row predict_one computed for this x
        f = float(buf.scores(k)[0])
        if y * f > self.beta:
            return
        m = buf.size
        if m < self.budget:
            self._f[:m] += y * k
            slot = buf.add(x, y)
        else:
            k = k.copy()  # the removal's kernel row overwrites the buffer's scratch row
            slot = self._remove_most_redundant(m)
            f -= float(buf.alpha[slot, 0]) * k[slot]  # f(x) without the removed vector
            k[slot] = 0.0  # the new vector's own term is added below
            buf.X[slot] = x
            buf.sq[slot] = x @ x
            buf.alpha[slot, 0] = y
            buf.touch()  # the arrays were written directly: cached rows are stale
            self._f[:m] += y * k
        kxx = float(self.kernel.diag(x[None, :])[0])
        self._diag_evals += 1
        self._f[slot] = f + y * kxx
        self._kdiag[slot] = kxx

    def _remove_most_redundant(self, m: int) -> int:
        """Take the most redundant vector out of every stored ``f(xᵢ)``; return its slot."""
        buf = self._buf
        a = buf.alpha[:m, 0]
        j = int(np.argmax(a * self._f[:m] - a * a * self._kdiag[:m]))
        self._f[:m] -= a[j] * buf.row(self.kernel, buf.X[j])
        self._removals += 1
        return j

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        """Labels of a block without learning, from one Gram block per 2048 rows."""
        if self._buf is None:
            return np.ones(len(X))
        return np.where(self._buf.decision_many(self.kernel, X)[:, 0] >= 0.0, 1.0, -1.0)

    def stats(self) -> dict[str, float]:
        """Support vectors, kernel evaluations, removals and the bytes the model holds."""
        buf = self._buf
        return {
            "n_support": buf.size if buf else 0,
            "kernel_evals": (buf.kernel_evals if buf else 0) + self._diag_evals,
            "removals": self._removals,
            "model_bytes": buf.nbytes() + self._f.nbytes + self._kdiag.nbytes if buf else 0,
        }
