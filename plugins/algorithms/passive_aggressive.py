"""Kernel passive–aggressive learning: PA, PA-I and PA-II (Crammer et al. 2006), binary."""

from __future__ import annotations

from typing import Literal

import numpy as np

from kbench.api import hookimpl, param
from kbench.cython_core._pa import Variant, pa_block
from kbench.learners import ExpansionLearner

VARIANTS = {"PA": Variant.PA, "PA-I": Variant.PA_I, "PA-II": Variant.PA_II}


class PassiveAggressive(ExpansionLearner):
    """Kernel passive–aggressive classifier without a budget, binary (``paper``).

    ``f(x) = Σ_i α_i k(x_i, x)``. On a hinge loss ``ℓ = max(0, 1 − y f(x)) > 0`` the example
    is stored with ``α = τ y``: PA ``τ = ℓ / k(x, x)``, PA-I ``τ = min(C, ℓ / k(x, x))``,
    PA-II ``τ = ℓ / (k(x, x) + 1/(2C))``. Every example with a positive loss becomes a
    support vector. kbench defaults to PA-I (the ramp-SVM paper does not say which it ran).

    Parameters
    ----------
    variant
        ``PA``, ``PA-I`` or ``PA-II``.
    C
        Aggressiveness C > 0 of PA-I and PA-II (unused by PA).
    """

    name = "pa"
    paper = "Crammer, Dekel, Keshet, Shalev-Shwartz and Singer (2006). Online passive-aggressive algorithms. JMLR 7."
    tasks = frozenset({"binary"})
    test_params = {"C": 1.0}
    reads_self_kernel = True

    variant: Literal["PA", "PA-I", "PA-II"] = param("PA-I")
    C: float = param(1.0, low=0.0, low_open=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        variant = self.choice("variant", VARIANTS)
        self.learn_with(pa_block, signs=True, variant=variant, C=float(self.C))

    def snapshot(self) -> dict[str, np.ndarray]:
        """Copies of the support vectors X (dense or CSR) and their α_i = τ_i y_i."""
        store = self.model.store
        alpha = store.alpha[: store.size, 0].copy() if store else np.zeros(0)
        return {"X": self.model.support_vectors(), "alpha": alpha}


@hookimpl
def kbench_register_algorithms(register):
    """Register the passive–aggressive learners."""
    register(PassiveAggressive)
