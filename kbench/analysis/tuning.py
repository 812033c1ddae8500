"""Accuracy beside tuning cost: one table per results folder with tuned runs.

The runs of a tuned study carry their tuning cost (:mod:`kbench.results.tuning`); this
module puts it beside the error each configuration reached, per data set, for
``kbench compare`` and the report.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kbench.execution.tuning import select
from kbench.results.tuning import COST_COLUMNS, selected_text

#: Columns of :func:`tuning_table`, after ``stream`` and ``configuration``.
TABLE_COLUMNS = ("seeds", "error", "error_sd", "selected", *COST_COLUMNS)


def tuning_table(runs: pd.DataFrame, metric: str = "online_error") -> pd.DataFrame:
    """Per data set and configuration: the mean error over seeds, the configuration
    tuning selected and the tuning cost; empty when no run was tuned.

    Parameters
    ----------
    runs
        The runs of a comparison (with a ``label`` column) or of a results folder.
    metric
        The error column to average (``online_error`` or ``test_error``).
    """
    if not len(runs) or "tune_runs" not in runs or not runs["tune_runs"].notna().any():
        return pd.DataFrame(columns=["stream", "configuration", *TABLE_COLUMNS])
    runs = runs[runs["status"] == "ok"].copy()
    if "label" not in runs:
        runs["label"] = runs["algorithm_spec"].astype(str)
    if "selected" not in runs:
        runs["selected"] = None
    table = runs.groupby(["stream", "label"], sort=True).agg(
        seeds=("seed", "nunique"),
        error=(metric, "mean"),
        error_sd=(metric, "std"),
        selected=(
            "selected",
            lambda s: "; ".join(dict.fromkeys(v for v in s if isinstance(v, str) and v)),
        ),
        **{c: (c, "mean") for c in COST_COLUMNS},
    )
    table = table.reset_index().rename(columns={"label": "configuration"})
    table["error_sd"] = table["error_sd"].astype(float).where(table["seeds"] > 1, np.nan)
    return table.sort_values(["stream", "error"], na_position="last").reset_index(drop=True)


def search_table(tuning: pd.DataFrame) -> pd.DataFrame:
    """The tuning runs, one row per tuning group and configuration in search order: the
    values tried (against the group's first configuration, the defaults), how many tuning
    streams it finished on, its mean online error there, and whether it was selected.
    """
    columns = ["group", "algorithm", "stream", "config", "values", "ok", "streams", "error"]
    if not len(tuning):
        return pd.DataFrame(columns=[*columns, "selected"])
    rows = []
    for gid, group in tuning.groupby("tune_group", sort=False):
        n_streams = len(group[["stream", "seed"]].drop_duplicates())
        chosen = select(group, str(gid), n_streams)
        first = group[group["tune_config"] == group["tune_config"].min()].iloc[0]
        for index, runs in group.groupby("tune_config", sort=True):
            r = runs.iloc[0]
            ok = runs[runs["status"] == "ok"]
            rows.append(
                {
                    "group": str(gid),
                    "algorithm": r["algorithm"],
                    "stream": r["stream"],
                    "config": int(index),
                    "values": selected_text(
                        r["algorithm_spec"], r["kernel"], first["algorithm_spec"], first["kernel"]
                    ),
                    "ok": len(ok),
                    "streams": n_streams,
                    "error": float(ok["online_error"].mean()) if len(ok) else np.nan,
                    "selected": chosen == int(index),
                }
            )
    return pd.DataFrame(rows)


def format_search(table: pd.DataFrame, fmt: str) -> str:
    """:func:`search_table` as CSV, JSON or Markdown text (``kbench show --tuning --format``)."""
    from kbench.analysis.tables import to_csv, to_json, to_markdown

    if fmt == "csv":
        return to_csv(table)
    if fmt == "json":
        return to_json(table)
    return to_markdown(table, "tuning runs")


__all__ = ["TABLE_COLUMNS", "format_search", "search_table", "tuning_table"]
