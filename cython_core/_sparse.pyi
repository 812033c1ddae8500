"""Type stub of kbench.cython_core._sparse.

Kernels are passed as ``(kind, gamma, scale, offset, degree)`` (``kbench.core.kernel_rows.KIND_*``).
A sparse row is int32 indices (strictly increasing) and float64 data; stored rows are spans
``[starts[i], ends[i])`` (int64) of a pool of int32 indices and float64 data. Outputs are
written in place.
"""

import numpy as np
import numpy.typing as npt

_F64 = npt.NDArray[np.float64]
_Kernel = tuple[int, float, float, float, float]  # (kind, gamma, scale, offset, degree)
_I32 = npt.NDArray[np.int32]
_I64 = npt.NDArray[np.int64]

STRATEGY_AUTO: int
STRATEGY_MERGE: int
STRATEGY_SCATTER: int

def check_indices(indices: _I32, d: int = -1) -> None: ...
def check_rows(starts: _I64, ends: _I64, indices: _I32, d: int = -1) -> None: ...
def kernel_row(
    kernel: _Kernel,
    x_indices: _I32,
    x_data: _F64,
    xsq: float,
    starts: _I64,
    ends: _I64,
    indices: _I32,
    data: _F64,
    sq: _F64 | None,
    out: _F64,
    m: int = -1,
    strategy: int = 0,
    work: _F64 | None = None,
) -> None: ...
def kernel_block(
    kernel: _Kernel,
    x_starts: _I64,
    x_ends: _I64,
    x_indices: _I32,
    x_data: _F64,
    xsq: _F64 | None,
    starts: _I64,
    ends: _I64,
    indices: _I32,
    data: _F64,
    sq: _F64 | None,
    K: _F64,
    m: int = -1,
    strategy: int = 0,
    work: _F64 | None = None,
) -> None: ...
def row_sq_norms(starts: _I64, ends: _I64, data: _F64, out: _F64) -> None: ...
