"""ALMA₂ with kernels against NumPy transcriptions of ALMA_p, p = 2 (Gentile 2001, Fig. 1)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import NumpyRBF, checkerboard, create, prequential, rbf

GAMMA = 0.5


def alma_kernel_reference(X, y, alpha, B, C, gram):
    """The kernel form: w = Σ α_i φ(x_i), ‖w‖ computed from the Gram matrix (not tracked)."""
    keep, coef, f_all, k = [], np.zeros(0), [], 1
    for t in range(len(y)):
        f = float(gram(X[keep], X[t : t + 1])[:, 0] @ coef) if keep else 0.0
        f_all.append(f)
        nx = np.sqrt(gram(X[t : t + 1], X[t : t + 1])[0, 0])
        if nx == 0 or y[t] * f / nx > (1 - alpha) * B / np.sqrt(k):
            continue
        keep.append(t)
        coef = np.append(coef, C / np.sqrt(k) * y[t] / nx)
        norm = np.sqrt(coef @ gram(X[keep], X[keep]) @ coef)
        coef = coef / max(1.0, norm)
        k += 1
    return np.array(f_all), coef


def alma_primal(X, y, alpha, B, C):
    """ALMA₂ in the primal (the linear kernel): w ∈ ℝᵈ, x̂ = x/‖x‖."""
    w, k, f_all = np.zeros(X.shape[1]), 1, []
    for x, t in zip(X, y, strict=True):
        f_all.append(float(w @ x))
        xh = x / np.linalg.norm(x)
        if t * (w @ xh) <= (1 - alpha) * B / np.sqrt(k):
            w = w + C / np.sqrt(k) * t * xh
            w = w / max(1.0, np.linalg.norm(w))
            k += 1
    return np.array(f_all), w


@pytest.fixture(scope="module")
def data():
    X, y = checkerboard(300, seed=2, noise=0.05)
    return np.ascontiguousarray(X), y


@pytest.mark.parametrize(
    ("alpha", "B", "C"), [(0.9, None, np.sqrt(2)), (0.5, 1.0, 0.5), (1.0, None, 3.0)]
)
@pytest.mark.parametrize("path", ["dense", "csr", "one"])
def test_predictions_equal_the_kernel_form(data, alpha, B, C, path) -> None:
    X, y = data
    Bv = 1 / alpha if B is None else B
    f, coef = alma_kernel_reference(X, y, alpha, Bv, C, lambda A, Z: rbf(A, Z, GAMMA))
    spec = f"alma2[alpha={alpha},C={C}" + ("]" if B is None else f",B={B}]")
    model = create(spec, kernel=f"rbf[gamma={GAMMA}]", loss=None)
    got = prequential(model, X, y, path)
    assert np.abs(f[1:]).min() > 1e-8  # no f within rounding of 0 after the first
    np.testing.assert_array_equal(got, np.where(f >= 0, 1.0, -1.0))
    store = model.model.store
    np.testing.assert_allclose(store.alpha[: store.size, 0], coef, rtol=0, atol=1e-10)
    S = model.model.support_vectors()
    S = S.toarray() if hasattr(S, "toarray") else S
    assert np.sqrt(coef @ rbf(S, S, GAMMA) @ coef) <= 1 + 1e-12  # inside the unit ball


def test_linear_kernel_equals_the_primal_algorithm(data) -> None:
    X, y = data
    X = X + 0.1  # no zero row
    f, w = alma_primal(X, y, 0.8, 1 / 0.8, np.sqrt(2))
    model = create("alma2[alpha=0.8]", kernel="linear", loss=None)
    got = model.learn_predict_many(X, y)
    assert np.abs(f[1:]).min() > 1e-8  # no f within rounding of 0 after the first
    np.testing.assert_array_equal(got, np.where(f >= 0, 1.0, -1.0))
    np.testing.assert_allclose(model.decision_many(X), X @ w, rtol=0, atol=1e-10)


def test_a_third_party_kernel_takes_the_per_example_path(data) -> None:
    X, y = data
    f, coef = alma_kernel_reference(
        X[:150], y[:150], 0.9, 1 / 0.9, np.sqrt(2), lambda A, Z: rbf(A, Z, GAMMA)
    )
    model = create("alma2", kernel=NumpyRBF(gamma=GAMMA), loss=None)
    assert np.abs(f[1:]).min() > 1e-8  # no f within rounding of 0 after the first
    np.testing.assert_array_equal(
        model.learn_predict_many(X[:150], y[:150]), np.where(f >= 0, 1.0, -1.0)
    )
    store = model.model.store
    np.testing.assert_allclose(store.alpha[: store.size, 0], coef, rtol=0, atol=1e-10)


def test_a_zero_row_is_not_learned() -> None:
    model = create("alma2", kernel="linear", loss=None)
    model.learn_predict_many(np.zeros((3, 2)), np.array([1.0, -1.0, 1.0]))
    assert model.stats()["n_support"] == 0
