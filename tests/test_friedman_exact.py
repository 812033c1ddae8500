"""Friedman's test as the views show it: exact or by permutation, never an approximation
that rejects where the blocks cannot (issue 33)."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from helpers import kbench
from kbench.analysis.rank_tests import friedman_test, rank_table


def _brute_force_p(ranks: np.ndarray) -> float:
    """Every order of every block's ranks, counted one by one."""
    observed = (ranks.sum(axis=0) ** 2).sum()
    per_block = [list(itertools.permutations(row)) for row in ranks]
    hits = total = 0
    for combo in itertools.product(*per_block):
        s = (np.sum(combo, axis=0) ** 2).sum()
        hits += s >= observed - 1e-9
        total += 1
    return hits / total


def test_two_configurations_is_the_sign_test() -> None:
    # With k = 2 the Friedman statistic orders the outcomes as the sign test does.
    a = np.array([0.1, 0.2, 0.15, 0.3, 0.12, 0.22, 0.18, 0.25, 0.11, 0.14])
    b = a + np.array([0.01, 0.02, -0.01, 0.03, 0.02, 0.01, 0.04, 0.02, 0.01, 0.05])
    res = friedman_test(rank_table(pd.DataFrame({"A": a, "B": b})))
    assert res["test"] == "exact"
    assert res["p"] == pytest.approx(stats.binomtest(9, 10, 0.5).pvalue)
    assert res["significant"] and res["min_p"] == pytest.approx(2 / 2**10)


def test_five_seeds_of_two_cannot_reach_alpha_and_say_why() -> None:
    # The case: five seeds, every one won by the same configuration. The
    # chi-square approximation gives p = 0.025 and Iman–Davenport F = inf; no exact test
    # can go below 2 / 32.
    values = pd.DataFrame({"A": [0.1] * 5, "B": [0.2] * 5})
    res = friedman_test(rank_table(values))
    assert res["test"] == "none" and math.isnan(res["p"]) and not res["significant"]
    assert res["min_p"] == pytest.approx(0.0625)
    assert "cannot go below p = 0.0625" in res["reason"]
    assert stats.chi2.sf(res["chi2"], 1) < 0.05  # what the approximation would have said


def test_exact_matches_brute_force_with_ties() -> None:
    values = pd.DataFrame(
        [[0.1, 0.2, 0.3], [0.2, 0.2, 0.1], [0.3, 0.1, 0.2], [0.1, 0.3, 0.3]],
        columns=list("ABC"),
    )
    ranks = rank_table(values)
    res = friedman_test(ranks)
    assert res["test"] == "exact"
    assert res["p"] == pytest.approx(_brute_force_p(ranks.to_numpy()))
    chi2 = stats.friedmanchisquare(*[values[c] for c in values.columns])
    # kbench's statistic has no tie correction (Demšar): it differs by the tie factor
    assert res["chi2"] <= chi2.statistic + 1e-9


def test_permutation_agrees_with_exact_and_is_reproducible() -> None:
    rng = np.random.default_rng(7)
    values = pd.DataFrame(rng.random((8, 4)), columns=list("ABCD"))
    values["A"] -= 0.25
    ranks = rank_table(values)
    exact = friedman_test(ranks)
    perm = friedman_test(ranks, max_states=1)
    assert exact["test"] == "exact" and perm["test"] == "permutation"
    # 20 000 draws: the estimate is within 4 standard errors of the exact p
    se = math.sqrt(exact["p"] * (1 - exact["p"]) / 20_000)
    assert abs(perm["p"] - exact["p"]) < 4 * se + 1e-4
    assert friedman_test(ranks, max_states=1) == perm


def test_many_configurations_use_permutation_within_seconds() -> None:
    rng = np.random.default_rng(1)
    values = pd.DataFrame(rng.random((6, 12)))
    res = friedman_test(rank_table(values))
    assert res["test"] == "permutation" and 0 < res["p"] <= 1
    assert res["min_p"] < 0.05


def test_one_block_or_one_configuration_is_no_test() -> None:
    res = friedman_test(rank_table(pd.DataFrame({"A": [0.1], "B": [0.2]})))
    assert res["test"] == "none" and "needs two of each" in res["reason"]


@pytest.mark.slow
def test_default_study_reaches_verdicts_with_tests_that_can(tmp_path: Path) -> None:
    """The default study's ten seeds let the pairs over seeds and the Friedman tests
    reach α: the comparison ends with verdicts, and every Friedman test it shows can
    reject (issue 33: five seeds gave "cannot tell" for every pair)."""
    out = tmp_path / "r"
    run = kbench("run", "--n", "1000", "--out", str(out), timeout=1200)
    assert run.returncode == 0, run.stderr
    proc = kbench("compare", str(out), "--format", "json", timeout=600)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    results = [p["result"] for p in data["seed_pairs"]]
    assert {"win", "loss"} & set(results), results
    assert "cannot tell" not in results
    for g in data["groups"]:
        fr = g["friedman"]
        assert fr["N"] == 10 and fr["test"] in {"exact", "permutation"}
        assert fr["min_p"] < 0.05
        # the diagram's groups exist only where the test shown rejects
        assert fr["significant"] or g["cd_groups"] == []
    text = kbench("compare", str(out)).stdout
    assert "F = " not in text and "inf" not in text and "<1e-16" not in text
    assert "either can answer where the other cannot" in text
