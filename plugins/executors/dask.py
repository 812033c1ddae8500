"""The ``dask`` executor: tasks on a Dask cluster (a scheduler's, or a local one it starts).

Dask itself is imported only when a study runs on it, so this plugin loads without the
``dask`` extra installed; running on it without the extra is a one-line error.
"""

from __future__ import annotations

from collections.abc import Callable

from kbench.api import DaskExecutor, Executor, hookimpl


@hookimpl
def kbench_register_executors(register: Callable[[type[Executor]], None]) -> None:
    """Register the Dask executor."""
    register(DaskExecutor)
