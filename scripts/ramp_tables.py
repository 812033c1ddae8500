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

from kbench.results.store import load_results

BUDGETS = (50, 100, 200, 300, 500, 750, 1000, 1500, 2000)


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


POLICIES = {
    "online_asvm_r": "OnlineASVM^R",
    "active_all[base=online_svm_r": "QueryAll(OnlineSVM^R)",
    "active_greedy[base=online_svm_r": "Greedy(OnlineSVM^R)",
    "active_margin[base=online_svm_r": "Margin(OnlineSVM^R)",
    "active_all[base=idsvm": "QueryAll(IDSVM)",
    "active_greedy[base=idsvm": "Greedy(IDSVM)",
    "active_margin[base=idsvm": "Margin(IDSVM)",
}


def paper_name(stream: str) -> str:
    """The paper's name of a study stream (stand-ins marked)."""
    base = stream.split("[")[0]
    if base == "checkerboard":
        return "NCheckerboard" if "noise=0.15" in stream else "Checkerboard"
    return {
        "a9a": "Adult",
        "banana": "Banana",
        "magic": "Cover (MAGIC)",
        "splice": "DNA (splice)",
        "haykin": "Gauss",
        "usps_like": "USPS (USPS-like)",
        "waveform": "Waveform",
    }.get(base, base)


def policy(spec: str) -> str:
    """The paper's name of an active-learning policy spec."""
    return next((name for key, name in POLICIES.items() if spec.startswith(key)), spec)


def accuracy_at(trace: pd.DataFrame, b: int) -> float:
    """Held-out accuracy (%) after b labels, linear between the checkpoints around b (NaN
    outside the labels the run covered)."""
    t = trace.sort_values("seen")
    labels, acc = t["labels_queried"].to_numpy(float), 100 * (1 - t["test_error"].to_numpy())
    if b < labels[0] or b > labels[-1]:
        return float("nan")
    return float(np.interp(b, labels, acc))


def active_curves(runs: pd.DataFrame, traces: pd.DataFrame) -> pd.DataFrame:
    """Mean accuracy per (stream, policy, budget), and the labels each policy used."""
    ok = runs[runs["status"] == "ok"][["task_id", "stream", "algorithm_spec"]]
    tr = traces.merge(ok, on="task_id")
    rows = []
    for (stream, spec), g in tr.groupby(["stream", "algorithm_spec"]):
        per_task = [t for _, t in g.groupby("task_id")]
        end = float(np.mean([t["labels_queried"].max() for t in per_task]))
        for b in BUDGETS:
            accs = [accuracy_at(t, b) for t in per_task]
            rows.append(
                {
                    "stream": stream,
                    "policy": policy(spec),
                    "budget": b,
                    "accuracy": np.nan if np.isnan(accs).any() else float(np.mean(accs)),
                    "labels_at_end": end,
                }
            )
    return pd.DataFrame(rows)


def active(runs: pd.DataFrame, traces: pd.DataFrame) -> None:
    curves = active_curves(runs, traces)
    for stream, part in curves.groupby("stream"):
        print(f"\n### {stream}\n")
        print("| policy | " + " | ".join(f"b = {b}" for b in BUDGETS) + " | labels at end |")
        print("|---|" + "---|" * (len(BUDGETS) + 1))
        for name, g in sorted(part.groupby("policy"), key=lambda kv: kv[0]):
            cells = [f"{a:.1f}" if np.isfinite(a) else "" for a in g["accuracy"]]
            print(f"| {name} | " + " | ".join(cells) + f" | {g['labels_at_end'].iloc[0]:.0f} |")
    print("\n### Mean accuracy over the common budgets (b ≤ the fewest labels any policy used)\n")
    names = sorted(curves["policy"].unique())
    print("| data | budgets | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for stream, part in curves.groupby("stream"):
        wide = part.pivot(index="budget", columns="policy", values="accuracy").dropna()
        cells = [f"{wide[n].mean():.1f}" if n in wide and len(wide) else "" for n in names]
        span = f"{wide.index.min()}–{wide.index.max()}" if len(wide) else "none"
        print(f"| {paper_name(stream)} | {span} | " + " | ".join(cells) + " |")
    print("\n### Pairs (budgets where both policies have a value: how often A ≥ B, mean A − B)\n")
    pairs = [
        ("OnlineASVM^R", "QueryAll(OnlineSVM^R)"),
        ("Greedy(OnlineSVM^R)", "QueryAll(OnlineSVM^R)"),
        ("OnlineASVM^R", "Greedy(OnlineSVM^R)"),
        ("QueryAll(OnlineSVM^R)", "QueryAll(IDSVM)"),
        ("Greedy(OnlineSVM^R)", "Greedy(IDSVM)"),
        ("OnlineASVM^R", "Margin(IDSVM)"),
    ]
    print("| data | " + " | ".join(f"{a} vs {b}" for a, b in pairs) + " |")
    print("|---|" + "---|" * len(pairs))
    for stream, part in curves.groupby("stream"):
        wide = part.pivot(index="budget", columns="policy", values="accuracy")
        cells = []
        for a, b in pairs:
            if a not in wide or b not in wide:
                cells.append("")
                continue
            both = wide[[a, b]].dropna()
            d = both[a] - both[b]
            cells.append(f"{int((d >= 0).sum())}/{len(d)}, {d.mean():+.1f}" if len(d) else "")
        print(f"| {paper_name(stream)} | " + " | ".join(cells) + " |")


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
