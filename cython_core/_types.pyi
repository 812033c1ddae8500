"""Type aliases shared by the stubs of kbench.cython_core (a stub only: nothing imports it at run time)."""

from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from kbench.cython_core._kernels import KernelSpec

F64 = npt.NDArray[np.float64]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
# The kernel a compiled loop takes: a KernelSpec, or the tuple of ``Kernel.compiled()``,
# (kind, gamma, scale, offset, degree), which the loops turn into one (the adapter).
Kernel = KernelSpec | tuple[int, float, float, float, float]

class BlockLoop(Protocol):
    """A block loop of the learner toolkit (``kbench.learners.Expansion.learn``): the calling
    convention of :func:`kbench.cython_core._perceptron.perceptron_block`, then the loop's own
    keyword parameters; returns (next row, stored rows, kernel evaluations)."""

    def __call__(
        self,
        kernel: Kernel,
        rows: Any,
        store: Any,
        y: F64,
        pred: F64,
        start: int = 0,
        have_row: bool = False,
        kxx: float = 0.0,
        **params: Any,
    ) -> tuple[int, int, int]: ...
