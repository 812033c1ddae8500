"""The one-row methods of the learners that take CSR blocks, on dense rows and on one-row
CSR matrices, whichever rows the learner learned before.

Once a learner has learned CSR rows, its compiled loops run on one-value stand-ins for
them (``BlockRows.csr``): its one-row methods must not compute kernel values against those
(on one feature they would give wrong values without an error), but answer as the learner
trained on the dense rows of the same data does.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from kbench.core.dense_rows import takes_csr
from kbench.core.registry import get_registry
from kbench.testing import make_test_algorithm

TOL = {"rtol": 1e-10, "atol": 1e-10}
TASKS = ("binary", "multiclass", "regression", "novelty")
#: Learners that take CSR rows with other than their test parameters (BSGD's test
#: parameters merge, the other maintenances are here; the active wrappers' test base is
#: pa), and their tasks.
SPECS = {
    "bsgd[budget=12,lam=0.01,maintenance=removal]": ("binary", "multiclass"),
    "bsgd[budget=12,lam=0.01,maintenance=projection]": ("binary", "multiclass"),
    "active_margin[base=online_svm_r]": ("binary",),
    "active_greedy[base=online_svm_r]": ("binary",),
}


def _cases() -> list:
    """``(name, task)`` of every online learner whose instance takes CSR blocks."""
    reg = get_registry()
    cases = []
    for name in reg.names("algorithm"):
        cls = reg.entry("algorithm", name).cls
        if cls.offline:
            continue
        for task in sorted(set(cls.tasks) & set(TASKS)):
            if cls.supports(task) is None and takes_csr(make_test_algorithm(cls, task, reg)):
                cases.append(pytest.param(name, task, id=f"{name}-{task}"))
    for spec, tasks in SPECS.items():
        for task in tasks:
            cases.append(pytest.param(spec, task, id=f"{spec}-{task}"))
    return cases


CASES = _cases()


def _data(task: str, d: int, n: int = 90, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """n rows of d features, about half of the values zero (some rows wholly zero when d
    is 1), and labels of the task (three classes on multiclass)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.6)
    if task == "multiclass":
        y = rng.integers(0, 3, n).astype(float)
        X = X + (y[:, None] - 1.0) * (X != 0.0)
    elif task == "regression":
        y = np.sin(X[:, 0]) + 0.1 * X.sum(axis=1)
    elif task == "novelty":
        y = np.ones(n)
    else:
        y = np.where(X[:, 0] + 0.3 * X.sum(axis=1) > 0.1, 1.0, -1.0)
    return X, y


def _learner(name: str, task: str):
    """A new learner: a registered name with its test parameters, or a spec."""
    reg = get_registry()
    if name not in SPECS:
        return make_test_algorithm(reg.entry("algorithm", name).cls, task, reg, seed=3)
    learner = reg.create(
        "algorithm", name, kernel=reg.create("kernel", "rbf[gamma=0.3]"), loss=None, task=task,
        n_classes=3 if task == "multiclass" else 2, seed=3,
    )  # fmt: skip
    assert takes_csr(learner)
    return learner


def _assert_same(got, want, what: str) -> None:
    np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float), **TOL, err_msg=what)


@pytest.mark.parametrize("d", [1, 8])
@pytest.mark.parametrize(("name", "task"), CASES)
def test_one_row_methods_after_csr_learning_answer_as_after_dense(name, task, d) -> None:
    """Trained on CSR rows, then asked about dense rows and one-row CSR matrices, a learner
    gives the decision values and labels of the same learner trained on the dense rows; a
    learner trained on dense rows answers about a CSR row as about its dense row."""
    X, y = _data(task, d)
    Xs = sp.csr_matrix(X)
    dense, csr = _learner(name, task), _learner(name, task)
    dense.learn_predict_many(X[:60], y[:60])
    csr.learn_predict_many(Xs[:60], y[:60])
    assert csr.stats()["n_support"] == dense.stats()["n_support"]
    probes = range(60, 90)
    want = [dense.decision_one(X[i]) for i in probes]
    assert np.ptp(np.asarray(want, float)) > 0 or dense.stats()["n_support"] > 0, "learned nothing"
    for learner, rows, kind in (
        (csr, X, "dense rows to a learner of CSR rows"),
        (csr, Xs, "CSR rows to a learner of CSR rows"),
        (dense, Xs, "CSR rows to a learner of dense rows"),
    ):
        got = [learner.decision_one(rows[i]) for i in probes]
        _assert_same(got, want, f"{name} {task} d={d}: decision_one, {kind}")
        labels = [learner.predict_one(rows[i]) for i in probes]
        _assert_same(labels, [dense.predict_one(X[i]) for i in probes], f"predict_one, {kind}")
        _assert_same(learner.decision_many(rows[60:]), want, f"decision_many, {kind}")
        _assert_same(learner.predict_many(rows[60:]), dense.predict_many(X[60:]), kind)


@pytest.mark.parametrize("d", [1, 8])
@pytest.mark.parametrize(("name", "task"), CASES)
def test_learn_one_on_csr_rows_learns_as_on_dense_rows(name, task, d) -> None:
    """Predict then learn one row at a time: one-row CSR matrices give the predictions and
    the model of dense rows, from a new learner or after a CSR block; dense rows after a
    CSR block are learned on the learner's CSR path."""
    X, y = _data(task, d)
    Xs = sp.csr_matrix(X)
    dense = _learner(name, task)
    want = []
    for i in range(90):
        want.append(dense.predict_one(X[i]))
        dense.learn_one(X[i], y[i])
    for first, rest in ((0, Xs), (30, Xs), (30, X)):
        learner = _learner(name, task)
        got = list(learner.learn_predict_many(Xs[:first], y[:first])) if first else []
        for i in range(first, 90):
            got.append(learner.predict_one(rest[i]))
            learner.learn_one(rest[i], y[i])
        what = f"{name} {task} d={d}: {first} rows as a CSR block, then {type(rest).__name__}"
        _assert_same(got, want, what)
        assert learner.stats()["n_support"] == dense.stats()["n_support"], what
        _assert_same(learner.decision_many(Xs), dense.decision_many(X), what)


@pytest.mark.parametrize(("name", "task"), CASES)
def test_dense_learner_refuses_csr_rows_in_one_line(name, task) -> None:
    """A learner that has learned dense rows refuses to learn CSR ones, a block or a row,
    with one line that says why; a learner of CSR rows learns a dense block on its CSR
    path (its dense array holds stand-ins)."""
    X, y = _data(task, 4)
    learner = _learner(name, task)
    learner.learn_predict_many(X[:40], y[:40])
    if name in ("fogd", "river"):  # no stored rows (a feature map, river's own model):
        return  # either kind of row is learned the same way
    if name.startswith("active_"):  # a wrapper: its base learner refuses (and is tested)
        return
    for call in (
        lambda: learner.learn_one(sp.csr_matrix(X[40:41]), y[40]),
        lambda: learner.learn_predict_many(sp.csr_matrix(X[40:]), y[40:]),
    ):
        with pytest.raises(TypeError) as err:
            call()
        owner = name.split("[")[0]
        assert (
            str(err.value) == f"{owner} has learned dense rows; it cannot continue on sparse ones"
        )
    csr, dense = _learner(name, task), _learner(name, task)
    csr.learn_predict_many(sp.csr_matrix(X[:40]), y[:40])
    dense.learn_predict_many(X[:40], y[:40])
    _assert_same(
        csr.learn_predict_many(X[40:], y[40:]), dense.learn_predict_many(X[40:], y[40:]), name
    )


@pytest.mark.parametrize("name", ["libsvm", "ramp_cccp"])
def test_batch_reference_answers_dense_and_csr_rows_whichever_it_was_fitted_on(name) -> None:
    """A batch reference predicts one row, dense or CSR, after a fit on either."""
    X, y = _data("binary", 8)
    fitted = []
    for A in (X, sp.csr_matrix(X)):
        algo = _learner(name, "binary")
        algo.fit(A[:60], y[:60])
        fitted.append(algo)
    want = [fitted[0].decision_one(X[i]) for i in range(60, 90)]
    for algo in fitted:
        for rows in (X, sp.csr_matrix(X)):
            _assert_same([algo.decision_one(rows[i]) for i in range(60, 90)], want, name)
            assert [algo.predict_one(rows[i]) for i in range(60, 90)] == list(
                fitted[0].predict_many(X[60:])
            )
