"""The tuning cost of tuned runs, read from the tuning runs stored beside them.

A tuned study (:mod:`kbench.execution.tuning`) keeps its tuning runs in the results
folder, marked ``phase = "tuning"``. Each evaluation run of a tuned configuration is
charged its group's whole tuning: the configurations tried, the tuning runs, the
examples they processed, their kernel evaluations and their learner time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Columns an evaluation run of a tuned study gets, with their meaning (for tables' legends).
COST_COLUMNS = {
    "tune_configs": "configurations tried (1: nothing to tune)",
    "tune_runs": "tuning runs (configurations × tuning streams)",
    "tune_examples": "examples the tuning runs processed",
    "tune_kernel_evals": "kernel evaluations of the tuning runs",
    "tune_seconds": "learner time of the tuning runs (s)",
}


def tuning_costs(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per tuning group (index ``tune_group``): the :data:`COST_COLUMNS`."""
    if not len(runs) or "phase" not in runs or "tune_group" not in runs:
        return pd.DataFrame(columns=list(COST_COLUMNS), index=pd.Index([], name="tune_group"))
    tuning = runs[runs["phase"] == "tuning"].copy()
    epochs = tuning.get("epochs", 1)
    seen = tuning["seen"] if "seen" in tuning else pd.Series(np.nan, index=tuning.index)
    tuning["_examples"] = pd.to_numeric(seen, errors="coerce") * epochs
    for col in ("kernel_evals", "time_s"):
        if col not in tuning:
            tuning[col] = np.nan
    grouped = tuning.groupby("tune_group")
    return pd.DataFrame(
        {
            "tune_configs": grouped["tune_config"].nunique(),
            "tune_runs": grouped.size(),
            "tune_examples": grouped["_examples"].sum(min_count=1),
            "tune_kernel_evals": grouped["kernel_evals"].sum(min_count=1),
            "tune_seconds": grouped["time_s"].sum(min_count=1),
        }
    )


def with_tuning_cost(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with the :data:`COST_COLUMNS` filled on evaluation runs of tuned groups
    (NaN on the others); unchanged when no run was tuned."""
    if not len(runs) or "tune_group" not in runs:
        return runs
    costs = tuning_costs(runs)
    evaluation = runs["phase"] == "evaluation"
    out = runs.drop(columns=[c for c in COST_COLUMNS if c in runs])
    for col in COST_COLUMNS:
        values = out["tune_group"].map(costs[col]) if len(costs) else np.nan
        out[col] = pd.Series(values, index=out.index).where(evaluation)
    return out


def evaluation_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs that measure accuracy: every run but the tuning runs."""
    if "phase" not in runs:
        return runs
    return runs[runs["phase"] != "tuning"]


__all__ = ["COST_COLUMNS", "evaluation_runs", "tuning_costs", "with_tuning_cost"]
