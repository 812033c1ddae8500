"""Wall time of a 64-task study on each executor, and each executor's per-task overhead.

A real study (the kernel perceptron with two kernels on a9a, 3 000 examples, 32 seeds) and a
near-empty one (one example per task, 64 seeds) are run through the ``kbench`` command with
1 and 2 local workers and on a 2-worker Dask cluster started beforehand (so its start-up is
not counted; it is reported on its own line). Run: ``.venv/bin/python scripts/bench_executors.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

REAL = [
    "-a",
    "perceptron",
    "-k",
    "rbf[gamma=0.05]",
    "-k",
    "linear",
    "-d",
    "a9a[n=3000]",
    "--seeds",
    "0-31",
]
EMPTY = ["-a", "perceptron", "-k", "linear", "-d", "digits[n=1,positive=5-9]", "--seeds", "0-63"]


def run(args: list[str], out: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "kbench.cli.main", "run", *args, "--out", out],
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0 or "64 ok" not in proc.stderr:
        raise SystemExit(f"run failed: {proc.stderr[-2000:]}")
    return elapsed


def main() -> None:
    from dask.distributed import LocalCluster

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["KBENCH_CACHE"] = os.path.join(tmp, "cache")
        # Build every stream once so that each measured run only loads them.
        run([*REAL, "--workers", "2"], os.path.join(tmp, "warm-real"))
        run([*EMPTY, "--workers", "2"], os.path.join(tmp, "warm-empty"))
        t0 = time.perf_counter()
        cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        )
        startup = time.perf_counter() - t0
        try:
            rows = []
            for label, study in (
                ("64 perceptron tasks, a9a n=3000", REAL),
                ("64 near-empty tasks", EMPTY),
            ):
                times = {}
                for name, extra in (
                    ("local, 1 worker", ["--workers", "1"]),
                    ("local, 2 workers", ["--workers", "2"]),
                    (
                        "dask, 2 workers",
                        ["--executor", "dask", "--scheduler", cluster.scheduler_address],
                    ),
                ):
                    times[name] = min(
                        run([*study, *extra], os.path.join(tmp, f"{label}-{name}-{i}"))
                        for i in range(2)
                    )
                rows.append((label, times))
        finally:
            cluster.close()
    print(f"Dask LocalCluster start-up (2 workers): {startup:.2f} s (not included below)\n")
    for label, times in rows:
        base = times["local, 1 worker"]
        print(label)
        for name, t in times.items():
            print(
                f"  {name:<18} {t:7.2f} s   speed-up {base / t:4.2f}×   {1000 * t / 64:7.1f} ms per task"
            )


if __name__ == "__main__":
    main()
