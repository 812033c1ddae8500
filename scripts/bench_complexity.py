"""Time per example of FOGD, NOGD (rank k and full rank) and LASVM on a9a, beside the C++ peers.

Every configuration runs as a kbench task (``kbench.execution.executors.execute``: the prequential
runner, one BLAS thread, time of learner calls only) on a9a, one pass. Parts:

- ``fogd``: FOGD with D = 400 random features, ``rbf[gamma=0.01]``, file order: µs per
  example and its ratio to the C++ library KOL's 7 µs (``../shared/TARGETS.md``).
- ``nogd``: NOGD at B = 100 and 1 600, ``rbf[gamma=0.01]``, with the default rank
  k = ⌈0.2·B⌉ and at full rank (``rank_fraction=1``): µs per example and held-out
  accuracy, file order (KOL at B = 100: 12 µs, 83.9 %).
- ``nogd-seeds``: NOGD's held-out accuracy at B = 100 on the file order and on five
  shuffled orders (seeds 0–4), rank k and full rank.
- ``lasvm``: LASVM one pass (with its finishing step), ``rbf[gamma=0.005]``, C = 1,
  against scikit-learn's ``SVC.fit`` (kbench's ``libsvm`` reference) on the same data:
  the time ratio and both test errors.

The machine may be shared: each timing is the best of ``--repeat`` runs, each row shows
the CPU time of the learner's process during the task beside the wall time, and the load
average is printed before and after, so that figures measured under load say so.

    .venv/bin/python scripts/bench_complexity.py [--part fogd|nogd|nogd-seeds|lasvm|all]
"""

from __future__ import annotations

import argparse
import os
import sys

from _bench_common import fastest_run

from kbench.data.streams import StreamSpec
from kbench.execution.tasks import Task

A9A = StreamSpec("a9a", order="file")
KOL_FOGD_US = 7.0
KOL_NOGD_US = 12.0


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def run(spec: str, loss: str | None, kernel: str, stream: StreamSpec, repeat: int) -> dict:
    """The run row of the fastest of ``repeat`` runs, with the CPU seconds it used."""
    task = Task(algorithm=spec, kernel=kernel, loss=loss, stream=stream, checkpoints=8)
    result, cpu = fastest_run(task, repeat, trace_memory=False)
    row = dict(result.run, cpu_s=cpu)
    last = result.traces.iloc[-1] if len(result.traces) else {}
    for key in ("nystrom_rank", "active_set"):
        if key in last:
            row[key] = last[key]
    return row


def fogd(repeat: int) -> None:
    print(f"\nFOGD, a9a file order, rbf[gamma=0.01], D = 400, one pass, best of {repeat}\n")
    print("| learner | µs/example | ratio to KOL (7 µs) | test acc. | task CPU / wall |")
    print("|---|---|---|---|---|")
    r = run("fogd[D=400]", "hinge", "rbf[gamma=0.01]", A9A, repeat)
    print(f"| fogd[D=400] | {r['us_per_example']:.2f} | {r['us_per_example'] / KOL_FOGD_US:.2f} "
          f"| {100 * (1 - r['test_error']):.2f} % | {r['cpu_s']:.2f} s / "
          f"{r['time_s']:.2f} s (learner) |")  # fmt: skip


def nogd(repeat: int) -> None:
    print(f"\nNOGD, a9a file order, rbf[gamma=0.01], one pass, best of {repeat}\n")
    print("| learner | rank | µs/example | ratio to KOL (12 µs) | test acc. |")
    print("|---|---|---|---|---|")
    for B in (100, 1600):
        for extra in ("", ",rank_fraction=1.0"):
            spec = f"nogd[budget={B}{extra}]"
            r = run(spec, "hinge", "rbf[gamma=0.01]", A9A, repeat)
            rank = int(r["nystrom_rank"]) if "nystrom_rank" in r else "–"
            print(f"| `{spec}` | {rank} | {r['us_per_example']:.1f} "
                  f"| {r['us_per_example'] / KOL_NOGD_US:.2f} "
                  f"| {100 * (1 - r['test_error']):.2f} % |")  # fmt: skip
            sys.stdout.flush()


def nogd_seeds() -> None:
    print("\nNOGD held-out accuracy at B = 100, rbf[gamma=0.01], one pass (KOL: 83.9 %)\n")
    print("| learner | file order | shuffled, seeds 0–4 | mean of the shuffled |")
    print("|---|---|---|---|")
    for extra in ("", ",rank_fraction=1.0"):
        spec = f"nogd[budget=100{extra}]"
        accs = []
        for seed in range(5):
            stream = StreamSpec("a9a", order="shuffle", seed=seed)
            accs.append(100 * (1 - run(spec, "hinge", "rbf[gamma=0.01]", stream, 1)["test_error"]))
        file_acc = 100 * (1 - run(spec, "hinge", "rbf[gamma=0.01]", A9A, 1)["test_error"])
        cells = ", ".join(f"{a:.2f}" for a in accs)
        print(f"| `{spec}` | {file_acc:.2f} % | {cells} | {sum(accs) / len(accs):.2f} % |")
        sys.stdout.flush()


def lasvm(repeat: int) -> None:
    print(f"\nLASVM one pass vs SVC.fit, a9a file order, rbf[gamma=0.005], C = 1, best of "
          f"{repeat}\n")  # fmt: skip
    print("| system | learner time | task CPU | test acc. | SVs | active set |")
    print("|---|---|---|---|---|---|")
    rows = {}
    for label, spec in (("kbench lasvm", "lasvm[C=1.0]"), ("SVC.fit", "libsvm[C=1.0]")):
        r = rows[label] = run(spec, None, "rbf[gamma=0.005]", A9A, repeat)
        active = int(r["active_set"]) if "active_set" in r else "–"
        print(f"| {label} | {r['time_s']:.1f} s | {r['cpu_s']:.1f} s "
              f"| {100 * (1 - r['test_error']):.2f} % | {int(r['n_support'])} | {active} |")  # fmt: skip
        sys.stdout.flush()
    a, s = rows["kbench lasvm"], rows["SVC.fit"]
    print(f"\nratio lasvm / SVC.fit: {a['time_s'] / s['time_s']:.2f} (learner time), "
          f"{a['cpu_s'] / s['cpu_s']:.2f} (task CPU); test error difference "
          f"{100 * (a['test_error'] - s['test_error']):+.2f} points")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part", choices=["fogd", "nogd", "nogd-seeds", "lasvm", "all"], default="all"
    )
    parser.add_argument("--repeat", type=int, default=3, help="timing runs per configuration")
    args = parser.parse_args(argv)
    repeat = max(1, args.repeat)
    print(f"before: {load()}")
    if args.part in ("fogd", "all"):
        fogd(repeat)
    if args.part in ("nogd", "all"):
        nogd(repeat)
    if args.part in ("nogd-seeds", "all"):
        nogd_seeds()
    if args.part in ("lasvm", "all"):
        lasvm(max(1, min(repeat, 2)))
    print(f"\nafter: {load()}")


if __name__ == "__main__":
    main()
