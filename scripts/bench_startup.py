"""How fast the ``kbench`` command starts: wall and CPU time of whole commands.

Each command runs ``--repeat`` times as a fresh process; the script prints the best and the
median wall time, the best CPU time (user + system, the process and the children it waited
for) and the ratio of each to ``python -c pass`` measured in the same run, against the goals:

=============================================================  ========
``kbench --help``                                              ≤ 0.25 s
``kbench list``                                                ≤ 0.4 s
``kbench run -a rbp -d "a9a[n=2000]" --seeds 1`` (cached        ≤ 0.6 s
stream, results already there, ``--force``)
=============================================================  ========

On a busy machine the wall times grow with the load while the CPU times hardly do: the CPU
time is then the better estimate of the wall time on an idle machine (the commands are
single-threaded, apart from one forked task at a time). The stream cache is a temporary
folder, warmed by one unmeasured run; each command also runs once unmeasured, with Python
allowed to write its bytecode cache (``PYTHONDONTWRITEBYTECODE`` is removed from the
commands' environment), so that, as on a user's machine, no run compiles kbench's sources.

Run: ``.venv/bin/python scripts/bench_startup.py [--repeat 7] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KBENCH = str(Path(sys.executable).with_name("kbench"))
RUN = ["run", "-a", "rbp", "-d", "a9a[n=2000]", "--seeds", "1"]


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv`` (CPU: user + system, with children)."""
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errors, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            errors.seek(0)
            text = errors.read().decode(errors="replace")[-2000:]
            raise SystemExit(f"{' '.join(argv)} exited with {proc.returncode}:\n{text}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each command")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "KBENCH_CACHE": os.path.join(tmp, "cache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        out = os.path.join(tmp, "results")
        run = [KBENCH, *RUN, "--out", out]
        measure(run, env)  # builds the stream into the cache and the results folder
        commands = [
            ("python -c pass", [sys.executable, "-c", "pass"], None),
            ("python -c 'import kbench'", [sys.executable, "-c", "import kbench"], None),
            ("kbench --help", [KBENCH, "--help"], 0.25),
            ("kbench list", [KBENCH, "list"], 0.4),
            ("kbench plugins", [KBENCH, "plugins"], None),
            ('kbench run -a rbp -d "a9a[n=2000]" --seeds 1 --force', [*run, "--force"], 0.6),
        ]
        rows = []
        for label, argv, goal in commands:
            walls, cpus = [], []
            measure(argv, env)  # unmeasured: bytecode cache, disk cache
            for _ in range(args.repeat):
                wall, cpu = measure(argv, env)
                walls.append(wall)
                cpus.append(cpu)
            rows.append(
                {
                    "command": label,
                    "wall_best": min(walls),
                    "wall_median": statistics.median(walls),
                    "cpu_best": min(cpus),
                    "goal": goal,
                }
            )
    base = rows[0]
    load = os.getloadavg()
    print(
        f"{args.repeat} runs each; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
        f"on {os.cpu_count()} cores"
    )
    print(
        f"{'command':<56} {'wall best':>9} {'median':>7} {'CPU':>6} "
        f"{'×pass':>6} {'CPU×pass':>8}  goal"
    )
    for r in rows:
        r["wall_ratio"] = r["wall_best"] / base["wall_best"]
        r["cpu_ratio"] = r["cpu_best"] / max(base["cpu_best"], 1e-9)
        goal = ""
        if r["goal"] is not None:
            met = "met" if r["wall_best"] <= r["goal"] else "not met"
            cpu_met = "met" if r["cpu_best"] <= r["goal"] else "not met"
            goal = f"≤ {r['goal']:g} s: wall {met}, CPU {cpu_met}"
        print(
            f"{r['command']:<56} {r['wall_best']:>8.3f}s {r['wall_median']:>6.3f}s "
            f"{r['cpu_best']:>5.3f}s {r['wall_ratio']:>6.1f} {r['cpu_ratio']:>8.1f}  {goal}"
        )
    if args.json:
        args.json.write_text(json.dumps({"load": load, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
