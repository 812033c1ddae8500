"""Rankings for any study: mean ranks, Friedman and the critical difference per experiment
group, over the blocks where the compared set of configurations is complete.

A study often runs different configurations on different data sets (another kernel width
or budget per data set). A ranking across data sets then has no configuration that ran
everywhere. kbench groups the data sets that ran the same configurations and ranks each
group on its own:

* a group of several data sets is ranked over its data sets (each configuration's mean
  final error over the seeds; Demšar 2006);
* a group of one data set is ranked over its seeds, each seed an independent stream of
  that data set (the claim is then about that data set only).

Blocks where some configuration of the group did not finish are left out of that group's
ranking, and said so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kbench.analysis.rank_tests import (
    FRIEDMAN_RESAMPLES as FRIEDMAN_DRAWS,
)
from kbench.analysis.rank_tests import (
    cd_groups,
    friedman_test,
    nemenyi_cd,
    rank_table,
)
from kbench.analysis.tables import seed_label
from kbench.core.specs import short_names


@dataclass
class RankGroup:
    """One experiment group and its ranking."""

    name: str
    """Short name: the data-set names, joined."""
    streams: list[str]
    """Stream labels (data sets) of the group."""
    blocks: str
    """What a block is: ``"data sets"`` or ``"seeds"``."""
    values: pd.DataFrame
    """Blocks × configuration labels: the final error ranked."""
    ranks: pd.DataFrame
    """Blocks × labels: rank 1 = lowest error."""
    mean_ranks: pd.Series
    """Mean rank per label, best first."""
    friedman: dict[str, Any]
    """k, N, chi2, test, p, min_p, reason, significant, cd, alpha
    (:func:`~kbench.analysis.rank_tests.friedman_test`)."""
    cd_groups: list[list[str]]
    """Labels the Nemenyi test does not separate; empty when the Friedman test shown does
    not reject (no critical-difference diagram is then drawn)."""
    left_out: list[str] = field(default_factory=list)
    """Blocks or configurations left out of the ranking, with why."""

    @property
    def rankable(self) -> bool:
        """At least two configurations over at least two blocks."""
        return len(self.mean_ranks) >= 2 and len(self.values) >= 2


def _finals(cmp: Any) -> pd.DataFrame:
    """One row per finished run: stream, seed, label and the final error ranked."""
    runs = cmp.runs[cmp.runs["status"] == "ok"]
    metric = cmp.metric if cmp.metric in runs.columns else "online_error"
    value = runs[metric]
    if metric != "online_error" and "online_error" in runs.columns:
        value = value.fillna(runs["online_error"])
    return pd.DataFrame(
        {
            "stream": runs["stream"].astype(str),
            "seed": runs["seed"],
            "label": runs["label"].astype(str),
            "value": value.astype(float),
        }
    ).dropna(subset=["value"])


def _rank(
    name: str,
    streams: list[str],
    values: pd.DataFrame,
    blocks: str,
    alpha: float,
    left_out: list[str],
) -> RankGroup:
    complete = values.dropna(axis=0, how="any")
    for b in values.index.difference(complete.index):
        missing = [str(c) for c in values.columns if pd.isna(values.loc[b, c])]
        what = "data set" if blocks == "data sets" else "seed"
        left_out.append(f"{what} {b} (no finished run of {', '.join(missing)})")
    ranks = rank_table(complete) if len(complete) else complete
    mean_ranks = ranks.mean(axis=0).sort_values() if len(complete) else pd.Series(dtype=float)
    k, n = len(mean_ranks), len(complete)
    fr = friedman_test(ranks, alpha)
    cd = nemenyi_cd(k, n, alpha) if k >= 2 and n >= 2 else math.nan
    fr |= {"cd": cd, "alpha": alpha}
    # The Nemenyi bars are the post-hoc step of the Friedman test the view shows: drawn
    # only when that test rejects, so the diagram never separates what the test does not.
    groups = cd_groups(mean_ranks, cd) if fr["significant"] and np.isfinite(cd) else []
    return RankGroup(
        name=name,
        streams=streams,
        blocks=blocks,
        values=complete,
        ranks=ranks,
        mean_ranks=mean_ranks,
        friedman=fr,
        cd_groups=groups,
        left_out=left_out,
    )


def experiment_groups(cmp: Any) -> tuple[list[RankGroup], str]:
    """The experiment groups of a comparison, ranked, and a sentence saying what was
    grouped and why.

    Parameters
    ----------
    cmp
        A :class:`kbench.analysis.comparison.Comparison`.
    """
    runs = cmp.runs
    finals = _finals(cmp)
    order = [str(x) for x in cmp.labels]
    names = short_names(list(runs["stream"].astype(str).unique()))
    # The configurations each data set ran (any status: a failure does not change the plan).
    planned = runs.assign(stream=runs["stream"].astype(str), label=runs["label"].astype(str))
    by_stream = planned.groupby("stream")["label"].agg(frozenset)
    keys: dict[frozenset[str], list[str]] = {}
    for stream in sorted(by_stream.index):
        keys.setdefault(by_stream[stream], []).append(stream)
    groups = []
    for labels, streams in keys.items():
        cols = [c for c in order if c in labels]
        sub = finals[finals["stream"].isin(streams)]
        left_out: list[str] = []
        finished = [c for c in cols if c in set(sub["label"])]
        for c in cols:
            if c not in finished:
                left_out.append(f"{c} (no finished run)")
        if len(streams) >= 2:
            values = sub.pivot_table(
                index="stream", columns="label", values="value", aggfunc="mean"
            )
            values = values.reindex(index=streams, columns=finished)
            values.index = [names[s] for s in values.index]
            blocks = "data sets"
        else:
            values = sub.pivot_table(index="seed", columns="label", values="value", aggfunc="mean")
            values = values.reindex(columns=finished)
            values.index = [seed_label(s) for s in values.index]
            blocks = "seeds"
        name = ", ".join(names[s] for s in streams)
        groups.append(_rank(name, streams, values, blocks, cmp.alpha, left_out))
    return groups, _sentence(groups, len(by_stream))


def _sentence(groups: list[RankGroup], n_streams: int) -> str:
    if not groups:
        return "No finished run to rank."
    if len(groups) == 1:
        g = groups[0]
        if g.blocks == "data sets":
            return (
                f"Every configuration ran on every data set: one ranking over the "
                f"{len(g.values)} data sets (each configuration's mean error over the seeds)."
            )
        return (
            f"One data set: the configurations are ranked over its {len(g.values)} "
            f"seed{'s' if len(g.values) != 1 else ''}, each "
            "seed an independent stream of that data set."
        )
    parts = [
        f"{g.name} ({len(g.mean_ranks) or len(g.values.columns)} configurations, "
        f"{len(g.values)} {g.blocks})"
        for g in groups
    ]
    return (
        f"The configurations differ by data set (the study runs other kernels, budgets or "
        f"parameters on each), so no ranking across all {n_streams} data sets compares like "
        f"with like. Data sets that ran the same configurations form a group, ranked on its "
        f"own: {'; '.join(parts)}. A group of several data sets is ranked over its data sets "
        "(mean error over the seeds); a group of one data set over its seeds, each seed an "
        "independent stream, so its ranking speaks for that data set only."
    )


def friedman_sentence(group: RankGroup) -> str:
    """The Friedman test of a ranked group in one sentence, the same in every view.

    Names the test (exact or permutation), its p-value, and the Nemenyi step only when the
    test rejects; with no test possible, the reason.
    """
    fr = group.friedman
    alpha = fr.get("alpha", 0.05)
    what = group.blocks if fr["N"] != 1 else group.blocks[:-1]
    head = f"Friedman over {fr['N']} {what} and {fr['k']} configurations"
    if fr["test"] == "none":
        return f"{head}: no test ({fr['reason']}), so no configuration is separated."
    how = "exact" if fr["test"] == "exact" else "permutation"
    p = fr["p"]
    p_txt = f"p = {p:.3f}" if p >= 0.001 else f"p = {p:.2g}"
    if fr["test"] == "permutation" and p <= 1.5 / FRIEDMAN_DRAWS:
        p_txt = f"p < {2 / FRIEDMAN_DRAWS:.1g}"
    tail = (
        f"the configurations differ; those the Nemenyi critical difference "
        f"({fr['cd']:.2f} in mean rank) does not separate are grouped."
        if fr["significant"]
        else "no configuration is separated."
    )
    return f"{head}: χ² = {fr['chi2']:.2f}, {how} {p_txt} at α = {alpha:g}; {tail}"


def two_tests_sentence(group: RankGroup) -> str:
    """Why this ranking and the pairs over seeds may disagree: they answer different
    questions."""
    if group.blocks == "seeds":
        return (
            "This ranking asks whether the configurations' ranks differ over the seeds of "
            "one data set, all together; the pairs over seeds ask, for each two, whether one "
            "makes fewer errors: either can answer where the other cannot."
        )
    return (
        "This ranking asks whether the configurations' ranks differ across the data sets "
        "(one mean per data set); the pairs over seeds ask, on each data set, whether one of "
        "two makes fewer errors over its seeds: either can answer where the other cannot."
    )
