"""Radial kernels: Gaussian (RBF) and Laplacian."""

from __future__ import annotations

from kbench.api import CompiledKernel, LogUniform, hookimpl, param
from kbench.cython_core._kernels import KernelKind


class RBF(CompiledKernel):
    """Gaussian (RBF) kernel ``k(x, x') = exp(−gamma · ‖x − x'‖²)``.

    This is the one convention kbench uses for the Gaussian kernel, the same as
    scikit-learn's ``rbf_kernel``. Give either ``gamma`` or ``sigma``, not both; the
    width ``sigma`` is converted with ``gamma = 1 / (2 sigma²)``, so that
    ``k(x, x') = exp(−‖x − x'‖² / (2 sigma²))``. With neither, ``gamma = 1``.
    ``k(x, x) = 1`` for every x.

    Parameters
    ----------
    gamma
        Inverse squared width, > 0.
    sigma
        Width (standard deviation), > 0; an alternative to gamma.
    """

    name = "rbf"
    constant_diagonal = True
    test_params = {"gamma": 0.5}
    #: Tuned: the width, as gamma (a spec that sets sigma fixes the kernel).
    search_space = {"gamma": LogUniform(1e-3, 10.0)}

    gamma: float | None = param(None, low=0.0, low_open=True)
    sigma: float | None = param(None, low=0.0, low_open=True)

    def __post_init__(self) -> None:
        if self.gamma is not None and self.sigma is not None:
            raise ValueError("rbf: give gamma or sigma, not both")

    @property
    def effective_gamma(self) -> float:
        """The gamma actually used."""
        if self.sigma is not None:
            return 1.0 / (2.0 * self.sigma**2)
        return 1.0 if self.gamma is None else self.gamma

    def compiled(self) -> tuple[int, float, float, float, float]:
        return (int(KernelKind.K_RBF), self.effective_gamma, 1.0, 0.0, 1.0)


class Laplacian(CompiledKernel):
    """Laplacian kernel ``k(x, x') = exp(−gamma · ‖x − x'‖₁)``.

    The distance is the L1 norm, not squared. ``k(x, x) = 1`` for every x.

    Parameters
    ----------
    gamma
        Inverse width, > 0.
    """

    name = "laplacian"
    constant_diagonal = True

    gamma: float = param(1.0, low=0.0, low_open=True)

    def compiled(self) -> tuple[int, float, float, float, float]:
        return (int(KernelKind.K_LAPLACIAN), self.gamma, 1.0, 0.0, 1.0)


@hookimpl
def kbench_register_kernels(register):
    """Register the radial kernels."""
    register(RBF)
    register(Laplacian)
