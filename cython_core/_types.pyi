"""Type aliases shared by the stubs of kbench.cython_core (a stub only: nothing imports it at run time)."""

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
