"""The self-tuned Forgetron: a kernel perceptron on a budget that shrinks, then forgets."""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.api import hookimpl, param
from kbench.cython_core._budget_perceptrons import ForgetronState, forgetron_block
from kbench.learners import ExpansionLearner, Rows, labels


class Forgetron(ExpansionLearner):
    """Self-tuned Forgetron (Dekel, Shalev-Shwartz and Singer 2008), binary.

    A kernel perceptron with at most B support vectors, kept in a queue. On a mistake
    (``y_t f_t(x_t) ≤ 0``), with M_t the number of mistakes so far (this one included):

    * perceptron step ``f' = f_t + y_t k(x_t, ·)``;
    * if f' has at most B terms, ``f_{t+1} = f'``;
    * otherwise let r be the oldest support vector, ``σ = |α_r|`` its current weight,
      ``μ = y_r f'(x_r)`` and, with the paper's removal damage ``Ψ(λ, μ) = λ² + 2λ − 2λμ``,
      take the shrinking coefficient as the largest ``φ ∈ (0, 1]`` with
      ``Q + Ψ(σφ, φμ) ≤ (15/32) M_t`` — the margin enters as ``φμ``, the margin of x_r
      under the shrunk function ``φ f'``, so ``Ψ(σφ, φμ) = (σ² − 2σμ)φ² + 2σφ``; then
      ``Q ← Q + Ψ(σφ, φμ)`` and ``f_{t+1} = φ f' − φ σ y_r k(x_r, ·)`` (shrink every
      coefficient by φ, then remove the oldest).

    Shrinking is applied through one global scale factor. The removal needs ``f'(x_r)``,
    one more kernel row on each mistake once the budget is full. With B at least the
    number of mistakes it is exactly the kernel perceptron. The Forgetron is defined for
    binary problems only.

    Parameters
    ----------
    budget
        B ≥ 1, the largest number of support vectors.
    """

    name = "forgetron"
    paper = "Dekel, Shalev-Shwartz and Singer (2008). The Forgetron: a kernel-based perceptron on a budget. SIAM Journal on Computing 37(5)."
    tasks = frozenset({"binary"})
    test_params = {"budget": 12}

    budget: int = param(100, low=1)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.model.limit = self.budget
        self._state = ForgetronState()
        self.learn_with(forgetron_block, state=self._state, budget=self.budget)

    def learn_predict_many(self, X, y) -> np.ndarray:
        rows = Rows.of(X)
        y = labels(y, rows.n)
        if self.model.spec.compiled or rows.sparse:
            return self._learn(rows, y)
        if rows.row0 is not None:  # learn_one: the caller's row, its kernel row maybe cached
            return self._learn_with_oldest(rows.row0, y)
        X = rows.dense()
        return np.concatenate([self._learn_with_oldest(X[i], y[i : i + 1]) for i in range(rows.n)])

    def _learn(self, rows: Rows, y: np.ndarray) -> np.ndarray:
        pred = self.learn_rows(rows, y)
        self.model.scale = self._state.cs
        return pred

    def _learn_with_oldest(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """One row with a kernel the loop cannot compute: the oldest vector's kernel row,
        which the loop needs when this row is a mistake on a full store, computed here."""
        store, state = self.model.store, self._state
        if store is not None and store.size == self.budget and y[0] * self.decision_one(x) <= 0:
            m, r = store.size, state.head
            state.krow2[:m] = self.kernel.row(
                store.X[:m], store.X[r], sq=store.sq[:m], xsq=store.sq[r]
            )
            store.kernel_evals += m
            state.have_row2 = True
        return self._learn(Rows.one(x), y)

    def stats(self) -> dict[str, Any]:
        st = self._state
        return self.model.stats() | {"scale": st.cs, "removal_damage": st.Q}


@hookimpl
def kbench_register_algorithms(register):
    """Register the Forgetron."""
    register(Forgetron)
