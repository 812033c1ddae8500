"""Type stub of kbench.cython_core._bpa (the BPA-S block loop).

Kernels are passed as ``(kind, gamma, scale, offset, degree)``, ``kind`` −1 for a
third-party kernel (one example with ``have_row`` and ``kxx_given``). Arrays are
C-contiguous float64 and are updated in place; ``state`` is ``[m, kernel_evals, removals]``.
"""

import numpy as np
import numpy.typing as npt

_F64 = npt.NDArray[np.float64]
_Kernel = tuple[int, float, float, float, float]  # (kind, gamma, scale, offset, degree)

def bpa_s_block(
    kernel: _Kernel,
    SV: _F64,
    sq: _F64,
    a: _F64,
    kdiag: _F64,
    state: _F64,
    C: float,
    X: _F64,
    y: _F64,
    pred: _F64,
    krow: _F64,
    have_row: bool,
    kxx_given: float,
) -> None: ...
