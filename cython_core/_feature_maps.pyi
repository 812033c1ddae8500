"""Type stub of kbench.cython_core._feature_maps (FOGD and NOGD loops).

``task``: 0 binary, 1 multiclass, 2 regression. ``loss_kind``: a compiled scalar loss id,
or for multiclass 0 (Crammer–Singer hinge) / 1 (softmax); −1 reads the gradient from ``g``.
Arrays are C-contiguous float64, updated in place.
"""

import numpy as np
import numpy.typing as npt

_F64 = npt.NDArray[np.float64]
_Kernel = tuple[int, float, float, float, float]  # (kind, gamma, scale, offset, degree)

def sincos_block(u: _F64, scale: float, c_out: _F64, s_out: _F64) -> None: ...
def simd_level(force: int = ...) -> int: ...
def fourier_features(
    Omega: _F64, x: _F64, u: _F64, z: _F64, cols: npt.NDArray[np.int32] | None = ...
) -> None: ...
def nystrom_features(Mmap: _F64, krow: _F64, z: _F64) -> None: ...
def linear_scores(W: _F64, z: _F64, out: _F64) -> None: ...
def linear_step(W: _F64, z: _F64, g: _F64, eta: float) -> None: ...
def fogd_block(
    Omega: _F64,
    W: _F64,
    eta: float,
    task: int,
    loss_kind: int,
    loss_p1: float,
    X: _F64,
    y: _F64,
    pred: _F64,
    u: _F64,
    z: _F64,
    scores: _F64,
    g: _F64,
) -> None: ...
def fogd_decision_many(Omega: _F64, W: _F64, X: _F64, out: _F64, u: _F64, z: _F64) -> None: ...
def fogd_block_csr(
    Omega: _F64,
    W: _F64,
    eta: float,
    task: int,
    loss_kind: int,
    loss_p1: float,
    indptr: npt.NDArray[np.int64],
    indices: npt.NDArray[np.int32],
    data: _F64,
    y: _F64,
    pred: _F64,
    u: _F64,
    z: _F64,
    scores: _F64,
    g: _F64,
) -> None: ...
def fogd_decision_many_csr(
    Omega: _F64,
    W: _F64,
    indptr: npt.NDArray[np.int64],
    indices: npt.NDArray[np.int32],
    data: _F64,
    out: _F64,
    u: _F64,
    z: _F64,
) -> None: ...
def nogd_block(
    kernel: _Kernel,
    SV: _F64,
    sq: _F64,
    A: _F64,
    m: int,
    Mmap: _F64,
    W: _F64,
    nystrom: bool,
    eta: float,
    task: int,
    loss_kind: int,
    loss_p1: float,
    X: _F64,
    y: _F64,
    pred: _F64,
    krow: _F64,
    z: _F64,
    scores: _F64,
    g: _F64,
    have_row: bool,
    start: int,
) -> tuple[int, int, int]: ...
