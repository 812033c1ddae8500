"""Kernel rows and weighted sums: the primitive every kernel algorithm spends its time in.

``KernelRow`` times ``Kernel.row`` for every registered kernel (a new kernel plugin is
benchmarked without new code) over M stored vectors of dimension d, in float64 and
float32, and ``MatVec`` the bare BLAS matrix-vector product ``S @ x`` of the same
shapes: both from :mod:`kbench.asv.benchmarks`. ``WeightedSum`` times the expansion
``alphaᵀ k`` of a support buffer, for one output and for ten (multiclass).
"""

from __future__ import annotations

import numpy as np

from kbench.asv import streams
from kbench.asv.benchmarks import Timed, calls_per_sample, kernel_suites
from kbench.learners.support_buffer import SupportBuffer

from . import common

globals().update(kernel_suites(streams.kernel_names(), profile=common.PROFILE))

SIZES = list(streams.PROFILES[common.PROFILE]["kernel_sizes"])


class WeightedSum(Timed):
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
        self.number = calls_per_sample(lambda: self.time_weighted_sum(m, outputs))

    def time_weighted_sum(self, m: int, outputs: int) -> None:
        """One weighted sum over M support vectors."""
        self._buf.scores(self._k)
