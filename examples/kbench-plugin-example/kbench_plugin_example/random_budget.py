"""The random budget perceptron in plain Python, on kbench's learner toolkit.

The same algorithm as kbench's compiled built-in ``rbp``, written as a plugin author
writes one: a :class:`~kbench.api.SupportBuffer` holds the support vectors and computes
each example's kernel row in kbench's compiled core; the rest is a Python loop over the
examples. It draws its discards from the same SplitMix64 sequence as ``rbp``, so the two
make the same predictions from the same seed: the speed difference is the Python loop's
alone (``docs/tutorial.md`` measures it).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from kbench.api import Algorithm, SupportBuffer, param
from kbench.learners import expansion_stats

_MASK = (1 << 64) - 1


class SplitMix64:
    """SplitMix64 (Steele, Lea and Flood 2014), the generator of kbench's budgeted learners:
    one 64-bit word of state, seeded with the learner's seed."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def below(self, n: int) -> int:
        """A uniform index in 0..n−1, from the top 53 bits of the next word."""
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        r = int(((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0) * n)
        return min(r, n - 1)


class RandomBudgetPerceptron(Algorithm):
    """Random budget perceptron (Cavallanti, Cesa-Bianchi and Gentile 2007), binary.

    Predict ``sign f(x)``, ``f(x) = Σ αᵢ k(xᵢ, x)``; on a mistake (``y f(x) ≤ 0``) store x
    with ``α = y``, in place of a support vector drawn uniformly at random once
    ``budget`` are stored.

    Parameters
    ----------
    budget
        Maximum number of support vectors.
    """

    name = "plain_rbp"
    tasks = frozenset({"binary"})
    test_params: ClassVar[dict[str, Any]] = {"budget": 12}

    budget: int = param(100, low=1)

    def __post_init__(self) -> None:
        self._buf: SupportBuffer | None = None
        self._rng = SplitMix64(self.seed)

    def decision_one(self, x: np.ndarray) -> float:
        """``f(x)``; the buffer keeps the kernel row for the ``learn_one`` that follows."""
        if self._buf is None:  # allocated on the first example, when d is known
            self._buf = SupportBuffer(len(x), self.budget)
        return float(self._buf.scores(self._buf.row(self.kernel, x))[0])

    def learn_one(self, x: np.ndarray, y: float) -> None:
        """On a mistake store x (the kernel row is the one ``decision_one`` computed)."""
        if y * self.decision_one(x) <= 0.0:
            self._store(x, y)

    def learn_predict_many(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Predict then learn every row: the runner's block path, one kernel row each."""
        pred = np.empty(len(y))
        for i in range(len(y)):
            f = self.decision_one(X[i])
            pred[i] = 1.0 if f >= 0.0 else -1.0
            if y[i] * f <= 0.0:
                self._store(X[i], y[i])
        return pred

    def _store(self, x: np.ndarray, y: float) -> None:
        """Store x with α = y, in place of a random support vector once the budget is full."""
        buf = self._buf
        if buf.size < self.budget:
            buf.add(x, y)
        else:
            buf.put(self._rng.below(self.budget), x, y)

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        """Labels of a block without learning, from compiled Gram blocks."""
        f = self._buf.decision_many(self.kernel, X)[:, 0] if self._buf else np.zeros(len(X))
        return np.where(f >= 0.0, 1.0, -1.0)

    def stats(self) -> dict[str, Any]:
        """Support vectors, kernel evaluations and the bytes the model holds."""
        return expansion_stats(self._buf)
