"""The kernel second-order perceptron against a NumPy transcription of its dual form."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import prequential
from kbench.api import get_registry

REG = get_registry()
GAMMA = 0.5


def rbf_gram(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return np.exp(-GAMMA * ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2))


def sop_reference(X: np.ndarray, y: np.ndarray, a: float):
    """f(x) = (y_S, 0)ᵀ (aI + G)⁻¹ k (Cesa-Bianchi, Conconi and Gentile 2005, the kernel
    form), solved afresh for every example; a mistake (y f ≤ 0) stores x."""
    keep: list[int] = []
    f_all, labels = [], []
    for i in range(len(y)):
        Z = X[[*keep, i]]
        G = rbf_gram(Z, Z)
        c = np.append(y[keep], 0.0)
        f = c @ np.linalg.solve(a * np.eye(len(Z)) + G, G[:, -1])
        f_all.append(f)
        labels.append(1.0 if f >= 0 else -1.0)
        if y[i] * f <= 0:
            keep.append(i)
    return np.array(f_all), np.array(labels), len(keep)


@pytest.fixture(scope="module")
def data():
    d = REG.create("dataset", "checkerboard[n_train=300,n_test=0,noise=0.05,k=2]").load(1)
    return np.ascontiguousarray(d.X), d.y


def learner(a: float):
    kernel = REG.create("kernel", f"rbf[gamma={GAMMA}]")
    return REG.create("algorithm", f"second_order_perceptron[a={a}]", kernel=kernel, task="binary")


@pytest.mark.parametrize("a", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("path", ["dense", "csr", "one"])
def test_predictions_equal_the_dual_form(data, a, path) -> None:
    X, y = data
    f, want, size = sop_reference(X, y, a)
    model = learner(a)
    got = prequential(model, X, y, path)
    # labels: after the first example (f = 0, no model: +1), f is never within rounding
    # of 0 on these data
    assert f[0] == 0 and np.abs(f[1:]).min() > 1e-8
    np.testing.assert_array_equal(got, want)
    assert model.stats()["n_support"] == size


def test_decision_is_f_scaled_by_a_positive_factor(data) -> None:
    """The expansion's decision w·k_S equals f·s/a, s = a + k(x, x) − k_Sᵀ(aI + G_S)⁻¹k_S."""
    X, y = data
    model = learner(1.0)
    model.learn_predict_many(X[:200], y[:200])
    S = model.model.support_vectors()
    M = np.linalg.inv(np.eye(len(S)) + rbf_gram(S, S))
    ys = y[:200][[int(np.flatnonzero((X[:200] == s).all(axis=1))[0]) for s in S]]
    for x in X[200:220]:
        k = rbf_gram(S, x[None, :])[:, 0]
        s = 1.0 + 1.0 - k @ M @ k
        Z = np.vstack([S, x])
        G = rbf_gram(Z, Z)
        f = np.append(ys, 0.0) @ np.linalg.solve(np.eye(len(Z)) + G, G[:, -1])
        assert s > 0
        assert model.decision_one(x) == pytest.approx(f * s, rel=1e-9, abs=1e-12)


def test_a_must_be_positive() -> None:
    with pytest.raises(ValueError, match="a"):
        learner(0.0)
