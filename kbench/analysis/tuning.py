"""Accuracy beside tuning cost: one table per results folder with tuned runs.

The runs of a tuned study carry their tuning cost (:mod:`kbench.results.tuning`); this
module puts it beside the error each configuration reached, per data set, for
``kbench compare`` and the report.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kbench.results.tuning import COST_COLUMNS

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


__all__ = ["TABLE_COLUMNS", "tuning_table"]
