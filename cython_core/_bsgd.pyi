"""Type stub of kbench.cython_core._bsgd (kernel Pegasos and budgeted SGD).

``mode``: 0 none (Pegasos), 1 removal, 2 projection, 3 merge. ``state`` is
``[m, t, scale, kernel_evals, maintenance_steps, ‖f‖²]``. Arrays are C-contiguous float64
and are updated in place.
"""

import numpy as np
import numpy.typing as npt

_F64 = npt.NDArray[np.float64]
_Kernel = tuple[int, float, float, float, float]  # (kind, gamma, scale, offset, degree)

def merge_point(a: float, b: float, k: float) -> tuple[float, float]: ...
def bsgd_block(
    kernel: _Kernel,
    SV: _F64,
    sq: _F64,
    alpha: _F64,
    kdiag: _F64,
    stamp: _F64,
    Kinv: _F64,
    state: _F64,
    lam: float,
    mode: int,
    budget: int,
    project_ball: bool,
    X: _F64,
    y: _F64,
    pred: _F64,
    krow: _F64,
    krow2: _F64,
    dvec: _F64,
    scores: _F64,
    have_row: bool,
    kxx_given: float,
    start: int,
) -> int: ...
