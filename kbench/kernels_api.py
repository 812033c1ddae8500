"""Python API over the compiled kernel rows: validation, dispatch and a base class.

Built-in kernels subclass :class:`CompiledKernel` and only say which compiled kernel
they are. Third-party kernels may subclass :class:`kbench.Kernel` directly and
compute rows in NumPy; :func:`kernel_row` dispatches to whichever applies.
"""

from __future__ import annotations

import numpy as np

from kbench.components import Kernel
from kbench.cython_core import _kernels

KIND_LINEAR = 0
KIND_RBF = 1
KIND_POLY = 2
KIND_LAPLACIAN = 3


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

    def row(self, S, x, *, out=None, sq=None, xsq=None):  # noqa: D102 - documented on Kernel
        S = as_matrix(S, "S")
        x = as_vector(x, "x")
        if S.shape[1] != x.shape[0]:
            raise ValueError(f"kernel row: S has {S.shape[1]} columns but x has {x.shape[0]} entries")
        if out is None:
            out = np.empty(S.shape[0])
        if sq is None:
            sq = sq_norms(S) if S.shape[0] else np.zeros(0)
        if xsq is None:
            xsq = float(x @ x)
        if S.shape[0]:
            _kernels.kernel_row(*self.compiled(), S, sq, x, xsq, out, S.shape[0])
        return out[: S.shape[0]]

    def matrix(self, A, B):  # noqa: D102
        A = as_matrix(A, "A")
        B = as_matrix(B, "B")
        if A.shape[1] != B.shape[1]:
            raise ValueError(f"kernel matrix: A has {A.shape[1]} columns but B has {B.shape[1]}")
        out = np.empty((A.shape[0], B.shape[0]))
        _kernels.kernel_matrix(*self.compiled(), A, sq_norms(A), B, sq_norms(B), out)
        return out

    def diag(self, A):  # noqa: D102
        A = as_matrix(A, "A")
        out = np.empty(A.shape[0])
        _kernels.kernel_diag(*self.compiled(), A, sq_norms(A), out)
        return out


def kernel_row(kernel: Kernel, S: np.ndarray, x: np.ndarray, *, out: np.ndarray | None = None,
               sq: np.ndarray | None = None, xsq: float | None = None) -> np.ndarray:
    """Kernel values between the rows of S and x, through the compiled core when possible."""
    return kernel.row(S, x, out=out, sq=sq, xsq=xsq)
