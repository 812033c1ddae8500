"""The prequential runner: order of calls, checkpoints, outcomes, epochs, active learning, failures."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MISBEHAVING

from kbench.registry import get_registry
from kbench.runner import log_checkpoints, run_task
from kbench.streams import StreamSpec, build_stream
from kbench.tasks import Task

RECORDER = '''
import numpy as np
from kbench import hookimpl, Algorithm

LOG = []

class Recorder(Algorithm):
    """Predicts the last label it learned; logs every call."""
    name = "recorder"
    uses_kernel = False
    def __init__(self, *, kernel=None, loss=None, task="binary", n_classes=2, seed=0, every: int = 1):
        super().__init__(kernel=kernel, loss=loss, task=task, n_classes=n_classes, seed=seed)
        self.every = every
        self.last = 1.0
        self.count = 0
        self.learned = 0
    def decision_one(self, x):
        LOG.append(("predict", float(x[0])))
        return self.last
    def learn_one(self, x, y):
        LOG.append(("learn", float(x[0])))
        self.last = y
        self.learned += 1
    def stats(self):
        return {"n_support": self.learned, "kernel_evals": 0}

class Asker(Recorder):
    """Asks for every other label."""
    name = "asker"
    def wants_label(self, x):
        self.count += 1
        return self.count % 2 == 0

class Blocky(Recorder):
    """Has a block fast path that counts its calls."""
    name = "blocky"
    blocks = 0
    def learn_predict_many(self, X, y):
        type(self).blocks += 1
        return super().learn_predict_many(X, y)

@hookimpl
def kbench_register_algorithms(register):
    register(Recorder); register(Asker); register(Blocky)
'''


def _task(algorithm: str, dataset: str = "digits", **kw) -> Task:
    opts = kw.pop("stream", {})
    return Task(
        algorithm=get_registry().canonical("algorithm", algorithm),
        kernel=kw.pop("kernel", None),
        loss=kw.pop("loss", None),
        stream=StreamSpec(dataset, **opts),
        **kw,
    )


def test_log_checkpoints() -> None:
    """Checkpoints are increasing, start at 1, end at n, and are about as many as asked."""
    c = log_checkpoints(10000, 20)
    assert c[0] == 1 and c[-1] == 10000 and np.all(np.diff(c) > 0)
    assert 15 <= len(c) <= 21
    assert list(log_checkpoints(3, 30)) == [1, 2, 3]


def test_predict_then_learn_for_every_example(plugin_dist) -> None:
    """Each example is predicted before it is learned, in stream order, once."""
    plugin_dist("kb_recorder", RECORDER)
    import kb_recorder

    kb_recorder.LOG.clear()
    task = _task("recorder", stream={"positive": "5-9", "n": 50})
    stream = build_stream(task.stream, get_registry())
    result = run_task(task, stream, get_registry())
    assert result.status == "ok", result.run["reason"]
    expected = [(op, float(x[0])) for x in stream.X for op in ("predict", "learn")]
    assert kb_recorder.LOG[: 2 * 50] == expected
    # The recorder predicts the previous label: its outcomes are exactly y[i] == y[i-1].
    y = stream.y
    correct = np.concatenate([[y[0] == 1.0], y[1:] == y[:-1]])
    assert np.array_equal(result.outcomes.astype(bool), correct)
    assert result.run["mistakes"] == (~correct).sum()
    assert result.traces["seen"].iloc[-1] == 50 and result.traces["n_support"].iloc[-1] == 50


def test_fast_path_is_used_between_checkpoints(plugin_dist) -> None:
    """learn_predict_many is called once per checkpoint interval."""
    plugin_dist("kb_recorder", RECORDER)
    import kb_recorder

    task = _task("blocky", stream={"positive": "5-9", "n": 400}, checkpoints=10)
    result = run_task(task, build_stream(task.stream, get_registry()), get_registry())
    assert kb_recorder.Blocky.blocks == len(log_checkpoints(400, 10)) == len(result.traces)


def test_wants_label_is_honoured(plugin_dist) -> None:
    """An active learner learns only the labels it asks for; the queries are counted."""
    plugin_dist("kb_recorder", RECORDER)
    task = _task("asker", stream={"positive": "5-9", "n": 100})
    result = run_task(task, build_stream(task.stream, get_registry()), get_registry())
    assert result.run["labels_queried"] == 50
    assert result.traces["n_support"].iloc[-1] == 50


def test_heldout_error_and_epochs() -> None:
    """Held-out error is recorded at checkpoints; epochs add passes; online error is the first pass's."""
    reg = get_registry()
    task = _task(
        "perceptron",
        stream={"positive": "5-9", "test_size": 0.3, "scale": "minmax"},
        kernel=reg.canonical("kernel", "rbf[gamma=0.05]"),
        epochs=2,
        checkpoints=8,
        test_max=100,
    )
    stream = build_stream(task.stream, reg)
    result = run_task(task, stream, reg)
    tr = result.traces
    assert result.status == "ok"
    assert set(tr["epoch"]) == {1, 2}
    first = tr[tr["epoch"] == 1]
    assert result.run["online_error"] == pytest.approx(first["online_error"].iloc[-1])
    assert (first["test_n"].iloc[:-1] == 100).all() and first["test_n"].iloc[-1] == len(
        stream.X_test
    )
    assert result.run["test_error"] < 0.1 and result.run["online_error"] < 0.2
    assert result.run["kernel_evals"] > 0 and result.run["peak_memory"] > 0
    assert len(result.outcomes) == stream.n
    assert tr["time_s"].is_monotonic_increasing


def test_failing_learner_is_recorded_as_error(plugin_dist) -> None:
    """An exception inside a learner becomes status error with the traceback's last line."""
    plugin_dist("kb_misbehaving", MISBEHAVING)
    task = _task("exploder", stream={"positive": "5-9", "n": 100})
    result = run_task(task, build_stream(task.stream, get_registry()), get_registry())
    assert result.status == "error" and result.run["reason"] == "RuntimeError: exploded on purpose"


def test_non_finite_prediction_is_diverged(plugin_dist) -> None:
    """A NaN prediction stops the task with status diverged."""
    plugin_dist("kb_misbehaving", MISBEHAVING)
    reg = get_registry()
    stream = build_stream(StreamSpec("digits", n=100), reg)
    import dataclasses

    stream = dataclasses.replace(stream, task="regression")
    result = run_task(_task("diverger"), stream, reg)
    assert (
        result.status == "diverged"
        and "non-finite prediction at example 11" in result.run["reason"]
    )
