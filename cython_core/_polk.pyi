"""Type stub of kbench.cython_core._polk (POLK's block loop and kernel computations).

``cfg`` is the ``OnlineConfig`` of :func:`kbench.learners.make_cfg`; ``state`` a
:class:`~kbench.cython_core._polk_model.PolkState` bound to its arrays. Arrays are
C-contiguous float64, updated in place.
"""

from kbench.cython_core._kernels import KernelSpec
from kbench.cython_core._online_ops import OnlineConfig, compiled_gradient, compiled_self_kernel
from kbench.cython_core._polk_model import PolkState
from kbench.cython_core._types import F64

def polk_block(
    kernel: KernelSpec,
    X: F64,
    y: F64,
    pred: F64,
    start: int,
    *,
    cfg: OnlineConfig,
    state: PolkState,
    scores: F64,
) -> int: ...
def polk_gram(kernel: KernelSpec, D: F64, sq: F64, M: int, R: F64) -> None: ...
def polk_batch_gram(kernel: KernelSpec, Xb: F64, xsqb: F64, ns: int, Kbb: F64) -> None: ...

polk_gradient = compiled_gradient
polk_self_kernel = compiled_self_kernel
