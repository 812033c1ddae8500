"""Kernel rows and weighted sums: the primitive every kernel algorithm spends its time in.

``KernelRow`` times ``Kernel.row`` for every registered kernel (a new kernel plugin is
benchmarked without new code) over M stored vectors of dimension d, in float64 and
float32. ``MatVec`` times the bare BLAS matrix-vector product ``S @ x`` of the same
shapes: the memory-bandwidth floor a kernel row is compared with. ``WeightedSum`` times
the expansion ``alphaᵀ k`` of a support buffer, for one output and for ten (multiclass).
"""

from __future__ import annotations

import time

import numpy as np

from kbench.core.support_buffer import SupportBuffer

from . import common

SIZES = list(common.PROFILES[common.PROFILE]["kernel_sizes"])
DIMS = [2, 784]
DTYPES = ["float64", "float32"]


def _inputs(m: int, d: int, dtype: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """S (m × d), its squared row norms and x, scaled so that ‖s − x‖² is about 2."""
    rs = np.random.RandomState(common.KERNEL_SEED)
    S = (rs.standard_normal((m, d)) / np.sqrt(d)).astype(dtype)
    x = (rs.standard_normal(d) / np.sqrt(d)).astype(dtype)
    sq = np.einsum("ij,ij->i", S, S).astype(dtype)
    return S, sq, x, float(x @ x)


def _calls_per_sample(fn, target: float = 2e-3) -> int:
    """How many calls fill about ``target`` seconds (asv times each call separately)."""
    fn()
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    return int(min(1000, max(1, target / once)))


class KernelRow:
    """``Kernel.row(S, x)`` with cached squared norms, into a preallocated output."""

    params = (common.kernel_names(), SIZES, DIMS, DTYPES)
    param_names = ["kernel", "M", "d", "dtype"]

    def setup(self, kernel: str, m: int, d: int, dtype: str) -> None:
        if getattr(self, "_key", None) == (kernel, m, d, dtype):
            return  # asv re-runs setup between timed calls; the inputs do not change
        self._key = (kernel, m, d, dtype)
        self._kernel = common.registry().create("kernel", kernel)
        self._S, self._sq, self._x, self._xsq = _inputs(m, d, dtype)
        self._out = np.empty(m, dtype=dtype)
        self.number = _calls_per_sample(lambda: self.time_row(kernel, m, d, dtype))

    def time_row(self, kernel: str, m: int, d: int, dtype: str) -> None:
        """One kernel row."""
        self._kernel.row(self._S, self._x, out=self._out, sq=self._sq, xsq=self._xsq)


class MatVec:
    """The floor: NumPy's BLAS matrix-vector product ``S @ x`` of the same shapes."""

    params = (SIZES, DIMS, DTYPES)
    param_names = ["M", "d", "dtype"]

    def setup(self, m: int, d: int, dtype: str) -> None:
        if getattr(self, "_key", None) == (m, d, dtype):
            return
        self._key = (m, d, dtype)
        self._S, _, self._x, _ = _inputs(m, d, dtype)
        self._out = np.empty(m, dtype=dtype)
        self.number = _calls_per_sample(lambda: self.time_matvec(m, d, dtype))

    def time_matvec(self, m: int, d: int, dtype: str) -> None:
        """One ``S @ x``."""
        np.matmul(self._S, self._x, out=self._out)


class WeightedSum:
    """``SupportBuffer.scores(k)``: the weighted sum behind every decision value."""

    params = (SIZES, [1, 10])
    param_names = ["M", "outputs"]

    def setup(self, m: int, outputs: int) -> None:
        if getattr(self, "_key", None) == (m, outputs):
            return
        self._key = (m, outputs)
        rs = np.random.RandomState(common.KERNEL_SEED)
        self._buf = SupportBuffer(2, m, n_outputs=outputs)
        for row in rs.standard_normal((m, 2)):
            self._buf.add(row, rs.standard_normal(outputs))
        self._k = rs.uniform(0.0, 1.0, m)
        self.number = _calls_per_sample(lambda: self.time_weighted_sum(m, outputs))

    def time_weighted_sum(self, m: int, outputs: int) -> None:
        """One weighted sum over M support vectors."""
        self._buf.scores(self._k)
