"""Shared pieces of the built-in losses: compiled loss ids and array helpers.

The module name starts with an underscore so that the registry does not load it as
a plugin.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.cython_core._losses import LossKind

# Compiled loss kinds, the ids ``Loss.compiled()`` returns: read from the enum the compiled
# learners switch on (kbench.cython_core._losses.LossKind), so that there is one list.
L_HINGE = int(LossKind.L_HINGE)
L_LOGISTIC = int(LossKind.L_LOGISTIC)
L_SQUARED = int(LossKind.L_SQUARED)
L_EPS_INSENSITIVE = int(LossKind.L_EPS_INSENSITIVE)
L_SMOOTH_HINGE = int(LossKind.L_SMOOTH_HINGE)
L_SQUARED_HINGE = int(LossKind.L_SQUARED_HINGE)
L_RAMP = int(LossKind.L_RAMP)
L_HUBER = int(LossKind.L_HUBER)
L_NOVELTY = int(LossKind.L_NOVELTY)


def floats(*arrays: Any) -> list[np.ndarray]:
    """The arguments as float64 arrays broadcast to one shape."""
    return list(np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in arrays)))


def result(a: np.ndarray) -> Any:
    """A 0-d result as a NumPy scalar, so that scalar inputs give scalar outputs."""
    a = np.asarray(a)
    return a[()] if a.ndim == 0 else a
