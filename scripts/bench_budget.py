"""Speed and accuracy of kbench's budgeted learners on a9a, beside the C++ library's figures.

Every configuration runs as a kbench task (``kbench.execution.executors.execute``: the prequential
runner with its checkpoints, one BLAS thread, wall time of learner calls only) on a9a in
file order with ``rbf[gamma=0.01]``, one pass, B = 100 — the setting of
``../shared/TARGETS.md``. The table gives the training time of the whole pass, µs per
example, the online (prequential) accuracy and the test accuracy of the final model on
a9a's 16 281 held-out examples, beside the reference figures. Timings are the best of
``--repeat`` runs (the machine is shared); accuracies do not change between runs.

``--wide`` adds the per-example time at B = 100 and 500 on a 784-dimensional stream
(the MNIST sample, digits 5–9 against 0–4). ``--unbudgeted`` adds the kernel perceptron
and exact kernel OGD, which take minutes. ``--leaderboard RESULTS`` prints, instead, the
tables of docs/budgeted.md from the results folder of ``kbench/studies/budgeted.toml``.

    .venv/bin/python scripts/bench_budget.py [--repeat 3] [--wide] [--unbudgeted]
    .venv/bin/python scripts/bench_budget.py --leaderboard budgeted-results
"""

from __future__ import annotations

import argparse
import re
import sys

from _bench_common import fastest_run

from kbench.data.streams import StreamSpec
from kbench.execution.tasks import Task
from kbench.results.degenerate import degenerate_reason, reason_kinds

KERNEL = "rbf[gamma=0.01]"
A9A = StreamSpec("a9a", order="file")

#: (label, algorithm spec, loss, reference: (seconds, µs per example, test accuracy %) or None)
BUDGETED = [
    ("random budget perceptron", "rbp[budget=100]", None, (0.49, 15, 63.6)),
    ("Forgetron", "forgetron[budget=100]", None, (0.66, 20, 74.3)),
    ("Projectron", "projectron[budget=100]", None, (0.45, 14, 69.1)),
    ("Projectron++", "projectronpp[budget=100]", None, (0.62, 19, 83.7)),
    ("budget PA (simple)", "bpa_s[budget=100]", None, (0.40, 12, 81.8)),
    ("BOGD", "bogd[budget=100]", "hinge", (0.39, 12, 71.7)),
    ("FOGD (D = 400)", "fogd[D=400]", "hinge", (0.23, 7, 83.9)),
    ("NOGD", "nogd[budget=100]", "hinge", (0.40, 12, 83.9)),
    ("BSGD, removal", "bsgd[budget=100,maintenance=removal]", None, None),
    ("BSGD, projection", "bsgd[budget=100,maintenance=projection]", None, (1.4, 43, 84.91)),
    ("BSGD, merging", "bsgd[budget=100,maintenance=merge]", None, (2.7, 83, 84.96)),
    ("BOGD, weighted removal", "bogd[budget=100,sampling=weighted]", "hinge", None),
]
UNBUDGETED = [
    ("kernel perceptron (no budget)", "perceptron", None, (13.4, 410, 70.7)),
    ("kernel OGD (no budget) = NOGD, B ≫ n", "nogd[budget=40000]", "hinge", (22.7, 700, 85.0)),
]
#: Which reference the last rows compare with: JSAT's kernel SGD (Java) for BSGD.
NOTES = {
    "BSGD, projection": "JSAT kernel SGD with projection",
    "BSGD, merging": "JSAT kernel SGD with merging",
}
WIDE = StreamSpec("mnist5k", order="shuffle", positive="5-9", test_size=0.2)
WIDE_SPECS = [
    ("random budget perceptron", "rbp[budget={B}]", None),
    ("Forgetron", "forgetron[budget={B}]", None),
    ("Projectron++", "projectronpp[budget={B}]", None),
    ("budget PA (simple)", "bpa_s[budget={B}]", None),
    ("BOGD", "bogd[budget={B}]", "hinge"),
    ("NOGD", "nogd[budget={B}]", "hinge"),
    ("BSGD, merging", "bsgd[budget={B},maintenance=merge]", None),
    ("BSGD, projection", "bsgd[budget={B},maintenance=projection]", None),
]


def run(spec: str, loss: str | None, stream: StreamSpec, kernel: str, repeat: int) -> dict:
    """Best-of-``repeat`` timing of one task; the run row of the fastest run."""
    task = Task(algorithm=spec, kernel=kernel, loss=loss, stream=stream, checkpoints=32)
    return fastest_run(task, repeat)[0].run


def a9a_table(rows: list, repeat: int) -> None:
    print(f"a9a, file order, {KERNEL}, one pass (32 561 examples), best of {repeat}\n")
    print(
        "| algorithm | kbench spec | kbench time | kbench µs/ex | ref. µs/ex "
        "| kbench online acc. | kbench test acc. | ref. test acc. | SVs |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for label, spec, loss, ref in rows:
        r = run(spec, loss, A9A, KERNEL, repeat)
        ref_us = f"{ref[1]}" if ref else "–"
        ref_acc = f"{ref[2]:.1f} %" if ref else "–"
        if label in NOTES:
            ref_us, ref_acc = f"{ref_us} ({NOTES[label]})", f"{ref_acc}"
        # kbench.results.degenerate's one definition: constant predictions or an error at the
        # majority-class rate, online or held-out.
        reason = degenerate_reason(r)
        flag = f" (degenerate: {reason_kinds([reason])})" if reason else ""
        print(
            f"| {label} | `{spec}` | {r['time_s']:.2f} s | {r['us_per_example']:.1f} "
            f"| {ref_us} | {100 * (1 - r['online_error']):.1f} % "
            f"| {100 * (1 - r['test_error']):.1f} %{flag} | {ref_acc} | {int(r['n_support'])} |"
        )
        sys.stdout.flush()


def wide_table(repeat: int) -> None:
    print(
        f"\n784-dimensional stream: {WIDE.label}, rbf[gamma=0.02], µs per example (test accuracy)\n"
    )
    print("| algorithm | B = 100 | B = 500 |")
    print("|---|---|---|")
    for label, spec, loss in WIDE_SPECS:
        cells = []
        for B in (100, 500):
            r = run(spec.format(B=B), loss, WIDE, "rbf[gamma=0.02]", repeat)
            cells.append(f"{r['us_per_example']:.1f} ({100 * (1 - r['test_error']):.1f} %)")
        print(f"| {label} | {' | '.join(cells)} |")
        sys.stdout.flush()
    r = run("fogd[D=400]", "hinge", WIDE, "rbf[gamma=0.02]", repeat)
    acc = 100 * (1 - r["test_error"])
    print(f"| FOGD (D = 400) | {r['us_per_example']:.1f} ({acc:.1f} %) | – |")


STUDY_ORDER = [
    "rbp",
    "forgetron",
    "projectron",
    "projectronpp",
    "bpa_s",
    "bsgd-removal",
    "bsgd-projection",
    "bsgd-merge",
    "bogd",
    "fogd",
    "nogd",
]


def _learner(spec: str) -> str:
    name = spec.split("[")[0]
    if name == "bsgd":
        m = re.search(r"maintenance=(\w+)", spec)
        name = f"bsgd-{m.group(1) if m else 'merge'}"
    return name


def _budget(spec: str) -> int:
    m = re.search(r"(?:budget|D)=(\d+)", spec)
    return int(m.group(1)) if m else 100


def leaderboard(folder: str) -> None:
    """Per stream: online error (mean ± sd over seeds) / held-out error / SVs / µs per example."""
    from kbench.results.store import load_results

    runs = load_results(folder).runs
    runs = runs[runs["status"] == "ok"].copy()
    runs["learner"] = runs["algorithm_spec"].map(_learner)
    runs["B"] = runs["algorithm_spec"].map(_budget)
    budgets = sorted(runs["B"].unique())
    for stream, g in runs.groupby("stream", sort=False):
        print(f"\n### {stream} ({g['seed'].nunique()} seeds)\n")
        print("| learner | " + " | ".join(f"B = {b}" for b in budgets) + " |")
        print("|---" * (len(budgets) + 1) + "|")
        agg = (
            g.groupby(["learner", "B"])
            .agg(
                oe=("online_error", "mean"),
                sd=("online_error", "std"),
                te=("test_error", "mean"),
                sv=("n_support", "mean"),
                us=("us_per_example", "mean"),
                const=("degenerate", lambda s: int((s.fillna("") != "").sum())),
            )
            .reset_index()
        )
        for name in STUDY_ORDER:
            rows = agg[agg["learner"] == name].set_index("B")
            if rows.empty:
                continue
            cells = []
            for b in budgets:
                if b not in rows.index:
                    cells.append("–")
                    continue
                r = rows.loc[b]
                cell = (
                    f"{100 * r.oe:.1f} ± {100 * r.sd:.1f} / {100 * r.te:.1f} / "
                    f"{r.sv:.0f} / {r.us:.1f}"
                )
                cells.append(cell + (f" ({int(r.const)} degenerate)" if r.const else ""))
            print(f"| {name} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timing runs per configuration")
    parser.add_argument("--wide", action="store_true", help="add the 784-dimensional timings")
    parser.add_argument("--unbudgeted", action="store_true", help="add the slow unbudgeted rows")
    parser.add_argument("--only", default="", help="comma-separated algorithm names to run")
    parser.add_argument("--leaderboard", metavar="RESULTS", help="print the study's tables")
    args = parser.parse_args(argv)
    if args.leaderboard:
        leaderboard(args.leaderboard)
        return
    rows = BUDGETED + (UNBUDGETED if args.unbudgeted else [])
    if args.only:
        keep = set(args.only.split(","))
        rows = [r for r in rows if r[1].split("[")[0] in keep]
    a9a_table(rows, max(1, args.repeat))
    if args.wide:
        wide_table(max(1, args.repeat))


if __name__ == "__main__":
    main()
