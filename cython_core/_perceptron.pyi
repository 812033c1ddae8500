"""Type stub of kbench.cython_core._perceptron (kernel perceptron block loop)."""

from kbench.cython_core._sparse import SparseBlock
from kbench.cython_core._types import F64, Kernel

def perceptron_block(
    kernel: Kernel,
    SV: F64,
    sq: F64,
    alpha: F64,
    m: int,
    X: F64,
    y: F64,
    pred: F64,
    krow: F64,
    scores: F64,
    start: int,
    sparse: SparseBlock | None = None,
) -> tuple[int, int, int]: ...
