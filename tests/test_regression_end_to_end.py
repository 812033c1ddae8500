"""Regression end to end: the scikit-learn regressor's defaults, ``kbench run`` on regression
data with every regression-capable learner (the others skipped with their reason), the
degenerate flag of a regression run, and river's one-vs-rest as docs/interop.md says."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes, make_friedman1

from helpers import KBENCH
from kbench.core.registry import get_registry
from kbench.results.degenerate import at_variance, degenerate_reason
from kbench.sklearn import OnlineKernelRegressor


def _regression_algorithms() -> list[str]:
    """Every registered algorithm that declares the regression task."""
    reg = get_registry()
    return [
        n for n in reg.names("algorithm") if "regression" in reg.entry("algorithm", n).cls.tasks
    ]


def test_the_regression_algorithms_are_the_ones_the_docs_name() -> None:
    """docs/interop.md lists the regression-capable learners; the registry agrees."""
    assert _regression_algorithms() == [
        "asgd", "fogd", "klms", "knlms", "krls", "krlst", "nogd", "norma", "pistol", "polk",
        "qklms", "sgd", "svmd", "swkrls",
    ]  # fmt: skip


def test_regressor_defaults_fit_and_predict() -> None:
    """OnlineKernelRegressor() learns (NORMA, squared loss); before, its default algorithm
    was the perceptron, which refused the regression task."""
    X, y = load_diabetes(return_X_y=True)
    reg = OnlineKernelRegressor().fit(X, y)
    assert reg.learner_.name == "norma" and reg.learner_.loss.name == "squared"
    assert reg.score(X, y) > 0.2


def test_pistol_regressor_takes_huber_by_default_and_refuses_squared() -> None:
    """OnlineKernelRegressor(algorithm="pistol") (the README's example) fits with the Huber
    loss; the squared loss, which is not Lipschitz, is a one-line error."""
    X, y = load_diabetes(return_X_y=True)
    reg = OnlineKernelRegressor(algorithm="pistol").fit(X, y)
    assert reg.learner_.loss.name == "huber"
    assert np.isfinite(reg.predict(X)).all()
    with pytest.raises(ValueError, match="not Lipschitz") as info:
        OnlineKernelRegressor(algorithm="pistol", loss="squared").fit(X, y)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("algorithm", _regression_algorithms())
def test_every_regression_learner_fits_at_its_defaults(algorithm: str) -> None:
    X, y = make_friedman1(150, random_state=0)
    pred = OnlineKernelRegressor(algorithm=algorithm, random_state=0).fit(X, y).predict(X)
    assert pred.shape == (150,) and np.isfinite(pred).all()


def test_regression_degenerate_flag() -> None:
    """A regression run whose mean squared error is not below the variance of y (within
    the interval of a sample variance) is flagged; a clearly better one is not."""
    assert at_variance(100.0, 100.0, 400)
    assert at_variance(90.0, 100.0, 400)  # 1 − 1.96·√(2/400) = 0.861: inside the interval
    assert not at_variance(85.0, 100.0, 400)
    assert not at_variance(50.0, 100.0, 400)
    assert not at_variance(5.0, 0.0, 400)  # constant targets: no yardstick
    run = {"status": "ok", "task": "regression", "n": 400, "online_error": 2.0e4,
           "majority_error": 5.9e3, "test_error": 10.0, "majority_test_error": 100.0,
           "test_n": 100}  # fmt: skip
    assert degenerate_reason(run) == (
        "online: mean squared error not below the variance of y (2e+04 vs 5900)"
    )
    assert degenerate_reason({**run, "online_error": 1.0e3}) == ""
    # Classification runs keep their own check.
    assert degenerate_reason({**run, "task": "binary", "online_error": 0.1,
                              "majority_error": 0.3, "test_error": 0.1}) == ""  # fmt: skip


def _write_libsvm(path: Path, X: np.ndarray, y: np.ndarray) -> None:
    lines = [
        f"{t:.6g} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row) if v != 0)
        for row, t in zip(X, y, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.slow
def test_kbench_run_regression_with_every_regression_learner(tmp_path: Path) -> None:
    """``kbench run`` on diabetes and two LIBSVM regression sets of the collection (their
    files put in place by hand, as on a machine without network: synthetic stand-ins of
    abalone's and cpusmall's shapes) with every regression-capable learner, the squared and
    Huber losses, and two learners that cannot regress: those are skipped with their reason
    and the rest runs (before: PiSTOL with the squared loss aborted the study, exit 2)."""
    data = tmp_path / "data"
    (data / "libsvm").mkdir(parents=True)
    for name, d, seed in (("abalone", 8, 1), ("cpusmall", 12, 2)):
        X, y = make_friedman1(160, n_features=d, random_state=seed)
        _write_libsvm(data / "libsvm" / name, X, 10.0 + 5.0 * y)  # targets far from 0
    learners = [a for name in _regression_algorithms() for a in ("-a", name)]
    out = tmp_path / "res"
    proc = subprocess.run(
        [*KBENCH, "run", *learners, "-a", "perceptron", "-a", "lasvm", "-l", "squared",
         "-l", "huber", "-k", "rbf[gamma=0.1]", "-d", "diabetes[scale=standard]",
         "-d", "libsvm[name=abalone,dense=true,scale=standard]",
         "-d", "libsvm[name=cpusmall,dense=true,scale=standard]",
         "--seeds", "0-1", "--workers", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, KBENCH_DATA=str(data), COLUMNS="300"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    err = " ".join(proc.stderr.split())
    skips = (
        ("perceptron", "", "perceptron does not support regression"),
        ("lasvm", "", "lasvm does not support regression"),
        ("pistol", " with loss squared", "pistol needs a Lipschitz loss"),
    )
    for dataset in (r"diabetes", r"libsvm\[\S*name=abalone\S*", r"libsvm\[\S*name=cpusmall\S*"):
        for learner, loss, why in skips:
            assert re.search(rf"skipped {learner} on {dataset}{loss}: {why}", err), (learner, err)
    runs = pd.read_parquet(out / "runs.parquet")
    assert set(runs["status"]) == {"ok"}, runs[runs["status"] != "ok"]["reason"].tolist()
    assert sorted(set(runs["algorithm"])) == _regression_algorithms()
    # 7 learners × 2 losses + PiSTOL with Huber + the 6 filters (no loss), on 3 data sets
    # × 2 seeds.
    assert len(runs) == (7 * 2 + 1 + 6) * 3 * 2
    diabetes = runs[runs["dataset"] == "diabetes"]
    y = load_diabetes().target
    np.testing.assert_allclose(diabetes["majority_error"], np.var(y), rtol=1e-12)
    # PiSTOL at b = 1 predicts about 0 on targets near 150: flagged, and so named.
    pistol = diabetes[diabetes["algorithm"] == "pistol"]
    assert pistol["degenerate"].str.contains("mean squared error not below the variance").all()
    shown = subprocess.run(
        [*KBENCH, "show", str(out)], capture_output=True, text=True,
        env=dict(os.environ, COLUMNS="300"),
    )  # fmt: skip
    assert shown.returncode == 0 and "not below the variance of y" in shown.stdout
