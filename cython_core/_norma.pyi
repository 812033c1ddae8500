"""Type stub of kbench.cython_core._norma.

``cfg`` is the online learners' ``OnlineConfig`` (built by
``kbench.plugins.algorithms._online_kernel.make_cfg``), the state array is indexed by
``STATE_FIELDS``. Arrays are C-contiguous float64 and are updated in place.
"""

import numpy as np
import numpy.typing as npt

from kbench.cython_core._online_ops import OnlineConfig

_F64 = npt.NDArray[np.float64]

STATE_FIELDS: tuple[str, ...]

def norma_block(
    cfg: OnlineConfig,
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
    cfg: OnlineConfig,
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
