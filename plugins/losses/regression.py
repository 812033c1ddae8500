"""Regression losses of a real score f and a real target y: squared, ε-insensitive, Huber.

Each is a function of the residual ``r = f − y``; derivatives are with respect to f.
"""

from __future__ import annotations

import math

import numpy as np

from kbench.api import Loss, hookimpl, param
from kbench.plugins.losses._common import (
    L_EPS_INSENSITIVE,
    L_HUBER,
    L_SQUARED,
    floats,
    result,
)


class Squared(Loss):
    """Squared loss ``½ (f − y)²``, the least-squares (LMS) loss.

    Derivative ``f − y``, second derivative 1; not Lipschitz. On binary labels
    y = ±1 it equals ``½ (1 − y f)²``, the loss of least-squares classification,
    so it also serves binary tasks.
    """

    name = "squared"
    tasks = frozenset({"regression", "binary"})
    smooth = True
    has_second_derivative = True
    lipschitz = math.inf

    def value(self, f, y):
        f, y = floats(f, y)
        return result(0.5 * np.square(f - y))

    def derivative(self, f, y):
        f, y = floats(f, y)
        return result(f - y)

    def second_derivative(self, f, y):
        f, y = floats(f, y)
        return result(np.ones_like(f))

    def compiled(self) -> tuple[int, float]:
        return (L_SQUARED, 0.0)


class EpsilonInsensitive(Loss):
    """ε-insensitive loss ``max(0, |f − y| − ε)`` of support vector regression.

    Residuals inside the tube ``|f − y| ≤ ε`` cost nothing; outside it the loss grows
    linearly, with derivative ``sign(f − y)``. It is 1-Lipschitz and not smooth.

    Parameters
    ----------
    epsilon
        Half-width of the tube, ≥ 0 (0 gives the absolute loss).
    """

    name = "eps_insensitive"
    tasks = frozenset({"regression"})
    nu_trick = True
    lipschitz = 1.0

    epsilon: float = param(0.1, low=0.0)

    def value(self, f, y):
        f, y = floats(f, y)
        return result(np.maximum(0.0, np.abs(f - y) - self.epsilon))

    def derivative(self, f, y):
        f, y = floats(f, y)
        r = f - y
        return result(np.where(np.abs(r) > self.epsilon, np.sign(r), 0.0))

    def compiled(self) -> tuple[int, float]:
        return (L_EPS_INSENSITIVE, float(self.epsilon))


class Huber(Loss):
    """Huber loss: quadratic for small residuals, linear for large ones.

    With ``r = f − y``::

        ℓ(r) = r² / 2              if |r| ≤ delta
               delta (|r| − delta/2)  otherwise

    The derivative is ``clip(r, −delta, delta)``, so the loss is smooth and
    ``delta``-Lipschitz; the second derivative is 1 on ``|r| ≤ delta`` and 0 outside.

    Parameters
    ----------
    delta
        Residual at which the loss turns from quadratic to linear, > 0.
    """

    name = "huber"
    tasks = frozenset({"regression"})
    smooth = True
    has_second_derivative = True

    delta: float = param(1.0, low=0.0, low_open=True)

    @property
    def lipschitz(self) -> float:
        """``delta``: the largest slope of the linear parts."""
        return float(self.delta)

    def value(self, f, y):
        f, y = floats(f, y)
        a = np.abs(f - y)
        d = self.delta
        return result(np.where(a <= d, 0.5 * np.square(a), d * (a - 0.5 * d)))

    def derivative(self, f, y):
        f, y = floats(f, y)
        return result(np.clip(f - y, -self.delta, self.delta))

    def second_derivative(self, f, y):
        f, y = floats(f, y)
        return result(np.where(np.abs(f - y) <= self.delta, 1.0, 0.0))

    def compiled(self) -> tuple[int, float]:
        return (L_HUBER, float(self.delta))


@hookimpl
def kbench_register_losses(register):
    """Register the regression losses."""
    for cls in (Squared, EpsilonInsensitive, Huber):
        register(cls)
