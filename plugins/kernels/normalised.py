"""Kernels built on another kernel: cosine normalisation."""

from __future__ import annotations

import numpy as np

from kbench.api import Kernel, as_matrix, as_vector, get_registry, hookimpl, param


class Cosine(Kernel):
    """Cosine-normalised kernel ``k'(x, x') = k(x, x') / sqrt(k(x, x) · k(x', x'))``.

    The base kernel ``k`` is any registered kernel, given by its spec, e.g.
    ``cosine[base=poly[degree=9]]``; the default base ``linear`` gives the cosine
    similarity of the vectors. Normalising maps every feature vector to the unit
    sphere, so ``k'(x, x) = 1`` and ``|k'(x, x')| ≤ 1``, which tames kernels whose
    values span many orders of magnitude (high-degree polynomials).

    A point whose base feature vector is zero (``k(x, x) = 0``, e.g. x = 0 under the
    linear kernel) has no direction; it is mapped to one fixed unit vector orthogonal
    to every other point's, so that ``k'`` stays positive semi-definite with unit
    diagonal: ``k'(x, x') = 1`` if both points are such points, 0 if just one is.

    Rows and matrices are computed in NumPy from the base kernel's rows, matrices and
    diagonals (compiled for the built-in bases); :meth:`compiled` is None, so learners
    take their Python path with this kernel.

    Parameters
    ----------
    base
        Spec of the kernel to normalise.
    """

    name = "cosine"
    constant_diagonal = True
    test_params = {"base": "poly[degree=3]"}
    spec_params = {"base": "kernel"}

    base: str = param("linear")

    def __post_init__(self) -> None:
        base: str | Kernel = self.base
        if isinstance(base, Kernel):
            kernel, self.base = base, base.spec()
        else:
            try:
                kernel = get_registry().create("kernel", base)
            except ValueError as exc:
                raise ValueError(f"cosine: base {base!r} is not a usable kernel: {exc}") from None
        self.base_kernel: Kernel = kernel

    def row(self, S, x, *, out=None, sq=None, xsq=None):
        S = as_matrix(S, "S")
        x = as_vector(x, "x")
        k = self.base_kernel.row(S, x, sq=sq, xsq=xsq)
        ds = self.base_kernel.diag(S)
        dx = self.base_kernel.diag(x[None, :])
        values = _normalise(k[:, None], ds, dx)[:, 0]
        if out is None:
            return values
        out[: len(values)] = values
        return out[: len(values)]

    def matrix(self, A, B):
        A = as_matrix(A, "A")
        B = as_matrix(B, "B")
        K = self.base_kernel.matrix(A, B)
        return _normalise(K, self.base_kernel.diag(A), self.base_kernel.diag(B))

    def diag(self, A):
        A = as_matrix(A, "A")
        return np.ones(A.shape[0])


def _normalise(K: np.ndarray, da: np.ndarray, db: np.ndarray) -> np.ndarray:
    """``K[i, j] / sqrt(da[i] db[j])``, with the zero-diagonal convention of :class:`Cosine`."""
    # A PSD kernel's diagonal is ≥ 0; rounding may leave a tiny negative one, read as 0.
    za = da <= 0.0
    zb = db <= 0.0
    ia = 1.0 / np.sqrt(np.where(za, 1.0, da))
    ib = 1.0 / np.sqrt(np.where(zb, 1.0, db))
    # Cauchy–Schwarz bounds the result by 1 in magnitude; clipping removes rounding
    # excess, which would otherwise give negative squared distances 2 − 2k'.
    V = np.clip(K * ia[:, None] * ib[None, :], -1.0, 1.0)
    V = np.where(za[:, None] | zb[None, :], 0.0, V)
    return np.where(za[:, None] & zb[None, :], 1.0, V)


@hookimpl
def kbench_register_kernels(register):
    """Register the cosine-normalised kernel."""
    register(Cosine)
