"""Running a planned study: the machinery behind ``kbench run``, reusable by other commands.

``kbench run`` and ``kbench reproduce`` both plan experiments, skip tasks that already have
results, build every stream once, hand the rest to an executor with a progress bar and write
each result atomically. This module holds that sequence so both commands behave identically.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from kbench.core.errors import KbenchError


class StudyInterrupted(KeyboardInterrupt):
    """Ctrl-C while tasks ran; what was kept has been printed already."""


@dataclass
class RunOutcome:
    """What :func:`run_experiments` did.

    Attributes
    ----------
    results : kbench.results.store.Results
        Every result in the folder (this study's and any earlier ones).
    task_ids : set of str
        The task ids of this study's plan.
    counts : dict
        Number of tasks run now, by status.
    bad_streams : dict
        Streams that could not be built, with the reason; their tasks were not run.
    skipped : list of tuple
        (label, reason) of the grid points the planner skipped.
    """

    results: Any
    task_ids: set[str]
    counts: dict[str, int] = field(default_factory=dict)
    bad_streams: dict[Any, str] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def runs(self) -> Any:
        """The runs table restricted to this study's tasks."""
        runs = self.results.runs
        if not len(runs):
            return runs
        return runs[runs["task_id"].isin(self.task_ids)]


def run_experiments(
    experiments: list[Any],
    registry: Any,
    out: Path,
    *,
    console: Console,
    workers: int | None = None,
    timeout: float | None = None,
    memory_limit: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    force: bool = False,
    retry_failed: bool = False,
    trace_memory: bool = True,
) -> RunOutcome:
    """Plan experiments, run the tasks without results into ``out`` and load the folder.

    Parameters
    ----------
    experiments : list of kbench.execution.study.Experiment
        The study.
    registry : kbench.core.registry.Registry
        Components by name.
    out : Path
        Results folder; tasks whose results are already there are skipped (resume).
    console : rich.console.Console
        Where progress and per-task problems are printed.
    workers, timeout, memory_limit, executor, scheduler
        Executor settings, as for ``kbench run``.
    force : bool
        Rerun tasks that already have results.
    retry_failed : bool
        Rerun tasks whose recorded status is not ok.
    trace_memory : bool
        Trace the learners' peak memory.

    Returns
    -------
    RunOutcome
        The loaded results and what happened.

    Raises
    ------
    KbenchError
        If the study has no runnable task or the executor settings conflict.
    """
    from kbench.core.errors import ResultsError
    from kbench.data.streams import get_stream
    from kbench.execution.executors import DaskExecutor, LocalExecutor
    from kbench.execution.study import plan
    from kbench.results.store import ResultsStore

    err = console
    if not sys.platform.startswith("linux"):
        raise KbenchError(
            "running tasks needs Linux (kbench forks a process per task and uses Linux's "
            f"prctl and /proc); this system is {sys.platform}"
        )
    the_plan = plan(experiments, registry)
    for label, reason in the_plan.skipped:
        # markup=False: specs hold brackets, which rich would take for markup tags
        err.print(f"kbench: skipped {label}: {reason}", highlight=False, markup=False)
    if not the_plan.tasks:
        raise KbenchError("the study has no runnable task")

    store = ResultsStore(out)
    store.prepare()
    finished = {} if force else store.finished()
    for path in store.corrupt_files():
        err.print(
            f"[yellow]kbench: warning: unreadable result file set aside as {path}; its task is rerun[/yellow]",
            highlight=False,
        )
    todo = [
        t
        for t in the_plan.tasks
        if t.task_id not in finished or (retry_failed and finished[t.task_id] != "ok")
    ]
    skipped_done = len(the_plan.tasks) - len(todo)
    if skipped_done:
        err.print(
            f"kbench: {skipped_done} of {len(the_plan.tasks)} tasks already have results in {out} (use --force to rerun)",
            markup=False,
        )

    # Build every stream once, here, so that workers only load it from the cache.
    bad_streams: dict[Any, str] = {}
    for spec in dict.fromkeys(t.stream for t in todo):
        try:
            get_stream(spec, registry)
        except Exception as exc:
            bad_streams[spec] = (
                str(exc) if isinstance(exc, KbenchError) else f"{type(exc).__name__}: {exc}"
            )
            err.print(
                f"kbench: error: stream {spec.label} (seed {spec.seed}): {bad_streams[spec]}",
                highlight=False,
                markup=False,
                soft_wrap=True,  # one line, however long the data set's spec
            )
    todo = [t for t in todo if t.stream not in bad_streams]

    counts: dict[str, int] = {}
    if executor == "dask":
        runner = DaskExecutor(
            scheduler=scheduler,
            workers=workers,
            timeout=timeout,
            max_memory=memory_limit,
            trace_memory=trace_memory,
        )
    else:
        if workers == 0 and (timeout or memory_limit):
            raise KbenchError(
                "--timeout and --max-memory need worker processes (--workers 1 or more)"
            )
        runner = LocalExecutor(
            workers, timeout=timeout, max_memory=memory_limit, trace_memory=trace_memory
        )
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=err,
        auto_refresh=False,
        transient=False,
    )
    started = time.time()
    with progress:
        bar = progress.add_task("starting", total=len(todo))

        def on_start(task: Any) -> None:
            progress.update(bar, description=escape(task.label[:60]))
            progress.refresh()

        def on_done(result: Any) -> None:
            try:
                store.write(result)
            except OSError as exc:  # a full disk or a folder gone: stop, keep what is written
                kept = sum(counts.values())
                raise ResultsError(
                    f"cannot write results to {out}: {exc.strerror or exc}; the {kept} tasks "
                    "finished before are kept; fix that and run the same command to resume"
                ) from None
            counts[result.status] = counts.get(result.status, 0) + 1
            if result.status != "ok":
                progress.console.print(
                    f"kbench: {result.status}: {result.run['algorithm']} on {result.run['stream']} "
                    f"(seed {result.run['seed']}): {result.run['reason']}",
                    highlight=False,
                )
            progress.advance(bar)
            progress.refresh()

        try:
            runner.run(todo, on_done, on_start, tick=progress.refresh)
        except KeyboardInterrupt:
            progress.stop()
            done = sum(counts.values())
            click.echo(
                f"kbench: interrupted; {done} finished tasks are kept in {out}; run the same command to resume",
                err=True,
            )
            raise StudyInterrupted from None
    elapsed = time.time() - started
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "nothing to run"
    err.print(f"kbench: {summary} in {elapsed:.1f} s; results in {out}")

    results = store.load()
    results.save(out)
    return RunOutcome(
        results=results,
        task_ids={t.task_id for t in the_plan.tasks},
        counts=counts,
        bad_streams=bad_streams,
        skipped=list(the_plan.skipped),
    )
