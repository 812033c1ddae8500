"""kbench: a benchmarking framework for online kernel learning.

Plugins implement the hooks in :mod:`kbench.hookspecs` and mark them with
:data:`hookimpl`::

    from kbench import hookimpl

    @hookimpl
    def kbench_register_algorithms(register):
        register(MyAlgorithm)
"""

from __future__ import annotations

import pluggy

from kbench._check_build import check_build

check_build()

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker("kbench")
"""Marker for the functions of a kbench plugin that implement a hook."""

from kbench.components import Algorithm, Dataset, Kernel, Loss  # noqa: E402

__all__ = ["Algorithm", "Dataset", "Kernel", "Loss", "__version__", "hookimpl"]
