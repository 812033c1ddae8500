"""The built-in executors: they run tasks and hand each result to the driver, which writes it.

They implement :class:`kbench.core.executors.Executor` and are registered, as any
executor plugin's are, by the built-in plugins ``kbench.plugins.executors.local`` and
``kbench.plugins.executors.dask``. Both run every task through :func:`execute_isolated`: a forked child process per
task, so a task that raises, crashes, hangs past ``timeout`` or outgrows ``max_memory``
affects only itself, and a hung task is killed even inside compiled code.

- ``LocalExecutor``: at most ``workers`` children on this machine at once; ``workers=0``
  runs tasks in this process, one after the other (no isolation), for debugging.
- ``DaskExecutor``: tasks are submitted to a ``dask.distributed`` cluster (an existing
  scheduler, or a ``LocalCluster`` it starts) and return their results to the driver.

A task carries its stream's spec, never its arrays. The driver builds every stream of a
study into the data cache before the first task starts
(:func:`kbench.execution.driver.run_experiments`);
each task's process maps the cached file read-only. Workers whose ``KBENCH_CACHE`` is the
driver's folder (a local cluster, or shared storage) therefore never build a stream; a
worker with a cache of its own builds a stream into it when its first task needs it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import select
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any, ClassVar, NoReturn

from kbench.core.errors import KbenchError, format_exception_line, interrupted
from kbench.core.executors import ExecutorSettings
from kbench.core.registry import Registry, get_registry
from kbench.data.cache import get_stream
from kbench.execution.cluster_events import ClusterEvents, captured_dask_log
from kbench.execution.isolation import (
    Child,
    ChildDied,
    hold_ctrl_c,
    kill_children,
    run_isolated,
)
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
        return cls(
            settings.workers,
            timeout=settings.timeout,
            max_memory=settings.max_memory,
            trace_memory=settings.trace_memory,
        )

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
            timeout=settings.timeout,
            max_memory=settings.max_memory,
            trace_memory=settings.trace_memory,
            say=settings.say,
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
        with hold_ctrl_c(second_goes_through=True), _tracker_warnings_off():
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
        client.run(_quiet_dask_log)  # silence_logs above lasts only while a worker runs
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
        pids_before = _descendants()
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
            _stop_local_cluster_now(clusters_before, children_before, pids_before)
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
            execute_isolated_pickled,
            task,
            timeout=limits.timeout,
            max_memory=limits.max_memory,
            trace_memory=limits.trace_memory,
            key=key,
            pure=False,
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


@contextlib.contextmanager
def _tracker_warnings_off() -> Iterator[None]:
    """Start the local cluster with Python's multiprocessing resource tracker quiet.

    The tracker (a process the cluster's start launches, inheriting kbench's stderr) unlinks
    the semaphores of worker processes that ended without doing it themselves, as those that
    Ctrl-C kills do, and warns about each on stderr, after kbench has exited. The clean-up is
    what matters; the warnings are filtered out through the environment it starts with.
    """
    before = os.environ.get("PYTHONWARNINGS")
    quiet = "ignore:resource_tracker:UserWarning"
    os.environ["PYTHONWARNINGS"] = f"{before},{quiet}" if before else quiet
    yield
    # Put back once the cluster has started: interrupted, the start may still be launching
    # its processes (from its own thread) while kbench stops.
    if before is None:
        os.environ.pop("PYTHONWARNINGS", None)
    else:
        os.environ["PYTHONWARNINGS"] = before


def _quiet_dask_log() -> None:
    """Keep a local worker's own Dask log off kbench's stderr, until the worker ends."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL + 10)


def _descendants() -> set[int]:
    """The process ids below this process (psutil comes with dask.distributed)."""
    import psutil

    found = set()
    with contextlib.suppress(psutil.Error):
        for proc in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if proc.status() != psutil.STATUS_ZOMBIE:  # killed, not yet waited for
                    found.add(proc.pid)
    return found


def _stop_local_cluster_now(
    clusters_before: set[Any], children_before: set[Any], pids_before: set[int]
) -> None:
    """On Ctrl-C, stop the local Dask cluster this run started at once.

    Closing it politely takes seconds (each worker is asked to finish and waited for). Its
    worker processes are killed instead; the cluster is marked closed, so that Dask's exit
    handler does not try to close it again; and the errors Dask's event loop would log about
    the workers it lost are silenced. A remote cluster is left running: the scheduler drops
    this run's tasks once the client is gone.
    """
    import multiprocessing.resource_tracker

    from distributed.core import Status
    from distributed.deploy.spec import SpecCluster

    for name in ("distributed", "asyncio", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 10)
    for cluster in [c for c in list(SpecCluster._instances) if c not in clusters_before]:
        for nanny in list(getattr(cluster, "workers", {}).values()):
            # A killed worker must not be started again: a nanny restarts its worker unless
            # it is closing (a restart being spawned as kbench exits would be left waiting
            # for its start-up data and print a traceback).
            with contextlib.suppress(Exception):
                nanny.status = Status.closing_gracefully
        cluster.status = Status.closed
    for proc in multiprocessing.active_children():
        if proc not in children_before:
            with contextlib.suppress(Exception):
                proc.kill()
    # A worker process the cluster's thread is starting right now is not among
    # active_children yet; left running, it would wait for its start-up data from a
    # kbench that has exited and print a traceback. Every new process below kbench is
    # killed, a few times over until none is left, except the resource tracker, which
    # unlinks what the killed workers leave (see _tracker_warnings_off).
    tracker = getattr(multiprocessing.resource_tracker._resource_tracker, "_pid", None)
    for _ in range(10):
        new = _descendants() - pids_before - {tracker}
        if not new:
            break
        for pid in new:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)
