"""Type aliases shared by the stubs of kbench.cython_core (a stub only: nothing imports it at run time)."""

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
# A compiled kernel, ``Kernel.compiled()``: (kind, gamma, scale, offset, degree).
Kernel = tuple[int, float, float, float, float]
