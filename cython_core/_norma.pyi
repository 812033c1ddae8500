"""Type stub of kbench.cython_core._norma (NORMA's block loop, its state and schedules).

``cfg`` is the ``OnlineConfig`` of :func:`kbench.learners.make_cfg`.
"""

import enum

from typing_extensions import disjoint_base

from kbench.cython_core._types import F64, BlockLoop

class Schedule(enum.IntEnum):
    S_CONSTANT = 0
    S_INV_SQRT = 1
    S_DECAY_TAU = 2

@disjoint_base
class NormaState:
    head: int
    t: float
    scale: float
    eps: float
    violations: float
    evictions: float
    b: F64
    def __init__(
        self,
        b: F64,
        eps: float = 0.0,
        *,
        head: int = 0,
        t: float = 0.0,
        scale: float = 1.0,
        violations: float = 0.0,
        evictions: float = 0.0,
    ) -> None: ...
    def __reduce__(self) -> tuple[object, tuple[F64, float, int, float, float, float, float]]: ...

def step_size(schedule: Schedule, eta0: float, tau: float, t: float) -> float: ...

norma_block: BlockLoop
