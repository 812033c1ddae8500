"""``kbench compare --format markdown|latex|csv|json``: a comparison as text for a paper,
a notebook or another program.

``csv`` is every pairwise test (one row per test, all levels) with each side's degenerate
reasons; ``json`` is every table of the comparison; ``markdown`` gives, per data set, the
configurations (mean ± sd over seeds, best in bold, degenerate mark) and every pair's
verdict; ``latex`` is one booktabs table, configurations × data sets, mean ± sd over seeds,
best in bold, ``*`` where the seed-level test finds a configuration worse than the best one
of the data set, ``†`` on degenerate runs, with the legend in the caption.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from kbench.analysis.pair_statistics import statistic_cells, statistic_headers, statistic_legend
from kbench.analysis.tables import (
    fmt_value,
    latex_results,
    plain,
    to_csv,
    to_markdown,
)
from kbench.core.specs import short_names, spec_name
from kbench.results.degenerate import LEGEND, MARK, reason_kinds


def _metric_columns(cmp: Any) -> tuple[str, str]:
    key = "test_error" if cmp.metric == "test_error" else "online_error"
    return key, f"{key}_sd"


def _flags(cmp: Any) -> dict[str, str]:
    return {str(r.label): str(r.flags or "") for r in cmp.configs.itertuples()}


def significantly_worse(cmp: Any, means: pd.DataFrame) -> pd.DataFrame:
    """Configurations × data sets: True where the seed-level verdict says the best
    configuration of that data set (lowest mean) is better than this one."""
    worse = pd.DataFrame(False, index=means.index, columns=means.columns)
    seeds = cmp.seeds
    if seeds is None or seeds.empty or "result" not in seeds.columns:
        return worse
    for stream in means.columns:
        col = means[stream].dropna()
        if col.empty:
            continue
        best = col.idxmin()
        for r in seeds[seeds["stream"] == stream].itertuples():
            if r.a == best and r.result == "win" and r.b in worse.index:
                worse.loc[r.b, stream] = True
            elif r.b == best and r.result == "loss" and r.a in worse.index:
                worse.loc[r.a, stream] = True
    return worse


def _board(cmp: Any) -> pd.DataFrame:
    board = cmp.leaderboard()
    key, _ = _metric_columns(cmp)
    if board[key].isna().all():  # no held-out error anywhere: the online error it is
        board = board.assign(
            test_error=board["online_error"], test_error_sd=board["online_error_sd"]
        )
    return board


def _test_name(cmp: Any) -> str:
    seeds = cmp.seeds
    if seeds is None or seeds.empty or "test" not in seeds.columns:
        return "test over seeds"
    names = sorted({str(t) for t in seeds["test"].dropna()} - {"", "nan", "none"})
    return (" / ".join(names) + " over seeds") if names else "test over seeds"


def to_latex(cmp: Any) -> str:
    """One booktabs table: configurations × data sets, ready to paste into a paper."""
    board = _board(cmp)
    key, sd_key = _metric_columns(cmp)
    order = [label for label in cmp.labels if label in set(board["label"])]
    mean = board.pivot_table(index="label", columns="stream", values=key, aggfunc="first")
    mean = mean.reindex(order)
    sd = board.pivot_table(index="label", columns="stream", values=sd_key, aggfunc="first")
    sd = sd.reindex(index=mean.index, columns=mean.columns)
    flagged = board.assign(bad=board["flags"].fillna("") != "").pivot_table(
        index="label", columns="stream", values="bad", aggfunc="any"
    )
    flagged = flagged.reindex(index=mean.index, columns=mean.columns).eq(True)
    regression = set(board["task"].dropna()) == {"regression"}
    n_seeds = int(board["seeds"].max()) if len(board) else 0
    worse = significantly_worse(cmp, mean)
    # Data-set names as column heads when they tell the streams apart (a paper's table
    # names its data sets; the full stream labels are in the results).
    names = short_names(list(mean.columns))
    mean, sd, flagged, worse = (x.rename(columns=names) for x in (mean, sd, flagged, worse))
    return latex_results(
        mean,
        sd,
        degenerate=flagged,
        worse=worse,
        percent=not regression,
        caption=f"{n_seeds} seed{'s' if n_seeds != 1 else ''} per data set."
        + (f" {undecided_note(cmp)}" if undecided_note(cmp) else ""),
        metric=key.replace("_", " ").replace("test", "held-out"),
        alpha=cmp.alpha,
        test=_test_name(cmp),
    )


VERDICT_WORDS = {
    "win": "A",
    "loss": "B",
    "tie": "tie",
    "cannot tell": "cannot tell",
    "n/a": "not available",
}
"""A pair's verdict over seeds in words (see :data:`kbench.analysis.statistics.SEED_VERDICTS`)."""


def verdict_text(result: Any, reason: Any = "") -> str:
    """The verdict of a pair, with why there is none where the seeds cannot give one."""
    text = VERDICT_WORDS.get(str(result), str(result))
    return f"{text}: {reason}" if isinstance(reason, str) and reason else text


def undecided_note(cmp: Any) -> str:
    """One sentence per reason the seed-level test gave no verdict on some data sets, e.g.
    ``No verdict over seeds on a9a: 1 seed: a test over seeds needs at least 2.``"""
    seeds = cmp.seeds
    if seeds is None or seeds.empty or "reason" not in seeds.columns:
        return ""
    undecided = seeds[seeds["result"].isin(["cannot tell", "n/a"])]
    parts = []
    for reason, g in undecided.groupby("reason", sort=False):
        where = ", ".join(sorted({spec_name(x) for x in g["stream"]}))
        parts.append(f"No verdict over seeds on {where}: {reason}.")
    return " ".join(parts)


def to_markdown_text(cmp: Any) -> str:
    """Per data set: the configurations and every pair's verdict; then the ranking."""
    board = _board(cmp)
    key, sd_key = _metric_columns(cmp)
    worse_all = significantly_worse(
        cmp, board.pivot_table(index="label", columns="stream", values=key, aggfunc="first")
    )
    parts = []
    headers = statistic_headers()
    for stream, g in board.groupby("stream", sort=True):
        regression = (g["task"] == "regression").all()
        scale, spec = (1.0, ".4g") if regression else (100.0, ".2f")
        best = g[key].min()
        rows = []
        for r in g.itertuples():
            m, s = getattr(r, key), getattr(r, sd_key)
            text = fmt_value(scale * m if pd.notna(m) else m, spec)
            if pd.notna(s):
                text += " ± " + fmt_value(scale * s, spec)
            if pd.notna(m) and m == best:
                text = f"**{text}**"
            if worse_all.get(stream, pd.Series(dtype=bool)).get(r.label, False):
                text += " \\*"
            label = str(r.label) + (f" {MARK}" if r.flags else "")
            rows.append(
                {
                    "configuration": label,
                    "seeds": int(r.seeds),
                    f"{key.replace('_', ' ')}{'' if regression else ' (%)'}": text,
                    "degenerate": r.flags or "",
                }
            )
        parts.append(to_markdown(pd.DataFrame(rows), str(stream), right=("seeds",)))
        sp = cmp.seeds[cmp.seeds["stream"] == stream] if len(cmp.seeds) else cmp.seeds
        if len(sp):
            # the degenerate mark of this data set, not of the configuration anywhere
            here = {str(r.label): str(r.flags or "") for r in g.itertuples()}
            prow = [
                {
                    "A": r.a + (f" {MARK}" if here.get(r.a) else ""),
                    "B": r.b + (f" {MARK}" if here.get(r.b) else ""),
                    "A − B": fmt_value(scale * r.mean_diff, "+" + spec),
                    "p (Holm)": fmt_value(r.p_holm, ".3g"),
                    **dict(zip(headers, statistic_cells(r, regression), strict=True)),
                    "better": verdict_text(r.result, getattr(r, "reason", "")),
                }
                for r in sp.itertuples()
            ]
            right = ("A − B", "p (Holm)", *headers)
            parts.append(to_markdown(pd.DataFrame(prow), right=right))
    parts += _markdown_groups(cmp)
    legend = [
        f"Mean ± sd over seeds; lowest in bold; \\* significantly worse than the best "
        f"configuration of the data set ({_test_name(cmp)}, Holm, α = {cmp.alpha:g})."
    ]
    if any(_flags(cmp).values()):
        legend.append(LEGEND + ".")
    if undecided_note(cmp):
        legend.append(undecided_note(cmp))
    if statistic_legend():
        legend.append(statistic_legend())
    parts.append(" ".join(legend) + "\n")
    return "\n".join(parts)


def _markdown_groups(cmp: Any) -> list[str]:
    """The ranking as the report gives it: per experiment group (data sets that ran the same
    configurations), with the sentence saying what was grouped and why; a configuration
    carries the degenerate mark when it is degenerate on a data set of its group."""
    from kbench.analysis.groups import experiment_groups, friedman_sentence, two_tests_sentence

    if len(cmp.labels) < 2:
        return []
    groups, sentence = experiment_groups(cmp)
    if not groups:
        return []
    bad, _ = cmp.degenerate_cells()
    out = [f"### across data sets\n\n{sentence}\n"]
    for g in groups:
        ranked = list(g.mean_ranks.index) or list(g.values.columns)
        table = pd.DataFrame(
            {
                "configuration": [
                    str(label)
                    + (f" {MARK}" if any((st, str(label)) in bad for st in g.streams) else "")
                    for label in ranked
                ],
                "mean rank": [
                    fmt_value(float(g.mean_ranks.get(x, math.nan)), ".2f") for x in ranked
                ],
            }
        )
        n = len(g.values)
        what = g.blocks if n != 1 else g.blocks[:-1]
        tail = (
            f"{friedman_sentence(g)} {two_tests_sentence(g)}"
            if g.rankable
            else f"Not ranked: {len(ranked)} configuration(s) over {n} complete {what}; a "
            "ranking needs at least two of each."
        )
        title = f"{g.name}: mean rank over its {n} {what}" if len(groups) > 1 else ""
        out.append(to_markdown(table, title, right=("mean rank",)) + "\n" + tail + "\n")
    return out


def to_csv_text(cmp: Any) -> str:
    """Every pairwise test, with each side's degenerate reasons."""
    flags = _flags(cmp)
    runs = cmp.runs
    # Per data set where the row is about one data set; over all of them for the rows
    # across data sets.
    per_stream = (
        runs.groupby(["stream", "label"])["flags"].agg(reason_kinds).to_dict() if len(runs) else {}
    )
    long = cmp.long_table()
    for side in ("a", "b"):
        long[f"degenerate_{side}"] = [
            per_stream.get((st, lab), "") if isinstance(st, str) and st else flags.get(lab, "")
            for st, lab in zip(long["stream"], long[side], strict=True)
        ]
    return to_csv(long)


def to_json_text(cmp: Any) -> str:
    """Every table of the comparison, and the legend of the degenerate mark."""
    from kbench.analysis.groups import experiment_groups

    data = cmp.to_dict()
    data["degenerate_legend"] = LEGEND
    # The rankings as the report and the terminal give them: per experiment group.
    groups, sentence = experiment_groups(cmp) if len(cmp.labels) >= 2 else ([], "")
    data["grouping"] = sentence
    data["groups"] = [
        {
            "name": g.name,
            "streams": list(g.streams),
            "blocks": g.blocks,
            "mean_ranks": {str(k): float(v) for k, v in g.mean_ranks.items()},
            "friedman": {k: plain(v) for k, v in g.friedman.items()},
            "cd_groups": g.cd_groups,
            "left_out": list(g.left_out),
        }
        for g in groups
    ]
    return json.dumps(data, indent=2, allow_nan=False, default=_default)


def _default(v: Any) -> Any:
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v) if np.isfinite(v) else None
    if isinstance(v, np.bool_):
        return bool(v)
    return str(v)


def format_comparison(cmp: Any, fmt: str) -> str:
    """A comparison as ``markdown``, ``latex``, ``csv`` or ``json`` text."""
    return {
        "markdown": to_markdown_text,
        "latex": to_latex,
        "csv": to_csv_text,
        "json": to_json_text,
    }[fmt](cmp)
