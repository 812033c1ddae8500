"""Type stub of kbench.cython_core._bpa (the BPA-S block loop and its state)."""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._sparse import BlockRows
from kbench.cython_core._types import F64, Kernel

@disjoint_base
class BpaState:
    kdiag: Any
    removals: int
    def __init__(self, kdiag: Any = None, removals: int = 0) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int) -> None: ...

def bpa_s_block(
    kernel: Kernel,
    rows: BlockRows,
    store: Any,
    y: F64,
    pred: F64,
    start: int = 0,
    have_row: bool = False,
    kxx: float = 0.0,
    *,
    state: BpaState,
    budget: int,
    C: float,
) -> tuple[int, int, int]: ...
