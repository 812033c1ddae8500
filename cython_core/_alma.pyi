"""Type stub of kbench.cython_core._alma (ALMA2 with kernels, block loop)."""

from typing import Any

from kbench.cython_core._sparse import BlockRows
from kbench.cython_core._types import F64, Kernel

def alma_block(
    kernel: Kernel,
    rows: BlockRows,
    store: Any,
    y: F64,
    pred: F64,
    start: int = 0,
    have_row: bool = False,
    kxx: float = 0.0,
    *,
    state: F64,
    alpha: float,
    B: float,
    C: float,
) -> tuple[int, int, int]: ...
