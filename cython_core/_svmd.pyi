"""Type stub of kbench.cython_core._svmd.

``cfg`` is the online learners' ``OnlineConfig`` (built by
``kbench.plugins.algorithms._online_kernel.make_cfg``), the state array is indexed by
``STATE_FIELDS``. ``AB`` holds one row [α | β] (2C entries) per stored example; ``off``
holds the offsets, their step sizes and their traces (3C). Arrays are C-contiguous
float64 and are updated in place.
"""

from kbench.cython_core._online_ops import OnlineConfig
from kbench.cython_core._sparse import SparseBlock
from kbench.cython_core._types import F64

STATE_FIELDS: tuple[str, ...]

#: (SV, sq, AB, state, off): the buffer's rows, squared norms and [α | β] rows, the state
#: array and the offsets with their step sizes and traces.
Model = tuple[F64, F64, F64, F64, F64]

def svmd_block(
    cfg: OnlineConfig,
    model: Model,
    X: F64,
    y: F64,
    pred: F64,
    krow: F64,
    kj: F64,
    work: F64,
    sparse: SparseBlock | None = None,
) -> None: ...
def svmd_apply(
    cfg: OnlineConfig,
    model: Model,
    k: F64,
    kj: F64,
    x: F64,
    xsq: float,
    kxx: float,
    FV: F64,
    xi: F64,
    chi: F64,
    s: int,
    V1: F64,
    fv: F64,
) -> None: ...
def py_gradient(
    cfg: OnlineConfig, eps: float, Fb: F64, V: F64, y: float, xi: F64, chi: F64
) -> int: ...
