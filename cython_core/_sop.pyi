"""Type stub of kbench.cython_core._sop (kernel second-order perceptron block loop)."""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._sparse import BlockRows
from kbench.cython_core._types import F64, Kernel

@disjoint_base
class SopState:
    M: Any
    labels: Any
    def __init__(self, M: Any = None, labels: Any = None) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int) -> None: ...

def sop_block(
    kernel: Kernel,
    rows: BlockRows,
    store: Any,
    y: F64,
    pred: F64,
    start: int = 0,
    have_row: bool = False,
    kxx: float = 0.0,
    *,
    state: SopState,
    a: float,
) -> tuple[int, int, int]: ...
