"""The results store: atomic task files, the three tables, resumption and unreadable files."""

from __future__ import annotations

import numpy as np
import pytest

from kbench.core.errors import ResultsError
from kbench.core.registry import get_registry
from kbench.data.streams import StreamSpec, build_stream
from kbench.execution.prequential import failed_result, run_task
from kbench.execution.tasks import Task
from kbench.results.store import ResultsStore, load_results


def _result(seed: int = 0, regression: bool = False):
    reg = get_registry()
    task = Task(
        algorithm=reg.canonical("algorithm", "perceptron"),
        kernel=reg.canonical("kernel", "rbf[gamma=0.05]"),
        loss=None,
        stream=StreamSpec(
            "digits", seed=seed, positive="5-9", n=300, test_size=0.2, scale="minmax"
        ),
        seed=seed,
        checkpoints=6,
    )
    return run_task(task, build_stream(task.stream, reg), reg)


def test_write_and_read_back(tmp_path) -> None:
    """A written task reads back as a run row, its trace and its outcome vector."""
    store = ResultsStore(tmp_path / "out")
    store.prepare()
    res = _result()
    path = store.write(res)
    assert path.name == f"{res.run['task_id']}.parquet"
    assert not list(store.tasks_dir.glob(".tmp-*"))
    tables = load_results(tmp_path / "out")
    run = tables.runs.iloc[0]
    assert run["status"] == "ok" and run["stream_id"] == res.run["stream_id"]
    assert run["online_error"] == pytest.approx(res.run["online_error"])
    assert run["config"]["algorithm"].startswith("perceptron")
    assert len(tables.traces) == len(res.traces)
    outcome = tables.outcomes.iloc[0]["outcome"]
    assert outcome.dtype == bool and np.array_equal(outcome, res.outcomes.astype(bool))
    long = tables.outcomes_long()
    assert len(long) == 300 and set(long.columns) >= {"task_id", "stream_id", "example", "outcome"}
    tables.save(tmp_path / "out")
    assert {p.name for p in (tmp_path / "out").glob("*.parquet")} == {
        "runs.parquet",
        "traces.parquet",
        "outcomes.parquet",
    }


def test_failed_tasks_are_stored_with_status(tmp_path) -> None:
    """A failed task is a file too, with its status and reason and no outcomes."""
    store = ResultsStore(tmp_path)
    store.prepare()
    ok = _result()
    task = Task.from_dict(ok.run["config"])
    store.write(failed_result(task, "timeout", "killed after the 1 s timeout"))
    assert {k: v.status for k, v in store.finished().items()} == {task.task_id: "timeout"}
    tables = load_results(tmp_path)
    assert tables.runs.iloc[0]["reason"] == "killed after the 1 s timeout" and tables.outcomes.empty


def test_unreadable_file_is_named(tmp_path) -> None:
    """Reading a folder with a corrupted task file names the file and what to do."""
    store = ResultsStore(tmp_path)
    store.prepare()
    store.write(_result())
    (store.tasks_dir / "deadbeef.parquet").write_bytes(b"PAR1 truncated")
    with pytest.raises(ResultsError, match=r"deadbeef.parquet is unreadable .*delete it, or rerun"):
        load_results(tmp_path)
    assert len(store.finished()) == 1  # resuming sets it aside instead
    assert (store.tasks_dir / "deadbeef.parquet.corrupt").exists()


def test_leftover_temporary_files_are_cleaned(tmp_path) -> None:
    """A temporary file left by a run killed mid-write is removed; finished files stay."""
    store = ResultsStore(tmp_path)
    store.prepare()
    store.write(_result())
    (store.tasks_dir / ".tmp-abc.parquet").write_bytes(b"partial")
    store.prepare()
    assert not list(store.tasks_dir.glob(".tmp-*")) and len(store.finished()) == 1


def test_not_a_results_folder(tmp_path) -> None:
    """A folder without tasks/ is not mistaken for results."""
    with pytest.raises(ResultsError, match="is not a kbench results folder"):
        load_results(tmp_path)


def test_atomic_write_keeps_the_previous_file_when_a_write_fails(tmp_path) -> None:
    """A write that fails midway (here the writer raises after half the content, as a full
    disk would) leaves the previous file byte for byte and no temporary file."""
    from kbench.core.fileio import TEMP_PREFIX, atomic_write, atomic_write_text

    target = tmp_path / "runs.parquet"
    atomic_write_text(target, "previous content")

    def half_then_fail(fh) -> None:
        fh.write(b"new content, half of it")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        atomic_write(target, half_then_fail)
    assert target.read_text() == "previous content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.parquet"]
    atomic_write(target, lambda fh: fh.write(b"new"))
    assert target.read_bytes() == b"new" and not list(tmp_path.glob(f"{TEMP_PREFIX}*"))


def test_prepare_removes_temporary_files_of_a_killed_run(tmp_path) -> None:
    """Temporary files left by a process killed mid-write (task files and summary tables)
    are removed when the folder is next used; finished files stay."""
    store = ResultsStore(tmp_path / "out")
    store.prepare()
    store.write(_result())
    for folder in (store.folder, store.tasks_dir):
        (folder / ".tmp-runs.parquet.abc123").write_bytes(b"partial")
    store.prepare()
    assert not list(store.folder.rglob(".tmp-*"))
    assert len(load_results(store.folder).runs) == 1


def test_a_folder_of_classification_and_regression_tasks_saves(tmp_path) -> None:
    """The outcomes table of a study with both kinds of task is written (it raised
    ArrowInvalid on a column of bool and float vectors, after every task had run): float64,
    1.0 for a correct prediction, the squared errors as they were."""
    import pandas as pd

    reg = get_registry()
    regression = Task(
        algorithm=reg.canonical("algorithm", "klms"),
        kernel=reg.canonical("kernel", "rbf[gamma=0.05]"),
        loss=None,
        stream=StreamSpec("diabetes", seed=0, scale="standard"),
        seed=0,
        checkpoints=4,
    )
    results = [_result(), run_task(regression, build_stream(regression.stream, reg), reg)]
    store = ResultsStore(tmp_path)
    store.prepare()
    for res in results:
        store.write(res)
    store.collect()
    long = pd.read_parquet(tmp_path / "outcomes.parquet")
    assert long["outcome"].dtype == np.float64
    for res in results:
        got = long.loc[long["task_id"] == res.run["task_id"], "outcome"].to_numpy()
        np.testing.assert_allclose(got, res.outcomes.astype(np.float32), rtol=0, atol=0)
    # A folder of classification tasks alone keeps its bool column.
    only = tmp_path / "only"
    solo = ResultsStore(only)
    solo.prepare()
    solo.write(results[0])
    solo.collect()
    assert pd.read_parquet(only / "outcomes.parquet")["outcome"].dtype == bool
