"""Type stub of kbench.cython_core._huller (see the module docstring of _huller.pyx)."""

import numpy as np
import numpy.typing as npt

from kbench.cython_core._kernel_cache import CachedStore

_F64 = npt.NDArray[np.float64]
_Kernel = tuple[int, float, float, float, float]  # (kind, gamma, scale, offset, degree)
_I64 = npt.NDArray[np.int64]

STATUS_DONE: int
STATUS_GROW: int
STATUS_PENDING: int
STATUS_FLUSH: int

def uniform(seed: int, t: int) -> float: ...

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
        kernel: _Kernel,
        compiled_kernel: bool,
        ridge: float,
        allow_negative: bool,
        removals: int,
        n_init: int,
        seed: int,
    ) -> None: ...
    def bind(
        self,
        SV: _F64,
        sq: _F64,
        ap: _F64,
        an: _F64,
        lab: _F64,
        ids: _I64,
        krow: _F64,
        scratch: _F64,
    ) -> None: ...
    def block(
        self,
        X: _F64,
        y: _F64,
        xids: _I64,
        pred: _F64,
        start: int,
        insert_only: bool = ...,
    ) -> tuple[int, int]: ...
    def decision(self, x: _F64, xsq: float) -> tuple[float, float]: ...
    def decision_row(self, row: _F64) -> tuple[float, float]: ...
    def learn_row(self, x: _F64, xsq: float, y: float, xid: int, row: _F64, kap: float) -> int: ...
    def pick(self) -> int: ...
    def update_sv(self, r: int, row: _F64) -> None: ...
