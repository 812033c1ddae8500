"""The report's table of accuracy beside tuning cost (:mod:`kbench.analysis.tuning`)."""

from __future__ import annotations

import math
from typing import Any

from kbench.analysis.tuning import tuning_table


def _num(value: Any, spec: str) -> str:
    return (
        "–"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else format(value, spec)
    )


def tuning_rows(cmp: Any) -> list[dict[str, str]]:
    """One row per data set and tuned configuration, formatted; empty without tuned runs."""
    table = tuning_table(cmp.runs, cmp.metric)
    regression = set(cmp.runs.get("task", [])) == {"regression"}
    rows = []
    for r in table.itertuples():
        error = _num(r.error, ".4g") if regression else _num(100 * r.error, ".2f") + " %"
        if not math.isnan(r.error_sd):
            error += " ± " + (
                _num(r.error_sd, ".2g") if regression else _num(100 * r.error_sd, ".2f")
            )
        rows.append(
            {
                "stream": str(r.stream),
                "label": str(r.configuration),
                "error": error,
                "selected": r.selected or "–",
                "configs": _num(r.tune_configs, ".0f"),
                "runs": _num(r.tune_runs, ".0f"),
                "examples": _num(r.tune_examples, ",.0f"),
                "kernel_evals": _num(r.tune_kernel_evals, ".3g"),
                "seconds": _num(r.tune_seconds, ".2f"),
            }
        )
    return rows


__all__ = ["tuning_rows"]
