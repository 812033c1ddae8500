"""kbench: a benchmarking framework for online kernel learning.

Plugins implement the hooks in :mod:`kbench.core.hookspecs` and mark them with
:data:`hookimpl`::

    from kbench import hookimpl

    @hookimpl
    def kbench_register_algorithms(register):
        register(MyAlgorithm)
"""

from __future__ import annotations

import os

# Arrow's bundled jemalloc starts a background thread as it loads, unless told not to.
# kbench forks a process per task, and a process with threads other than the forking one
# is unsafe to fork (Python 3.12 warns): keep the thread off, unless the user configured
# jemalloc. This only takes effect when kbench is imported before pyarrow (the CLI is).
os.environ.setdefault("JE_ARROW_MALLOC_CONF", "background_thread:false")

from typing import TYPE_CHECKING, Any

import pluggy

from kbench.core._check_build import check_build

check_build()

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker("kbench")
"""Marker for the functions of a kbench plugin that implement a hook."""

if TYPE_CHECKING:
    from kbench.core.components import Algorithm, Dataset, Kernel, Loss

__all__ = ["Algorithm", "Dataset", "Kernel", "Loss", "__version__", "hookimpl"]


def __getattr__(name: str) -> Any:
    # The base classes import NumPy: loaded on first use, so that `kbench --help` need not.
    if name in ("Algorithm", "Dataset", "Kernel", "Loss"):
        from kbench.core import components

        return getattr(components, name)
    raise AttributeError(f"module 'kbench' has no attribute {name!r}")
