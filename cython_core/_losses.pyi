"""Type stub of kbench.cython_core._losses."""

import enum

class LossKind(enum.IntEnum):
    """The compiled loss ids (``Loss.compiled()[0]``)."""

    L_HINGE = 0
    L_LOGISTIC = 1
    L_SQUARED = 2
    L_EPS_INSENSITIVE = 3
    L_SMOOTH_HINGE = 4
    L_SQUARED_HINGE = 5
    L_RAMP = 6
    L_HUBER = 7
    L_NOVELTY = 8

LOSS_KINDS: dict[str, int]

def py_loss_deriv(kind: int, f: float, y: float, p1: float) -> float: ...
