"""Kernels of the inner product: linear and polynomial."""

from __future__ import annotations

from kbench.api import CompiledKernel, hookimpl, param
from kbench.cython_core._kernels import KernelKind


class Linear(CompiledKernel):
    """Linear kernel ``k(x, x') = ⟨x, x'⟩``."""

    name = "linear"
    constant_diagonal = False

    def compiled(self) -> tuple[int, float, float, float, float]:
        return (int(KernelKind.K_LINEAR), 0.0, 1.0, 0.0, 1.0)


class Polynomial(CompiledKernel):
    """Polynomial kernel ``k(x, x') = (scale · ⟨x, x'⟩ + offset)^degree``.

    Parameters
    ----------
    degree
        Exponent, an integer ≥ 1.
    scale
        Multiplier of the inner product, > 0.
    offset
        Added constant, ≥ 0 (keeps the kernel positive definite).
    """

    name = "poly"
    constant_diagonal = False
    test_params = {"degree": 2}

    degree: int = param(3, low=1)
    scale: float = param(1.0, low=0.0, low_open=True)
    offset: float = param(1.0, low=0.0)

    def __post_init__(self) -> None:
        # A fractional power of a negative ⟨x, x'⟩ is undefined (and not a kernel).
        if isinstance(self.degree, bool) or int(self.degree) != self.degree:
            raise ValueError(f"poly: degree must be an integer, got {self.degree!r}")

    def compiled(self) -> tuple[int, float, float, float, float]:
        return (int(KernelKind.K_POLY), 0.0, self.scale, self.offset, float(self.degree))


@hookimpl
def kbench_register_kernels(register):
    """Register the inner-product kernels."""
    register(Linear)
    register(Polynomial)
