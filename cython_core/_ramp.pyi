"""Type stub of kbench.cython_core._ramp (the ramp-loss SVM core: the solver and the
learning methods over :class:`~kbench.cython_core._ramp_store.RampStore`).

Arrays are C-contiguous float64 unless noted. A core made with ``sparse=True`` learns
CSR rows through the ``*_csr`` methods.
"""

import numpy as np
import numpy.typing as npt

from kbench.cython_core._ramp_store import SCATTER_MAX as SCATTER_MAX
from kbench.cython_core._ramp_store import RampStore
from kbench.cython_core._types import F64

class RampCore(RampStore):
    def decide(self, x: F64) -> float: ...
    def learn(self, x: F64, yv: float) -> None: ...
    def block(self, X: F64, y: F64, pred: F64, width: float) -> int: ...
    def fit(self, X: F64, y: F64, n_init: int) -> None: ...
    def decide_csr(self, xi: npt.NDArray[np.int32], xd: F64) -> float: ...
    def learn_csr(self, xi: npt.NDArray[np.int32], xd: F64, yv: float) -> None: ...
    def block_csr(
        self,
        xp_: npt.NDArray[np.int64],
        xi_: npt.NDArray[np.int32],
        xd_: F64,
        y: F64,
        pred: F64,
        width: float,
    ) -> int: ...
    def fit_csr(
        self,
        xp_: npt.NDArray[np.int64],
        xi_: npt.NDArray[np.int32],
        xd_: F64,
        y: F64,
        n_init: int,
    ) -> None: ...
