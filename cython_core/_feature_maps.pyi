"""Type stub of kbench.cython_core._feature_maps (FOGD and NOGD loops).

``task``: a code of ``_online_ops.Task``. ``loss_kind``: a compiled scalar loss id, or for
multiclass ``MulticlassLoss.L_MC_HINGE`` / ``L_SOFTMAX``; ``L_PYTHON`` (−1) reads the
gradient from ``g``.
Arrays are C-contiguous float64, updated in place.
"""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._types import F64, I32, I64, BlockLoop

def sincos_block(u: F64, scale: float, c_out: F64, s_out: F64) -> None: ...
def simd_level(force: int = ...) -> int: ...
def fourier_features(Omega: F64, x: F64, u: F64, z: F64, cols: I32 | None = ...) -> None: ...
def nystrom_features(Mmap: F64, krow: F64, z: F64) -> None: ...
def linear_scores(W: F64, z: F64, out: F64) -> None: ...
def linear_step(W: F64, z: F64, g: F64, eta: float) -> None: ...

#: Rows: a dense 2-D array, or CSR arrays (indptr, indices, data).
_Rows = F64 | tuple[I64, I32, F64]

def fogd_block(
    Omega: F64,
    W: F64,
    eta: float,
    task: int,
    loss_kind: int,
    loss_p1: float,
    rows: _Rows,
    y: F64,
    pred: F64,
    u: F64,
    z: F64,
    scores: F64,
    g: F64,
) -> None: ...
def fogd_decision_many(Omega: F64, W: F64, rows: _Rows, out: F64, u: F64, z: F64) -> None: ...

@disjoint_base
class NogdState:
    M: Any
    W: Any
    z: Any
    scores: Any
    g: Any
    nystrom: bool
    def __init__(
        self, M: Any, W: Any, z: Any, scores: Any, g: Any, nystrom: bool = False
    ) -> None: ...
    def __reduce__(self) -> Any: ...

nogd_block: BlockLoop
