"""Type stub of kbench.cython_core._averaged_perceptron.

``coef`` has 2C columns: α (the current perceptron) then β (updates weighted by the round
before them); the averaged scores after T rounds are α·k − β·k/T.
"""

import numpy as np
import numpy.typing as npt

_F64 = npt.NDArray[np.float64]
_Kernel = tuple[int, float, float, float, float]  # (kind, gamma, scale, offset, degree)
_I64 = npt.NDArray[np.int64]

def averaged_scores(s: _F64, C: int, T: int) -> _F64: ...
def avg_perceptron_block(
    kernel: _Kernel,
    SV: _F64,
    sq: _F64,
    coef: _F64,
    sv_ids: _I64,
    m: int,
    X: _F64,
    y: _F64,
    xids: _I64,
    id_slot: _I64,
    pred: _F64,
    krow: _F64,
    scores: _F64,
    start: int,
    T: int,
) -> tuple[int, int, int, int, int]: ...
def raw_scores(
    kernel: _Kernel,
    SV: _F64,
    sq: _F64,
    coef: _F64,
    m: int,
    x: _F64,
    krow: _F64,
    scores: _F64,
) -> _F64: ...
