"""Type stub of kbench.cython_core._idsvm (one IDSVM bookkeeping step)."""

import numpy as np
import numpy.typing as npt

_F64 = npt.NDArray[np.float64]

def ids_step(
    R: _F64,
    Ks: _F64,
    n: int,
    ns: int,
    sidx: npt.NDArray[np.intp],
    y: _F64,
    alpha: _F64,
    h: _F64,
    kind: npt.NDArray[np.int8],
    excluded: npt.NDArray[np.uint8],
    kc: _F64,
    c: int,
    sign: float,
    bias: bool,
    c_blocked: bool,
    C: float,
    eps: float,
    v: _F64,
    beta: _F64,
    w: _F64,
    gamma: _F64,
) -> tuple[int, int, float, float]: ...
def r_expand(R: _F64, m: int, v: _F64, qkk: float, threshold: float, beta: _F64) -> float: ...
def r_contract(R: _F64, m: int, q: int) -> None: ...
