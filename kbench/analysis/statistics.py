"""The single tests kbench's comparisons are made of: pure functions on counts or on arrays
of paired differences, with no results table and no display.

- per stream: the exact McNemar test, Wilson's interval and Newcombe's interval for the
  difference of two paired proportions, the paired t test;
- over seeds or data sets: the sign test, the Wilcoxon signed-rank test (exact, ties
  included: :func:`signed_rank_exact`), the Bayesian signed-rank test with a region of
  practical equivalence, and :func:`paired_final_test`, which a verdict over seeds uses;
- families of tests: Holm's step-down adjustment.

The tests on ranks across data sets (Friedman's, Nemenyi's) are in
:mod:`kbench.analysis.rank_tests`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats

from kbench.core import seeds
from kbench.core.errors import KbenchError

ALPHA = 0.05
"""Default significance level (and 1 − confidence level of the intervals)."""


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
    q = _t_quantile(alpha, n - 1)
    p = float(2 * stats.t.sf(abs(t), n - 1))
    return mean, mean - q * se, mean + q * se, t, p


def sign_test(d: npt.ArrayLike) -> tuple[int, int, int, float]:
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
    return neg, zeros, pos, _sign_p(neg, neg + pos)


# The tests of a study ask for the same few quantiles and binomial tails thousands of
# times (one per pair and data set, on as many seeds): each is computed once.
@functools.lru_cache(maxsize=4096)
def _t_quantile(alpha: float, dof: int) -> float:
    """The t distribution's 1 − alpha/2 quantile with ``dof`` degrees of freedom."""
    return float(stats.t.ppf(1 - alpha / 2, dof))


@functools.lru_cache(maxsize=4096)
def _sign_p(k: int, n: int) -> float:
    """Two-sided p-value of k negatives among n non-zero differences (sign test)."""
    return float(stats.binomtest(k, n, 0.5).pvalue)


def wilcoxon_test(d: npt.ArrayLike) -> tuple[float, float]:
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


@functools.lru_cache(maxsize=1024)
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


def signed_rank_exact(d: npt.ArrayLike) -> tuple[float, float, int]:
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
        Seed of the draws (the result is reproducible); they come from its
        ``resampling`` stream (:mod:`kbench.core.seeds`).

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
    rng = seeds.rng(seed, "resampling")
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


#: The columns of a :func:`paired_final_test` result after ``n_pairs``, in the order the
#: tables of pairs show them.
PAIRED_TEST_COLUMNS = (
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
)


def paired_final_test(d: npt.ArrayLike, alpha: float = ALPHA, family: int = 1) -> dict[str, Any]:
    """Test paired differences of final errors (a − b) over seeds or data sets.

    The exact Wilcoxon signed-rank test (:func:`signed_rank_exact`): the pairs (seeds, or
    data sets) are the replicates. With it: the sign test's p-value, the mean difference
    with a t interval at 1 − ``alpha``, the smallest p-value the test can reach with the
    pairs given and the fewest pairs with which it could reach ``alpha`` after Holm over a
    family of ``family`` tests. Fewer than two pairs: no test (``test`` is ``none`` and the
    p-values are NaN).
    """
    d = np.asarray(d, dtype=float)
    d = np.asarray(d[~np.isnan(d)])
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


def _result(diff: float, p_adj: float, alpha: float) -> str:
    if pd.notna(p_adj) and p_adj < alpha and pd.notna(diff) and diff != 0:
        return "win" if diff < 0 else "loss"
    return "tie"
