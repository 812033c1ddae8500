"""Type stub of kbench.cython_core._bogd (the BOGD block loop).

``state`` is ``[m, scale, kernel_evals, removals]``; ``loss_kind`` −1 means the derivative
of the one example is ``g_given``. Arrays are C-contiguous float64, updated in place.
"""

from kbench.cython_core._sparse import SparseBlock
from kbench.cython_core._types import F64, U64, Kernel

def bogd_block(
    kernel: Kernel,
    SV: F64,
    sq: F64,
    a: F64,
    state: F64,
    rng: U64,
    eta: float,
    lam: float,
    weighted: bool,
    loss_kind: int,
    loss_p1: float,
    X: F64,
    y: F64,
    pred: F64,
    krow: F64,
    have_row: bool,
    g_given: float,
    sparse: SparseBlock | None = None,
) -> None: ...
