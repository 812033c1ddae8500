"""Type stub of kbench.cython_core._pa (kernel passive–aggressive block loop)."""

import numpy as np
import numpy.typing as npt

_F64 = npt.NDArray[np.float64]

def pa_block(
    kind: int,
    gamma: float,
    scale: float,
    offset: float,
    degree: float,
    SV: _F64,
    sq: _F64,
    alpha: _F64,
    m: int,
    X: _F64,
    y: _F64,
    pred: _F64,
    krow: _F64,
    variant: int,
    C: float,
    have_row: bool,
    kxx_given: float,
    start: int,
) -> tuple[int, int, int]: ...
