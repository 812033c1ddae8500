"""Type stub of kbench.cython_core._duol (DUOL block loop)."""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._sparse import BlockRows
from kbench.cython_core._types import F64, Kernel

@disjoint_base
class DuolState:
    K: Any
    labels: Any
    margins: Any
    def __init__(self, K: Any = None, labels: Any = None, margins: Any = None) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int) -> None: ...

def duol_block(
    kernel: Kernel,
    rows: BlockRows,
    store: Any,
    y: F64,
    pred: F64,
    start: int = 0,
    have_row: bool = False,
    kxx: float = 0.0,
    *,
    state: DuolState,
    C: float,
    rho: float,
) -> tuple[int, int, int]: ...
