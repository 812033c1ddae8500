"""Type stub of kbench.cython_core._bogd (the BOGD block loop).

``state`` is ``[m, scale, kernel_evals, removals]``; ``loss_kind`` −1 means the derivative
of the one example is ``g_given``. Arrays are C-contiguous float64, updated in place.
"""

import numpy as np
import numpy.typing as npt

_F64 = npt.NDArray[np.float64]
_Kernel = tuple[int, float, float, float, float]  # (kind, gamma, scale, offset, degree)
_U64 = npt.NDArray[np.uint64]

def bogd_block(
    kernel: _Kernel,
    SV: _F64,
    sq: _F64,
    a: _F64,
    state: _F64,
    rng: _U64,
    eta: float,
    lam: float,
    weighted: bool,
    loss_kind: int,
    loss_p1: float,
    X: _F64,
    y: _F64,
    pred: _F64,
    krow: _F64,
    have_row: bool,
    g_given: float,
) -> None: ...
