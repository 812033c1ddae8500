"""What the benchmark scripts share: best-of timings, the memory floor of a kernel row,
the fastest of several runs of a task, the fastest of several fresh learners over one
stream, the do-nothing learners of the asv suite, the processes below a process, and the
learners of the SVMD paper's digit experiments.

The scripts run as ``python scripts/bench_x.py``, which puts this folder first on
``sys.path``: they import this module as ``_bench_common``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def best_seconds(
    call: Callable[[], Any],
    *,
    reps: int = 1,
    repeat: int = 5,
    clock: Callable[[], float] = time.thread_time,
) -> float:
    """Seconds per call of ``call``: the fastest of ``repeat`` batches of ``reps`` calls.

    The best batch is the one least disturbed by other work on the machine; thread CPU
    time (the default clock) leaves out the time other processes held the core.
    """
    best = np.inf
    for _ in range(repeat):
        t0 = clock()
        for _ in range(reps):
            call()
        best = min(best, clock() - t0)
    return best / reps


def matvec_floor_us(m: int, d: int, reps: int) -> float:
    """µs of one dense m × d matrix–vector product ``S @ x``, best of five batches: the
    memory floor of a kernel row over m stored vectors (it reads the m·d numbers once)."""
    rng = np.random.default_rng(0)
    S, x = rng.standard_normal((m, d)), rng.standard_normal(d)
    return 1e6 * best_seconds(lambda: S @ x, reps=reps)


def fastest_run(task: Any, repeat: int, *, trace_memory: bool = True) -> tuple[Any, float]:
    """The result of the fastest of ``repeat`` runs of ``task`` (as a study runs it, from the
    stream cache), and the CPU seconds that run used; exits naming the task's status and
    reason if a run does not end ok."""
    from kbench.core.registry import get_registry
    from kbench.execution.executors import execute

    best, best_cpu = None, 0.0
    for _ in range(repeat):
        cpu = time.process_time()
        result = execute(task, registry=get_registry(), trace_memory=trace_memory)
        cpu = time.process_time() - cpu
        row = result.run
        if row["status"] != "ok":
            sys.exit(f"{task.algorithm}: {row['status']}: {row['reason']}")
        if best is None or row["time_s"] < best.run["time_s"]:
            best, best_cpu = result, cpu
    assert best is not None
    return best, best_cpu


def fastest_learner(
    make: Callable[[], Any], X: np.ndarray, y: np.ndarray, repeat: int
) -> tuple[float, Any, np.ndarray]:
    """``repeat`` fresh learners from ``make`` each predict then learn X, y through
    ``learn_predict_many``: the CPU seconds of the fastest, the last learner and its
    predictions (the learners are deterministic, so any one stands for all)."""
    best, model, pred = np.inf, None, None
    for _ in range(repeat):
        model = make()
        t0 = time.process_time()
        pred = model.learn_predict_many(X, y)
        best = min(best, time.process_time() - t0)
    assert pred is not None
    return best, model, pred


def idle_learners() -> tuple[type, type]:
    """The asv suite's learners that do no work (``benchmarks/bench_runner.py``): one that
    predicts +1 and learns nothing, and the same with a block fast path."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from benchmarks.bench_runner import Idle, IdleBlock

    return Idle, IdleBlock


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (children, their children...), read from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def digit_learner(reg: Any, spec: str, seed: int, sigma: float = 8.0) -> Any:
    """The learner ``spec`` as the SVMD paper's ten-digit experiments set it up: an RBF
    kernel of width ``sigma``, the multiclass hinge, ten classes (scripts/repro_svmd_*)."""
    return reg.create(
        "algorithm",
        spec,
        kernel=reg.create("kernel", f"rbf[sigma={sigma}]"),
        loss=reg.create("loss", "multiclass_hinge"),
        task="multiclass",
        n_classes=10,
        seed=seed,
    )
