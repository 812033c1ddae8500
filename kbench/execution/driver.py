"""Running a planned study: plan, skip what is done, build streams, execute, write, load.

``kbench.run`` (the library), ``kbench run`` and ``kbench reproduce`` all go through
:func:`run_experiments`, so they behave identically. It prints nothing itself: what a
study has to say (skipped grid points, unbuildable streams, failed tasks, the summary)
goes to a :class:`Progress` handler. The CLI passes one that draws a progress bar; the
library's default, :class:`SilentProgress`, keeps quiet.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kbench.core.errors import DataError, KbenchError

#: How the reason of a task the executor gave no result for starts (a task's own failure
#: starts with its exception's type): such a task runs again when the study is resumed.
LOST_BY_EXECUTOR = "executor "


class Progress(Protocol):
    """What a study reports while it runs (every method is called from the driver's thread)."""

    def message(self, text: str, *, level: str = "info") -> None:
        """A line about the study: ``level`` is ``"info"``, ``"warning"`` or ``"error"``."""

    def start(self, total: int) -> None:
        """``total`` tasks are about to run."""

    def task_started(self, task: Any) -> None:
        """A task was handed to a worker."""

    def task_done(self, result: Any) -> None:
        """A task's result was written."""

    def tick(self) -> None:
        """Called while the driver waits for tasks (a chance to redraw)."""

    def stop(self) -> None:
        """The tasks are over (finished or interrupted)."""


class SilentProgress:
    """A :class:`Progress` that says nothing: the library's default."""

    def message(self, text: str, *, level: str = "info") -> None:
        pass

    def start(self, total: int) -> None:
        pass

    def task_started(self, task: Any) -> None:
        pass

    def task_done(self, result: Any) -> None:
        pass

    def tick(self) -> None:
        pass

    def stop(self) -> None:
        pass


class ResultSink(Protocol):
    """Where finished tasks go: :class:`kbench.results.store.ResultsStore` is one.

    The driver knows nothing of the results folder's format: it asks the sink which
    tasks are finished and hands it each new result.
    """

    folder: Path

    def prepare(self) -> None:
        """Make ready to write (and raise a KbenchError if that is impossible)."""

    def finished(self) -> dict[str, Any]:
        """Task id -> what the tasks that already have a result recorded: their
        ``status``, ``stream_id`` and ``results_format``
        (:class:`kbench.results.store.Finished`)."""

    def corrupt_files(self) -> list[Path]:
        """Unreadable result files set aside (their tasks run again)."""

    def write(self, result: Any) -> Any:
        """Keep one task's result (atomically)."""


class StudyInterrupted(KeyboardInterrupt):
    """Ctrl-C while tasks ran; what was kept has been printed already."""


@dataclass
class RunOutcome:
    """What :func:`run_experiments` did.

    Attributes
    ----------
    task_ids : set of str
        The task ids of this study's plan.
    counts : dict
        Number of tasks run now, by status.
    bad_streams : dict
        Streams that could not be built, with the reason; their tasks were not run.
    skipped : list of tuple
        (label, reason) of the grid points the planner skipped.
    """

    task_ids: set[str]
    counts: dict[str, int] = field(default_factory=dict)
    bad_streams: dict[Any, str] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def run_experiments(
    experiments: list[Any],
    registry: Any,
    store: ResultSink,
    *,
    progress: Progress | None = None,
    workers: int | None = None,
    timeout: float | None = None,
    memory_limit: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    force: bool = False,
    retry_failed: bool = False,
    trace_memory: bool = True,
    skip_bad_streams: bool = False,
) -> RunOutcome:
    """Plan experiments and run the tasks that have no result in ``store`` into it.

    Parameters
    ----------
    experiments : list of kbench.execution.study.Experiment
        The study.
    registry : kbench.core.registry.Registry
        Components by name.
    store : ResultSink
        Where results go (a :class:`kbench.results.store.ResultsStore`); tasks whose results
        are already there are skipped (resume).
    progress : Progress, optional
        Where progress and per-task problems are reported (default: nowhere).
    executor : str
        The name of a registered executor (``registry.names("executor")``: ``local``,
        ``dask`` and those of plugins).
    workers, timeout, memory_limit, scheduler
        Executor settings, as for ``kbench run``.
    force : bool
        Rerun tasks that already have results.
    retry_failed : bool
        Rerun tasks whose recorded status is not ok.
    trace_memory : bool
        Trace the learners' peak memory.
    skip_bad_streams : bool
        Run the other tasks when a stream cannot be built, reporting it (``kbench
        reproduce``, whose papers may name data this machine lacks); by default such a
        study is refused before anything is written.

    Returns
    -------
    RunOutcome
        What happened (the results themselves are in ``store``).

    Raises
    ------
    SpecError
        If no executor has the name ``executor`` (the message lists those registered).
    KbenchError
        If the study has no runnable task or the executor settings conflict.
    DataError
        If a stream cannot be built (unless ``skip_bad_streams``): one line naming it and
        why, before the results folder is created or anything is written.
    """
    from kbench.core.errors import ResultsError, interrupted
    from kbench.core.executors import ExecutorSettings
    from kbench.data.streams import get_stream
    from kbench.execution.dask_executor import SchedulerLost
    from kbench.execution.executors import failed_task
    from kbench.execution.isolation import hold_ctrl_c
    from kbench.execution.prequential import RESULTS_FORMAT
    from kbench.execution.study import plan
    from kbench.execution.tuning import window_id

    progress = progress or SilentProgress()
    # The executor and its settings first: a bad name or setting is refused before any
    # stream is built or anything written.
    runner = registry.executor(executor).from_settings(
        ExecutorSettings(
            workers=workers,
            timeout=timeout,
            max_memory=memory_limit,
            trace_memory=trace_memory,
            scheduler=scheduler,
            say=lambda text, level: progress.message(text, level=level),
        )
    )
    if not sys.platform.startswith("linux"):
        raise KbenchError(
            "running tasks needs Linux (kbench forks a process per task and uses Linux's "
            f"prctl and /proc); this system is {sys.platform}"
        )
    the_plan = plan(experiments, registry)
    for label, reason in the_plan.skipped:
        progress.message(f"kbench: skipped {label}: {reason}")
    if not the_plan.tasks:
        raise KbenchError("the study has no runnable task")

    out = store.folder
    on_disk = store.finished()
    finished = {} if force else on_disk
    for path in store.corrupt_files():
        progress.message(
            f"kbench: warning: unreadable result file set aside as {path}; its task is rerun",
            level="warning",
        )
    # Build every stream once, here, so that workers only load it from the cache; the ids
    # of the streams tasks would run on now, to check the results kept against them.
    stream_ids: dict[Any, str] = {}
    bad_streams: dict[Any, str] = {}

    def build(spec: Any) -> str | None:
        if spec not in stream_ids and spec not in bad_streams:
            try:
                stream_ids[spec] = get_stream(spec, registry).stream_id
            except Exception as exc:
                if interrupted(exc):
                    raise
                bad_streams[spec] = (
                    str(exc) if isinstance(exc, KbenchError) else f"{type(exc).__name__}: {exc}"
                )
        return stream_ids.get(spec)

    def ran_on(task: Any) -> str:
        """The id of the stream the task reads now: its stream's, or its window's."""
        return window_id(stream_ids[task.stream], dict(task.options).get("window"))

    todo: list[Any] = []
    changed, old_formats, lost_before = 0, [], 0
    unchecked: dict[Any, int] = {}
    for t in the_plan.tasks:
        done = finished.get(t.task_id)
        if done is None or (retry_failed and done.status != "ok"):
            todo.append(t)
        elif done.status != "ok" and (done.reason or "").startswith(LOST_BY_EXECUTOR):
            lost_before += 1  # the executor's failure, not the task's: resumed like no result
            todo.append(t)
        elif done.results_format != RESULTS_FORMAT:
            old_formats.append(done.results_format)  # another experiment: kept apart
            todo.append(t)
        elif done.stream_id is not None and build(t.stream) is None:
            unchecked[t.stream] = unchecked.get(t.stream, 0) + 1  # its data cannot be read now
        elif done.stream_id is not None and ran_on(t) != done.stream_id:
            changed += 1  # its data changed since it ran: never served as current
            todo.append(t)
    # Results kept whose data cannot be read now: a warning, not a refusal.
    unchecked_why = {spec: bad_streams.pop(spec) for spec in unchecked}
    for spec in dict.fromkeys(t.stream for t in todo):
        build(spec)
    if bad_streams and not skip_bad_streams:
        # Bad input: refused whole, before the folder exists or a bar is drawn, so that
        # fixing the data and running the same command is all it takes.
        raise DataError(_bad_streams_line(bad_streams))
    store.prepare()
    skipped_done = len(the_plan.tasks) - len(todo)
    # Of the earlier results, those that failed: kept (said, with how to rerun them), or
    # run again (--retry-failed).
    failed_before = {t.task_id for t in the_plan.tasks if t.task_id in finished} - {
        i for i, done in finished.items() if done.status == "ok"
    }
    rerun = failed_before & {t.task_id for t in todo}
    if skipped_done:
        failed_kept = len(failed_before - rerun)
        progress.message(
            f"kbench: {skipped_done} of {len(the_plan.tasks)} tasks already have results in {out}"
            + (
                f", {failed_kept} of them failed (use --retry-failed to rerun those, --force "
                "to rerun all)"
                if failed_kept
                else " (use --force to rerun)"
            )
        )
    if rerun and retry_failed:
        n = len(rerun)
        progress.message(f"kbench: {n} {_tasks(n)} that failed before run again (--retry-failed)")
    if lost_before:
        progress.message(
            f"kbench: {lost_before} {_tasks(lost_before)} that an executor gave no result for "
            "run again"
        )
    if changed:
        progress.message(
            f"kbench: {changed} {_tasks(changed)} run again: their data changed since they ran"
        )
    if old_formats:
        n = len(old_formats)
        progress.message(
            f"kbench: {n} {_tasks(n)} run again: written in results format "
            f"{min(old_formats)}, this kbench writes format {RESULTS_FORMAT}"
        )
    for spec, n in unchecked.items():
        progress.message(
            f"kbench: warning: stream {spec.label} (seed {spec.seed}) cannot be built now "
            f"({unchecked_why[spec]}); its {n} earlier {_results(n)} kept unchecked",
            level="warning",
        )
    for spec, reason in bad_streams.items():
        progress.message(
            f"kbench: error: stream {spec.label} (seed {spec.seed}): {reason}", level="error"
        )
    todo = [t for t in todo if t.stream not in bad_streams]
    #: task id -> the stream id it should run on; a task that ran on another read data
    #: that changed while the study ran.
    expected = {t.task_id: ran_on(t) for t in todo}
    moved: dict[str, int] = {}

    counts: dict[str, int] = {}
    written: set[str] = set()

    def kept() -> int:
        """Tasks with a result in the folder: those written now and those from before."""
        return len(written | on_disk.keys())

    def on_done(result: Any) -> None:
        # Written and counted as one step for Ctrl-C: a task file on disk that the count
        # missed would make "N finished tasks are kept" one short.
        with hold_ctrl_c():
            try:
                store.write(result)
            except OSError as exc:  # a full disk or a folder gone: stop, keep what is written
                raise ResultsError(
                    f"cannot write results to {out}: {exc.strerror or exc}; the {kept()} tasks "
                    "finished before are kept; fix that and run the same command to resume"
                ) from None
            counts[result.status] = counts.get(result.status, 0) + 1
            written.add(result.run["task_id"])
        read = result.run.get("stream_id")
        if read is not None and read != expected.get(result.run["task_id"], read):
            moved[result.run["stream"]] = moved.get(result.run["stream"], 0) + 1
        if result.status != "ok":
            progress.message(
                f"kbench: {result.status}: {result.run['algorithm']} on {result.run['stream']} "
                f"(seed {result.run['seed']}): {result.run['reason']}",
                level="warning",
            )
        progress.task_done(result)

    def lost(reason: str) -> None:
        """Record every task the executor gave no result for as failed, with its reason."""
        for task in todo:
            if task.task_id not in written:
                on_done(failed_task(task, "error", f"{LOST_BY_EXECUTOR}{executor!r}: {reason}"))

    started = time.time()
    progress.start(len(todo))
    try:
        try:
            runner.run(todo, on_done, progress.task_started, tick=progress.tick)
        except (KeyboardInterrupt, KbenchError):
            # A KbenchError is meant for the user (an unreachable scheduler, a lost one, a
            # full disk): the study stops with it; what was written is kept.
            raise
        except Exception as exc:  # the executor's own failure, not a task's
            if interrupted(exc):
                raise
            lost(f"failed: {_one_line(exc)}")
        else:
            lost("returned without running this task")
    except KeyboardInterrupt:
        progress.stop()
        progress.message(
            f"kbench: interrupted; {kept()} finished tasks are kept in {out}; run the same command to resume",
            level="error",
        )
        raise StudyInterrupted from None
    except SchedulerLost as exc:
        progress.stop()
        raise KbenchError(
            f"{exc}; the {kept()} finished tasks are kept in {out}; run the same command "
            "against a running scheduler to resume"
        ) from None
    progress.stop()
    elapsed = time.time() - started
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "nothing to run"
    progress.message(f"kbench: {summary} in {elapsed:.1f} s; results in {out}")
    for label, n in moved.items():
        progress.message(
            f"kbench: note: the data of {label} changed while the study ran: {n} "
            f"{_tasks(n)} read the new content, which is never paired with the old; run the "
            "same command again to rerun the others on it",
            level="warning",
        )

    return RunOutcome(
        task_ids={t.task_id for t in the_plan.tasks},
        counts=counts,
        bad_streams=bad_streams,
        skipped=list(the_plan.skipped),
    )


def _bad_streams_line(bad: dict[Any, str]) -> str:
    """One line for the streams that cannot be built: the first with its reason, and how
    many others (their data sets named) cannot either."""
    spec, reason = next(iter(bad.items()))
    line = f"stream {spec.label} (seed {spec.seed}): {reason}"
    others = [s for s in bad if s is not spec]
    if others:
        labels = ", ".join(dict.fromkeys(s.label for s in others))
        line += f"; {len(others)} other {_streams(len(others))} cannot be built either ({labels})"
    return line


def _one_line(exc: BaseException) -> str:
    """An executor's exception as one line: its message, with its type unless it is
    kbench's own (whose messages are written for the user)."""
    text = str(exc).strip().splitlines()
    line = text[0] if text else ""
    if isinstance(exc, KbenchError) and line:
        return line
    return f"{type(exc).__name__}: {line}" if line else type(exc).__name__


def _streams(n: int) -> str:
    return "stream" if n == 1 else "streams"


def _tasks(n: int) -> str:
    return "task" if n == 1 else "tasks"


def _results(n: int) -> str:
    return "result is" if n == 1 else "results are"
