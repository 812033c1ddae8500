"""Type stub of kbench.cython_core._svmd (SVMD's block loop and state).

The store holds one row [α | β] (2C entries) per stored example; ``cfg`` is the
``OnlineConfig`` of :func:`kbench.learners.make_cfg`; the state's ``off`` holds the offsets,
their step sizes and their traces (3C).
"""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._online_ops import OnlineConfig
from kbench.cython_core._types import F64, BlockLoop

@disjoint_base
class SvmdState:
    head: int
    t: float
    eta: float
    pi: float
    norm_sq: float
    gv: float
    eps: float
    eta_eps: float
    v_eps: float
    violations: float
    steps_eta_c_ge_1: float
    evictions: float
    off: F64
    V1: F64
    def __init__(
        self, off: F64, V1: F64, eta: float, eps: float, eta_eps: float, **values: float
    ) -> None: ...
    def scalars(self) -> dict[str, float]: ...
    def __reduce__(self) -> tuple[Any, tuple[F64, F64, dict[str, float]]]: ...

svmd_block: BlockLoop

def py_gradient(
    cfg: OnlineConfig, eps: float, Fb: F64, V: F64, y: float, xi: F64, chi: F64
) -> int: ...
