"""Type stub of kbench.cython_core._lasvm (see the module docstring of _lasvm.pyx)."""

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
STATUS_DISCARD: int

class LasvmCore(CachedStore):
    C: float
    tau: float
    n_init: int
    b: float
    delta: float
    processed: int
    smo_steps: int
    finish_iters: int
    discarded: int
    def __init__(
        self,
        kernel: _Kernel,
        compiled_kernel: bool,
        C: float,
        tau: float,
        n_init: int,
    ) -> None: ...
    def bind(
        self,
        SV: _F64,
        sq: _F64,
        alpha: _F64,
        g: _F64,
        lab: _F64,
        ids: _I64,
        krow: _F64,
        scratch: _F64,
        ri: _F64,
    ) -> None: ...
    def block(
        self,
        X: _F64,
        y: _F64,
        xids: _I64,
        pred: _F64,
        start: int,
        process_only: bool = ...,
    ) -> tuple[int, int]: ...
    def finish(self, max_iter: int) -> int: ...
    def decision(self, x: _F64, xsq: float) -> float: ...
    def decision_row(self, row: _F64) -> float: ...
    def process_row(self, x: _F64, xsq: float, y: float, xid: int, kap: float) -> int: ...
    def pair(self, process: bool) -> tuple[int, int]: ...
    def step_rows(self, i: int, j: int, Ki: _F64, Kj: _F64) -> None: ...
    def cleanup(self) -> None: ...
    def gap(self) -> None: ...
