"""The terminal view of a tuned study's tuning runs (``kbench show RESULTS --tuning``)."""

from __future__ import annotations

import math
import sys

import pandas as pd
from rich.markup import escape
from rich.table import Table

from kbench.analysis.tuning import format_search, search_table
from kbench.cli.consoles import output_console


def print_search(tuning: pd.DataFrame, fmt: str = "table") -> None:
    """Print every configuration each tuning group tried: a rich table per group, or
    the text of another format (LaTeX falls back to Markdown)."""
    table = search_table(tuning)
    if fmt != "table":
        sys.stdout.write(format_search(table, fmt))
        sys.stdout.flush()
        return
    console = output_console()
    if table.empty:
        console.print("no tuning runs (a study tunes with tune = {...}: docs/tuning.md)")
        return
    for _, group in table.groupby("group", sort=False):
        first = group.iloc[0]
        t = Table(
            title=f"[bold]{escape(str(first.algorithm))}[/bold] on {escape(str(first.stream))}: "
            f"{len(group)} configurations on {first.streams} tuning streams",
            title_justify="left",
        )
        for col in ("#", "values", "finished", "mean online error", ""):
            t.add_column(col, justify="left" if col in ("values", "") else "right")
        for r in group.itertuples():
            t.add_row(
                str(r.config),
                escape(r.values),
                f"{r.ok}/{r.streams}",
                "–" if math.isnan(r.error) else f"{r.error:.4f}",
                "[green]selected[/green]" if r.selected else "",
            )
        console.print(t)


__all__ = ["print_search"]
