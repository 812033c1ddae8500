"""Type stub of kbench.cython_core._swkrls (sliding-window KRLS block loop and its state)."""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._sparse import BlockRows
from kbench.cython_core._types import F64, Kernel

@disjoint_base
class SwkrlsState:
    P: Any
    targets: Any
    head: int
    def __init__(self, P: Any = None, targets: Any = None, head: int = 0) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int) -> None: ...

def swkrls_block(
    kernel: Kernel,
    rows: BlockRows,
    store: Any,
    y: F64,
    pred: F64,
    start: int = 0,
    have_row: bool = False,
    kxx: float = 0.0,
    *,
    state: SwkrlsState,
    window: int,
    c: float,
) -> tuple[int, int, int]: ...
