"""The ``local`` executor: a child process per task on this machine (the default)."""

from __future__ import annotations

from collections.abc import Callable

from kbench.api import Executor, LocalExecutor, hookimpl


@hookimpl
def kbench_register_executors(register: Callable[[type[Executor]], None]) -> None:
    """Register the local executor."""
    register(LocalExecutor)
