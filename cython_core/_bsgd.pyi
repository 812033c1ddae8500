"""Type stub of kbench.cython_core._bsgd (kernel Pegasos and budgeted SGD).

``mode``: 0 none (Pegasos), 1 removal, 2 projection, 3 merge. ``state`` is
``[m, t, scale, kernel_evals, maintenance_steps, ‖f‖²]``. Arrays are C-contiguous float64
and are updated in place.
"""

from kbench.cython_core._sparse import SparseBlock
from kbench.cython_core._types import F64, Kernel

def merge_point(a: float, b: float, k: float) -> tuple[float, float]: ...
def bsgd_block(
    kernel: Kernel,
    SV: F64,
    sq: F64,
    alpha: F64,
    kdiag: F64,
    stamp: F64,
    Kinv: F64,
    state: F64,
    lam: float,
    mode: int,
    budget: int,
    project_ball: bool,
    X: F64,
    y: F64,
    pred: F64,
    krow: F64,
    krow2: F64,
    dvec: F64,
    scores: F64,
    have_row: bool,
    kxx_given: float,
    start: int,
    sparse: SparseBlock | None = None,
) -> int: ...
