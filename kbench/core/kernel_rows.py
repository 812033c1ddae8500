"""Python API over the compiled kernel rows: validation, dispatch and a base class.

Built-in kernels subclass :class:`CompiledKernel` and only say which compiled kernel
they are. Their rows accept float64 or float32 stored vectors; float32 is computed in
float32, which halves the memory a row reads. Third-party kernels may subclass
:class:`kbench.Kernel` directly and compute rows in NumPy; :func:`kernel_row` dispatches
to whichever applies.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.core.components import Kernel
from kbench.cython_core import _kernels

# The compiled kernel kinds, the first entry of ``Kernel.compiled()``: read from the enum
# the compiled core switches on (kbench.cython_core._kernels.KernelKind), so that there is
# one list. Plain ints, as they travel in tuples and are compared with ``==``.
KIND_LINEAR = int(_kernels.KernelKind.K_LINEAR)
KIND_RBF = int(_kernels.KernelKind.K_RBF)
KIND_POLY = int(_kernels.KernelKind.K_POLY)
KIND_LAPLACIAN = int(_kernels.KernelKind.K_LAPLACIAN)


def as_matrix(A: np.ndarray, name: str = "A") -> np.ndarray:
    """Return A as a C-contiguous float64 2-D array (a view when it already is one)."""
    A = np.asarray(A)
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {A.shape}")
    return np.ascontiguousarray(A, dtype=np.float64)


def as_vector(x: np.ndarray, name: str = "x") -> np.ndarray:
    """Return x as a C-contiguous float64 1-D array (a view when it already is one)."""
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {x.shape}")
    return np.ascontiguousarray(x, dtype=np.float64)


def sq_norms(A: np.ndarray) -> np.ndarray:
    """Squared Euclidean norm of each row of A, computed in the compiled core."""
    A = as_matrix(A)
    out = np.empty(A.shape[0])
    _kernels.sq_norms(A, out)
    return out


class CompiledKernel(Kernel):
    """A kernel whose rows, matrices and diagonals are computed in ``kbench.cython_core``."""

    def compiled(self) -> tuple[int, float, float, float, float]:
        """``(kind, gamma, scale, offset, degree)``."""
        raise NotImplementedError

    # Kernel.row of every compiled kernel, implemented in the compiled core: it runs once
    # per example, and argument checks written in Python cost more than a row of a few
    # hundred short vectors. float32 S gives float32 rows (see _kernels.compiled_row).
    row = _kernels.compiled_row

    def matrix(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        A = as_matrix(A, "A")
        B = as_matrix(B, "B")
        if A.shape[1] != B.shape[1]:
            raise ValueError(f"kernel matrix: A has {A.shape[1]} columns but B has {B.shape[1]}")
        out = np.empty((A.shape[0], B.shape[0]))
        _kernels.kernel_matrix(self.compiled(), A, sq_norms(A), B, sq_norms(B), out)
        return out

    def diag(self, A: np.ndarray) -> np.ndarray:
        A = as_matrix(A, "A")
        out = np.empty(A.shape[0])
        _kernels.kernel_diag(self.compiled(), A, sq_norms(A), out)
        return out


def kernel_row(kernel: Kernel, S: np.ndarray, x: np.ndarray, **caches: Any) -> np.ndarray:
    """Kernel values between the rows of S and x, through the compiled core when possible.

    The same call as ``kernel.row(S, x, **caches)``; ``caches`` are the keywords
    :meth:`Kernel.row` takes (``out``, ``sq``, ``xsq``).
    """
    return kernel.row(S, x, **caches)
