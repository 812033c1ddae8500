"""Type stub of kbench.cython_core._budget_perceptrons (RBP, Forgetron, Projectron/++ loops).

The RBP and Projectron loops follow the toolkit's block-loop convention. The Forgetron's takes
its kernel as ``(kind, gamma, scale, offset, degree)``, ``kind`` −1 for a third-party kernel
(then only one example with ``have_row`` set); its arrays are C-contiguous float64, updated in
place.
"""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._sparse import SparseBlock
from kbench.cython_core._types import F64, BlockLoop, Kernel

def scores(krow: F64, alpha: F64, m: int, cs: float, out: F64) -> None: ...
def rng_draws(state: int, n: int) -> list[float]: ...

rbp_block: BlockLoop

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

@disjoint_base
class ProjectronState:
    Kinv: Any
    d: Any
    projected: int
    margin_updates: int
    def __init__(
        self, Kinv: Any = None, d: Any = None, projected: int = 0, margin_updates: int = 0
    ) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int) -> None: ...

projectron_block: BlockLoop
