"""NORMA: online kernel gradient descent with a circular budget (Kivinen, Smola, Williamson 2004).

In the form of the SVMD paper (Vishwanathan, Schraudolph and Smola 2006, Algorithm 1 and
eqs. 31–35): any registered loss, multiclass through the delta kernel on labels,
novelty detection, ε-insensitive regression, offsets, and the ν-trick. The compiled
block loop (``cython_core/_norma.pyx``) runs compiled kernels and losses; the
per-example path computes the gradient with the loss plugin and applies the same
compiled update, so both make the same predictions.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from kbench import hookimpl
from kbench.core.components import param
from kbench.core.search_space import LogUniform
from kbench.cython_core import _norma
from kbench.learners.online_loss import NU_OFF, python_gradient
from kbench.plugins.algorithms._online_kernel import OnlineKernelLearner
from kbench.plugins.algorithms._sparse_rows import (
    MarkedRows,
    compiled_kernel,
    csr_rows,
    open_rows,
    stored_rows,
)

SCHEDULES = {"constant": 0, "inv_sqrt": 1, "decay_tau": 2}
NU_RULES = ("log", "additive")
_S = {name: i for i, name in enumerate(_norma.STATE_FIELDS)}


class NORMA(OnlineKernelLearner):
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
    _fields = _S
    #: CSR rows are learned with the per-example update, support vectors kept sparse.
    sparse_input = True
    #: Tuned: the learning rate and the regulariser (the budget is a memory choice).
    search_space = {"eta": LogUniform(1e-3, 10.0), "c": LogUniform(1e-6, 1.0)}

    schedule: Literal["constant", "inv_sqrt", "decay_tau"] = param("constant")
    tau: float = param(100.0, low=0.0, low_open=True)
    nu_rule: Literal["log", "additive"] = param("log")

    def __post_init__(self) -> None:
        super().__post_init__()
        eta, c, schedule, nu_rule = self.eta, self.c, self.schedule, self.nu_rule
        tau, eta_eps = self.tau, self.eta_eps
        if eta * c > 1.0:
            raise ValueError(
                "norma: eta·c must be ≤ 1 (the shrink factor 1 − ηc must not be "
                f"negative), got {eta * c!r}"
            )
        if schedule not in SCHEDULES:
            raise ValueError(
                f"norma: unknown schedule {schedule!r} (choose from {', '.join(SCHEDULES)})"
            )
        if nu_rule not in NU_RULES:
            raise ValueError(
                f"norma: unknown nu_rule {nu_rule!r} (choose from {', '.join(NU_RULES)})"
            )
        C = self._setup.n_out
        self._setup_loops(
            schedule=SCHEDULES[schedule],
            tau=tau,
            eta_eps0=eta_eps,
            nu_additive=nu_rule == "additive",
        )
        self._state[_S["scale"]] = 1.0
        self._b = np.zeros(C)
        self._work = np.zeros(3 * C)
        self._sparse: MarkedRows | None = None  # the support vectors as CSR rows

    # -- the schedule, for stats() ---------------------------------------------------------

    def _step(self, t: float) -> float:
        if self.schedule == "constant":
            return self.eta
        if self.schedule == "inv_sqrt":
            return self.eta / np.sqrt(t + 1.0)
        return self.eta * np.sqrt(self.tau / (self.tau + t))

    def _margin(self) -> float:
        if self._setup.nu_mode != NU_OFF:
            return float(self._state[_S["eps"]])
        return self._setup.margin

    # -- the online protocol ----------------------------------------------------------------

    def _scores(self, x: np.ndarray, xsq: float) -> np.ndarray:
        """F + b at x from one (cached) kernel row; the same arithmetic as the block loop."""
        buf = self._buffer(len(x))
        k = buf.row(self.kernel, x, xsq)
        return self._state[_S["scale"]] * buf.scores(k) + self._b

    def _decision_dense(self, x):
        return self._output(self._scores(x, self._xsq(x)))

    def _learn_dense(self, x, y):
        xsq = self._xsq(x)
        Fb = self._scores(x, xsq)
        with np.errstate(all="ignore"):  # a diverged model is reported by its NaN predictions
            xi, _, s = python_gradient(
                self._setup, self.loss, float(self._state[_S["eps"]]), Fb, Fb, float(y)
            )
        buf = self._buf
        assert buf is not None
        _norma.norma_apply(self._cfg, self._model(self._b), x, xsq, xi, s)
        self._sync()

    def _loop(self):
        return _norma.norma_block, (self._b, self._work)

    def _learn_predict_marked(self, X, y):
        """Predict then learn each CSR row as ``learn_one`` does a dense one: the kernel row
        from the sparse store, the gradient from the loss plugin, then the compiled update
        on the example's mark (see ``_sparse_rows``)."""
        kern = compiled_kernel(self.kernel)
        self._sparse = rows = open_rows(self.name, self._sparse, self._buf, X, self._buffer)
        buf = self._buf
        assert buf is not None
        pred = np.empty(X.shape[0])
        for i, x, xsq in csr_rows(X):
            k = rows.row(kern, x, xsq, buf)
            Fb = self._state[_S["scale"]] * buf.scores(k) + self._b
            pred[i] = self.label_of(self._output(Fb))
            with np.errstate(all="ignore"):  # a diverged model shows in its NaN predictions
                xi, _, s = python_gradient(
                    self._setup, self.loss, float(self._state[_S["eps"]]), Fb, Fb, float(y[i])
                )
            mark = rows.next_mark()[0]
            _norma.norma_apply(self._cfg, self._model(self._b), mark, xsq, xi, s)
            self._sync()
            rows.sync(buf, x, rows.count)
        return pred

    def _decisions(self, X):
        if self._buf is None:
            F = np.zeros((X.shape[0], self.n_outputs))
        elif self._sparse is not None:
            F = self._sparse.decision_many(self.kernel, X, self._buf.alpha, 1.0)
        else:
            F = self._buf.decision_many(self.kernel, X)
        return self._decision_values(self._state[_S["scale"]] * F + self._b)

    # -- inspection -------------------------------------------------------------------------

    def snapshot(self) -> dict[str, np.ndarray | float]:
        """Copies of the model: stored rows ``X`` (CSR once it has learned CSR rows), true coefficients ``alpha`` (m × C, the
        lazy scale applied), offsets ``b``, the margin ``eps`` and the examples seen ``t``."""
        buf = self._buf
        m = buf.size if buf else 0
        alpha = buf.alpha[:m] if buf else np.zeros((0, self.n_outputs))
        return {
            "X": stored_rows(buf, self._sparse),
            "alpha": self._state[_S["scale"]] * alpha,
            "b": self._b.copy(),
            "eps": float(self._state[_S["eps"]]),
            "t": float(self._state[_S["t"]]),
            "violations": float(self._state[_S["violations"]]),
        }

    def stats(self):
        buf = self._buf
        st = self._state
        out = {
            "n_support": buf.size if buf else 0,
            "kernel_evals": buf.kernel_evals if buf else 0,
            "eta": self._step(st[_S["t"]]),
            "violations": int(st[_S["violations"]]),
            "evictions": int(st[_S["evictions"]]),
            "model_bytes": buf.nbytes() if buf else 0,
        }
        if self._setup.nu_mode != NU_OFF:
            out["eps"] = float(st[_S["eps"]])
        return out


@hookimpl
def kbench_register_algorithms(register):
    """Register NORMA."""
    register(NORMA)
