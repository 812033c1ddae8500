"""Tables of the PiSTOL and POLK studies (kbench/studies/pistol.toml, polk.toml), as in docs/pistol_polk.md.

For each experiment's data set and each learner: the final held-out error (mean ± standard
deviation over seeds), the model size, the online error and the time per example; for
multidist also the excess over each realisation's Bayes error; for PiSTOL-type curves the
held-out error at a few checkpoints (the paper plots error against examples seen).

Run: ``.venv/bin/python scripts/pistol_polk_tables.py RESULTS_FOLDER [RESULTS_FOLDER ...]``.
Prints Markdown; nothing is written.
"""

from __future__ import annotations

import argparse
import re
from functools import cache

import numpy as np
import pandas as pd

from kbench.core.registry import get_registry
from kbench.core.seeds import derive_seed
from kbench.results.store import load_results


@cache
def bayes_error(dataset: str, seed: int) -> float:
    """The Bayes error of a multidist realisation (the stream seed's data stream draws the
    mixture)."""
    base = re.sub(r"\[.*\]$", "", dataset)
    params = re.search(r"\[(.*)\]$", dataset)
    spec = base
    if params:
        keep = [
            p
            for p in params.group(1).split(",")
            if p.split("=")[0] not in ("n", "order", "test_size", "positive", "scale")
        ]
        spec = f"{base}[{','.join(keep)}]" if keep else base
    return get_registry().create("dataset", spec).bayes_error(derive_seed(seed, "data"))


def short_spec(spec: str) -> str:
    """The algorithm spec without the parameters left at their defaults."""
    m = re.match(r"^(\w+)(?:\[(.*)\])?$", spec)
    if not m or not m.group(2):
        return spec
    name = m.group(1)
    params = get_registry().entry("algorithm", name).cls.parameters()
    kept = []
    for item in m.group(2).split(","):
        key, _, value = item.partition("=")
        default = params[key].default if key in params else object()
        if str(default) != value and repr(default) != value:
            kept.append(item)
    return f"{name}[{','.join(kept)}]" if kept else name


def label(row: pd.Series) -> str:
    loss = f" / {row['loss']}" if isinstance(row["loss"], str) and row["loss"] else ""
    return f"`{short_spec(row['algorithm_spec'])}`{loss}"


def final_table(runs: pd.DataFrame) -> None:
    for dataset, part in runs.groupby("stream"):
        print(f"\n#### {dataset}\n")
        excess = str(dataset).startswith("multidist")
        head = "| learner | seeds | held-out error | "
        head += "excess over Bayes | " if excess else ""
        head += "online error | model order | µs/example |"
        print(head)
        print("|" + "---|" * (head.count("|") - 1))
        rows = []
        for name, g in part.groupby(part.apply(label, axis=1)):
            err = g["test_error"].to_numpy(float)
            line = f"| {name} | {len(g)} | {err.mean():.4f} ± {err.std():.4f} | "
            if excess:
                ex = np.array(
                    [
                        e - bayes_error(str(d), int(s))
                        for e, d, s in zip(err, g["stream"], g["stream_seed"], strict=True)
                    ]
                )
                line += f"{ex.mean():+.4f} ± {ex.std():.4f} | "
            line += (
                f"{g['online_error'].mean():.4f} | {g['n_support'].mean():.0f} "
                f"({g['n_support'].min():.0f}–{g['n_support'].max():.0f}) | "
                f"{g['us_per_example'].mean():.1f} |"
            )
            rows.append((err.mean(), line))
        for _, line in sorted(rows):
            print(line)


def curve_table(
    runs: pd.DataFrame, traces: pd.DataFrame, points=(30, 100, 300, 1000, 3000)
) -> None:
    """Held-out error against examples seen (mean over seeds), at the checkpoint nearest
    each point, for the online learners."""
    online = runs[~runs["offline"].astype(bool)]
    for dataset, part in online.groupby("stream"):
        print(f"\n#### {dataset}: held-out error against examples seen\n")
        print("| learner | " + " | ".join(f"n ≈ {p}" for p in points) + " | final |")
        print("|---|" + "---|" * (len(points) + 1))
        for name, g in part.groupby(part.apply(label, axis=1)):
            cells = []
            for p in points:
                vals = []
                for tid in g["task_id"]:
                    tr = traces[(traces["task_id"] == tid) & traces["test_error"].notna()]
                    if len(tr):
                        i = int(np.argmin(np.abs(np.log(tr["seen"].to_numpy(float)) - np.log(p))))
                        vals.append(float(tr["test_error"].iloc[i]))
                cells.append(f"{np.mean(vals):.3f}" if vals else "–")
            print(f"| {name} | " + " | ".join(cells) + f" | {g['test_error'].mean():.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--curves", action="store_true", help="also the error-against-n tables")
    args = parser.parse_args()
    for folder in args.folders:
        res = load_results(folder)
        runs = res.runs[res.runs["status"] == "ok"]
        failed = res.runs[res.runs["status"] != "ok"]
        print(f"\n### {folder}: {len(runs)} runs ok, {len(failed)} not")
        for r in failed.itertuples():
            print(f"- {r.algorithm_spec} on {r.stream}: {r.status} ({r.reason})")
        final_table(runs)
        if args.curves:
            curve_table(runs, res.traces)


if __name__ == "__main__":
    main()
