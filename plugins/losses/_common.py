"""Shared pieces of the built-in losses: compiled loss ids and array helpers.

The module name starts with an underscore so that the registry does not load it as
a plugin.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Compiled loss kinds, the ids ``Loss.compiled()`` returns. They must equal the enum in
# cython_core/_loss_ops.pxi, which the compiled learners switch on; the tests compare
# both sides through kbench.cython_core._losses.LOSS_KINDS.
L_HINGE = 0
L_LOGISTIC = 1
L_SQUARED = 2
L_EPS_INSENSITIVE = 3
L_SMOOTH_HINGE = 4
L_SQUARED_HINGE = 5
L_RAMP = 6
L_HUBER = 7
L_NOVELTY = 8


def floats(*arrays: Any) -> list[np.ndarray]:
    """The arguments as float64 arrays broadcast to one shape."""
    return list(np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in arrays)))


def result(a: np.ndarray) -> Any:
    """A 0-d result as a NumPy scalar, so that scalar inputs give scalar outputs."""
    a = np.asarray(a)
    return a[()] if a.ndim == 0 else a
