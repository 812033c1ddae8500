"""Type stub of kbench.cython_core._pa (kernel passive–aggressive block loop)."""

import numpy as np
import numpy.typing as npt

_F64 = npt.NDArray[np.float64]
_Kernel = tuple[int, float, float, float, float]  # (kind, gamma, scale, offset, degree)

def pa_block(
    kernel: _Kernel,
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
