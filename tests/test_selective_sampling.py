"""Selective sampling (the label-efficient perceptron) against a NumPy transcription."""

from __future__ import annotations

import numpy as np
import pytest

from kbench.api import child_seed, get_registry

REG = get_registry()
GAMMA = 0.5


def reference(X: np.ndarray, y: np.ndarray, b: float, seed: int):
    """The label-efficient kernel perceptron (Cesa-Bianchi, Gentile and Zaniboni 2006): ask
    with probability b/(b + |f(x)|), one uniform draw per example from the wrapper's own
    stream; on an asked mistake, store x with α = y."""
    coins = np.random.default_rng(child_seed(seed, 1))
    S, a, labels, asked = X[:0], np.zeros(0), [], 0
    closest = np.inf  # how near a sign or a coin came to a rounding-sized tie
    for i, (x, t) in enumerate(zip(X, y, strict=True)):
        f = np.exp(-GAMMA * ((S - x) ** 2).sum(axis=1)) @ a
        labels.append(1.0 if f >= 0 else -1.0)
        u, p = coins.random(), b / (b + abs(f))
        closest = min(closest, abs(u - p), abs(f) if i else np.inf)
        if u < p:
            asked += 1
            if t * f <= 0:
                S, a = np.vstack([S, x]), np.append(a, t)
    # kbench's kernel rows differ from NumPy's exp by rounding (~1e-16): the exact label
    # comparisons below hold only when no sign and no coin was within 1e-9 of a tie
    assert closest > 1e-9, closest
    return np.array(labels), asked


def wrapper(b: float, seed: int = 7):
    kernel = REG.create("kernel", f"rbf[gamma={GAMMA}]")
    spec = f"active_selective[base=perceptron,b={b}]"
    return REG.create("algorithm", spec, kernel=kernel, task="binary", seed=seed)


@pytest.fixture(scope="module")
def data():
    d = REG.create("dataset", "twonorm[n_train=400,n_test=0,d=5]").load(2)
    return np.ascontiguousarray(d.X), d.y


@pytest.mark.parametrize("b", [0.1, 1.0, 100.0])
def test_shown_every_label_it_reads_the_ones_it_would_ask_for(data, b) -> None:
    X, y = data
    want, asked = reference(X, y, b, 7)
    model = wrapper(b)
    got = model.learn_predict_many(X, y)
    np.testing.assert_array_equal(got, want)
    assert model.stats()["labels_queried"] == asked


def test_the_active_protocol_asks_for_the_same_labels(data) -> None:
    """Driven as the runner drives an active learner (predict, ask, learn when asked)."""
    X, y = data
    want, asked = reference(X, y, 1.0, 7)
    model = wrapper(1.0)
    got, n = [], 0
    for x, t in zip(X, y, strict=True):
        got.append(model.predict_one(x))
        if model.wants_label(x):
            model.learn_one(x, t)
            n += 1
    np.testing.assert_array_equal(np.array(got), want)
    assert n == asked == model.stats()["labels_queried"]


def test_smaller_b_asks_for_fewer_labels(data) -> None:
    X, y = data
    asked = [reference(X, y, b, 7)[1] for b in (0.05, 1.0, 100.0)]
    assert asked[0] < asked[1] < asked[2] <= len(y)
    assert asked[2] > 0.9 * len(y)


def test_b_must_be_positive() -> None:
    with pytest.raises(ValueError, match="b"):
        wrapper(0.0)


def test_predicting_tosses_no_coin(data) -> None:
    """Predict then learn, each call with a new view of the row (``X[i]`` twice) or a new
    one-row CSR matrix: one coin per example still, the labels of the reference."""
    import scipy.sparse as sp

    X, y = data
    want, asked = reference(X, y, 1.0, 7)
    for rows in (X, sp.csr_matrix(X)):
        model = wrapper(1.0)
        got = []
        for i in range(len(y)):
            got.append(model.predict_one(rows[i]))
            model.decision_one(rows[i])
            model.learn_one(rows[i], y[i])
        np.testing.assert_array_equal(np.array(got), want)
        assert model.stats()["labels_queried"] == asked
