"""Type stub of kbench.cython_core._ramp_store (the ramp-loss SVM core's storage).

Arrays are C-contiguous float64 unless noted; the ``*_`` attributes are the core's own
storage (rows beyond ``n`` / ``nsv`` are unused capacity). A core made with
``sparse=True`` keeps its examples as CSR rows of the pool ``pidx_`` / ``pdat_`` (example k
is ``[st_[k], en_[k])``, support vector p ``[SVst_[p], SVen_[p])``); ``X_`` and ``SVX_``
then hold one unused column.
"""

from typing import Any

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

from kbench.cython_core._kernels import KernelSpec
from kbench.cython_core._types import F64

#: Widest sparse row dimension learnt by scattering into a dense buffer (else by merging).
SCATTER_MAX: int

@disjoint_base
class RampStore:
    kind: int
    gamma: float
    kscale: float
    koffset: float
    degree: float
    C: float
    s: float
    tau: float
    eps_gain: float
    grad_sign: float
    max_outer: int
    max_steps: int
    refresh: int
    m_keep: int
    n: int
    d: int
    cap: int
    nsv: int
    svcap: int
    nslots: int
    cache_bytes: float
    kernel_evals: int
    kernel_requests: int
    steps: int
    outer_total: int
    outer_max: int
    outer_caps: int
    step_caps: int
    removed: int
    updates: int
    seen: int
    refresh_evals: int
    ex_steps: int
    since_refresh: int
    clock: int
    version: int
    drift_max: float
    last_update: int
    trace: bool
    history: list[tuple[int, float]]
    X_: F64
    sq_: F64
    y_: F64
    alpha_: F64
    g_: F64
    kd_: F64
    inV_: npt.NDArray[np.uint8]
    age_: npt.NDArray[np.int64]
    svpos_: npt.NDArray[np.intp]
    SVX_: F64
    SVsq_: F64
    SVc_: F64
    SVown_: npt.NDArray[np.intp]
    krow_: F64
    KC_: F64
    cslot_: npt.NDArray[np.intp]
    cown_: npt.NDArray[np.intp]
    clen_: npt.NDArray[np.intp]
    cstamp_: npt.NDArray[np.int64]
    tmp_: npt.NDArray[np.intp]
    scratch_: F64
    sparse: bool
    strategy: int
    pool_end: int
    pool_len: int
    st_: npt.NDArray[np.int64]
    en_: npt.NDArray[np.int64]
    SVst_: npt.NDArray[np.int64]
    SVen_: npt.NDArray[np.int64]
    pidx_: npt.NDArray[np.int32]
    pdat_: F64
    work_: F64
    def __init__(
        self,
        kernel: KernelSpec | tuple[int, float, float, float, float],
        pykernel: Any,
        const_diag: bool,
        d: int,
        C: float,
        s: float,
        tau: float,
        eps_gain: float,
        max_outer: int,
        max_steps: int,
        refresh: int,
        m_keep: int,
        cache_bytes: float,
        sparse: bool = False,
    ) -> None: ...
    def reset(self) -> None: ...
    def exact_gradients(self) -> F64: ...
    def objective(self) -> tuple[float, float, float]: ...
