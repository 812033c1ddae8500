"""Kernel SGD without regularisation, last iterate and averaged (Orabona 2014, Algorithm 1).

The step-size baselines of the PiSTOL paper (specs/002 §1.4): ``f_{t+1} = f_t − η_t s_t k(x_t, ·)``
with ``s_t = ∂ℓ/∂f`` at ``f_t(x_t)``. The paper's Algorithm 1 prints the update with a
``+`` sign (P10); this is the descent direction. ``asgd`` returns the average of the
iterates ``f̄_T = (1/T) Σ_{t=1}^T f_t``, whose coefficient of the i-th term is
``c_i (T − i)/T``; ``sgd`` returns the last iterate.
"""

from __future__ import annotations

from typing import Literal

from kbench.api import hookimpl, param
from kbench.cython_core._pistol import PistolState
from kbench.plugins.algorithms._averaged import AveragedExpansion


class KernelSGD(AveragedExpansion):
    """Kernel SGD, last iterate: ``f_{t+1} = f_t − η_t ∂ℓ(f_t(x_t), y_t)/∂f · k(x_t, ·)``.

    No regulariser, no budget: every example with a non-zero gradient becomes a support
    vector. Predictions use the current iterate f_t. Any loss (a non-Lipschitz one, such
    as the squared loss, needs a small enough η to stay stable); multiclass updates
    one score per class with the loss's gradient vector.

    Parameters
    ----------
    eta
        Step size η > 0 (η_t = η, or η/√t with ``schedule=inv_sqrt``, t = 1, 2, …).
    schedule
        ``constant`` or ``inv_sqrt``.
    """

    name = "sgd"
    paper = "Kivinen, Smola and Williamson (2004). Online learning with kernels. IEEE Transactions on Signal Processing 52(8)."
    _last = True

    eta: float = param(1.0, low=0.0, low_open=True)
    schedule: Literal["constant", "inv_sqrt"] = param("constant")

    def __post_init__(self) -> None:
        super().__post_init__()
        _sgd_steps(self)


class AveragedSGD(AveragedExpansion, params_of=KernelSGD):
    """Averaged kernel SGD (ASGD, Orabona 2014 Algorithm 1): the SGD iterates of ``sgd``,
    predicting with their average ``f̄_T = (1/T) Σ_{t=1}^T f_t`` (f_1 = 0 included).

    The average is kept in closed form, coefficient ``c_i (T − i)/T`` for the term added
    at round i, so each prediction costs one kernel row, as for the last iterate. Its
    parameters are those of ``sgd``.
    """

    name = "asgd"
    paper = "Orabona (2014). Simultaneous model selection and optimization through parameter-free stochastic learning. NIPS."

    def __post_init__(self) -> None:
        super().__post_init__()
        _sgd_steps(self)


def _sgd_steps(learner: KernelSGD | AveragedSGD) -> None:
    """The loop's state of SGD's steps η_t (η, or η/√t), last iterate or average."""
    inv_sqrt = learner.choice("schedule", {"constant": False, "inv_sqrt": True})
    state = PistolState(sgd=True, last=learner._last, inv_sqrt=inv_sqrt, eta=learner.eta)
    learner._setup_expansion(state)


@hookimpl
def kbench_register_algorithms(register):
    """Register kernel SGD (last iterate) and averaged kernel SGD."""
    register(KernelSGD)
    register(AveragedSGD)
