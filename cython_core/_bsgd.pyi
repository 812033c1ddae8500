"""Type stub of kbench.cython_core._bsgd (kernel Pegasos and budgeted SGD: the block loop,
its state and the maintenance modes)."""

import enum

from typing_extensions import disjoint_base

from kbench.cython_core._types import F64, BlockLoop

class Maintenance(enum.IntEnum):
    M_NONE = 0
    M_REMOVAL = 1
    M_PROJECTION = 2
    M_MERGE = 3

@disjoint_base
class BsgdState:
    t: float
    cs: float
    maintenance_steps: float
    norm2: float
    kdiag: F64
    stamp: F64
    Kinv: F64
    def __init__(
        self,
        Kinv: F64,
        *,
        t: float = 0.0,
        cs: float = 1.0,
        maintenance_steps: float = 0.0,
        norm2: float = 0.0,
        kdiag: F64 | None = None,
        stamp: F64 | None = None,
    ) -> None: ...
    def ensure(self, cap: int) -> None: ...
    def __reduce__(self) -> tuple[object, tuple[F64, float, float, float, float, F64, F64]]: ...

def merge_point(a: float, b: float, k: float) -> tuple[float, float]: ...

bsgd_block: BlockLoop
