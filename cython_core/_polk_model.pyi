"""Type stub of kbench.cython_core._polk_model (POLK's model: its state, step and KOMP).

A :class:`PolkState` holds arrays over the store's capacity (G, ids, R, and the pending
points' kernel rows Kb, B × capacity) or the batch (XI, kdb, idb), grown by the block loop
with the store; all are C-contiguous float64 and updated in place.
"""

import enum
from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._types import F64

STATE_FIELDS: tuple[str, ...]
S_FLOOR: float

class Schedule(enum.IntEnum):
    SCH_CONSTANT = 0
    SCH_DIMINISHING = 1

class Reduce(enum.IntEnum):
    RED_MEAN = 0
    RED_SUM = 1

class Criterion(enum.IntEnum):
    CRIT_NORM = 0
    CRIT_SQUARED = 1

@disjoint_base
class PolkState:
    eta: float
    lam: float
    K: float
    t0: float
    tau: float
    rtol: float
    schedule: Schedule
    reduce: Reduce
    criterion: Criterion
    B: int
    refresh: int
    m: int
    t: int
    nseen: int
    nstored: int
    updates: int
    kernel_evals: int
    appends: int
    folds: int
    deletions: int
    zero_run: int
    refreshes: int
    refresh_failures: int
    update_due: bool
    probe_due: bool
    last_err: float
    last_eps: float
    max_err_ratio: float
    eta_t: float
    probe_residual: float
    G: F64
    ids: F64
    Kb: F64
    R: F64
    XI: F64
    kdb: F64
    idb: F64
    work: F64
    def __init__(
        self,
        *,
        eta: float,
        lam: float,
        K: float,
        schedule: Schedule,
        t0: float,
        B: int,
        reduce: Reduce,
        criterion: Criterion,
        tau: float,
        refresh: int,
        rtol: float,
    ) -> None: ...
    def state(self) -> dict[str, float]: ...
    def fields(self) -> dict[str, Any]: ...
    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]: ...

def work_size(cap: int, C: int, B: int) -> int: ...
def polk_refresh(G: F64, R: F64, M: int) -> bool: ...
def polk_probe_index(G: F64, M: int) -> int: ...
def polk_probe(state: PolkState, krow: F64, j: int) -> bool: ...
def komp(
    G: F64,
    W: F64,
    ids: F64,
    M: int,
    eps: float,
    fold_err: float = 0.0,
    criterion: str = "norm",
) -> tuple[int, float, F64]: ...
