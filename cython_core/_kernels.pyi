"""Type stub of kbench.cython_core._kernels.

Every kernel is passed as ``(kind, gamma, scale, offset, degree)``, with ``kind`` one of
``kbench.kernels_api.KIND_*``. Arrays are C-contiguous float64; outputs are written in place.
"""

import numpy as np
import numpy.typing as npt

_F64 = npt.NDArray[np.float64]

def kernel_row(
    kind: int,
    gamma: float,
    scale: float,
    offset: float,
    degree: float,
    S: _F64,
    sq: _F64,
    x: _F64,
    xsq: float,
    out: _F64,
    m: int = -1,
) -> None: ...
def kernel_matrix(
    kind: int,
    gamma: float,
    scale: float,
    offset: float,
    degree: float,
    A: _F64,
    asq: _F64,
    B: _F64,
    bsq: _F64,
    out: _F64,
) -> None: ...
def kernel_diag(
    kind: int,
    gamma: float,
    scale: float,
    offset: float,
    degree: float,
    A: _F64,
    asq: _F64,
    out: _F64,
) -> None: ...
def sq_norms(A: _F64, out: _F64) -> None: ...
def expansion(k: _F64, alpha: _F64, m: int, out: _F64) -> None: ...
def decision_block(
    kind: int,
    gamma: float,
    scale: float,
    offset: float,
    degree: float,
    S: _F64,
    sq: _F64,
    alpha: _F64,
    m: int,
    X: _F64,
    xsq: _F64,
    K: _F64,
    out: _F64,
) -> None: ...
