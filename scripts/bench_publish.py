"""Time ``kbench publish`` over many synthetic results folders: the first publish, a
publish with nothing changed, and a publish after one more study.

The folders are written through kbench's own results store from one real task (run here
first) with synthetic errors and outcomes, so that publishing reads exactly what
``kbench run`` writes. Usage::

    python scripts/bench_publish.py [--studies 10] [--tasks 1000] [--datasets 5] [--seeds 10]

``--tasks`` is per study; configurations = tasks / (data sets × seeds).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import kbench
from kbench.execution.prequential import TaskResult
from kbench.results.store import ResultsStore

FAMILIES = ("pa[C={c}]", "norma[budget={b},eta=0.5]", "rbp[budget={b}]", "bsgd[budget={b}]")


def template(tmp: Path) -> tuple[dict, object]:
    """One real task's run row and trace, to vary."""
    kbench.run(
        kbench.Experiment(algorithms=["pa"], datasets=["twonorm[n_train=400,n_test=100,d=5]"]),
        out=tmp / "template",
    )
    res = kbench.load(tmp / "template")
    run = res.runs.iloc[0].to_dict()
    for key in ("degenerate", "algorithm_label", "config", "tune_configs"):
        run.pop(key, None)
    return run, res.traces


def write_study(folder: Path, study: int, args: argparse.Namespace, base: dict, trace) -> None:
    """One synthetic study: data sets × configurations × seeds tasks."""
    rng = np.random.default_rng(study)
    store = ResultsStore(folder)
    store.prepare()
    n_configs = max(2, args.tasks // (args.datasets * args.seeds))
    n = int(base["n"])
    for d in range(args.datasets):
        stream = f"twonorm[d={5 + d},n_test=100,n_train={n}]"
        for c in range(n_configs):
            fam = FAMILIES[c % len(FAMILIES)]
            spec = fam.format(c=round(0.1 * (c + study + 1), 2), b=50 + 10 * c + study)
            p_err = 0.05 + 0.3 * rng.random()
            for seed in range(args.seeds):
                outcomes = rng.random(n) > p_err
                task_id = hashlib.sha1(f"{study} {stream} {spec} {seed}".encode()).hexdigest()[:20]
                sid = hashlib.sha1(f"{stream} {seed}".encode()).hexdigest()[:16]
                err = 1.0 - outcomes.mean()
                run = {
                    **base,
                    "task_id": task_id,
                    "algorithm": spec.split("[")[0],
                    "algorithm_spec": spec,
                    "dataset": "twonorm",
                    "stream": stream,
                    "stream_id": sid,
                    "seed": seed,
                    "stream_seed": seed,
                    "online_error": err,
                    "final_epoch_error": err,
                    "test_error": err + 0.01 * rng.standard_normal(),
                    "mistakes": float((~outcomes).sum()),
                    "n_support": float(rng.integers(10, 300)),
                    "us_per_example": float(rng.lognormal(1.0, 0.8)),
                }
                tr = trace.copy()
                tr["task_id"] = task_id
                tr["stream_id"] = sid
                tr["online_error"] = tr["online_error"] * (err / max(base["online_error"], 1e-9))
                store.write(TaskResult(run=run, traces=tr, outcomes=outcomes))


def timed(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=False, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--studies", type=int, default=10)
    ap.add_argument("--tasks", type=int, default=1000, help="tasks per study")
    ap.add_argument("--datasets", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--keep", type=Path, default=None, help="write here and keep the folders")
    args = ap.parse_args()
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="kbench-bench-publish-"))
    try:
        base, trace = template(tmp)
        t0 = time.perf_counter()
        folders = []
        for s in range(args.studies + 1):
            folder = tmp / f"study{s:02d}"
            write_study(folder, s, args, base, trace)
            folders.append(str(folder))
        print(f"wrote {args.studies + 1} studies in {time.perf_counter() - t0:.1f} s")
        kb = str(Path(sys.executable).with_name("kbench"))
        site = str(tmp / "site")
        first = folders[: args.studies]
        total = args.studies * args.tasks
        cold = timed([kb, "publish", *first, "-o", site])
        print(f"first publish, {args.studies} studies, {total} tasks: {cold:.2f} s")
        print(f"again, nothing changed: {timed([kb, 'publish', *first, '-o', site]):.2f} s")
        print(f"again, one more study: {timed([kb, 'publish', *folders, '-o', site]):.2f} s")
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
