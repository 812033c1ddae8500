"""Type stub of kbench.cython_core._svmd.

``cfg`` is the online learners' ``OnlineConfig`` (built by
``kbench.plugins.algorithms._online_kernel.make_cfg``), the state array is indexed by
``STATE_FIELDS``. ``AB`` holds one row [α | β] (2C entries) per stored example; ``off``
holds the offsets, their step sizes and their traces (3C). Arrays are C-contiguous
float64 and are updated in place.
"""

import numpy as np
import numpy.typing as npt

from kbench.cython_core._online_ops import OnlineConfig

_F64 = npt.NDArray[np.float64]

STATE_FIELDS: tuple[str, ...]

def svmd_block(
    cfg: OnlineConfig,
    SV: _F64,
    sq: _F64,
    AB: _F64,
    state: _F64,
    off: _F64,
    X: _F64,
    y: _F64,
    pred: _F64,
    krow: _F64,
    kj: _F64,
    work: _F64,
) -> None: ...
def svmd_apply(
    cfg: OnlineConfig,
    SV: _F64,
    sq: _F64,
    AB: _F64,
    state: _F64,
    off: _F64,
    k: _F64,
    kj: _F64,
    x: _F64,
    xsq: float,
    kxx: float,
    FV: _F64,
    xi: _F64,
    chi: _F64,
    s: int,
    V1: _F64,
    fv: _F64,
) -> None: ...
def py_gradient(
    cfg: OnlineConfig, eps: float, Fb: _F64, V: _F64, y: float, xi: _F64, chi: _F64
) -> int: ...
