"""Running one task, isolated in a child process, and the local executor.

The built-in executors implement :class:`kbench.core.executors.Executor` and are registered,
as any executor plugin's are, by the built-in plugins ``kbench.plugins.executors.local`` and
``kbench.plugins.executors.dask``. Both run every task through :func:`execute_isolated`: a
forked child process per task, so a task that raises, crashes, hangs past ``timeout`` or
outgrows ``max_memory`` affects only itself, and a hung task is killed even inside compiled
code.

- ``LocalExecutor`` (here): at most ``workers`` children on this machine at once;
  ``workers=0`` runs tasks in this process, one after the other (no isolation), for debugging.
- ``DaskExecutor`` (:mod:`kbench.execution.dask_executor`): tasks are submitted to a
  ``dask.distributed`` cluster (an existing scheduler, or a ``LocalCluster`` it starts) and
  return their results to the driver.

A task carries its stream's spec, never its arrays. The driver builds every stream of a
study into the data cache before the first task starts
(:func:`kbench.execution.driver.run_experiments`);
each task's process maps the cached file read-only. Workers whose ``KBENCH_CACHE`` is the
driver's folder (a local cluster, or shared storage) therefore never build a stream; a
worker with a cache of its own builds a stream into it when its first task needs it.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any, ClassVar

from kbench.core.errors import KbenchError, format_exception_line, interrupted
from kbench.core.executors import ExecutorSettings
from kbench.core.registry import Registry, get_registry
from kbench.data.streams import get_stream
from kbench.execution.isolation import Child, ChildDied, kill_children, run_isolated
from kbench.execution.prequential import TaskResult, failed_result, machine_info, run_task
from kbench.execution.tasks import Task
from kbench.execution.tuning import window_stream

OnDone = Callable[[TaskResult], None]
OnStart = Callable[[Task], None]


_CONTROLLER: Any = None


def _threadpools() -> Any:
    """The process's thread-pool controller, built once: finding the BLAS libraries takes
    about 15 ms, which every forked task would otherwise pay again."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


_PREPARED = False


def _prepare_to_fork() -> None:
    """Do in the parent, once, what every task's child would otherwise do again: load the
    registry, the BLAS controller and the modules a result needs, and ask the platform
    module what it caches (reading the libc version off the interpreter takes 17 ms)."""
    global _PREPARED
    if _PREPARED:
        return
    import pyarrow.pandas_compat  # noqa: F401 - imported by pickling a result table

    get_registry()
    _threadpools()
    machine_info()
    _PREPARED = True


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """BLAS on one thread while tasks are forked from this process; the caller's own limit
    is restored afterwards.

    The limit is set in the parent rather than in each child: changing OpenBLAS's thread
    count in a freshly forked child restarts its thread pool, whose spinning threads then
    slow the task's first tens of milliseconds (a near-empty task took 40 ms instead of 5).
    Children inherit the setting.
    """
    with _threadpools().limit(limits=1):
        yield


def execute(
    task: Task,
    *,
    registry: Registry | None = None,
    cache: Path | None = None,
    trace_memory: bool = True,
    limit_threads: bool = True,
) -> TaskResult:
    """Load the task's stream (from the cache) and run the task, single-threaded BLAS
    (``limit_threads=False``: the caller has already set BLAS to one thread)."""
    registry = registry or get_registry()
    try:
        stream = get_stream(task.stream, registry, cache=cache)
    except Exception as exc:  # recorded as the task's failure
        if interrupted(exc):
            raise
        return failed_result(task, "error", format_exception_line(exc))
    if not limit_threads:
        return run_task(task, stream, registry, trace_memory=trace_memory)
    # One BLAS thread per task: tasks run side by side, and timings stay comparable.
    with _threadpools().limit(limits=1):
        return run_task(task, stream, registry, trace_memory=trace_memory)


def failed_task(task: Task, status: str, reason: str, cache: Path | None = None) -> TaskResult:
    """The result of a task whose process gave none (it crashed, timed out, or the cluster
    or executor could not run it), with its stream's columns (id, task, examples, features) as the
    task would have recorded them: the stream is read from the data cache, where the
    driver built it before the first task (they stay empty if it cannot be read there)."""
    stream = None
    with contextlib.suppress(Exception):
        stream = window_stream(
            get_stream(task.stream, get_registry(), cache=cache), dict(task.options).get("window")
        )
    return failed_result(task, status, reason, stream)


def _died(
    task: Task, exc: ChildDied, max_memory: int | None, cache: Path | None = None
) -> TaskResult:
    """The result of a task whose process ended without one: ``memory`` when it ran out of
    memory (a MemoryError, or a crash after its memory grew to the --max-memory limit),
    ``error`` naming the signal or exit status otherwise."""
    if not exc.reached(max_memory):
        return failed_task(task, "error", str(exc), cache)
    reason = str(exc)
    if max_memory is not None:
        grown = f" after growing by {exc.growth / 2**20:.0f} MiB" if exc.growth else ""
        reason += f"{grown}: it reached the --max-memory limit of {max_memory / 2**20:.0f} MiB"
    return failed_task(task, "memory", reason, cache)


def execute_isolated(
    task: Task,
    *,
    timeout: float | None = None,
    max_memory: int | None = None,
    trace_memory: bool = True,
    cache: Path | None = None,
) -> TaskResult:
    """Run :func:`execute` in a child process; timeouts and deaths become results."""
    # Before forking, so that every child inherits the registry, the BLAS controller and
    # warm imports instead of loading them again (on a Dask worker: once per process).
    _prepare_to_fork()
    _load_plugins_of(task)
    try:
        with _one_blas_thread():
            return run_isolated(
                _execute_in_child,
                task,
                cache,
                trace_memory,
                timeout=timeout,
                max_memory=max_memory,
            )
    except TimeoutError as exc:
        return failed_task(task, "timeout", str(exc), cache)
    except ChildDied as exc:
        return _died(task, exc, max_memory, cache)


def execute_isolated_pickled(task: Task, **limits: Any) -> bytes:
    """:func:`execute_isolated`, its result pickled in the calling thread (a Dask worker's).

    The worker's event-loop thread then only moves bytes. Were it to pickle the result
    itself (its tables' strings are Arrow arrays), it could hold one of Arrow's locks
    (its allocator's, for one) at the moment this thread forks the next task's child,
    which would then wait for that lock forever.
    """
    return pickle.dumps(execute_isolated(task, **limits), protocol=pickle.HIGHEST_PROTOCOL)


def _load_plugins_of(task: Task) -> None:
    """Import the plugins of the task's components in this process, before forking: the
    registry imports a plugin when one of its components is first used, and a module
    imported in a child would be imported again by every later task's child."""
    from contextlib import suppress

    registry = get_registry()
    for kind, spec in (
        ("algorithm", task.algorithm),
        ("kernel", task.kernel),
        ("loss", task.loss),
        ("dataset", task.stream.dataset),
    ):
        # The task's child reports what is wrong with its specs, if anything.
        with suppress(Exception):
            if spec:
                registry.canonical(kind, spec)  # nested specs too (an active learner's base)


def _execute_in_child(task: Task, cache: Path | None, trace_memory: bool) -> TaskResult:
    return execute(task, cache=cache, trace_memory=trace_memory, limit_threads=False)


@dataclass
class TaskLimits:
    """What every executor enforces on each task (its keyword-only settings).

    Parameters
    ----------
    timeout
        Seconds after which a task is killed and recorded as ``timeout``.
    max_memory
        Bytes a task may allocate beyond what its process holds at the start.
    trace_memory
        Trace the learner's peak memory (``peak_memory`` in the results).
    """

    _: KW_ONLY
    timeout: float | None = None
    max_memory: int | None = None
    trace_memory: bool = True

    @staticmethod
    def limits_of(source: TaskLimits | ExecutorSettings) -> dict[str, Any]:
        """The limits ``source`` (an executor, or ``kbench run``'s settings) sets, as the
        keyword arguments of an executor's class or of :func:`execute_isolated`."""
        return {
            "timeout": source.timeout,
            "max_memory": source.max_memory,
            "trace_memory": source.trace_memory,
        }


@dataclass
class LocalExecutor(TaskLimits):
    """Run tasks in child processes on this machine.

    Parameters
    ----------
    workers
        Tasks run at once (default: the number of cores); 0 runs them in this process.
    cache
        Data cache folder the tasks read streams from (default: kbench's).
    timeout, max_memory, trace_memory
        As for :class:`TaskLimits`.
    """

    name: ClassVar[str] = "local"
    workers: int | None = None
    _: KW_ONLY
    cache: Path | None = None

    def __post_init__(self) -> None:
        if self.workers is None:
            self.workers = os.cpu_count() or 1

    @classmethod
    def from_settings(cls, settings: ExecutorSettings) -> LocalExecutor:
        """A local executor for ``kbench run``'s settings (a scheduler address has no use here)."""
        if settings.scheduler:
            raise KbenchError("--scheduler is for --executor dask; the local executor has none")
        if settings.workers == 0 and (settings.timeout or settings.max_memory):
            raise KbenchError(
                "--timeout and --max-memory need worker processes (--workers 1 or more)"
            )
        return cls(settings.workers, **cls.limits_of(settings))

    def describe(self) -> str:
        """One line for the progress display."""
        return (
            f"{self.workers} local worker{'s' if self.workers != 1 else ''}"
            if self.workers
            else "in this process"
        )

    def run(
        self,
        tasks: Sequence[Task],
        on_done: OnDone,
        on_start: OnStart | None = None,
        tick: Callable[[], None] | None = None,
    ) -> None:
        """Run every task, calling ``on_done`` with each result as it arrives."""
        if self.workers == 0:
            for task in tasks:
                if on_start:
                    on_start(task)
                on_done(execute(task, cache=self.cache, trace_memory=self.trace_memory))
            return
        _prepare_to_fork()
        with _one_blas_thread():
            self._run_children(tasks, on_done, on_start, tick)

    def _run_children(
        self,
        tasks: Sequence[Task],
        on_done: OnDone,
        on_start: OnStart | None,
        tick: Callable[[], None] | None,
    ) -> None:
        pending = list(reversed(tasks))
        running: dict[Child, Task] = {}
        try:
            while pending or running:
                while pending and len(running) < (self.workers or 1):
                    task = pending.pop()
                    running[
                        Child(
                            _execute_in_child,
                            task,
                            self.cache,
                            self.trace_memory,
                            max_memory=self.max_memory,
                        )
                    ] = task
                    if on_start:
                        on_start(task)
                ready, _, _ = select.select(list(running), [], [], 0.2)
                for child in ready:
                    if not child.pump():
                        continue
                    task = running.pop(child)
                    try:
                        result = child.result()
                    except ChildDied as exc:
                        result = _died(task, exc, self.max_memory, self.cache)
                    on_done(result)
                if self.timeout is not None:
                    now = time.monotonic()
                    for child, task in list(running.items()):
                        if now - child.started > self.timeout:
                            child.kill()
                            del running[child]
                            on_done(
                                failed_task(
                                    task,
                                    "timeout",
                                    f"killed after the {self.timeout:g} s timeout",
                                    self.cache,
                                )
                            )
                if tick:
                    tick()
        finally:
            # Also a child whose start Ctrl-C interrupted, which never reached ``running``.
            for child in running:
                child.kill()
            kill_children()
