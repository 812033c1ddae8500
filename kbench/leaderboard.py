"""Per-stream leaderboards of a results table, printed by ``kbench run`` and ``kbench show``."""

from __future__ import annotations

import numpy as np
import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kbench.registry import Registry


def leaderboard(runs: pd.DataFrame, registry: Registry) -> dict[str, pd.DataFrame]:
    """One table per stream label: each configuration's means over seeds, best first."""
    if runs.empty:
        return {}
    runs = runs.copy()
    runs["config_label"] = [
        " ".join(
            p
            for p in (
                registry.short("algorithm", a),
                registry.short("kernel", k) if isinstance(k, str) else "",
                registry.short("loss", lo) if isinstance(lo, str) else "",
            )
            if p
        )
        for a, k, lo in zip(runs["algorithm_spec"], runs["kernel"], runs["loss"], strict=True)
    ]
    for col in (
        "online_error",
        "test_error",
        "n_support",
        "kernel_evals",
        "time_s",
        "us_per_example",
    ):
        if col not in runs:
            runs[col] = np.nan
    boards = {}
    for stream, group in runs.groupby("stream", sort=True):
        ok = group[group["status"] == "ok"]
        agg = ok.groupby("config_label").agg(
            seeds=("seed", "nunique"),
            online_error=("online_error", "mean"),
            online_error_sd=("online_error", "std"),
            test_error=("test_error", "mean"),
            n_support=("n_support", "mean"),
            kernel_evals=("kernel_evals", "mean"),
            time_s=("time_s", "mean"),
            us_per_example=("us_per_example", "mean"),
        )
        failed = (
            group[group["status"] != "ok"]
            .groupby("config_label")["status"]
            .agg(lambda s: ", ".join(f"{k}×{v}" for k, v in s.value_counts().items()))
        )
        agg = agg.join(failed.rename("failed"), how="outer")
        # A learner whose late predictions are all one label has learned nothing useful,
        # however its error compares; say so rather than let it rank quietly.
        if "constant_predictions" in ok:
            const = ok.groupby("config_label")["constant_predictions"].sum()
            agg["constant"] = const.reindex(agg.index).fillna(0).astype(int)
        else:
            agg["constant"] = 0
        key = "test_error" if agg["test_error"].notna().any() else "online_error"
        boards[str(stream)] = agg.sort_values([key, "online_error"], na_position="last")
    return boards


def _fmt(value: float, spec: str) -> str:
    return (
        "–"
        if value is None or (isinstance(value, float) and np.isnan(value))
        else format(value, spec)
    )


def _notes(r: object) -> str:
    notes = []
    if getattr(r, "constant", 0):
        notes.append(f"[yellow]constant predictions ({int(r.constant)} seeds)[/yellow]")
    if isinstance(getattr(r, "failed", None), str):
        notes.append(f"[red]{escape(r.failed)}[/red]")
    return "; ".join(notes)


def print_leaderboard(
    runs: pd.DataFrame, registry: Registry, console: Console | None = None
) -> None:
    """Print the leaderboards as rich tables."""
    console = console or Console()
    for stream, board in leaderboard(runs, registry).items():
        table = Table(title=f"[bold]{escape(stream)}[/bold]", title_justify="left")
        for col, justify in (
            ("algorithm", "left"),
            ("seeds", "right"),
            ("online error", "right"),
            ("held-out error", "right"),
            ("SVs", "right"),
            ("kernel evals", "right"),
            ("time (s)", "right"),
            ("µs/example", "right"),
            ("notes", "left"),
        ):
            table.add_column(col, justify=justify)
        for label, r in board.iterrows():
            sd = "" if np.isnan(r.online_error_sd) else f" ± {r.online_error_sd:.4f}"
            table.add_row(
                escape(str(label)),
                _fmt(r.seeds, ".0f"),
                _fmt(r.online_error, ".4f") + sd,
                _fmt(r.test_error, ".4f"),
                _fmt(r.n_support, ".0f"),
                _fmt(r.kernel_evals, ".3g"),
                _fmt(r.time_s, ".3f"),
                _fmt(r.us_per_example, ".2f"),
                _notes(r),
            )
        console.print(table)
