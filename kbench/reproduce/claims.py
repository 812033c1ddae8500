"""``kbench reproduce``: the seed papers' experiments as studies, with the papers' claims checked.

Each paper is a study file shipped with kbench (``kbench/studies/reproduce/<paper>.toml``, and
``<paper>-quick.toml`` for the reduced version CI runs) plus a list of :class:`Claim`. A claim
names the paper's value and the data set kbench actually uses, and evaluates itself over the
results tables: it returns kbench's value with its spread over seeds and a verdict with the
reason. Qualitative claims ("SVMD makes about half as many errors as NORMA") are decided by
kbench's paired statistics (:mod:`kbench.analysis.statistics`) with the paired streams (seeds, and problems
× seeds) as the replicates: the exact Wilcoxon signed-rank test on a final quantity of the two
arms, Holm over the tests one claim needs (docs/statistics.md). A claim is ``reproduced`` only
when its tests reach α after Holm; a claim whose direction holds without significance is
``consistent, not significant`` (with the seeds that would be needed when the seeds run cannot
reach α at all); ``partly`` is a significant result with a quantitative part missed; and
``not reproduced`` the rest.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
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
from kbench.core.fileio import atomic_write_text
from kbench.reproduce.causes import cause
from kbench.results.store import Results

STUDIES = Path(__file__).parents[1] / "studies" / "reproduce"
REPRODUCED = "reproduced"
PARTLY = "partly"
CONSISTENT = "consistent, not significant"
NOT = "not reproduced"
VERDICTS = (REPRODUCED, PARTLY, CONSISTENT, NOT)
"""The verdicts a claim can get; ``consistent, not significant`` may carry ``(needs ≥ N
seeds)``."""
SMOKE = "smoke run: "
"""Prefix of every verdict of ``kbench reproduce --quick`` (quick sizes, not the paper's)."""
ALPHA = 0.05


def base_verdict(verdict: str) -> str:
    """The verdict of :data:`VERDICTS` a verdict string starts with (after a smoke-run prefix)."""
    v = verdict.removeprefix(SMOKE)
    for name in VERDICTS:
        if v == name or v.startswith(name + " "):
            return name
    raise ValueError(f"verdict must start with one of {VERDICTS}, got {verdict!r}")


# ---------------------------------------------------------------------------------------------
# Claims and papers
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """What kbench measured for one claim.

    Attributes
    ----------
    value : str
        kbench's value, with its spread over seeds (mean ± sd).
    verdict : str
        One of :data:`VERDICTS` (``consistent, not significant`` may say how many seeds
        would be needed).
    reason : str
        Why that verdict: the numbers and the test behind it.
    """

    value: str
    verdict: str
    reason: str

    def __post_init__(self) -> None:
        base_verdict(self.verdict)


@dataclass(frozen=True)
class Claim:
    """One claim of a paper and how kbench checks it.

    Attributes
    ----------
    id : str
        The claim's id in the paper's spec (R1, C10, 9, ...).
    text : str
        What the paper claims, in one sentence.
    paper : str
        The paper's value.
    dataset : str
        The data set kbench uses, naming any stand-in.
    evaluate : callable
        ``evaluate(results) -> Finding`` over the tables of the paper's study.
    """

    id: str
    text: str
    paper: str
    dataset: str
    evaluate: Callable[[Results], Finding]


@dataclass(frozen=True)
class Paper:
    """A seed paper: its study files, the algorithms they need, its claims.

    Attributes
    ----------
    key : str
        The name given to ``kbench reproduce``.
    title : str
        Authors, title and venue.
    algorithms : tuple of str
        Registered algorithms the study needs.
    claims : tuple of Claim
        The claims checked.
    references : tuple of dict
        Published values marked in the report (see :func:`kbench.report.html.render_report`).
    """

    key: str
    title: str
    algorithms: tuple[str, ...]
    claims: tuple[Claim, ...]
    references: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    def study(self, quick: bool) -> Path:
        """The study file of the full or the quick version."""
        return STUDIES / (f"{self.key}-quick.toml" if quick else f"{self.key}.toml")


# ---------------------------------------------------------------------------------------------
# Selecting runs and paired statistics
# ---------------------------------------------------------------------------------------------


def _params(spec: str) -> dict[str, str]:
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
            for p in sub["algorithm_spec"].map(_params)
        ]
        sub = sub[np.asarray(keep, dtype=bool)] if len(sub) else sub
    return sub


def _need(*arms: pd.DataFrame) -> None:
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


def _p(p: float) -> str:
    return "–" if p is None or math.isnan(p) else (f"{p:.2g}" if p < 0.001 else f"{p:.3f}")


def _seedtest(r: dict[str, Any]) -> str:
    holm_txt = (
        f", Holm over {r['family']} tests p = {_p(r['p_holm'])}" if r.get("family", 1) > 1 else ""
    )
    return (
        f"signed-rank test over {r['n_pairs']} paired streams: "
        f"{r['a_better']} lower, {r['b_better']} higher, p = {_p(r['p'])}{holm_txt}"
    )


# ---------------------------------------------------------------------------------------------
# SVMD (specs/000)
# ---------------------------------------------------------------------------------------------


def _svmd_three_arms(
    stream: str,
    exclude: Sequence[str],
    lam: float,
    tau: float,
    lo: float = 0.3,
    hi: float = 0.75,
) -> Callable[[Results], Finding]:
    """R1/R2: final error SVMD(λ) < SVMD(λ = 0) < NORMA(τ), SVMD/NORMA in [lo, hi]."""

    def evaluate(results: Results) -> Finding:
        smd = select(results, "svmd", stream=stream, exclude=exclude, lam=lam)
        one = select(results, "svmd", stream=stream, exclude=exclude, lam=0.0)
        nor = select(results, "norma", stream=stream, exclude=exclude, tau=tau)
        _need(smd, one, nor)
        e_s, e_1, e_n = (x["online_error"].to_numpy(float) for x in (smd, one, nor))
        ratio = smd.groupby("stream_id")["online_error"].mean() / nor.groupby("stream_id")[
            "online_error"
        ].mean().replace(0, np.nan)
        t_n = paired(smd, nor, "online_error")
        t_1 = paired(smd, one, "online_error")
        adjust(t_n, t_1)
        value = (
            f"SVMD {mean_sd(e_s)}, λ=0 {mean_sd(e_1)}, NORMA {mean_sd(e_n)}; "
            f"ratio {mean_sd(ratio.dropna(), '.2f')}"
        )
        order = e_s.mean() < e_1.mean() < e_n.mean()
        in_band = lo <= float(ratio.mean()) <= hi
        why = f"SVMD vs NORMA: {_seedtest(t_n)}; SVMD vs λ=0: {_seedtest(t_1)}"
        if significant(t_n) and significant(t_1) and order and in_band:
            return Finding(value, REPRODUCED, f"order and ratio as in the paper; {why}")
        if significant(t_n):
            miss = [] if order else ["the order of the three arms differs"]
            if not significant(t_1):
                miss.append("SVMD is not significantly below λ=0")
            if not in_band:
                miss.append(f"the ratio is outside [{lo}, {hi}]")
            return Finding(value, PARTLY, f"SVMD beats NORMA but {' and '.join(miss)}; {why}")
        if t_n["mean_diff"] < 0:
            return Finding(value, consistent(t_n, t_1), f"SVMD lower on average; {why}")
        return Finding(value, NOT, f"SVMD does not make fewer errors; {why}")

    return evaluate


def _svmd_counting(results: Results) -> Finding:
    """R4: ν-SVMD(0.95) ≤ 0.25, ν-NORMA ≥ 0.75, SVMD(λ=0) < NORMA on the counting sequence."""
    smd = select(results, "svmd", stream="counting", lam=0.95)
    one = select(results, "svmd", stream="counting", lam=0.0)
    nor = select(results, "norma", stream="counting")
    _need(smd, one, nor)
    e_s, e_1, e_n = (x["online_error"].to_numpy(float) for x in (smd, one, nor))
    t_n = paired(smd, nor, "online_error")
    t_1 = paired(one, nor, "online_error")
    adjust(t_n, t_1)
    value = f"SVMD {mean_sd(e_s)}, λ=0 {mean_sd(e_1)}, NORMA {mean_sd(e_n)}"
    checks = {
        "SVMD ≤ 0.25": e_s.mean() <= 0.25,
        "NORMA ≥ 0.75": e_n.mean() >= 0.75,
        "λ=0 beats NORMA significantly": significant(t_1),
    }
    failed = [k for k, ok in checks.items() if not ok]
    why = f"SVMD vs NORMA: {_seedtest(t_n)}; λ=0 vs NORMA: {_seedtest(t_1)}"
    if not failed and significant(t_n):
        return Finding(value, REPRODUCED, f"all three checks hold; {why}")
    if significant(t_n):
        return Finding(value, PARTLY, f"SVMD beats NORMA, but not: {', '.join(failed)}; {why}")
    if t_n["mean_diff"] < 0 and t_1["mean_diff"] < 0:
        return Finding(value, consistent(t_n, t_1), f"lower on average; {why}")
    return Finding(value, NOT, f"not: {', '.join(failed) or 'SVMD beats NORMA'}; {why}")


SVMD = Paper(
    key="svmd",
    title="Vishwanathan, Schraudolph and Smola, Step size adaptation in RKHS for online learning (JMLR 2006)",
    algorithms=("svmd", "norma"),
    claims=(
        Claim(
            "R1",
            "USPS 0–4 vs 5–9: final error SVMD(λ=0.95) < SVMD(λ=0) < NORMA(τ=10), SVMD about half of NORMA",
            "ratio ≈ 0.5 (read off Fig. 3)",
            "usps_like[positive=5-9] (stand-in for USPS)",
            _svmd_three_arms("positive=5-9", (), 0.95, 10.0),
        ),
        Claim(
            "R2",
            "USPS 10-class: final error SVMD(λ=0.99) < SVMD(λ=0) < NORMA(τ=100), SVMD about half of NORMA",
            "ratio ≈ 0.5 (read off Fig. 4)",
            "usps_like, 10 classes (stand-in for USPS)",
            _svmd_three_arms("usps_like", ("positive", "counting"), 0.99, 100.0),
        ),
        Claim(
            "R4",
            "Counting sequence: ν-SVMD(λ=0.95) error < 19%, ν-NORMA near chance, SVMD(λ=0) < NORMA",
            "SVMD < 0.19, NORMA ≈ 0.9",
            "usps_like counting sequence (3 digits × 1 run; quick: 2 × 2)",
            _svmd_counting,
        ),
    ),
    references=(
        {
            "metric": "online_error",
            "value": 0.19,
            "label": "paper: ν-SVMD < 19%",
            "stream": "counting",
        },
        {
            "metric": "online_error",
            "value": 0.9,
            "label": "paper: ν-NORMA ≈ 90%",
            "stream": "counting",
        },
    ),
)


# ---------------------------------------------------------------------------------------------
# Ramp SVM (specs/001)
# ---------------------------------------------------------------------------------------------


def _ramp_arms(results: Results) -> dict[str, pd.DataFrame]:
    arms = {
        "OnlineSVM^R": select(results, "online_svm_r", m=None),
        "IDSVM": select(results, "idsvm"),
        "PA": select(results, "pa"),
        "LIBSVM": select(results, "libsvm"),
    }
    _need(*arms.values())
    return arms


def _ramp_accuracy(results: Results) -> Finding:
    """Claim 9: OnlineSVM^R ≥ IDSVM + 1 and ≥ LIBSVM + 1 point; #SV ≤ 0.3 × IDSVM."""
    a = _ramp_arms(results)
    r, i, lib = a["OnlineSVM^R"], a["IDSVM"], a["LIBSVM"]
    acc = {k: 100 * (1 - v["test_error"].astype(float)) for k, v in a.items()}
    gain_i = acc["OnlineSVM^R"].mean() - acc["IDSVM"].mean()
    gain_l = acc["OnlineSVM^R"].mean() - acc["LIBSVM"].mean()
    sv_ratio = r["n_support"].mean() / max(i["n_support"].mean(), 1.0)
    t_i, t_l = paired(r, i, "test_error"), paired(r, lib, "test_error")
    adjust(t_i, t_l)
    value = (
        f"accuracy R {mean_sd(acc['OnlineSVM^R'], '.1f')}, IDSVM {mean_sd(acc['IDSVM'], '.1f')}, "
        f"LIBSVM {mean_sd(acc['LIBSVM'], '.1f')}; #SV R/IDSVM {sv_ratio:.2f}"
    )
    why = f"vs IDSVM {gain_i:+.1f} pt ({_seedtest(t_i)}); vs LIBSVM {gain_l:+.1f} pt ({_seedtest(t_l)})"
    both = significant(t_i) and significant(t_l)
    if both and gain_i >= 1.0 and gain_l >= 1.0 and sv_ratio <= 0.3:
        return Finding(value, REPRODUCED, why)
    if significant(t_i) or significant(t_l):
        return Finding(
            value, PARTLY, f"not every gain significant and ≥ 1 point with #SV ratio ≤ 0.3; {why}"
        )
    if gain_i > 0 and gain_l > 0:
        return Finding(value, consistent(t_i, t_l), f"more accurate on average; {why}")
    return Finding(value, NOT, f"OnlineSVM^R is not more accurate; {why}")


def _ramp_sparsity(results: Results) -> Finding:
    """Claim 12: OnlineSVM^R keeps fewer support vectors than IDSVM."""
    a = _ramp_arms(results)
    t = paired(a["OnlineSVM^R"], a["IDSVM"], "n_support")
    adjust(t)
    value = f"#SV R {mean_sd(a['OnlineSVM^R']['n_support'], '.0f')}, IDSVM {mean_sd(a['IDSVM']['n_support'], '.0f')}"
    if significant(t):
        return Finding(value, REPRODUCED, f"significantly fewer; {_seedtest(t)}")
    if t["mean_diff"] < 0:
        return Finding(value, consistent(t), f"fewer on average; {_seedtest(t)}")
    return Finding(value, NOT, f"not sparser; {_seedtest(t)}")


def _ramp_pa(results: Results) -> Finding:
    """Claim 13: PA is the least accurate and the densest."""
    a = _ramp_arms(results)
    err = {k: v["test_error"].astype(float).mean() for k, v in a.items()}
    sv = {k: v["n_support"].astype(float).mean() for k, v in a.items()}
    worst = max(err, key=err.get)
    densest = max(sv, key=sv.get)
    t_e = paired(a["PA"], a["OnlineSVM^R"], "test_error")
    t_s = paired(a["PA"], a["OnlineSVM^R"], "n_support")
    adjust(t_e, t_s)
    value = f"PA error {mean_sd(a['PA']['test_error'])}, #SV {sv['PA']:.0f}; least accurate: {worst}; densest: {densest}"
    why = f"PA vs OnlineSVM^R: error {_seedtest(t_e)}; #SV {_seedtest(t_s)}"
    sig_e, sig_s = significant(t_e, lower=False), significant(t_s, lower=False)
    if worst == "PA" and densest == "PA":
        if sig_e and sig_s:
            return Finding(value, REPRODUCED, why)
        if sig_e or sig_s:
            return Finding(value, PARTLY, f"only one of the two is significant; {why}")
        return Finding(value, consistent(t_e, t_s), f"both hold on average; {why}")
    if (worst == "PA" and sig_e) or (densest == "PA" and sig_s):
        return Finding(value, PARTLY, f"only one of the two holds; {why}")
    return Finding(value, NOT, f"PA is not both least accurate and densest; {why}")


def _requested(results: Results, arm: pd.DataFrame) -> float:
    """Mean kernel values an arm requested (what an implementation without a cache
    computes, the paper's cost measure), from the last checkpoint of each run."""
    tr = results.traces
    col = "kernel_requests" if "kernel_requests" in tr else "kernel_evals"
    last = tr[tr["task_id"].isin(arm["task_id"])].sort_values("seen").groupby("task_id").last()
    return float(last[col].mean())


def _ramp_removal(results: Results) -> Finding:
    """Claim 17: removing stored non-support vectors (budget m) saves kernel evaluations;
    m = 0 costs more than 0.5 point of accuracy, the largest budget run at most 0.3."""
    full = select(results, "online_svm_r", m=None)
    budgets = sorted(
        {int(_params(s)["m"]) for s in results.runs["algorithm_spec"].astype(str)
         if s.startswith("online_svm_r[") and _params(s).get("m", "None") != "None"}
    )  # fmt: skip
    if 0 not in budgets or len(budgets) < 2:
        raise KbenchError("the removal claim needs OnlineSVM^R with m = 0 and one larger m")
    arms = {m: select(results, "online_svm_r", m=m) for m in budgets}
    _need(full, *arms.values())
    acc = {m: 100 * (1 - a["test_error"].astype(float).mean()) for m, a in arms.items()}
    acc_full = 100 * (1 - full["test_error"].astype(float).mean())
    evals = [_requested(results, arms[m]) for m in budgets] + [_requested(results, full)]
    monotone = all(a <= b for a, b in itertools.pairwise(evals))
    top = budgets[-1]
    loss0, loss_top = acc_full - acc[0], acc_full - acc[top]
    t0 = paired(arms[0], full, "test_error")
    adjust(t0)
    value = (
        "accuracy " + ", ".join(f"m={m} {acc[m]:.1f}" for m in budgets) + f", no removal {acc_full:.1f}; "
        "kernel values requested " + ", ".join(f"{e:.3g}" for e in evals)
    )  # fmt: skip
    why = f"m=0 loses {loss0:.1f} pt ({_seedtest(t0)}), m={top} loses {loss_top:.1f} pt"
    loses = significant(t0, lower=False)
    if monotone and loses and loss0 > 0.5 and loss_top <= 0.3:
        return Finding(value, REPRODUCED, why)
    if monotone and loses:
        return Finding(value, PARTLY, f"m=0's loss or m={top}'s is off the paper's; {why}")
    if monotone and loss0 > 0:
        return Finding(value, consistent(t0), why)
    return Finding(value, NOT, why + ("" if monotone else "; kernel evaluations not monotone in m"))


NCHECKER = "checkerboard, 15% label noise, noise-free test set (kbench generator)"
RAMP = Paper(
    key="ramp",
    title="Wang and Vucetic, Fast online training of ramp loss support vector machines (ICDM 2009)",
    algorithms=("online_svm_r", "idsvm", "pa", "libsvm"),
    claims=(
        Claim(
            "9",
            "NCheckerboard: OnlineSVM^R ≥ 1 point more accurate than IDSVM and LIBSVM, with ≤ 0.3× IDSVM's #SV",
            "98.6% vs 96.6% / 96.5%; #SV 554 vs 3196",
            NCHECKER,
            _ramp_accuracy,
        ),
        Claim(
            "12",
            "OnlineSVM^R is sparser than IDSVM on noisy data",
            "554 vs 3196 SVs (NCheckerboard)",
            NCHECKER,
            _ramp_sparsity,
        ),
        Claim(
            "13",
            "PA is the least accurate and keeps the most support vectors",
            "PA 89.9%, 5605 SVs (NCheckerboard)",
            NCHECKER,
            _ramp_pa,
        ),
        Claim(
            "17",
            "Removing stored non-support vectors (budget m) saves kernel evaluations; m = 0 loses accuracy, a large m does not",
            "Fig. 5: m = 0 significant loss, m = 1000 negligible (NCheckerboard, Cover)",
            NCHECKER,
            _ramp_removal,
        ),
    ),
    references=(
        {"metric": "test_error", "value": 0.014, "label": "paper: OnlineSVM^R 1.4%"},
        {"metric": "test_error", "value": 0.034, "label": "paper: IDSVM 3.4%"},
        {"metric": "test_error", "value": 0.101, "label": "paper: PA 10.1%"},
    ),
)


# ---------------------------------------------------------------------------------------------
# PiSTOL (specs/002)
# ---------------------------------------------------------------------------------------------


def _pistol_vs_asgd(results: Results) -> Finding:
    """C4: PiSTOL ≤ best-η ASGD + 1 pp and better than the median-η ASGD."""
    pis = select(results, "pistol")
    asgd = select(results, "asgd")
    _need(pis, asgd)
    by_eta = {
        eta: g
        for eta, g in asgd.groupby(asgd["algorithm_spec"].map(lambda s: _params(s).get("eta")))
    }
    means = {eta: g["test_error"].astype(float).mean() for eta, g in by_eta.items()}
    best = min(means, key=means.get)
    median_eta = sorted(means, key=means.get)[len(means) // 2]
    e_p = pis["test_error"].astype(float)
    t = paired(pis, by_eta[median_eta], "test_error")
    adjust(t)
    value = f"PiSTOL {mean_sd(e_p)}, best ASGD (η={best}) {mean_sd(by_eta[best]['test_error'])}"
    ok_best = e_p.mean() <= means[best] + 0.01
    why = f"vs median-η ASGD (η={median_eta}): {_seedtest(t)}"
    if ok_best and significant(t):
        return Finding(value, REPRODUCED, f"within 1 pp of the best step size; {why}")
    if significant(t):
        return Finding(value, PARTLY, f"beats the median step size only; {why}")
    if ok_best and t["mean_diff"] < 0:
        return Finding(value, consistent(t), f"within 1 pp of the best step size; {why}")
    if ok_best:
        return Finding(
            value, PARTLY, f"within 1 pp of the best but not below the median step size; {why}"
        )
    return Finding(value, NOT, f"worse than the tuned step sizes; {why}")


def _pistol_vs_svm(results: Results) -> Finding:
    """C5: PiSTOL's held-out error tracks the batch SVM's (within max(1 pp, 2 sd)).

    An equivalence claim: reproduced when two one-sided tests at α put the mean difference
    inside ± the tolerance (:func:`equivalent`).
    """
    pis = select(results, "pistol")
    svm = select(results, "libsvm")
    _need(pis, svm)
    e_p, e_s = pis["test_error"].astype(float), svm["test_error"].astype(float)
    t = paired(pis, svm, "test_error")
    adjust(t)
    gap = e_p.mean() - e_s.mean()
    sd = float(np.sqrt((e_p.var(ddof=1) + e_s.var(ddof=1)) / 2)) if len(e_p) > 1 else 0.0
    tol = max(0.01, 2 * sd)
    value = f"PiSTOL {mean_sd(e_p)}, LIBSVM {mean_sd(e_s)}"
    why = f"gap {gap:+.3f}, tolerance {tol:.3f}; {_seedtest(t)}"
    if equivalent(t, tol):
        return Finding(value, REPRODUCED, f"equivalent within the tolerance (TOST); {why}")
    if abs(gap) <= tol:
        return Finding(value, CONSISTENT, f"within the tolerance on average only; {why}")
    return Finding(value, NOT, why)


PISTOL = Paper(
    key="pistol",
    title="Orabona, Simultaneous model selection and optimization through parameter-free stochastic learning (NIPS 2014)",
    algorithms=("pistol", "asgd", "libsvm"),
    claims=(
        Claim(
            "C4",
            "Parameter-free: PiSTOL's averaged solution is as good as ASGD with the best step size",
            "no number; close to the tuned baseline",
            "a9a (the real Adult), prefix of the training set, 2 000 test examples",
            _pistol_vs_asgd,
        ),
        Claim(
            "C5",
            "PiSTOL tracks the tuned Gaussian SVM on a9a",
            "both ≈ 0.15 test error (Fig. 3, full training set)",
            "a9a (the real Adult), prefix of the training set, 2 000 test examples",
            _pistol_vs_svm,
        ),
    ),
    references=({"metric": "test_error", "value": 0.15, "label": "paper: ≈ 0.15 at n = 32 561"},),
)


# ---------------------------------------------------------------------------------------------
# The Huller (specs/003)
# ---------------------------------------------------------------------------------------------


def _huller_vs_libsvm(results: Results) -> Finding:
    """Claim 9: HULLER×1's test error is not significantly different from LIBSVM's.

    An equivalence claim: reproduced when two one-sided tests at α put the mean difference
    within ±0.5 point (:func:`equivalent`); no significant difference alone is consistent.
    """
    h1 = select(results, "huller", epochs=1)
    lib = select(results, "libsvm")
    _need(h1, lib)
    t = paired(h1, lib, "test_error")
    adjust(t)
    gap = 100 * t["mean_diff"]
    value = f"HULLER×1 {mean_sd(100 * h1['test_error'].astype(float), '.2f')}%, LIBSVM {mean_sd(100 * lib['test_error'].astype(float), '.2f')}%"
    why = f"gap {gap:+.2f} pt; {_seedtest(t)}"
    if equivalent(t, 0.005):
        return Finding(value, REPRODUCED, f"equivalent within 0.5 pt (TOST); {why}")
    if not (t["p_holm"] < ALPHA):
        return Finding(
            value, CONSISTENT, f"no significant difference, equivalence not shown; {why}"
        )
    return Finding(value, NOT, f"significantly different; {why}")


def _huller_sparser(results: Results) -> Finding:
    """Claim 10: HULLER×1 keeps fewer support vectors than LIBSVM."""
    h1 = select(results, "huller", epochs=1)
    lib = select(results, "libsvm")
    h2 = select(results, "huller", epochs=2)
    _need(h1, lib)
    t = paired(h1, lib, "n_support")
    adjust(t)
    value = f"#SV HULLER×1 {mean_sd(h1['n_support'], '.0f')}, ×2 {mean_sd(h2['n_support'], '.0f')}, LIBSVM {mean_sd(lib['n_support'], '.0f')}"
    if significant(t):
        return Finding(value, REPRODUCED, f"significantly fewer; {_seedtest(t)}")
    if t["mean_diff"] < 0:
        return Finding(value, consistent(t), f"fewer on average; {_seedtest(t)}")
    return Finding(value, NOT, f"not fewer; {_seedtest(t)}")


def _huller_perceptron(results: Results) -> Finding:
    """Claim 13: one epoch of the averaged perceptron is less accurate than HULLER×1.

    Held-out and online errors are each paired over (problem, seed), Holm over the two.
    """
    h1 = select(results, "huller", epochs=1)
    ap = select(results, "averaged_perceptron", epochs=1)
    _need(h1, ap)
    t = paired(ap, h1, "test_error")
    t_on = paired(ap, h1, "online_error")
    adjust(t, t_on)
    value = (
        f"AP×1 {mean_sd(100 * ap['test_error'].astype(float), '.2f')}%, "
        f"HULLER×1 {mean_sd(100 * h1['test_error'].astype(float), '.2f')}%"
    )
    why = f"held-out: {_seedtest(t)} (AP first); online: {_seedtest(t_on)}"
    worse = t["mean_diff"] > 0 and t_on["mean_diff"] > 0
    if worse and (significant(t, lower=False) or significant(t_on, lower=False)):
        return Finding(value, REPRODUCED, why)
    if t["mean_diff"] > 0:
        return Finding(value, consistent(t, t_on), f"worse on average; {why}")
    return Finding(value, NOT, f"the averaged perceptron is not worse; {why}")


MNIST5K = "mnist5k digit-vs-rest (kbench's 5 000-digit MNIST sample for MNIST's 60 000)"
HULLER = Paper(
    key="huller",
    title="Bordes and Bottou, The Huller: a simple and efficient online SVM (ECML 2005)",
    algorithms=("huller", "libsvm", "averaged_perceptron"),
    claims=(
        Claim(
            "9",
            "One Huller epoch is statistically indistinguishable from LIBSVM in test error",
            "not significant (paired tests, Fig. 5)",
            MNIST5K,
            _huller_vs_libsvm,
        ),
        Claim(
            "10",
            "HULLER×1 has fewer support vectors than LIBSVM",
            "always slightly fewer (Fig. 5)",
            MNIST5K,
            _huller_sparser,
        ),
        Claim(
            "13",
            "One epoch of the averaged perceptron is not competitive with HULLER×1",
            "AP×1 worse (Fig. 5)",
            MNIST5K,
            _huller_perceptron,
        ),
    ),
)


# ---------------------------------------------------------------------------------------------
# POLK (specs/004)
# ---------------------------------------------------------------------------------------------


def _polk_bounded(results: Results) -> Finding:
    """C6: with constant η and ε = Kη^{3/2}, POLK's model order plateaus."""
    polk = select(results, "polk")
    _need(polk)
    tr = results.traces
    tr = tr[tr["task_id"].isin(polk["task_id"])]
    spreads, finals = [], []
    for _tid, g in tr.groupby("task_id"):
        g = g.sort_values("seen")
        tail = g[g["seen"] >= 0.8 * g["seen"].max()]["n_support"].astype(float)
        if len(tail) and tail.mean() > 0:
            spreads.append((tail.max() - tail.min()) / tail.mean())
            finals.append(float(g["n_support"].iloc[-1]))
    if not spreads:
        raise KbenchError("POLK's traces have no model order")
    value = f"final M {mean_sd(finals, '.1f')}; spread over the last 20% {mean_sd(spreads, '.2f')}"
    bounded = sum(s <= 0.2 for s in spreads)
    if bounded == len(spreads):
        return Finding(
            value, REPRODUCED, f"plateau (spread ≤ 20% of the mean) on all {len(spreads)} seeds"
        )
    if bounded * 2 > len(spreads):
        return Finding(value, PARTLY, f"plateau on {bounded} of {len(spreads)} seeds")
    return Finding(value, NOT, f"plateau on {bounded} of {len(spreads)} seeds")


def _polk_vs_bsgd(results: Results) -> Finding:
    """C10: at equal model order POLK's test error is below BSGD's."""
    polk = select(results, "polk")
    bsgd = select(results, "bsgd")
    _need(polk, bsgd)
    t = paired(polk, bsgd, "test_error")
    t_on = paired(polk, bsgd, "online_error")
    adjust(t, t_on)
    value = f"POLK {mean_sd(100 * polk['test_error'].astype(float), '.2f')}% (M {mean_sd(polk['n_support'], '.0f')}), BSGD {mean_sd(100 * bsgd['test_error'].astype(float), '.2f')}%"
    why = f"held-out: {_seedtest(t)}; online: {_seedtest(t_on)}"
    if significant(t) and t_on["mean_diff"] < 0:
        return Finding(value, REPRODUCED, why)
    if significant(t_on):
        return Finding(value, PARTLY, f"lower online, not significantly on held-out data; {why}")
    if t["mean_diff"] < 0:
        return Finding(value, consistent(t, t_on), f"lower on average; {why}")
    return Finding(value, NOT, why)


MULTIDIST = (
    "multidist[std=true,means_seed=59]: one fixed mixture after the paper's recipe with Bayes "
    "error 3.5% (0.2 read as the components' sd; the printed variance gives 15–39%)"
)
POLK = Paper(
    key="polk",
    title="Koppel, Warnell, Stump and Ribeiro, Parsimonious online learning with kernels (JMLR 2019)",
    algorithms=("polk", "bsgd"),
    claims=(
        Claim(
            "C6",
            "With a constant step and ε = Kη^{3/2}, POLK's model order stays bounded",
            "M_T = 16 at K = 0.04 (multidist)",
            MULTIDIST,
            _polk_bounded,
        ),
        Claim(
            "C10",
            "At equal model order POLK is more accurate than BSGD",
            "3.98% vs 21.8% test error (multidist, M = 16)",
            MULTIDIST,
            _polk_vs_bsgd,
        ),
    ),
    references=(
        {"metric": "test_error", "value": 0.0398, "label": "paper: POLK 3.98%"},
        {"metric": "test_error", "value": 0.218, "label": "paper: BSGD 21.8%"},
        {"metric": "n_support", "value": 16, "label": "paper: M = 16"},
    ),
)

PAPERS: dict[str, Paper] = {p.key: p for p in (SVMD, RAMP, PISTOL, HULLER, POLK)}


# ---------------------------------------------------------------------------------------------
# Running a reproduction
# ---------------------------------------------------------------------------------------------


@dataclass
class Row:
    """One line of a reproduction table."""

    paper: str
    claim: str
    text: str
    paper_value: str
    kbench_value: str
    dataset: str
    verdict: str
    reason: str


def resolve(name: str) -> list[Paper]:
    """The papers a ``kbench reproduce`` argument names; KbenchError for an unknown one."""
    if name == "all":
        return list(PAPERS.values())
    if name not in PAPERS:
        raise KbenchError(f"unknown paper {name!r}: expected one of {', '.join(PAPERS)} or all")
    return [PAPERS[name]]


def missing_algorithms(paper: Paper, registry: Any) -> list[str]:
    """The algorithms a paper's study needs that are not registered."""
    have = set(registry.names("algorithm"))
    return [a for a in paper.algorithms if a not in have]


def subset(results: Results, task_ids: set[str]) -> Results:
    """The tables restricted to some tasks (a folder can hold earlier studies too)."""
    keep = results.runs["task_id"].isin(task_ids) if len(results.runs) else []
    runs = results.runs[keep] if len(results.runs) else results.runs
    tr = results.traces
    if len(tr) and "task_id" in tr.columns:
        tr = tr[tr["task_id"].isin(task_ids)]
    oc = results.outcomes[results.outcomes["task_id"].isin(task_ids)]
    return Results(runs=runs, traces=tr, outcomes=oc)


def evaluate(paper: Paper, results: Results, quick: bool = False) -> list[Row]:
    """Evaluate every claim of a paper; a claim that cannot be evaluated is not reproduced,
    with why. ``quick``: the results are those of the smoke-run study, and every verdict
    says so (:data:`SMOKE`)."""
    rows = []
    for c in paper.claims:
        try:
            f = c.evaluate(results)
        except (KbenchError, KeyError, ValueError, ZeroDivisionError) as exc:
            # A claim whose runs failed or are missing is not reproduced; say why, go on.
            f = Finding("–", NOT, f"could not be evaluated: {exc}")
        verdict = SMOKE + f.verdict if quick else f.verdict
        reason = f.reason
        why_not = cause(paper.key, c.id)
        if why_not and not quick and base_verdict(f.verdict) != REPRODUCED:
            reason = f"{reason}; {why_not}"  # the experiment that isolates the gap
        rows.append(Row(paper.key, c.id, c.text, c.paper, f.value, c.dataset, verdict, reason))
    return rows


def not_run(paper: Paper, missing: Sequence[str]) -> list[Row]:
    """Rows of a paper whose algorithms are not registered."""
    reason = f"not run: algorithm {', '.join(missing)} is not available"
    return [
        Row(paper.key, c.id, c.text, c.paper, "–", c.dataset, NOT, reason) for c in paper.claims
    ]


def markdown(rows: Sequence[Row]) -> str:
    """The rows as a Markdown table."""
    head = "| paper | claim | paper's value | kbench (mean ± sd over seeds) | data set | verdict | why |\n"
    head += "|---|---|---|---|---|---|---|\n"

    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    return head + "".join(
        f"| {r.paper} | **{r.claim}** {cell(r.text)} | {cell(r.paper_value)} | {cell(r.kbench_value)} "
        f"| {cell(r.dataset)} | {r.verdict} | {cell(r.reason)} |\n"
        for r in rows
    )


def write_tables(rows: Sequence[Row], out: Path) -> tuple[Path, Path]:
    """Write ``reproduction.md`` and ``claims.json`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    md, js = out / "reproduction.md", out / "claims.json"
    atomic_write_text(md, markdown(rows))
    atomic_write_text(js, json.dumps([asdict(r) for r in rows], indent=1, ensure_ascii=False))
    return md, js
