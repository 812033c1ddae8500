"""kbench: a benchmarking framework for online kernel learning.

A study runs from Python with three calls, no terminal needed::

    import kbench

    results = kbench.run(kbench.Experiment(algorithms=["perceptron", "pa"], datasets=["a9a"]))
    comparison = kbench.compare(results)
    comparison.leaderboard()

:func:`run` plans the study, runs every task (resuming what a results folder already
holds) and returns its :class:`~kbench.results.store.Results`; :func:`load` reads a
results folder; :func:`compare` pairs every configuration on identical streams.

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

from kbench._version import __version__
from kbench.core.compiled_core import check_build

check_build()

hookimpl = pluggy.HookimplMarker("kbench")
"""Marker for the functions of a kbench plugin that implement a hook."""

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from kbench.analysis.comparison import Comparison
    from kbench.core.components import Algorithm, Dataset, Kernel, Loss
    from kbench.execution.driver import Progress
    from kbench.execution.study import Experiment
    from kbench.report.site.build import Published
    from kbench.results.store import Results

__all__ = [
    "Algorithm",
    "Dataset",
    "Experiment",
    "Kernel",
    "Loss",
    "__version__",
    "compare",
    "hookimpl",
    "load",
    "publish",
    "run",
]

#: Where :func:`run` writes when neither it nor the study names a folder (as ``kbench run``).
DEFAULT_OUT = "kbench-results"


def run(
    study: str | Path | Experiment | list[Experiment],
    *,
    out: str | Path | None = None,
    workers: int | None = 1,
    executor: str | None = None,
    scheduler: str | None = None,
    progress: Progress | None = None,
    force: bool = False,
    timeout: float | None = None,
    memory_limit: int | None = None,
    retry_failed: bool = False,
    trace_memory: bool = True,
) -> Results:
    """Run a study and return its results.

    Every (algorithm, data set, seed) task runs on the same stream as every other
    algorithm; tasks whose results are already in ``out`` are not run again, so calling
    ``run`` again after an interruption resumes.

    Parameters
    ----------
    study : path, Experiment or list of Experiment
        A TOML study file (as for ``kbench run STUDY``) or experiments built in Python.
    out : path, optional
        Results folder. Default: the study file's ``out``, else ``kbench-results``.
    workers : int or None, default 1
        Tasks run at once, each in its own process; 0 runs them in this process; None uses
        every core.
    executor : str, optional
        The name of a registered executor: where tasks run. Built in: ``"local"`` (child
        processes on this machine, the default) and ``"dask"`` (a Dask cluster); plugins
        add others through the ``kbench_register_executors`` hook, and
        ``kbench.api.get_registry().names("executor")`` lists every one registered. An
        unknown name raises :class:`~kbench.core.errors.SpecError` listing them.
    scheduler : str, optional
        A scheduler's address, for an executor that submits to one (``"dask"``: without
        it, a local cluster is started).
    progress : kbench.execution.driver.Progress, optional
        Told of every task and message; default silent (messages are in the return value's
        runs table: ``status`` and ``reason``).
    force : bool, default False
        Rerun tasks that already have results.
    timeout : float, optional
        Seconds a task may run before it is stopped and recorded as failed; None: no limit.
    memory_limit : int, optional
        Bytes a task may use before it is stopped and recorded as failed; None: no limit.
    retry_failed : bool, default False
        Rerun tasks whose recorded status is not ``ok``.
    trace_memory : bool, default True
        Trace the learners' peak memory (``peak_memory`` in the runs table).

    Returns
    -------
    kbench.results.store.Results
        The runs, traces and outcomes of this study's tasks.

    Raises
    ------
    kbench.core.errors.KbenchError
        A study that cannot be planned or run, with a one-line message.
    """
    from pathlib import Path

    from kbench.core.registry import get_registry
    from kbench.execution.study import Experiment, load_study
    from kbench.execution.tuned_study import run_study
    from kbench.results.labels import merged_labels, study_labels, write_labels
    from kbench.results.provenance import record_study, study_record
    from kbench.results.store import ResultsStore

    if isinstance(study, Experiment):
        experiments = [study]
    elif isinstance(study, (str, Path)):
        experiments = load_study(study)
        if out is None:
            out = experiments[0].out
    else:
        experiments = list(study)
    folder = Path(out if out is not None else DEFAULT_OUT)
    registry = get_registry()
    # Checked before anything is written: a bad label leaves the folder as it was.
    labels = merged_labels(folder, study_labels((e.algorithms for e in experiments), registry))
    store = ResultsStore(folder)
    record = study_record(next((e.source for e in experiments if e.source), None))
    outcome = run_study(  # a tuned experiment runs its tuning phase first
        experiments,
        registry,
        store,
        progress=progress,
        workers=workers,
        timeout=timeout,
        memory_limit=memory_limit,
        executor=executor or "local",
        scheduler=scheduler,
        force=force,
        retry_failed=retry_failed,
        trace_memory=trace_memory,
    )
    write_labels(folder, labels)
    record_study(folder, record)
    return store.collect().subset(outcome.task_ids)


def load(path: str | Path) -> Results:
    """Read a results folder written by :func:`run` or ``kbench run``.

    Raises
    ------
    kbench.core.errors.ResultsError
        Not a results folder, or an unreadable file in it (named).
    """
    from pathlib import Path

    from kbench.core.errors import ResultsError
    from kbench.results.store import load_results

    if not Path(path).exists():
        raise ResultsError(
            f"results folder {path} does not exist; run kbench run --out {path} first"
        )
    return load_results(path)


def compare(
    results: Results | str | Path,
    *,
    metric: str = "online_error",
    alpha: float = 0.05,
    rope: float | None = None,
    tune_budget: int | None = None,
) -> Comparison:
    """Compare every pair of configurations in results (or a results folder).

    Returns a :class:`~kbench.analysis.comparison.Comparison`: ``leaderboard()``, the pairs
    and their verdicts across seeds, rankings across data sets, and ``to_latex()``-style
    exports, all as pandas objects or strings. Parameters are those of ``kbench compare``
    (``tune_budget``: compare only the runs tuned with this many configurations, and the
    untuned ones). ``kbench compare`` calls this function, so both label alike.
    """
    from pathlib import Path

    from kbench.analysis.comparison import compare as compare_results
    from kbench.analysis.comparison import load_comparison
    from kbench.analysis.configs import spec_shortener
    from kbench.results.tuning import at_tuning_budget

    if isinstance(results, (str, Path)):
        return load_comparison(results, metric, alpha, rope, tune_budget)[1]
    tables = results if tune_budget is None else at_tuning_budget(results, tune_budget)
    return compare_results(tables, metric=metric, alpha=alpha, short=spec_shortener(), rope=rope)


def publish(
    results: Sequence[str | Path],
    out: str | Path,
    *,
    asv: str | Path | None = None,
    title: str = "kbench results",
    note: Callable[[str], None] | None = None,
) -> Published:
    """Publish results folders as a static site in ``out`` (``kbench publish``).

    The site (an index of studies with their provenance, a leaderboard per data set, a page
    per learner and per study, figures as SVG and PDF, tables as CSV, Markdown and LaTeX)
    needs no server. Publishing into a site published before updates it: unchanged
    folders are read from the site's cache and unchanged files are not rewritten. A folder
    that cannot be published is left out with one line (``note`` is called with it, and
    the index lists it). ``asv`` is an asv dashboard folder to link.

    Raises
    ------
    kbench.report.site.files.SiteError
        ``out`` is a file or holds other files than a kbench site, or no folder could be
        published; nothing is written then.
    """
    from kbench.core.extras import require
    from kbench.core.registry import get_registry
    from kbench.report.site.build import publish as publish_site

    require("report", "kbench publish")
    return publish_site(results, out, get_registry(), asv=asv, title=title, note=note)


def __getattr__(name: str) -> Any:
    # The base classes import NumPy: loaded on first use, so that `kbench --help` need not.
    if name in ("Algorithm", "Dataset", "Kernel", "Loss"):
        from kbench.core import components

        return getattr(components, name)
    if name == "Experiment":
        from kbench.execution.study import Experiment

        return Experiment
    raise AttributeError(f"module 'kbench' has no attribute {name!r}")
