"""Bounded online gradient descent (BOGD) with uniform or weighted random removal."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from kbench.api import hookimpl, param
from kbench.cython_core._bogd import BogdState, bogd_block
from kbench.learners import ExpansionLearner, Rows, labels, seed_state


class BOGD(ExpansionLearner):
    """Bounded online gradient descent (Zhao, Wang, Wu, Jin and Hoi 2012), binary.

    Online gradient descent on ``λ/2 ‖f‖² + ℓ(f(x), y)`` with at most B support vectors.
    With ``g = ℓ'(f_t(x_t), y_t)`` each step is ``f ← (1 − ηλ) f − η g k(x_t, ·)``. When
    ``g ≠ 0`` and B vectors are already stored, one vector r is first removed at random
    and the others are rescaled so that the removal is unbiased,
    ``E[Σ_{j≠r} α_j/(1 − p_j) k(x_j, ·)] = Σ_j α_j k(x_j, ·)``:

    * ``uniform`` (BOGD): ``p_j = 1/B``, every other coefficient times ``B/(B − 1)``;
    * ``weighted``: ``p_j = (1 − |α_j|/Σ_i|α_i|)/(B − 1)``, so vectors with small
      coefficients are removed more often, each kept one divided by ``1 − p_j``. These
      are not claimed to be the exact probabilities of the paper's BOGD++ (which also
      samples by coefficient size); they sum to one, favour small coefficients and keep
      every ``p_j ≤ 1/(B−1)``, so no rescaling factor can blow up.

    Draws come from a seeded SplitMix64 generator. The (1 − ηλ) shrinking and the
    uniform rescaling are kept in one scale factor. Note that ``(1 − ηλ)·B/(B − 1) > 1``
    lets the coefficients grow; choose ``ηλ ≥ 1/B`` for a bounded model. The default λ
    is ``1/(ηB)``, the smallest λ for which the shrinking offsets the rescaling (to first
    order in 1/B), so the model neither grows nor forgets faster than removal requires
    (λ = 0.02 at the default η = 0.5 and B = 100). A fixed λ tuned at one budget does
    not carry to another: with λ = 0.02 at B = 1600 the shrinking leaves an effective
    memory of about 1/(ηλ) = 100 steps and the model ends as one class on a9a, while
    λ = 1/(ηB) gives 81.6 % held-out accuracy there (docs/budgeted.md).

    Parameters
    ----------
    budget
        B ≥ 2, the largest number of support vectors.
    eta
        Step size η > 0.
    lam
        Regulariser λ ≥ 0, with ηλ < 1; default ``1/(ηB)``.
    sampling
        ``uniform`` or ``weighted`` removal.
    """

    name = "bogd"
    paper = "Zhao, Wang, Wu, Jin and Hoi (2012). Fast bounded online gradient descent algorithms for scalable kernel-based online learning. ICML."
    tasks = frozenset({"binary"})
    uses_loss = True
    default_loss = "hinge"
    test_params = {"budget": 12}

    budget: int = param(100, low=2)
    eta: float = param(0.5, low=0.0, low_open=True)
    lam: float | None = param(None, low=0.0)
    sampling: Literal["uniform", "weighted"] = param("uniform")

    def __post_init__(self) -> None:
        super().__post_init__()
        eta, budget, lam, sampling = self.eta, self.budget, self.lam, self.sampling
        # None: the shrinking that offsets the B/(B − 1) rescaling (ηλ = 1/B < 1).
        lam_used = 1.0 / (eta * budget) if lam is None else lam
        if eta * lam_used >= 1.0:
            raise ValueError(
                f"bogd: eta·lam must be < 1 (the shrink factor 1 − ηλ must stay "
                f"positive), got {eta * lam_used!r}"
            )
        self._lam = lam_used
        if sampling not in ("uniform", "weighted"):
            raise ValueError(f"bogd: sampling must be uniform or weighted, got {sampling!r}")
        self.model.limit = budget
        self._rng = seed_state(self.seed)
        self._state = BogdState()
        loss_c = self.loss.compiled() if self.loss is not None else None
        # A compiled loss is a parameter of the loop like the others; without one the loop
        # is given the derivative of each row (learn_predict_many).
        self._python_loss = loss_c is None
        compiled = {} if loss_c is None else {"loss_kind": loss_c[0], "loss_p1": loss_c[1]}
        self.learn_with(
            bogd_block,
            state=self._state,
            rng=self._rng,
            budget=self.budget,
            eta=self.eta,
            lam=self._lam,
            weighted=self.sampling == "weighted",
            **compiled,
        )
        self._direct = not self._python_loss  # learn_one: the runner's row to the loop

    def learn_one(self, x: Any, y: float) -> None:
        super().learn_one(x, y)
        self.model.scale = self._state.cs

    def learn_predict_many(self, X, y) -> np.ndarray:
        rows = Rows.of(X)
        y = labels(y, rows.n)
        if not self._python_loss:
            return self._learn(rows, y)
        pred = np.empty(rows.n)
        for i in range(rows.n):  # a loss without a compiled form: its derivative from Python
            x = rows.row0 if rows.row0 is not None else rows.csr[i] if rows.sparse else rows.X[i]
            g = float(self.loss.derivative(self.decision_one(x), float(y[i])))
            pred[i] = self._learn(Rows.one(x), y[i : i + 1], loss_kind=-1, loss_p1=0.0, g_given=g)[
                0
            ]
        return pred

    def _learn(self, rows: Rows, y: np.ndarray, **loss: Any) -> np.ndarray:
        pred = self.learn_rows(rows, y, **loss)
        self.model.scale = self._state.cs
        return pred

    def stats(self) -> dict[str, Any]:
        return self.model.stats() | {
            "scale": self._state.cs,
            "removals": float(self._state.removals),
        }

    def regulariser(self) -> float:
        """The λ in use: the given one, else 1/(ηB)."""
        return self._lam


@hookimpl
def kbench_register_algorithms(register):
    """Register BOGD."""
    register(BOGD)
