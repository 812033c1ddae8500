"""The averaged kernel perceptron against the explicit average of the perceptron's iterates.

The reference runs the kernel perceptron with one coefficient per training example,
keeps a copy of the coefficient vector after every round, and averages the copies: no
closed form, no weighting by rounds.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import NumpyRBF, rbf, readonly
from kbench.core.registry import get_registry
from kbench.plugins.algorithms.averaged_perceptron import AveragedPerceptron


def make(
    kernel: str = "rbf[gamma=0.5]", task: str = "binary", n_classes: int = 2
) -> AveragedPerceptron:
    reg = get_registry()
    return reg.create("algorithm", "averaged_perceptron", kernel=reg.create("kernel", kernel),
                      task=task, n_classes=n_classes)  # fmt: skip


def binary_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = np.where(
        np.sin(2 * X[:, 0]) + X[:, 1] ** 2 - 0.7 + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0
    )
    return readonly(X), readonly(y)


def multiclass_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((4, 3)) * 1.5
    y = rng.integers(0, 4, n)
    return readonly(centres[y] + rng.standard_normal((n, 3))), readonly(y.astype(float))


def explicit_average(X: np.ndarray, y: np.ndarray, epochs: int, C: int, gamma: float):
    """Predictions made during training, and the iterates' average as (n × C) coefficients."""
    K = rbf(X, X, gamma)
    n = len(X)
    coef = np.zeros((n, C))  # the current perceptron, one row per training example
    iterates = []
    preds = []
    for _ in range(epochs):
        for t in range(n):
            if iterates:
                avg = np.mean(iterates, axis=0)
                f = K[t] @ avg
                preds.append((1.0 if f[0] >= 0 else -1.0) if C == 1 else float(np.argmax(f)))
            else:
                preds.append(1.0 if C == 1 else 0.0)
            s = K[t] @ coef
            if C == 1:
                if y[t] * s[0] <= 0:
                    coef[t, 0] += y[t]
            else:
                guess = int(np.argmax(s))
                if guess != int(y[t]):
                    coef[t, int(y[t])] += 1
                    coef[t, guess] -= 1
            iterates.append(coef.copy())
    return np.array(preds), np.mean(iterates, axis=0), coef


@pytest.mark.parametrize("task", ["binary", "multiclass"])
@pytest.mark.parametrize("epochs", [1, 3])
def test_equals_explicit_average_of_iterates(task: str, epochs: int) -> None:
    X, y = binary_data(150, 0) if task == "binary" else multiclass_data(150, 0)
    C = 1 if task == "binary" else 4
    preds, avg, current = explicit_average(X, y, epochs, C, 0.5)
    h = make(task=task, n_classes=2 if task == "binary" else 4)
    got = np.concatenate([h.learn_predict_many(X, y) for _ in range(epochs)])
    assert np.array_equal(got, preds)
    Xt = binary_data(80, 1)[0] if task == "binary" else multiclass_data(80, 1)[0]
    expected = rbf(Xt, X, 0.5) @ avg
    f = h.decision_function(Xt)
    np.testing.assert_allclose(f.reshape(len(Xt), -1), expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(
        np.array([h.decision_one(x) for x in Xt]).reshape(len(Xt), -1), expected, atol=1e-10
    )
    cur = h.decision_function(Xt, average=False)
    np.testing.assert_allclose(cur.reshape(len(Xt), -1), rbf(Xt, X, 0.5) @ current, atol=1e-10)
    # Stored once per mistaken example, however many passes.
    assert h.stats()["n_support"] == int(np.count_nonzero(np.abs(current).sum(1)))
    assert h.stats()["rounds"] == epochs * len(X)


def test_learns_like_the_plain_kernel_perceptron() -> None:
    X, y = binary_data(300, 2)
    reg = get_registry()
    plain = reg.create("algorithm", "perceptron", kernel=reg.create("kernel", "rbf[gamma=0.5]"))
    plain.learn_predict_many(X, y)
    h = make()
    h.learn_predict_many(X, y)
    Xt = binary_data(200, 3)[0]
    current = np.where(h.decision_function(Xt, average=False) >= 0, 1.0, -1.0)
    assert np.array_equal(current, plain.predict_many(Xt))
    assert h.stats()["mistakes"] == plain.stats()["n_support"]


def test_python_path_matches_compiled_path() -> None:
    for task, (X, y), C in (
        ("binary", binary_data(150, 4), 2),
        ("multiclass", multiclass_data(150, 4), 4),
    ):
        fast = make(task=task, n_classes=C)
        slow = AveragedPerceptron(kernel=NumpyRBF(gamma=0.5), task=task, n_classes=C)
        for _ in range(2):
            assert np.array_equal(fast.learn_predict_many(X, y), slow.learn_predict_many(X, y))
        Xt = X[:40] + 0.1
        np.testing.assert_allclose(
            fast.decision_function(Xt), slow.decision_function(Xt), atol=1e-10
        )
        assert fast.stats()["mistakes"] == slow.stats()["mistakes"]


def test_averaging_beats_the_last_iterate_on_noisy_data() -> None:
    """The reason for averaging: with 10% of the labels flipped the last iterate is poor."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((1500, 3))
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] ** 2 - 0.7 > 0, 1.0, -1.0)
    flip = rng.random(1500) < 0.1
    y[flip] = -y[flip]
    Xt = rng.standard_normal((3000, 3))
    yt = np.where(np.sin(2 * Xt[:, 0]) + Xt[:, 1] ** 2 - 0.7 > 0, 1.0, -1.0)
    h = make()
    h.learn_predict_many(readonly(X), readonly(y))
    err_avg = np.mean(h.predict_many(Xt) != yt)
    err_last = np.mean(np.where(h.decision_function(Xt, average=False) >= 0, 1.0, -1.0) != yt)
    assert err_avg < 0.1 and err_avg < 0.75 * err_last


def test_before_any_round_predicts_the_default_label() -> None:
    h = make()
    x = np.zeros(3)
    assert h.decision_one(x) == 0.0 and h.predict_one(x) == 1.0
    assert h.predict_many(np.zeros((2, 3))).tolist() == [1.0, 1.0]
