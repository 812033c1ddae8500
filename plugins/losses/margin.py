"""Margin losses of a binary score f and a label y ∈ {−1, +1}: hinge and logistic."""

from __future__ import annotations

import numpy as np

from kbench import hookimpl
from kbench.components import Loss

# Compiled loss kinds; keep in sync with cython_core/_loss_ops.pxi.
L_HINGE = 0
L_LOGISTIC = 1


class Hinge(Loss):
    """Hinge loss ``max(0, 1 − y f)``; derivative ``−y`` where ``y f < 1``."""

    name = "hinge"
    tasks = frozenset({"binary"})
    lipschitz = 1.0

    def __init__(self) -> None:
        pass

    def value(self, f, y):  # noqa: D102
        return np.maximum(0.0, 1.0 - np.multiply(y, f))

    def derivative(self, f, y):  # noqa: D102
        y = np.asarray(y, dtype=float)
        return np.where(np.multiply(y, f) < 1.0, -y, 0.0)

    def compiled(self) -> tuple[int, float]:  # noqa: D102
        return (L_HINGE, 0.0)


class Logistic(Loss):
    """Logistic loss ``log(1 + exp(−y f))``, computed without overflow."""

    name = "logistic"
    tasks = frozenset({"binary"})
    smooth = True
    has_second_derivative = True
    lipschitz = 1.0

    def __init__(self) -> None:
        pass

    def value(self, f, y):  # noqa: D102
        return np.logaddexp(0.0, -np.multiply(y, f))

    def derivative(self, f, y):  # noqa: D102
        y = np.asarray(y, dtype=float)
        return -y * _sigmoid(-np.multiply(y, f))

    def second_derivative(self, f, y):  # noqa: D102
        s = _sigmoid(np.multiply(y, f))
        return s * (1.0 - s)

    def compiled(self) -> tuple[int, float]:  # noqa: D102
        return (L_LOGISTIC, 0.0)


def _sigmoid(z):
    z = np.asarray(z, dtype=float)
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


@hookimpl
def kbench_register_losses(register):
    """Register the margin losses."""
    register(Hinge)
    register(Logistic)
