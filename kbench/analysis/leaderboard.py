"""Per-stream leaderboards of a results table (``kbench run`` and ``kbench show`` print them
through :mod:`kbench.cli.render`), and their text in the other ``--format`` values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from kbench.analysis.configs import config_key, config_table
from kbench.analysis.tables import count, fmt_value, latex_results, to_csv, to_json, to_markdown
from kbench.core.registry import Registry
from kbench.results.degenerate import LEGEND, MARK, marked_cells, reason_kinds
from kbench.results.tuning import COST_COLUMNS, evaluation_runs

#: What both leaderboards (this one and ``kbench compare``'s) give each configuration: its
#: seeds, and its means over them (the errors' standard deviations too), as ``agg`` specs.
RUN_MEANS: dict[str, tuple[str, str]] = {
    "seeds": ("seed", "nunique"),
    "online_error": ("online_error", "mean"),
    "online_error_sd": ("online_error", "std"),
    "test_error": ("test_error", "mean"),
    "test_error_sd": ("test_error", "std"),
    "n_support": ("n_support", "mean"),
    "kernel_evals": ("kernel_evals", "mean"),
    "time_s": ("time_s", "mean"),
    "us_per_example": ("us_per_example", "mean"),
}


def failed_counts(runs: pd.DataFrame, by: str | list[str]) -> pd.Series:
    """Per group, how the runs that did not finish ended: ``timeout×2, error×1``."""
    return (
        runs[runs["status"] != "ok"]
        .groupby(by, sort=False)["status"]
        .agg(lambda s: ", ".join(f"{k}×{v}" for k, v in s.value_counts().items()))
        .rename("failed")
    )


def leaderboard(runs: pd.DataFrame, registry: Registry) -> dict[str, pd.DataFrame]:
    """One table per stream label: each configuration's means over seeds, best first."""
    runs = evaluation_runs(runs)  # tuning runs measure configurations, not learners
    if runs.empty:
        return {}
    runs = runs.copy()
    # The labels of every other view (kbench.analysis.configs): one name per configuration,
    # the user's spec@LABEL where given, tuned learners with their budget.
    runs["config"] = [config_key(r) for _, r in runs.iterrows()]
    runs["config_label"] = runs["config"].map(config_table(runs, registry.short)["label"])
    for col in (
        "online_error",
        "test_error",
        "n_support",
        "kernel_evals",
        "time_s",
        "us_per_example",
        "peak_memory",
    ):
        if col not in runs:
            runs[col] = np.nan
    boards = {}
    for stream, group in runs.groupby("stream", sort=True):
        ok = group[group["status"] == "ok"]
        agg = ok.groupby("config_label").agg(
            **RUN_MEANS,
            # The largest over seeds: a peak is what a machine must have room for.
            peak_memory=("peak_memory", "max"),
            # A tuned configuration is charged its tuning (the same for each seed).
            **{c: (c, "mean") for c in COST_COLUMNS if c in ok},
            **(
                {"selected": ("selected", lambda s: "; ".join(dict.fromkeys(filter(is_set, s))))}
                if "selected" in ok
                else {}
            ),
        )
        agg = agg.join(failed_counts(group, "config_label"), how="outer")
        # A degenerate learner (kbench.results.degenerate) says nothing about its algorithm,
        # however its error compares; mark it rather than let it rank quietly.
        reasons = (
            group["degenerate"].fillna("").astype(str)
            if "degenerate" in group
            else pd.Series("", index=group.index)
        )
        bad = group[reasons != ""]
        agg["degenerate"] = (
            bad.groupby("config_label")["seed"].size().reindex(agg.index).fillna(0).astype(int)
        )
        agg["runs"] = group.groupby("config_label").size().reindex(agg.index).fillna(0).astype(int)
        agg["degenerate_reason"] = (
            reasons[reasons != ""]
            .groupby(bad["config_label"])
            .agg(reason_kinds)
            .reindex(agg.index)
            .fillna("")
        )
        # The order of kbench compare and the report (their default metric): the online
        # error, which every run has; a held-out split is not always there.
        # ties broken by label, as in kbench compare
        board = agg.sort_index().sort_values("online_error", na_position="last", kind="stable")
        board.attrs["order"] = "online_error"  # said in the caption of every view
        boards[str(stream)] = board
    return boards


def width_hints(runs: pd.DataFrame, registry: Registry) -> list[str]:
    """A hint per degenerate configuration whose kernel has a width left at its default.

    A width parameter (``gamma``) suits features of one scale only: FOGD with ``rbf`` at
    gamma = 1 on digits scaled to [0, 1] has an online error of 88 %, at gamma = 0.05 of
    8 %. A degenerate run with such a kernel is as likely the kernel's fault as the
    algorithm's, and the user is told which knob to turn.
    """
    if runs.empty or "degenerate" not in runs or "kernel" not in runs:
        return []
    bad = runs[(runs["status"] == "ok") & (runs["degenerate"].fillna("").astype(str) != "")]
    hints = []
    for (algorithm, kernel), group in bad.groupby(["algorithm", "kernel"], sort=True):
        if not isinstance(kernel, str):
            continue
        try:
            cls, _ = registry.resolve("kernel", kernel)
        except Exception:  # a kernel no longer registered: no hint rather than no table
            continue
        if "gamma" not in cls.parameters() or registry.short("kernel", kernel) != cls.name:
            continue
        streams = ", ".join(sorted(set(group["stream"].astype(str))))
        hints.append(
            f"{algorithm} with {cls.name} at its default width is degenerate on {streams}: "
            f"a width suits one scale of features; try {cls.name}[gamma=...] smaller for "
            "features far apart (e.g. 1/d with features scaled to [0, 1], d the number of "
            "features), or tune it (docs/tuning.md)"
        )
    return hints


def tuning_cost_text(r: object) -> str:
    """A tuned configuration's cost in one cell: configurations, runs, kernel evaluations
    and seconds of its tuning ("" for an untuned one)."""
    runs = getattr(r, "tune_runs", np.nan)
    if runs is None or not np.isfinite(runs):
        return ""
    evals = getattr(r, "tune_kernel_evals", np.nan)
    return (
        f"{fmt_value(getattr(r, 'tune_configs', np.nan), '.0f')} cfg, {runs:.0f} runs, "
        f"{fmt_value(evals, '.3g')} K, {fmt_value(getattr(r, 'tune_seconds', np.nan), '.2f')} s"
    )


def peak_mib(value: Any) -> str:
    """A peak memory (``peak_memory``, bytes) in MiB, one decimal; a dash when not traced."""
    return fmt_value(None if value is None else float(value) / 2**20, ".1f")


def is_set(value: object) -> bool:
    """A non-empty string (a cell that says something)."""
    return isinstance(value, str) and value != ""


def leaderboard_long(runs: pd.DataFrame, registry: Registry) -> pd.DataFrame:
    """Every leaderboard in one table: a ``stream`` column, then one row per configuration."""
    parts = [
        board.reset_index(names="configuration").assign(
            stream=stream, rank=range(1, len(board) + 1)
        )
        for stream, board in leaderboard(runs, registry).items()
    ]
    if not parts:
        return pd.DataFrame(columns=["stream", "rank", "configuration"])
    out = pd.concat(parts, ignore_index=True)
    out["failed"] = out["failed"].fillna("")
    front = ["stream", "rank", "configuration"]
    return out[front + [c for c in out.columns if c not in front]]


def _marks(r: Any) -> set[str]:
    """Where row r's degenerate mark goes (:func:`marked_cells`): none when no run is."""
    return marked_cells(str(r.degenerate_reason)) if getattr(r, "degenerate", 0) else set()


def _marked(text: str, cell: str, r: Any) -> str:
    return f"{text} {MARK}" if cell in _marks(r) else text


def format_leaderboard(runs: pd.DataFrame, registry: Registry, fmt: str) -> str:
    """The leaderboards as Markdown, LaTeX (booktabs), CSV or JSON text."""
    long = leaderboard_long(runs, registry)
    if fmt == "csv":
        return to_csv(long)
    if fmt == "json":
        return to_json(long, legend=LEGEND)
    if fmt == "markdown":
        parts = []
        for stream, board in long.groupby("stream", sort=False):
            shown = pd.DataFrame(
                {
                    "algorithm": [
                        _marked(str(r.configuration), "label", r) for r in board.itertuples()
                    ],
                    "seeds": board["seeds"].map(lambda v: fmt_value(v, ".0f")),
                    "online error": [
                        _marked(
                            fmt_value(r.online_error, ".4f")
                            + (
                                "" if np.isnan(r.online_error_sd) else f" ± {r.online_error_sd:.4f}"
                            ),
                            "online",
                            r,
                        )
                        for r in board.itertuples()
                    ],
                    "held-out error": [
                        _marked(
                            fmt_value(r.test_error, ".4f")
                            + (
                                ""
                                if np.isnan(r.test_error) or np.isnan(r.test_error_sd)
                                else f" ± {r.test_error_sd:.4f}"
                            ),
                            "held-out",
                            r,
                        )
                        for r in board.itertuples()
                    ],
                    "SVs": board["n_support"].map(lambda v: fmt_value(v, ".0f")),
                    "µs/example": board["us_per_example"].map(lambda v: fmt_value(v, ".2f")),
                    "peak MiB": board["peak_memory"].map(peak_mib),
                    **(
                        {"tuning cost": [tuning_cost_text(r) for r in board.itertuples()]}
                        if "tune_runs" in board and board["tune_runs"].notna().any()
                        else {}
                    ),
                    "notes": [
                        "; ".join(
                            x
                            for x in (
                                f"selected {r.selected}"
                                if is_set(getattr(r, "selected", None))
                                else "",
                                f"degenerate ({r.degenerate} of {count(r.runs, 'run')}): {r.degenerate_reason}"
                                if r.degenerate
                                else "",
                                r.failed,
                            )
                            if x
                        )
                        for r in board.itertuples()
                    ],
                }
            )
            parts.append(
                to_markdown(
                    shown,
                    str(stream),
                    right=(
                        "seeds",
                        "online error",
                        "held-out error",
                        "SVs",
                        "µs/example",
                        "peak MiB",
                    ),
                )
            )
        if (long["degenerate"] > 0).any():
            parts.append(LEGEND + "\n")
        return "\n".join(parts)
    if fmt == "latex":
        key = "test_error" if long["test_error"].notna().any() else "online_error"
        sub = long[long[key].notna()]
        order = list(dict.fromkeys(sub["configuration"]))
        mean = sub.pivot_table(index="configuration", columns="stream", values=key, aggfunc="first")
        sd = sub.pivot_table(
            index="configuration", columns="stream", values=f"{key}_sd", aggfunc="first"
        ).reindex(index=mean.index, columns=mean.columns)
        # the mark on a cell only where a reason concerns the error shown (or no error)
        cell = "held-out" if key == "test_error" else "online"
        sub = sub.assign(marked=[bool(_marks(r) & {cell, "label"}) for r in sub.itertuples()])
        deg = sub.pivot_table(
            index="configuration", columns="stream", values="marked", aggfunc="first"
        ).reindex(index=mean.index, columns=mean.columns)
        regression = set(runs.get("task", pd.Series(dtype=str)).dropna()) == {"regression"}
        return latex_results(
            mean.reindex(order),
            sd.reindex(order),
            degenerate=(deg.reindex(order).fillna(0) > 0),
            percent=not regression,
            metric="held-out error" if key == "test_error" else "online error",
        )
    raise ValueError(f"unknown format {fmt!r}")
