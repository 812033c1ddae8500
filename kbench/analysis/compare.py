"""Every-pair comparison of algorithm configurations on identical streams.

Reads only the results tables (``runs``, ``traces``, ``outcomes``) and returns pandas
DataFrames. Three levels, each with a Holm correction over the pairs it tests:

- **per stream** (one stream id and one algorithm seed): the per-example outcomes of two
  configurations are paired. Classification: error counts, discordant counts, an exact
  McNemar test (a binomial test on the discordant examples) and Newcombe's interval for
  the difference of the paired error rates. Regression: a paired t test on the
  per-example squared errors, with its interval.
- **per data set, across seeds**: a Wilcoxon signed-rank test on the final errors of the
  seeds both configurations finished, or a sign test where there are too few seeds for
  the Wilcoxon test to reach the significance level.
- **across data sets**: mean ranks, the Friedman test (with the Iman–Davenport F),
  Nemenyi's critical difference and the groups it does not separate (Demšar 2006), and
  pairwise tests on the per-data-set mean errors.

A win/tie/loss matrix counts, for every ordered pair, the streams on which the first
configuration is significantly better, not separable, or significantly worse.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from kbench import __version__
from kbench.core.errors import KbenchError, ResultsError
from kbench.results.degenerate import degenerate_column, reason_kinds
from kbench.results.store import Results

ALPHA = 0.05
"""Default significance level (and 1 − confidence level of the intervals)."""

METRICS = ("online_error", "test_error", "final_epoch_error")
"""Run columns a comparison of final errors can use."""


class StreamMismatchError(KbenchError):
    """Two results that were not computed on the same stream were asked to be paired."""


class NothingToCompareError(ResultsError):
    """A results folder holds nothing a comparison can use."""


# ---------------------------------------------------------------------------------------------
# Single tests
# ---------------------------------------------------------------------------------------------


def mcnemar_exact(a_worse: int, b_worse: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts.

    Parameters
    ----------
    a_worse, b_worse
        Examples that only the first, respectively only the second, classifier got wrong.

    Returns
    -------
    float
        The two-sided binomial test of ``a_worse`` successes in ``a_worse + b_worse``
        trials with probability 1/2; 1 when there is no discordant example.
    """
    n = int(a_worse) + int(b_worse)
    if n == 0:
        return 1.0
    return float(stats.binomtest(int(a_worse), n, 0.5, alternative="two-sided").pvalue)


def wilson_interval(successes: int, n: int, alpha: float = ALPHA) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Parameters
    ----------
    successes, n
        Count and number of trials (n > 0).
    alpha
        One minus the confidence level.

    Returns
    -------
    tuple of float
        Lower and upper limits.
    """
    z = stats.norm.ppf(1 - alpha / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_proportion_ci(
    both: int, only_first: int, only_second: int, neither: int, alpha: float = ALPHA
) -> tuple[float, float, float]:
    """Newcombe's square-and-add interval for the difference of two paired proportions.

    The proportions are ``p1 = (both + only_first) / n`` and ``p2 = (both + only_second) / n``;
    the interval combines the Wilson intervals of each with their estimated correlation
    (Newcombe 1998, "Improved confidence intervals for the difference between binomial
    proportions based on paired data", method 10, continuity-corrected correlation). It
    stays inside [−1, 1] and behaves when discordant counts are small, where the Wald
    interval does not.

    Parameters
    ----------
    both, only_first, only_second, neither
        The paired 2×2 table: examples where both events happen, only the first, only the
        second, neither.
    alpha
        One minus the confidence level.

    Returns
    -------
    tuple of float
        ``(p1 - p2, lower, upper)``.
    """
    n = both + only_first + only_second + neither
    if n == 0:
        return math.nan, math.nan, math.nan
    r1, r2 = both + only_first, both + only_second
    p1, p2 = r1 / n, r2 / n
    diff = p1 - p2
    l1, u1 = wilson_interval(r1, n, alpha)
    l2, u2 = wilson_interval(r2, n, alpha)
    margins = r1 * (n - r1) * r2 * (n - r2)
    phi = 0.0
    if margins > 0:
        cross = both * neither - only_first * only_second
        # Newcombe's continuity correction shrinks a positive correlation by n/2 and
        # leaves a small positive one at zero, which keeps the interval conservative.
        if cross > n / 2:
            phi = (cross - n / 2) / math.sqrt(margins)
        elif cross < 0:
            phi = cross / math.sqrt(margins)
    lower = diff - math.sqrt(
        max(0.0, (p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2))
    )
    upper = diff + math.sqrt(
        max(0.0, (p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1))
    )
    return diff, max(-1.0, lower), min(1.0, upper)


def paired_t(d: np.ndarray, alpha: float = ALPHA) -> tuple[float, float, float, float, float]:
    """Paired t test and interval for the mean of paired differences ``d``.

    Returns
    -------
    tuple of float
        ``(mean, lower, upper, t, p)``; p = 1 and a zero-width interval when every
        difference is zero, NaN statistics with fewer than two differences.
    """
    d = np.asarray(d, dtype=float)
    n = len(d)
    if n == 0:
        return math.nan, math.nan, math.nan, math.nan, math.nan
    mean = float(d.mean())
    if n < 2:
        return mean, math.nan, math.nan, math.nan, math.nan
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return (
            mean,
            mean,
            mean,
            (0.0 if mean == 0 else math.copysign(math.inf, mean)),
            (1.0 if mean == 0 else 0.0),
        )
    se = sd / math.sqrt(n)
    t = mean / se
    q = stats.t.ppf(1 - alpha / 2, n - 1)
    p = float(2 * stats.t.sf(abs(t), n - 1))
    return mean, mean - q * se, mean + q * se, t, p


def sign_test(d: Sequence[float]) -> tuple[int, int, int, float]:
    """Two-sided sign test on paired differences (zeros are set aside).

    Returns
    -------
    tuple
        ``(negatives, zeros, positives, p)``; p = 1 when every difference is zero.
    """
    d = np.asarray(d, dtype=float)
    neg, pos = int((d < 0).sum()), int((d > 0).sum())
    zeros = len(d) - neg - pos
    if neg + pos == 0:
        return neg, zeros, pos, 1.0
    return neg, zeros, pos, float(stats.binomtest(neg, neg + pos, 0.5).pvalue)


def wilcoxon_test(d: Sequence[float]) -> tuple[float, float]:
    """Two-sided Wilcoxon signed-rank test on paired differences.

    Zero differences are ranked and their ranks split evenly (Demšar 2006, Pratt's
    handling keeps them in the ranking). Returns ``(R+ , p)`` where R+ is the rank sum of
    the positive differences with half of the zeros' ranks; p = 1 when every difference
    is zero.
    """
    d = np.asarray(d, dtype=float)
    if len(d) == 0:
        return math.nan, math.nan
    ranks = stats.rankdata(np.abs(d))
    r_plus = float(ranks[d > 0].sum() + ranks[d == 0].sum() / 2)
    if not np.any(d != 0):
        return r_plus, 1.0
    res = stats.wilcoxon(d, zero_method="zsplit", alternative="two-sided")
    return r_plus, float(res.pvalue)


def min_wilcoxon_n(alpha: float = ALPHA, family: int = 1) -> int:
    """Fewest pairs with which an exact two-sided signed-rank (or sign) test can reach ``alpha``.

    With ``family`` tests Holm-adjusted together the smallest adjusted p-value is
    ``family`` times the smallest unadjusted one, so more pairs are needed.
    """
    n = 1
    while family * min_p_value(n) >= alpha:
        n += 1
    return n


def min_p_value(n: int) -> float:
    """Smallest two-sided p-value an exact signed-rank or sign test can give on ``n`` pairs.

    Every difference of one sign is the most extreme outcome; its two sign patterns have
    probability 2 / 2**n under the null hypothesis. One pair or none: 1.
    """
    return 1.0 if n < 1 else min(1.0, 2.0 / 2.0**n)


EXACT_MAX_N = 400
"""Up to this many non-zero differences the signed-rank distribution is enumerated exactly;
beyond it (never with seeds) the normal approximation with tie correction is used."""


def signed_rank_exact(d: Sequence[float]) -> tuple[float, float, int]:
    """Exact two-sided Wilcoxon signed-rank test on paired differences, ties included.

    Zero differences are dropped (Wilcoxon's original rule); tied magnitudes get average
    ranks. Under the null hypothesis every difference is as likely positive as negative, so
    the statistic's distribution over the 2**n sign patterns is exact for the ranks observed,
    ties and all. It is computed by convolution over the doubled (integer) ranks.

    Parameters
    ----------
    d
        Paired differences (NaN entries are ignored).

    Returns
    -------
    tuple
        ``(w_plus, p, n_nonzero)``: the rank sum of the positive differences, the two-sided
        p-value P(|W − E W| ≥ |w − E W|) and the number of non-zero differences; p = 1 when
        every difference is zero.
    """
    x = np.asarray(d, dtype=float)
    x = x[~np.isnan(x)]
    x = x[x != 0]
    n = len(x)
    if n == 0:
        return 0.0, 1.0, 0
    ranks = stats.rankdata(np.abs(x))
    w_plus = float(ranks[x > 0].sum())
    if n > EXACT_MAX_N:
        mean = n * (n + 1) / 4
        _, tie_counts = np.unique(ranks, return_counts=True)
        var = n * (n + 1) * (2 * n + 1) / 24 - float((tie_counts**3 - tie_counts).sum()) / 48
        z = abs(w_plus - mean) / math.sqrt(var) if var > 0 else 0.0
        return w_plus, float(min(1.0, 2 * stats.norm.sf(z))), n
    r2 = np.rint(2 * ranks).astype(np.int64)  # average ranks are multiples of 1/2
    total = int(r2.sum())
    dist = np.zeros(total + 1)
    dist[0] = 1.0
    top = 0
    for r in r2:  # each rank enters the positive sum with probability 1/2
        shifted = dist[: top + 1].copy()
        dist[: top + 1] *= 0.5
        dist[r : r + top + 1] += 0.5 * shifted
        top += int(r)
    w2 = int(r2[x > 0].sum())
    k = np.arange(total + 1)
    # integer comparison of |2k - total| with |2w - total|: no rounding decides the tail
    tail = np.abs(2 * k - total) >= abs(2 * w2 - total)
    return w_plus, float(min(1.0, dist[tail].sum())), n


def bayesian_signed_rank(
    d: Sequence[float],
    rope: float,
    *,
    prior: float = 0.5,
    n_samples: int = 50_000,
    seed: int = 0,
) -> dict[str, float]:
    """Bayesian signed-rank test with a region of practical equivalence.

    The Dirichlet-process posterior of Benavoli et al. (2014, 2017) as the authors'
    ``baycomp`` library computes it: the differences plus one prior pseudo-observation at 0
    of weight ``prior``; for each draw of Dirichlet weights w, θ_left, θ_rope and θ_right are
    Σ w_i w_j over the pairs (i, j) whose sum z_i + z_j is below −2·rope, within, or above
    (a sum on a boundary counts half to each side); the probabilities are the shares of
    draws in which each θ is the largest.

    Parameters
    ----------
    d
        Paired differences a − b (errors: negative means a is better). NaN entries ignored.
    rope
        Half-width of the region of practical equivalence, in the units of ``d``; 0 gives
        no equivalence region.
    prior
        Weight of the prior pseudo-observation at 0.
    n_samples
        Posterior draws.
    seed
        Seed of the draws (the result is reproducible).

    Returns
    -------
    dict
        ``p_left`` (a practically lower: d < −rope), ``p_rope``, ``p_right``, ``n``.
    """
    if rope < 0 or not math.isfinite(rope):
        raise KbenchError(f"the region of practical equivalence must be >= 0, got {rope!r}")
    z = np.asarray(d, dtype=float)
    z = np.concatenate(([0.0], z[~np.isnan(z)]))
    sums = z[:, None] + z[None, :]

    def side(a: np.ndarray, thresh: float) -> np.ndarray:
        return (a > thresh).astype(float) + 0.5 * (a == thresh)

    above = side(sums, 2 * rope)
    below = side(-sums, 2 * rope)
    alpha_w = np.ones(len(z))
    alpha_w[0] = prior
    rng = np.random.default_rng(seed)
    left = np.empty(n_samples)
    right = np.empty(n_samples)
    for start in range(0, n_samples, 10_000):  # bounded memory for many data sets
        w = rng.dirichlet(alpha_w, min(10_000, n_samples - start))
        left[start : start + len(w)] = np.einsum("si,ij,sj->s", w, below, w)
        right[start : start + len(w)] = np.einsum("si,ij,sj->s", w, above, w)
    mid = 1.0 - left - right
    thetas = np.stack([left, mid, right], axis=1)
    winner = np.argmax(thetas, axis=1)
    counts = np.bincount(winner, minlength=3) / n_samples
    return {
        "p_left": float(counts[0]),
        "p_rope": float(counts[1]),
        "p_right": float(counts[2]),
        "n": len(z) - 1,
    }


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN entries stay NaN and are not counted).

    Parameters
    ----------
    pvalues
        Unadjusted p-values of a family of tests.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, in the input order; reject where adjusted p < alpha.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adjusted
    return out


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


def paired_final_test(d: Sequence[float], alpha: float = ALPHA, family: int = 1) -> dict[str, Any]:
    """Test paired differences of final errors (a − b) over seeds or data sets.

    The exact Wilcoxon signed-rank test (:func:`signed_rank_exact`): the pairs (seeds, or
    data sets) are the replicates. With it: the sign test's p-value, the mean difference
    with a t interval at 1 − ``alpha``, the smallest p-value the test can reach with the
    pairs given and the fewest pairs with which it could reach ``alpha`` after Holm over a
    family of ``family`` tests. Fewer than two pairs: no test (``test`` is ``none`` and the
    p-values are NaN).
    """
    d = np.asarray(d, dtype=float)
    d = d[~np.isnan(d)]
    n = len(d)
    neg, zeros, pos, p_sign = sign_test(d)
    mean, lo, hi, _, _ = paired_t(d, alpha)
    out: dict[str, Any] = {
        "n_pairs": n,
        "a_better": neg,
        "equal": zeros,
        "b_better": pos,
        "mean_diff": mean,
        "sd_diff": float(d.std(ddof=1)) if n > 1 else math.nan,
        "ci_low": lo,
        "ci_high": hi,
        "wilcoxon_r_plus": math.nan,
        "wilcoxon_p": math.nan,
        "sign_p": math.nan,
        "test": "none",
        "p": math.nan,
        "min_p": min_p_value(n),
        "seeds_needed": min_wilcoxon_n(alpha, max(1, family)),
    }
    if n < 2:
        return out
    w_plus, p_wil, _ = signed_rank_exact(d)
    return out | {
        "wilcoxon_r_plus": w_plus,
        "wilcoxon_p": p_wil,
        "sign_p": p_sign,
        "test": "signed-rank exact",
        "p": p_wil,
    }


SEED_VERDICTS = ("win", "loss", "tie", "cannot tell", "n/a")
"""Verdicts of a pair over seeds: A better, B better, no significant difference, the seeds
given cannot reach the significance level, no test (fewer than two seeds)."""


def seed_verdict(
    mean_diff: float, p_holm: float, n_pairs: int, family: int, alpha: float = ALPHA
) -> tuple[str, str]:
    """The verdict of one pair from its Holm-adjusted p-value, and why.

    Parameters
    ----------
    mean_diff
        Mean difference a − b (errors: negative means a is better).
    p_holm
        Holm-adjusted p-value of the pair's test over seeds.
    n_pairs
        Seeds (or data sets) both configurations finished.
    family
        Number of pairs Holm-adjusted together.
    alpha
        Significance level.

    Returns
    -------
    tuple of str
        ``(result, reason)``: result is one of :data:`SEED_VERDICTS`; the reason is empty for
        win, loss and tie.
    """
    unit = "seed" if n_pairs == 1 else "seeds"
    if n_pairs < 2:
        return "n/a", f"{n_pairs} {unit}: a test over seeds needs at least 2"
    family = max(1, int(family))
    if family * min_p_value(n_pairs) >= alpha:
        holm_txt = f" after Holm over {family} pairs" if family > 1 else ""
        need = min_wilcoxon_n(alpha, family)
        return (
            "cannot tell",
            f"{n_pairs} {unit}: cannot be significant at {alpha:g}{holm_txt}; run ≥ {need}",
        )
    return _result(mean_diff, p_holm, alpha), ""


# ---------------------------------------------------------------------------------------------
# Configurations, labels and flags
# ---------------------------------------------------------------------------------------------


def _spec_parts(spec: str) -> tuple[str, list[str]]:
    m = re.match(r"^([^\[]+)(?:\[(.*)\])?$", spec.strip())
    if not m:
        return spec, []
    body = m.group(2) or ""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return m.group(1), [p.strip() for p in parts if p.strip()]


def _is_set(value: Any) -> bool:
    return isinstance(value, str) and value != "" and value != "-"


def config_key(row: Any) -> str:
    """Identity of an algorithm configuration: algorithm, kernel, loss and epochs."""
    parts = [str(row["algorithm_spec"])]
    for col in ("kernel", "loss"):
        if _is_set(row.get(col)):
            parts.append(str(row[col]))
    epochs = row.get("epochs")
    if (
        epochs is not None
        and not (isinstance(epochs, float) and math.isnan(epochs))
        and int(epochs) != 1
    ):
        parts.append(f"epochs={int(epochs)}")
    return " | ".join(parts)


def config_table(
    runs: pd.DataFrame, short: Callable[[str, str], str] | None = None
) -> pd.DataFrame:
    """One row per configuration, with a short distinct display label.

    The label keeps what tells configurations apart: the algorithm spec without the
    parameters every configuration of that algorithm shares, and the kernel, loss or
    epochs only when they vary in the study. ``short(kind, spec)`` (e.g. the registry's
    ``short``) first drops parameters left at their defaults.

    Returns
    -------
    pandas.DataFrame
        Indexed by configuration key; columns ``label``, ``algorithm``, ``algorithm_spec``,
        ``kernel``, ``loss``, ``epochs``.
    """
    rows = []
    for _, r in runs.drop_duplicates("config").iterrows():
        rows.append(
            {
                "config": r["config"],
                "algorithm": r["algorithm"],
                "algorithm_spec": r["algorithm_spec"],
                "kernel": r["kernel"] if _is_set(r.get("kernel")) else "",
                "loss": r["loss"] if _is_set(r.get("loss")) else "",
                "epochs": int(r["epochs"]) if pd.notna(r.get("epochs")) else 1,
            }
        )
    table = pd.DataFrame(
        rows, columns=["config", "algorithm", "algorithm_spec", "kernel", "loss", "epochs"]
    )
    if table.empty:
        table["label"] = []
        return table.set_index("config")

    def shorten(kind: str, spec: str) -> str:
        if not spec:
            return ""
        return short(kind, spec) if short is not None else spec

    algo_short = [shorten("algorithm", s) for s in table["algorithm_spec"]]
    # Parameters shared by every configuration of one algorithm tell nothing apart.
    parsed = [_spec_parts(s) for s in algo_short]
    by_name: dict[str, list[set[str]]] = {}
    for name, params in parsed:
        by_name.setdefault(name, []).append(set(params))
    shared = {
        name: set.intersection(*sets) if len(sets) > 1 else set() for name, sets in by_name.items()
    }
    algo_label = []
    for name, params in parsed:
        keep = [p for p in params if p not in shared[name]]
        algo_label.append(f"{name}[{','.join(keep)}]" if keep else name)
    kernels = [shorten("kernel", k) for k in table["kernel"]]
    losses = [shorten("loss", lo) for lo in table["loss"]]
    vary_k = len({k for k in kernels if k}) > 1
    vary_l = len({lo for lo in losses if lo}) > 1
    vary_e = table["epochs"].nunique() > 1
    labels = []
    for i in range(len(table)):
        parts = [algo_label[i]]
        if vary_k and kernels[i]:
            parts.append(kernels[i])
        if vary_l and losses[i]:
            parts.append(losses[i])
        if vary_e:
            parts.append(f"×{table['epochs'].iloc[i]}")
        labels.append(" ".join(parts))
    if len(set(labels)) < len(labels):  # the shortening lost a distinction: show everything
        labels = [
            " ".join(p for p in (a, k, lo, f"×{e}" if e != 1 else "") if p)
            for a, k, lo, e in zip(algo_short, kernels, losses, table["epochs"], strict=True)
        ]
    seen: dict[str, int] = {}
    unique = []
    for lab in labels:
        seen[lab] = seen.get(lab, 0) + 1
        unique.append(lab if seen[lab] == 1 else f"{lab} #{seen[lab]}")
    table["label"] = unique
    return table.set_index("config")


def run_flags(runs: pd.DataFrame, traces: pd.DataFrame) -> pd.Series:
    """Why a run is a degenerate learner, per task ('' when it is not).

    The one definition of :mod:`kbench.results.degenerate`, read from the ``degenerate`` column
    kbench stores when a task finishes (computed from ``traces`` for older results).
    """
    return degenerate_column(runs, traces)


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", str(text))[:3])


def check_versions(runs: pd.DataFrame) -> None:
    """Refuse results written by a newer kbench than this one (ResultsError)."""
    if "kbench_version" not in runs.columns:
        return
    mine = _version_tuple(__version__)
    newer = sorted(
        {str(v) for v in runs["kbench_version"].dropna() if _version_tuple(v) > mine},
        key=_version_tuple,
    )
    if newer:
        raise ResultsError(
            f"results were written by kbench {newer[-1]}, newer than this kbench {__version__}; "
            "upgrade kbench to compare them"
        )


def prepare_runs(
    results: Results, short: Callable[[str, str], str] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The runs table with ``config``, ``label`` and ``flags`` columns, and the configurations.

    Raises
    ------
    NothingToCompareError
        No run at all, or none that finished.
    ResultsError
        A run table without the columns kbench writes, or written by a newer kbench.
    """
    runs = results.runs
    if runs is None or runs.empty:
        raise NothingToCompareError(
            "the results folder holds no task results; run kbench run --out FOLDER first"
        )
    missing = [
        c
        for c in ("task_id", "algorithm_spec", "stream", "stream_id", "status")
        if c not in runs.columns
    ]
    if missing:
        raise ResultsError(
            f"the runs table lacks the column(s) {', '.join(missing)}: not written by kbench"
        )
    check_versions(runs)
    runs = runs.copy()
    for col, default in (
        ("kernel", None),
        ("loss", None),
        ("epochs", 1),
        ("seed", 0),
        ("stream_seed", 0),
        ("task", "binary"),
        ("n", np.nan),
        ("reason", ""),
        ("dataset", None),
    ):
        if col not in runs.columns:
            runs[col] = default
    if runs["dataset"].isna().any():
        runs["dataset"] = runs["dataset"].fillna(runs["stream"].astype(str).str.split("[").str[0])
    for col in (*METRICS, "n_support", "kernel_evals", "time_s", "us_per_example"):
        if col not in runs.columns:
            runs[col] = np.nan
    runs["config"] = [config_key(r) for _, r in runs.iterrows()]
    configs = config_table(runs, short)
    runs["label"] = runs["config"].map(configs["label"])
    runs["flags"] = run_flags(runs, results.traces)
    runs["offline"] = (
        runs["offline"].fillna(False).astype(bool) if "offline" in runs.columns else False
    )
    ok = runs[runs["status"] == "ok"]
    if ok.empty:
        counts = ", ".join(f"{v} {k}" for k, v in runs["status"].value_counts().items())
        raise NothingToCompareError(
            f"no task finished ({len(runs)} tasks: {counts}); nothing to compare"
        )
    return runs, configs


# ---------------------------------------------------------------------------------------------
# Per-stream pairs
# ---------------------------------------------------------------------------------------------


def compare_outcomes(
    a: np.ndarray, b: np.ndarray, task: str, alpha: float = ALPHA
) -> dict[str, Any]:
    """Paired description of two per-example outcome vectors of one stream.

    A description conditional on that stream order, not a test: prequential outcomes
    depend on everything the learner saw before, so the examples of a stream are not
    independent replicates and no p-value or interval is computed from them (see
    docs/statistics.md). The verdict on a pair comes from the seeds (:func:`seed_pairs`).

    Parameters
    ----------
    a, b
        Classification: True where the prediction was correct. Regression: squared errors.
    task
        ``regression`` or a classification task.
    alpha
        Unused; kept so callers that pass a level keep working.

    Returns
    -------
    dict
        ``n``, ``err_a``, ``err_b`` (error rates, or mean squared errors), ``errors_a``,
        ``errors_b`` (counts; NaN for regression), ``a_worse``, ``b_worse`` (discordant
        examples: only A wrong / only B wrong; for regression, examples where A's, resp.
        B's, squared error is the larger), ``diff`` (err_a − err_b), ``sd_diff``;
        ``ci_low``, ``ci_high``, ``statistic`` and ``p`` are NaN and ``test`` is empty
        (columns kept for readers of older tables).
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise StreamMismatchError(
            f"outcome vectors of different lengths ({len(a)} and {len(b)}) cannot be paired"
        )
    n = len(a)
    if task == "regression":
        a, b = a.astype(float), b.astype(float)
        d = a - b
        mean = float(d.mean()) if n else math.nan
        return {
            "n": n,
            "err_a": float(a.mean()) if n else math.nan,
            "err_b": float(b.mean()) if n else math.nan,
            "errors_a": math.nan,
            "errors_b": math.nan,
            "a_worse": int((d > 0).sum()),
            "b_worse": int((d < 0).sum()),
            "diff": mean,
            "sd_diff": float(d.std(ddof=1)) if n > 1 else math.nan,
            **_NO_TEST,
        }
    wa, wb = ~a.astype(bool), ~b.astype(bool)
    a_worse, b_worse = int((wa & ~wb).sum()), int((wb & ~wa).sum())
    diff = (a_worse - b_worse) / n if n else math.nan
    return {
        "n": n,
        "err_a": float(wa.mean()) if n else math.nan,
        "err_b": float(wb.mean()) if n else math.nan,
        "errors_a": int(wa.sum()),
        "errors_b": int(wb.sum()),
        "a_worse": a_worse,
        "b_worse": b_worse,
        "diff": diff,
        "sd_diff": _sd_discordant(n, a_worse, b_worse),
        **_NO_TEST,
    }


_NO_TEST: dict[str, Any] = {
    "ci_low": math.nan,
    "ci_high": math.nan,
    "test": "",
    "statistic": math.nan,
    "p": math.nan,
}
"""The test columns of a per-stream row: empty, since examples are not replicates."""


def _sd_discordant(n: int, a_worse: int, b_worse: int) -> float:
    """Sample sd of per-example error differences that are +1 (a_worse), −1 (b_worse) or 0."""
    if n < 2:
        return math.nan
    mean = (a_worse - b_worse) / n
    return math.sqrt(max(0.0, (a_worse + b_worse - n * mean * mean) / (n - 1)))


def compare_runs(
    run_a: pd.Series | dict[str, Any],
    run_b: pd.Series | dict[str, Any],
    outcome_a: np.ndarray,
    outcome_b: np.ndarray,
    alpha: float = ALPHA,
) -> dict[str, Any]:
    """Compare two finished runs example by example; they must share a stream id.

    Raises
    ------
    StreamMismatchError
        The runs were computed on different streams.
    """
    if run_a["stream_id"] != run_b["stream_id"]:
        name_a = run_a.get("label", run_a["algorithm_spec"])
        name_b = run_b.get("label", run_b["algorithm_spec"])
        raise StreamMismatchError(
            f"cannot pair results of different streams: {name_a} ran on stream "
            f"{run_a['stream_id']}, {name_b} on {run_b['stream_id']}"
        )
    return compare_outcomes(outcome_a, outcome_b, str(run_a.get("task", "binary")), alpha)


def stream_mismatches(runs: pd.DataFrame) -> list[str]:
    """Notes on streams that should be identical (same data set and seed) but are not."""
    notes = []
    ok = runs[runs["status"] == "ok"]
    for (stream, seed), g in ok.groupby(["stream", "stream_seed"], sort=True):
        ids = g["stream_id"].value_counts()
        if len(ids) > 1:
            odd = g[g["stream_id"] != ids.index[0]]["label"].unique()
            notes.append(
                f"{stream} seed {seed} has {len(ids)} different stream ids (the data changed "
                f"between runs); {', '.join(map(str, odd))} not paired with the others there: "
                "rerun them with --force"
            )
    return notes


def stream_pairs(
    runs: pd.DataFrame,
    outcomes: pd.DataFrame,
    order: Sequence[str] | None = None,
    alpha: float = ALPHA,
) -> pd.DataFrame:
    """Every pair of configurations on every stream (stream id and algorithm seed).

    Parameters
    ----------
    runs
        Runs with ``config`` and ``label`` columns (see :func:`prepare_runs`).
    outcomes
        The outcomes table: ``task_id`` and ``outcome``.
    order
        Configuration keys in display order; the first of each pair comes first in it.
    alpha
        Unused (no test is made per stream); kept for callers that pass it.

    Returns
    -------
    pandas.DataFrame
        One row per (stream, pair): identifiers, :func:`compare_outcomes` columns,
        ``p_holm`` (NaN) and ``result``: ``win``, ``tie`` or ``loss`` as ``a`` made fewer,
        as many or more errors than ``b`` on that stream — a description, not a test.
    """
    cols = [
        "dataset",
        "stream",
        "stream_id",
        "stream_seed",
        "seed",
        "task",
        "a",
        "b",
        "config_a",
        "config_b",
        "task_a",
        "task_b",
        "n",
        "err_a",
        "err_b",
        "errors_a",
        "errors_b",
        "a_worse",
        "b_worse",
        "diff",
        "sd_diff",
        "ci_low",
        "ci_high",
        "test",
        "statistic",
        "p",
        "p_holm",
        "result",
    ]
    by_task = (
        dict(zip(outcomes["task_id"], outcomes["outcome"], strict=True)) if len(outcomes) else {}
    )
    ok = runs[(runs["status"] == "ok") & ~runs["offline"] & runs["task_id"].isin(by_task.keys())]
    rank = {c: i for i, c in enumerate(order)} if order is not None else {}
    rows: list[dict[str, Any]] = []
    for (stream_id, seed), g in ok.groupby(["stream_id", "seed"], sort=False):
        g = g.drop_duplicates("config", keep="last")
        g = g.iloc[
            sorted(
                range(len(g)),
                key=lambda i: (rank.get(g["config"].iloc[i], len(rank)), g["label"].iloc[i]),
            )
        ]
        recs = g.to_dict("records")
        block = []
        for i in range(len(recs)):
            for j in range(i + 1, len(recs)):
                ra, rb = recs[i], recs[j]
                oa, ob = by_task[ra["task_id"]], by_task[rb["task_id"]]
                # a run stopped by a label budget has outcomes for a prefix of the stream:
                # the pair is compared on the examples both saw
                k = min(len(oa), len(ob))
                res = compare_runs(ra, rb, oa[:k], ob[:k], alpha)
                block.append(
                    {
                        "dataset": ra["dataset"],
                        "stream": ra["stream"],
                        "stream_id": stream_id,
                        "stream_seed": ra["stream_seed"],
                        "seed": seed,
                        "task": ra["task"],
                        "a": ra["label"],
                        "b": rb["label"],
                        "config_a": ra["config"],
                        "config_b": rb["config"],
                        "task_a": ra["task_id"],
                        "task_b": rb["task_id"],
                    }
                    | res
                )
        for r in block:
            # a description of this stream (fewer, as many, more errors), not a test
            r["p_holm"] = math.nan
            r["result"] = _lower(r["diff"])
        rows.extend(block)
    df = pd.DataFrame(rows, columns=cols)
    return (
        df.sort_values(["stream", "stream_seed", "seed"], kind="stable").reset_index(drop=True)
        if len(df)
        else df
    )


def _lower(diff: float) -> str:
    """``win`` where a made fewer errors on a stream, ``loss`` where more, else ``tie``."""
    if pd.notna(diff) and diff < 0:
        return "win"
    if pd.notna(diff) and diff > 0:
        return "loss"
    return "tie"


def _result(diff: float, p_adj: float, alpha: float) -> str:
    if pd.notna(p_adj) and p_adj < alpha and pd.notna(diff) and diff != 0:
        return "win" if diff < 0 else "loss"
    return "tie"


# ---------------------------------------------------------------------------------------------
# Across seeds and across data sets
# ---------------------------------------------------------------------------------------------


def final_errors(runs: pd.DataFrame, metric: str = "online_error") -> pd.DataFrame:
    """Final error per finished run: data set, stream unit, configuration, value.

    Where a data set has no value of ``metric`` (no held-out split, say) the online
    error is used for it and ``metric_used`` says so.
    """
    if metric not in METRICS:
        raise KbenchError(f"unknown metric {metric!r}: expected one of {', '.join(METRICS)}")
    ok = runs[(runs["status"] == "ok") & ~runs["offline"]].copy()
    ok["metric_used"] = metric
    if metric != "online_error":
        has = ok.groupby("stream")[metric].transform(lambda s: s.notna().any())
        ok.loc[~has, "metric_used"] = "online_error"
    ok["value"] = np.where(ok["metric_used"] == metric, ok[metric], ok["online_error"]).astype(
        float
    )
    return ok[
        [
            "dataset",
            "stream",
            "stream_id",
            "stream_seed",
            "seed",
            "task",
            "config",
            "label",
            "value",
            "metric_used",
        ]
    ]


def seed_pairs(
    finals: pd.DataFrame,
    order: Sequence[str],
    alpha: float = ALPHA,
    pairs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per data set, every pair of configurations tested over the seeds both finished.

    The verdict of a pair on a data set: the exact signed-rank test on the final errors of
    the seeds (:func:`paired_final_test`), Holm-adjusted over the pairs of the data set, and
    :func:`seed_verdict`.

    Parameters
    ----------
    finals
        :func:`final_errors` output.
    order
        Configuration keys in display order.
    alpha
        Significance level.
    pairs
        :func:`stream_pairs` output; when given, the streams on which a made fewer, as
        many or more errors are counted (a description).

    Returns
    -------
    pandas.DataFrame
        One row per (data set, pair): ``n_pairs`` (seeds), ``mean_a``, ``mean_b``,
        :func:`paired_final_test` columns, ``family`` (pairs in the Holm family),
        ``p_holm``, ``result`` (see :data:`SEED_VERDICTS`) and ``reason``; with ``pairs``,
        also ``streams_won``/``streams_tied``/``streams_lost`` (of a).
    """
    cols = [
        "stream",
        "a",
        "b",
        "config_a",
        "config_b",
        "n_pairs",
        "mean_a",
        "mean_b",
        "mean_diff",
        "sd_diff",
        "ci_low",
        "ci_high",
        "a_better",
        "equal",
        "b_better",
        "wilcoxon_r_plus",
        "wilcoxon_p",
        "sign_p",
        "test",
        "p",
        "min_p",
        "seeds_needed",
        "family",
        "p_holm",
        "result",
        "reason",
    ]
    if pairs is not None:
        cols += ["streams_won", "streams_tied", "streams_lost"]
    rows = []
    for stream, g in finals.groupby("stream", sort=True):
        wide = g.pivot_table(
            index=["stream_id", "seed"], columns="config", values="value", aggfunc="mean"
        )
        present = [c for c in order if c in wide.columns]
        labels = g.drop_duplicates("config").set_index("config")["label"]
        todo = [
            (present[i], present[j])
            for i in range(len(present))
            for j in range(i + 1, len(present))
            if not wide[[present[i], present[j]]].dropna().empty
        ]
        block = []
        for ca, cb in todo:
            both = wide[[ca, cb]].dropna()
            res = paired_final_test((both[ca] - both[cb]).to_numpy(), alpha, len(todo))
            row = {
                "stream": stream,
                "a": labels[ca],
                "b": labels[cb],
                "config_a": ca,
                "config_b": cb,
                "mean_a": float(both[ca].mean()),
                "mean_b": float(both[cb].mean()),
                "family": len(todo),
            } | res
            if pairs is not None:
                sp = pairs[
                    (pairs["stream"] == stream)
                    & (pairs["config_a"] == ca)
                    & (pairs["config_b"] == cb)
                ]
                row |= {
                    "streams_won": int((sp["result"] == "win").sum()),
                    "streams_tied": int((sp["result"] == "tie").sum()),
                    "streams_lost": int((sp["result"] == "loss").sum()),
                }
            block.append(row)
        adj = holm([r["p"] for r in block])
        for r, pa in zip(block, adj, strict=True):
            r["p_holm"] = pa
            r["result"], r["reason"] = seed_verdict(
                r["mean_diff"], pa, r["n_pairs"], r["family"], alpha
            )
        rows.extend(block)
    return pd.DataFrame(rows, columns=cols)


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
    """k, N, chi2, p_chi2, F, p_F, cd, q_alpha, alpha."""
    groups: list[list[str]]
    """Configurations the Nemenyi test does not separate (bars of the diagram)."""
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
        on the per-data-set mean errors (:func:`bayesian_signed_rank`); None leaves it out.
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
    fr = friedman_from_ranks(mean_ranks, n)
    fr.pop("mean_ranks")
    cd = nemenyi_cd(k, n, alpha) if k >= 2 and n >= 1 else math.nan
    fr |= {"cd": cd, "q_alpha": nemenyi_q(k, alpha), "alpha": alpha}
    groups = cd_groups(mean_ranks.rename(index=labels), cd) if k >= 2 and n >= 2 else []
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
                {
                    "a": labels[ca],
                    "b": labels[cb],
                    "config_a": ca,
                    "config_b": cb,
                    "mean_a": float(values[ca].mean()),
                    "mean_b": float(values[cb].mean()),
                    "rank_a": float(mean_ranks[ca]),
                    "rank_b": float(mean_ranks[cb]),
                }
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
            "mean_diff",
            "sd_diff",
            "ci_low",
            "ci_high",
            "a_better",
            "equal",
            "b_better",
            "wilcoxon_r_plus",
            "wilcoxon_p",
            "sign_p",
            "test",
            "p",
            "min_p",
            "seeds_needed",
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
        :func:`stream_pairs` output (``a``, ``b``, ``result`` from a's side).
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


# ---------------------------------------------------------------------------------------------
# The whole comparison
# ---------------------------------------------------------------------------------------------


@dataclass
class Comparison:
    """Everything ``kbench compare`` computes from a results folder."""

    runs: pd.DataFrame
    """The runs table with ``config``, ``label``, ``flags`` and ``offline`` columns."""
    configs: pd.DataFrame
    """One row per configuration (index: key) in display order: label, specs, run counts,
    mean final error, flags."""
    pairs: pd.DataFrame
    """Per-stream paired tests (see :func:`stream_pairs`)."""
    seeds: pd.DataFrame
    """Per-data-set tests across seeds (see :func:`seed_pairs`)."""
    ranking: Ranking
    """Across data sets."""
    wtl: pd.DataFrame
    """Win/tie/loss counts over streams (see :func:`win_tie_loss`)."""
    metric: str
    alpha: float
    notes: list[str] = field(default_factory=list)
    rope: float | None = None
    """Region of practical equivalence of the Bayesian test across data sets (None: not run)."""

    @property
    def labels(self) -> list[str]:
        """Configuration labels in display order."""
        return list(self.configs["label"])

    def leaderboard(self) -> pd.DataFrame:
        """Per data set and configuration: seeds, mean and sd of the errors, resources, flags."""
        r = self.runs
        ok = r[r["status"] == "ok"]
        agg = ok.groupby(["stream", "label"], sort=False).agg(
            dataset=("dataset", "first"),
            task=("task", "first"),
            seeds=("seed", "nunique"),
            online_error=("online_error", "mean"),
            online_error_sd=("online_error", "std"),
            test_error=("test_error", "mean"),
            test_error_sd=("test_error", "std"),
            n_support=("n_support", "mean"),
            kernel_evals=("kernel_evals", "mean"),
            time_s=("time_s", "mean"),
            us_per_example=("us_per_example", "mean"),
            flags=(
                "flags",
                reason_kinds,
            ),
            offline=("offline", "any"),
        )
        failed = (
            r[r["status"] != "ok"]
            .groupby(["stream", "label"], sort=False)["status"]
            .agg(lambda s: ", ".join(f"{k}×{v}" for k, v in s.value_counts().items()))
            .rename("failed")
        )
        agg = agg.join(failed, how="outer")
        agg["failed"] = agg["failed"].fillna("")
        agg["flags"] = agg["flags"].fillna("")
        agg["seeds"] = agg["seeds"].fillna(0).astype(int)
        agg = agg.reset_index()
        key = "test_error" if self.metric == "test_error" else "online_error"
        agg["_key"] = agg.groupby("stream")[key].transform(
            lambda s: s if s.notna().any() else np.nan
        )
        agg["_key"] = agg["_key"].fillna(agg["online_error"])
        agg["rank"] = agg.groupby("stream")["_key"].rank(method="min")
        return (
            agg.sort_values(["stream", "_key"], na_position="last")
            .drop(columns="_key")
            .reset_index(drop=True)
        )

    def long_table(self) -> pd.DataFrame:
        """Every pairwise test of every level in one table (the ``--csv`` output).

        ``level`` is ``stream`` (a description of one stream: discordant counts and the
        error difference, no test), ``seeds`` (the test over the seeds of one data set,
        the verdict) or ``datasets`` (the test over the per-data-set mean errors). The
        verdict ``n/a`` is written ``not available``.
        """
        s = described(self.pairs).assign(level="stream")
        d = self.seeds.assign(
            level="seeds",
            err_a=self.seeds["mean_a"],
            err_b=self.seeds["mean_b"],
            diff=self.seeds["mean_diff"],
            # the seed-level interval is over seeds; the stream rows have none
            ci_low=self.seeds["ci_low"],
            ci_high=self.seeds["ci_high"],
        )
        o = self.ranking.pairs.assign(
            level="datasets",
            stream="",
            err_a=self.ranking.pairs["mean_a"],
            err_b=self.ranking.pairs["mean_b"],
            diff=self.ranking.pairs["mean_diff"],
        )
        cols = [
            "level",
            "stream",
            "stream_id",
            "stream_seed",
            "seed",
            "task",
            "a",
            "b",
            "n",
            "n_pairs",
            "err_a",
            "err_b",
            "errors_a",
            "errors_b",
            "a_worse",
            "b_worse",
            "a_better",
            "equal",
            "b_better",
            "diff",
            "ci_low",
            "ci_high",
            "test",
            "statistic",
            "wilcoxon_p",
            "sign_p",
            "p",
            "min_p",
            "seeds_needed",
            "family",
            "p_holm",
            "result",
            "reason",
            "p_a_better",
            "p_rope",
            "p_b_better",
            "config_a",
            "config_b",
        ]
        parts = [x.reindex(columns=cols) for x in (s, d, o) if len(x)]
        out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)
        # In words: CSV readers (pandas, R) read the code "n/a" as a missing value.
        out["result"] = out["result"].replace({"n/a": "not available"})
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every table (the ``--json`` output)."""

        def records(df: pd.DataFrame) -> list[dict[str, Any]]:
            return [{k: _plain(v) for k, v in row.items()} for row in df.to_dict("records")]

        fr = {k: _plain(v) for k, v in self.ranking.friedman.items()}
        return {
            "kbench_version": __version__,
            "statistics": STATISTICS,
            "metric": self.metric,
            "alpha": self.alpha,
            "rope": self.rope,
            "notes": list(self.notes),
            "configurations": records(self.configs.reset_index()),
            "leaderboard": records(self.leaderboard()),
            "stream_pairs": records(described(self.pairs)),
            "seed_pairs": records(self.seeds),
            "datasets": {
                "values": {
                    str(k): {str(c): _plain(v) for c, v in row.items()}
                    for k, row in self.ranking.values.to_dict("index").items()
                },
                "mean_ranks": {str(k): _plain(v) for k, v in self.ranking.mean_ranks.items()},
                "friedman": fr,
                "cd_groups": self.ranking.groups,
                "pairs": records(self.ranking.pairs),
                "excluded": self.ranking.excluded,
            },
            "win_tie_loss": records(self.wtl),
            "failed": records(
                self.runs[self.runs["status"] != "ok"][
                    ["task_id", "label", "stream", "seed", "status", "reason"]
                ]
            ),
        }


STREAM_RESULTS = {"win": "fewer errors: A", "loss": "fewer errors: B", "tie": "as many errors"}
"""How the written tables (CSV, JSON) name a per-stream row's result: a description of one
stream order, so never the words a verdict uses."""


def described(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per-stream rows as the written tables give them: ``result`` says which side made fewer
    errors on that stream, and ``reason`` that the row describes one stream order and tests
    nothing (the verdict is the test over seeds; docs/statistics.md)."""
    if pairs.empty:
        return pairs.assign(reason=pd.Series(dtype=object))
    return pairs.assign(
        result=pairs["result"].map(STREAM_RESULTS).fillna(pairs["result"]),
        reason="one stream order described; no test",
    )


def _plain(v: Any) -> Any:
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return None if not np.isfinite(v) else float(v)
    if isinstance(v, (np.bool_,)):
        return bool(v)
    if isinstance(v, pd.Series):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if v is pd.NA or v is pd.NaT:
        return None
    return v


STATISTICS = (
    "verdicts over seeds: exact Wilcoxon signed-rank on final errors, Holm over the pairs of "
    "a data set; per-stream rows describe, they do not test (docs/statistics.md)"
)
"""How this kbench decides a verdict (written into the JSON output)."""

STATS_CHANGES: tuple[tuple[str, str], ...] = ()
"""(kbench version, what changed) for each release that changed how a stored quantity a
verdict uses (the final errors, the outcomes, the flags) is computed, oldest first."""


def version_notes(runs: pd.DataFrame) -> list[str]:
    """Notes for a results folder whose runs were written by several kbench versions.

    Names the versions with their run counts, and each recorded change of the stored
    quantities between the oldest and the newest of them (:data:`STATS_CHANGES`).
    """
    if "kbench_version" not in runs.columns:
        return []
    counts = runs["kbench_version"].fillna("unknown").astype(str).value_counts()
    if len(counts) < 2:
        return []
    versions = sorted(counts.index, key=_version_tuple)
    listed = ", ".join(f"{v} ({counts[v]} runs)" for v in versions)
    known = [v for v in versions if v != "unknown"]
    changes = (
        [
            f"{v}: {what}"
            for v, what in STATS_CHANGES
            if _version_tuple(known[0]) < _version_tuple(v) <= _version_tuple(known[-1])
        ]
        if known
        else []
    )
    tail = (
        "; between them the stored quantities changed: " + "; ".join(changes) + " — rerun the "
        "older runs with --force before trusting verdicts that mix them"
        if changes
        else "; no recorded change of the stored quantities between them, and the tests "
        f"are those of kbench {__version__}"
    )
    return [f"runs written by {len(counts)} kbench versions: {listed}{tail}"]


def compare(
    results: Results,
    metric: str = "online_error",
    alpha: float = ALPHA,
    short: Callable[[str, str], str] | None = None,
    rope: float | None = None,
) -> Comparison:
    """Compare every pair of configurations at every level.

    Parameters
    ----------
    results
        The tables of a results folder.
    metric
        Final error compared across seeds and data sets: ``online_error`` (the
        prequential error, the default), ``test_error`` or ``final_epoch_error``.
        Per-stream tests always use the per-example online outcomes.
    alpha
        Significance level; intervals are at 1 − alpha.
    short
        ``short(kind, spec)`` shortening specs for labels (e.g. ``Registry.short``).
    rope
        Half-width of the region of practical equivalence for the Bayesian signed-rank test
        across data sets (in error units: 0.01 is one point); None leaves it out.

    Returns
    -------
    Comparison

    Raises
    ------
    NothingToCompareError
        No run, or no finished run.
    ResultsError
        Results written by a newer kbench, or a table kbench did not write.
    """
    if not 0 < alpha < 1:
        raise KbenchError(f"alpha must be in (0, 1), got {alpha:g}")
    runs, configs = prepare_runs(results, short)
    finals = final_errors(runs, metric)
    table = dataset_table(finals)
    labels = configs["label"]
    if rope is not None and not (rope >= 0 and math.isfinite(rope)):
        raise KbenchError(f"--rope must be a finite number >= 0, got {rope:g}")
    ranking = rank_configs(table, labels, alpha, rope=rope)
    # Display order: mean rank across data sets, then mean error for the unranked.
    mean_err = finals.groupby("config")["value"].mean()
    ranked = list(ranking.mean_ranks.index.map({v: k for k, v in labels.items()}))
    rest = sorted(
        (c for c in configs.index if c not in ranked),
        key=lambda c: (mean_err.get(c, math.inf), labels[c]),
    )
    order = ranked + rest
    configs = configs.loc[order].copy()
    configs["mean_rank"] = configs["label"].map(ranking.mean_ranks)
    configs["mean_error"] = configs.index.map(mean_err)
    grp = runs.groupby("config")
    configs["runs"] = grp.size().reindex(configs.index).fillna(0).astype(int)
    configs["ok"] = (
        grp["status"]
        .apply(lambda s: int((s == "ok").sum()))
        .reindex(configs.index)
        .fillna(0)
        .astype(int)
    )
    configs["failed"] = configs["runs"] - configs["ok"]
    configs["flags"] = grp["flags"].apply(reason_kinds).reindex(configs.index).fillna("")
    configs["offline"] = grp["offline"].any().reindex(configs.index).fillna(False)

    pairs = stream_pairs(runs, results.outcomes, order, alpha)
    seeds = seed_pairs(finals, order, alpha, pairs)
    wtl = win_tie_loss(pairs, list(configs["label"]))

    notes = stream_mismatches(runs) + version_notes(runs)
    n_fail = int((runs["status"] != "ok").sum())
    if n_fail:
        notes.append(
            f"{n_fail} of {len(runs)} tasks did not finish; they are left out of every test"
        )
    if len(configs) < 2:
        notes.append(
            f"only one algorithm configuration ({configs['label'].iloc[0]}): nothing to pair"
        )
    elif pairs.empty:
        notes.append("no two configurations finished on the same stream: nothing to pair")
    undecided = seeds[seeds["result"].isin(["cannot tell", "n/a"])] if len(seeds) else seeds
    for reason, g in undecided.groupby("reason", sort=False):
        where = ", ".join(sorted(g["stream"].astype(str).unique()))
        notes.append(f"no verdict over seeds on {where}: {reason}")
    if ranking.excluded:
        notes.append("left out of the ranking across data sets: " + "; ".join(ranking.excluded))
    if len(ranking.values) < 2 and len(configs) >= 2:
        notes.append(
            "ranks across data sets need at least two data sets; the Friedman test is not computed"
        )
    used = finals.drop_duplicates("stream").set_index("stream")["metric_used"]
    fallback = sorted(used[used != metric].index)
    if fallback:
        notes.append(f"{', '.join(fallback)}: no {metric}; online_error used there")
    flagged = runs[runs["flags"] != ""]
    for label, g in flagged.groupby("label", sort=False):
        where = ", ".join(sorted(g["stream"].astype(str).unique()))
        notes.append(
            f"degenerate learner: {label}: {reason_kinds(g['flags'])} ({len(g)} runs: {where})"
        )
    return Comparison(
        runs=runs,
        configs=configs,
        pairs=pairs,
        seeds=seeds,
        ranking=ranking,
        wtl=wtl,
        metric=metric,
        alpha=alpha,
        notes=notes,
        rope=rope,
    )
