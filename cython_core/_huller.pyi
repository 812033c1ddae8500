"""Type stub of kbench.cython_core._huller (see the module docstring of _huller.pyx)."""

from typing_extensions import disjoint_base

from kbench.cython_core._kernel_cache import CachedStore
from kbench.cython_core._types import F64, I64, Kernel

STATUS_DONE: int
STATUS_GROW: int
STATUS_PENDING: int
STATUS_FLUSH: int

def uniform(seed: int, t: int) -> float: ...

@disjoint_base
class HullerCore(CachedStore):
    ridge: float
    allow_negative: bool
    removals: int
    n_init: int
    seed: int
    avg_pos: int
    avg_neg: int
    PP: float
    NP: float
    NN: float
    updates: int
    steps: int
    noops: int
    insertions: int
    draws: int
    nonseparable: bool
    def __init__(
        self,
        kernel: Kernel,
        compiled_kernel: bool,
        ridge: float,
        allow_negative: bool,
        removals: int,
        n_init: int,
        seed: int,
    ) -> None: ...
    def bind(
        self,
        SV: F64,
        sq: F64,
        ap: F64,
        an: F64,
        lab: F64,
        ids: I64,
        krow: F64,
        scratch: F64,
    ) -> None: ...
    def block(
        self,
        X: F64,
        y: F64,
        xids: I64,
        pred: F64,
        start: int,
        insert_only: bool = ...,
    ) -> tuple[int, int]: ...
    def decision(self, x: F64, xsq: float) -> tuple[float, float]: ...
    def decision_row(self, row: F64) -> tuple[float, float]: ...
    def learn_row(self, x: F64, xsq: float, y: float, xid: int, row: F64, kap: float) -> int: ...
    def pick(self) -> int: ...
    def update_sv(self, r: int, row: F64) -> None: ...
