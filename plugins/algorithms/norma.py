"""NORMA: online kernel gradient descent with a circular budget (Kivinen, Smola, Williamson 2004).

In the form of the SVMD paper (Vishwanathan, Schraudolph and Smola 2006, Algorithm 1 and
eqs. 31–35): any registered loss, multiclass through the delta kernel on labels,
novelty detection, ε-insensitive regression, offsets, and the ν-trick. The compiled
block loop (``cython_core/_norma.pyx``) learns every row; a loss without a compiled form
gives it the gradient row by row, computed by the loss plugin at the same scores.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from kbench.api import LogUniform, hookimpl, param
from kbench.cython_core._norma import NormaState, Schedule, norma_block, step_size
from kbench.learners import (
    Expansion,
    Rows,
    labels,
    python_gradient,
)
from kbench.learners.online_loss import L_PYTHON, NU_OFF
from kbench.plugins.algorithms._margin_learner import MarginLearner

SCHEDULES = {member.name[2:].lower(): member for member in Schedule}
NU_RULES = {"log": False, "additive": True}


class NORMA(MarginLearner):
    """NORMA, the online SVM: stochastic gradient descent in the RKHS.

    Each step ``f ← (1 − η_t c) f − η_t Σ_y ξ_{t,y} k((x_t, y), ·)`` with ξ_t the loss
    gradient at the scores ``F + b``; only the ``budget`` most recent non-zero terms are
    kept (a circular buffer, oldest evicted first). The shrinking by ``1 − η_t c`` is
    applied lazily through one global scale factor.

    Tasks: binary, multiclass (one score per class through the delta kernel on labels,
    ``F = kᵀA``; predictions are the arg-max, lowest index on ties), regression, and
    novelty detection (a point is flagged, −1, when ``f(x) + b`` falls below the margin:
    the novelty hinge's ``rho``, or the adapted ε of the ν-trick).

    With ``nu > 0`` the ν-trick replaces the fixed margin of the hinge (binary), the
    multiclass hinge, the novelty hinge or the tube of the ε-insensitive loss by an
    adapted ε, and adds ∓νε to the loss. ε takes plain steps on the same schedule as η
    (started at ``eta_eps``): in log space, ``ε ← ε exp(−η_ε ε (s − ν))`` (``nu_rule=log``,
    the kbench spec's NORMA-ν baseline), or Kivinen et al.'s additive rule
    ``ε ← max(0, ε − η_ε (s − ν))`` (``nu_rule=additive``), with s = 1 when the example
    violates the margin; for a regression tube the sign of ``s − ν`` flips. A novelty
    hinge with its own ``nu > 0`` turns the trick on by itself, starting from its ``rho``.

    Parameters
    ----------
    eta
        Initial step size η₀ > 0, with η₀·c ≤ 1.
    schedule
        ``constant`` (η₀), ``inv_sqrt`` (η₀/√(t+1)) or ``decay_tau`` (η₀·√(τ/(τ+t))), with t
        the number of examples seen before the current one (the first step is η₀).
    tau
        τ of the ``decay_tau`` schedule.
    c
        Regularisation constant c ≥ 0 (NORMA's λ).
    budget
        ω, the number of expansion terms kept.
    offset
        Learn an unregularised offset b (one per class) with the same step sizes.
    nu
        ν ∈ [0, 1) of the ν-trick, the target fraction of margin violators; 0 turns it off.
    margin0
        Initial margin (or tube half-width) ε₀ > 0 of the ν-trick.
    eta_eps
        Initial step size η_ε,0 > 0 of the margin.
    nu_rule
        ``log`` (log-space steps, ε stays positive) or ``additive`` (Kivinen et al.).
    """

    name = "norma"
    paper = "Kivinen, Smola and Williamson (2004). Online learning with kernels. IEEE Transactions on Signal Processing 52(8)."
    test_params = {"budget": 16}
    #: Tuned: the learning rate and the regulariser (the budget is a memory choice).
    search_space = {"eta": LogUniform(1e-3, 10.0), "c": LogUniform(1e-6, 1.0)}

    schedule: Literal["constant", "inv_sqrt", "decay_tau"] = param("constant")
    tau: float = param(100.0, low=0.0, low_open=True)
    nu_rule: Literal["log", "additive"] = param("log")

    def __post_init__(self) -> None:
        super().__post_init__()
        assert self.loss is not None and self.kernel is not None
        if self.eta * self.c > 1.0:
            raise ValueError(
                "norma: eta·c must be ≤ 1 (the shrink factor 1 − ηc must not be "
                f"negative), got {self.eta * self.c!r}"
            )
        schedule = self.choice("schedule", SCHEDULES)
        additive = self.choice("nu_rule", NU_RULES)
        C = self._setup.n_out
        self._cfg = self._make_cfg(
            schedule=int(schedule),
            tau=self.tau,
            eta_eps0=self.eta_eps,
            nu_additive=additive,
        )
        self._state = NormaState(np.zeros(C), self._setup.margin0)
        self.model = Expansion(self.name, self.kernel, C, limit=self.budget)
        self.learn_with(norma_block, cfg=self._cfg, state=self._state, budget=self.budget)

    # -- learning ---------------------------------------------------------------------------

    def learn_predict_many(self, X: Any, y: Any) -> np.ndarray:
        rows = Rows.of(X)
        y = labels(y, rows.n)
        s = self._setup
        if s.loss_id != L_PYTHON or s.nu_mode != NU_OFF:
            return self._learn(rows, y)
        pred = np.empty(rows.n)
        for i in range(rows.n):  # the loss plugin's gradient, row by row
            x = rows.row0 if rows.row0 is not None else rows.csr[i] if rows.sparse else rows.X[i]
            Fb = self._scores(x)  # its kernel row stays for the learning step
            with np.errstate(all="ignore"):  # a diverged model shows in its NaN predictions
                xi, _, viol = python_gradient(s, self.loss, self._state.eps, Fb, Fb, y[i])
            xi = np.ascontiguousarray(xi, dtype=np.float64)
            pred[i] = self._learn(Rows.one(x), y[i : i + 1], xi, viol)[0]
        return pred

    def _learn(
        self, rows: Rows, y: np.ndarray, xi: np.ndarray | None = None, viol: int = 0
    ) -> np.ndarray:
        pred = self.learn_rows(rows, y, xi_given=xi, s_given=viol)
        self.model.scale = self._state.scale
        return pred

    # -- predicting -------------------------------------------------------------------------

    def _scores(self, x: Any) -> np.ndarray:
        """F + b at one row (scale·kᵀA + b), its kernel row kept by the store."""
        scores: np.ndarray = self.model.decision_one(x) + self._state.b
        return scores

    def _offsets(self) -> np.ndarray:
        offsets: np.ndarray = self._state.b
        return offsets

    # -- inspection -------------------------------------------------------------------------

    def snapshot(self) -> dict[str, np.ndarray | float]:
        """Copies of the model: stored rows ``X`` (CSR once it has learned CSR rows), true
        coefficients ``alpha`` (m × C, the lazy scale applied), offsets ``b``, the margin
        ``eps``, the examples seen ``t`` and the margin violations."""
        store, st = self.model.store, self._state
        alpha = store.alpha[: store.size] if store else np.zeros((0, self.n_outputs))
        return {
            "X": self.model.support_vectors(),
            "alpha": st.scale * alpha,
            "b": st.b.copy(),
            "eps": st.eps,
            "t": st.t,
            "violations": st.violations,
        }

    def stats(self) -> dict[str, Any]:
        st, model = self._state, self.model.stats()
        out = {
            "n_support": model["n_support"],
            "kernel_evals": model["kernel_evals"],
            "eta": step_size(SCHEDULES[self.schedule], self.eta, self.tau, st.t),
            "violations": int(st.violations),
            "evictions": int(st.evictions),
            "model_bytes": model["model_bytes"],
        }
        if self._setup.nu_mode != NU_OFF:
            out["eps"] = st.eps
        return out


@hookimpl
def kbench_register_algorithms(register):
    """Register NORMA."""
    register(NORMA)
