"""The parts of the prequential loop, each on its own: the learner's step, the first
pass's record, the checkpoint row and the run row (tests/test_runner.py runs them together)."""

from __future__ import annotations

import numpy as np
import pytest

from kbench.core.registry import get_registry
from kbench.execution.prequential import (
    Diverged,
    _check_predictions,
    _checkpoint_row,
    _FirstPass,
    _Learner,
    _run_row,
    run_task,
)
from kbench.execution.tasks import Task
from kbench.testing import toy_stream


class _Block:
    """A learner whose block path predicts +1 and counts what it learned."""

    offline = False

    def __init__(self, stats: dict[str, float] | None = None) -> None:
        self.learned = 0
        self.passes = 0
        self._stats = stats

    def learn_predict_many(self, X, y):
        self.learned += len(y)
        return np.ones(len(y))

    def predict_many(self, X):
        return np.ones(X.shape[0])

    def end_pass(self) -> None:
        self.passes += 1

    def stats(self) -> dict[str, float]:
        if self._stats is not None:
            return self._stats
        return {"n_support": float(self.learned), "kernel_evals": 0.0}


def _task(**options: int) -> Task:
    return Task("perceptron", None, None, toy_stream("binary").spec, options=tuple(options.items()))


def test_a_step_learns_a_chunk_and_times_it() -> None:
    algo = _Block()
    learner = _Learner.of(algo, _task(), n=10, memory=None)
    X, y = np.zeros((4, 2)), np.ones(4)
    pred, spent = learner.step(X, y, 0, 4)
    assert pred.tolist() == [1.0] * 4 and not spent
    assert algo.learned == 4 and algo.passes == 0 and learner.learn_time > 0
    learner.processed += 4
    learner.step(np.zeros((6, 2)), np.ones(6), 4, 10)  # the pass's last chunk ends it
    assert algo.passes == 1 and learner.labels == 4
    with pytest.raises(ValueError, match="shape"):  # fewer predictions than examples
        learner.step(X, y, 4, 10)


def test_a_step_stops_at_the_example_that_spends_the_budget() -> None:
    algo = _Block()
    learner = _Learner.of(algo, _task(max_queries=3), n=10, memory=None)
    pred, spent = learner.step(np.zeros((5, 2)), np.ones(5), 0, 5)
    assert len(pred) == 3 and spent and algo.learned == 3 and algo.passes == 1


def test_the_predictions_of_a_chunk_are_checked() -> None:
    _check_predictions(np.ones(3), 3, 0)
    with pytest.raises(ValueError, match="shape"):
        _check_predictions(np.ones((3, 1)), 3, 0)
    with pytest.raises(Diverged, match="example 7") as info:
        _check_predictions(np.array([1.0, np.nan]), 2, 6)
    assert info.value.at == 7


def test_the_first_pass_records_outcomes_and_the_last_change() -> None:
    first = _FirstPass(np.zeros(8, dtype=bool))
    first.record(0, np.array([1.0, -1.0, -1.0]), np.array([1.0, 0.0, 1.0]))
    assert first.last_change == 1 and first.outcomes[:3].tolist() == [True, False, True]
    first.record(3, np.array([1.0, 1.0]), np.ones(2))  # changes at its first example
    assert first.last_change == 3 and not first.constant(5)
    first.record(5, np.ones(3), np.ones(3))
    assert first.last_change == 3 and first.constant(8)  # unchanged over the second half
    first.record(8, np.zeros(0), np.zeros(0))  # an empty chunk changes nothing
    assert first.last_change == 3


def test_a_checkpoint_row_holds_the_error_so_far_and_the_statistics() -> None:
    stream = toy_stream("binary")
    task = _task()
    learner = _Learner.of(_Block(), task, n=stream.n, memory=None)
    learner.processed = 20
    row = _checkpoint_row(task, stream, learner, 1, 20, 5.0, last=False)
    assert row["online_error"] == 0.25 and row["labels_queried"] == 20
    assert row["n_support"] == 0.0 and row["test_n"] == min(task.test_max, len(stream.y_test))
    assert row["test_error"] == pytest.approx(float(np.mean(stream.y_test != 1.0)))
    bad = _Learner.of(_Block({"n_support": np.inf}), task, n=stream.n, memory=None)
    with pytest.raises(Diverged, match="n_support"):
        _checkpoint_row(task, stream, bad, 1, 20, 5.0, last=True)


def test_the_run_row_is_what_run_task_records() -> None:
    """The run row of a task equals the one built from its own trace rows."""
    stream = toy_stream("binary")
    task = Task("perceptron", "linear", None, stream.spec, epochs=2, checkpoints=4)
    registry = get_registry()
    result = run_task(task, stream, registry, trace_memory=False)
    rows = result.traces.to_dict("records")
    learner = _Learner.of(None, task, n=stream.n, memory=None)
    learner.learn_time, learner.processed = result.run["time_s"], 2 * stream.n
    row = _run_row(task, stream, registry, learner, rows, None, result.run["constant_predictions"])
    # run_task adds when and where the task ran
    assert set(result.run) - set(row) == {"started_at", "finished_at", "machine"}
    for key, mine in row.items():
        value = result.run[key]
        assert mine == value or (value != value and mine != mine), key
    first_pass = [r for r in rows if r["epoch"] == 1][-1]
    assert row["online_error"] == first_pass["online_error"] != rows[-1]["online_error"]
    assert row["final_epoch_error"] == rows[-1]["online_error"]
