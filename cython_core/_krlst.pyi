"""Type stub of kbench.cython_core._krlst (KRLS-T block loop and its state)."""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._sparse import BlockRows
from kbench.cython_core._types import F64, Kernel

@disjoint_base
class KrlstState:
    Q: Any
    K: Any
    S: Any
    mu: Any
    def __init__(self, Q: Any = None, K: Any = None, S: Any = None, mu: Any = None) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int) -> None: ...

def krlst_block(
    kernel: Kernel,
    rows: BlockRows,
    store: Any,
    y: F64,
    pred: F64,
    start: int = 0,
    have_row: bool = False,
    kxx: float = 0.0,
    *,
    state: KrlstState,
    forgetting: float,
    budget: int,
    noise: float,
    jitter: float,
) -> tuple[int, int, int]: ...
