"""kbench learners inside river, river's classifiers inside kbench, and docs/interop.md."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

# river is the optional extra kbench[river]; install.sh installs it, so it is here.
from river import datasets, evaluate, linear_model, metrics, preprocessing
from river.checks import check_estimator

from conftest import REPO
from helpers import create
from kbench.core.registry import get_registry
from kbench.river import RiverClassifier

KBENCH = [sys.executable, "-m", "kbench.cli.main"]


def _kbench(*args: str, hide: str | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess; ``hide`` makes a package unimportable there, as if missing."""
    env = dict(os.environ, COLUMNS="240", OPENBLAS_NUM_THREADS="1")
    if hide is None:
        cmd = [*KBENCH, *args]
    else:
        code = (
            f"import sys; sys.modules[{hide!r}] = None; "
            "from kbench.cli.main import program; sys.argv = ['kbench', *sys.argv[1:]]; program()"
        )
        cmd = [sys.executable, "-c", code, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)


# -- kbench learners as river classifiers -----------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"algorithm": "perceptron", "kernel": "rbf[gamma=0.1]"},
        {"algorithm": "pistol", "kernel": "rbf[gamma=0.1]"},  # logistic: predict_proba_one
        {"algorithm": "norma[budget=50]"},
        {"algorithm": "bsgd[budget=50]"},
    ],
    ids=lambda p: p["algorithm"],
)
def test_river_check_estimator(params: dict[str, str]) -> None:
    """River's own suite: clone, repr, pickling, emerging and vanishing features, purity."""
    check_estimator(RiverClassifier(**params))


def test_river_classifier_is_the_kbench_learner() -> None:
    """Same rows, same labels: the wrapped learner's scores equal a kbench learner's."""
    stream = list(datasets.Phishing().take(150))
    model = RiverClassifier(algorithm="bsgd[budget=30]", kernel="rbf[gamma=0.5]")
    own = create("bsgd[budget=30]", kernel="rbf[gamma=0.5]", loss=None)
    keys = sorted(stream[0][0], key=repr)
    for x, y in stream:
        v = np.array([x[k] for k in keys], dtype=np.float64)
        f = own.decision_one(v)
        assert model.predict_one(x) is (None if model.learner() is None else bool(f >= 0))
        model.learn_one(x, y)
        own.learn_one(v, 1.0 if y else -1.0)
    # One process, one code path: exactly equal, and one kernel row per example (the
    # row computed for predict_one is reused by learn_one) as for the kbench learner.
    assert model.learner().stats() == own.stats()


def test_progressive_val_score_and_one_vs_rest() -> None:
    model = preprocessing.StandardScaler() | RiverClassifier(
        algorithm="pistol", kernel="rbf[gamma=0.1]"
    )
    acc = evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    assert acc.get() > 0.8
    proba = model.predict_proba_one(next(iter(datasets.Phishing()))[0])
    assert set(proba) == {False, True} and abs(sum(proba.values()) - 1.0) < 1e-12
    with pytest.raises(NotImplementedError, match="not probabilities"):
        RiverClassifier(algorithm="perceptron").predict_proba_one({"a": 1.0})
    # More than two classes through river's own reduction.
    from river import multiclass

    ovr = preprocessing.StandardScaler() | multiclass.OneVsRestClassifier(
        # river's one-vs-rest compares the binary classifiers' probabilities: PiSTOL's.
        RiverClassifier(algorithm="pistol", kernel="rbf[gamma=0.1]")
    )
    acc = evaluate.progressive_val_score(
        datasets.ImageSegments().take(400), ovr, metrics.Accuracy()
    )
    assert acc.get() > 0.6  # seven classes: chance is about 0.14


# -- river's classifiers as kbench algorithms -------------------------------------------------


def _stream(task: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    if task == "binary":
        return X, np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1.0, -1.0)
    return X, np.digitize(X[:, 0], [-0.5, 0.5]).astype(np.float64)


def test_river_plugin_is_river_on_the_same_examples() -> None:
    """river[model=linear_model.PAClassifier] predicts what PAClassifier predicts itself."""
    X, y = _stream("binary")
    learner = get_registry().create(
        "algorithm",
        'river[model=linear_model.PAClassifier,args="C=0.5,mode=2"]',
        task="binary",
        n_classes=2,
        seed=0,
    )
    direct = linear_model.PAClassifier(C=0.5, mode=2)
    pred = learner.learn_predict_many(X, y)
    expected = []
    for x, label in zip(X, y, strict=True):
        xd = {i: float(v) for i, v in enumerate(x) if v != 0.0}
        expected.append(1.0 if direct.predict_proba_one(xd)[True] >= 0.5 else -1.0)
        direct.learn_one(xd, bool(label > 0))
    np.testing.assert_array_equal(pred, expected)
    assert (pred == y).mean() > 0.85


def test_river_plugin_reads_csr_rows_as_dicts_of_their_non_zeros() -> None:
    """On CSR rows river gets the same dicts as on the dense rows: stored zeros are left
    out as a dense row's zeros are; with RBFSampler (every feature) the rows are densified."""
    import scipy.sparse as sp

    from kbench.core.dense_rows import DenseRows, for_sparse_rows

    X, y = _stream("binary")
    X = X * (np.random.default_rng(2).random(X.shape) < 0.5)
    csr = sp.csr_matrix(X)
    csr.data[::3] = 0.0  # stored zeros
    spec = 'river[model=linear_model.PAClassifier,args="C=0.5,mode=2"]'
    make = lambda s: get_registry().create("algorithm", s, task="binary", n_classes=2, seed=0)  # noqa: E731
    a, b = make(spec), make(spec)
    assert for_sparse_rows(a) is a
    np.testing.assert_array_equal(
        a.learn_predict_many(csr, y), b.learn_predict_many(csr.toarray(), y)
    )
    np.testing.assert_array_equal(a.predict_many(csr), b.predict_many(csr.toarray()))
    assert isinstance(for_sparse_rows(make("river[features=rbf_sampler]")), DenseRows)


def test_river_plugin_multiclass_and_random_features() -> None:
    X, y = _stream("multiclass")
    registry = get_registry()
    for spec in (
        "river[model=linear_model.PAClassifier]",  # binary model: river's one-vs-rest
        "river[model=linear_model.LogisticRegression,features=rbf_sampler,gamma=0.5]",
    ):
        learner = registry.create("algorithm", spec, task="multiclass", n_classes=3, seed=1)
        pred = learner.learn_predict_many(X, y)
        assert set(np.unique(pred)) <= {0.0, 1.0, 2.0}
        assert (pred[100:] == y[100:]).mean() > 0.6, spec  # three classes: chance is 1/3
    sampled = registry.create(
        "algorithm", "river[features=rbf_sampler,n_components=30]", task="binary", seed=3
    )
    assert type(sampled._river).__name__ == "Pipeline"
    assert sampled.stats() == {"n_support": 0, "kernel_evals": 0, "random_features": 30}


def test_river_rbf_sampler_is_an_additive_kernel() -> None:
    """What docs/interop.md says: river's RBFSampler maps features one by one, so a linear
    model on it learns a circle but not XOR, which kbench's fogd (the full RBF) learns."""
    registry = get_registry()
    X = np.random.default_rng(0).normal(size=(500, 2))
    xor = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    circle = np.where((X**2).sum(axis=1) > 1.4, 1.0, -1.0)

    def late_accuracy(spec: str, y: np.ndarray, **context: object) -> float:
        learner = registry.create("algorithm", spec, task="binary", n_classes=2, seed=0, **context)
        return float((learner.learn_predict_many(X, y)[250:] == y[250:]).mean())

    sampled = "river[model=linear_model.PAClassifier,features=rbf_sampler,gamma=0.5]"
    assert late_accuracy(sampled, circle) > 0.85
    assert late_accuracy(sampled, xor) < 0.6  # 250 examples: chance is 0.5 ± 0.06
    fogd = {
        "kernel": registry.create("kernel", "rbf[gamma=0.5]"),
        "loss": registry.create("loss", "hinge"),
    }
    assert late_accuracy("fogd", xor, **fogd) > 0.8


def test_registry_does_not_import_river_or_sklearn() -> None:
    code = (
        "import sys, kbench\n"
        "from kbench.core.registry import get_registry\n"
        "r = get_registry()\n"
        "assert 'sklearn' not in sys.modules, 'sklearn imported at registry build'\n"
        "r.entry('algorithm', 'river')\n"
        "print(sorted(m for m in sys.modules if m == 'river' or m.startswith('river.')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# -- through the command line -----------------------------------------------------------------


def test_kbench_run_puts_river_beside_kbench(tmp_path: Path) -> None:
    out = tmp_path / "res"
    proc = _kbench(
        "run", "-a", "river[model=linear_model.LogisticRegression]",
        "-a", "river[model=linear_model.PAClassifier,features=rbf_sampler,gamma=0.5,n_components=40]",
        "-a", "pa", "-k", "rbf[gamma=0.5]", "-d", "moons[n_train=300,n_test=200]",
        "--workers", "0", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "3 ok" in proc.stderr + proc.stdout
    table = proc.stdout
    assert "model=linear_model.LogisticRegression" in table and "features=rbf_sampler" in table
    runs = pd.read_parquet(out / "runs.parquet")
    assert sorted(runs["algorithm"]) == ["pa", "river", "river"]
    assert (runs["status"] == "ok").all()
    # Identical streams: every learner saw the same examples of the same stream.
    assert runs["stream_id"].nunique() == 1 and (runs["seen"] == runs["seen"].iloc[0]).all()
    river_runs = runs[runs["algorithm"] == "river"]
    assert (river_runs["kernel_evals"] == 0).all() and (river_runs["online_error"] < 0.4).all()


def test_interop_study_file_runs(tmp_path: Path) -> None:
    """The study file of docs/interop.md, through kbench run with a worker process."""
    page = (REPO / "docs" / "interop.md").read_text()
    (block,) = re.findall(r"^```toml\n(.*?)^```$", page, re.MULTILINE | re.DOTALL)
    study = tmp_path / "study.toml"
    study.write_text(block)
    proc = _kbench("run", str(study), "--workers", "1")
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(tmp_path / "river-vs-kbench" / "runs.parquet")
    assert len(runs) == 6 and (runs["status"] == "ok").all()
    assert set(runs["algorithm"]) == {"river", "pa"}


@pytest.mark.parametrize(
    ("spec", "hide", "message"),
    [
        (
            "river[model=linear_model.PAClassifier]",
            "river",
            "river: the river package is not installed; pip install 'kbench[river]'",
        ),
        (
            "river[model=linear_model.PAClassifer]",
            None,
            "river.linear_model has no 'PAClassifer' (did you mean 'PAClassifier'?)",
        ),
        (
            "river[model=linear_modl.PAClassifier]",
            None,
            "no module river.linear_modl (did you mean 'linear_model'?)",
        ),
        ("river[model=preprocessing.StandardScaler]", None, "is not a classifier"),
        ('river[args="C=1,bogus=2"]', None, "unexpected keyword argument 'bogus'"),
    ],
)
def test_bad_river_models_are_one_line_usage_errors(
    tmp_path: Path, spec: str, hide: str | None, message: str
) -> None:
    out = tmp_path / "res"
    proc = _kbench("run", "-a", spec, "-d", "moons", "--n", "50", "--workers", "0",
                   "--out", str(out), hide=hide)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("kbench: error:")]
    assert len(errors) == 1 and message in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()  # refused before anything was written


def test_kbench_river_without_river_says_how_to_install() -> None:
    code = "import sys; sys.modules['river'] = None; import kbench.river"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "kbench.river needs the river package: pip install 'kbench[river]'" in proc.stderr


# -- the page that documents both adapters ----------------------------------------------------


def test_interop_page_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every python block of docs/interop.md runs, in order, in one namespace."""
    page = (REPO / "docs" / "interop.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```$", page, re.MULTILINE | re.DOTALL)
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, "docs/interop.md", "exec"), namespace)
    for link in ("interop.md",):
        assert link in (REPO / "README.md").read_text()
        assert link in (REPO / "docs" / "index.md").read_text()
