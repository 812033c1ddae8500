"""Type stub of kbench.cython_core._online_ops (the online learners' configuration)."""

import enum
from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._types import F64

class Task(enum.IntEnum):
    """Task codes of the compiled online learners."""

    T_BINARY = 0
    T_MULTICLASS = 1
    T_REGRESSION = 2
    T_NOVELTY = 3

class MulticlassLoss(enum.IntEnum):
    """Compiled ids of the built-in multiclass losses, and of a loss with no compiled form."""

    L_MC_HINGE = 64
    L_SOFTMAX = 65
    L_PYTHON = -1

class NuMode(enum.IntEnum):
    """ν-trick modes: off, an adapted margin, an adapted ε-insensitive tube."""

    NU_OFF = 0
    NU_MARGIN = 1
    NU_TUBE = 2

@disjoint_base
class OnlineConfig:
    """The configuration of a compiled online learner, fixed when it is built."""

    def __init__(
        self,
        *,
        kind: int = -1,
        gamma: float = 0.0,
        scale: float = 0.0,
        offset: float = 0.0,
        degree: float = 0.0,
        task: int = 0,
        n_out: int = 1,
        loss: int = -1,
        loss_p1: float = 0.0,
        nu_mode: int = 0,
        nu: float = 0.0,
        margin: float = 0.0,
        eta0: float = 0.0,
        c: float = 0.0,
        use_offset: bool = False,
        schedule: int = 0,
        tau: float = 0.0,
        eta_eps0: float = 0.0,
        nu_additive: bool = False,
        mu: float = 0.0,
        lam: float = 0.0,
        exact: bool = False,
        lagged: bool = False,
        eta_max: float = ...,
    ) -> None: ...
    def fields(self) -> dict[str, Any]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

def compiled_gradient(cfg: OnlineConfig, F: F64, y: float, xi: F64, chi: F64) -> None: ...
def compiled_self_kernel(cfg: OnlineConfig, x: F64, xsq: float) -> float: ...
