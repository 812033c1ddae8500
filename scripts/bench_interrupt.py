"""How fast ``kbench run`` stops on Ctrl-C, in each phase of a study.

Starts ``kbench run`` on a small study, sends SIGINT at a moment of the chosen phase and
measures the time from the signal to the process's exit, against the same measure for a bare
Python that has imported NumPy and pandas (what interpreter shutdown alone costs on this
machine, under its current load). Also checks that every process below kbench is gone.

    python scripts/bench_interrupt.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench_common import descendants, running

STUDY = [
    "-a", "perceptron", "-k", "rbf[gamma=0.05]", "-k", "linear",
    "-d", "digits[positive=5-9,n=1500]", "--seeds", "0-3", "--workers", "2", "--report",
]  # fmt: skip


def baseline() -> float:
    """Seconds from SIGINT to exit for a Python that imported NumPy and pandas."""
    code = (
        "import numpy, pandas, sys, time\nprint('ready', flush=True)\n"
        "try:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    sys.exit(130)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()
    time.sleep(0.3)
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.wait()
    return time.monotonic() - start


def interrupt(phase: str, root: Path) -> tuple[float, int, int]:
    """(seconds from SIGINT to exit, exit status, processes left running) for one phase."""
    out, cache = root / "out", root / "cache"
    shutil.rmtree(out, ignore_errors=True)
    if phase != "planning":  # a warm cache, so that the study reaches its tasks at once
        subprocess.run(
            [sys.executable, "-m", "kbench.cli.main", "run", *STUDY, "--out", str(root / "warm")],
            env=dict(os.environ, KBENCH_CACHE=str(cache)),
            capture_output=True,
            check=True,
        )
    else:
        shutil.rmtree(cache, ignore_errors=True)
    extra = ["--executor", "dask"] if phase == "dask" else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "kbench.cli.main", "run", *STUDY, *extra, "--out", str(out)],
        env=dict(os.environ, KBENCH_CACHE=str(cache)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while not out.exists():
        time.sleep(0.005)
    if phase in ("running", "dask"):  # until the first result is written
        while not list((out / "tasks").glob("*.parquet")) and proc.poll() is None:
            time.sleep(0.005)
    below = descendants(proc.pid)
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    code = proc.wait()
    took = time.monotonic() - start
    time.sleep(0.5)
    return took, code, sum(running(p) for p in below)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = statistics.median(baseline() for _ in range(args.repeat))
        print(f"bare python (numpy, pandas): {base:.3f} s from SIGINT to exit")
        for phase in ("planning", "running", "dask"):
            runs = [interrupt(phase, Path(tmp)) for _ in range(args.repeat)]
            took = statistics.median(r[0] for r in runs)
            codes = sorted({r[1] for r in runs})
            left = sum(r[2] for r in runs)
            print(
                f"kbench run, {phase:8s}: {took:.3f} s from SIGINT to exit "
                f"({took / base:.2f}x bare python); exit {codes}; processes left: {left}"
            )


if __name__ == "__main__":
    main()
