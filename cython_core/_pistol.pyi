"""Type stub of kbench.cython_core._pistol.

``cfg`` is the online learners' ``OnlineConfig`` (built by
``kbench.plugins.algorithms._online_kernel.make_cfg``), ``params`` is indexed by
``PARAM_FIELDS`` and ``state`` by ``STATE_FIELDS``. Arrays are C-contiguous float64 and
are updated in place. ``A`` is the buffer's cap × 2C coefficient block ``[c | u]``.
"""

from kbench.cython_core._online_ops import OnlineConfig, compiled_gradient, compiled_self_kernel
from kbench.cython_core._sparse import SparseBlock
from kbench.cython_core._types import F64

PARAM_FIELDS: tuple[str, ...]
STATE_FIELDS: tuple[str, ...]
LOG_W_MAX: float

def pistol_block(
    cfg: OnlineConfig,
    params: F64,
    state: F64,
    SV: F64,
    sq: F64,
    A: F64,
    X: F64,
    y: F64,
    pred: F64,
    krow: F64,
    work: F64,
    start: int,
    sparse: SparseBlock | None = None,
) -> int: ...
def pistol_multiplier(params: F64, state: F64) -> float: ...
def pistol_outputs(params: F64, state: F64, GU: F64, w: float, Fon: F64, Fout: F64) -> None: ...

pistol_gradient = compiled_gradient
pistol_self_kernel = compiled_self_kernel

def pistol_apply(
    params: F64,
    state: F64,
    SV: F64,
    sq: F64,
    A: F64,
    x: F64,
    xsq: float,
    kxx: float,
    GU: F64,
    w: float,
    xi: F64,
) -> None: ...
