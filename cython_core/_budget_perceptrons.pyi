"""Type stub of kbench.cython_core._budget_perceptrons (RBP, Forgetron, Projectron/++ loops).

Kernels are passed as ``(kind, gamma, scale, offset, degree)`` with ``kind`` one of
``kbench.core.kernel_rows.KIND_*``, or −1 for a third-party kernel (then only one example with
``have_row`` set). Arrays are C-contiguous float64 and are updated in place.
"""

import numpy as np
import numpy.typing as npt

_F64 = npt.NDArray[np.float64]
_Kernel = tuple[int, float, float, float, float]  # (kind, gamma, scale, offset, degree)
_U64 = npt.NDArray[np.uint64]

def scores(krow: _F64, alpha: _F64, m: int, cs: float, out: _F64) -> None: ...
def sqnorm(x: _F64) -> float: ...
def rng_draws(state: int, n: int) -> list[float]: ...
def rbp_block(
    kernel: _Kernel,
    SV: _F64,
    sq: _F64,
    alpha: _F64,
    rng: _U64,
    m: int,
    X: _F64,
    y: _F64,
    pred: _F64,
    krow: _F64,
    scores: _F64,
    have_row: bool,
) -> tuple[int, int]: ...
def forgetron_block(
    kernel: _Kernel,
    SV: _F64,
    sq: _F64,
    a: _F64,
    state: _F64,
    X: _F64,
    y: _F64,
    pred: _F64,
    krow: _F64,
    krow2: _F64,
    have_row: bool,
    have_row2: bool,
) -> None: ...
def projectron_block(
    kernel: _Kernel,
    SV: _F64,
    sq: _F64,
    alpha: _F64,
    Kinv: _F64,
    state: _F64,
    eta: float,
    plus: bool,
    X: _F64,
    y: _F64,
    pred: _F64,
    krow: _F64,
    dvec: _F64,
    scores: _F64,
    have_row: bool,
    kxx_given: float,
    U: float = ...,
) -> None: ...
