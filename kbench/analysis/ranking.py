"""Configurations across data sets: mean ranks, the Friedman test, the Nemenyi groups and
pairwise tests on the per-data-set mean errors; and the win/tie/loss counts over streams."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from kbench.analysis.pairs import pair_row
from kbench.analysis.rank_tests import cd_groups, friedman_test, nemenyi_cd, nemenyi_q, rank_table
from kbench.analysis.statistics import (
    ALPHA,
    PAIRED_TEST_COLUMNS,
    bayesian_signed_rank,
    holm,
    paired_final_test,
    seed_verdict,
)


def dataset_table(finals: pd.DataFrame) -> pd.DataFrame:
    """Mean final error over seeds: one row per data set (stream label), one column per
    configuration."""
    return finals.pivot_table(index="stream", columns="config", values="value", aggfunc="mean")


@dataclass
class Ranking:
    """Mean ranks over data sets, the Friedman test and the Nemenyi groups."""

    values: pd.DataFrame
    """Data sets × configurations (labels) mean final error, for the ranked configurations."""
    ranks: pd.DataFrame
    """Rank of each configuration on each data set (1 = lowest error)."""
    mean_ranks: pd.Series
    """Mean rank per configuration label, best first."""
    friedman: dict[str, Any]
    """k, N, chi2, test, p, min_p, reason, significant, cd, q_alpha, alpha
    (:func:`~kbench.analysis.rank_tests.friedman_test`)."""
    groups: list[list[str]]
    """Configurations the Nemenyi test does not separate (bars of the diagram); empty
    when the Friedman test does not reject."""
    pairs: pd.DataFrame
    """Pairwise tests on the per-data-set mean errors, Holm-corrected."""
    excluded: list[str] = field(default_factory=list)
    """Configurations left out of the ranking, with why."""


def rank_configs(
    table: pd.DataFrame, labels: pd.Series, alpha: float = ALPHA, rope: float | None = None
) -> Ranking:
    """Rank the configurations that finished on every data set.

    Parameters
    ----------
    table
        :func:`dataset_table` output (columns: configuration keys).
    labels
        Configuration key → label.
    alpha
        Significance level for the Nemenyi critical difference and the pairwise tests.
    rope
        Half-width of the region of practical equivalence of the Bayesian signed-rank test
        on the per-data-set mean errors (:func:`~kbench.analysis.statistics.bayesian_signed_rank`); None leaves it out.
    """
    complete = [c for c in table.columns if table[c].notna().all()]
    excluded = [
        f"{labels[c]} (no finished run on {', '.join(map(str, table.index[table[c].isna()]))})"
        for c in table.columns
        if c not in complete
    ]
    values = table[complete]
    ranks = rank_table(values) if len(values) else values
    mean_ranks = ranks.mean(axis=0).sort_values() if len(values) else pd.Series(dtype=float)
    k, n = len(complete), len(values)
    fr = friedman_test(ranks, alpha)
    cd = nemenyi_cd(k, n, alpha) if k >= 2 and n >= 1 else math.nan
    fr |= {"cd": cd, "q_alpha": nemenyi_q(k, alpha), "alpha": alpha}
    groups = cd_groups(mean_ranks.rename(index=labels), cd) if fr["significant"] else []
    rows = []
    order = list(mean_ranks.index)
    n_family = len(order) * (len(order) - 1) // 2
    for i in range(len(order)):
        for j in range(i + 1, len(order)):
            ca, cb = order[i], order[j]
            d = (values[ca] - values[cb]).to_numpy()
            res = paired_final_test(d, alpha, n_family)
            if rope is not None:
                b = bayesian_signed_rank(d, rope)
                res |= {
                    "p_a_better": b["p_left"],
                    "p_rope": b["p_rope"],
                    "p_b_better": b["p_right"],
                }
            rows.append(
                pair_row(labels, ca, cb, values)
                | {"rank_a": float(mean_ranks[ca]), "rank_b": float(mean_ranks[cb])}
                | res
            )
    pairs = pd.DataFrame(
        rows,
        columns=[
            "a",
            "b",
            "config_a",
            "config_b",
            "mean_a",
            "mean_b",
            "rank_a",
            "rank_b",
            "n_pairs",
            *PAIRED_TEST_COLUMNS,
            *(("p_a_better", "p_rope", "p_b_better") if rope is not None else ()),
        ],
    )
    pairs["p_holm"] = holm(pairs["p"].to_numpy()) if len(pairs) else []
    verdicts = [
        seed_verdict(d, p, n, n_family, alpha)
        for d, p, n in zip(pairs["mean_diff"], pairs["p_holm"], pairs["n_pairs"], strict=True)
    ]
    # over data sets the replicates are the data sets: the reason speaks of them
    pairs["result"] = [v[0] for v in verdicts]
    pairs["reason"] = [v[1].replace("seed", "data set") for v in verdicts]
    return Ranking(
        values=values.rename(columns=labels),
        ranks=ranks.rename(columns=labels),
        mean_ranks=mean_ranks.rename(index=labels),
        friedman=fr,
        groups=groups,
        pairs=pairs,
        excluded=excluded,
    )


def win_tie_loss(pairs: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    """Win/tie/loss counts of every ordered pair of configurations over the streams.

    Parameters
    ----------
    pairs
        :func:`~kbench.analysis.pairs.stream_pairs` output (``a``, ``b``, ``result`` from a's side).
    labels
        Configuration labels, in display order.

    Returns
    -------
    pandas.DataFrame
        Long form: ``a``, ``b``, ``wins``, ``ties``, ``losses`` (of a against b) for
        every ordered pair that met on at least one stream.
    """
    counts: dict[tuple[str, str], list[int]] = {}
    flip = {"win": "loss", "loss": "win", "tie": "tie"}
    idx = {"win": 0, "tie": 1, "loss": 2}
    for a, b, res in zip(pairs["a"], pairs["b"], pairs["result"], strict=True):
        counts.setdefault((a, b), [0, 0, 0])[idx[res]] += 1
        counts.setdefault((b, a), [0, 0, 0])[idx[flip[res]]] += 1
    rows = [
        {
            "a": a,
            "b": b,
            "wins": counts[(a, b)][0],
            "ties": counts[(a, b)][1],
            "losses": counts[(a, b)][2],
        }
        for a in labels
        for b in labels
        if (a, b) in counts
    ]
    return pd.DataFrame(rows, columns=["a", "b", "wins", "ties", "losses"])


def wtl_matrix(wtl: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    """The win/tie/loss table as a square matrix of ``"w/t/l"`` strings ('' on the diagonal)."""
    m = pd.DataFrame("", index=list(labels), columns=list(labels), dtype=object)
    for r in wtl.itertuples():
        m.loc[r.a, r.b] = f"{r.wins}/{r.ties}/{r.losses}"
    return m
