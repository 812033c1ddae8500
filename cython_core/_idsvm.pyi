"""Type stub of kbench.cython_core._idsvm (one IDSVM bookkeeping step)."""

import enum

import numpy as np
import numpy.typing as npt

from kbench.cython_core._types import F64

class Set(enum.IntEnum):
    """The set of a stored example."""

    RESERVE = 0
    MARGIN = 1
    ERROR = 2
    MOVING = 3

class Event(enum.IntEnum):
    """What ended a step of ids_step."""

    EV_C_MARGIN = 0
    EV_C_ERROR = 1
    EV_C_ZERO = 2
    EV_S_ERROR = 3
    EV_S_RESERVE = 4
    EV_ENTER = 5
    EV_UNBOUNDED = 6

def ids_step(
    R: F64,
    Ks: F64,
    n: int,
    ns: int,
    sidx: npt.NDArray[np.intp],
    y: F64,
    alpha: F64,
    h: F64,
    kind: npt.NDArray[np.int8],
    excluded: npt.NDArray[np.uint8],
    kc: F64,
    c: int,
    sign: float,
    bias: bool,
    c_blocked: bool,
    C: float,
    eps: float,
    v: F64,
    beta: F64,
    w: F64,
    gamma: F64,
) -> tuple[int, int, float, float]: ...
def r_expand(R: F64, m: int, v: F64, qkk: float, threshold: float, beta: F64) -> float: ...
def r_contract(R: F64, m: int, q: int) -> None: ...
