"""The tuning cost of tuned runs, read from the tuning runs stored beside them.

A tuned study (:mod:`kbench.execution.tuning`) keeps its tuning runs in the results
folder, marked ``phase = "tuning"``. Each evaluation run of a tuned configuration is
charged its group's whole tuning: the configurations tried, the tuning runs, the
examples they processed, their kernel evaluations and their learner time.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from kbench.core.errors import ResultsError
from kbench.core.specs import parse_spec

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
    (NaN on the others); unchanged when no run was tuned.

    An evaluation run of a tuned group is a run of the learner the study named, tuned:
    its ``algorithm_spec`` and ``kernel`` become those the study gave (so that one tuned
    learner is one configuration across data sets), and the configuration tuning chose
    moves to ``selected_algorithm`` and ``selected_kernel``.
    """
    if not len(runs) or "tune_group" not in runs:
        return runs
    costs = tuning_costs(runs)
    evaluation = runs["phase"] == "evaluation"
    out = runs.drop(columns=[c for c in COST_COLUMNS if c in runs])
    for col in COST_COLUMNS:
        values = out["tune_group"].map(costs[col]) if len(costs) else np.nan
        out[col] = pd.Series(values, index=out.index).where(evaluation)
    if "base_algorithm" in out:
        swap = evaluation & out["base_algorithm"].notna()
        out["selected_algorithm"] = out["algorithm_spec"].where(swap)
        out["selected_kernel"] = out["kernel"].where(swap)
        out.loc[swap, "algorithm_spec"] = out.loc[swap, "base_algorithm"]
        out.loc[swap, "kernel"] = out.loc[swap, "base_kernel"]
        out["selected"] = [
            selected_text(a, k, ba, bk) if s else None
            for s, a, k, ba, bk in zip(
                swap,
                out["selected_algorithm"],
                out["selected_kernel"],
                out["algorithm_spec"],
                out["kernel"],
                strict=True,
            )
        ]
    return out


def selected_text(algorithm: str, kernel: Any, base_algorithm: str, base_kernel: Any) -> str:
    """The values tuning chose, as ``p=v`` pairs (``defaults`` when it kept them all)."""
    changed = []
    for spec, base in ((algorithm, base_algorithm), (kernel, base_kernel)):
        if not isinstance(spec, str) or not spec:
            continue
        _, chosen = parse_spec(spec)
        _, given = parse_spec(base) if isinstance(base, str) and base else ("", {})
        changed += [f"{k}={v}" for k, v in chosen.items() if given.get(k) != v]
    return ", ".join(changed) or "defaults"


def tune_budget(tune: object) -> int | None:
    """The budget of a run's tuning spec (``random:8:prefix:0.2`` → 8), None if untuned."""
    if not isinstance(tune, str) or tune.count(":") < 2:
        return None
    try:
        return int(tune.split(":")[1])
    except ValueError:
        return None


def at_tuning_budget(results: Any, budget: int) -> Any:
    """The results restricted to the runs tuned with ``budget`` configurations, so that
    a comparison ranks learners that were each given the same tuning budget.

    Raises
    ------
    ResultsError
        When no run was tuned with that budget (the message lists the budgets there are).
    """
    runs = results.runs
    budgets = runs["tune"].map(tune_budget) if "tune" in runs else pd.Series(dtype=object)
    keep = budgets == budget
    if not keep.any():
        there = sorted({int(b) for b in budgets.dropna()})
        raise ResultsError(
            f"no run was tuned with a budget of {budget} configurations; "
            + (
                f"budgets there: {', '.join(map(str, there))}"
                if there
                else "the folder holds no tuned run (a study tunes with tune = {...})"
            )
        )
    ids = set(runs.loc[keep, "task_id"])
    traces = results.traces
    if len(traces) and "task_id" in traces.columns:
        traces = traces[traces["task_id"].isin(ids)]
    # A copy of the same Results type (kbench.results.store imports this module, so it is
    # not imported here), its tuning table kept.
    return dataclasses.replace(
        results,
        runs=runs[keep].reset_index(drop=True),
        traces=traces,
        outcomes=results.outcomes[results.outcomes["task_id"].isin(ids)],
    )


def evaluation_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs that measure accuracy: every run but the tuning runs."""
    if "phase" not in runs:
        return runs
    return runs[runs["phase"] != "tuning"]


__all__ = [
    "COST_COLUMNS",
    "at_tuning_budget",
    "evaluation_runs",
    "tune_budget",
    "tuning_costs",
    "with_tuning_cost",
]
