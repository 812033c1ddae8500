"""PiSTOL: parameter-free kernel SGD (Orabona, NIPS 2014, Algorithm 3; kbench specs/002).

PiSTOL keeps the negative sum of the past functional gradients, ``g_t = −Σ_{i≤t} s_i k(x_i, ·)``,
and predicts with a multiple of it that grows with ‖g‖: ``f_t = w_t g_{t−1}``,
``w_t = (b/α_{t−1}) exp(‖g_{t−1}‖²/(2α_{t−1}))``, ``α_t = aL + a Σ_{i≤t} |s_i| ‖k(x_i, ·)‖``.
There is no step size and no regulariser to tune. The paper evaluates the average of
the iterates, kept here in closed form, so one pass gives its whole learning curve.
"""

from __future__ import annotations

import math
from typing import Literal

from kbench.api import Loss, hookimpl, param
from kbench.cython_core._pistol import MultiplierOverflow, PistolState
from kbench.plugins.algorithms._averaged import AveragedExpansion

__all__ = ["A_OVER_L", "MultiplierOverflow", "PiSTOL"]

#: a/L at which Theorem 1's constant φ(L/a) stays finite: 1 − x − x e^{x/2} > 0 for
#: x = L/a needs a/L ≥ 2.24898; the paper rounds it to 2.25 (specs/002 §1.1, P1).
A_OVER_L = 2.25


class PiSTOL(AveragedExpansion):
    """PiSTOL, Parameter-free STOchastic Learning (Orabona 2014, Algorithm 3).

    Round t: ``w_t = exp(log b − log α_{t−1} + ‖g_{t−1}‖²/(2α_{t−1}))`` (computed in log
    space); online prediction ``p_t = w_t g_{t−1}(x_t)``; gradient ``s_t = ∂ℓ/∂f`` at p_t; if
    ``s_t ≠ 0``, ``g_t = g_{t−1} − s_t k(x_t, ·)`` (a new support vector with coefficient
    −s_t), ``‖g_t‖² = ‖g_{t−1}‖² − 2 s_t g_{t−1}(x_t) + s_t² k(x_t, x_t)`` (exact, from the
    kernel row already computed; clamped at 0) and ``α_t = α_{t−1} + a |s_t| √k(x_t, x_t)``.
    The sum of multipliers ``W_t = Σ_{τ≤t} w_τ`` grows every round, and each support
    vector keeps ``W`` at its round, so the average of the iterates
    ``f̄_T = (1/T) Σ_{t=1}^T f_t = Σ_i c_i (W_T − W_(i))/T k(x_i, ·)`` (it includes f_1 = 0
    and ends at f_T) costs nothing extra.

    ``output=average`` (the paper's evaluated predictor) predicts with f̄_T after T
    examples, ``output=last`` with the next iterate ``f_{T+1} = w_{T+1} g_T``, which is
    also the online prediction PiSTOL's gradients are taken at. Multiclass runs the same
    update in H^C (‖s‖ the Euclidean norm of the gradient vector); regression with a
    Lipschitz loss (ε-insensitive, Huber).

    The theory assumes ``k(x, x) ≤ 1`` (true for RBF and Laplacian kernels); stats()
    reports the largest k(x, x) met as ``sup_kxx``. The multiplier is kept in log space;
    if log w ever exceeds 700 the learner raises ``MultiplierOverflow`` (specs/002 P3)
    rather than return infinities. ``max_exponent`` is the largest ‖g‖²/(2α) used.

    Parameters
    ----------
    a
        a > 0; None takes a = 2.25·L with L the loss's Lipschitz constant, the smallest
        value for which Theorem 1 holds.
    b
        b > 0, the scale of the first predictions (w_1 = b/(aL)).
    output
        ``average`` (f̄_T) or ``last`` (f_{T+1}).
    """

    name = "pistol"
    paper = "Orabona (2014). Simultaneous model selection and optimization through parameter-free stochastic learning. NIPS."
    #: Regression needs a Lipschitz loss; the squared loss, the task's usual one, is not.
    default_losses = {"regression": "huber"}
    #: Parameter-free: a and b follow from the loss (Orabona, 2014); nothing to tune.
    search_space: dict = {}

    a: float | None = param(None, low=0.0, low_open=True)
    b: float = param(1.0, low=0.0, low_open=True)
    output: Literal["average", "last"] = param("average")

    @classmethod
    def supports(cls, task: str, loss: Loss | None = None) -> str | None:
        """As :meth:`Algorithm.supports`, and a loss without a finite Lipschitz constant
        (the squared loss) is refused: PiSTOL's α is built from it."""
        reason = super().supports(task, loss)
        if reason is None and loss is not None and not 0.0 < float(loss.lipschitz) < math.inf:
            reason = (
                f"pistol needs a Lipschitz loss, and {loss.name} is not (use huber or "
                "eps_insensitive for regression)"
            )
        return reason

    def __post_init__(self) -> None:
        super().__post_init__()
        a, b, output = self.a, self.b, self.output
        assert self.loss is not None
        L = float(self.loss.lipschitz)
        if not math.isfinite(L) or L <= 0.0:
            raise ValueError(
                f"pistol: loss {self.loss.name!r} is not Lipschitz (Lipschitz constant {L!r}); "
                "PiSTOL's α and its guarantees need a finite constant: use logistic, "
                "smooth_hinge, hinge, softmax, multiclass_hinge, huber or eps_insensitive"
            )
        if output not in ("average", "last"):
            raise ValueError(f"pistol: output must be 'average' or 'last', got {output!r}")
        self.L = L
        self.a_value = A_OVER_L * L if a is None else float(a)
        # α_0 = a·L (specs/002 §1.1).
        state = PistolState(
            last=output == "last", log_b=math.log(b), a=self.a_value, acc_alpha=self.a_value * L
        )
        self._setup_expansion(state)

    def stats(self):
        out = super().stats()
        st = self._state
        alpha = st.acc_alpha
        expo = st.norm2 / (2.0 * alpha)
        out.update(
            {
                "acc_alpha": float(alpha),
                "exponent": float(expo),
                "max_exponent": float(max(st.max_exponent, expo)),
                # w of the next round; log w ≤ 700 holds while the learner runs (it raises
                # before), so this stays finite.
                "multiplier": math.exp(min(math.log(self.b) - math.log(alpha) + expo, 700.0)),
                "sup_kxx": float(st.sup_kxx),
            }
        )
        return out


@hookimpl
def kbench_register_algorithms(register):
    """Register PiSTOL."""
    register(PiSTOL)
