"""Passive–aggressive learners (PA, PA-I, PA-II) against their closed-form updates."""

from __future__ import annotations

import numpy as np
import pytest

from kbench.core.registry import get_registry

VARIANTS = ("PA", "PA-I", "PA-II")


def stream(n: int = 300, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def reference(kernel, X: np.ndarray, y: np.ndarray, variant: str, C: float):
    """The PA rules written out: predictions, support vectors and their coefficients."""
    K = kernel.matrix(X, X)
    sv: list[int] = []
    coef: list[float] = []
    pred = np.empty(len(X))
    for t in range(len(X)):
        f = float(np.dot(coef, K[sv, t])) if sv else 0.0
        pred[t] = 1.0 if f >= 0.0 else -1.0
        loss = max(0.0, 1.0 - y[t] * f)
        if loss > 0.0:
            k = K[t, t]
            tau = {"PA": loss / k, "PA-I": min(C, loss / k), "PA-II": loss / (k + 1 / (2 * C))}[
                variant
            ]
            sv.append(t)
            coef.append(tau * y[t])
    return pred, np.array(sv), np.array(coef)


def make(spec: str, kernel: str):
    reg = get_registry()
    return reg.create("algorithm", spec, kernel=reg.create("kernel", kernel))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kernel", ["rbf[gamma=0.5]", "poly[degree=2,offset=1.0]"])
def test_block_and_one_by_one_follow_the_closed_form(variant: str, kernel: str) -> None:
    """Both paths store exactly the examples with positive hinge loss, with α = τ y."""
    X, y = stream()
    C = 0.3
    ref_pred, ref_sv, ref_coef = reference(
        get_registry().create("kernel", kernel), X, y, variant, C
    )
    fast = make(f"pa[variant={variant},C={C}]", kernel)
    pred = fast.learn_predict_many(X, y)
    slow = make(f"pa[variant={variant},C={C}]", kernel)
    pred_slow = np.array(
        [(slow.predict_one(x), slow.learn_one(x, t))[0] for x, t in zip(X, y, strict=True)]
    )
    for algo, p in ((fast, pred), (slow, pred_slow)):
        snap = algo.snapshot()
        assert np.array_equal(p, ref_pred)
        assert np.array_equal(snap["X"], X[ref_sv])
        assert np.allclose(snap["alpha"], ref_coef, rtol=1e-12, atol=1e-14)
        assert algo.stats()["n_support"] == len(ref_sv) > 64  # the buffer grew
    # PA-I never takes a step larger than C; PA has no cap.
    if variant == "PA-I":
        assert np.abs(ref_coef).max() <= C + 1e-15
    if variant == "PA":
        assert np.abs(ref_coef).max() > C


def test_single_step_closed_forms() -> None:
    """After one step from f = 0 on x with k(x, x) = κ: PA reaches y f(x) = 1 exactly, PA-I
    stops at τ = C, PA-II at τ = 1/(κ + 1/(2C))."""
    x = np.array([0.3, -1.2])
    kappa = (1.0 + x @ x) ** 2  # poly[degree=2,offset=1]
    for variant, C, tau in (
        ("PA", 1.0, 1 / kappa),
        ("PA-I", 0.01, 0.01),
        ("PA-II", 0.2, 1 / (kappa + 1 / 0.4)),
    ):
        algo = make(f"pa[variant={variant},C={C}]", "poly[degree=2,offset=1.0]")
        algo.learn_one(x, -1.0)
        assert algo.snapshot()["alpha"][0] == pytest.approx(-tau, rel=1e-14)
        assert algo.decision_one(x) == pytest.approx(-tau * kappa, rel=1e-14)
    pa = make("pa[variant=PA]", "rbf[gamma=1.0]")
    pa.learn_one(x, 1.0)
    assert pa.decision_one(x) == pytest.approx(1.0, abs=1e-15)
    # Passive when the margin is at least 1. Not tested at x itself: there y f(x) = 1 up to
    # rounding, and a loss of 1e-16 (BLAS-dependent) would legitimately add a support vector.
    # With the polynomial kernel, 2x has margin k(x, 2x) / k(x, x) ≈ 2.6, far from the hinge.
    pa = make("pa[variant=PA]", "poly[degree=2,offset=1.0]")
    pa.learn_one(x, 1.0)
    assert pa.decision_one(2 * x) == pytest.approx((1 + 2 * x @ x) ** 2 / kappa, rel=1e-12)
    pa.learn_one(2 * x, 1.0)
    assert pa.stats()["n_support"] == 1


def test_python_kernel_path_matches_reference() -> None:
    """A kernel without a compiled form (cosine-normalised) runs the per-example path."""
    X, y = stream(120)
    kernel = "cosine[base=poly[degree=2]]"
    assert get_registry().create("kernel", kernel).compiled() is None
    algo = make("pa[variant=PA-II,C=0.5]", kernel)
    pred = algo.learn_predict_many(X, y)
    ref_pred, _ref_sv, ref_coef = reference(
        get_registry().create("kernel", kernel), X, y, "PA-II", 0.5
    )
    assert np.array_equal(pred, ref_pred)
    assert np.allclose(algo.snapshot()["alpha"], ref_coef, rtol=1e-12)


def test_kernel_evaluations_are_counted() -> None:
    """Prediction costs one row over the support vectors; k(x, x) is free for RBF."""
    X, y = stream(100)
    algo = make("pa", "rbf[gamma=0.5]")
    algo.learn_predict_many(X, y)
    _, sv, _ = reference(get_registry().create("kernel", "rbf[gamma=0.5]"), X, y, "PA-I", 1.0)
    sizes = np.searchsorted(sv, np.arange(100))  # support vectors stored before example t
    assert algo.stats()["kernel_evals"] == int(sizes.sum())


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="C must be"):
        make("pa[C=0]", "rbf")
    with pytest.raises(ValueError, match="variant"):
        get_registry().entry("algorithm", "pa").cls(
            kernel=get_registry().create("kernel", "rbf"), variant="PA-III"
        )
    algo = make("pa", "rbf")
    with pytest.raises(ValueError, match="labels must be"):
        algo.learn_one(np.zeros(2), 0.0)
    with pytest.raises(ValueError, match="labels must be"):
        algo.learn_predict_many(np.zeros((3, 2)), np.array([1.0, 2.0, -1.0]))
