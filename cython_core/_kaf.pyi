"""Type stub of kbench.cython_core._kaf (kernel adaptive filter block loops)."""

from typing import Any

from kbench.cython_core._sparse import BlockRows
from kbench.cython_core._types import F64, Kernel

def klms_block(
    kernel: Kernel,
    rows: BlockRows,
    store: Any,
    y: F64,
    pred: F64,
    start: int = 0,
    have_row: bool = False,
    kxx: float = 0.0,
    *,
    eta: float,
) -> tuple[int, int, int]: ...
def qklms_block(
    kernel: Kernel,
    rows: BlockRows,
    store: Any,
    y: F64,
    pred: F64,
    start: int = 0,
    have_row: bool = False,
    kxx: float = 0.0,
    *,
    eta: float,
    epsilon: float,
) -> tuple[int, int, int]: ...
def knlms_block(
    kernel: Kernel,
    rows: BlockRows,
    store: Any,
    y: F64,
    pred: F64,
    start: int = 0,
    have_row: bool = False,
    kxx: float = 0.0,
    *,
    eta: float,
    epsilon: float,
    mu0: float,
) -> tuple[int, int, int]: ...
