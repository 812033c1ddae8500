"""Type stub of kbench.cython_core._norma.

The configuration array is indexed by ``CFG_FIELDS`` (built by
``kbench.plugins.algorithms._online_kernel.make_cfg``), the state array by
``STATE_FIELDS``. Arrays are C-contiguous float64 and are updated in place.
"""

import numpy as np
import numpy.typing as npt

_F64 = npt.NDArray[np.float64]

CFG_FIELDS: tuple[str, ...]
STATE_FIELDS: tuple[str, ...]

def norma_block(
    cfg: _F64,
    SV: _F64,
    sq: _F64,
    A: _F64,
    state: _F64,
    b: _F64,
    X: _F64,
    y: _F64,
    pred: _F64,
    krow: _F64,
    work: _F64,
) -> None: ...
def norma_apply(
    cfg: _F64,
    SV: _F64,
    sq: _F64,
    A: _F64,
    state: _F64,
    b: _F64,
    x: _F64,
    xsq: float,
    xi: _F64,
    s: int,
) -> None: ...
