"""kbench's own asv suite: the profile of this folder and the fixed inputs, from kbench.asv.

The seeds, streams, profiles and cases are defined (and frozen) in
:mod:`kbench.asv.streams`, which plugin authors' suites use too. This module binds them
to the profile of ``benchmarks/config.json`` (``$KBENCH_ASV_PROFILE`` overrides it) for
the benchmarks of this folder that are kbench's alone (the runner's overhead).
"""

from __future__ import annotations

from pathlib import Path

from kbench.asv import streams
from kbench.asv.streams import ALGORITHM_SEED, KERNEL_SEED, STREAMS, Stream, registry

__all__ = ["ALGORITHM_SEED", "KERNEL_SEED", "PROFILE", "STREAMS", "registry", "stream"]

#: The profile of this suite.
PROFILE = streams.profile_name(Path(__file__).with_name("config.json"))


def stream(key: str) -> Stream:
    """The benchmark stream ``key`` under this suite's profile."""
    return streams.stream(key, PROFILE)
