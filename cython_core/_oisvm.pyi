"""Type stub of kbench.cython_core._oisvm (OISVM block loop and its state)."""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._sparse import BlockRows
from kbench.cython_core._types import F64, Kernel

@disjoint_base
class OisvmState:
    Kinv: Any
    R: Any
    ss: Any
    basis: Any
    G: Any
    labels: Any
    violator: Any
    history: Any
    t: int
    def __init__(
        self,
        Kinv: Any = None,
        R: Any = None,
        ss: Any = None,
        basis: Any = None,
        G: Any = None,
        labels: Any = None,
        violator: Any = None,
        history: Any = None,
        t: int = 0,
    ) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int, seen: int) -> None: ...

def oisvm_block(
    kernel: Kernel,
    rows: BlockRows,
    store: Any,
    y: F64,
    pred: F64,
    start: int = 0,
    have_row: bool = False,
    kxx: float = 0.0,
    *,
    state: OisvmState,
    history: BlockRows,
    C: float,
    eta: float,
    newton_steps: int,
) -> tuple[int, int, int]: ...
