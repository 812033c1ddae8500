"""Type stub of kbench.cython_core._bpa (the BPA-S block loop).

Kernels are passed as ``(kind, gamma, scale, offset, degree)``, ``kind`` −1 for a
third-party kernel (one example with ``have_row`` and ``kxx_given``). Arrays are
C-contiguous float64 and are updated in place; ``state`` is ``[m, kernel_evals, removals]``.
"""

from kbench.cython_core._sparse import SparseBlock
from kbench.cython_core._types import F64, Kernel

def bpa_s_block(
    kernel: Kernel,
    SV: F64,
    sq: F64,
    a: F64,
    kdiag: F64,
    state: F64,
    C: float,
    X: F64,
    y: F64,
    pred: F64,
    krow: F64,
    have_row: bool,
    kxx_given: float,
    sparse: SparseBlock | None = None,
) -> None: ...
