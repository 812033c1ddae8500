"""The ovr/ovo reductions and the scikit-learn estimators on CSR rows: the same
predictions as on the dense rows of the same data."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from kbench.core.dense_rows import takes_csr
from kbench.core.registry import get_registry

TOL = {"rtol": 1e-10, "atol": 1e-10}


def _multiclass(n: int = 150, d: int = 10, seed: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Three classes, about 60 % of the values zero."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n).astype(float)
    X = (rng.standard_normal((n, d)) + 1.5 * np.eye(3, d)[y.astype(int)]) * (
        rng.random((n, d)) < 0.4
    )
    return X, y


#: A kernel written in Python: a base that takes CSR rows with a built-in kernel takes only
#: dense rows with it (every registered algorithm takes CSR rows with its defaults).
DENSE_ONLY_KERNEL = "cosine"


def _reduction(spec: str, kernel: str = "rbf[gamma=0.3]"):
    reg = get_registry()
    return reg.create(
        "algorithm", spec, kernel=reg.create("kernel", kernel), loss=None,
        task="multiclass", n_classes=3, seed=1,
    )  # fmt: skip


@pytest.mark.parametrize("spec", ["ovr[base=rbp[budget=20]]", "ovo[base=rbp[budget=20]]",
                                  "ovr[base=pistol]", "ovr[base=perceptron]"])  # fmt: skip
def test_a_reduction_on_csr_rows_predicts_as_on_dense_rows(spec: str) -> None:
    """Around a base that takes CSR rows a reduction takes them as they are (without
    shared kernel rows) and makes the online and held-out predictions of dense rows."""
    X, y = _multiclass()
    Xs = sp.csr_matrix(X)
    dense, csr = _reduction(spec), _reduction(spec)
    assert takes_csr(csr)
    online = dense.learn_predict_many(X[:100], y[:100])
    np.testing.assert_array_equal(csr.learn_predict_many(Xs[:100], y[:100]), online)
    assert csr.stats()["n_support"] == dense.stats()["n_support"] > 0
    s = csr.stats()
    assert s["kernel_evals"] == s["kernel_evals_requested"]  # no shared rows on CSR rows
    want = dense.predict_many(X[100:])
    assert np.ptp(want) > 0
    for model, rows in ((csr, Xs), (csr, X), (dense, Xs)):
        np.testing.assert_array_equal(model.predict_many(rows[100:]), want)
        np.testing.assert_allclose(
            [model.decision_one(rows[i]) for i in range(100, 150)],
            [dense.decision_one(X[i]) for i in range(100, 150)],
            **TOL,
        )
    for i in range(100, 150):  # then one row at a time, CSR against dense
        assert csr.predict_one(Xs[i]) == dense.predict_one(X[i])
        csr.learn_one(Xs[i], y[i])
        dense.learn_one(X[i], y[i])
    np.testing.assert_array_equal(csr.predict_many(Xs), dense.predict_many(X))


def test_a_reduction_of_dense_rows_refuses_csr_ones_and_one_of_a_dense_base_is_wrapped() -> None:
    X, y = _multiclass()
    ovr = _reduction("ovr[base=rbp[budget=20]]")
    ovr.learn_predict_many(X[:50], y[:50])
    with pytest.raises(
        TypeError, match=r"^ovr has learned dense rows; it cannot continue on sparse ones$"
    ):
        ovr.learn_predict_many(sp.csr_matrix(X[50:]), y[50:])
    # It still predicts CSR rows, densified, as their dense rows.
    np.testing.assert_array_equal(ovr.predict_many(sp.csr_matrix(X[50:])), ovr.predict_many(X[50:]))
    assert takes_csr(_reduction("ovr[base=bsgd[budget=20]]"))  # merges CSR rows
    assert not takes_csr(_reduction("ovr[base=online_svm_r]", DENSE_ONLY_KERNEL))


# --------------------------------------------------------------------------------------------
# The scikit-learn estimators
# --------------------------------------------------------------------------------------------

sklearn = pytest.importorskip("sklearn")


@pytest.mark.parametrize(
    ("algorithm", "classes", "kernel"),
    [
        ("rbp[budget=20]", 2, "rbf[gamma=0.3]"),
        ("rbp[budget=20]", 3, "rbf[gamma=0.3]"),
        ("perceptron", 3, "rbf[gamma=0.3]"),
        ("forgetron[budget=20]", 3, "rbf[gamma=0.3]"),  # binary only: one-vs-rest
        ("bsgd[budget=20,lam=0.01]", 2, "rbf[gamma=0.3]"),  # merges CSR rows
        ("bsgd[budget=20,lam=0.01]", 3, "rbf[gamma=0.3]"),
        ("lasvm", 3, "rbf[gamma=0.3]"),
        ("online_svm_r", 2, DENSE_ONLY_KERNEL),  # dense rows only: densified
    ],
)
def test_the_classifier_on_csr_rows_predicts_as_on_dense_rows(
    algorithm: str, classes: int, kernel: str
) -> None:
    from kbench.sklearn import OnlineKernelClassifier

    X, y = _multiclass()
    if classes == 2:
        y = np.where(y == 0, 0.0, 1.0)
    Xs = sp.csr_matrix(X)
    make = lambda: OnlineKernelClassifier(  # noqa: E731
        algorithm=algorithm, kernel=kernel, n_epochs=2, random_state=0
    )
    dense, csr = make().fit(X[:100], y[:100]), make().fit(Xs[:100], y[:100])
    assert all(takes_csr(a) == (kernel != DENSE_ONLY_KERNEL) for a in csr.learners_)
    want = dense.decision_function(X[100:])
    for model, rows in ((csr, Xs), (csr, X), (dense, Xs), (csr, Xs.tocsc())):
        np.testing.assert_allclose(model.decision_function(rows[100:]), want, **TOL)
        np.testing.assert_array_equal(model.predict(rows[100:]), dense.predict(X[100:]))
    csr.partial_fit(Xs[100:], y[100:])
    dense.partial_fit(X[100:], y[100:])
    np.testing.assert_allclose(csr.decision_function(Xs), dense.decision_function(X), **TOL)


@pytest.mark.parametrize("algorithm", ["norma[budget=50]", "pistol[b=100.0]", "fogd[D=50]"])
def test_the_regressor_on_csr_rows_predicts_as_on_dense_rows(algorithm: str) -> None:
    from kbench.sklearn import OnlineKernelRegressor

    X, _ = _multiclass()
    y = np.sin(X[:, 0]) + 0.2 * X[:, 1]
    loss = "huber" if algorithm.startswith("pistol") else None
    make = lambda: OnlineKernelRegressor(  # noqa: E731
        algorithm=algorithm, kernel="rbf[gamma=0.3]", loss=loss, random_state=0
    )
    dense, csr = make().fit(X[:100], y[:100]), make().fit(sp.csr_matrix(X[:100]), y[:100])
    want = dense.predict(X[100:])
    assert np.ptp(want) > 0
    for model, rows in ((csr, sp.csr_matrix(X)), (csr, X), (dense, sp.csr_matrix(X))):
        np.testing.assert_allclose(model.predict(rows[100:]), want, **TOL)
