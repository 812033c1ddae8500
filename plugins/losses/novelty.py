"""Novelty-detection losses of a score f; labels carry no information and are ignored."""

from __future__ import annotations

import numpy as np

from kbench.api import Loss, hookimpl, param
from kbench.plugins.losses._common import L_NOVELTY, floats, result


class NoveltyHinge(Loss):
    """ν-novelty hinge loss ``max(0, rho − f) − nu · rho`` (Kivinen, Smola and Williamson).

    A point scoring below the margin ``rho`` is flagged as novel and pulls the
    function up: the derivative is −1 where ``f < rho`` and 0 elsewhere. The constant
    ``−nu · rho`` is the ν-trick's price of the margin; it does not change the
    derivative in f, and with the default ``nu = 0`` the loss is the plain novelty
    hinge ``max(0, rho − f)``. Learners that adapt the margin read ``rho`` and ``nu``.

    ``y`` is accepted for a uniform interface and only broadcast against f.

    Parameters
    ----------
    rho
        Margin, ≥ 0 (the SVMD paper's ε; 1 gives the loss of its eq. 26).
    nu
        Target fraction of margin violators, in [0, 1].
    """

    name = "novelty_hinge"
    tasks = frozenset({"novelty"})
    nu_trick = True
    lipschitz = 1.0

    rho: float = param(1.0, low=0.0)
    nu: float = param(0.0, low=0.0, high=1.0)

    def value(self, f, y=0.0):
        f, _ = floats(f, 0.0 if y is None else y)
        return result(np.maximum(0.0, self.rho - f) - self.nu * self.rho)

    def derivative(self, f, y=0.0):
        f, _ = floats(f, 0.0 if y is None else y)
        return result(np.where(f < self.rho, -1.0, 0.0))

    def compiled(self) -> tuple[int, float]:
        return (L_NOVELTY, float(self.rho))


@hookimpl
def kbench_register_losses(register):
    """Register the novelty-detection losses."""
    register(NoveltyHinge)
