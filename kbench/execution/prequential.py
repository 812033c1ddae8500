"""The prequential (test-then-train) evaluation protocol, implemented once.

For each example the learner predicts, the prediction is scored, then the learner
learns. Between checkpoints the learner's block fast path ``learn_predict_many`` is
used; an active learner (``wants_label``) is driven one example at a time. Only learner
calls are timed; held-out evaluation at checkpoints is not. A sparse stream's blocks are
CSR matrices, passed as they are to learners that declare ``sparse_input``; the others
get them densified a bounded block at a time (``kbench.core.dense_rows``, ``docs/sparse.md``).
"""

from __future__ import annotations

import math
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kbench._version import __version__
from kbench.core.arrays import one_rows, squared_errors
from kbench.core.dense_rows import for_sparse_rows, row_blocks
from kbench.core.errors import format_exception_line, interrupted
from kbench.core.registry import Registry
from kbench.core.seeds import derive_seed
from kbench.data.gathered import RowGather, chunk_rows
from kbench.data.paging import release_rows
from kbench.data.streams import Stream
from kbench.execution.memory import PeakMemory
from kbench.execution.tasks import Task
from kbench.execution.tuning import window_stream

STATUSES = ("ok", "error", "timeout", "diverged", "memory")
#: Examples handed to the learner at once: a checkpoint's block is cut into chunks of at
#: most this many, so that a task's memory does not grow with the stream's length.
_CHUNK = 1 << 14


class Diverged(Exception):
    """A learner produced a non-finite prediction or statistic.

    ``at`` is the number of training examples seen when it was detected: the index of the
    example whose prediction was non-finite (online), or the checkpoint whose held-out
    evaluation or statistics were.
    """

    def __init__(self, message: str, *, at: int | None = None) -> None:
        super().__init__(message)
        self.at = at


@dataclass
class TaskResult:
    """What one task produced: a run row, its trace and its per-example outcomes (whether
    each prediction was correct, as bool, or its squared error for regression)."""

    run: dict[str, Any]
    traces: pd.DataFrame
    outcomes: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def status(self) -> str:
        """ok, error, timeout, diverged or memory."""
        return self.run["status"]


def log_checkpoints(n: int, count: int) -> np.ndarray:
    """About ``count`` log-spaced example counts in [1, n], always ending at n."""
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    pts = np.unique(np.round(np.logspace(0, math.log10(n), max(count, 2))).astype(np.int64))
    return np.unique(np.concatenate([pts[(pts >= 1) & (pts <= n)], [n]]))


def machine_info() -> dict[str, Any]:
    """A description of the machine, stored with every run."""
    import os

    return {
        "host": platform.node(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }


#: Version of what a run row means, stored in every row (``results_format``). 2: seeds
#: per purpose (:mod:`kbench.core.seeds`): a learner gets ``derive_seed(seed, "learner")``
#: and the data, split and order their own streams, so a format-1 run (every part drew
#: from the seed itself) is another experiment and is never mixed with format-2 runs.
RESULTS_FORMAT = 2


def base_row(task: Task, stream: Stream | None = None) -> dict[str, Any]:
    """The configuration columns every run row has, whatever its status."""
    return {
        "task_id": task.task_id,
        "algorithm": task.algorithm_name,
        "algorithm_spec": task.algorithm,
        "kernel": task.kernel,
        "loss": task.loss,
        "dataset": task.dataset_name,
        "stream": task.stream.label,
        "stream_seed": task.stream.seed,
        "stream_id": stream.stream_id if stream is not None else None,
        "seed": task.seed,
        "epochs": task.epochs,
        "task": stream.task if stream is not None else None,
        "n": stream.n if stream is not None else None,
        "d": stream.d if stream is not None else None,
        "kbench_version": __version__,
        "results_format": RESULTS_FORMAT,
        "config": task.to_dict(),
    } | _tuning_columns(task)


def _tuning_columns(task: Task) -> dict[str, Any]:
    """A tuned study's columns: the phase of the run, its tuning group and configuration
    (search order), the tuning spec and the part of the stream it ran on."""
    options = dict(task.options)
    if "tune" not in options:  # untuned: a batch reference's part of a tuned stream, say
        return {"window": options["window"]} if "window" in options else {}
    return {
        "phase": options.get("phase", "evaluation"),
        "tune": options["tune"],
        "tune_group": options.get("tune_group"),
        "tune_config": options.get("tune_config"),
        "window": options.get("window"),
        "base_algorithm": options.get("base_algorithm"),
        "base_kernel": options.get("base_kernel") or None,
    }


def failed_result(task: Task, status: str, reason: str, stream: Stream | None = None) -> TaskResult:
    """A result recording that the task did not finish."""
    run = base_row(task, stream) | {"status": status, "reason": reason}
    return TaskResult(run=run, traces=pd.DataFrame({"task_id": pd.Series([], dtype=str)}))


def run_task(
    task: Task, stream: Stream, registry: Registry, *, trace_memory: bool = True
) -> TaskResult:
    """Run one task on its stream; exceptions become an ``error`` or ``diverged`` result."""
    started = time.time()
    stream = window_stream(stream, dict(task.options).get("window"))
    try:
        result = _run(task, stream, registry, trace_memory)
    except Diverged as exc:
        result = failed_result(task, "diverged", str(exc), stream)
        result.run["diverged_at"] = exc.at
    except MemoryError:
        result = failed_result(task, "memory", "MemoryError: the learner ran out of memory", stream)
    except Exception as exc:  # a failing learner is recorded and the study goes on
        if interrupted(exc):  # Ctrl-C, not the learner's failure
            raise
        result = failed_result(task, "error", format_exception_line(exc), stream)
    result.run["started_at"] = started
    result.run["finished_at"] = time.time()
    result.run["machine"] = machine_info()
    return result


def make_algorithm(task: Task, stream: Stream, registry: Registry) -> Any:
    """Construct the task's algorithm with its kernel, loss and the stream's task; on a
    sparse stream, a learner that takes only dense rows comes behind
    :class:`~kbench.core.dense_rows.DenseRows`."""
    kernel = registry.create("kernel", task.kernel) if task.kernel else None
    loss = registry.create("loss", task.loss) if task.loss else None
    algo = registry.create(
        "algorithm",
        task.algorithm,
        kernel=kernel,
        loss=loss,
        task=stream.task,
        n_classes=stream.n_classes,
        seed=derive_seed(task.seed, "learner"),  # never the data's or the order's numbers
    )
    return for_sparse_rows(algo) if stream.sparse else algo


def _score(task_kind: str, pred: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-example outcome: 1 for a correct prediction, or the squared error for regression."""
    if task_kind == "regression":
        return squared_errors(pred, y)
    return (pred == y).astype(np.float64)


def _test_error(algo: Any, stream: Stream, limit: int | None, seen: int) -> tuple[float, int, bool]:
    """Held-out error, examples scored, and whether every prediction was the same value."""
    Xt, yt = stream.X_test, stream.y_test
    assert Xt is not None and yt is not None  # called for streams with a test split
    if limit is not None:
        Xt, yt = Xt[:limit], yt[:limit]
    if isinstance(Xt, RowGather):
        return _gathered_test_error(algo, stream.task, Xt, yt, seen)
    pred = _test_predictions(algo, Xt, 0, seen)
    constant = bool(len(pred) > 1 and np.all(pred == pred[0]))
    if stream.task == "regression":
        return float(np.mean(squared_errors(pred, yt))), len(yt), constant
    return float(np.mean(pred != yt)), len(yt), constant


def _test_predictions(algo: Any, Xt: Any, offset: int, seen: int) -> np.ndarray:
    """The learner's predictions on held-out rows (the first is held-out example ``offset``)."""
    pred = np.asarray(algo.predict_many(Xt), dtype=float)
    if not np.isfinite(pred).all():
        bad = offset + int(np.argmax(~np.isfinite(pred)))
        raise Diverged(
            f"non-finite prediction on held-out example {bad} at the checkpoint after {seen} examples",
            at=seen,
        )
    return pred


def _gathered_test_error(
    algo: Any, task_kind: str, Xt: RowGather, yt: np.ndarray, seen: int
) -> tuple[float, int, bool]:
    """:func:`_test_error` on a held-out split read a chunk at a time (a large stream's):
    the errors are summed per chunk, and no array of its length is held."""
    total, first, constant = 0.0, None, True
    step = chunk_rows(_CHUNK, Xt.shape[1], Xt.sparse)
    for lo in range(0, len(yt), step):
        hi = min(len(yt), lo + step)
        pred = _test_predictions(algo, Xt[lo:hi], lo, seen)
        first = pred[0] if first is None else first
        constant = constant and bool(np.all(pred == first))
        part = squared_errors(pred, yt[lo:hi]) if task_kind == "regression" else pred != yt[lo:hi]
        total += float(part.sum())
        release_rows(None, lo, hi, yt)
    return total / len(yt), len(yt), constant and len(yt) > 1


def _reference_fields(stream: Stream, entry: Any) -> dict[str, Any]:
    """The run row's majority-class errors of the stream and the learner's plugin."""
    return {
        "majority_error": _majority_error(stream.task, stream.y),
        "majority_test_error": _majority_error(stream.task, stream.y_test)
        if stream.y_test is not None
        else np.nan,
        "plugin": entry.plugin,
        "plugin_version": entry.version,
    }


def _majority_error(task_kind: str, y: np.ndarray) -> float:
    """Error of always predicting the most frequent label: what a learner that learned nothing gets.

    For regression, the mean squared error of always predicting the mean of y: its
    variance. The labels are counted a chunk at a time (no sorted copy of a long stream's labels)."""
    if task_kind == "regression" and len(y):
        return float(np.var(y))
    if task_kind not in ("binary", "multiclass") or len(y) == 0:
        return np.nan
    counts: dict[float, int] = {}
    step = 4 * _CHUNK  # half a megabyte of labels: sorted (np.unique) one step at a time
    for lo in range(0, len(y), step):
        values, found = np.unique(y[lo : lo + step], return_counts=True)
        for v, k in zip(values.tolist(), found.tolist(), strict=True):
            counts[v] = counts.get(v, 0) + k
        release_rows(None, lo, min(len(y), lo + step), y)
    return float(1.0 - max(counts.values()) / len(y))


def _check_stats(stats: dict[str, Any], seen: int) -> None:
    for key, value in stats.items():
        if isinstance(value, (int, float, np.floating)) and not np.isfinite(value):
            raise Diverged(f"statistic {key} became {value} after {seen} examples", at=seen)


def _run(task: Task, stream: Stream, registry: Registry, trace_memory: bool) -> TaskResult:
    memory = PeakMemory() if trace_memory else None
    try:
        return _prequential(task, stream, registry, memory)
    finally:
        if memory is not None:
            memory.close()


def _offline(
    task: Task, stream: Stream, registry: Registry, algo: Any, memory: PeakMemory | None
) -> TaskResult:
    """A batch reference: one fit on the whole stream (on its first ``max_queries``
    examples under a label budget), then its held-out error."""
    m = min(stream.n, task.max_queries) if task.max_queries else stream.n
    if memory is not None:
        memory.begin()
    t0 = time.perf_counter()
    algo.fit(stream.X[:m], stream.y[:m])
    fit_time = time.perf_counter() - t0
    if memory is not None:
        memory.end()
    stats = algo.stats()
    _check_stats(stats, m)
    test_error, test_n, test_constant = (
        _test_error(algo, stream, None, m) if stream.X_test is not None else (np.nan, 0, False)
    )
    row = {
        "task_id": task.task_id,
        "stream_id": stream.stream_id,
        "epoch": 1,
        "seen": m,
        "mistakes": np.nan,
        "online_error": np.nan,
        "time_s": fit_time,
        "labels_queried": m,
        "peak_memory": memory.peak if memory is not None else np.nan,
        "test_error": test_error,
        "test_n": test_n,
    }
    row.update({k: float(v) for k, v in stats.items() if isinstance(v, (int, float, np.number))})
    entry = registry.entry("algorithm", task.algorithm_name)
    run = base_row(task, stream) | {
        "status": "ok",
        "reason": "",
        "offline": True,
        "mistakes": np.nan,
        "online_error": np.nan,
        "test_error": test_error,
        "final_epoch_error": np.nan,
        "n_support": stats.get("n_support", np.nan),
        "kernel_evals": stats.get("kernel_evals", np.nan),
        "time_s": fit_time,
        "us_per_example": 1e6 * fit_time / m,
        "peak_memory": row["peak_memory"],
        "memory_method": memory.mode if memory is not None else "none",
        "labels_queried": m,
        "query_budget": task.max_queries,
        "stopped_at": m if m < stream.n else np.nan,
        "seen": m,
        "test_n": test_n,
        "constant_predictions": False,
        "test_constant_predictions": test_constant,
        **_reference_fields(stream, entry),
    }
    return TaskResult(run=run, traces=pd.DataFrame([row]), outcomes=np.zeros(0))


def _active_block(algo, Xb: np.ndarray, yb: np.ndarray, left: int) -> tuple[np.ndarray, int]:
    """Predict then, if the learner asks, reveal the label; stop once ``left`` labels are
    used (0: no budget). Returns the predictions made and the labels revealed."""
    pred = np.empty(Xb.shape[0])
    asked = 0
    for a, _, rows, learner in row_blocks(algo, Xb):
        for i, x in enumerate(one_rows(rows), start=a):
            pred[i] = learner.predict_one(x)
            if learner.wants_label(x):
                learner.learn_one(x, yb[i])
                asked += 1
                if left and asked >= left:
                    return pred[: i + 1], asked
    return pred, asked


def _budgeted_block(
    algo, Xb: np.ndarray, yb: np.ndarray, budget: int, processed: int
) -> tuple[np.ndarray, bool]:
    """The block fast path under a label budget, stopping at the example that spends it.

    A passive learner uses one label per example; a learner that reads only some labels
    reports their number as the statistic ``labels_queried``. Either way an example uses at
    most one label, so a sub-block of as many examples as labels left never overshoots.
    """
    parts, k = [], 0
    while k < Xb.shape[0]:
        used = int(algo.stats().get("labels_queried", processed + k))
        if used >= budget:
            break
        j = min(Xb.shape[0], k + budget - used)
        parts.append(np.asarray(algo.learn_predict_many(Xb[k:j], yb[k:j]), dtype=float))
        k = j
    pred = np.concatenate(parts) if parts else np.zeros(0)
    spent = int(algo.stats().get("labels_queried", processed + k)) >= budget
    return pred, spent


@dataclass
class _Learner:
    """The learner of a prequential task, how it is driven (an active learner one example
    at a time; under a label budget, never past it) and what it has spent so far."""

    algo: Any
    memory: PeakMemory | None
    n: int
    budget: int | None = None
    active: bool = False
    end_pass: Callable[[], None] | None = None
    learn_time: float = 0.0  # seconds in the learner's calls
    queried: int = 0  # labels an active learner asked for
    processed: int = 0  # examples learned, over every pass

    @classmethod
    def of(cls, algo: Any, task: Task, n: int, memory: PeakMemory | None) -> _Learner:
        end_pass = getattr(algo, "end_pass", None)
        return cls(
            algo,
            memory,
            n,
            budget=task.max_queries,
            active=callable(getattr(algo, "wants_label", None)),
            end_pass=end_pass if callable(end_pass) else None,
        )

    def step(self, Xb: Any, yb: np.ndarray, done: int, end: int) -> tuple[np.ndarray, bool]:
        """Test then train on one chunk, examples ``done`` to ``end`` of the pass: the
        predictions (checked: :func:`_check_predictions`), fewer than the chunk's examples
        when the label budget ran out inside it, and whether it did. Only the learner's
        calls are timed."""
        algo, budget, memory = self.algo, self.budget, self.memory
        if memory is not None:
            memory.begin()
        t0 = time.perf_counter()
        spent = False
        if self.active:
            pred, asked = _active_block(algo, Xb, yb, budget - self.queried if budget else 0)
            self.queried += asked
            spent = bool(budget and self.queried >= budget)
        elif budget:
            pred, spent = _budgeted_block(algo, Xb, yb, budget, self.processed)
        else:
            pred = algo.learn_predict_many(Xb, yb)
        if self.end_pass is not None and (end == self.n or spent):
            self.end_pass()
        self.learn_time += time.perf_counter() - t0
        if memory is not None:
            memory.end()
        pred = np.asarray(pred, dtype=float)
        _check_predictions(pred, len(pred) if spent else end - done, done)
        return pred, spent

    @property
    def labels(self) -> int:
        """Labels used: those an active learner asked for, else one an example."""
        return self.queried if self.active else self.processed


def _check_predictions(pred: np.ndarray, expected: int, done: int) -> None:
    """A chunk's predictions are one finite number per example (the first is example ``done``)."""
    if pred.shape != (expected,):
        raise ValueError(f"learn_predict_many returned shape {pred.shape} for {expected} examples")
    if not np.isfinite(pred).all():
        bad = done + int(np.argmax(~np.isfinite(pred)))
        raise Diverged(f"non-finite prediction at example {bad}", at=bad)


@dataclass
class _FirstPass:
    """The first pass's per-example outcomes, and where its predictions last changed: the
    pass ends on a constant prediction when they did not change in its second half (its
    predictions themselves are not kept)."""

    outcomes: np.ndarray
    last_pred: float = np.nan
    last_change: int = 0

    def record(self, done: int, pred: np.ndarray, score: np.ndarray) -> None:
        """The outcomes and predictions of the chunk whose first example is ``done``."""
        if not len(pred):
            return
        self.outcomes[done : done + len(pred)] = score
        if done and pred[0] != self.last_pred:
            self.last_change = done
        changes = np.flatnonzero(pred[1:] != pred[:-1])
        if changes.size:
            self.last_change = done + int(changes[-1]) + 1
        self.last_pred = pred[-1]

    def constant(self, n: int) -> bool:
        """Whether every prediction of the second half of a pass of ``n`` examples equals its last."""
        return self.last_change <= n // 2


def _checkpoint_row(
    task: Task, stream: Stream, learner: _Learner, epoch: int, done: int, wrong: float, last: bool
) -> dict[str, Any]:
    """The trace row of a checkpoint after ``done`` examples of pass ``epoch``: the online
    error so far, the learner's time, labels and statistics (checked finite), and the
    held-out error (on at most ``task.test_max`` examples before the ``last`` checkpoint)."""
    stats = learner.algo.stats()
    _check_stats(stats, done)
    memory = learner.memory
    row = {
        "task_id": task.task_id,
        "stream_id": stream.stream_id,
        "epoch": epoch,
        "seen": done,
        "mistakes": wrong,
        "online_error": wrong / done,
        "time_s": learner.learn_time,
        "labels_queried": learner.labels,
        "peak_memory": memory.peak if memory is not None else np.nan,
    }
    if stream.X_test is not None and dict(task.options).get("phase") != "tuning":
        # A tuning run is scored by its online error alone (the selection rule): its
        # held-out predictions would cost most of it on a large test split.
        row["test_error"], row["test_n"], row["test_constant"] = _test_error(
            learner.algo, stream, None if last else task.test_max, done
        )
    row.update({k: float(v) for k, v in stats.items() if isinstance(v, (int, float, np.number))})
    return row


def _run_row(
    task: Task,
    stream: Stream,
    registry: Registry,
    learner: _Learner,
    rows: list[dict[str, Any]],
    stopped: int | None,
    constant: bool,
) -> dict[str, Any]:
    """The run row of a prequential task from its checkpoint rows: the first pass's online
    error, the last checkpoint's held-out error and statistics, time, memory and labels."""
    final = rows[-1]
    first = [r for r in rows if r["epoch"] == 1][-1]
    memory = learner.memory
    entry = registry.entry("algorithm", task.algorithm_name)
    return base_row(task, stream) | {
        "status": "ok",
        "reason": "",
        "offline": False,
        "mistakes": first["mistakes"],
        "online_error": first["online_error"],
        "test_error": final.get("test_error", np.nan),
        "final_epoch_error": final["online_error"],
        "n_support": final.get("n_support", np.nan),
        "kernel_evals": final.get("kernel_evals", np.nan),
        "time_s": learner.learn_time,
        "us_per_example": 1e6 * learner.learn_time / max(learner.processed, 1),
        "peak_memory": memory.peak if memory is not None else np.nan,
        "memory_method": memory.mode if memory is not None else "none",
        "labels_queried": int(final["labels_queried"]),
        "query_budget": learner.budget,
        "stopped_at": np.nan if stopped is None else stopped,
        "seen": int(first["seen"]),
        "test_n": final.get("test_n", 0),
        "test_constant_predictions": bool(final.get("test_constant", False)),
        # every prediction of the first pass's second half equals its last one
        "constant_predictions": constant,
        **_reference_fields(stream, entry),
    }


def _prequential(
    task: Task, stream: Stream, registry: Registry, memory: PeakMemory | None
) -> TaskResult:
    X, y, n = stream.X, stream.y, stream.n
    algo = make_algorithm(task, stream, registry)
    if algo.offline:
        return _offline(task, stream, registry, algo, memory)
    learner = _Learner.of(algo, task, n, memory)
    checkpoints = log_checkpoints(n, task.checkpoints)
    # examples a chunk: _CHUNK, fewer when dense rows are wide (a densified sparse stream)
    chunk = chunk_rows(_CHUNK, stream.d, stream.sparse)
    # One byte per example for a class label's outcome (8 for a squared error): the
    # outcomes are the only per-example array a task keeps.
    regression = stream.task == "regression"
    first = _FirstPass(np.zeros(n, dtype=np.float64 if regression else bool))
    rows: list[dict[str, Any]] = []
    stopped: int | None = None  # examples of the pass in which the query budget ran out
    for epoch in range(1, task.epochs + 1):
        done, wrong = 0, 0.0
        for stop in checkpoints:
            spent = False
            # A checkpoint's examples in chunks of at most `chunk`: what a task holds at
            # once (predictions, scores, a CSR slice, the pages of a mapped stream) is
            # bounded by the chunk, not by the stream's length.
            while done < stop and not spent:
                end = min(int(stop), done + chunk)
                yb = y[done:end]
                pred, spent = learner.step(X[done:end], yb, done, end)
                if spent:  # the budget ran out inside the chunk
                    end, yb = done + len(pred), yb[: len(pred)]
                score = _score(stream.task, pred, yb)
                if epoch == 1:
                    first.record(done, pred, score)
                wrong += float(score.sum()) if regression else float(len(score) - score.sum())
                learner.processed += end - done
                release_rows(X, done, end, y)
                done = end
            rows.append(
                _checkpoint_row(task, stream, learner, epoch, done, wrong, done == n or spent)
            )
            if spent:
                stopped = done
                break
        if stopped is not None:
            break
    outcomes, first_n = first.outcomes, n
    if stopped is not None and rows[-1]["epoch"] == 1:
        outcomes, first_n = outcomes[:stopped], stopped
    run = _run_row(task, stream, registry, learner, rows, stopped, first.constant(first_n))
    return TaskResult(run=run, traces=pd.DataFrame(rows), outcomes=outcomes)
