"""Tests of the example plugin: kbench's conformance checks, then what each component promises."""

from __future__ import annotations

import numpy as np
import pytest
from kbench_plugin_example import (
    BudgetPerceptron,
    CauchyKernel,
    ModifiedHuber,
    RandomBudgetPerceptron,
    Spirals,
)

from kbench.api import get_registry
from kbench.testing import check_component, parametrize_with_checks


@parametrize_with_checks(plugin="example")
def test_installed_components_conform(kind: str, name: str, check: str) -> None:
    """Every component the installed plugin registers passes kbench's conformance checks,
    one test per check."""
    check_component(kind, name, check=check)


@pytest.mark.parametrize(
    "component",
    [
        BudgetPerceptron(kernel=CauchyKernel(sigma=0.5), budget=5, beta=0.2),
        CauchyKernel(sigma=3.0),
        Spirals(n_train=300, noise=0.0, turns=2.5),
    ],
    ids=repr,
)
def test_configured_instances_conform(component: object) -> None:
    """Instances pass the same checks with their own parameters (and the algorithm's kernel)."""
    check_component(component)


def _reference_budget_perceptron(
    X: np.ndarray, y: np.ndarray, kernel: CauchyKernel, budget: int, beta: float
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The budget perceptron with every f(xᵢ) recomputed from scratch: slow and obvious."""
    support: list[np.ndarray] = []
    alpha: list[float] = []
    pred = np.empty(len(X))
    for t, (x, label) in enumerate(zip(X, y, strict=True)):
        f = sum(
            a * kernel.matrix(s[None, :], x[None, :])[0, 0]
            for s, a in zip(support, alpha, strict=True)
        )
        pred[t] = 1.0 if f >= 0.0 else -1.0
        if label * f > beta:
            continue
        if len(support) < budget:
            support.append(x)
            alpha.append(label)
            continue
        S, a = np.array(support), np.array(alpha)
        f_support = kernel.matrix(S, S) @ a
        j = int(np.argmax(a * (f_support - a * kernel.diag(S))))
        support[j], alpha[j] = x, label
    return pred, support


@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_budget_perceptron_equals_recomputation(beta: float) -> None:
    """Incrementally kept margins choose the same removals as recomputing them every time."""
    data = Spirals(n_train=400, noise=0.1).load(seed=3)
    kernel = CauchyKernel(sigma=0.3)
    algo = BudgetPerceptron(kernel=kernel, budget=15, beta=beta)
    pred = algo.learn_predict_many(data.X, data.y)
    ref_pred, ref_support = _reference_budget_perceptron(data.X, data.y, kernel, 15, beta)
    assert np.array_equal(pred, ref_pred)
    assert algo.stats()["removals"] > 50  # the budget was under pressure all along
    assert np.array_equal(algo._buf.X[: algo._buf.size], np.array(ref_support))


def test_budget_is_never_exceeded_and_evaluations_are_counted() -> None:
    """The support set stops at the budget; each removal costs one extra kernel row."""
    data = Spirals(n_train=600).load(seed=0)
    algo = BudgetPerceptron(kernel=CauchyKernel(sigma=0.2), budget=25)
    algo.learn_predict_many(data.X, data.y)
    stats = algo.stats()
    assert stats["n_support"] == 25
    updates = 25 + stats["removals"]
    # Rows for prediction grow to the budget; a removal adds a row; an update adds k(x, x).
    at_most = 600 * 25 + stats["removals"] * 25 + updates
    assert 0 < stats["kernel_evals"] <= at_most


def test_budget_perceptron_learns_the_spirals() -> None:
    """Under budget pressure, held-out error stays far below chance."""
    data = Spirals(n_train=3000, n_test=1000).load(seed=1)
    algo = BudgetPerceptron(kernel=CauchyKernel(sigma=0.1), budget=40)
    algo.learn_predict_many(data.X, data.y)
    assert algo.stats()["removals"] > 0
    assert np.mean(algo.predict_many(data.X_test) != data.y_test) < 0.1


def test_cauchy_kernel_is_the_formula() -> None:
    """Rows follow 1 / (1 + ‖x − x'‖² / σ²), one half at distance σ, with or without caches."""
    rng = np.random.default_rng(0)
    S, x = rng.standard_normal((6, 3)), rng.standard_normal(3)
    k = CauchyKernel(sigma=1.5)
    expected = 1.0 / (1.0 + np.sum((S - x) ** 2, axis=1) / 1.5**2)
    assert np.allclose(k.row(S, x), expected)
    sq = np.einsum("ij,ij->i", S, S)
    assert np.allclose(k.row(S, x, sq=sq, xsq=float(x @ x)), expected)
    assert k.row(np.zeros((1, 3)), np.array([1.5, 0.0, 0.0]))[0] == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"cauchy: sigma must be in \(0"):
        CauchyKernel(sigma=0.0)


@pytest.mark.parametrize(
    ("z", "value", "slope"),
    [(2.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, -2.0), (-1.0, 4.0, -4.0), (-3.0, 12.0, -4.0)],
)
def test_modified_huber_table(z: float, value: float, slope: float) -> None:
    """Values and slopes of ℓ(z) at the margin z = y f, for both labels."""
    loss = ModifiedHuber()
    for y in (1.0, -1.0):
        assert loss.value(z * y, y) == pytest.approx(value)
        assert loss.derivative(z * y, y) == pytest.approx(y * slope)
    assert loss.value(np.array([2.0, 0.0]), np.array([1.0, 1.0])).tolist() == [0.0, 1.0]


def test_spirals_are_seeded_and_interleaved() -> None:
    """A seed fixes the data; the classes are balanced and share the same radii."""
    a, b, c = Spirals().load(7), Spirals().load(7), Spirals().load(8)
    assert np.array_equal(a.X, b.X) and not np.array_equal(a.X, c.X)
    assert a.X.shape == (1000, 2) and a.X_test.shape == (500, 2)
    assert abs(np.mean(a.y)) < 0.1
    radius = np.linalg.norm(a.X, axis=1)
    assert abs(np.median(radius[a.y > 0]) - np.median(radius[a.y < 0])) < 0.1
    assert Spirals(n_test=0).load(0).X_test is None


@pytest.mark.parametrize("seed", [0, 7])
def test_plain_rbp_makes_the_compiled_rbps_predictions(seed: int) -> None:
    """The plain-Python random budget perceptron and kbench's compiled ``rbp`` draw the
    same discards from the same seed: the same labels, block or one row at a time."""
    data = Spirals(n_train=800, noise=0.1).load(seed=seed)
    kernel = get_registry().create("kernel", "rbf[gamma=4.0]")
    rbp = get_registry().create(
        "algorithm", "rbp[budget=15]", kernel=kernel, task="binary", seed=seed
    )
    want = rbp.learn_predict_many(data.X, data.y)
    assert np.array_equal(
        RandomBudgetPerceptron(kernel=kernel, budget=15, seed=seed).learn_predict_many(
            data.X, data.y
        ),
        want,
    )
    one = RandomBudgetPerceptron(kernel=kernel, budget=15, seed=seed)
    f = np.empty(len(data.y))
    for i, (x, label) in enumerate(zip(data.X, data.y, strict=True)):
        f[i] = one.decision_one(x)
        one.learn_one(x, label)
    assert np.array_equal(np.where(f >= 0.0, 1.0, -1.0), want)
    # No label hinges on rounding: after the first example (no model, f = 0) every f is a
    # sum of ±k(xᵢ, x) far from 0 next to the 1e-16 by which two summation orders differ.
    assert f[0] == 0.0 and np.abs(f[1:]).min() > 1e-9
    mistakes = int(np.sum(want != data.y))
    assert mistakes > 100 and one.stats()["n_support"] == 15  # discards all along


def test_plain_rbp_draws_with_its_seed() -> None:
    """Another seed, other discards: the model differs once the budget is full."""
    data = Spirals(n_train=800, noise=0.1).load(seed=0)
    kernel = get_registry().create("kernel", "rbf[gamma=4.0]")
    a, b = (RandomBudgetPerceptron(kernel=kernel, budget=15, seed=s) for s in (0, 1))
    assert not np.array_equal(
        a.learn_predict_many(data.X, data.y), b.learn_predict_many(data.X, data.y)
    )
