"""The tests on ranks of k configurations across data sets or seeds (Demšar 2006): pure
functions on tables of values or ranks, with no results table and no display.

- the Friedman test with the Iman–Davenport F, from values or from mean ranks;
- the Friedman test exact, or by permutation when its distribution is too large
  (:func:`friedman_test`, which kbench's rankings and groups use);
- Nemenyi's critical difference and the groups of configurations it does not separate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from kbench.analysis.statistics import ALPHA
from kbench.core import seeds


def friedman(values: pd.DataFrame, lower_is_better: bool = True) -> dict[str, float]:
    """Friedman test on a data sets × configurations table (Demšar 2006, section 3.2.2).

    Parameters
    ----------
    values
        One row per data set, one column per configuration, no missing values.
    lower_is_better
        Rank 1 goes to the smallest value (errors) or to the largest (accuracies).

    Returns
    -------
    dict
        ``k``, ``N``, ``chi2`` (the Friedman statistic without tie correction, as in
        Demšar), ``p_chi2``, ``F`` (Iman–Davenport), ``p_F`` (the recommended p-value),
        and ``mean_ranks`` (a Series).
    """
    ranks = rank_table(values, lower_is_better)
    return friedman_from_ranks(ranks.mean(axis=0), len(values))


def friedman_from_ranks(mean_ranks: pd.Series | Sequence[float], n_datasets: int) -> dict[str, Any]:
    """The Friedman and Iman–Davenport statistics from the mean ranks of k configurations.

    Parameters
    ----------
    mean_ranks
        Mean rank of each configuration over the data sets.
    n_datasets
        Number of data sets N.

    Returns
    -------
    dict
        See :func:`friedman`.
    """
    r = np.asarray(mean_ranks, dtype=float)
    k, n = len(r), int(n_datasets)
    out: dict[str, Any] = {
        "k": k,
        "N": n,
        "chi2": math.nan,
        "p_chi2": math.nan,
        "F": math.nan,
        "p_F": math.nan,
        "mean_ranks": pd.Series(mean_ranks) if isinstance(mean_ranks, pd.Series) else pd.Series(r),
    }
    if k < 2 or n < 2:
        return out
    chi2 = 12 * n / (k * (k + 1)) * (float(np.sum(r**2)) - k * (k + 1) ** 2 / 4)
    chi2 = max(chi2, 0.0)
    out["chi2"], out["p_chi2"] = chi2, float(stats.chi2.sf(chi2, k - 1))
    denom = n * (k - 1) - chi2
    if denom <= 1e-12:  # every data set ranks the configurations identically
        out["F"], out["p_F"] = math.inf, 0.0
    else:
        f = (n - 1) * chi2 / denom
        out["F"], out["p_F"] = f, float(stats.f.sf(f, k - 1, (k - 1) * (n - 1)))
    return out


def rank_table(values: pd.DataFrame, lower_is_better: bool = True) -> pd.DataFrame:
    """Rank configurations (columns) within each data set (row); ties get average ranks."""
    sign = 1.0 if lower_is_better else -1.0
    return (sign * values).rank(axis=1, method="average")


def nemenyi_q(k: int, alpha: float = ALPHA) -> float:
    """Critical value q_alpha of the Nemenyi test: studentized range (k, ∞) / √2."""
    if k < 2:
        return math.nan
    return float(stats.studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2))


def nemenyi_cd(k: int, n_datasets: int, alpha: float = ALPHA) -> float:
    """Nemenyi critical difference of mean ranks: q_alpha · sqrt(k(k+1) / (6N))."""
    if k < 2 or n_datasets < 1:
        return math.nan
    return nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6 * n_datasets))


def cd_groups(mean_ranks: pd.Series, cd: float) -> list[list[str]]:
    """Maximal runs of configurations whose mean ranks differ by less than ``cd``.

    Parameters
    ----------
    mean_ranks
        Mean rank per configuration (index: labels).
    cd
        Critical difference.

    Returns
    -------
    list of list of str
        Groups of two or more configurations, best first, none contained in another:
        the bars of a critical-difference diagram.
    """
    r = mean_ranks.sort_values()
    names, vals = list(r.index), r.to_numpy()
    groups: list[list[str]] = []
    last_end = -1
    for i in range(len(vals)):
        j = i
        while j + 1 < len(vals) and vals[j + 1] - vals[i] < cd:
            j += 1
        if j > i and j > last_end:
            groups.append([str(x) for x in names[i : j + 1]])
            last_end = j
    return groups


FRIEDMAN_EXACT_STATES = 200_000
"""Most distinct rank-sum vectors the exact Friedman distribution may hold; beyond it the
p-value is a permutation estimate (:data:`FRIEDMAN_RESAMPLES` draws)."""

FRIEDMAN_RESAMPLES = 20_000
"""Draws of the permutation Friedman test when the exact distribution is too large; its
smallest p-value, 1 / (draws + 1), is far below any usual α."""


def _block_arrangements(row: np.ndarray) -> np.ndarray:
    """The distinct orderings of one block's (doubled, integer) ranks: ties give fewer."""
    from itertools import permutations

    return np.unique(np.array(list(permutations(row.tolist())), dtype=np.int64), axis=0)


def _exact_rank_sums(rows: np.ndarray, max_states: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Null distribution of the column rank sums, block by block, or None when too large.

    Each block's ranks are, under the null hypothesis, equally likely in every distinct
    order; the rank-sum vectors are coded in one integer (mixed radix, no carries since
    each sum is below the radix) so that merging equal vectors is one ``np.unique``.
    """
    k = rows.shape[1]
    radix = int(rows.sum(axis=0).max() + rows.max() * len(rows)) + 1
    if k * math.log2(radix) > 62 or math.factorial(k) > 5040:
        return None
    weights = radix ** np.arange(k, dtype=np.int64)
    codes = np.zeros(1, dtype=np.int64)
    prob: np.ndarray[Any, Any] = np.ones(1)  # bincount with weights: float
    for row in rows:
        arr = _block_arrangements(row)
        step = arr @ weights
        if len(codes) * len(step) > 20 * max_states:  # bounded work, not only memory
            return None
        new = (codes[:, None] + step[None, :]).ravel()
        p = np.repeat(prob / len(step), len(step))
        codes, inverse = np.unique(new, return_inverse=True)
        prob = np.bincount(inverse.ravel(), weights=p)
        if len(codes) > max_states:
            return None
    sums = (codes[:, None] // weights[None, :]) % radix
    return sums, prob


def friedman_test(
    ranks: pd.DataFrame,
    alpha: float = ALPHA,
    *,
    seed: int = 0,
    max_states: int = FRIEDMAN_EXACT_STATES,
    n_resamples: int = FRIEDMAN_RESAMPLES,
) -> dict[str, Any]:
    """Friedman's test of k configurations over N blocks, exact or by permutation.

    The chi-square and F approximations of the Friedman statistic are poor with few blocks
    (they reject with p ≈ 0.002 on 5 blocks where no exact test can go below 0.06), so the
    p-value comes from the statistic's permutation distribution instead: under the null
    hypothesis each block's ranks, ties included, are equally likely in any order. The
    distribution is enumerated exactly while it is small (two to seven configurations over
    the usual numbers of seeds or data sets) and estimated from ``n_resamples`` seeded
    draws otherwise. With the exact distribution the smallest p-value the blocks allow is
    known; when it is not below ``alpha`` no test is made, and the reason says so.

    Parameters
    ----------
    ranks
        Blocks × configurations ranks (:func:`rank_table`), no missing value.
    alpha
        Significance level.
    seed
        Seed of the permutation draws (``resampling`` stream of :mod:`kbench.core.seeds`).
    max_states, n_resamples
        Size limit of the exact distribution and the draws beyond it.

    Returns
    -------
    dict
        ``k``, ``N``, ``chi2`` (Friedman's statistic, no tie correction), ``test``
        (``"exact"``, ``"permutation"`` or ``"none"``), ``p`` (NaN without a test),
        ``min_p`` (the smallest p-value possible with these blocks), ``reason`` (why there
        is no test; empty otherwise) and ``significant`` (p < alpha).
    """
    r = np.asarray(ranks, dtype=float)
    n, k = r.shape if r.ndim == 2 else (0, 0)
    out: dict[str, Any] = {
        "k": k,
        "N": n,
        "chi2": math.nan,
        "test": "none",
        "p": math.nan,
        "min_p": math.nan,
        "reason": "",
        "significant": False,
    }
    if k < 2 or n < 2:
        out["reason"] = f"{k} configuration(s) over {n} block(s): a test needs two of each"
        return out
    rows = np.rint(2 * r).astype(np.int64)  # average ranks are multiples of 1/2
    observed = int((rows.sum(axis=0) ** 2).sum())
    # Friedman's chi2 from the doubled rank sums R2 = 2R: 12 / (N k (k+1)) Σ R² − 3N(k+1)
    out["chi2"] = max(0.0, 3.0 * observed / (n * k * (k + 1)) - 3.0 * n * (k + 1))
    exact = _exact_rank_sums(rows, max_states)
    if exact is not None:
        sums, prob = exact
        stat = (sums**2).sum(axis=1)
        p = float(min(1.0, prob[stat >= observed].sum()))
        min_p = float(prob[stat == stat.max()].sum())
        out |= {"min_p": min_p}
        if min_p >= alpha:
            out["reason"] = (
                f"{n} blocks of {k}: the exact Friedman test cannot go below "
                f"p = {min_p:.3g} ≥ α = {alpha:g}"
            )
            return out
        return out | {"test": "exact", "p": p, "significant": p < alpha}
    rng = seeds.rng(seed, "resampling")
    total = np.zeros((n_resamples, k), dtype=np.int64)
    for row in rows:
        total += rng.permuted(np.broadcast_to(row, (n_resamples, k)), axis=1)
    hits = int(((total**2).sum(axis=1) >= observed).sum())
    p = (hits + 1) / (n_resamples + 1)
    # the concordant order of every block: a lower bound of what the blocks allow
    arrangements = [
        math.factorial(k)
        / math.prod(math.factorial(c) for c in np.unique(b, return_counts=True)[1])
        for b in rows
    ]
    min_p = max(1.0 / (n_resamples + 1), float(np.prod(1.0 / np.array(arrangements[1:]))))
    if min_p >= alpha:  # blocks tied throughout: nothing to permute
        out |= {"min_p": min_p}
        out["reason"] = (
            f"{n} blocks of {k}, mostly tied: the Friedman test cannot go below "
            f"p = {min_p:.3g} ≥ α = {alpha:g}"
        )
        return out
    return out | {"test": "permutation", "p": p, "min_p": min_p, "significant": p < alpha}
