"""OISVM against a NumPy transcription of the paper (Orabona, Castellini, Caputo, Jie and
Sandini 2010): the basis by approximate linear dependence, β by Newton's method on the
squared hinge over every example seen."""

from __future__ import annotations

import pickle
from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp

from helpers import (
    NumpyRBF,
    checkerboard,
    create,
    linear_gram,
    prequential,
    rbf,
)

GAMMA = 0.5
gram_rbf = partial(rbf, gamma=GAMMA)


def oisvm_reference(X, y, C, eta, steps, gram):
    """The paper's update, solved afresh each Newton step (no factor updates): every f(x_t)
    before its update, the basis (example indices), the final β and the number of times an
    example left the violators I (the downdates of the compiled loop)."""
    n = len(y)
    B, beta, viol, f_all, left = [], np.zeros(0), np.zeros(n, dtype=bool), [], 0
    for t in range(n):
        k = gram(X[B], X[t : t + 1])[:, 0] if B else np.zeros(0)
        f = float(k @ beta) if B else 0.0
        f_all.append(f)
        kx = gram(X[t : t + 1], X[t : t + 1])[0, 0]
        delta = kx - k @ np.linalg.solve(gram(X[B], X[B]), k) if B else kx
        if delta > eta:
            B.append(t)
            beta = np.append(beta, 0.0)
        if y[t] * f >= 1:
            continue
        viol[t] = True
        if not B:
            continue
        KB, KBB = gram(X[: t + 1], X[B]), gram(X[B], X[B])
        for _ in range(steps):
            inI = viol[: t + 1]
            H = KBB + C * KB[inI].T @ KB[inI]
            beta = C * np.linalg.solve(H, KB[inI].T @ y[: t + 1][inI])
            new = y[: t + 1] * (KB @ beta) < 1
            left += int(np.sum(inI & ~new))
            changed = bool(np.any(new != inI))
            viol[: t + 1] = new
            if not changed:
                break
    return np.array(f_all), np.array(B), beta, left


@pytest.fixture(scope="module")
def data():
    X, y = checkerboard(300, seed=1, noise=0.05)
    return np.ascontiguousarray(X), y


@pytest.mark.parametrize(("C", "eta", "steps"), [(10.0, 0.1, 20), (10.0, 0.01, 20), (10.0, 0.2, 2)])
@pytest.mark.parametrize("path", ["dense", "csr", "one"])
def test_predictions_equal_the_papers_update(data, C, eta, steps, path) -> None:
    X, y = data
    f, basis, beta, left = oisvm_reference(X, y, C, eta, steps, gram_rbf)
    assert left >= 10  # examples leave I: the factor's downdates are exercised
    model = create(
        f"oisvm[C={C},eta={eta},newton_steps={steps}]", kernel=f"rbf[gamma={GAMMA}]", loss=None
    )
    got = prequential(model, X, y, path)
    assert np.abs(f[1:]).min() > 1e-8  # no f within rounding of 0 after the first
    np.testing.assert_array_equal(got, np.where(f >= 0, 1.0, -1.0))
    snap = model.snapshot()
    np.testing.assert_array_equal(snap["basis"], basis)
    # β solves H β = C Σ yᵢkᵢ with H's factor updated by rank one, the reference afresh:
    # they differ by rounding amplified by H's condition (K_BB's smallest eigenvalue is
    # about η); measured at most 1.4e-8 at η = 0.01 (|β| up to 181), 5e-10 at η = 0.1.
    np.testing.assert_allclose(snap["alpha"], beta, rtol=0, atol=1e-9 * np.abs(beta).max())
    assert len(basis) < len(y) / 5  # the independence criterion keeps a small basis


def test_the_linear_kernel_stops_at_the_dimension() -> None:
    """With the linear kernel at most d examples are linearly independent: the basis stops
    at d = 5, and β is the primal squared-hinge SVM's w in the basis' coordinates."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 5))
    y = np.where(X @ rng.normal(size=5) + 0.3 * rng.normal(size=200) > 0, 1.0, -1.0)
    f, basis, beta, _ = oisvm_reference(X, y, 1.0, 0.01, 20, linear_gram)
    model = create("oisvm[C=1.0,eta=0.01]", kernel="linear", loss=None)
    got = model.learn_predict_many(X, y)
    assert len(basis) == 5 and np.array_equal(model.snapshot()["basis"], basis)
    assert np.abs(f[1:]).min() > 1e-8
    np.testing.assert_array_equal(got, np.where(f >= 0, 1.0, -1.0))
    np.testing.assert_allclose(model.snapshot()["alpha"], beta, rtol=0, atol=1e-9)


def test_the_kept_state_is_what_it_stands_for(data) -> None:
    """K_BB⁻¹, the factor R of H = K_BB + C Σ_{i∈I} kᵢkᵢᵀ, Σ_{i∈I} yᵢkᵢ and the kernel values
    of every example against the basis, recomputed from the examples and I."""
    X, y = data
    C = 2.0
    model = create(f"oisvm[C={C},eta=0.05]", kernel=f"rbf[gamma={GAMMA}]", loss=None)
    model.learn_predict_many(X, y)
    s, m, t = model._state, model.model.store.size, len(y)
    assert s.t == t
    B = s.basis[:m]
    G = gram_rbf(X[B], X)
    np.testing.assert_allclose(s.G[:m, :t], G, rtol=0, atol=1e-12)
    np.testing.assert_allclose(s.Kinv[:m, :m], np.linalg.inv(G[:, B]), rtol=0, atol=1e-6)
    inI = s.violator[:t] == 1.0
    np.testing.assert_array_equal(inI, y * (model.snapshot()["alpha"] @ G) < 1)
    H = G[:, B] + C * G[:, inI] @ G[:, inI].T
    R = s.R[:m, :m]
    assert np.array_equal(R, np.triu(R))
    np.testing.assert_allclose(R.T @ R, H, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(s.ss[:m], G[:, inI] @ y[inI], rtol=0, atol=1e-9)


@pytest.mark.parametrize("sparse", [False, True])
def test_a_pickled_learner_goes_on_as_the_original(data, sparse) -> None:
    X, y = data
    Xin = sp.csr_matrix(X) if sparse else X
    model = create("oisvm", kernel=f"rbf[gamma={GAMMA}]", loss=None)
    model.learn_predict_many(Xin[:150], y[:150])
    copy = pickle.loads(pickle.dumps(model))
    a = model.learn_predict_many(Xin[150:], y[150:])
    b = copy.learn_predict_many(Xin[150:], y[150:])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(model.snapshot()["alpha"], copy.snapshot()["alpha"])


def test_decisions_are_the_expansion_over_the_basis(data) -> None:
    X, y = data
    model = create("oisvm[C=1.0]", kernel=f"rbf[gamma={GAMMA}]", loss=None)
    model.learn_predict_many(X[:200], y[:200])
    snap = model.snapshot()
    np.testing.assert_array_equal(snap["X"], X[snap["basis"]])
    want = gram_rbf(X[200:], snap["X"]) @ snap["alpha"]
    np.testing.assert_allclose(model.decision_many(X[200:]), want, rtol=0, atol=1e-10)
    assert model.stats()["n_support"] == len(snap["basis"])


def test_refused_rows_leave_the_learner_as_it_was(data) -> None:
    """A block of the wrong width or sparsity is refused before anything is kept: learning
    goes on exactly as if it had never been offered."""
    X, y = data
    clean = create("oisvm", kernel=f"rbf[gamma={GAMMA}]", loss=None)
    want = clean.learn_predict_many(X, y)
    model = create("oisvm", kernel=f"rbf[gamma={GAMMA}]", loss=None)
    model.learn_predict_many(X[:100], y[:100])
    with pytest.raises(ValueError, match="X has 3 columns but oisvm holds rows of 2"):
        model.learn_predict_many(np.ones((4, 3)), np.ones(4))
    with pytest.raises(TypeError, match="has learned dense rows; it cannot continue on sparse"):
        model.learn_predict_many(sp.csr_matrix(X[100:104]), y[100:104])
    got = model.learn_predict_many(X[100:], y[100:])
    np.testing.assert_array_equal(got, want[100:])
    assert model._state.t == len(y) == model._state.history.size


def test_a_third_party_kernel_is_refused() -> None:
    """(Its bad labels, tasks and parameters: tests/test_duol.py, with DUOL's and ALMA₂'s.)"""
    with pytest.raises(ValueError, match=r"oisvm: .* use a built-in kernel") as err:
        create("oisvm", kernel=NumpyRBF(gamma=GAMMA), loss=None)
    assert "\n" not in str(err.value)
