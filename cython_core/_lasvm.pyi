"""Type stub of kbench.cython_core._lasvm (see the module docstring of _lasvm.pyx)."""

from collections.abc import Callable

from typing_extensions import disjoint_base

from kbench.cython_core._kernel_cache import CachedStore
from kbench.cython_core._types import F64, I64, Kernel

STATUS_DONE: int
STATUS_GROW: int
STATUS_PENDING: int
STATUS_FLUSH: int
STATUS_DISCARD: int

@disjoint_base
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
        kernel: Kernel,
        compiled_kernel: bool,
        C: float,
        tau: float,
        n_init: int,
    ) -> None: ...
    def bind(
        self,
        SV: F64,
        sq: F64,
        alpha: F64,
        g: F64,
        lab: F64,
        ids: I64,
        krow: F64,
        scratch: F64,
        ri: F64,
    ) -> None: ...
    def block(
        self,
        X: F64,
        y: F64,
        xids: I64,
        pred: F64,
        start: int,
        process_only: bool = ...,
    ) -> tuple[int, int]: ...
    def finish(self, max_iter: int, step: Callable[[int, int], None] | None = None) -> int: ...
    def decision(self, x: F64, xsq: float) -> float: ...
    def decision_row(self, row: F64) -> float: ...
    def process_row(self, x: F64, xsq: float, y: float, xid: int, kap: float) -> int: ...
    def pair(self, process: bool) -> tuple[int, int]: ...
    def step_rows(self, i: int, j: int, Ki: F64, Kj: F64) -> None: ...
    def cleanup(self) -> None: ...
    def gap(self) -> None: ...
