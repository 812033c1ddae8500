"""Type stub of kbench.cython_core._polk.

``cfg`` is the online learners' ``OnlineConfig`` (built by
``kbench.plugins.algorithms._online_kernel.make_cfg``), ``params`` is indexed by
``PARAM_FIELDS`` and ``state`` by ``STATE_FIELDS``. The dictionary arrays (D, sq, W, G,
ids, R) have ``capacity`` rows, the pending mini-batch arrays (Xb, xsqb, kdb, XI, idb,
Kb, Kbb) ``batch_size`` rows; all are C-contiguous float64 and updated in place.
"""

import numpy as np
import numpy.typing as npt

from kbench.cython_core._online_ops import OnlineConfig, compiled_gradient, compiled_self_kernel

_F64 = npt.NDArray[np.float64]

PARAM_FIELDS: tuple[str, ...]
STATE_FIELDS: tuple[str, ...]
S_FLOOR: float

def work_size(cap: int, C: int, B: int) -> int: ...
def polk_block(
    cfg: OnlineConfig,
    params: _F64,
    state: _F64,
    D: _F64,
    sq: _F64,
    W: _F64,
    G: _F64,
    ids: _F64,
    R: _F64,
    Xb: _F64,
    xsqb: _F64,
    kdb: _F64,
    XI: _F64,
    idb: _F64,
    Kb: _F64,
    Kbb: _F64,
    work: _F64,
    scores: _F64,
    X: _F64,
    y: _F64,
    pred: _F64,
    start: int,
) -> int: ...
def polk_update(
    params: _F64,
    state: _F64,
    D: _F64,
    sq: _F64,
    W: _F64,
    G: _F64,
    ids: _F64,
    Xb: _F64,
    xsqb: _F64,
    kdb: _F64,
    XI: _F64,
    idb: _F64,
    Kb: _F64,
    Kbb: _F64,
    work: _F64,
) -> None: ...
def polk_probe_index(G: _F64, M: int) -> int: ...
def polk_probe(
    params: _F64, state: _F64, G: _F64, M: int, krow: _F64, j: int, work: _F64
) -> bool: ...
def polk_refresh(G: _F64, R: _F64, M: int) -> bool: ...
def polk_gram(cfg: OnlineConfig, D: _F64, sq: _F64, M: int, R: _F64) -> None: ...
def polk_batch_gram(cfg: OnlineConfig, Xb: _F64, xsqb: _F64, ns: int, Kbb: _F64) -> None: ...

polk_gradient = compiled_gradient
polk_self_kernel = compiled_self_kernel

def komp(
    G: _F64,
    W: _F64,
    ids: _F64,
    M: int,
    eps: float,
    fold_err: float = 0.0,
    criterion: str = "norm",
) -> tuple[int, float, _F64]: ...
