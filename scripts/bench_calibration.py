"""Calibration of kbench's pair verdict, measured on null studies of real data.

A null study compares two configurations whose true error rates are equal: the same
learner (random Fourier features, ``fogd``, which draws its features from the algorithm
seed) under two seeds of its own randomness, the second registered under another name.
Each replicate is a small study: ``--seeds`` streams of ``--n`` examples drawn from a9a's
training set (and ``--n-test`` held-out examples from a9a's test set), both configurations
run on each stream. kbench's verdict (``kbench.analysis.comparison.compare``: exact signed-rank test
over the seeds, Holm) says "better" in a replicate or not; over ``--replicates`` replicates
the share that says "better" is the false-positive rate, which should be at most α (plus
Monte Carlo error).

The same replicates give, for contrast, the verdict kbench used to print: the exact McNemar
test on the discordant examples of every seed summed into one table.

Power: B's outcomes are degraded by a known amount — each example B got right is made wrong
with probability ``--gap`` — so A is truly better by gap × (1 − B's error); the share of
replicates in which the verdict says "A better" is the power.

Everything runs in this process with one BLAS thread. Usage::

    python scripts/bench_calibration.py [--replicates 200] [--seeds 10] [--n 1000]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import sys
import time
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from kbench.analysis.comparison import compare
from kbench.analysis.statistics import holm, mcnemar_exact, paired_final_test, seed_verdict
from kbench.core.registry import get_registry
from kbench.data.streams import Stream, StreamSpec, build_stream
from kbench.execution.prequential import run_task
from kbench.execution.tasks import Task
from kbench.results.store import Results


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Exact binomial interval for a rate of k in n."""
    lo = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replicates", type=int, default=200)
    ap.add_argument("--seeds", type=int, default=10, help="seeds (streams) per replicate")
    ap.add_argument("--n", type=int, default=1000, help="training examples per stream")
    ap.add_argument("--n-test", type=int, default=1000, help="held-out examples per stream")
    ap.add_argument("--algorithm", default="fogd[D=200,eta=0.5]")
    ap.add_argument("--kernel", default="rbf[gamma=0.05]")
    ap.add_argument("--loss", default="hinge")
    ap.add_argument("--gap", type=float, default=0.03, help="share of B's right answers made wrong")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0, help="seed of the subsets and the degradation")
    args = ap.parse_args(argv)

    started_cpu, started = time.process_time(), time.perf_counter()
    registry = get_registry()
    full = build_stream(StreamSpec(dataset="a9a", seed=0, order="file"), registry)
    name = args.algorithm.split("[")[0]
    copy_spec = f"{name}_copy" + args.algorithm[len(name) :]
    rng = np.random.default_rng(args.seed)
    subsets = (6, 8, args.seeds) if args.seeds > 8 else (args.seeds,)
    counts: dict[str, int] = {}
    gaps: list[float] = []

    def bump(key: str, hit: bool) -> None:
        counts[key] = counts.get(key, 0) + int(hit)

    for rep in range(args.replicates):
        runs: list[dict[str, Any]] = []
        outcomes: dict[str, np.ndarray] = {}
        gap_runs: list[dict[str, Any]] = []
        gap_outcomes: dict[str, np.ndarray] = {}
        for s in range(args.seeds):
            tr = rng.choice(full.n, args.n, replace=False)
            te = rng.choice(len(full.y_test), args.n_test, replace=False)
            spec = StreamSpec(dataset="a9a", seed=rep * 1000 + s, n=args.n)
            stream = Stream(
                spec=spec,
                X=_frozen(full.X[tr]),
                y=_frozen(full.y[tr]),
                X_test=_frozen(full.X_test[te]),
                y_test=_frozen(full.y_test[te]),
                task="binary",
                n_classes=2,
                stream_id=f"cal-{rep}-{s}",
            )
            for arm in (0, 1):
                task = Task(
                    algorithm=args.algorithm,
                    kernel=args.kernel,
                    loss=args.loss,
                    stream=spec,
                    seed=2 * (rep * args.seeds + s) + arm,  # the learner's own randomness
                    checkpoints=2,
                    test_max=0,
                )
                res = run_task(task, stream, registry, trace_memory=False)
                if res.run["status"] != "ok":
                    print(f"run failed: {res.run.get('reason')}", file=sys.stderr)
                    return 1
                row = dict(res.run)
                tid = f"r{rep}-s{s}-{arm}"
                row |= {"task_id": tid, "stream": "a9a", "stream_id": stream.stream_id}
                row |= {"stream_seed": s, "seed": s, "dataset": "a9a", "offline": False}
                if arm == 1:  # the copy, under another name
                    row |= {"algorithm": f"{name}_copy", "algorithm_spec": copy_spec}
                runs.append(row)
                outcomes[tid] = np.asarray(res.outcomes, dtype=bool)
                if arm == 1:  # B degraded by a known amount
                    o = outcomes[tid].copy()
                    o[o & (rng.random(len(o)) < args.gap)] = False
                    g = row | {"task_id": tid + "g", "online_error": float(1 - o.mean())}
                    gaps.append(float(outcomes[tid].mean() - o.mean()))
                    gap_runs.append(g)
                    gap_outcomes[tid + "g"] = o
                else:
                    gap_runs.append(row)
                    gap_outcomes[tid] = outcomes[tid]

        def tables(rows: list[dict[str, Any]], out: dict[str, np.ndarray]) -> Results:
            oc = pd.DataFrame(
                [
                    {
                        "task_id": r["task_id"],
                        "stream_id": r["stream_id"],
                        "outcome": out[r["task_id"]],
                    }
                    for r in rows
                ]
            )
            return Results(runs=pd.DataFrame(rows), traces=pd.DataFrame(), outcomes=oc)

        for label, rows, out in (("null", runs, outcomes), ("gap", gap_runs, gap_outcomes)):
            metrics = ("online_error", "test_error") if label == "null" else ("online_error",)
            for metric in metrics:
                cmp = compare(tables(rows, out), metric=metric, alpha=args.alpha)
                row = cmp.seeds.iloc[0]
                said = row["result"] in ("win", "loss")
                a_better = row["result"] == "win"
                bump(f"{label}/{metric}/seeds{args.seeds}", a_better if label == "gap" else said)
                if metric == "online_error":
                    aw, bw = int(cmp.pairs["a_worse"].sum()), int(cmp.pairs["b_worse"].sum())
                    p = holm([mcnemar_exact(aw, bw)])[0]
                    hit = p < args.alpha and (aw < bw if label == "gap" else aw != bw)
                    bump(f"{label}/pooled McNemar/seeds{args.seeds}", bool(hit))
                    first = cmp.pairs.sort_values("seed")
                    one = first[first["seed"] == first["seed"].min()]
                    p1 = mcnemar_exact(int(one["a_worse"].sum()), int(one["b_worse"].sum()))
                    hit1 = p1 < args.alpha and (
                        one["a_worse"].sum() < one["b_worse"].sum() if label == "gap" else True
                    )
                    bump(f"{label}/McNemar one seed/seeds1", bool(hit1))
                # fewer seeds: the same pairs, the first k seeds only
                fin = cmp.runs.pivot_table(index="seed", columns="label", values=metric)
                cols = list(cmp.seeds.iloc[0][["a", "b"]])
                for k in subsets:
                    if k == args.seeds:
                        continue
                    d = (fin[cols[0]] - fin[cols[1]]).to_numpy()[:k]
                    t = paired_final_test(d, args.alpha)
                    verdict, _ = seed_verdict(t["mean_diff"], t["p"], k, 1, args.alpha)
                    hit = verdict == "win" if label == "gap" else verdict in ("win", "loss")
                    bump(f"{label}/{metric}/seeds{k}", hit)
        if (rep + 1) % 20 == 0:
            print(
                f"  {rep + 1} replicates, {time.process_time() - started_cpu:.0f} CPU-s",
                file=sys.stderr,
                flush=True,
            )

    n = args.replicates
    print(
        f"kbench calibration: {n} replicates x {args.seeds} seeds; a9a subsets of {args.n} "
        f"training and {args.n_test} held-out examples; {args.algorithm} {args.kernel} "
        f"{args.loss} against an exact copy under another name with other seeds; alpha "
        f"{args.alpha:g}"
    )
    print(f"power pair: B loses a further {args.gap:g} of its right answers: true gap "
          f"{100 * np.mean(gaps):.2f} pp on average")  # fmt: skip
    print(f"{'verdict':<40} {'seeds':>5} {'false positives':>22} {'power':>22}")
    order = ["online_error", "test_error", "pooled McNemar", "McNemar one seed"]
    keys = sorted(
        {k.split("/", 1)[1] for k in counts},
        key=lambda k: (order.index(k.rsplit("/", 1)[0]), int(k.rsplit("/", 1)[1][5:])),
    )
    for key in keys:
        method, seeds = key.rsplit("/", 1)
        cells = []
        for label in ("null", "gap"):
            k = counts.get(f"{label}/{key}")
            if k is None:
                cells.append("–")
                continue
            lo, hi = clopper_pearson(k, n)
            cells.append(f"{k / n:.3f} [{lo:.3f}, {hi:.3f}]")
        name_txt = {
            "online_error": "seed-level, online error",
            "test_error": "seed-level, held-out error",
            "pooled McNemar": "old: McNemar pooled over seeds",
            "McNemar one seed": "old: McNemar on one seed",
        }[method]
        print(f"{name_txt:<40} {seeds[5:]:>5} {cells[0]:>22} {cells[1]:>22}")
    print(
        f"(rates with 95% Clopper-Pearson intervals; {time.process_time() - started_cpu:.0f} "
        f"CPU-s, {time.perf_counter() - started:.0f} s wall)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
