"""Type stub of kbench.cython_core._kernels.

Every kernel is passed as a ``KernelSpec`` (or ``(kind, gamma, scale, offset, degree)``), with
``kind`` one of ``KernelKind`` (``kbench.core.kernel_rows.KIND_*``). Outputs are written in place. Kernel rows, squared norms and
weighted sums take C-contiguous arrays that are all float64 or all float32 (float32 is
computed in float32); matrices, diagonals and decision blocks are float64.
"""

import enum
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

from kbench.cython_core._types import F64, Kernel

_Float = TypeVar("_Float", npt.NDArray[np.float64], npt.NDArray[np.float32])

class KernelKind(enum.IntEnum):
    """The compiled kernel kinds (``Kernel.compiled()[0]``; -1 a third-party kernel)."""

    K_NOT_COMPILED = -1
    K_LINEAR = 0
    K_RBF = 1
    K_POLY = 2
    K_LAPLACIAN = 3

@disjoint_base
class KernelSpec:
    """A built-in kernel as the compiled loops take it (immutable, picklable)."""

    @property
    def kind(self) -> int: ...
    @property
    def gamma(self) -> float: ...
    @property
    def scale(self) -> float: ...
    @property
    def offset(self) -> float: ...
    @property
    def degree(self) -> float: ...
    def __init__(
        self,
        kind: int,
        gamma: float = 0.0,
        scale: float = 1.0,
        offset: float = 0.0,
        degree: float = 1.0,
    ) -> None: ...
    @staticmethod
    def of(kernel: Any) -> KernelSpec: ...
    @property
    def compiled(self) -> bool: ...
    def astuple(self) -> tuple[int, float, float, float, float]: ...
    def self_kernel(self, xsq: float) -> float: ...
    def __reduce__(self) -> tuple[type[KernelSpec], tuple[int, float, float, float, float]]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

def kernel_row(
    kernel: Kernel,
    S: _Float,
    sq: _Float,
    x: _Float,
    xsq: float,
    out: _Float,
    m: int = -1,
) -> None: ...
def compiled_row(
    self: Any,
    S: npt.ArrayLike,
    x: npt.ArrayLike,
    *,
    out: npt.NDArray[np.floating[Any]] | None = None,
    sq: npt.ArrayLike | None = None,
    xsq: float | None = None,
) -> npt.NDArray[np.floating[Any]]: ...
def kernel_matrix(
    kernel: Kernel,
    A: F64,
    asq: F64,
    B: F64,
    bsq: F64,
    out: F64,
) -> None: ...
def kernel_diag(
    kernel: Kernel,
    A: F64,
    asq: F64,
    out: F64,
) -> None: ...
def sqnorm(x: F64) -> float: ...
def sq_norms(A: _Float, out: _Float) -> None: ...
def expansion(k: _Float, alpha: _Float, m: int, out: _Float, scale: float = 1.0) -> None: ...
def decision_block(
    kernel: Kernel,
    S: F64,
    sq: F64,
    alpha: F64,
    m: int,
    X: F64,
    xsq: F64,
    K: F64,
    out: F64,
) -> None: ...
