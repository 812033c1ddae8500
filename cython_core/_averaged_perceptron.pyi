"""Type stub of kbench.cython_core._averaged_perceptron.

``coef`` has 2C columns: α (the current perceptron) then β (updates weighted by the round
before them); the averaged scores after T rounds are α·k − β·k/T.
"""

from kbench.cython_core._sparse import SparseBlock
from kbench.cython_core._types import F64, I64, Kernel

def averaged_scores(s: F64, C: int, T: int) -> F64: ...
def avg_perceptron_block(
    kernel: Kernel,
    SV: F64,
    sq: F64,
    coef: F64,
    sv_ids: I64,
    m: int,
    X: F64,
    y: F64,
    xids: I64,
    id_slot: I64,
    pred: F64,
    krow: F64,
    scores: F64,
    start: int,
    T: int,
    sparse: SparseBlock | None = None,
) -> tuple[int, int, int, int, int]: ...
def raw_scores(
    kernel: Kernel,
    SV: F64,
    sq: F64,
    coef: F64,
    m: int,
    x: F64,
    krow: F64,
    scores: F64,
) -> F64: ...
