"""One-vs-rest and one-vs-one reductions: equivalence, voting, kernel counts, CLI, bad input."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kbench.core.errors import SpecError
from kbench.core.registry import get_registry
from kbench.data.streams import StreamSpec, build_stream
from kbench.execution.study import Experiment, plan

KERNEL = "rbf[gamma=0.02]"
KBENCH = [sys.executable, "-m", "kbench.cli.main"]


def digits(n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """The first n examples of kbench's digits stream (10 classes, 64 features)."""
    s = build_stream(StreamSpec("digits"), get_registry())
    return np.ascontiguousarray(s.X[:n]), np.ascontiguousarray(s.y[:n])


def reduction(spec: str, n_classes: int = 10, kernel: str = KERNEL):
    reg = get_registry()
    return reg.create(
        "algorithm",
        spec,
        kernel=reg.create("kernel", kernel),
        task="multiclass",
        n_classes=n_classes,
        seed=0,
    )


def binary(spec: str, seed: int, kernel: str = KERNEL):
    reg = get_registry()
    return reg.create(
        "algorithm", spec, kernel=reg.create("kernel", kernel), task="binary", seed=seed
    )


@pytest.mark.parametrize("base", ["forgetron[budget=30]", "perceptron", "pa"])
def test_ovr_equals_independent_binary_learners(base: str) -> None:
    """Without sharing, OvR is C binary learners trained on relabelled streams (class k → +1),
    predicting the argmax of their scores: the same code path, so exactly equal."""
    X, y = digits()
    ovr = reduction(f"ovr[base={base},share=false]")
    pred = ovr.learn_predict_many(X, y)
    learners = [binary(base, seed=k) for k in range(10)]
    ref = np.empty(len(X))
    for i, x in enumerate(X):
        scores = np.array([m.decision_one(x) for m in learners])
        ref[i] = np.argmax(scores)
        for k, m in enumerate(learners):
            m.learn_one(x, 1.0 if y[i] == k else -1.0)
    np.testing.assert_array_equal(pred, ref)
    assert ovr.stats()["n_support"] == sum(m.stats()["n_support"] for m in learners)
    assert ovr.stats()["kernel_evals"] == sum(m.stats()["kernel_evals"] for m in learners)
    # The binary learners are not trivial: most of the stream is predicted correctly.
    assert np.mean(pred == y) > 0.7


@pytest.mark.parametrize("base", ["forgetron[budget=30]", "perceptron", "pa", "rbp[budget=30]"])
def test_sharing_computes_fewer_values_and_learns_the_same(base: str) -> None:
    """Shared rows: the same models (scores within rounding: the shared values come from the
    kernel's Python row, the unshared ones from the compiled row, which may differ in the
    last bits), and strictly fewer kernel values computed than the learners requested."""
    X, y = digits(300)
    on, off = reduction(f"ovr[base={base}]"), reduction(f"ovr[base={base},share=false]")
    p_on, p_off = on.learn_predict_many(X, y), off.learn_predict_many(X, y)
    # A flipped mistake decision would make the models differ from there on; the scores
    # of the held-out rows agree to rounding only if every update was the same.
    Xt = digits(500)[0][300:]
    s_on = np.array([on.decision_one(x) for x in Xt])
    s_off = np.array([off.decision_one(x) for x in Xt])
    np.testing.assert_allclose(s_on, s_off, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(p_on, p_off)
    st_on, st_off = on.stats(), off.stats()
    assert st_on["n_support"] == st_off["n_support"]
    assert st_on["kernel_evals"] < st_on["kernel_evals_requested"]
    assert st_off["kernel_evals"] == st_off["kernel_evals_requested"]


def test_shared_count_is_the_number_of_distinct_values() -> None:
    """The shared count is exactly the number of (example, stored example) pairs computed:
    per example, the union of the learners' support sets (the kernel perceptron's
    support set only grows, so that union is known from the learners' buffers)."""
    X, y = digits(200)
    ovr = reduction("ovr[base=perceptron]")
    expected = 0
    for x, label in zip(X, y, strict=True):
        tags = [m.model.store.X[: m.model.store.size, -1] for m in ovr.learners if m.model.store]
        expected += len(np.unique(np.concatenate(tags))) if tags else 0
        ovr.learn_predict_many(x[None, :], np.array([label]))
    assert ovr.stats()["kernel_evals"] == expected


def test_ovo_votes_match_numpy_reference() -> None:
    """OvO: pair (i, j) learns from classes i (+1) and j (−1) only; the class with most
    votes wins, the lowest class on a tie (np.argmax)."""
    X, y = digits(300)
    mask = y < 4
    X, y = X[mask], y[mask]
    ovo = reduction("ovo[base=perceptron,share=false]", n_classes=4)
    pred = ovo.learn_predict_many(X, y)
    pairs = list(itertools.combinations(range(4), 2))
    learners = [binary("perceptron", seed=p) for p in range(len(pairs))]
    ref = np.empty(len(X))
    for n, x in enumerate(X):
        f = np.array([m.decision_one(x) for m in learners])
        votes = np.zeros(4)
        for (i, j), fij in zip(pairs, f, strict=True):
            votes[i if fij >= 0 else j] += 1
        ref[n] = np.argmax(votes)
        for (i, j), m in zip(pairs, learners, strict=True):
            if y[n] in (i, j):
                m.learn_one(x, 1.0 if y[n] == i else -1.0)
    np.testing.assert_array_equal(pred, ref)
    assert np.mean(pred == y) > 0.8
    # Sharing counts fewer values and learns the same models.
    shared = reduction("ovo[base=perceptron]", n_classes=4)
    np.testing.assert_array_equal(shared.learn_predict_many(X, y), pred)
    assert shared.stats()["kernel_evals"] < ovo.stats()["kernel_evals"]


def test_bad_base_learners_are_refused() -> None:
    for spec, words in [
        ("ovr[base=libsvm]", "batch learner"),
        ("ovo[base=ovr]", "not a binary learner"),
        ("ovr[base=active_all]", "active learner"),
    ]:
        with pytest.raises(ValueError, match=words):
            reduction(spec)


def test_planner_reduces_binary_only_learners_when_asked() -> None:
    reg = get_registry()
    exp = Experiment(algorithms=["forgetron[budget=50]", "perceptron"], datasets=["digits"])
    p = plan([exp], reg)
    assert [t.algorithm for t in p.tasks] == ["perceptron"]
    assert "forgetron does not support multiclass" in p.skipped[0][1]
    exp.multiclass = "ovr"
    p = plan([exp], reg)
    # perceptron runs multiclass itself and is left alone.
    assert sorted(t.algorithm for t in p.tasks) == [
        "ovr[base=forgetron[budget=50],share=True]",
        "perceptron",
    ]
    # On binary data the reduction does not apply and the learner runs as it is.
    exp.datasets = ["digits[positive=5-9]"]
    assert sorted(t.algorithm for t in plan([exp], reg).tasks) == [
        "forgetron[budget=50]",
        "perceptron",
    ]
    exp.multiclass = "ova"
    with pytest.raises(SpecError, match="multiclass must be ovr or ovo"):
        plan([exp], reg)


def kbench(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="200", OPENBLAS_NUM_THREADS="1")
    return subprocess.run([*KBENCH, *args], capture_output=True, text=True, timeout=600, env=env)


def test_cli_multiclass_runs_forgetron_on_digits(tmp_path: Path) -> None:
    out = tmp_path / "r"
    common = ["-d", "digits[n=500]", "-k", KERNEL, "--workers", "0", "--out", str(out)]
    skipped = kbench("run", "-a", "forgetron[budget=50]", *common)
    assert skipped.returncode == 2 and "no runnable task" in skipped.stderr
    assert "skipped forgetron on digits" in skipped.stderr
    proc = kbench("run", "-a", "forgetron[budget=50]", "--multiclass", "ovr", *common)
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(out / "runs.parquet")
    assert runs["algorithm_spec"].tolist() == ["ovr[base=forgetron[budget=50],share=True]"]
    assert runs["status"].tolist() == ["ok"]
    assert runs["online_error"].iloc[0] < 0.3  # ten classes: chance is 0.9
    proc = kbench("run", "-a", "forgetron[budget=50]", "--multiclass", "ovo", *common)
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(out / "runs.parquet")
    assert set(runs["algorithm_spec"]) == {
        "ovr[base=forgetron[budget=50],share=True]",
        "ovo[base=forgetron[budget=50],share=True]",
    }


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["-a", "ovr[base=libsvm]"], "is a batch learner"),
        (["-a", "ovo[base=ovr]"], "is not a binary learner"),
        (["-a", "ovr[base=nosuch]"], "unknown algorithm 'nosuch'"),
        (["-a", "forgetron", "--multiclass", "ova"], "'ova' is not one of"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(tmp_path: Path, args: list[str], words: str) -> None:
    out = tmp_path / "r"
    proc = kbench("run", *args, "-d", "digits[n=100]", "--workers", "0", "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    assert words in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


def test_study_file_multiclass_key(tmp_path: Path) -> None:
    from kbench.core.errors import KbenchError
    from kbench.execution.study import load_study

    path = tmp_path / "s.toml"
    path.write_text(
        '[study]\nmulticlass = "ovo"\n\n[[experiment]]\n'
        'algorithms = ["bpa_s[budget=20]"]\ndatasets = ["digits"]\n'
    )
    tasks = plan(load_study(path), get_registry()).tasks
    assert [t.algorithm for t in tasks] == [
        get_registry().canonical("algorithm", "ovo[base=bpa_s[budget=20]]")
    ]
    path.write_text('[study]\nmulticlass = "all"\nalgorithms = ["pa"]\ndatasets = ["digits"]\n')
    with pytest.raises(KbenchError, match="multiclass must be one of '', 'ovr', 'ovo'"):
        load_study(path)
