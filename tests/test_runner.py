"""The prequential runner: order of calls, checkpoints, outcomes, epochs, active learning, failures."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import MISBEHAVING
from kbench.core.registry import get_registry
from kbench.data.streams import StreamSpec, build_stream
from kbench.execution.prequential import log_checkpoints, run_task
from kbench.execution.tasks import Task

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
    # Peak memory is the growth of the resident set over the task's start: a learner this
    # small may fit in pages the process already holds, so 0 is a valid reading here
    # (test_peak_memory_sees_a_block_that_allocates checks the measurement itself).
    assert result.run["kernel_evals"] > 0 and result.run["peak_memory"] >= 0
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


NON_FINITE = '''
import math
import numpy as np
from kbench import hookimpl, Algorithm


class NanAfter(Algorithm):
    """Its decision value becomes ``value`` (nan, inf, -inf) after ``after`` examples; with
    ``heldout=True`` only while the runner evaluates the test split."""
    name = "nan_after"
    tasks = frozenset({"binary", "multiclass"})
    uses_kernel = False
    def __init__(self, *, kernel=None, loss=None, task="binary", n_classes=2, seed=0,
                 after: int = 10, value: str = "nan", heldout: bool = False):
        super().__init__(kernel=kernel, loss=loss, task=task, n_classes=n_classes, seed=seed)
        self.after, self.value, self.heldout = after, value, heldout
        self.seen = 0
        self.evaluating = False
    def decision_one(self, x):
        bad = self.seen > self.after and (self.evaluating or not self.heldout)
        f = float(self.value) if bad else 0.5
        if self.task == "multiclass":
            out = np.zeros(self.n_classes)
            out[1] = f  # one class score alone is enough to break the learner
            return out
        return f
    def learn_one(self, x, y):
        self.seen += 1
    def predict_many(self, X):
        self.evaluating = True
        try:
            return super().predict_many(X)
        finally:
            self.evaluating = False
    def stats(self):
        return {"n_support": 0, "kernel_evals": 0}


@hookimpl
def kbench_register_algorithms(register):
    register(NanAfter)
'''


@pytest.mark.parametrize(
    ("spec", "stream"),
    [
        ("nan_after", {"positive": "5-9"}),
        ("nan_after[value=inf]", {"positive": "5-9"}),
        ("nan_after[value=-inf]", {"positive": "5-9"}),
        ("nan_after", {}),  # multiclass: one non-finite class score
    ],
)
def test_non_finite_decision_is_diverged_online(plugin_dist, spec: str, stream: dict) -> None:
    """A NaN or infinite decision value ends the task as diverged at that example (it used
    to be read as the label -1 and the run ended ok), on the runner's block path."""
    plugin_dist("kb_non_finite", NON_FINITE)
    task = _task(spec, stream={"n": 100, **stream}, checkpoints=5)
    result = run_task(task, build_stream(task.stream, get_registry()), get_registry())
    assert result.status == "diverged", result.run
    assert "non-finite prediction at example 11" in result.run["reason"]
    assert result.run["diverged_at"] == 11


def test_non_finite_heldout_prediction_is_diverged_at_its_checkpoint(plugin_dist) -> None:
    """A learner whose held-out predictions are non-finite diverges at the first checkpoint
    whose evaluation sees them (predict_many), even though its online predictions are finite."""
    plugin_dist("kb_non_finite", NON_FINITE)
    task = _task(
        "nan_after[heldout=True]",
        stream={"positive": "5-9", "n": 200, "test_size": 0.3},
        checkpoints=6,
    )
    result = run_task(task, build_stream(task.stream, get_registry()), get_registry())
    first_bad = next(int(c) for c in log_checkpoints(200, 6) if c > 10)
    assert result.status == "diverged", result.run
    assert result.run["reason"] == (
        f"non-finite prediction on held-out example 0 at the checkpoint after {first_bad} examples"
    )
    assert result.run["diverged_at"] == first_bad


def test_label_of_gives_nan_for_a_non_finite_decision() -> None:
    """The base label_of maps a non-finite decision to NaN for every task, finite ones as before."""
    from kbench.core.components import Algorithm

    class Bare(Algorithm):
        name = "bare"
        uses_kernel = False
        tasks = frozenset({"binary", "multiclass", "regression", "novelty"})

    for task in ("binary", "novelty"):
        algo = Bare(task=task)
        assert algo.label_of(0.0) == 1.0 and algo.label_of(-1e-300) == -1.0
        assert all(np.isnan(algo.label_of(v)) for v in (np.nan, np.inf, -np.inf))
    reg = Bare(task="regression")
    assert reg.label_of(2.5) == 2.5 and np.isnan(reg.label_of(np.inf))
    multi = Bare(task="multiclass", n_classes=3)
    assert multi.label_of(np.array([0.0, 2.0, 1.0])) == 1.0
    assert np.isnan(multi.label_of(np.array([0.0, np.nan, 1.0])))
    assert np.isnan(multi.label_of(np.array([np.inf, 0.0, 1.0])))


# Learners whose block fast path (compiled learn_predict_many) or held-out predict_many
# computes labels itself: a polynomial kernel of degree 300 on unscaled digits (values up
# to 16) overflows to inf from the second example on, so their decision values do too.
COMPILED_LEARNERS = [
    "perceptron", "pa", "bogd", "bpa_s", "forgetron", "projectron", "rbp",
    "averaged_perceptron", "lasvm", "idsvm", "norma",
]  # fmt: skip


def _diverged_on_overflowing_kernel(algorithm: str, opts: dict):
    """The result of ``algorithm`` (with its default loss) on the digits stream ``opts``
    with a polynomial kernel of degree 300, asserted to have diverged."""
    reg = get_registry()
    cls = reg.entry("algorithm", algorithm.split("[")[0]).cls
    task = _task(
        algorithm,
        stream=opts,
        kernel=reg.canonical("kernel", "poly[degree=300]"),
        loss=reg.canonical("loss", cls.default_loss) if cls.uses_loss else None,
        checkpoints=5,
    )
    with np.errstate(all="ignore"):  # the overflow is the point
        result = run_task(task, build_stream(task.stream, reg), reg)
    assert result.status == "diverged", result.run
    return result


@pytest.mark.parametrize("algorithm", COMPILED_LEARNERS)
@pytest.mark.parametrize("heldout", [False, True])
def test_built_in_learners_diverge_on_an_overflowing_kernel(algorithm: str, heldout: bool) -> None:
    """The built-in learners' own block loops and held-out predictions turn a non-finite
    decision value into divergence too (they used to read it as the label -1 and end ok)."""
    opts = {"positive": "5-9", "n": 200} | ({"test_size": 0.2} if heldout else {})
    result = _diverged_on_overflowing_kernel(algorithm, opts)
    if heldout and algorithm != "lasvm":  # LASVM's first examples never give it a kernel row
        assert result.run["reason"].startswith("non-finite prediction on held-out example")
    elif not heldout:
        assert result.run["reason"].startswith("non-finite prediction at example")


@pytest.mark.parametrize(
    "algorithm",
    ["perceptron", "projectron", "rbp", "averaged_perceptron", "bsgd[maintenance=removal]", "nogd"],
)
@pytest.mark.parametrize("heldout", [False, True])
def test_built_in_multiclass_learners_diverge_on_an_overflowing_kernel(
    algorithm: str, heldout: bool
) -> None:
    """Multiclass too: a non-finite class score is divergence, not the class an argmax over
    NaN would pick."""
    opts = {"n": 200} | ({"test_size": 0.2} if heldout else {})
    result = _diverged_on_overflowing_kernel(algorithm, opts)
    where = "on held-out example" if heldout else "at example"
    assert result.run["reason"].startswith(f"non-finite prediction {where}")


def test_a_stream_that_cannot_be_built_is_named_with_its_brackets(tmp_path) -> None:
    """The message names the whole spec: rich must not take ``[path=...]`` for markup."""
    import subprocess
    import sys

    bad = tmp_path / "bad.txt"
    bad.write_text("1 1:0.5\n-1 1:nan\n1 1:0.7\n-1 1:0.1\n")
    good = tmp_path / "good.txt"
    good.write_text("1 1:0.5\n-1 1:0.2\n1 1:0.7\n-1 1:0.1\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kbench.cli.main",
            "run",
            "-a",
            "perceptron",
            "-d",
            f"libsvm[path={bad}]",
            "-d",
            f"libsvm[path={good}]",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "COLUMNS": "400"},
    )
    err = " ".join(proc.stderr.split())
    assert "error: stream libsvm[" in err and f"path={bad}" in err
    assert "non-finite value 'nan'" in err


def test_peak_memory_sees_a_block_that_allocates() -> None:
    """The peak over a block counts memory allocated and touched inside it, even if freed."""
    from kbench.execution.memory import PeakMemory

    meter = PeakMemory()
    try:
        meter.begin()
        block = np.ones(64 * 2**20 // 8)  # 64 MiB, every page written
        del block
        meter.end()
    finally:
        meter.close()
    assert meter.peak >= 48 * 2**20


HUGE = '''
from kbench import hookimpl, Algorithm


class Huge(Algorithm):
    """Predicts 1e200 (finite, but its squared error overflows) after ten examples."""
    name = "huge"
    tasks = frozenset({"regression"})
    uses_kernel = False
    def __init__(self, *, kernel=None, loss=None, task="regression", n_classes=0, seed=0):
        super().__init__(kernel=kernel, loss=loss, task=task, n_classes=n_classes, seed=seed)
        self.seen = 0
    def decision_one(self, x):
        return 1e200 if self.seen > 10 else 0.0
    def learn_one(self, x, y):
        self.seen += 1
    def stats(self):
        return {"n_support": 0, "kernel_evals": 0}


@hookimpl
def kbench_register_algorithms(register):
    register(Huge)
'''


def test_overflowing_squared_errors_are_inf_without_warnings(plugin_dist, tmp_path) -> None:
    """Squared errors beyond float64 (scoring) and float32 (the stored outcomes) are inf,
    with no NumPy warning: a leaderboard run of diverging regressors printed one per task."""
    import dataclasses
    import warnings

    from kbench.results.store import ResultsStore, load_results

    plugin_dist("kb_huge", HUGE)
    reg = get_registry()
    stream = build_stream(StreamSpec("digits", n=100), reg)
    stream = dataclasses.replace(stream, task="regression")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = run_task(_task("huge"), stream, reg)
        store = ResultsStore(tmp_path)
        store.prepare()
        store.write(result)
    assert np.isinf(result.outcomes[11:]).all() and np.isfinite(result.outcomes[:11]).all()
    stored = load_results(tmp_path).outcomes_long()
    assert np.isinf(stored["outcome"].to_numpy()[11:]).all()
