"""The Stoptron and the remove-oldest perceptron against NumPy transcriptions of their updates."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import (
    NumpyRBF,
    assert_one_line_error,
    checkerboard,
    create,
    ovr_error,
    prequential,
    rbf,
)

GAMMA = 0.5


def budget_reference(X, y, budget, oldest):
    """The kernel perceptron with a list of (x, y) support vectors: a mistake appends x; past
    the budget, remove-oldest drops the first entry and the Stoptron does nothing."""
    keep, f_all = [], []
    for t in range(len(y)):
        f = float(rbf(X[keep], X[t : t + 1], GAMMA)[:, 0] @ y[keep]) if keep else 0.0
        f_all.append(f)
        if y[t] * f <= 0:
            if len(keep) < budget:
                keep.append(t)
            elif oldest:
                keep = [*keep[1:], t]
    return np.array(f_all), keep


@pytest.fixture(scope="module")
def data():
    X, y = checkerboard(400, seed=3, noise=0.1)
    return np.ascontiguousarray(X), y


@pytest.mark.parametrize("name", ["stoptron", "remove_oldest_perceptron"])
@pytest.mark.parametrize("budget", [1, 7, 40, 1000])
@pytest.mark.parametrize("path", ["dense", "csr", "one"])
def test_predictions_equal_the_reference(data, name, budget, path) -> None:
    X, y = data
    oldest = name == "remove_oldest_perceptron"
    f, keep = budget_reference(X, y, budget, oldest)
    model = create(f"{name}[budget={budget}]", kernel=f"rbf[gamma={GAMMA}]", loss=None)
    got = prequential(model, X, y, path)
    assert np.abs(f[1:]).min() > 1e-8
    np.testing.assert_array_equal(got, np.where(f >= 0, 1.0, -1.0))
    assert model.stats()["n_support"] == len(keep) == min(budget, len(keep))
    # the stored set is the reference's (in ring order for remove-oldest)
    S = model.model.support_vectors()
    S = S.toarray() if hasattr(S, "toarray") else S
    assert sorted(map(tuple, S)) == sorted(map(tuple, X[keep]))
    np.testing.assert_allclose(
        model.decision_many(X[:50]), rbf(X[:50], X[keep], GAMMA) @ y[keep], rtol=0, atol=1e-10
    )


def test_the_budget_changes_what_is_learned(data) -> None:
    """Past the budget the two differ from each other and from the unbudgeted perceptron."""
    X, y = data
    kernel = f"rbf[gamma={GAMMA}]"
    runs = {
        spec: create(spec, kernel=kernel, loss=None).learn_predict_many(X, y)
        for spec in ["stoptron[budget=10]", "remove_oldest_perceptron[budget=10]", "perceptron"]
    }
    a, b, c = runs.values()
    assert not np.array_equal(a, b) and not np.array_equal(a, c) and not np.array_equal(b, c)


def test_predict_after_a_replacement_sees_the_new_row(data) -> None:
    """predict_one, learn_one, predict_one on the same array: the second prediction uses the
    store as it is after the oldest row was overwritten (not a cached kernel row)."""
    X, y = data
    model = create("remove_oldest_perceptron[budget=3]", kernel=f"rbf[gamma={GAMMA}]", loss=None)
    for t in range(60):
        x = X[t]
        model.predict_one(x)
        model.learn_one(x, y[t])
        f = model.decision_one(x)
        S = model.model.support_vectors()
        alpha = model.model.store.alpha[: len(S), 0]
        assert f == pytest.approx(float(rbf(S, x[None, :], GAMMA)[:, 0] @ alpha), abs=1e-12)


def test_a_third_party_kernel_takes_the_per_example_path(data) -> None:
    X, y = data
    f, _ = budget_reference(X[:200], y[:200], 9, True)
    model = create("remove_oldest_perceptron[budget=9]", kernel=NumpyRBF(gamma=GAMMA), loss=None)
    got = model.learn_predict_many(X[:200], y[:200])
    assert np.abs(f[1:]).min() > 1e-8  # no f within rounding of 0 after the first
    np.testing.assert_array_equal(got, np.where(f >= 0, 1.0, -1.0))


@pytest.mark.parametrize("name", ["stoptron", "remove_oldest_perceptron"])
def test_multiclass_one_vs_rest(name) -> None:
    assert ovr_error(f"{name}[budget=20]") < 0.15


@pytest.mark.parametrize("name", ["stoptron", "remove_oldest_perceptron"])
@pytest.mark.parametrize("budget", ["0", "-3"])
def test_a_bad_budget_is_a_one_line_error(name, budget) -> None:
    assert_one_line_error(f"{name}[budget={budget}]", rf"{name}: budget must be in \[1, inf\]")


def test_bad_labels_are_refused(data) -> None:
    X, _ = data
    model = create("stoptron", kernel="rbf", loss=None)
    with pytest.raises(ValueError, match="stoptron"):
        model.learn_predict_many(X[:3], np.array([0.0, 1.0, 2.0]))
