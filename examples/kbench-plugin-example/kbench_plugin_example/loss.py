"""The modified Huber loss: a smooth, 4-Lipschitz margin loss kbench does not ship."""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.api import Loss


class ModifiedHuber(Loss):
    """Modified Huber loss (Zhang 2004): ``max(0, 1 − z)²`` for ``z = y f ≥ −1``, else ``−4 z``.

    A squared hinge that turns linear below ``z = −1``, so a badly misclassified
    example pulls no harder than a 4-Lipschitz loss allows. Its derivative with
    respect to the score is ``y ℓ'(z)`` and its second derivative ``ℓ''(z)``, which is
    2 on ``−1 < z < 1`` and 0 elsewhere. Any loss-based algorithm can use it, e.g.
    ``norma`` with ``-l modified_huber``.
    """

    name = "modified_huber"
    tasks = frozenset({"binary"})
    smooth = True
    has_second_derivative = True
    lipschitz = 4.0

    def __init__(self) -> None:
        # No parameters; kbench reads a component's parameters from this signature.
        pass

    def value(self, f: Any, y: Any) -> Any:
        """``ℓ(y f)``, elementwise."""
        z = np.asarray(y, dtype=float) * np.asarray(f, dtype=float)
        return _scalar(np.where(z >= -1.0, np.maximum(0.0, 1.0 - z) ** 2, -4.0 * z))

    def derivative(self, f: Any, y: Any) -> Any:
        """``∂ℓ/∂f = y ℓ'(y f)``, elementwise."""
        y = np.asarray(y, dtype=float)
        z = y * np.asarray(f, dtype=float)
        return _scalar(y * np.where(z >= -1.0, -2.0 * np.maximum(0.0, 1.0 - z), -4.0))

    def second_derivative(self, f: Any, y: Any) -> Any:
        """``∂²ℓ/∂f² = y² ℓ''(y f)``, elementwise."""
        y = np.asarray(y, dtype=float)
        z = y * np.asarray(f, dtype=float)
        return _scalar(y * y * np.where((z > -1.0) & (z < 1.0), 2.0, 0.0))


def _scalar(a: np.ndarray) -> Any:
    """A 0-d result as a float, so that scalar inputs give scalar outputs."""
    return float(a) if a.ndim == 0 else a
