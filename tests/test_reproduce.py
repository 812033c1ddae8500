"""Tests of ``kbench reproduce``: the claims' evaluation on synthetic results, the command's
handling of bad input, and the quick reproduction of every paper end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kbench.core.errors import KbenchError
from kbench.reproduce.claims import (
    CONSISTENT,
    NOT,
    PAPERS,
    PARTLY,
    POLK,
    RAMP,
    REPRODUCED,
    SMOKE,
    SVMD,
    VERDICTS,
    Finding,
    Paper,
    adjust,
    base_verdict,
    evaluate,
    markdown,
    mean_sd,
    missing_algorithms,
    not_run,
    paired,
    resolve,
    seeds_needed,
    select,
)
from kbench.results.store import Results

KBENCH = [sys.executable, "-m", "kbench.cli.main"]


def _results(arms: dict[str, tuple[str, float]], seeds: int = 4, n: int = 400) -> Results:
    """Runs of several arms on identical binary streams: arm label → (spec, error rate).

    Each arm's per-example outcomes err on a seeded random set of examples of that size, so
    the paired tests see the difference the error rates say.
    """
    runs, outcomes, traces = [], [], []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        u = rng.random(n)
        for label, (spec, rate) in arms.items():
            tid = f"{label}-{seed}"
            correct = u >= rate  # nested error sets: a lower rate errs on a subset
            runs.append(
                {
                    "task_id": tid,
                    "algorithm": spec.split("[")[0],
                    "algorithm_spec": spec,
                    "stream": "usps_like[pixels=signed,positive=5-9]",
                    "stream_id": f"s{seed}",
                    "seed": seed,
                    "epochs": 1,
                    "task": "binary",
                    "status": "ok",
                    "offline": False,
                    "online_error": float(1 - correct.mean()),
                    "test_error": float(1 - correct.mean()),
                    "n_support": 16.0 + seed % 2,
                }
            )
            outcomes.append({"task_id": tid, "stream_id": f"s{seed}", "outcome": correct})
            for seen in (100, 200, 300, 400):
                traces.append({"task_id": tid, "seen": seen, "n_support": 16.0})
    return Results(
        runs=pd.DataFrame(runs),
        traces=pd.DataFrame(traces),
        outcomes=pd.DataFrame(outcomes, columns=["task_id", "stream_id", "outcome"]),
    )


SVMD_SPEC = "svmd[budget=512,c=1.0,eta=1.0,lam={lam},mu=1.0,nu=0.05]"
NORMA_SPEC = "norma[budget=512,c=1.0,eta=1.0,schedule=decay_tau,tau=10.0]"


def _svmd_r1(e_smd: float, e_one: float, e_norma: float, seeds: int = 8) -> Finding:
    res = _results(
        {
            "smd": (SVMD_SPEC.format(lam=0.95), e_smd),
            "one": (SVMD_SPEC.format(lam=0.0), e_one),
            "norma": (NORMA_SPEC, e_norma),
        },
        seeds=seeds,
    )
    claim = next(c for c in SVMD.claims if c.id == "R1")
    return claim.evaluate(res)


def test_r1_reproduced_when_svmd_makes_half_the_errors() -> None:
    f = _svmd_r1(0.10, 0.14, 0.20)
    assert f.verdict == REPRODUCED
    assert "signed-rank test over 8 paired streams" in f.reason and "Holm over 2 tests" in f.reason
    assert "±" in f.value


def test_r1_with_four_seeds_is_consistent_not_reproduced() -> None:
    # Every one of four seeds favours SVMD by thousands of examples' worth, but four
    # streams cannot make two tests significant after Holm (2 · 2/2**4 = 0.25): seven can.
    f = _svmd_r1(0.10, 0.14, 0.20, seeds=4)
    assert f.verdict == "consistent, not significant (needs ≥ 7 seeds)"
    assert base_verdict(f.verdict) == CONSISTENT


def test_r1_partly_when_the_ratio_is_off() -> None:
    f = _svmd_r1(0.17, 0.18, 0.20)
    assert f.verdict == PARTLY
    assert "ratio" in f.reason


def test_r1_not_when_svmd_is_no_better() -> None:
    f = _svmd_r1(0.20, 0.20, 0.20)
    assert f.verdict == NOT


def test_missing_arm_gives_a_not_row_with_the_reason() -> None:
    res = _results({"smd": (SVMD_SPEC.format(lam=0.95), 0.1)})
    rows = evaluate(SVMD, res)
    assert [r.claim for r in rows] == [c.id for c in SVMD.claims]
    assert all(r.verdict == NOT and "could not be evaluated" in r.reason for r in rows)


def test_quick_verdicts_say_smoke_run() -> None:
    res = _results(
        {
            "smd": (SVMD_SPEC.format(lam=0.95), 0.1),
            "one": (SVMD_SPEC.format(lam=0.0), 0.14),
            "norma": (NORMA_SPEC, 0.2),
        },
        seeds=8,
    )
    quick = evaluate(SVMD, res, quick=True)
    full = evaluate(SVMD, res)
    assert all(q.verdict == SMOKE + f.verdict for q, f in zip(quick, full, strict=True))
    assert quick[0].verdict == "smoke run: reproduced"
    assert "smoke run: reproduced" in markdown(quick)


def test_polk_claims_on_synthetic_results() -> None:
    res = _results(
        {
            "polk": ("polk[K=0.04,batch_size=32,eta=6.0,lam=1e-06]", 0.05),
            "bsgd": ("bsgd[budget=16]", 0.2),
        },
        seeds=8,
    )
    rows = {r.claim: r for r in evaluate(POLK, res)}
    assert rows["C6"].verdict == REPRODUCED  # a flat model order
    assert rows["C10"].verdict == REPRODUCED
    assert "16.0" in rows["C6"].kbench_value


def _removal(rates: dict[str, float], requests: dict[str, float]) -> Finding:
    spec = "online_svm_r[C=1.0,m={m}]"
    res = _results({m: (spec.format(m=m), rate) for m, rate in rates.items()}, seeds=8)
    by_task = dict(zip(res.runs["task_id"], res.runs["algorithm_spec"], strict=True))
    m_of = {tid: sp.split("m=")[1].split("]")[0] for tid, sp in by_task.items()}
    res.traces["kernel_requests"] = [requests[m_of[t]] for t in res.traces["task_id"]]
    claim = next(c for c in RAMP.claims if c.id == "17")
    return claim.evaluate(res)


def test_ramp_removal_claim_on_synthetic_results() -> None:
    """Claim 17 reads accuracy per budget m and the requested kernel values of the traces."""
    cost = {"0": 1e6, "100": 4e6, "None": 9e6}
    good = _removal({"0": 0.12, "100": 0.101, "None": 0.10}, cost)
    assert good.verdict == REPRODUCED and "m=0 loses" in good.reason
    small_loss = _removal({"0": 0.104, "100": 0.10, "None": 0.10}, cost)
    assert small_loss.verdict == PARTLY
    not_monotone = _removal({"0": 0.12, "100": 0.10, "None": 0.10}, {**cost, "100": 2e7})
    assert not_monotone.verdict == NOT and "not monotone" in not_monotone.reason


def test_select_matches_parameters_as_numbers() -> None:
    res = _results({"a": ("svmd[lam=0.95]", 0.1), "b": ("svmd[lam=0.0]", 0.1)})
    assert len(select(res, "svmd", lam=0.95)) == 4
    assert len(select(res, "svmd", lam=0)) == 4
    assert len(select(res, "svmd", lam=0.5)) == 0
    assert len(select(res, "svmd", exclude=("positive",))) == 0


def test_paired_streams_holm_and_seeds_needed() -> None:
    res = _results({"a": ("svmd[lam=0.95]", 0.1), "b": ("norma[tau=10.0]", 0.2)}, seeds=6)
    t = paired(select(res, "svmd"), select(res, "norma"), "online_error")
    assert t["n_pairs"] == 6 and t["a_better"] == 6 and t["problems"] == 1
    assert t["p"] == pytest.approx(2 / 64)  # every stream one way: the exact floor
    adjust(t)
    assert t["p_holm"] == pytest.approx(2 / 64) and seeds_needed(t) is None
    u = dict(t)
    adjust(t, u)  # two tests: 2 · 2/64 = 0.0625, six streams no longer reach 0.05
    assert t["p_holm"] == pytest.approx(0.0625) and seeds_needed(t, u) == 7
    # Streams over three problems: the streams needed are said in seeds per problem.
    t3 = t | {"problems": 3, "n_pairs": 6, "family": 2}
    assert seeds_needed(t3) == 3  # 7 streams, over 3 problems: 3 seeds each


def test_mean_sd_and_finding() -> None:
    assert mean_sd([0.1, 0.3]) == "0.200 ± 0.141"
    assert mean_sd([0.5]) == "0.500"
    assert mean_sd([]) == "–"
    with pytest.raises(ValueError):
        Finding("x", "maybe", "")
    with pytest.raises(ValueError):
        Finding("x", "not", "")  # the old verdict is no longer accepted
    assert Finding("x", "consistent, not significant (needs ≥ 7 seeds)", "").verdict
    assert base_verdict("smoke run: not reproduced") == NOT


def test_resolve_and_missing_algorithms() -> None:
    assert [p.key for p in resolve("all")] == list(PAPERS)
    with pytest.raises(KbenchError, match="unknown paper 'nope'"):
        resolve("nope")

    class Reg:
        def names(self, kind: str) -> list[str]:
            return ["svmd"]

    fake = Paper("x", "X", ("svmd", "norma"), SVMD.claims)
    assert missing_algorithms(fake, Reg()) == ["norma"]
    rows = not_run(fake, ["norma"])
    assert len(rows) == len(SVMD.claims)
    assert all(r.reason == "not run: algorithm norma is not available" for r in rows)
    assert markdown(rows).count("\n") == len(rows) + 2


def test_every_paper_has_its_study_files() -> None:
    for p in PAPERS.values():
        assert p.study(quick=False).is_file() and p.study(quick=True).is_file()
        assert len({c.id for c in p.claims}) == len(p.claims)


def test_unknown_paper_is_one_line_and_exit_2() -> None:
    r = subprocess.run([*KBENCH, "reproduce", "nope"], capture_output=True, text=True)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown paper 'nope'" in lines[0]


@pytest.mark.slow
def test_reproduce_all_quick(tmp_path: Path) -> None:
    out = tmp_path / "rep"
    r = subprocess.run(
        [*KBENCH, "reproduce", "all", "--quick", "--out", str(out), "--workers", "2"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    rows = json.loads((out / "claims.json").read_text())
    expected = [(p.key, c.id) for p in PAPERS.values() for c in p.claims]
    assert [(row["paper"], row["claim"]) for row in rows] == expected
    assert all(
        row["verdict"].startswith(SMOKE) and base_verdict(row["verdict"]) in VERDICTS
        for row in rows
    )
    assert all(row["reason"] for row in rows)
    assert "verdict" in (out / "reproduction.md").read_text()
    assert "kbench reproduce all --quick" in r.stdout
    for p in PAPERS:
        assert (out / p / "report.html").is_file()
