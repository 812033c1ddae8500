"""PiSTOL (specs/002): Orabona, parameter-free stochastic learning.

PiSTOL against averaged SGD over a grid of step sizes and against the batch SVM on a9a.
"""

from __future__ import annotations

import numpy as np

from kbench.reproduce import evidence
from kbench.reproduce.verdicts import CONSISTENT, NOT, PARTLY, REPRODUCED, Claim, Finding, Paper
from kbench.results.store import Results


def _pistol_vs_asgd(results: Results) -> Finding:
    """C4: PiSTOL ≤ best-η ASGD + 1 pp and better than the median-η ASGD."""
    pis = evidence.select(results, "pistol")
    asgd = evidence.select(results, "asgd")
    evidence.need(pis, asgd)
    by_eta = {
        eta: g
        for eta, g in asgd.groupby(
            asgd["algorithm_spec"].map(lambda s: evidence.spec_params(s).get("eta"))
        )
    }
    means = {eta: g["test_error"].astype(float).mean() for eta, g in by_eta.items()}
    best = min(means, key=lambda eta: means[eta])
    median_eta = sorted(means, key=lambda eta: means[eta])[len(means) // 2]
    e_p = pis["test_error"].astype(float)
    [t] = evidence.holm_paired((pis, by_eta[median_eta], "test_error"))
    value = f"PiSTOL {evidence.mean_sd(e_p)}, best ASGD (η={best}) {evidence.mean_sd(by_eta[best]['test_error'])}"
    ok_best = e_p.mean() <= means[best] + 0.01
    why = f"vs median-η ASGD (η={median_eta}): {evidence.seedtest(t)}"
    if ok_best and evidence.significant(t):
        return Finding(value, REPRODUCED, f"within 1 pp of the best step size; {why}")
    if evidence.significant(t):
        return Finding(value, PARTLY, f"beats the median step size only; {why}")
    if ok_best and t["mean_diff"] < 0:
        return Finding(value, evidence.consistent(t), f"within 1 pp of the best step size; {why}")
    if ok_best:
        return Finding(
            value, PARTLY, f"within 1 pp of the best but not below the median step size; {why}"
        )
    return Finding(value, NOT, f"worse than the tuned step sizes; {why}")


def _pistol_vs_svm(results: Results) -> Finding:
    """C5: PiSTOL's held-out error tracks the batch SVM's (within max(1 pp, 2 sd)).

    An equivalence claim: reproduced when two one-sided tests at α put the mean difference
    inside ± the tolerance (:func:`~kbench.reproduce.evidence.equivalent`).
    """
    pis = evidence.select(results, "pistol")
    svm = evidence.select(results, "libsvm")
    evidence.need(pis, svm)
    e_p, e_s = pis["test_error"].astype(float), svm["test_error"].astype(float)
    [t] = evidence.holm_paired((pis, svm, "test_error"))
    gap = e_p.mean() - e_s.mean()
    sd = float(np.sqrt((e_p.var(ddof=1) + e_s.var(ddof=1)) / 2)) if len(e_p) > 1 else 0.0
    tol = max(0.01, 2 * sd)
    value = f"PiSTOL {evidence.mean_sd(e_p)}, LIBSVM {evidence.mean_sd(e_s)}"
    why = f"gap {gap:+.3f}, tolerance {tol:.3f}; {evidence.seedtest(t)}"
    if evidence.equivalent(t, tol):
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
            "a9a (the real Adult): one pass over the training set (full: all 32 561), held out on the 16 281 test examples",
            _pistol_vs_asgd,
        ),
        Claim(
            "C5",
            "PiSTOL tracks the tuned Gaussian SVM on a9a",
            "both ≈ 0.15 test error (Fig. 3, full training set)",
            "a9a (the real Adult): one pass over the training set (full: all 32 561), held out on the 16 281 test examples",
            _pistol_vs_svm,
        ),
    ),
    references=({"metric": "test_error", "value": 0.15, "label": "paper: ≈ 0.15 at n = 32 561"},),
)
