"""Type stub of kbench.cython_core._polk.

``cfg`` is the online learners' ``OnlineConfig`` (built by
``kbench.plugins.algorithms._online_kernel.make_cfg``), ``params`` is indexed by
``PARAM_FIELDS`` and ``state`` by ``STATE_FIELDS``. The dictionary arrays (D, sq, W, G,
ids, R) have ``capacity`` rows, the pending mini-batch arrays (Xb, xsqb, kdb, XI, idb,
Kb, Kbb) ``batch_size`` rows; all are C-contiguous float64 and updated in place.
"""

from kbench.cython_core._online_ops import OnlineConfig, compiled_gradient, compiled_self_kernel
from kbench.cython_core._types import F64

PARAM_FIELDS: tuple[str, ...]
STATE_FIELDS: tuple[str, ...]
S_FLOOR: float

def work_size(cap: int, C: int, B: int) -> int: ...

#: (D, sq, W, G, ids, Xb, xsqb, kdb, XI, idb, Kb, Kbb, work): the dictionary, the pending
#: mini-batch and the scratch.
Arrays = tuple[F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64]

def polk_block(
    cfg: OnlineConfig,
    params: F64,
    state: F64,
    arrays: Arrays,
    R: F64,
    scores: F64,
    X: F64,
    y: F64,
    pred: F64,
    start: int,
) -> int: ...
def polk_update(params: F64, state: F64, arrays: Arrays) -> None: ...
def polk_probe_index(G: F64, M: int) -> int: ...
def polk_probe(params: F64, state: F64, G: F64, M: int, krow: F64, j: int, work: F64) -> bool: ...
def polk_refresh(G: F64, R: F64, M: int) -> bool: ...
def polk_gram(cfg: OnlineConfig, D: F64, sq: F64, M: int, R: F64) -> None: ...
def polk_batch_gram(cfg: OnlineConfig, Xb: F64, xsqb: F64, ns: int, Kbb: F64) -> None: ...

polk_gradient = compiled_gradient
polk_self_kernel = compiled_self_kernel

def komp(
    G: F64,
    W: F64,
    ids: F64,
    M: int,
    eps: float,
    fold_err: float = 0.0,
    criterion: str = "norm",
) -> tuple[int, float, F64]: ...
