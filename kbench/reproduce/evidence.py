"""Selecting a claim's runs and the paired statistics that decide it.

Qualitative claims ("SVMD makes about half as many errors as NORMA") are decided by
kbench's paired statistics (:mod:`kbench.analysis.statistics`) with the paired streams
(seeds, and problems × seeds) as the replicates: the exact Wilcoxon signed-rank test on a
final quantity of the two arms, Holm over the tests one claim needs (docs/statistics.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kbench.analysis.statistics import (
    holm,
    min_p_value,
    min_wilcoxon_n,
    paired_final_test,
    paired_t,
)
from kbench.core.errors import KbenchError
from kbench.reproduce.verdicts import CONSISTENT, NOT, REPRODUCED, Finding
from kbench.results.store import Results

ALPHA = 0.05


def spec_params(spec: str) -> dict[str, str]:
    """The parameters of a canonical spec string ``name[a=1,b=2]`` as strings."""
    if "[" not in spec:
        return {}
    inner = spec[spec.index("[") + 1 : spec.rindex("]")]
    out = {}
    for part in inner.split(","):
        if "=" in part:
            key, value = part.split("=", 1)
            out[key.strip()] = value.strip()
    return out


def _same(a: str, b: Any) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-9)
    except (TypeError, ValueError):
        return str(a) == str(b)


def select(
    results: Results,
    algorithm: str,
    *,
    stream: str | None = None,
    exclude: Sequence[str] = (),
    epochs: int | None = None,
    **params: Any,
) -> pd.DataFrame:
    """Finished runs of one arm.

    Parameters
    ----------
    results : Results
        The tables.
    algorithm : str
        Algorithm name.
    stream : str, optional
        A substring the stream label must contain.
    exclude : sequence of str
        Substrings the stream label must not contain.
    epochs : int, optional
        Number of passes.
    **params
        Algorithm parameters the run's spec must have (compared as numbers where they are).

    Returns
    -------
    pandas.DataFrame
        The matching rows of ``results.runs`` with status ok.
    """
    runs = results.runs
    if not len(runs):
        return runs
    mask = (runs["status"] == "ok") & (runs["algorithm"] == algorithm)
    if stream is not None:
        mask &= runs["stream"].astype(str).str.contains(stream, regex=False)
    for word in exclude:
        mask &= ~runs["stream"].astype(str).str.contains(word, regex=False)
    if epochs is not None:
        mask &= runs["epochs"] == epochs
    sub = runs[mask]
    if params:
        keep = [
            all(k in p and _same(p[k], v) for k, v in params.items())
            for p in sub["algorithm_spec"].map(spec_params)
        ]
        sub = sub[np.asarray(keep, dtype=bool)] if len(sub) else sub
    return sub


def need(*arms: pd.DataFrame) -> None:
    """Raise KbenchError when an arm of the claim has no finished run."""
    if any(len(a) == 0 for a in arms):
        raise KbenchError("an arm of this claim has no finished run")


def mean_sd(values: Sequence[float] | pd.Series, spec: str = ".3f") -> str:
    """``mean ± sd`` over seeds (sd with n − 1; no spread for one value)."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if not len(v):
        return "–"
    if len(v) == 1:
        return format(v[0], spec)
    return f"{format(v.mean(), spec)} ± {format(v.std(ddof=1), spec)}"


def side_by_side(
    column: str, template: str, spec: str = ".2f", *, scale: float = 1.0
) -> Callable[[pd.DataFrame, pd.DataFrame], str]:
    """A ``describe`` for :func:`fewer_than` and :func:`same_as`: ``template`` with the two
    arms' :func:`mean_sd` of ``column`` (times ``scale``, formatted by ``spec``) in its two
    ``{}``, arm a's first."""

    def describe(a: pd.DataFrame, b: pd.DataFrame) -> str:
        return template.format(
            *(mean_sd(scale * arm[column].astype(float), spec) for arm in (a, b))
        )

    return describe


def in_db(metric: str, column: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """A ``prepare`` for :func:`fewer_than` and :func:`same_as`: adds ``column``, the runs'
    ``metric`` (an MSE) in decibels, 10 log10."""

    def prepare(runs: pd.DataFrame) -> pd.DataFrame:
        return runs.assign(**{column: 10 * np.log10(runs[metric].astype(float))})

    return prepare


def paired(a: pd.DataFrame, b: pd.DataFrame, metric: str) -> dict[str, Any]:
    """Paired test of ``metric`` (a − b) over the streams both arms ran on.

    Runs are paired by stream id, so both saw the identical stream; the streams (seeds, and
    problems × seeds) are the replicates. The test is :func:`kbench.analysis.statistics.paired_final_test`
    (exact Wilcoxon signed-rank); ``problems`` counts the distinct data sets paired, so that
    a count of streams can be said in seeds.
    """
    left = a.groupby("stream_id")[metric].mean()
    right = b.groupby("stream_id")[metric].mean()
    both = left.index.intersection(right.index)
    if not len(both):
        raise KbenchError("the two arms share no stream")
    d = (left[both] - right[both]).astype(float).to_numpy()
    streams = a.drop_duplicates("stream_id").set_index("stream_id")
    problems = streams.loc[both, "stream"].nunique() if "stream" in streams.columns else 1
    return paired_final_test(d, ALPHA) | {
        "metric": metric,
        "problems": max(1, int(problems)),
        "diffs": d.tolist(),
    }


def adjust(*tests: dict[str, Any]) -> None:
    """Holm over the tests one claim needs: sets ``p_holm`` and ``family`` on each."""
    adjusted = holm([t["p"] for t in tests])
    for t, p in zip(tests, adjusted, strict=True):
        t["p_holm"], t["family"] = float(p), len(tests)


def holm_paired(*comparisons: tuple[pd.DataFrame, pd.DataFrame, str]) -> list[dict[str, Any]]:
    """The paired tests (:func:`paired`) of one claim's comparisons, each ``(a, b, metric)``,
    in order, Holm over them (:func:`adjust`)."""
    tests = [paired(a, b, metric) for a, b, metric in comparisons]
    adjust(*tests)
    return tests


def significant(t: dict[str, Any], lower: bool = True) -> bool:
    """The test reached α after Holm, with a below b (``lower``) or above."""
    direction = t["mean_diff"] < 0 if lower else t["mean_diff"] > 0
    return bool(t["n_pairs"] >= 2 and t.get("p_holm", t["p"]) < ALPHA and direction)


def seeds_needed(*tests: dict[str, Any]) -> int | None:
    """Seeds per problem with which the tests could reach α after Holm, when the streams
    run cannot (None when they can)."""
    need = None
    for t in tests:
        family = t.get("family", 1)
        if family * min_p_value(t["n_pairs"]) >= ALPHA:
            n = math.ceil(min_wilcoxon_n(ALPHA, family) / t["problems"])
            need = n if need is None else max(need, n)
    return need


def consistent(*tests: dict[str, Any]) -> str:
    """``consistent, not significant``, with the seeds needed when the floor blocks it."""
    need = seeds_needed(*tests)
    return CONSISTENT + (f" (needs ≥ {need} seeds)" if need is not None else "")


def equivalent(t: dict[str, Any], margin: float) -> bool:
    """Two one-sided tests at α: the (1 − 2α) t interval of the mean difference lies within
    ±margin (the difference is significantly smaller than the margin both ways)."""
    if t["n_pairs"] < 2:
        return False
    _, lo, hi, _, _ = paired_t(np.asarray(t["diffs"], dtype=float), 2 * ALPHA)
    return bool(-margin < lo and hi < margin)


def about_the_same(t: dict[str, Any], value: str, margin: float, within: str, why: str) -> Finding:
    """The finding of a claim that two arms are about the same: reproduced when two one-sided
    tests put the mean difference within ±``margin`` (``within`` says it in words: "1 dB"),
    consistent when the paired test finds no significant difference, else not."""
    if equivalent(t, margin):
        return Finding(value, REPRODUCED, f"equivalent within {within} (TOST); {why}")
    if not t["p_holm"] < ALPHA:
        return Finding(
            value, CONSISTENT, f"no significant difference, equivalence not shown; {why}"
        )
    return Finding(value, NOT, f"significantly different; {why}")


def _p(p: float) -> str:
    return "–" if p is None or math.isnan(p) else (f"{p:.2g}" if p < 0.001 else f"{p:.3f}")


def seedtest(r: dict[str, Any]) -> str:
    """A paired test in words: the streams, which arm was lower how often, p (and Holm's)."""
    holm_txt = (
        f", Holm over {r['family']} tests p = {_p(r['p_holm'])}" if r.get("family", 1) > 1 else ""
    )
    return (
        f"signed-rank test over {r['n_pairs']} paired streams: "
        f"{r['a_better']} lower, {r['b_better']} higher, p = {_p(r['p'])}{holm_txt}"
    )


def fewer(t: dict[str, Any], value: str, otherwise: str) -> Finding:
    """The finding of a claim that arm a keeps less of the test's metric than arm b: reproduced
    when significant, consistent when lower on average, else not (``otherwise`` says so)."""
    if significant(t):
        return Finding(value, REPRODUCED, f"significantly fewer; {seedtest(t)}")
    if t["mean_diff"] < 0:
        return Finding(value, consistent(t), f"fewer on average; {seedtest(t)}")
    return Finding(value, NOT, f"{otherwise}; {seedtest(t)}")


def _paired_arms(
    results: Results,
    a: str,
    b: str,
    metric: str,
    prepare: Callable[[pd.DataFrame], pd.DataFrame] | None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The runs of algorithms a and b (``prepare``d), and the paired test of ``metric`` over
    the streams both ran, Holm over this one test."""
    arm_a, arm_b = select(results, a), select(results, b)
    need(arm_a, arm_b)
    if prepare is not None:
        arm_a, arm_b = prepare(arm_a), prepare(arm_b)
    [t] = holm_paired((arm_a, arm_b, metric))
    return arm_a, arm_b, t


def fewer_than(
    results: Results,
    a: str,
    b: str,
    metric: str,
    describe: Callable[[pd.DataFrame, pd.DataFrame], str],
    *,
    otherwise: str = "not lower",
    prepare: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
) -> Finding:
    """The finding of a claim that algorithm ``a`` has less of ``metric`` than ``b``, paired
    over the streams both ran (Holm over this one test). ``prepare`` adds a column the
    claim reads (its metric in dB, say) to each arm's runs; ``describe(a_runs, b_runs)``
    gives the value shown."""
    arm_a, arm_b, t = _paired_arms(results, a, b, metric, prepare)
    return fewer(t, describe(arm_a, arm_b), otherwise)


def same_as(
    results: Results,
    a: str,
    b: str,
    metric: str,
    describe: Callable[[pd.DataFrame, pd.DataFrame], str],
    *,
    margin: float,
    within: str,
    unit: str = "",
    prepare: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
) -> Finding:
    """The finding of a claim that algorithm ``a`` has about ``b``'s ``metric``, paired over
    the streams both ran (:func:`about_the_same`, ±``margin``, said as ``within``); the gap
    is said in ``unit`` (" dB"). ``prepare`` and ``describe`` as for :func:`fewer_than`."""
    arm_a, arm_b, t = _paired_arms(results, a, b, metric, prepare)
    why = f"gap {t['mean_diff']:+.2f}{unit}; {seedtest(t)}"
    return about_the_same(t, describe(arm_a, arm_b), margin, within, why)
