"""The Cauchy kernel in plain NumPy: a kernel kbench does not ship, usable by every algorithm."""

from __future__ import annotations

import numpy as np

from kbench.api import Kernel, as_matrix, as_vector, check_range


class CauchyKernel(Kernel):
    """Cauchy kernel ``k(x, x') = 1 / (1 + ‖x − x'‖² / sigma²)``, in plain NumPy.

    A radial kernel with heavy tails: far-away support vectors still contribute,
    unlike with the Gaussian kernel. It is positive definite (a scale mixture of
    Gaussian kernels) and ``k(x, x) = 1``.

    Parameters
    ----------
    sigma
        Width: the distance at which the kernel falls to one half.
    """

    name = "cauchy"
    constant_diagonal = True

    def __init__(self, *, sigma: float = 1.0) -> None:
        check_range("cauchy", "sigma", sigma, low=0.0, low_open=True)
        self.sigma = sigma

    def _from_sq_dist(self, d2: np.ndarray) -> np.ndarray:
        # Rounding can make ‖a‖² − 2a·b + ‖b‖² slightly negative when a ≈ b.
        return 1.0 / (1.0 + np.maximum(d2, 0.0) / self.sigma**2)

    def row(
        self,
        S: np.ndarray,
        x: np.ndarray,
        *,
        out: np.ndarray | None = None,
        sq: np.ndarray | None = None,
        xsq: float | None = None,
    ) -> np.ndarray:
        """``k(S[i], x)`` for each row of S, using the cached squared norms when given."""
        S = as_matrix(S, "S")
        x = as_vector(x, "x")
        if sq is None:
            sq = np.einsum("ij,ij->i", S, S)
        if xsq is None:
            xsq = float(x @ x)
        k = self._from_sq_dist(sq - 2.0 * (S @ x) + xsq)
        if out is None:
            return k
        out[: len(k)] = k
        return out[: len(k)]

    def matrix(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """The Gram block ``K[i, j] = k(A[i], B[j])``."""
        A = as_matrix(A, "A")
        B = as_matrix(B, "B")
        a2 = np.einsum("ij,ij->i", A, A)
        b2 = np.einsum("ij,ij->i", B, B)
        return self._from_sq_dist(a2[:, None] - 2.0 * (A @ B.T) + b2[None, :])

    def diag(self, A: np.ndarray) -> np.ndarray:
        """``k(A[i], A[i]) = 1`` for each row."""
        return np.ones(as_matrix(A, "A").shape[0])
