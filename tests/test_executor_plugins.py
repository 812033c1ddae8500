"""Executors are plugins: a third-party one registers through ``kbench_register_executors``
and runs a study as the built-in ones do; an executor that fails or loses tasks leaves
them recorded as failed, and resuming the study runs them again."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kbench
from conftest import MISBEHAVING
from helpers import kbench as kbench_cli
from kbench.core.errors import SpecError
from kbench.core.registry import Registry, get_registry
from kbench.execution.study import Experiment

DOCS = Path(__file__).parents[1] / "docs" / "hooks" / "kbench_register_executors.md"

#: A real third-party executor, the one docs/hooks/kbench_register_executors.md shows: a
#: thread pool in the driver's process (BLAS on one thread, as kbench's executors run it).
THREADS_PLUGIN = re.findall(r"^```python\n(.*?)^```", DOCS.read_text(), re.S | re.M)[-1]

#: Two broken executors, built on it.
BROKEN_PLUGIN = """
from kbench import hookimpl
from kbench.execution.executors import execute
from kbench_threads import Threads


class Flaky(Threads):
    \"\"\"Run the first task, then fail (a cluster that goes away).\"\"\"

    name = "flaky"

    def run(self, tasks, on_done, on_start=None, tick=None):
        on_done(execute(tasks[0]))
        raise RuntimeError("the node pool is exhausted")


class Lossy(Threads):
    \"\"\"Run every other task and return (a queue that drops jobs).\"\"\"

    name = "lossy"

    def run(self, tasks, on_done, on_start=None, tick=None):
        for task in tasks[::2]:
            on_done(execute(task))


@hookimpl
def kbench_register_executors(register):
    register(Flaky)
    register(Lossy)
"""

STUDY = Experiment(
    algorithms=["perceptron", "pa"],
    kernels=["rbf[gamma=0.5]"],
    datasets=["digits[n=300,positive=5-9]"],
    seeds=[0, 1],
)


@pytest.fixture
def executors(plugin_dist) -> None:
    plugin_dist("kbench_threads", THREADS_PLUGIN)
    plugin_dist("kbench_broken", BROKEN_PLUGIN)


def _by_task(results: kbench.results.store.Results) -> dict[str, tuple[object, ...]]:
    """What a task computed (not how long it took): its counts and its outcome vector."""
    runs = results.runs.set_index("task_id")
    outcomes = results.outcomes.set_index("task_id")["outcome"]
    return {
        task: (
            runs.at[task, "status"],
            runs.at[task, "mistakes"],
            runs.at[task, "n_support"],
            runs.at[task, "stream_id"],
            tuple(np.asarray(outcomes[task]).tolist()),
        )
        for task in runs.index
    }


def test_the_builtin_executors_are_plugins() -> None:
    registry = Registry(entry_points=False)
    assert registry.names("executor") == ["dask", "local"]
    assert registry.executors["local"].plugin == "kbench.executors.local"
    assert registry.executors["dask"].plugin == "kbench.executors.dask"


def test_a_plugin_executor_runs_a_study_as_local_does(executors: None, tmp_path: Path) -> None:
    assert "threads" in get_registry().names("executor")
    local = kbench.run(STUDY, out=tmp_path / "local", executor="local", workers=2)
    threads = kbench.run(STUDY, out=tmp_path / "threads", executor="threads", workers=2)
    assert len(local.runs) == 4 and set(local.runs["status"]) == {"ok"}
    assert _by_task(threads) == _by_task(local)


def test_an_unknown_executor_lists_the_registered_ones(executors: None, tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"unknown executor 'thread' \(did you mean 'threads'\?\)"):
        kbench.run(STUDY, out=tmp_path / "out", executor="thread")
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_the_cli_refuses_an_unknown_executor_with_exit_2(executors: None, tmp_path: Path) -> None:
    out = tmp_path / "out"
    bad = kbench_cli("run", "-a", "perceptron", "-d", "digits[n=100]", "--out", str(out),
                     "--executor", "lossi")  # fmt: skip
    assert bad.returncode == 2, bad.stderr
    line = [ln for ln in bad.stderr.splitlines() if ln.startswith("kbench: error:")]
    assert line == [
        "kbench: error: unknown executor 'lossi' (did you mean 'lossy'?); registered "
        "executors: dask, flaky, local, lossy, threads"
    ]
    assert not out.exists()


def test_run_help_lists_the_registered_executors(executors: None) -> None:
    res = kbench_cli("run", "--help")
    assert res.returncode == 0, res.stderr
    text = " ".join(res.stdout.split())
    assert "a registered executor (dask, flaky, local, lossy, threads)" in text


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("flaky", "executor 'flaky': failed: RuntimeError: the node pool is exhausted"),
        ("lossy", "executor 'lossy': returned without running this task"),
    ],
)
def test_tasks_an_executor_loses_are_failed_then_resumed(
    executors: None, tmp_path: Path, name: str, reason: str
) -> None:
    out = tmp_path / "out"
    broken = kbench.run(STUDY, out=out, executor=name)
    runs = broken.runs.set_index("task_id")
    failed = runs[runs["status"] != "ok"]
    assert len(runs) == 4 and 1 <= len(failed) < 4
    assert set(failed["status"]) == {"error"} and set(failed["reason"]) == {reason}
    # The failed rows still say which stream they were on, as a crashed task's do.
    assert failed["stream_id"].notna().all()
    ran = {t: (out / "tasks" / f"{t}.parquet").stat().st_mtime_ns for t in runs.index}

    # Resuming (the same call, on a working executor) runs the lost tasks, and only them.
    resumed = kbench.run(STUDY, out=out, executor="threads")
    assert set(resumed.runs["status"]) == {"ok"}
    for task, mtime in ran.items():
        again = (out / "tasks" / f"{task}.parquet").stat().st_mtime_ns
        assert (again != mtime) == (task in failed.index), task
    assert _by_task(resumed) == _by_task(kbench.run(STUDY, out=tmp_path / "ref"))


def test_a_task_that_failed_by_itself_stays_failed(plugin_dist, tmp_path: Path) -> None:
    """Only what an executor lost is resumed: a task whose own learner failed keeps its
    result (``--retry-failed`` reruns it), whichever executor ran it."""
    plugin_dist("kbench_threads", THREADS_PLUGIN)
    plugin_dist("kb_misbehaving", MISBEHAVING)
    out = tmp_path / "out"
    study = Experiment(algorithms=["exploder"], datasets=["digits[n=100,positive=5-9]"], seeds=[0])
    first = kbench.run(study, out=out, executor="threads")
    assert first.runs["reason"].tolist() == ["RuntimeError: exploded on purpose"]
    task = first.runs["task_id"].iloc[0]
    written = (out / "tasks" / f"{task}.parquet").stat().st_mtime_ns
    again = kbench.run(study, out=out, executor="threads")
    assert again.runs["reason"].tolist() == ["RuntimeError: exploded on purpose"]
    assert (out / "tasks" / f"{task}.parquet").stat().st_mtime_ns == written


def test_listing_components_does_not_import_the_executors() -> None:
    """What needs every component (``kbench list``) leaves the built-in executors' modules
    unimported: they import the execution layer and pandas, which listing has no use for."""
    probe = (
        "import sys\n"
        "from kbench.core.registry import Registry\n"
        "r = Registry(entry_points=False)\n"
        "assert r.names('algorithm') and r.names('dataset')\n"
        "print('kbench.execution.executors' in sys.modules, 'pandas' in sys.modules)\n"
        "r.names('executor')\n"
        "print('kbench.execution.executors' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False", "True"], done.stdout + done.stderr


def test_an_executor_plugin_needs_only_kbench_api() -> None:
    """The protocol, the settings, the built-in executors and the task functions are in
    kbench.api; the execution layer loads only when one of them is used."""
    import kbench.api
    from kbench.execution import dask_executor, executors

    modules = {"DaskExecutor": dask_executor}
    for name in ("LocalExecutor", "DaskExecutor", "execute", "execute_isolated"):
        assert getattr(kbench.api, name) is getattr(modules.get(name, executors), name)
        assert name in kbench.api.__all__
    assert {"Executor", "ExecutorSettings"} <= set(kbench.api.__all__)
    code = "import sys, kbench.api; print('kbench.execution.executors' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr
