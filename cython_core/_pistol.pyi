"""Type stub of kbench.cython_core._pistol.

``cfg`` is the online learners' ``OnlineConfig`` (built by
``kbench.plugins.algorithms._online_kernel.make_cfg``), ``params`` is indexed by
``PARAM_FIELDS`` and ``state`` by ``STATE_FIELDS``. Arrays are C-contiguous float64 and
are updated in place. ``A`` is the buffer's cap × 2C coefficient block ``[c | u]``.
"""

import numpy as np
import numpy.typing as npt

from kbench.cython_core._online_ops import OnlineConfig, compiled_gradient, compiled_self_kernel

_F64 = npt.NDArray[np.float64]

PARAM_FIELDS: tuple[str, ...]
STATE_FIELDS: tuple[str, ...]
LOG_W_MAX: float

def pistol_block(
    cfg: OnlineConfig,
    params: _F64,
    state: _F64,
    SV: _F64,
    sq: _F64,
    A: _F64,
    X: _F64,
    y: _F64,
    pred: _F64,
    krow: _F64,
    work: _F64,
    start: int,
) -> int: ...
def pistol_multiplier(params: _F64, state: _F64) -> float: ...
def pistol_outputs(
    params: _F64, state: _F64, GU: _F64, w: float, Fon: _F64, Fout: _F64
) -> None: ...

pistol_gradient = compiled_gradient
pistol_self_kernel = compiled_self_kernel

def pistol_apply(
    params: _F64,
    state: _F64,
    SV: _F64,
    sq: _F64,
    A: _F64,
    x: _F64,
    xsq: float,
    kxx: float,
    GU: _F64,
    w: float,
    xi: _F64,
) -> None: ...
