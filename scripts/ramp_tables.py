"""Tables of the ramp-paper studies from a kbench results folder (docs/ramp.md).

``python scripts/ramp_tables.py RESULTS`` prints, per data set, Table 1 of Wang and Vucetic
(2009) as kbench measured it: held-out accuracy and support vectors (mean ± std over seeds),
learner seconds (wall time of learner calls) and kernel evaluations, for every algorithm.
``--active`` prints instead the active-learning comparison (the paper's Fig. 6): held-out
accuracy of each policy when it has used b labels, at common budgets b, read from the
checkpoint traces (the first checkpoint with at least b labels; a policy that never used b
labels is left blank).
"""

from __future__ import annotations

import argparse
import re

import numpy as np
import pandas as pd

from kbench.results import load_results

BUDGETS = (50, 100, 200, 500, 1000, 2000)


def short(spec: str) -> str:
    """The algorithm spec without its tuned C (kept readable in tables); a removal budget m stays."""
    if "active" in spec:
        return spec
    m = re.search(r"[\[,]m=(\d+)", spec)
    return spec.split("[")[0] + (f" m={m.group(1)}" if m else "")


def table1(runs: pd.DataFrame) -> None:
    runs = runs[runs["status"] == "ok"].copy()
    runs["accuracy"] = 100 * (1 - runs["test_error"])
    for stream, part in runs.groupby("stream"):
        print(f"\n### {stream}\n")
        print("| algorithm | accuracy % | #SV | labels | learner s | kernel evals | seeds |")
        print("|---|---|---|---|---|---|---|")
        for alg, g in sorted(part.groupby("algorithm_spec"), key=lambda kv: kv[0]):
            print(
                f"| {short(alg)} | {g['accuracy'].mean():.1f} ± {g['accuracy'].std(ddof=0):.1f} "
                f"| {g['n_support'].mean():.0f} ± {g['n_support'].std(ddof=0):.0f} "
                f"| {g['labels_queried'].mean():.0f} | {g['time_s'].mean():.1f} "
                f"| {g['kernel_evals'].mean():.3g} | {len(g)} |"
            )


def active(runs: pd.DataFrame, traces: pd.DataFrame) -> None:
    ok = runs[runs["status"] == "ok"][["task_id", "stream", "algorithm_spec"]]
    tr = traces.merge(ok, on="task_id")
    for stream, part in tr.groupby("stream"):
        print(f"\n### {stream}\n")
        print("| policy | " + " | ".join(f"b = {b}" for b in BUDGETS) + " | labels at end |")
        print("|---|" + "---|" * (len(BUDGETS) + 1))
        for alg, g in sorted(part.groupby("algorithm_spec"), key=lambda kv: kv[0]):
            cells = []
            for b in BUDGETS:
                accs = []
                for _, t in g.groupby("task_id"):
                    t = t.sort_values("seen")
                    hit = t[t["labels_queried"] >= b]
                    if len(hit):
                        accs.append(100 * (1 - hit["test_error"].iloc[0]))
                cells.append(f"{np.mean(accs):.1f}" if len(accs) == g["task_id"].nunique() else "")
            end = g.sort_values("seen").groupby("task_id")["labels_queried"].last().mean()
            print(f"| {alg} | " + " | ".join(cells) + f" | {end:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("--active", action="store_true")
    args = parser.parse_args()
    res = load_results(args.results)
    if args.active:
        active(res.runs, res.traces)
    else:
        table1(res.runs)


if __name__ == "__main__":
    main()
