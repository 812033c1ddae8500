"""Type stub of kbench.cython_core._budget_perceptrons (RBP, Forgetron, Projectron/++ loops).

Kernels are passed as ``(kind, gamma, scale, offset, degree)`` with ``kind`` one of
``kbench.core.kernel_rows.KIND_*``, or −1 for a third-party kernel (then only one example with
``have_row`` set). Arrays are C-contiguous float64 and are updated in place.
"""

from kbench.cython_core._sparse import SparseBlock
from kbench.cython_core._types import F64, U64, Kernel

def scores(krow: F64, alpha: F64, m: int, cs: float, out: F64) -> None: ...
def sqnorm(x: F64) -> float: ...
def rng_draws(state: int, n: int) -> list[float]: ...
def rbp_block(
    kernel: Kernel,
    SV: F64,
    sq: F64,
    alpha: F64,
    rng: U64,
    m: int,
    X: F64,
    y: F64,
    pred: F64,
    krow: F64,
    scores: F64,
    have_row: bool,
    sparse: SparseBlock | None = None,
) -> tuple[int, int]: ...
def forgetron_block(
    kernel: Kernel,
    SV: F64,
    sq: F64,
    a: F64,
    state: F64,
    X: F64,
    y: F64,
    pred: F64,
    krow: F64,
    krow2: F64,
    have_row: bool,
    have_row2: bool,
    sparse: SparseBlock | None = None,
) -> None: ...
def projectron_block(
    kernel: Kernel,
    SV: F64,
    sq: F64,
    alpha: F64,
    Kinv: F64,
    state: F64,
    eta: float,
    plus: bool,
    X: F64,
    y: F64,
    pred: F64,
    krow: F64,
    dvec: F64,
    scores: F64,
    have_row: bool,
    kxx_given: float,
    U: float = ...,
    sparse: SparseBlock | None = None,
) -> None: ...
