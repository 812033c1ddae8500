"""Type stub of kbench.cython_core._krls (ALD-KRLS block loop and its state)."""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._sparse import BlockRows
from kbench.cython_core._types import F64, Kernel

@disjoint_base
class KrlsState:
    Kinv: Any
    P: Any
    def __init__(self, Kinv: Any = None, P: Any = None) -> None: ...
    def __reduce__(self) -> Any: ...
    @property
    def cap(self) -> int: ...
    def ensure(self, cap: int) -> None: ...

def krls_block(
    kernel: Kernel,
    rows: BlockRows,
    store: Any,
    y: F64,
    pred: F64,
    start: int = 0,
    have_row: bool = False,
    kxx: float = 0.0,
    *,
    state: KrlsState,
    tolerance: float,
) -> tuple[int, int, int]: ...
