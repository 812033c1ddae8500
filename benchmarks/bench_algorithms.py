"""Speed, memory and accuracy of every registered algorithm on the fixed benchmark streams.

The parameter grids are the registry itself: an algorithm registered by a built-in or
installed plugin is benchmarked here without new code. Each suite runs every algorithm on
every stream of ``kbench.asv.streams.STREAMS``; a combination the algorithm does not
support is skipped. The suites (``LearnOne``, ``PredictOne``, ``LearnPredictMany``,
``StreamMemory``, ``Fit``, ``StreamQuality``) are those of :mod:`kbench.asv.benchmarks`, which
describes each; a plugin's own repository benchmarks its algorithms with the same classes.
"""

from __future__ import annotations

from kbench.asv import streams
from kbench.asv.benchmarks import algorithm_suites

from . import common

globals().update(
    algorithm_suites(
        streams.algorithm_names(), streams=list(streams.STREAMS), profile=common.PROFILE
    )
)
