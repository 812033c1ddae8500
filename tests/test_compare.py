"""Tests of the comparison statistics and of ``kbench compare``.

The statistics are checked against values computed by hand, against published worked
examples (Demšar 2006; Newcombe's paired interval as tabulated by Fagerland, Lydersen and
Laake) and against scipy. The command is run on a small real study made by ``kbench run``.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

import kbench
from kbench import __version__
from kbench.analysis.comparison import Comparison, compare
from kbench.analysis.configs import NothingToCompareError, version_notes
from kbench.analysis.pairs import StreamMismatchError, compare_outcomes, compare_runs
from kbench.analysis.rank_tests import (
    cd_groups,
    friedman,
    friedman_from_ranks,
    nemenyi_cd,
    nemenyi_q,
)
from kbench.analysis.statistics import bayesian_signed_rank as bsr
from kbench.analysis.statistics import (
    holm,
    mcnemar_exact,
    min_p_value,
    min_wilcoxon_n,
    paired_final_test,
    paired_proportion_ci,
    seed_verdict,
    sign_test,
    signed_rank_exact,
    wilcoxon_test,
)
from kbench.cli.main import cli
from kbench.core.errors import KbenchError, ResultsError
from kbench.execution.prequential import RESULTS_FORMAT
from kbench.results.degenerate import MARK
from kbench.results.store import Results, load_results

KBENCH = Path(sys.executable).with_name("kbench")

# Demšar (2006), Table 2: AUC of C4.5 and C4.5 with a tuned m on 14 data sets.
C45 = [
    0.763,
    0.599,
    0.954,
    0.628,
    0.882,
    0.936,
    0.661,
    0.583,
    0.775,
    1.000,
    0.940,
    0.619,
    0.972,
    0.957,
]
C45M = [
    0.768,
    0.591,
    0.971,
    0.661,
    0.888,
    0.931,
    0.668,
    0.583,
    0.838,
    1.000,
    0.962,
    0.666,
    0.981,
    0.978,
]


# ---------------------------------------------------------------------------------------------
# Single tests
# ---------------------------------------------------------------------------------------------


def test_mcnemar_exact_by_hand() -> None:
    # 2 and 9 discordant examples: p = 2 * P(X <= 2), X ~ Bin(11, 1/2) = 2 * (1 + 11 + 55) / 2^11.
    assert mcnemar_exact(2, 9) == pytest.approx(134 / 2048, rel=1e-12)
    assert mcnemar_exact(9, 2) == pytest.approx(134 / 2048, rel=1e-12)
    # One discordant example cannot be significant; none means no evidence at all.
    assert mcnemar_exact(1, 0) == pytest.approx(1.0)
    assert mcnemar_exact(0, 0) == 1.0
    # 0 against 6: p = 2 / 64.
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)


def test_newcombe_paired_interval_matches_published_example() -> None:
    # Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency Tables", ch. 8
    # (Cavo et al. 2012): table [[59, 6], [16, 80]] gives -0.0621 (95% CI -0.1186 to -0.0046).
    diff, lo, hi = paired_proportion_ci(59, 6, 16, 80)
    assert diff == pytest.approx(-10 / 161)
    assert round(diff, 4) == -0.0621
    assert round(lo, 4) == -0.1186
    assert round(hi, 4) == -0.0046


def test_newcombe_interval_is_symmetric_and_bounded() -> None:
    d1, lo1, hi1 = paired_proportion_ci(40, 7, 3, 50)
    d2, lo2, hi2 = paired_proportion_ci(40, 3, 7, 50)
    assert d1 == pytest.approx(-d2)
    assert lo1 == pytest.approx(-hi2) and hi1 == pytest.approx(-lo2)
    d, lo, hi = paired_proportion_ci(
        0, 10, 0, 0
    )  # one classifier always right, the other always wrong
    assert d == 1.0 and -1.0 <= lo <= 1.0 and hi == pytest.approx(1.0)


def test_identical_predictions_describe_no_difference() -> None:
    rng = np.random.default_rng(0)
    correct = rng.random(500) < 0.8
    res = compare_outcomes(correct, correct.copy(), "binary")
    assert res["diff"] == 0.0 and res["a_worse"] == 0 and res["b_worse"] == 0
    assert res["errors_a"] == res["errors_b"] == int((~correct).sum())
    sq = rng.random(200)
    reg = compare_outcomes(sq, sq.copy(), "regression")
    assert reg["diff"] == 0.0


def test_compare_outcomes_counts_by_hand() -> None:
    a = np.array([1, 1, 0, 0, 1, 0, 1, 1], dtype=bool)  # A wrong on 2, 3, 5
    b = np.array([1, 0, 1, 0, 0, 0, 1, 1], dtype=bool)  # B wrong on 1, 3, 4, 5
    res = compare_outcomes(a, b, "binary")
    assert res["n"] == 8
    assert res["errors_a"] == 3 and res["errors_b"] == 4
    assert (
        res["a_worse"] == 1 and res["b_worse"] == 2
    )  # only A wrong: example 2; only B wrong: 1 and 4
    assert res["err_a"] == pytest.approx(3 / 8) and res["diff"] == pytest.approx(-1 / 8)
    # A stream's examples are not replicates: no p-value and no interval from them.
    assert math.isnan(res["p"]) and math.isnan(res["ci_low"]) and math.isnan(res["ci_high"])


def test_regression_pairs_are_described_not_tested() -> None:
    rng = np.random.default_rng(1)
    a = rng.exponential(1.0, 300)
    b = a * 1.15 + rng.normal(0, 0.05, 300) ** 2
    res = compare_outcomes(a, b, "regression")
    np.testing.assert_allclose(res["diff"], float(np.mean(a - b)), rtol=1e-12)  # same sum
    np.testing.assert_allclose(res["sd_diff"], float(np.std(a - b, ddof=1)), rtol=1e-12)
    assert res["a_worse"] == int((a > b).sum()) and res["b_worse"] == int((b > a).sum())
    assert math.isnan(res["p"]) and res["test"] == ""
    assert math.isnan(res["errors_a"])


def test_signed_rank_exact_matches_scipy_and_enumeration() -> None:
    rng = np.random.default_rng(2)
    for n in (2, 3, 5, 8, 13):
        d = rng.normal(0.2, 1.0, n)  # continuous: no ties, no zeros
        w, p, k = signed_rank_exact(d)
        ref = stats.wilcoxon(d, method="exact")
        assert k == n and w == pytest.approx(float(stats.rankdata(abs(d))[d > 0].sum()))
        assert p == pytest.approx(ref.pvalue, rel=1e-9)
    # Ties and a zero: the zero is dropped, tied magnitudes share ranks, and the p-value
    # is the share of the 2**7 sign patterns at least as far from the mean.
    d = np.array([1.0, 1.0, -2.0, 2.0, 3.0, -1.0, 0.0, 4.0])
    w, p, k = signed_rank_exact(d)
    x = d[d != 0]
    r = stats.rankdata(abs(x))
    signs = np.array(np.meshgrid(*[[0, 1]] * len(x))).reshape(len(x), -1).T
    sums = signs @ r
    brute = float(np.mean(np.abs(sums - r.sum() / 2) >= abs(r[x > 0].sum() - r.sum() / 2) - 1e-9))
    assert k == 7 and p == pytest.approx(brute, rel=1e-12)
    assert signed_rank_exact([0.0, 0.0]) == (0.0, 1.0, 0)


def test_min_p_and_seeds_needed_arithmetic() -> None:
    assert min_p_value(1) == 1.0 and min_p_value(5) == pytest.approx(0.0625)
    assert min_p_value(6) == pytest.approx(0.03125)
    assert min_wilcoxon_n(0.05) == 6  # 2/2**5 = 0.0625 >= 0.05 > 2/2**6
    assert min_wilcoxon_n(0.05, family=3) == 7  # 3 * 2/2**6 = 0.094; 3 * 2/2**7 = 0.047
    assert min_wilcoxon_n(0.05, family=10) == 9  # 10 * 2/2**8 = 0.078; 10 * 2/2**9 = 0.039
    assert min_wilcoxon_n(0.01) == 8  # 2/2**7 = 0.0156; 2/2**8 = 0.0078
    # Five seeds, every one better for A: the best the test can do, and not enough.
    res = paired_final_test([-0.1, -0.2, -0.05, -0.3, -0.01])
    assert res["p"] == pytest.approx(0.0625) and res["min_p"] == pytest.approx(0.0625)
    assert res["seeds_needed"] == 6
    verdict, why = seed_verdict(res["mean_diff"], res["p"], 5, 1, 0.05)
    assert verdict == "cannot tell"
    assert why == "5 seeds: cannot be significant at 0.05; run ≥ 6"
    verdict, why = seed_verdict(-0.1, 0.03, 6, 3, 0.05)
    assert verdict == "cannot tell" and why.endswith("after Holm over 3 pairs; run ≥ 7")
    assert seed_verdict(-0.1, 0.03, 6, 1, 0.05) == ("win", "")
    assert seed_verdict(0.1, 0.03, 6, 1, 0.05) == ("loss", "")
    assert seed_verdict(-0.1, 0.2, 6, 1, 0.05) == ("tie", "")
    # Fewer than two seeds: no test, no p-value, a reason.
    one = paired_final_test([-0.2])
    assert one["test"] == "none" and math.isnan(one["p"]) and math.isnan(one["ci_low"])
    assert seed_verdict(-0.2, math.nan, 1, 1) == (
        "n/a",
        "1 seed: a test over seeds needs at least 2",
    )
    # The interval over seeds is the t interval.
    d = np.array([-0.02, -0.01, -0.03, 0.005, -0.015, -0.02])
    res = paired_final_test(d)
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert (res["ci_low"], res["ci_high"]) == pytest.approx((ci.low, ci.high), rel=1e-9)


def test_bayesian_signed_rank_known_cases() -> None:
    # One difference z with the prior pseudo-observation at 0 (weight 1/2): the weights
    # (w0, w1) are Dirichlet(1/2, 1), so w1 ~ Beta(1, 1/2) and P(w1 > c) = (1 - c)**0.5.
    # z beyond 2·rope: right wins when 2 w0 w1 + w1² > w0², i.e. w1 > 1 - 1/√2.
    far = bsr([1.0], rope=0.4)
    # 50 000 draws: the Monte Carlo sd of a share near 0.84 is 0.0016; allow 6 sd.
    assert far["p_right"] == pytest.approx(2**-0.25, abs=0.01)
    assert far["p_left"] == 0.0 and far["p_rope"] == pytest.approx(1 - far["p_right"])
    # rope < z < 2·rope: right wins when w1² > 1 − w1², i.e. w1 > 1/√2.
    near = bsr([1.0], rope=0.6)
    assert near["p_right"] == pytest.approx((1 - 2**-0.5) ** 0.5, abs=0.01)
    # Mirror symmetry: the same draws give left for d what they give right for −d.
    d = [0.03, -0.01, 0.02, 0.05, 0.0, 0.012]
    a, b = bsr(d, 0.01), bsr([-x for x in d], 0.01)
    assert (a["p_left"], a["p_rope"], a["p_right"]) == (b["p_right"], b["p_rope"], b["p_left"])
    # Every difference far inside the rope: practically equivalent.
    assert bsr([0.001, -0.002, 0.0005, 0.001], 0.05)["p_rope"] == 1.0
    with pytest.raises(KbenchError, match="practical equivalence"):
        bsr(d, -0.1)


def test_holm_by_hand() -> None:
    # Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> monotone 0.06.
    adj = holm([0.01, 0.04, 0.03, 0.005])
    assert adj == pytest.approx([0.03, 0.06, 0.06, 0.02])
    adj = holm([0.5, float("nan"), 0.9])
    assert math.isnan(adj[1]) and adj[0] == pytest.approx(1.0) and adj[2] == pytest.approx(1.0)
    assert len(holm([])) == 0


def test_sign_and_wilcoxon_tests() -> None:
    neg, zeros, pos, p = sign_test([-0.1, -0.2, -0.05, -0.3, -0.01])
    assert (neg, zeros, pos) == (5, 0, 0) and p == pytest.approx(2 / 32)
    # Demšar 2006, section 3.1.3: C4.5+m against C4.5 gives R+ = 93 and R- = 12.
    d = np.array(C45M) - np.array(C45)
    r_plus, p = wilcoxon_test(d)
    assert r_plus == pytest.approx(93.0)
    assert d.size * (d.size + 1) / 2 - r_plus == pytest.approx(12.0)
    assert p == pytest.approx(stats.wilcoxon(d, zero_method="zsplit").pvalue)
    assert p < 0.05  # Demšar: significant at 0.05 (T = 12 < 21)
    assert wilcoxon_test([0.0, 0.0, 0.0]) == (3.0, 1.0)
    # Six pairs are the fewest with which the two-sided exact test can reach 0.05.
    assert min_wilcoxon_n(0.05) == 6
    few = paired_final_test([-0.1, -0.2, -0.05, -0.3, -0.01])
    assert few["test"] == "signed-rank exact" and few["p"] == pytest.approx(0.0625)
    assert few["sign_p"] == pytest.approx(0.0625)
    many = paired_final_test(-np.arange(1, 8) / 100)
    assert many["p"] == pytest.approx(stats.wilcoxon(-np.arange(1, 8) / 100, method="exact").pvalue)


def test_friedman_reproduces_demsar_example() -> None:
    # Demšar 2006, section 3.2.2: four C4.5 variants on 14 data sets with mean ranks
    # 3.143, 2.000, 2.893, 1.964 give chi2_F = 9.28 and F_F = 3.69.
    res = friedman_from_ranks([3.143, 2.000, 2.893, 1.964], 14)
    assert res["chi2"] == pytest.approx(9.28, abs=0.01)
    assert res["F"] == pytest.approx(3.69, abs=0.01)
    # The critical value of F(3, 39) at 0.05 is 2.85, so the null hypothesis is rejected.
    assert stats.f.ppf(0.95, 3, 39) == pytest.approx(2.85, abs=0.01)
    assert res["F"] > 2.85 and res["p_F"] < 0.05
    # The Nemenyi critical difference of the same example: 2.569 * sqrt(4*5 / (6*14)) = 1.25.
    assert nemenyi_q(4) == pytest.approx(2.569, abs=1e-3)
    assert nemenyi_cd(4, 14) == pytest.approx(1.25, abs=0.005)
    # Demšar's table of q_0.05 for 2, 3 and 10 classifiers (given to three decimals).
    assert [nemenyi_q(k) for k in (2, 3, 10)] == pytest.approx([1.960, 2.343, 3.164], abs=1e-3)


def test_friedman_matches_scipy_without_ties() -> None:
    rng = np.random.default_rng(3)
    values = pd.DataFrame(rng.random((10, 4)), columns=list("ABCD"))
    res = friedman(values)
    ref = stats.friedmanchisquare(*[values[c] for c in values.columns])
    assert res["chi2"] == pytest.approx(ref.statistic)
    assert res["p_chi2"] == pytest.approx(ref.pvalue)
    # Lower is better: the column with the smallest values on every row gets rank 1.
    values["A"] = -1.0
    assert friedman(values)["mean_ranks"]["A"] == 1.0


def test_cd_groups_by_hand() -> None:
    ranks = pd.Series({"A": 1.0, "B": 1.5, "C": 2.9, "D": 3.6})
    assert cd_groups(ranks, 1.25) == [["A", "B"], ["C", "D"]]
    assert cd_groups(ranks, 2.0) == [["A", "B", "C"], ["C", "D"]]
    assert cd_groups(ranks, 0.1) == []
    assert cd_groups(ranks, 10.0) == [["A", "B", "C", "D"]]


# ---------------------------------------------------------------------------------------------
# Tables built by hand
# ---------------------------------------------------------------------------------------------


def _run(
    task_id: str,
    algo: str,
    stream: str,
    seed: int,
    stream_id: str,
    *,
    status: str = "ok",
    task: str = "binary",
    online_error: float = 0.2,
    n: int = 50,
    **extra: object,
) -> dict:
    return {
        "task_id": task_id,
        "algorithm": algo.split("[")[0],
        "algorithm_spec": algo,
        "kernel": "rbf[gamma=1.0]",
        "loss": None,
        "dataset": stream.split("[")[0],
        "stream": stream,
        "stream_seed": seed,
        "stream_id": stream_id,
        "seed": seed,
        "epochs": 1,
        "task": task,
        "n": n,
        "d": 2,
        "kbench_version": __version__,
        "results_format": RESULTS_FORMAT,
        "status": status,
        "reason": "" if status == "ok" else "RuntimeError: boom",
        "online_error": online_error,
        "test_error": np.nan,
        "constant_predictions": False,
    } | extra


def _results(runs: list[dict], outcomes: dict[str, np.ndarray]) -> Results:
    out = pd.DataFrame(
        [
            {
                "task_id": t,
                "stream_id": next(r["stream_id"] for r in runs if r["task_id"] == t),
                "outcome": o,
            }
            for t, o in outcomes.items()
        ],
        columns=["task_id", "stream_id", "outcome"],
    )
    return Results(runs=pd.DataFrame(runs), traces=pd.DataFrame(), outcomes=out)


def _accuracy_grid(
    seed: int, n_datasets: int, accuracy: dict[str, float]
) -> tuple[list[dict], dict[str, np.ndarray]]:
    """Runs and outcomes of each configuration on data sets d1, d2, … with two seeds each:
    400 examples, each right with the configuration's probability in ``accuracy``."""
    rng = np.random.default_rng(seed)
    runs, outcomes = [], {}
    for ds in (f"d{k + 1}" for k in range(n_datasets)):
        for s in range(2):
            for algo, acc in accuracy.items():
                tid = f"{ds}-{s}-{algo}"
                outcomes[tid] = rng.random(400) < acc
                err = 1 - outcomes[tid].mean()
                runs.append(_run(tid, algo, ds, s, f"{ds}-{s}", n=400, online_error=err))
    return runs, outcomes


def test_results_of_different_streams_are_refused() -> None:
    a = _run("t1", "perceptron", "toy", 0, "aaaa")
    b = _run("t2", "norma", "toy", 0, "bbbb")
    with pytest.raises(StreamMismatchError, match="different streams") as info:
        compare_runs(a, b, np.ones(50, bool), np.ones(50, bool))
    assert isinstance(info.value, KbenchError)
    assert "\n" not in str(info.value)
    with pytest.raises(StreamMismatchError):
        compare_outcomes(np.ones(5, bool), np.ones(6, bool), "binary")


def test_compare_never_pairs_across_stream_ids() -> None:
    rng = np.random.default_rng(4)
    runs = [
        _run("t1", "perceptron", "toy", 0, "aaaa"),
        _run("t2", "norma", "toy", 0, "aaaa"),
        _run("t3", "budget", "toy", 0, "cccc"),
    ]  # same data set and seed, but the stream changed
    res = compare(_results(runs, {t: rng.random(50) < 0.8 for t in ("t1", "t2", "t3")}))
    assert len(res.pairs) == 1
    assert set(res.pairs[["a", "b"]].iloc[0]) == {"perceptron", "norma"}
    assert any("different stream ids" in n and "budget" in n for n in res.notes)


def test_regression_study_from_tables() -> None:
    rng = np.random.default_rng(5)
    runs, outcomes = [], {}
    for seed in range(3):
        base = rng.exponential(1.0, 80)
        for i, (algo, scale) in enumerate((("good", 1.0), ("bad", 1.6))):
            tid = f"s{seed}-{i}"
            outcomes[tid] = base * scale
            runs.append(
                _run(
                    tid,
                    algo,
                    "reg",
                    seed,
                    f"id{seed}",
                    task="regression",
                    n=80,
                    online_error=float(outcomes[tid].mean()),
                )
            )
    res = compare(_results(runs, outcomes))
    assert (res.pairs["result"] == "win").all() and (res.pairs["a"] == "good").all()
    assert res.pairs["p"].isna().all()
    row = res.seeds.iloc[0]
    # Good is better on every stream, but three seeds cannot reach 0.05: no verdict.
    assert row["streams_won"] == 3 and row["a_better"] == 3
    assert row["p"] == pytest.approx(0.25) and row["result"] == "cannot tell"
    assert row["reason"] == "3 seeds: cannot be significant at 0.05; run ≥ 6"
    assert "pooled_p" not in res.seeds.columns
    assert any("no verdict over seeds on reg: 3 seeds" in n for n in res.notes)


def test_ranking_and_win_tie_loss_from_tables() -> None:
    runs, outcomes = _accuracy_grid(6, 4, {"strong": 0.95, "middle": 0.75, "weak": 0.55})
    res = compare(_results(runs, outcomes))
    assert isinstance(res, Comparison)
    assert list(res.ranking.mean_ranks.index) == ["strong", "middle", "weak"]
    assert list(res.ranking.mean_ranks) == [1.0, 2.0, 3.0]
    assert res.labels == ["strong", "middle", "weak"]
    fr = res.ranking.friedman
    assert fr["N"] == 4 and fr["k"] == 3 and fr["chi2"] == pytest.approx(8.0)
    assert fr["cd"] == pytest.approx(nemenyi_cd(3, 4))
    # exact: the 3! orders every block shares, out of (3!)^4 equally likely patterns
    assert fr["test"] == "exact" and fr["p"] == pytest.approx(1 / 216)
    # it rejects, so the Nemenyi groups are drawn: neighbours are within the CD of 1.66
    assert fr["significant"]
    assert res.ranking.groups == [["strong", "middle"], ["middle", "weak"]]
    wtl = res.wtl.set_index(["a", "b"])
    assert tuple(wtl.loc[("strong", "weak")]) == (8, 0, 0)
    assert tuple(wtl.loc[("weak", "strong")]) == (0, 0, 8)
    assert len(res.pairs) == 8 * 3
    assert res.pairs["p_holm"].isna().all()  # streams are described, not tested
    long = res.long_table()
    assert set(long["level"]) == {"stream", "seeds", "datasets"}
    json.dumps(res.to_dict(), allow_nan=False)


def test_failed_runs_are_kept_out_and_reported() -> None:
    rng = np.random.default_rng(7)
    runs = [
        _run("t1", "perceptron", "toy", 0, "aaaa"),
        _run("t2", "norma", "toy", 0, "aaaa"),
        _run("t3", "exploder", "toy", 0, "aaaa", status="error", online_error=np.nan),
    ]
    res = compare(_results(runs, {"t1": rng.random(50) < 0.8, "t2": rng.random(50) < 0.7}))
    assert len(res.pairs) == 1
    assert "exploder" in set(res.configs["label"])
    assert int(res.configs.set_index("label").loc["exploder", "failed"]) == 1
    assert any("did not finish" in n for n in res.notes)
    lb = res.leaderboard()
    assert lb.set_index("label").loc["exploder", "failed"] == "error×1"


def test_degenerate_learners_are_flagged() -> None:
    rng = np.random.default_rng(8)
    runs = [
        _run("t1", "perceptron", "toy", 0, "aaaa", online_error=0.1, majority_error=0.4),
        _run(
            "t2",
            "constant",
            "toy",
            0,
            "aaaa",
            online_error=0.4,
            majority_error=0.4,
            constant_predictions=True,
        ),
    ]
    traces = pd.DataFrame({"task_id": ["t1", "t2"], "seen": [50, 30], "epoch": [1, 1]})
    res = compare(
        Results(
            runs=pd.DataFrame(runs),
            traces=traces,
            outcomes=_results(
                runs, {"t1": rng.random(50) < 0.9, "t2": rng.random(50) < 0.6}
            ).outcomes,
        )
    )
    flags = res.runs.set_index("label")["flags"]
    assert flags["perceptron"] == ""
    assert "constant predictions" in flags["constant"]
    assert "online: at the majority-class rate" in flags["constant"]
    assert "saw 30 of 50 examples" in flags["constant"]
    assert any(n.startswith("degenerate learner: constant") for n in res.notes)


def test_bad_tables_are_refused() -> None:
    with pytest.raises(NothingToCompareError, match="no task results"):
        compare(Results(runs=pd.DataFrame(), traces=pd.DataFrame(), outcomes=pd.DataFrame()))
    failed = [_run("t1", "perceptron", "toy", 0, "aaaa", status="error")]
    with pytest.raises(NothingToCompareError, match=r"no task finished .*1 error"):
        compare(_results(failed, {}))
    newer = [_run("t1", "perceptron", "toy", 0, "aaaa", kbench_version="99.0.0")]
    with pytest.raises(ResultsError, match="newer than this kbench"):
        compare(_results(newer, {"t1": np.ones(50, bool)}))
    single = [_run("t1", "perceptron", "toy", 0, "aaaa")]
    res = compare(_results(single, {"t1": np.ones(50, bool)}))
    assert res.pairs.empty and any("nothing to pair" in n for n in res.notes)


# ---------------------------------------------------------------------------------------------
# A real study through the command line
# ---------------------------------------------------------------------------------------------


def _kbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(KBENCH), *args], capture_output=True, text=True, timeout=300)


def test_compare_command_on_a_real_study(small_study: Path, tmp_path: Path) -> None:
    csv_path, json_path = tmp_path / "pairs.csv", tmp_path / "cmp.json"
    res = CliRunner().invoke(
        cli,
        [
            "compare",
            str(small_study),
            "--csv",
            str(csv_path),
            "--json",
            str(json_path),
            "--streams",
        ],
        terminal_width=200,
    )
    assert res.exit_code == 0, res.output
    for text in (
        "twonorm",
        "checkerboard",
        "digits",
        "perceptron",
        "norma[c=0.001]",
        "across data sets",
        "win/tie/loss",
        "Friedman over 3 data sets and 3 configurations",
    ):
        assert text in res.output
    table = pd.read_csv(csv_path)
    assert set(table["level"]) == {"stream", "seeds", "datasets"}
    streams = table[table["level"] == "stream"]
    assert len(streams) == 3 * 3 * 3  # data sets x seeds x pairs
    # Recompute one stream's discordant counts straight from the outcome vectors.
    data = json.loads(json_path.read_text())
    pair = data["stream_pairs"][0]
    row = streams[
        (streams["stream_id"] == pair["stream_id"])
        & (streams["a"] == pair["a"])
        & (streams["b"] == pair["b"])
        & (streams["seed"] == pair["seed"])
    ].iloc[0]
    outcome = load_results(small_study).outcomes.set_index("task_id")["outcome"]
    a_wrong, b_wrong = ~outcome[pair["task_a"]], ~outcome[pair["task_b"]]
    aw, bw = int((a_wrong & ~b_wrong).sum()), int((b_wrong & ~a_wrong).sum())
    assert (row["a_worse"], row["b_worse"]) == (aw, bw)
    # The file options hold what --format prints, byte for byte (issue 33: --csv lacked
    # the degenerate columns, --json the groups).
    for fmt, path in (("csv", csv_path), ("json", json_path)):
        shown = _kbench("compare", str(small_study), "--format", fmt)
        assert shown.returncode == 0, shown.stderr
        assert path.read_text() == shown.stdout, fmt
    assert {"degenerate_a", "degenerate_b"} <= set(table.columns)
    assert {"groups", "grouping", "degenerate_legend"} <= set(data)
    assert math.isnan(row["p"])  # no per-example test
    # Three seeds and three pairs per data set: no verdict, and the table says why.
    assert "cannot tell" in res.output and "run ≥ 7" in res.output
    seeds = table[table["level"] == "seeds"]
    assert set(seeds["result"]) == {"cannot tell"} and (seeds["min_p"] == 0.25).all()
    assert set(seeds["reason"]) == {
        "3 seeds: cannot be significant at 0.05 after Holm over 3 pairs; run ≥ 7"
    }
    data = json.loads(json_path.read_text())
    assert {
        "configurations",
        "leaderboard",
        "stream_pairs",
        "seed_pairs",
        "datasets",
        "win_tie_loss",
        "notes",
    } <= set(data)
    assert data["datasets"]["friedman"]["N"] == 3


def test_compare_command_bad_input(small_study: Path, tmp_path: Path, plugin_dist) -> None:
    missing = _kbench("compare", str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert (
        missing.stderr.strip().startswith("kbench: error:")
        and len(missing.stderr.strip().splitlines()) == 1
    )
    assert "does not exist" in missing.stderr

    empty = tmp_path / "empty"
    (empty / "tasks").mkdir(parents=True)
    res = _kbench("compare", str(empty))
    assert res.returncode == 2 and "no task results" in res.stderr

    plain = tmp_path / "plain"
    plain.mkdir()
    res = _kbench("compare", str(plain))
    assert res.returncode == 2 and "not a kbench results folder" in res.stderr

    single = tmp_path / "single"
    ok = CliRunner().invoke(
        cli,
        [
            "run",
            "-a",
            "perceptron",
            "-d",
            "twonorm[n=100,n_test=50]",
            "--workers",
            "0",
            "--out",
            str(single),
        ],
    )
    assert ok.exit_code == 0, ok.output
    res = _kbench("compare", str(single))
    assert res.returncode == 2 and "nothing to pair" in res.stderr

    from conftest import MISBEHAVING

    plugin_dist("kbench_misbehaving", MISBEHAVING)
    failed = tmp_path / "failed"
    ran = _kbench(
        "run",
        "-a",
        "exploder",
        "-d",
        "twonorm[n=100,n_test=50]",
        "--workers",
        "0",
        "--out",
        str(failed),
    )
    assert "error" in ran.stderr
    res = _kbench("compare", str(failed))
    assert res.returncode == 2 and "no task finished" in res.stderr and "1 error" in res.stderr

    # An unreadable result file is named, in one line.
    broken = next((small_study / "tasks").glob("*.parquet"))
    broken.write_bytes(b"not parquet")
    res = _kbench("compare", str(small_study))
    assert (
        res.returncode == 2
        and broken.name in res.stderr
        and len(res.stderr.strip().splitlines()) == 1
    )


# ---------------------------------------------------------------------------------------------
# Verdicts come from the seeds
# ---------------------------------------------------------------------------------------------


def _flip(correct: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """A copy of ``correct`` with ``k`` of its wrong examples made right."""
    out = correct.copy()
    out[rng.choice(np.flatnonzero(~correct), k, replace=False)] = True
    return out


def _render(res: Comparison) -> str:
    from rich.console import Console

    from kbench.cli.render import print_comparison

    console = Console(record=True, width=250)
    print_comparison(res, console)
    return " ".join(console.export_text().split())


def _split_seed_study() -> tuple[list[dict], dict[str, np.ndarray]]:
    """Six seeds of 2 000 examples: A far better on four, B better still on two."""
    rng = np.random.default_rng(11)
    runs, outcomes = [], {}
    for seed in range(6):
        base = rng.random(2000) < 0.7
        a, b = (_flip(base, 200, rng), base) if seed < 4 else (base, _flip(base, 250, rng))
        for algo, o in (("alpha", a), ("beta", b)):
            tid = f"{algo}-{seed}"
            outcomes[tid] = o
            runs.append(
                _run(tid, algo, "ds", seed, f"ds-{seed}", n=2000, online_error=1 - o.mean())
            )
    return runs, outcomes


def test_seeds_that_split_give_no_better() -> None:
    runs, outcomes = _split_seed_study()
    res = compare(_results(runs, outcomes))
    row = res.seeds.iloc[0]
    assert (row["a_better"], row["b_better"]) == (4, 2)
    # Summing every seed's discordant examples into one table would call A better with a
    # tiny p; the seeds, the replicates, do not support it.
    aw, bw = int(res.pairs["a_worse"].sum()), int(res.pairs["b_worse"].sum())
    assert mcnemar_exact(aw, bw) < 1e-10
    assert row["p"] > 0.5 and row["result"] == "tie"
    assert not any(c.startswith("pooled") for c in res.seeds.columns)
    text = _render(res)
    assert "A beta" in text or "B beta" in text
    assert " tie " in text + " " and "pooled" not in text


def test_a_single_seed_gives_no_verdict_and_no_p_value() -> None:
    runs, outcomes = _split_seed_study()
    keep = {"alpha-0", "beta-0"}
    res = compare(
        _results([r for r in runs if r["task_id"] in keep], {t: outcomes[t] for t in keep})
    )
    row = res.seeds.iloc[0]
    assert row["n_pairs"] == 1 and row["result"] == "n/a" and row["test"] == "none"
    assert math.isnan(row["p"]) and math.isnan(row["p_holm"])
    assert row["reason"] == "1 seed: a test over seeds needs at least 2"
    text = _render(res)
    # the reason once, under the table, numbered in the verdict cell
    assert "not available (1)" in text
    assert "(1) 1 seed: a test over seeds needs at least 2" in text
    assert any(n.startswith("no verdict over seeds on ds: 1 seed") for n in res.notes)


def test_holm_over_the_pairs_of_a_data_set() -> None:
    rng = np.random.default_rng(12)
    runs, outcomes = [], {}
    for seed in range(8):
        for algo, acc in (("good", 0.9), ("mid", 0.8), ("bad", 0.7)):
            tid = f"{algo}-{seed}"
            outcomes[tid] = rng.random(300) < acc + rng.normal(0, 0.01)
            runs.append(
                _run(
                    tid,
                    algo,
                    "ds",
                    seed,
                    f"ds-{seed}",
                    n=300,
                    online_error=1 - outcomes[tid].mean(),
                )
            )
    res = compare(_results(runs, outcomes))
    seeds = res.seeds
    assert len(seeds) == 3 and (seeds["family"] == 3).all()
    np.testing.assert_allclose(seeds["p_holm"], holm(seeds["p"].to_numpy()), rtol=1e-12)
    # Eight seeds all one way: p = 2/2**8 per pair, 3 · 2/256 = 0.023 after Holm.
    assert seeds["p"].min() == pytest.approx(2 / 256)
    assert set(seeds["result"]) == {"win"}
    np.testing.assert_allclose(seeds["min_p"], 2 / 256, rtol=1e-12)


def test_mixed_kbench_versions_are_noted() -> None:
    runs, outcomes = _split_seed_study()
    runs[0] = runs[0] | {"kbench_version": "0.0.9"}
    res = compare(_results(runs, outcomes))
    note = next(n for n in res.notes if n.startswith("runs written by 2 kbench versions"))
    assert "0.0.9 (1 run)" in note and f"{__version__} (11 runs)" in note
    assert version_notes(pd.DataFrame(runs[1:])) == []


def test_bayesian_pairs_across_data_sets() -> None:
    runs, outcomes = _accuracy_grid(13, 5, {"strong": 0.95, "weak": 0.6})
    res = compare(_results(runs, outcomes), rope=0.01)
    pair = res.ranking.pairs.iloc[0]
    assert pair["a"] == "strong" and pair["p_a_better"] > 0.95
    assert pair["p_a_better"] + pair["p_rope"] + pair["p_b_better"] == pytest.approx(1.0)
    # Five data sets: 2/32 = 0.0625, the exact test cannot reach 0.05.
    assert pair["result"] == "cannot tell" and pair["reason"].startswith("5 data sets")
    assert "P(equi" in _render(res)
    assert "p_rope" not in compare(_results(runs, outcomes)).ranking.pairs.columns
    with pytest.raises(KbenchError, match="rope"):
        compare(_results(runs, outcomes), rope=-1.0)


# ---------------------------------------------------------------------------------------------
# No "better" that the test over seeds does not support, in every output of kbench compare
# ---------------------------------------------------------------------------------------------

_CELL = {"win": "A", "loss": "B", "tie": "tie"}


def _a9a_study(tmp: Path, seeds: str, *algos: str) -> Path:
    out = tmp / "results"
    args = ["run", *(x for a in algos for x in ("-a", a)), "-d", "a9a[n=1500]"]
    res = CliRunner().invoke(cli, [*args, "--seeds", seeds, "--out", str(out), "--no-report"])
    assert res.exit_code == 0, res.output
    return out


def _compare(out: Path, *args: str) -> str:
    res = CliRunner().invoke(cli, ["compare", str(out), *args])
    assert res.exit_code == 0, res.output
    return res.stdout


def _better_cells(text: str) -> list[str]:
    """The 'better' cell of every pair of the per-data-set tables of the terminal output:
    the text after the last number of each row's first line (rows start with 'A ')."""
    cells = []
    for line in text.split("better: exact Wilcoxon")[0].splitlines():
        if line.strip().startswith("A "):
            cells.append(line.rstrip().split("   ")[-1].strip())
    return cells


def _check_every_format(out: Path) -> pd.DataFrame:
    """Each output format gives the seed-level verdict, and nothing else, as the verdict;
    returns the seed-level rows of the CSV."""
    table = pd.read_csv(io.StringIO(_compare(out, "--format", "csv")))
    seeds = table[table["level"] == "seeds"].reset_index(drop=True)
    assert len(seeds)
    # A verdict is A or B only where the Holm-adjusted p of the test over seeds is below
    # alpha, and on the side of the lower mean error.
    for r in seeds.itertuples():
        if r.result in ("win", "loss"):
            assert r.p_holm < 0.05 and (r.diff < 0) == (r.result == "win"), r
    # Per-stream rows describe one stream order; they never carry a verdict's words.
    streams = table[table["level"] == "stream"]
    assert len(streams) and not set(streams["result"]) & {"win", "loss", "tie"}
    assert (streams["reason"] == "one stream order described; no test").all()
    assert streams["p"].isna().all() and streams["p_holm"].isna().all()
    # Terminal table: the better cell is the seed-level verdict, with the number of its
    # reason, said once under the table.
    text = _compare(out)
    cells = _better_cells(text)
    notes: dict[str, int] = {}
    expected = [
        _CELL[r.result]
        if r.result in _CELL
        else f"{r.result} ({notes.setdefault(r.reason, len(notes) + 1)})"
        for r in seeds.itertuples()
    ]
    assert cells == expected, (cells, expected)
    flat = "".join(text.split())  # a long reason folds at the terminal's width
    for reason, k in notes.items():
        assert f"({k}){reason}".replace(" ", "") in flat
    # Markdown keeps each reason in its cell: a file read row by row, not a screen
    expected = [_CELL.get(r.result, f"{r.result}: {r.reason}") for r in seeds.itertuples()]
    data = json.loads(_compare(out, "--format", "json"))
    codes = [p["result"] for p in data["seed_pairs"]]
    assert [{"n/a": "not available"}.get(c, c) for c in codes] == list(seeds["result"])
    assert not {p["result"] for p in data["stream_pairs"]} & {"win", "loss", "tie"}
    assert data["groups"] and data["grouping"]
    md = _compare(out, "--format", "markdown")
    rows = [ln for ln in md.splitlines() if ln.count("|") == 6 and not ln.startswith("|---")]
    md_cells = [ln.strip("| ").split(" | ")[-1] for ln in rows[1:]]
    assert md_cells == expected, md
    return seeds


def test_compare_one_seed_names_no_better_in_any_format(tmp_path: Path) -> None:
    """One seed on real data: no test over seeds exists, so no configuration is named
    better in the terminal table, the CSV, the JSON, the Markdown or the LaTeX table, and
    each says why (the per-example McNemar test once gave p = 5e-15 here)."""
    out = _a9a_study(tmp_path, "0", "perceptron", "norma[budget=100]")
    seeds = _check_every_format(out)
    # In words in the CSV: a reader's default parser would take "n/a" for a missing value.
    assert list(seeds["result"]) == ["not available"]
    assert list(seeds["reason"]) == ["1 seed: a test over seeds needs at least 2"]
    assert seeds["p"].isna().all() and seeds["p_holm"].isna().all()
    text = _compare(out)
    assert "not available (1)" in text
    assert "(1) 1 seed: a test over seeds needs at least 2" in text
    assert "left out of the ranking" not in text
    assert "One data set: the configurations are ranked over its 1 seed," in text
    tex = _compare(out, "--format", "latex")
    body = tex.split("\\midrule")[1].split("\\bottomrule")[0]
    assert "$^{*}$" not in body  # no configuration marked significantly worse
    assert "No verdict over seeds on a9a: 1 seed: a test over seeds needs at least 2" in tex
    md = _compare(out, "--format", "markdown")
    assert "not available: 1 seed: a test over seeds needs at least 2" in md


def test_compare_split_seeds_follow_the_test_over_seeds(tmp_path: Path) -> None:
    """Three budgets of NORMA over eight seeds of a9a: the final errors are close, so some
    pair is better on some seeds and worse on others. Every output gives that pair the
    seed-level verdict (no pooled per-example p-value turns a split into 'better')."""
    out = _a9a_study(tmp_path, "0-7", "norma[budget=100]", "norma[budget=105]", "norma[budget=110]")
    seeds = _check_every_format(out)
    # Budgets 5 support vectors apart: whichever CPU and BLAS, the seeds do not all agree on
    # every pair (checked, not assumed: the test needs one split pair to mean anything).
    split = seeds[(seeds["a_better"] > 0) & (seeds["b_better"] > 0)]
    assert len(split), seeds[["a", "b", "a_better", "equal", "b_better"]]
    for r in split.itertuples():
        if r.result in ("win", "loss"):
            assert r.p_holm < 0.05
        else:
            assert r.result == "tie" and r.p_holm >= 0.05


def test_compare_ranks_per_experiment_group_and_marks_per_data_set(tmp_path: Path) -> None:
    """Other configurations on each data set (as in the default study): kbench compare
    ranks each group of data sets that ran the same configurations, says so in a sentence,
    prints no note about configurations left out of one ranking, and marks a cell of the
    ranking degenerate exactly where that run is (runs.parquet's degenerate column)."""
    study = tmp_path / "study.toml"
    study.write_text(
        """
[study]
seeds = [0, 1]

[[experiment]]
name = "twonorm"
datasets = ["twonorm[n_train=300,n_test=200]"]
algorithms = ["perceptron"]
kernels = ["rbf[gamma=0.5]", "rbf[gamma=1000000.0]"]

[[experiment]]
name = "checkerboard"
datasets = ["checkerboard[n_train=300,n_test=200,noise=0.1,k=2]"]
algorithms = ["perceptron", "norma[budget=30]"]
kernels = ["rbf[gamma=20.0]"]
"""
    )
    out = tmp_path / "results"
    res = CliRunner().invoke(cli, ["run", str(study), "--out", str(out), "--no-report"])
    assert res.exit_code == 0, res.output
    text = _compare(out)
    assert "The configurations differ by data set" in text
    assert "left out of the ranking" not in text and "ranks across data sets need" not in text
    assert text.count("Friedman over 2 seeds") == 2
    assert text.count("win/tie/loss over streams of ") == 2
    cmp = kbench.compare(out)  # what kbench compare calls
    flags = {
        (str(r.stream).split("[")[0], str(int(r.seed)), str(r.label)): bool(r.flags)
        for r in cmp.runs.itertuples()
    }
    # So narrow a kernel predicts one class on twonorm: flagged there, the other not.
    assert any(flags.values()) and not all(flags.values()), flags
    seen = {}
    # Each group table's title starts with its data set's name, before the marker.
    parts = text.split(": mean rank over its 2 seeds")
    for before, block in itertools.pairwise(parts):
        name = before.splitlines()[-1].strip()
        for line in block.split("Friedman over")[0].splitlines():
            m = re.match(r"^\s*\d+\s+(.+?)\s{2,}\d+\.\d\d\s{2,}(.*)$", line)
            if not m:
                continue
            cells = re.findall(r"\d+\.\d\d% \([\d.]+\)( ⚠)?", m.group(2))
            assert len(cells) == 2, line
            for seed, mark in enumerate(cells):
                seen[(name, str(seed), m.group(1))] = mark == f" {MARK}"
    assert seen == flags, (seen, flags)
