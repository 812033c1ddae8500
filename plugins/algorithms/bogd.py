"""Bounded online gradient descent (BOGD) with uniform or weighted random removal."""

from __future__ import annotations

from typing import Literal

import numpy as np

from kbench import hookimpl
from kbench.core.components import param
from kbench.cython_core import _bogd, _budget_perceptrons
from kbench.learners import seed_state
from kbench.plugins.algorithms._budget import BudgetLearner


class BOGD(BudgetLearner):
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
    #: CSR rows are learned with the same update, support vectors kept sparse.
    sparse_input = True
    state_stats = {"scale": 1, "removals": 3}

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
        self._rng = seed_state(self.seed)
        self._loss_c = self.loss.compiled() if self.loss is not None else None
        self._state = np.array([0.0, 1.0, 0.0, 0.0])  # m, scale, kernel evaluations, removals

    def _scale(self):
        return float(self._state[1])

    @property
    def sparse_loop(self) -> bool:  # type: ignore[override]
        """CSR blocks in compiled code when the loss is compiled (else its derivative comes
        from Python, one row at a time)."""
        return self._loss_c is not None

    def _fast_ok(self):
        return self._compiled is not None and self._loss_c is not None

    def _run(self, X, y, pred, have_row, sparse=None):
        buf, st = self._buf, self._state
        loss_kind, p1, g = (*self._loss_c, 0.0) if self._loss_c is not None else (-1, 0.0, 0.0)
        if loss_kind < 0:
            out = np.empty(1)
            _budget_perceptrons.scores(buf.krow, buf.alpha, buf.size, st[1], out)
            g = float(self.loss.derivative(float(out[0]), float(y[0])))
        weighted = self.sampling == "weighted"
        with self._counted(evals=2):
            _bogd.bogd_block(
                self._kargs(), buf.X, buf.sq, buf.alpha.reshape(-1), st, self._rng, self.eta,
                self._lam, weighted, loss_kind, p1, X, y, pred, buf.krow, have_row, g, sparse,
            )  # fmt: skip

    def regulariser(self) -> float:
        """The λ in use: the given one, else 1/(ηB)."""
        return self._lam


@hookimpl
def kbench_register_algorithms(register):
    """Register BOGD."""
    register(BOGD)
