"""ALMA₂ with kernels, approximate maximal margin classification (Gentile 2001), binary."""

from __future__ import annotations

import math

import numpy as np

from kbench.api import LogUniform, hookimpl, param
from kbench.cython_core._alma import alma_block
from kbench.learners import ExpansionLearner


class Alma2(ExpansionLearner):
    """ALMA₂ with kernels (Gentile 2001, ALMA_p of its Fig. 1 with p = 2), binary.

    Instances enter normalized, ``x̂ = φ(x)/√k(x, x)``; ``w = Σ_i α_i φ(x_i)``, ``w₁ = 0``,
    ``k = 1``. Predict ``sign(w·x̂)``. When ``y w·x̂ ≤ (1 − α) γ_k``, ``γ_k = B/√k``: the
    update ``w′ = w + η_k y x̂``, ``η_k = C/√k``, then ``w ← w′/max(1, ‖w′‖)`` (the unit
    ball) and ``k ← k + 1``. In the kernel form x is stored with ``α = η_k y/√k(x, x)``,
    ``‖w′‖² = ‖w‖² + 2η_k y w·x̂ + η_k²`` is tracked and the projection scales every α.
    An example with ``k(x, x) = 0`` has no direction and is not learned.

    Parameters
    ----------
    alpha
        The margin approximation α ∈ (0, 1] (1: the margin test at 0); kbench's default 0.9.
    B
        B > 0 of ``γ_k = B/√k``; unset: the paper's ``1/α``.
    C
        C > 0 of ``η_k = C/√k``; the paper's ``√2`` by default.
    """

    name = "alma2"
    paper = "Gentile (2001). A new approximate maximal margin classification algorithm. JMLR 2."
    tasks = frozenset({"binary"})
    reads_self_kernel = True
    search_space = {"alpha": LogUniform(0.05, 1.0), "C": LogUniform(0.1, 10.0)}

    alpha: float = param(0.9, low=0.0, high=1.0, low_open=True)
    B: float | None = param(None, low=0.0, low_open=True)
    C: float = param(math.sqrt(2.0), low=0.0, low_open=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._state = np.array([1.0, 0.0])  # the update count k and ‖w‖²
        B = 1.0 / self.alpha if self.B is None else float(self.B)
        self.learn_with(
            alma_block,
            signs=True,
            state=self._state,
            alpha=float(self.alpha),
            B=B,
            C=float(self.C),
        )


@hookimpl
def kbench_register_algorithms(register):
    """Register ALMA₂."""
    register(Alma2)
