"""The random draws of kbench's compiled learners: a SplitMix64 generator (Steele, Lea and
Flood 2014) whose one-word state a block loop advances in place."""

from __future__ import annotations

import numpy as np


def seed_state(seed: int) -> np.ndarray:
    """The one-word state (uint64) of the compiled SplitMix64 generator for a learner's seed;
    a block loop that draws (``rbp``, ``bogd``) takes it and advances it."""
    return np.array([seed % (1 << 64)], dtype=np.uint64)
