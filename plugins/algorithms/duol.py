"""DUOL, double updating online learning (Zhao, Hoi and Jin 2011), binary."""

from __future__ import annotations

import numpy as np

from kbench.api import Choice, LogUniform, hookimpl, param
from kbench.cython_core._duol import DuolState, duol_block
from kbench.learners import ExpansionLearner


class Duol(ExpansionLearner):
    """DUOL, double updating online learning (Zhao, Hoi and Jin 2011, Algorithm 1), binary.

    ``f(x) = Σ_i y_i γ_i k(x_i, x)``, 0 ≤ γ_i ≤ C; kbench keeps each support vector's margin
    ``f^i = y_i f(x_i)``. On a margin error, ``ℓ_t = 1 − y_t f(x_t) > 0``, x_t is stored. Among
    the support vectors with ``f^i ≤ 1``, b has the smallest ``w = y_t y_b k(x_t, x_b)`` (the
    last one on ties, the paper's ``≤``). If ``w ≤ −ρ`` (a conflict) the double update: γ_t
    and the increment d of γ_b maximise ``γ ℓ_t + d ℓ_b − ½ k_tt γ² − ½ k_bb d² − w γ d``
    over ``γ ∈ [0, C]``, ``d ∈ [0, C − γ_b]``, ``ℓ_b = 1 − f^b``, by the paper's closed form
    in four cases: ``(C, C − γ_b)`` when ``k_tt C + w(C − γ_b) < ℓ_t`` and
    ``k_bb (C − γ_b) + w C < ℓ_b``; else ``(C, (ℓ_b − wC)/k_bb)`` when that d lies in
    ``[−γ_b, C − γ_b]`` and ``(w²C − wℓ_b − k_tt k_bb C + k_bb ℓ_t)/k_bb > 0``; else
    ``((ℓ_t − w(C − γ_b))/k_tt, C − γ_b)`` when that γ lies in ``[0, C]`` and
    ``ℓ_b − k_bb(C − γ_b) − wγ > 0``; else the stationary point
    ``((k_bb ℓ_t − w ℓ_b)/Δ, (k_tt ℓ_b − w ℓ_t)/Δ)``, ``Δ = k_tt k_bb − w²``. Otherwise x_t
    alone enters with the PA-I step ``γ_t = min(C, ℓ_t / k_tt)``. Every margin f^i then
    moves by ``y_i (γ_t y_t k_it + d y_b k_ib)``. An example with ``k(x, x) = 0`` has no direction
    and is not learned (as in ``pa``). This is the unbudgeted DUOL of the JMLR
    paper (not its budget variants); the loop keeps the support vectors' Gram matrix
    (memory m²), filled from the kernel rows the predictions computed.

    Parameters
    ----------
    C
        The box bound C > 0 of every weight γ_i (kbench's default 10, JSAT's).
    rho
        The conflict threshold ρ ≥ 0: a double update when ``y_t y_b k(x_t, x_b) ≤ −ρ``.
    """

    name = "duol"
    paper = "Zhao, Hoi and Jin (2011). Double updating online learning. JMLR 12."
    tasks = frozenset({"binary"})
    reads_self_kernel = True
    search_space = {"C": LogUniform(0.1, 100.0), "rho": Choice(0.0, 0.1, 0.2, 0.5)}

    C: float = param(10.0, low=0.0, low_open=True)
    rho: float = param(0.0, low=0.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._state = DuolState()
        self.learn_with(
            duol_block, signs=True, state=self._state, C=float(self.C), rho=float(self.rho)
        )

    def snapshot(self) -> dict[str, np.ndarray]:
        """Copies of the support vectors X (dense or CSR), their α_i = y_i γ_i and margins f^i."""
        store = self.model.store
        m = store.size if store else 0
        alpha = store.alpha[:m, 0].copy() if store else np.zeros(0)
        return {
            "X": self.model.support_vectors(),
            "alpha": alpha,
            "margins": self._state.margins[:m].copy(),
        }


@hookimpl
def kbench_register_algorithms(register):
    """Register DUOL."""
    register(Duol)
