"""Type stub of kbench.cython_core._polk_model (POLK's model: its state, step and KOMP).

The arrays a :class:`PolkState` is bound to have ``capacity`` rows (the dictionary: D, sq,
W, G, ids, R) or ``B`` rows (the pending mini-batch: Xb, xsqb, kdb, XI, idb, Kb, Kbb); all
are C-contiguous float64 and updated in place.
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
    last_err: float
    last_eps: float
    max_err_ratio: float
    eta_t: float
    probe_residual: float
    @property
    def bound(self) -> bool: ...
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
    def bind(
        self,
        *,
        D: F64,
        sq: F64,
        W: F64,
        G: F64,
        ids: F64,
        Xb: F64,
        xsqb: F64,
        kdb: F64,
        XI: F64,
        idb: F64,
        Kb: F64,
        Kbb: F64,
        work: F64,
        R: F64,
    ) -> None: ...

def work_size(cap: int, C: int, B: int) -> int: ...
def polk_update(state: PolkState) -> None: ...
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
