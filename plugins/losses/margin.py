"""Margin losses of a binary score f and a label y ∈ {−1, +1}.

Each is a function ℓ(z) of the margin z = y f; derivatives are taken with respect to
the score, so ``derivative = y ℓ'(z)`` and ``second_derivative = y² ℓ''(z)``. At a
kink the derivative is the one-sided value of the flatter side (the hinge's is 0 at
z = 1), the convention of the compiled learners in ``cython_core/_losses.pxd``.
The zero-one loss is here too: it is what the runner counts as a mistake. Each class
states only what differs from ``kbench.Loss``'s defaults (binary tasks, not smooth, no
second derivative).
"""

from __future__ import annotations

import math

import numpy as np

from kbench.api import Loss, hookimpl, param
from kbench.plugins.losses._common import (
    L_HINGE,
    L_LOGISTIC,
    L_RAMP,
    L_SMOOTH_HINGE,
    L_SQUARED_HINGE,
    floats,
    result,
)


class Hinge(Loss):
    """Hinge loss ``max(0, 1 − y f)``; derivative ``−y`` where ``y f < 1``, else 0."""

    name = "hinge"
    nu_trick = True
    lipschitz = 1.0

    def value(self, f, y):
        f, y = floats(f, y)
        return result(np.maximum(0.0, 1.0 - y * f))

    def derivative(self, f, y):
        f, y = floats(f, y)
        return result(np.where(y * f < 1.0, -y, 0.0))

    def compiled(self) -> tuple[int, float]:
        return (L_HINGE, 0.0)


class Logistic(Loss):
    """Logistic loss ``log(1 + exp(−y f))``, computed without overflow.

    Its derivative is ``−y σ(−y f)`` and its second derivative ``σ(y f) σ(−y f)``
    (for y = ±1), with σ the logistic sigmoid; it is 1-Lipschitz and ¼-smooth.
    """

    name = "logistic"
    smooth = True
    has_second_derivative = True
    lipschitz = 1.0

    def value(self, f, y):
        f, y = floats(f, y)
        return result(np.logaddexp(0.0, -y * f))

    def derivative(self, f, y):
        f, y = floats(f, y)
        return result(-y * _sigmoid(-y * f))

    def second_derivative(self, f, y):
        f, y = floats(f, y)
        s = _sigmoid(y * f)
        return result(y * y * s * (1.0 - s))

    def compiled(self) -> tuple[int, float]:
        return (L_LOGISTIC, 0.0)


class SquaredHinge(Loss):
    """Squared hinge loss ``max(0, 1 − y f)²``.

    Its derivative ``−2 y (1 − y f)`` (where ``y f < 1``) is continuous, so the loss
    is smooth; the second derivative is 2 on ``y f < 1`` and 0 beyond (it jumps at
    ``y f = 1``, where the value 0 of the flat side is used). It grows quadratically
    for wrong-sided scores, so it is not Lipschitz.
    """

    name = "squared_hinge"
    smooth = True
    has_second_derivative = True
    lipschitz = math.inf

    def value(self, f, y):
        f, y = floats(f, y)
        return result(np.square(np.maximum(0.0, 1.0 - y * f)))

    def derivative(self, f, y):
        f, y = floats(f, y)
        z = y * f
        return result(np.where(z < 1.0, -2.0 * y * (1.0 - z), 0.0))

    def second_derivative(self, f, y):
        f, y = floats(f, y)
        return result(np.where(y * f < 1.0, 2.0 * y * y, 0.0))

    def compiled(self) -> tuple[int, float]:
        return (L_SQUARED_HINGE, 0.0)


class SmoothHinge(Loss):
    """Smoothed hinge loss, quadratic on ``(−1, 1)`` (the variant PiSTOL's analysis needs).

    With the margin ``z = y f``::

        ℓ(z) = −z             if z ≤ −1
               (1 − z)² / 4   if −1 < z < 1
               0              if z ≥ 1

    The pieces meet with equal values and slopes at z = ±1, so the loss is
    differentiable with derivative ``y ℓ'(z)``, ``ℓ'(z) ∈ {−1, −(1 − z)/2, 0}``. It is
    1-Lipschitz and ½-smooth: the second derivative is ½ on ``(−1, 1)`` and 0 outside.
    Unlike the quadratic-on-(0, 1) variant it is twice differentiable at z = 0, with
    ``ℓ'(0) = −½`` and ``ℓ''(0) = ½``.
    """

    name = "smooth_hinge"
    smooth = True
    has_second_derivative = True
    lipschitz = 1.0

    def value(self, f, y):
        f, y = floats(f, y)
        z = y * f
        return result(np.where(z <= -1.0, -z, np.where(z < 1.0, 0.25 * np.square(1.0 - z), 0.0)))

    def derivative(self, f, y):
        f, y = floats(f, y)
        z = y * f
        return result(np.where(z <= -1.0, -y, np.where(z < 1.0, -0.5 * y * (1.0 - z), 0.0)))

    def second_derivative(self, f, y):
        f, y = floats(f, y)
        z = y * f
        return result(np.where((z > -1.0) & (z < 1.0), 0.5 * y * y, 0.0))

    def compiled(self) -> tuple[int, float]:
        return (L_SMOOTH_HINGE, 0.0)


class Ramp(Loss):
    """Ramp loss ``R_s(z) = min(1 − s, max(0, 1 − z))`` of the margin ``z = y f``.

    ``R_s = H_1 − H_s`` with ``H_a(z) = max(0, a − z)``: the hinge, capped at ``1 − s``
    so that badly misclassified examples (``z < s``, likely label noise) stop
    pulling on the model. It is bounded and non-convex (Collobert et al. 2006; Wang and
    Vucetic's online ramp SVM uses s = −1). The derivative is ``−y`` for
    ``s ≤ z < 1`` and 0 elsewhere: each hinge of the decomposition takes the value of
    its flat side at its own kink.

    Parameters
    ----------
    s
        Margin below which the loss is flat, < 1; the loss is bounded by ``1 − s``.
    """

    name = "ramp"
    lipschitz = 1.0

    s: float = param(-1.0, high=1.0, high_open=True)

    def value(self, f, y):
        f, y = floats(f, y)
        return result(np.minimum(1.0 - self.s, np.maximum(0.0, 1.0 - y * f)))

    def derivative(self, f, y):
        f, y = floats(f, y)
        z = y * f
        return result(np.where((z >= self.s) & (z < 1.0), -y, 0.0))

    def compiled(self) -> tuple[int, float]:
        return (L_RAMP, float(self.s))


class ZeroOne(Loss):
    """Zero-one loss: 1 when the predicted label differs from y, else 0. For evaluation only.

    The predicted label is ``+1`` if ``f ≥ 0`` and ``−1`` otherwise, the rule of
    ``Algorithm.label_of``, so a score of exactly 0 is an error for ``y = −1`` only.
    Its derivative is 0 wherever it exists; it is neither continuous nor Lipschitz.
    """

    name = "zero_one"
    lipschitz = math.inf

    def value(self, f, y):
        f, y = floats(f, y)
        return result(np.where(np.where(f >= 0.0, 1.0, -1.0) != y, 1.0, 0.0))

    def derivative(self, f, y):
        f, y = floats(f, y)
        return result(np.zeros_like(f))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    # exp of a non-positive number only, so neither branch overflows.
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


@hookimpl
def kbench_register_losses(register):
    """Register the margin losses."""
    for cls in (Hinge, Logistic, SquaredHinge, SmoothHinge, Ramp, ZeroOne):
        register(cls)
