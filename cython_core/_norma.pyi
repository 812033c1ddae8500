"""Type stub of kbench.cython_core._norma.

``cfg`` is the online learners' ``OnlineConfig`` (built by
``kbench.plugins.algorithms._online_kernel.make_cfg``), the state array is indexed by
``STATE_FIELDS``. Arrays are C-contiguous float64 and are updated in place.
"""

from kbench.cython_core._online_ops import OnlineConfig
from kbench.cython_core._sparse import SparseBlock
from kbench.cython_core._types import F64

STATE_FIELDS: tuple[str, ...]

#: (SV, sq, A, state, b): the buffer's rows, squared norms and coefficients, the state
#: array and the offsets.
Model = tuple[F64, F64, F64, F64, F64]

def norma_block(
    cfg: OnlineConfig,
    model: Model,
    X: F64,
    y: F64,
    pred: F64,
    krow: F64,
    work: F64,
    sparse: SparseBlock | None = None,
) -> None: ...
def norma_apply(cfg: OnlineConfig, model: Model, x: F64, xsq: float, xi: F64, s: int) -> None: ...
