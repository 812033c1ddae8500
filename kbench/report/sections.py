"""What each section of the report shows: plain values and display text, no markup.

Every function here reads a :class:`~kbench.analysis.comparison.Comparison` (and the
traces) and returns dictionaries of strings and numbers for the templates in
``kbench/report/templates``, which add the markup; figures come as inline SVG strings from
:mod:`kbench.report.plots`. Numbers are formatted here, once, so that the HTML and any
other view of a section agree.
"""

from __future__ import annotations

import datetime as _dt
import math
import platform
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kbench._version import __version__
from kbench.analysis.comparison import Comparison
from kbench.analysis.groups import (
    RankGroup,
    experiment_groups,
    friedman_sentence,
    two_tests_sentence,
)
from kbench.analysis.pair_statistics import statistic_cells, statistic_headers, statistic_legend
from kbench.analysis.tables import p_text
from kbench.core.specs import spec_name
from kbench.report import pair_plots, plots
from kbench.results.degenerate import LEGEND

STATUS_COLOURS = {
    "ok": "#2e7d4f",
    "error": "#c8423b",
    "timeout": "#d98c1f",
    "diverged": "#8062b3",
    "memory": "#9b2d30",
}
"""Badge colours of the task statuses."""

Row = dict[str, Any]


# ---------------------------------------------------------------------------------------------
# Display text of numbers
# ---------------------------------------------------------------------------------------------


def text(x: Any) -> str:
    """``x`` as text, None as the empty string."""
    return "" if x is None else str(x)


def num(v: Any, spec: str = ".3g") -> str:
    """A number in ``spec``, or "–" when missing or not finite."""
    if (
        v is None
        or (isinstance(v, float) and not math.isfinite(v))
        or (not isinstance(v, str) and pd.isna(v))
    ):
        return "–"
    return format(v, spec)


def err(v: Any, regression: bool) -> str:
    """An error: a percentage for classification, a number for regression."""
    if v is None or pd.isna(v):
        return "–"
    return f"{v:.4g}" if regression else f"{100 * v:.2f}%"


def pval(p: Any) -> str:
    """A p-value, "<1e-16" below double precision."""
    if p is None or pd.isna(p):
        return "–"
    if p < 1e-16:
        return "<1e-16"
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def p_is(p: Any) -> str:
    """``p = 0.012``, or ``p < 1e-16`` below double precision (:func:`p_text`)."""
    return p_text(p)


def short_name(name: str, width: int = 28) -> str:
    """``name`` cut to ``width`` characters with an ellipsis (the full text goes in a title)."""
    return name if len(name) <= width else name[: width - 1] + "…"


def slug(name: str, i: int) -> str:
    """The anchor of the ``i``-th data set's section."""
    base = (
        "".join(c if c.isalnum() else "-" for c in spec_name(name).lower()).strip("-") or "stream"
    )
    return f"ds-{i}-{base}"


# ---------------------------------------------------------------------------------------------
# Tables shared by several sections
# ---------------------------------------------------------------------------------------------


def failed_rows(failed: pd.DataFrame) -> list[Row]:
    """Tasks that did not finish, by configuration and seed."""
    return [
        {
            "label": r.label,
            "stream": text(r.stream),
            "seed": text(r.seed),
            "status": text(r.status),
            "colour": STATUS_COLOURS.get(str(r.status), "#6f7782"),
            "reason": text(r.reason),
        }
        for r in failed.sort_values(["label", "seed"]).itertuples()
    ]


def _error_cell(v: Any, sd: Any, best: Any, regression: bool) -> Row:
    return {
        "value": err(v, regression),
        "sd": "" if pd.isna(sd) else err(sd, regression) if regression else f"{100 * sd:.2f}",
        "best": bool(pd.notna(v) and best is not None and v == best),
    }


def leaderboard(board: pd.DataFrame, regression: bool) -> Row:
    """One data set's leaderboard: each configuration's errors, size, cost and failures."""
    has_test = bool(board["test_error"].notna().any())
    best_online = board["online_error"].min()
    best_test = board["test_error"].min() if has_test else None
    rows = [
        {
            "rank": "" if pd.isna(r.rank) else str(int(r.rank)),
            "label": r.label,
            "flags": r.flags,
            "seeds": text(r.seeds),
            "online": _error_cell(r.online_error, r.online_error_sd, best_online, regression),
            "test": _error_cell(r.test_error, r.test_error_sd, best_test, regression),
            "n_support": num(r.n_support, ".0f"),
            "kernel_evals": num(r.kernel_evals, ".3g"),
            "time_s": num(r.time_s, ".3f"),
            "us_per_example": num(r.us_per_example, ".2f"),
            "failed": text(r.failed) if r.failed else "",
        }
        for r in board.itertuples()
    ]
    return {"has_test": has_test, "rows": rows}


def seed_pairs(seeds: pd.DataFrame, regression: bool) -> Row:
    """Every pair of one data set over the seeds: mean errors, the difference with its t
    interval, seeds won/equal/lost, the Holm-adjusted p and the verdict, with why there is
    none where the seeds cannot give one."""
    # One reason shared by every pair without a verdict (the usual case: the same seeds and
    # Holm family for all) is said once above the table instead of in every row.
    reasons = seeds["reason"].fillna("") if "reason" in seeds.columns else pd.Series(dtype=str)
    shared = set(reasons[reasons != ""])
    once = len(shared) == 1 and bool((reasons != "").all())

    def diff(v: float) -> str:
        return f"{v:+.4g}" if regression else f"{100 * v:+.2f}"

    rows = []
    for r in seeds.itertuples():
        decided = r.result != "n/a"
        reason = "" if once else getattr(r, "reason", "")
        rows.append(
            {
                "a": r.a,
                "b": r.b,
                "err_a": err(r.mean_a, regression),
                "err_b": err(r.mean_b, regression),
                "diff": diff(r.mean_diff) + ("" if regression else " pp"),
                "ci": f"[{diff(r.ci_low)}, {diff(r.ci_high)}]"
                if pd.notna(r.ci_low) and pd.notna(r.ci_high)
                else "",
                "counts": f"{r.a_better} / {r.equal} / {r.b_better}",
                "p": pval(r.p_holm) if decided else "–",
                "extra": statistic_cells(r, regression),
                "result": text(r.result),
                "reason": reason if isinstance(reason, str) else "",
            }
        )
    return {
        "shared_reason": next(iter(shared)) if once else "",
        "rows": rows,
        # statistics beside the verdict (kbench.analysis.pair_statistics): numeric columns
        "headers": ["#" + h for h in statistic_headers()],
        "legend": statistic_legend(),
    }


def stream_pairs(pairs: pd.DataFrame, regression: bool) -> list[Row]:
    """Every pair on every stream of one data set: a description conditional on that stream
    order (errors, discordant examples, difference), no test (docs/statistics.md)."""
    return [
        {
            "seed": text(r.seed),
            "stream_id": text(r.stream_id),
            "a": r.a,
            "b": r.b,
            "err_a": err(r.err_a, regression),
            "err_b": err(r.err_b, regression),
            "a_worse": text(r.a_worse),
            "b_worse": text(r.b_worse),
            "diff": "–"
            if pd.isna(r.diff)
            else f"{r.diff:+.4g}"
            if regression
            else f"{100 * r.diff:+.2f}",
            "result": text(r.result),
        }
        for r in pairs.itertuples()
    ]


# ---------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------


def summary(
    cmp: Comparison,
    lb: pd.DataFrame,
    colours: dict[str, str],
    names: dict[str, str],
    groups: Sequence[RankGroup] = (),
) -> Row:
    """Mean error per data set and configuration, the mean ranks, and the overview figure."""
    streams = list(dict.fromkeys(lb["stream"]))
    col = "test_error" if cmp.metric == "test_error" else "online_error"
    tasks = lb.drop_duplicates("stream").set_index("stream")["task"]
    # label → its mean rank in each group it belongs to (a configuration run on data sets
    # of several groups has a rank in each)
    rank_of: dict[str, list[tuple[float, str]]] = {}
    for g in groups:
        for lab, mr in g.mean_ranks.items():
            rank_of.setdefault(str(lab), []).append((float(mr), g.name))
    rows = []
    for i, c in enumerate(cmp.configs.itertuples(), 1):
        if len(groups) > 1 and str(c.label) in rank_of:
            group_ranks = [
                {"rank": f"{mr:.2f}", "group": gname, "short": short_name(gname)}
                for mr, gname in rank_of[str(c.label)]
            ]
            rank = ""
        else:
            group_ranks = []
            rank = num(rank_of.get(str(c.label), [(c.mean_rank, "")])[0][0], ".2f")
        cells: list[Row | None] = []
        for s in streams:
            row = lb[(lb["stream"] == s) & (lb["label"] == c.label)]
            if row.empty or row.iloc[0]["seeds"] == 0:
                cells.append(None)
                continue
            r = row.iloc[0]
            v = r[col] if pd.notna(r[col]) else r["online_error"]
            sd = r[f"{col}_sd"] if pd.notna(r[col]) else r["online_error_sd"]
            reg = tasks.get(s) == "regression"
            cells.append(
                {
                    "cls": "rank1 best" if r["rank"] == 1 else "rank2" if r["rank"] == 2 else "",
                    "value": err(v, reg),
                    "sd": "" if pd.isna(sd) else f"{sd:.3g}" if reg else f"{100 * sd:.2f}",
                    # The mark on the cell too: a degenerate run is never shown as best unmarked.
                    "flags": str(r.get("flags", "") or ""),
                }
            )
        rows.append(
            {
                "number": i,
                "label": c.label,
                "flags": c.flags,
                "group_ranks": group_ranks,
                "rank": rank,
                "cells": cells,
                "failed": int(c.failed),
                "runs": int(c.runs),
            }
        )
    return {
        "which": "held-out" if cmp.metric == "test_error" else "online (prequential)",
        "grouped": len(groups) > 1,
        "streams": [{"id": s, "name": names.get(s, s)} for s in streams],
        "rows": rows,
        "figure": plots.overview_figure(lb, cmp.labels, colours, names, cmp.metric),
    }


def _group(cmp: Comparison, group: RankGroup, colours: dict[str, str], titled: bool) -> Row:
    """Mean ranks, the Friedman test and the CD diagram of one experiment group."""
    fr = group.friedman
    flags = dict(zip(cmp.configs["label"], cmp.configs["flags"], strict=True))
    out: Row = {
        "name": group.name if titled else "",
        "streams": ", ".join(group.streams),
        "rankable": group.rankable,
        "blocks": group.blocks,
        "left_out": "; ".join(group.left_out),
    }
    if group.rankable:
        out["friedman"] = {
            "N": text(fr["N"]),
            "k": text(fr["k"]),
            "sentence": friedman_sentence(group),
            "two_tests": two_tests_sentence(group),
            "cd": num(fr["cd"], ".2f"),
        }
        out["ranks"] = [
            {"label": str(lab), "flags": flags.get(lab, ""), "rank": f"{mr:.2f}"}
            for lab, mr in group.mean_ranks.items()
        ]
        # drawn from the Friedman test shown: no diagram when it does not reject
        out["cd_figure"] = (
            pair_plots.cd_figure(group.mean_ranks, fr["cd"], group.cd_groups, colours, fr["N"])
            if fr["significant"]
            else None
        )
    else:
        out["configs"] = len(group.mean_ranks) or len(group.values.columns)
        out["complete"] = len(group.values)
    return out


def across(cmp: Comparison, colours: dict[str, str]) -> Row:
    """Rankings across data sets (per experiment group) and the win/tie/loss matrix."""
    groups, sentence = experiment_groups(cmp)
    wtl = None
    if len(cmp.wtl):
        # One matrix per experiment group when the study has several: pairs across groups
        # never met on a stream.
        if len(groups) <= 1:
            wtl = pair_plots.wtl_figure(cmp.wtl, cmp.labels)
        else:
            figs = []
            for g in groups:
                members = set(g.values.columns) | set(g.mean_ranks.index)
                sub = cmp.wtl[cmp.wtl["a"].isin(members) & cmp.wtl["b"].isin(members)]
                fig = pair_plots.wtl_figure(sub, cmp.labels, title=g.name) if len(sub) else None
                if fig:
                    figs.append(fig)
            wtl = "".join(figs) or None
    return {
        "sentence": sentence,
        "groups": [_group(cmp, g, colours, len(groups) > 1) for g in groups],
        "wtl_figure": wtl,
        "n_streams": cmp.pairs["stream_id"].nunique() if wtl else 0,
    }


def dataset(
    cmp: Comparison,
    stream: str,
    lb: pd.DataFrame,
    traces: pd.DataFrame,
    colours: dict[str, str],
    references: Sequence[Mapping[str, Any]] = (),
) -> Row:
    """One data set: its facts, curves, leaderboard, pairs over seeds and per stream, and
    the tasks that did not finish."""
    runs = cmp.runs
    srun = runs[runs["stream"].astype(str) == stream]
    ok = srun[srun["status"] == "ok"]
    task = str(srun["task"].dropna().iloc[0]) if srun["task"].notna().any() else "binary"
    regression = task == "regression"
    n = ok["n"].dropna()
    d = ok["d"].dropna() if "d" in ok.columns else pd.Series(dtype=float)
    test_n = np.nan
    if "test_n" in traces.columns:
        test_n = traces[traces["task_id"].isin(ok["task_id"])]["test_n"].max()
    ids = sorted(srun["stream_id"].dropna().astype(str).unique())
    refs = [r for r in references if r.get("stream") is None or str(r["stream"]) in stream]
    curves, panels = (
        plots.curves_figure(stream, ok, traces, colours, task, refs) if len(ok) else (None, [])
    )
    seeds = cmp.seeds[cmp.seeds["stream"] == stream]
    spairs = cmp.pairs[cmp.pairs["stream"] == stream]
    out: Row = {
        "stream": stream,
        "task": task,
        "regression": regression,
        "n": str(int(n.max())) if len(n) else "",
        "d": str(int(d.max())) if len(d) else "",
        "test_n": str(int(test_n)) if pd.notna(test_n) else "",
        "seeds": text(srun["seed"].nunique()),
        "ids": ", ".join(ids[:6]) + (" …" if len(ids) > 6 else ""),
        "curves": curves,
        "panels": "; ".join(panels),
        "leaderboard": leaderboard(lb[lb["stream"] == stream], regression),
        "pairs": None,
        "failed": failed_rows(srun[srun["status"] != "ok"]),
    }
    if len(seeds):
        n_seeds = int(seeds["n_pairs"].max())
        out["pairs"] = {
            "what": "squared error" if regression else "error rate",
            "matrix": pair_plots.pair_matrix_figure(seeds, cmp.labels, regression, cmp.alpha),
            "n_seeds": n_seeds,
            "over_seeds": seed_pairs(seeds, regression),
            "per_stream": stream_pairs(spairs, regression),
        }
    return out


def configurations(cmp: Comparison) -> list[Row]:
    """The full specification behind each configuration's label, and who ran it."""
    runs = cmp.runs
    empty = pd.Series(dtype=object)
    plugin = runs.groupby("config")["plugin"].first() if "plugin" in runs.columns else empty
    version = (
        runs.groupby("config")["plugin_version"].first()
        if "plugin_version" in runs.columns
        else empty
    )
    plugin, version = plugin.dropna(), version.dropna()  # runs that failed early record no plugin
    return [
        {
            "label": c["label"],
            "algorithm": text(c["algorithm_spec"]),
            "kernel": text(c["kernel"]),
            "loss": text(c["loss"]),
            "epochs": text(c["epochs"]),
            "finished": f"{c['ok']} / {c['runs']}",
            "plugin": f"{plugin.get(key, '–')} {version.get(key, '')}",
        }
        for key, c in cmp.configs.iterrows()
    ]


def run_metadata(cmp: Comparison, source: str) -> Row:
    """Where the results come from: versions, times, machines."""
    runs = cmp.runs
    written = runs.get("kbench_version", pd.Series(dtype=object)).dropna()
    versions = sorted({str(v) for v in written})
    machines: dict[str, dict[str, Any]] = {}
    for m in runs.get("machine", pd.Series(dtype=object)).dropna():
        if isinstance(m, dict):
            machines.setdefault(str(m.get("host", "?")) + str(m.get("platform", "")), m)

    def when(col: str, how: str) -> float:
        if col not in runs:
            return np.nan
        return getattr(pd.to_numeric(runs[col], errors="coerce"), how)()

    def ts(t: float) -> str:
        return _dt.datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S") if pd.notna(t) else "–"

    keys = ("host", "platform", "processor", "cores", "python", "numpy")
    return {
        "source": source,
        "written_by": ", ".join(versions) or "?",
        "report_by": f"{__version__} (Python {platform.python_version()})",
        "tasks": f"{len(runs)} ({int((runs['status'] == 'ok').sum())} finished)",
        "started": ts(when("started_at", "min")),
        "finished": ts(when("finished_at", "max")),
        "compared_on": f"{cmp.metric.replace('_', ' ')}, α = {cmp.alpha:g}",
        "machine_keys": keys,
        "machines": [[text(m.get(k, "")) for k in keys] for m in machines.values()],
    }


def notes(cmp: Comparison, groups: Sequence[RankGroup]) -> list[str]:
    """The comparison's notes for the page: the per-configuration degenerate notes folded
    into one (each configuration carries its own mark and reasons in the tables), and the
    notes about configurations left out of one ranking across every data set dropped when
    the study is ranked per experiment group (the section says what was grouped)."""
    kept, degenerate = [], []
    for n in cmp.notes:
        if n.startswith("degenerate learner: "):
            degenerate.append(n)
        elif len(groups) > 1 and (
            n.startswith("left out of the ranking across data sets")
            or n.startswith("ranks across data sets need")
        ):
            continue
        else:
            kept.append(n)
    if degenerate:
        kept.append(
            f"{len(degenerate)} configuration(s) have degenerate runs, marked ⚠ with their "
            f"reasons in the tables. {LEGEND.removeprefix('⚠ ')}."
        )
    return kept
