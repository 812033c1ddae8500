"""Type stub of kbench.cython_core._pa (kernel passive–aggressive block loop)."""

import enum
from typing import Any

from kbench.cython_core._sparse import BlockRows
from kbench.cython_core._types import F64, Kernel

class Variant(enum.IntEnum):
    """PA, PA-I and PA-II."""

    PA = 0
    PA_I = 1
    PA_II = 2

def pa_block(
    kernel: Kernel,
    rows: BlockRows,
    store: Any,
    y: F64,
    pred: F64,
    start: int = 0,
    have_row: bool = False,
    kxx: float = 0.0,
    *,
    variant: int,
    C: float,
) -> tuple[int, int, int]: ...
