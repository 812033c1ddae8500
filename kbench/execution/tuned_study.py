"""Running a study with tuned experiments: tuning runs, selection, evaluation runs.

Both phases go through :func:`kbench.execution.driver.run_experiments`, so tuning runs are
ordinary tasks: executed by the same executors, written to the same results folder and
skipped when already there. A study killed while tuning resumes with the tuning runs it
had not finished; the selection is recomputed from the stored runs, so it is the same.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from kbench.core.specs import split_label
from kbench.execution.driver import ResultSink, run_experiments
from kbench.execution.study import Experiment
from kbench.execution.tuning import parse_tune, select


def selections(runs: Any) -> dict[str, tuple[str, str | None]]:
    """Each tuning group's selected (algorithm, kernel) specs, read from its tuning runs.

    The number of tuning streams of a group is the number of distinct (stream, seed)
    pairs among its runs: every configuration runs on all of them, so a configuration
    with fewer ok runs failed somewhere and is not selected.
    """
    if not len(runs) or "tune_group" not in runs:
        return {}
    tuning = runs[runs["phase"] == "tuning"]
    chosen: dict[str, tuple[str, str | None]] = {}
    for gid, group in tuning.groupby("tune_group", sort=False):
        n_streams = len(group[["stream", "seed"]].drop_duplicates())
        index = select(runs, str(gid), n_streams)
        if index is None:
            continue
        row = group[group["tune_config"] == index].iloc[0]
        kernel = row["kernel"] if isinstance(row["kernel"], str) else None
        chosen[str(gid)] = (str(row["algorithm_spec"]), kernel)
    return chosen


class StoredResults(ResultSink, Protocol):
    """A result sink that can also read back what it holds (a ResultsStore can)."""

    def run_rows(self, task_ids: Any) -> Any:
        """The stored run rows of these tasks (a DataFrame)."""


def run_study(
    experiments: list[Experiment], registry: Any, store: StoredResults, **options: Any
) -> Any:
    """Run a study whose experiments may be tuned; the arguments are those of
    :func:`~kbench.execution.driver.run_experiments`, and ``store`` must also read its
    results back (the selection is made from the stored tuning runs).

    Untuned experiments run as they are. A tuned one runs first its tuning phase (every
    configuration on the tuning streams), then, with the configuration selected per
    algorithm, kernel, loss and data set, its evaluation phase.

    Returns
    -------
    kbench.execution.driver.RunOutcome
        The outcome of the evaluation phase (with the untuned experiments).
    """
    tuned = [e for e in experiments if e.tune is not None]
    if not tuned:
        return run_experiments(experiments, registry, store, **options)
    for i, e in enumerate(tuned):
        parse_tune(e.tune, f"experiment {i + 1}: tune")
    chosen: dict[str, tuple[str, str | None]] = {}
    if not all(_offline(a, registry) for e in tuned for a in e.algorithms):
        tuning = run_experiments(
            [replace(e, phase="tuning") for e in tuned], registry, store, **options
        )
        # The run rows alone: loading every trace and outcome would leave this process,
        # which forks a process per evaluation task, holding gigabytes for a large study.
        chosen = selections(store.run_rows(sorted(tuning.task_ids)))
    evaluation = [
        replace(e, phase="evaluation", selected=chosen) if e.tune is not None else e
        for e in experiments
    ]
    return run_experiments(evaluation, registry, store, **options)


__all__ = ["run_study", "selections"]


def _offline(spec: str, registry: Any) -> bool:
    """Whether an algorithm spec (with or without its ``@label``) is a batch reference,
    which a tuned experiment runs untuned (no tuning runs)."""
    return bool(registry.resolve("algorithm", split_label(spec)[0])[0].offline)
