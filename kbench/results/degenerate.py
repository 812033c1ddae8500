"""Degenerate learners: the one definition every kbench table and report uses.

A run is *degenerate* when its numbers say nothing about the algorithm: it learned
nothing, it stopped early, or it blew up. The checks, applied to the online
(prequential) results and to the held-out results separately:

``constant predictions``
    Online: every prediction of the second half of the first pass is the same value.
    Held-out: every prediction on the test split at the end is the same value.
``at the majority-class rate``
    Classification only. With ``n`` examples scored and majority-class rate ``m`` (the
    error of always predicting the most frequent label of that split), the run's
    error count ``k`` is at or above the lower end of the central 95 % binomial interval
    of ``Binomial(n, m)``: ``k >= binom.ppf(0.025, n, m)``. The learner is then not
    distinguishable from (or worse than) predicting the majority class. For the online
    error the examples are not independent draws, so the interval is a yardstick for
    "no better than chance", not a test.
``mean squared error not below the variance of y``
    Regression only. With ``n`` examples scored and ``v`` the variance of their targets
    (the mean squared error of always predicting their mean), the run's mean squared error
    is at or above ``v·(1 − z·√(2/n))``, the lower end of the central 95 % interval of the
    variance of ``n`` normal draws (``z`` = 1.96): the learner is not distinguishable from
    (or worse than) predicting the mean. A learner that predicts about 0 on targets far
    from 0 is caught here. As for the majority rate, a yardstick, not a test.
``saw k of n examples``
    The first pass ended before the stream did, other than by spending a label budget
    (``max_queries``) on purpose.
``non-finite outputs``
    The run ended ``diverged``: a prediction or statistic became NaN or infinite.

:func:`degenerate_reason` gives the reasons as one text ('' when the run is fine); the
runner stores it as the ``degenerate`` column of ``runs.parquet`` when a task finishes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from kbench.core.specs import spec_name

INTERVAL = 0.95
"""Coverage of the binomial interval around the majority-class rate."""

MARK = "⚠"
"""The mark tables and reports put next to a degenerate run or configuration."""

LEGEND = (
    f"{MARK} degenerate: constant predictions, error within the central "
    f"{INTERVAL:.0%} binomial interval of the majority-class rate (or worse), mean squared "
    "error not below the variance of y (regression), fewer examples seen than the stream "
    "holds, or non-finite outputs"
)

#: The standard normal quantile of the interval's lower end: 1.96 for 95 %.
_Z = 1.959963984540054


def _num(value: Any) -> float:
    """A float, NaN for a missing value."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        return math.nan
    return out


def _binom_ppf(q: float, n: int, p: float) -> float:
    """``scipy.stats.binom.ppf(q, n, p)`` for ``0 < q < 1``: the same SciPy function that
    ``binom.ppf`` calls, without importing ``scipy.stats`` (0.3 s), which every task's
    result would otherwise pay for."""
    if not (n >= 0 and 0.0 <= p <= 1.0):
        return math.nan  # outside binom's parameter range, as binom.ppf
    try:
        from scipy.special._ufuncs import _binom_ppf
    except ImportError:  # a SciPy that moved it: the public, slower way
        from scipy.stats import binom

        return float(binom.ppf(q, n, p))
    return float(_binom_ppf(q, n, p))


def at_majority_rate(error: float, majority: float, n: float) -> bool:
    """Whether an error rate over ``n`` examples is no better than the majority-class rate.

    True when ``round(error * n) >= binom.ppf((1 - INTERVAL) / 2, n, majority)``: the error
    count is inside (or above) the central ``INTERVAL`` binomial interval of the majority
    rate. False when any input is missing.
    """
    error, majority, n = _num(error), _num(majority), _num(n)
    if not (math.isfinite(error) and math.isfinite(majority) and math.isfinite(n)) or n < 1:
        return False
    n_int = int(n)
    count = round(error * n_int)
    q = (1 - INTERVAL) / 2
    if 0.0 <= majority <= 1.0:
        # Most counts are far from the quantile, on a side that bounds tell without computing
        # it (SciPy's special functions take a tenth of a second to import): the quantile is
        # at most the median, which is at most ceil(n·m) (a binomial's median is the floor or
        # the ceiling of its mean); and it is above n·m − t − 1 for Hoeffding's t, for which
        # P(X ≤ n·m − t) ≤ exp(−2t²/n) = q. The 1 of margin covers rounding in n·m.
        mean = n_int * majority
        if count >= math.ceil(mean) + 1:
            return True
        if count <= mean - math.sqrt(n_int * math.log(1 / q) / 2) - 1:
            return False
    return count >= _binom_ppf(q, n_int, majority)


def at_variance(mse: float, variance: float, n: float) -> bool:
    """Whether a mean squared error over ``n`` examples is no better than predicting the
    mean of the targets, whose mean squared error is their ``variance``.

    True when ``mse >= variance·(1 − z·√(2/n))``: the lower end of the central
    ``INTERVAL`` interval of the sample variance of ``n`` normal draws (its standard
    deviation is ``variance·√(2/n)``). False when any input is missing or the targets are
    constant (every learner would be "no better" than a zero variance).
    """
    mse, variance, n = _num(mse), _num(variance), _num(n)
    if not (math.isfinite(mse) and math.isfinite(variance) and math.isfinite(n)):
        return False
    if n < 2 or variance <= 0.0:
        return False
    return mse >= variance * (1.0 - _Z * math.sqrt(2.0 / n))


def degenerate_reason(run: Mapping[str, Any], seen: float | None = None) -> str:
    """Why a run is degenerate, as text ('' when it is not).

    Parameters
    ----------
    run
        A run row (as the runner writes it). Reads ``status``, ``task``, ``n``, ``seen``,
        ``query_budget``, ``stopped_at``, ``online_error``, ``majority_error`` (for
        regression: the variance of y),
        ``constant_predictions``, ``test_error``, ``test_n``, ``majority_test_error`` and
        ``test_constant_predictions``; a missing column skips its check.
    seen
        Examples of the first pass, when the run row has no ``seen`` (results written
        before kbench recorded it: the caller reads it from the trace).
    """
    status = run.get("status")
    if status == "diverged":
        return "non-finite outputs (diverged)"
    if status != "ok":
        return ""
    reasons: list[str] = []
    classify = run.get("task") != "regression"
    n = _num(run.get("n"))
    if run.get("constant_predictions") is True or run.get("constant_predictions") == 1:
        reasons.append("online: constant predictions")
    online, maj = _num(run.get("online_error")), _num(run.get("majority_error"))
    n_seen = _num(run.get("seen", seen))
    if not math.isfinite(n_seen):
        n_seen = n
    if classify and at_majority_rate(online, maj, n_seen):
        reasons.append(f"online: at the majority-class rate ({online:.1%} vs {maj:.1%})")
    if not classify and at_variance(online, maj, n_seen):
        reasons.append(
            f"online: mean squared error not below the variance of y ({online:.4g} vs {maj:.4g})"
        )
    if run.get("test_constant_predictions") is True or run.get("test_constant_predictions") == 1:
        reasons.append("held-out: constant predictions")
    test, maj_t = _num(run.get("test_error")), _num(run.get("majority_test_error"))
    if classify and at_majority_rate(test, maj_t, _num(run.get("test_n"))):
        reasons.append(f"held-out: at the majority-class rate ({test:.1%} vs {maj_t:.1%})")
    if not classify and at_variance(test, maj_t, _num(run.get("test_n"))):
        reasons.append(
            f"held-out: mean squared error not below the variance of y ({test:.4g} vs {maj_t:.4g})"
        )
    budget = _num(run.get("query_budget"))
    stopped = _num(run.get("stopped_at"))
    by_budget = math.isfinite(budget) and budget > 0 and math.isfinite(stopped)
    if math.isfinite(n_seen) and math.isfinite(n) and n_seen < n and not by_budget:
        reasons.append(f"saw {int(n_seen)} of {int(n)} examples")
    return "; ".join(reasons)


def degenerate_column(runs: pd.DataFrame, traces: pd.DataFrame | None = None) -> pd.Series:
    """:func:`degenerate_reason` of every row of a runs table.

    Rows that already hold a ``degenerate`` text keep it; the others (results written
    before kbench stored the column) are computed, reading examples seen from ``traces``.
    """
    last_seen: dict[str, float] = {}
    if traces is not None and not traces.empty and {"task_id", "seen"} <= set(traces.columns):
        t = traces[traces["epoch"] == 1] if "epoch" in traces.columns else traces
        last_seen = t.groupby("task_id")["seen"].max().to_dict()
    stored = runs["degenerate"] if "degenerate" in runs.columns else None
    out = []
    for i, row in zip(runs.index, runs.to_dict("records"), strict=True):
        if stored is not None and isinstance(stored.loc[i], str):
            out.append(stored.loc[i])
            continue
        out.append(degenerate_reason(row, last_seen.get(row.get("task_id"))))
    return pd.Series(out, index=runs.index, dtype=object)


def reason_kinds(reasons: Iterable[str]) -> str:
    """The distinct reasons of several runs, without their per-run figures, as one text."""
    kinds: dict[str, None] = {}
    for text in reasons:
        for part in str(text or "").split("; "):
            part = re.sub(r" \(.*\)$", "", part.strip())
            part = re.sub(
                r"^saw \d+ of \d+ examples$", "saw fewer examples than the stream holds", part
            )
            if part:
                kinds[part] = None
    return "; ".join(sorted(kinds))


def marked_cells(reasons: str) -> set[str]:
    """The cells of a leaderboard row a degenerate mark belongs on: ``online`` or
    ``held-out`` when the reasons are about that error (``held-out: at the majority-class
    rate``), ``label`` (the configuration) for the others. Every view places the mark by it."""
    out = set()
    for reason in filter(None, (x.strip() for x in reasons.split(";"))):
        kind = reason.split(":")[0]
        out.add(kind if kind in ("online", "held-out") else "label")
    return out or {"label"}


def mark(label: str, reason: str, marker: str = MARK) -> str:
    """A label with the degenerate mark appended when ``reason`` is not empty."""
    return f"{label} {marker}" if reason else label


def degenerate_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """The degenerate runs of a runs table, per data set and algorithm specification.

    Columns: ``dataset``, ``stream``, ``algorithm_spec``, ``runs`` (of that configuration on
    that stream), ``degenerate`` (how many are degenerate) and ``reasons``
    (:func:`reason_kinds`). Only configurations with at least one degenerate run.
    """
    cols = ["dataset", "stream", "algorithm_spec", "runs", "degenerate", "reasons"]
    if runs is None or runs.empty or "degenerate" not in runs.columns:
        return pd.DataFrame(columns=cols)
    r = runs.assign(
        _bad=runs["degenerate"].fillna("").astype(str) != "",
        dataset=runs["dataset"] if "dataset" in runs else runs["stream"].map(spec_name),
    )
    g = r.groupby(["dataset", "stream", "algorithm_spec"], sort=True)
    out = pd.DataFrame(
        {
            "runs": g.size(),
            "degenerate": g["_bad"].sum().astype(int),
            "reasons": g["degenerate"].agg(reason_kinds),
        }
    ).reset_index()
    return out[out["degenerate"] > 0][cols].reset_index(drop=True)
