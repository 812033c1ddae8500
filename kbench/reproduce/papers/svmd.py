"""SVMD (specs/000): Vishwanathan, Schraudolph and Smola, step size adaptation in RKHS.

SVMD against NORMA and against itself with λ = 0 on USPS stand-ins (two-class, ten-class
and the counting sequence).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from kbench.reproduce import evidence
from kbench.reproduce.verdicts import NOT, PARTLY, REPRODUCED, Claim, Finding, Paper
from kbench.results.store import Results


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
        smd = evidence.select(results, "svmd", stream=stream, exclude=exclude, lam=lam)
        one = evidence.select(results, "svmd", stream=stream, exclude=exclude, lam=0.0)
        nor = evidence.select(results, "norma", stream=stream, exclude=exclude, tau=tau)
        evidence.need(smd, one, nor)
        e_s, e_1, e_n = (x["online_error"].to_numpy(float) for x in (smd, one, nor))
        ratio = smd.groupby("stream_id")["online_error"].mean() / nor.groupby("stream_id")[
            "online_error"
        ].mean().replace(0, np.nan)
        t_n, t_1 = evidence.holm_paired((smd, nor, "online_error"), (smd, one, "online_error"))
        value = (
            f"SVMD {evidence.mean_sd(e_s)}, λ=0 {evidence.mean_sd(e_1)}, NORMA {evidence.mean_sd(e_n)}; "
            f"ratio {evidence.mean_sd(ratio.dropna(), '.2f')}"
        )
        order = e_s.mean() < e_1.mean() < e_n.mean()
        in_band = lo <= float(ratio.mean()) <= hi
        why = f"SVMD vs NORMA: {evidence.seedtest(t_n)}; SVMD vs λ=0: {evidence.seedtest(t_1)}"
        if evidence.significant(t_n) and evidence.significant(t_1) and order and in_band:
            return Finding(value, REPRODUCED, f"order and ratio as in the paper; {why}")
        if evidence.significant(t_n):
            miss = [] if order else ["the order of the three arms differs"]
            if not evidence.significant(t_1):
                miss.append("SVMD is not significantly below λ=0")
            if not in_band:
                miss.append(f"the ratio is outside [{lo}, {hi}]")
            return Finding(value, PARTLY, f"SVMD beats NORMA but {' and '.join(miss)}; {why}")
        if t_n["mean_diff"] < 0:
            return Finding(value, evidence.consistent(t_n, t_1), f"SVMD lower on average; {why}")
        return Finding(value, NOT, f"SVMD does not make fewer errors; {why}")

    return evaluate


def _svmd_counting(results: Results) -> Finding:
    """R4: ν-SVMD(0.95) ≤ 0.25, ν-NORMA ≥ 0.75, SVMD(λ=0) < NORMA on the counting sequence."""
    smd = evidence.select(results, "svmd", stream="counting", lam=0.95)
    one = evidence.select(results, "svmd", stream="counting", lam=0.0)
    nor = evidence.select(results, "norma", stream="counting")
    evidence.need(smd, one, nor)
    e_s, e_1, e_n = (x["online_error"].to_numpy(float) for x in (smd, one, nor))
    t_n, t_1 = evidence.holm_paired((smd, nor, "online_error"), (one, nor, "online_error"))
    value = (
        f"SVMD {evidence.mean_sd(e_s)}, λ=0 {evidence.mean_sd(e_1)}, NORMA {evidence.mean_sd(e_n)}"
    )
    checks = {
        "SVMD ≤ 0.25": e_s.mean() <= 0.25,
        "NORMA ≥ 0.75": e_n.mean() >= 0.75,
        "λ=0 beats NORMA significantly": evidence.significant(t_1),
    }
    failed = [k for k, ok in checks.items() if not ok]
    why = f"SVMD vs NORMA: {evidence.seedtest(t_n)}; λ=0 vs NORMA: {evidence.seedtest(t_1)}"
    if not failed and evidence.significant(t_n):
        return Finding(value, REPRODUCED, f"all three checks hold; {why}")
    if evidence.significant(t_n):
        return Finding(value, PARTLY, f"SVMD beats NORMA, but not: {', '.join(failed)}; {why}")
    if t_n["mean_diff"] < 0 and t_1["mean_diff"] < 0:
        return Finding(value, evidence.consistent(t_n, t_1), f"lower on average; {why}")
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
