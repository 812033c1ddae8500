"""Budget passive–aggressive learning: BPA-S, the simple removal variant (binary)."""

from __future__ import annotations

from typing import Any

from kbench.api import hookimpl, param
from kbench.cython_core._bpa import BpaState, bpa_s_block
from kbench.learners import ExpansionLearner


class BudgetPA(ExpansionLearner):
    """Budget passive–aggressive, simple variant BPA-S (Wang and Vucetic 2010), binary.

    The kernel PA-I update with at most B support vectors. On a hinge loss
    ``ℓ = 1 − y f(x) > 0`` (with ``k = k(x, x)``) the PA-I step is ``τ = min(C, ℓ/k)``.
    Below the budget x is added with ``α = τ y``. At the budget, BPA-S solves the PA-I
    problem ``min ½‖f − f_t‖² + Cξ`` subject to ``y f(x) ≥ 1 − ξ`` with one support
    vector r removed and only the new coefficient free: the solution is
    ``α_new = τ y + α_r k(x_r, x)/k`` (the PA step plus the projection of the removed
    term onto ``k(x, ·)``), and the removed vector is the one minimising the objective,
    which reduces to ``r = argmin_j α_j² (k(x_j, x_j) − k(x_j, x)²/k)`` — an O(B) scan of
    the kernel row already computed for the prediction.

    Parameters
    ----------
    budget
        B ≥ 1, the largest number of support vectors.
    C
        The PA-I aggressiveness C > 0 (largest step).
    """

    name = "bpa_s"
    paper = "Wang and Vucetic (2010). Online passive-aggressive algorithms on a budget. AISTATS."
    tasks = frozenset({"binary"})
    test_params = {"budget": 12}
    reads_self_kernel = True

    budget: int = param(100, low=1)
    C: float = param(1.0, low=0.0, low_open=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.model.limit = self.budget
        self._state = BpaState()
        self.learn_with(
            bpa_s_block, signs=True, state=self._state, budget=int(self.budget), C=float(self.C)
        )

    def stats(self) -> dict[str, Any]:
        return self.model.stats() | {"removals": float(self._state.removals)}


@hookimpl
def kbench_register_algorithms(register):
    """Register BPA-S."""
    register(BudgetPA)
