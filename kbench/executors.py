"""Executors run tasks and hand each result to the driver, which writes it.

``LocalExecutor`` runs every task in a child process of its own (at most ``workers`` at
once): a task that crashes, hangs past ``timeout`` or is interrupted cannot take the
study down, and a hung task is killed even inside compiled code. ``workers=0`` runs
tasks in this process, one after the other (no timeout), which is handy for debugging.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from pathlib import Path

from kbench.registry import Registry, format_exception_line, get_registry
from kbench.runner import TaskResult, failed_result, run_task
from kbench.streams import get_stream
from kbench.tasks import Task


def execute(task: Task, *, registry: Registry | None = None, cache: Path | None = None,
            trace_memory: bool = True) -> TaskResult:
    """Load the task's stream (from the cache) and run the task, single-threaded BLAS."""
    from threadpoolctl import threadpool_limits

    registry = registry or get_registry()
    try:
        stream = get_stream(task.stream, registry, cache=cache)
    except Exception as exc:  # recorded as the task's failure
        return failed_result(task, "error", format_exception_line(exc))
    # One BLAS thread per task: tasks run side by side, and timings stay comparable.
    with threadpool_limits(1):
        return run_task(task, stream, registry, trace_memory=trace_memory)


def _child(task: Task, conn: Connection, cache: Path | None, trace_memory: bool) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver handles Ctrl-C and stops us
    try:
        conn.send(execute(task, cache=cache, trace_memory=trace_memory))
    finally:
        conn.close()


class LocalExecutor:
    """Run tasks in child processes on this machine.

    Parameters
    ----------
    workers
        Tasks run at once; 0 runs them in this process.
    timeout
        Seconds after which a task is killed and recorded as ``timeout``.
    """

    def __init__(self, workers: int | None = None, *, timeout: float | None = None,
                 cache: Path | None = None, trace_memory: bool = True) -> None:
        self.workers = (os.cpu_count() or 1) if workers is None else workers
        self.timeout = timeout
        self.cache = cache
        self.trace_memory = trace_memory

    def run(self, tasks: Sequence[Task], on_done: Callable[[TaskResult], None],
            on_start: Callable[[Task], None] | None = None,
            tick: Callable[[], None] | None = None) -> None:
        """Run every task, calling ``on_done`` with each result as it arrives."""
        if self.workers == 0:
            for task in tasks:
                if on_start:
                    on_start(task)
                on_done(execute(task, cache=self.cache, trace_memory=self.trace_memory))
            return
        ctx = mp.get_context("fork")
        pending = list(reversed(tasks))
        running: dict[Connection, tuple[Task, mp.process.BaseProcess, float]] = {}
        try:
            while pending or running:
                while pending and len(running) < self.workers:
                    task = pending.pop()
                    recv, send = ctx.Pipe(duplex=False)
                    proc = ctx.Process(target=_child, args=(task, send, self.cache, self.trace_memory), daemon=True)
                    proc.start()
                    send.close()
                    running[recv] = (task, proc, time.monotonic())
                    if on_start:
                        on_start(task)
                for conn in wait(list(running), timeout=0.2):
                    task, proc, _ = running.pop(conn)
                    try:
                        result = conn.recv()
                    except (EOFError, OSError):
                        proc.join(5)
                        result = failed_result(task, "error", f"worker process died (exit code {proc.exitcode})")
                    conn.close()
                    proc.join(5)
                    on_done(result)
                if self.timeout is not None:
                    now = time.monotonic()
                    for conn, (task, proc, started) in list(running.items()):
                        if now - started > self.timeout:
                            proc.kill()
                            proc.join(5)
                            conn.close()
                            del running[conn]
                            on_done(failed_result(task, "timeout", f"killed after the {self.timeout:g} s timeout"))
                if tick:
                    tick()
        finally:
            for conn, (_, proc, _) in running.items():
                proc.kill()
                proc.join(5)
                conn.close()
