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
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kbench._version import __version__
from kbench.core.arrays import one_rows
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
    if "tune" not in options:
        return {}
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
        return (pred - y) ** 2
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
        return float(np.mean((pred - yt) ** 2)), len(yt), constant
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
        part = (pred - yt[lo:hi]) ** 2 if task_kind == "regression" else pred != yt[lo:hi]
        total += float(part.sum())
        release_rows(None, lo, hi, yt)
    return total / len(yt), len(yt), constant and len(yt) > 1


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
        "majority_error": _majority_error(stream.task, stream.y),
        "majority_test_error": _majority_error(stream.task, stream.y_test)
        if stream.y_test is not None
        else np.nan,
        "plugin": entry.plugin,
        "plugin_version": entry.version,
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


def _prequential(
    task: Task, stream: Stream, registry: Registry, memory: PeakMemory | None
) -> TaskResult:
    X, y, n = stream.X, stream.y, stream.n
    algo = make_algorithm(task, stream, registry)
    if algo.offline:
        return _offline(task, stream, registry, algo, memory)
    active = callable(getattr(algo, "wants_label", None))
    end_pass = getattr(algo, "end_pass", None)
    end_pass = end_pass if callable(end_pass) else None
    budget = task.max_queries
    checkpoints = log_checkpoints(n, task.checkpoints)
    # examples a chunk: _CHUNK, fewer when dense rows are wide (a densified sparse stream)
    chunk = chunk_rows(_CHUNK, stream.d, stream.sparse)
    # One byte per example for a class label's outcome (8 for a squared error): the
    # outcomes are the only per-example array a task keeps.
    outcomes = np.zeros(n, dtype=np.float64 if stream.task == "regression" else bool)
    rows: list[dict[str, Any]] = []
    learn_time, queried, processed = 0.0, 0, 0
    # Whether the first pass ends on a constant prediction, without keeping its
    # predictions: the last first-pass example whose prediction differs from the one before.
    last_pred, last_change = np.nan, 0
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
                Xb, yb = X[done:end], y[done:end]
                if memory is not None:
                    memory.begin()
                t0 = time.perf_counter()
                if active:
                    pred, asked = _active_block(algo, Xb, yb, budget - queried if budget else 0)
                    queried += asked
                    spent = bool(budget and queried >= budget)
                elif budget:
                    pred, spent = _budgeted_block(algo, Xb, yb, budget, processed)
                else:
                    pred = algo.learn_predict_many(Xb, yb)
                if end_pass is not None and (end == n or spent):
                    end_pass()
                learn_time += time.perf_counter() - t0
                if memory is not None:
                    memory.end()
                pred = np.asarray(pred, dtype=float)
                if spent:
                    end = done + len(pred)
                    Xb, yb = Xb[: len(pred)], yb[: len(pred)]
                if pred.shape != (Xb.shape[0],):
                    raise ValueError(
                        f"learn_predict_many returned shape {pred.shape} for {Xb.shape[0]} examples"
                    )
                if not np.isfinite(pred).all():
                    bad = done + int(np.argmax(~np.isfinite(pred)))
                    raise Diverged(f"non-finite prediction at example {bad}", at=bad)
                score = _score(stream.task, pred, yb)
                if epoch == 1 and len(pred):
                    outcomes[done:end] = score
                    if done and pred[0] != last_pred:
                        last_change = done
                    changes = np.flatnonzero(pred[1:] != pred[:-1])
                    if changes.size:
                        last_change = done + int(changes[-1]) + 1
                    last_pred = pred[-1]
                wrong += (
                    float(score.sum())
                    if stream.task == "regression"
                    else float(len(score) - score.sum())
                )
                processed += end - done
                release_rows(X, done, end, y)
                done = end
            stats = algo.stats()
            _check_stats(stats, done)
            row = {
                "task_id": task.task_id,
                "stream_id": stream.stream_id,
                "epoch": epoch,
                "seen": done,
                "mistakes": wrong,
                "online_error": wrong / done,
                "time_s": learn_time,
                "labels_queried": queried if active else processed,
                "peak_memory": memory.peak if memory is not None else np.nan,
            }
            if stream.X_test is not None:
                last = done == n or spent
                row["test_error"], row["test_n"], row["test_constant"] = _test_error(
                    algo, stream, None if last else task.test_max, done
                )
            row.update(
                {k: float(v) for k, v in stats.items() if isinstance(v, (int, float, np.number))}
            )
            rows.append(row)
            if spent:
                stopped = done
                break
        if stopped is not None:
            break
    first_n = n
    if stopped is not None and len(rows) and rows[-1]["epoch"] == 1:
        outcomes, first_n = outcomes[:stopped], stopped
    traces = pd.DataFrame(rows)
    final = rows[-1]
    first = [r for r in rows if r["epoch"] == 1][-1]
    run = base_row(task, stream) | {
        "status": "ok",
        "reason": "",
        "offline": False,
        "mistakes": first["mistakes"],
        "online_error": first["online_error"],
        "test_error": final.get("test_error", np.nan),
        "final_epoch_error": final["online_error"],
        "n_support": final.get("n_support", np.nan),
        "kernel_evals": final.get("kernel_evals", np.nan),
        "time_s": learn_time,
        "us_per_example": 1e6 * learn_time / max(processed, 1),
        "peak_memory": memory.peak if memory is not None else np.nan,
        "memory_method": memory.mode if memory is not None else "none",
        "labels_queried": int(final["labels_queried"]),
        "query_budget": budget,
        "stopped_at": np.nan if stopped is None else stopped,
        "seen": int(first["seen"]),
        "test_n": final.get("test_n", 0),
        "test_constant_predictions": bool(final.get("test_constant", False)),
        # every prediction of the first pass's second half equals its last one
        "constant_predictions": last_change <= first_n // 2,
        "majority_error": _majority_error(stream.task, y),
        "majority_test_error": _majority_error(stream.task, stream.y_test)
        if stream.y_test is not None
        else np.nan,
        "plugin": registry.entry("algorithm", task.algorithm_name).plugin,
        "plugin_version": registry.entry("algorithm", task.algorithm_name).version,
    }
    return TaskResult(run=run, traces=traces, outcomes=outcomes)
