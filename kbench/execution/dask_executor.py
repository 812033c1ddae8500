"""The ``dask`` executor: tasks on a Dask cluster, an existing scheduler's or a local one.

Tasks are submitted to a ``dask.distributed`` cluster and return their results to the
driver; each runs on its worker through :func:`kbench.execution.executors.execute_isolated`,
in a forked child process, as the local executor's do. It is registered by the built-in
plugin ``kbench.plugins.executors.dask``. Stopping a local cluster at once on Ctrl-C is
:mod:`kbench.execution.dask_shutdown`'s.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, NoReturn

from kbench.core.errors import KbenchError, format_exception_line
from kbench.core.executors import ExecutorSettings
from kbench.execution.cluster_events import ClusterEvents, captured_dask_log
from kbench.execution.dask_shutdown import (
    descendants,
    quiet_dask_log,
    stop_local_cluster_now,
    tracker_warnings_off,
)
from kbench.execution.executors import (
    OnDone,
    OnStart,
    TaskLimits,
    execute_isolated_pickled,
    failed_task,
)
from kbench.execution.isolation import hold_ctrl_c
from kbench.execution.prequential import TaskResult
from kbench.execution.tasks import Task


class SchedulerLost(KbenchError):
    """The Dask scheduler went away mid-study; the tasks not finished were not run."""


#: Tasks submitted beyond twice the cluster's threads: enough that a worker that finishes a
#: task finds the next one queued at the scheduler while the driver writes the result.
_SPARE_TASKS = 8


@dataclass
class DaskExecutor(TaskLimits):
    """Run tasks on a Dask cluster.

    Tasks are submitted a few at a time (twice the cluster's threads, and a few more), and
    each finished task's result is released on the cluster as soon as the driver has
    written it: the workers hold only the results on their way to the driver, so a lost
    worker costs the tasks it was running (and a result not yet gathered), and neither the
    workers' memory nor the scheduler's grows with the study's length.

    Parameters
    ----------
    scheduler
        Address of a running scheduler (``tcp://host:8786``); without it a
        ``LocalCluster`` of ``workers`` single-threaded worker processes is started.
    workers
        Workers of the local cluster (default: the number of cores).
    say
        Where kbench's lines about the cluster go (a lost worker, a rescheduled task), with
        their level (``"info"``, ``"warning"``); default: nowhere.
    timeout, max_memory, trace_memory
        As for :class:`TaskLimits`, enforced on the workers.
    """

    name: ClassVar[str] = "dask"
    _: KW_ONLY
    scheduler: str | None = None
    workers: int | None = None
    say: Callable[[str, str], None] | None = None

    def __post_init__(self) -> None:
        self.workers = self.workers or os.cpu_count() or 1

    @classmethod
    def from_settings(cls, settings: ExecutorSettings) -> DaskExecutor:
        """A Dask executor for ``kbench run``'s settings."""
        return cls(
            scheduler=settings.scheduler,
            workers=settings.workers,
            say=settings.say,
            **cls.limits_of(settings),
        )

    def describe(self) -> str:
        return (
            f"dask at {self.scheduler}"
            if self.scheduler
            else f"dask local cluster of {self.workers} workers"
        )

    def _client(self) -> tuple[Any, Any]:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise KbenchError(
                "--executor dask needs dask.distributed: pip install 'kbench[dask]'"
            ) from None
        if self.scheduler:
            try:
                return Client(self.scheduler, timeout="10s"), None
            except OSError as exc:
                raise KbenchError(
                    f"cannot reach the Dask scheduler at {self.scheduler}: {exc}"
                ) from None
        # Ctrl-C waits until the cluster has started (a second one does not): a worker process
        # being spawned when kbench exits would wait for its start-up data and print a
        # traceback; once started, every worker is one kbench kills on Ctrl-C.
        with hold_ctrl_c(second_goes_through=True), tracker_warnings_off():
            cluster = LocalCluster(
                n_workers=self.workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                # Its HTTP server on a free port: the default, 8787, may be another cluster's
                # (a second study at once), and taking it would warn on kbench's stderr.
                dashboard_address=":0",
                # The workers' own log would reach kbench's stderr: on Ctrl-C a worker can outlive
                # the scheduler for a moment and log a heartbeat traceback. kbench reports what
                # matters of this cluster itself: every task's failure and a lost worker are
                # failed results with their cause.
                silence_logs=logging.CRITICAL,
            )
        client = Client(cluster)
        client.run(quiet_dask_log)  # silence_logs above lasts only while a worker runs
        return client, cluster

    def run(
        self,
        tasks: Sequence[Task],
        on_done: OnDone,
        on_start: OnStart | None = None,
        tick: Callable[[], None] | None = None,
    ) -> None:
        """Submit the tasks; write each result as it arrives at the driver, then release it.

        Raises
        ------
        SchedulerLost
            When the scheduler goes away: the tasks not finished have no result.
        """
        import multiprocessing

        from distributed.deploy.spec import SpecCluster

        clusters_before = set(SpecCluster._instances)
        children_before = set(multiprocessing.active_children())
        pids_before = descendants()
        by_key = {_key(task): task for task in tasks}
        events = ClusterEvents(lambda key: by_key[key].label if key in by_key else None)
        client = cluster = None
        flight = _Flight()
        try:
            # Closed inside: Dask logs while it closes, too (a reconnection it gives up).
            with captured_dask_log(events):
                try:
                    client, cluster = self._client()
                    events.attach(client)
                    if on_start and tasks:
                        on_start(tasks[0])
                    self._run_all(client, tasks, flight, events, on_done, tick)
                except KeyboardInterrupt:
                    raise
                except SchedulerLost:
                    # Nothing to cancel on a scheduler that is gone (asking would wait for it).
                    flight.futures.clear()
                    self._close(client, cluster, flight)
                    raise
                except BaseException:
                    self._close(client, cluster, flight)
                    raise
                self._close(client, cluster, flight)
        except KeyboardInterrupt:
            stop_local_cluster_now(clusters_before, children_before, pids_before)
            raise

    def _run_all(
        self,
        client: Any,
        tasks: Sequence[Task],
        flight: _Flight,
        events: ClusterEvents,
        on_done: OnDone,
        tick: Callable[[], None] | None,
    ) -> None:
        """Keep a few tasks submitted, and write and release each one that finishes."""
        pending = list(reversed(tasks))
        window = _SPARE_TASKS
        written = 0

        def waiting() -> None:  # while a lost result is computed again
            self._report(events)
            if tick:
                tick()
            if client.status not in _CONNECTED:
                raise _Cancelled

        while pending or flight.futures:
            if events.workers_changed:
                events.workers_changed = False
                window = 2 * _threads(client) + _SPARE_TASKS
            while pending and len(flight.futures) < window:
                flight.submit(client, pending.pop(), self)
            key = flight.next_done(timeout=0.2)
            self._report(events)
            if key is not None:
                try:
                    result = flight.collect(key, waiting)
                except _WorkersDied as died:
                    # Lost workers, not the task's doing (it runs in a process of its own):
                    # it is submitted again, ahead of the tasks not yet submitted.
                    task = flight.release(key)
                    pending.append(task)
                    if self.say:
                        self.say(
                            f"kbench: dask: {died.deaths} workers were lost while {task.label} "
                            "was on them; submitted again",
                            "warning",
                        )
                    continue
                if result is None:  # cancelled: the scheduler is gone
                    self._lost(client, len(tasks) - written)
                on_done(result)
                written += 1
                flight.release(key)  # written: the workers may forget it
            elif client.status not in _CONNECTED:
                self._lost(client, len(tasks) - written)
            if tick:
                tick()
        self._report(events)

    def _report(self, events: ClusterEvents) -> None:
        for text, level in events.lines():
            if self.say:
                self.say(text, level)

    def _lost(self, client: Any, unfinished: int) -> NoReturn:
        """The scheduler is gone: stop, with nothing recorded for the unfinished tasks."""
        address = self.scheduler or getattr(client.scheduler, "address", "?")
        raise SchedulerLost(
            f"lost the Dask scheduler at {address}; the {unfinished} tasks not finished "
            "were not run"
        )

    @staticmethod
    def _close(client: Any, cluster: Any, flight: _Flight) -> None:
        """Close politely: cancel what is left, disconnect, stop the local cluster."""
        if client is not None:
            for fut in flight.futures.values():
                with contextlib.suppress(Exception):
                    fut.cancel()
            flight.futures.clear()
            # Bounded: closing must not wait long for a scheduler in trouble.
            with contextlib.suppress(Exception):
                client.close(timeout=5)
        if cluster is not None:
            cluster.close()


#: The states of a client connected to its scheduler.
_CONNECTED = ("running", "newly-created")


class _Cancelled(Exception):
    """A future was cancelled (or the client disconnected) while the driver waited for it."""


class _WorkersDied(Exception):
    """The scheduler gave up on a task after losing ``deaths`` workers while it was on them."""

    def __init__(self, deaths: int) -> None:
        super().__init__(deaths)
        self.deaths = deaths


#: How many times a task is submitted again after the scheduler gave up on it for the
#: workers it lost (each time after ``allowed-failures`` + 1 of them, 4 by default).
_RESUBMITS = 3


def _key(task: Task) -> str:
    return f"kbench-{task.task_id}"


def _threads(client: Any) -> int:
    """Threads of the cluster's workers (0 if it has none now, or cannot be asked)."""
    try:
        return sum(client.nthreads().values())
    except Exception:  # a cluster in trouble: the next worker event asks again
        return 0


class _Flight:
    """The submitted tasks: their futures by key, and the keys that finished, in order."""

    def __init__(self) -> None:
        import queue

        self.futures: dict[str, Any] = {}
        self.tasks: dict[str, Task] = {}
        # Filled by Dask's callback thread, read by the driver's.
        self.done: queue.SimpleQueue[Any] = queue.SimpleQueue()
        #: Workers lost while each task was on them, over its submissions.
        self.deaths: dict[str, int] = {}

    def submit(self, client: Any, task: Task, limits: TaskLimits) -> None:
        key = _key(task)
        fut = client.submit(
            execute_isolated_pickled, task, **TaskLimits.limits_of(limits), key=key, pure=False
        )
        self.futures[key] = fut
        self.tasks[key] = task
        fut.add_done_callback(self._finished)

    def _finished(self, fut: Any) -> None:
        self.done.put(fut)

    def next_done(self, timeout: float) -> str | None:
        """The key of the next task to finish (or be cancelled), None after ``timeout``."""
        import queue

        try:
            fut = self.done.get(timeout=timeout)
        except queue.Empty:
            return None
        # Not a future released since (a task submitted again has a new one).
        key: str = fut.key
        return key if self.futures.get(key) is fut else None

    def collect(self, key: str, tick: Callable[[], None]) -> TaskResult | None:
        """The task's result, brought to the driver; None if its future was cancelled.

        A result lost with its worker before it was gathered is computed again by the
        scheduler while this waits (calling ``tick`` every second).
        """
        from dask.distributed import CancelledError, KilledWorker

        fut, task = self.futures[key], self.tasks[key]
        while True:
            try:
                payload = fut.result(timeout=1)
            except TimeoutError:
                try:
                    tick()
                except _Cancelled:
                    return None
                continue
            except CancelledError:
                return None
            except KilledWorker as exc:
                deaths = exc.allowed_failures + 1
                self.deaths[key] = self.deaths.get(key, 0) + deaths
                if self.deaths[key] <= _RESUBMITS * deaths:
                    raise _WorkersDied(deaths) from None
                return failed_task(task, "error", _killed_reason(self.deaths[key]))
            except Exception as exc:  # the task could not run on the cluster
                from distributed.comm.core import CommClosedError

                if isinstance(exc, (CommClosedError, ConnectionError)):
                    # The connection to the scheduler broke, not the task: as cancelled, so
                    # the study stops as one whose scheduler is lost (and resumes later).
                    return None
                return failed_task(task, "error", f"dask: {format_exception_line(exc)}")
            return pickle.loads(payload)

    def release(self, key: str) -> Task:
        """Let the cluster forget a task (its result is written, or it goes again)."""
        fut = self.futures.pop(key)
        fut.release()
        return self.tasks.pop(key)


def _killed_reason(deaths: int) -> str:
    """The reason recorded for a task whose workers kept dying while it was on them."""
    return (
        f"dask: {deaths} workers died while it was on them (workers lost, or the task kills "
        "them); --retry-failed runs it again"
    )
