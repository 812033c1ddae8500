"""IDSVM (Cauwenberghs–Poggio): the exact SVM optimum after every example, with and without bias.

References: scikit-learn's SVC (LIBSVM) at a tight tolerance for the SVM with a bias, and a
small greedy coordinate-ascent QP solved to a projected-gradient norm of 1e-13 for the
zero-bias SVM (its dual has no equality constraint, so single coordinates suffice).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC

from helpers import Sigmoid, rbf, zero_bias_svm
from kbench.core.registry import get_registry

GAMMA = 0.5


def data(
    n: int = 60, d: int = 3, seed: int = 0, noise: float = 0.3
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + noise * rng.standard_normal(n) > 0.3, 1.0, -1.0)
    return X, y


def make(C: float, bias: bool, kernel: str = f"rbf[gamma={GAMMA}]", **extra):
    reg = get_registry()
    params = ",".join([f"C={C}", f"bias={bias}"] + [f"{k}={v}" for k, v in extra.items()])
    return reg.create("algorithm", f"idsvm[{params}]", kernel=reg.create("kernel", kernel))


def zero_bias_qp(K: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
    """The zero-bias SVM solved to a projected-gradient norm of 1e-13 (the reference)."""
    return zero_bias_svm(K, y, C, tol=1e-13)


def svc_alpha(X: np.ndarray, y: np.ndarray, C: float) -> tuple[np.ndarray, float]:
    svc = SVC(C=C, kernel="rbf", gamma=GAMMA, tol=1e-12, shrinking=False).fit(X, y)
    a = np.zeros(len(y))
    a[svc.support_] = np.abs(svc.dual_coef_[0])
    return a, float(svc.intercept_[0])


def assert_kkt(algo, X: np.ndarray, y: np.ndarray, C: float, tol: float = 1e-8) -> None:
    """KKT conditions of every stored example, from margins recomputed from scratch."""
    snap = algo.snapshot()
    a, kind = snap["alpha"], snap["set"]
    f = rbf(X, X, GAMMA) @ (a * y) + snap["b"]
    h = y * f - 1.0
    assert np.allclose(snap["h"], h, atol=1e-9), "incremental margins drifted from the exact ones"
    R, S, E = kind == 0, kind == 1, kind == 2
    assert np.all(a[R] == 0.0) and np.all(h[R] >= -tol)
    assert np.all((a[S] > -tol) & (a[S] < C + tol)) and np.all(np.abs(h[S]) <= tol)
    assert np.all(a[E] == C) and np.all(h[E] <= tol)
    assert np.all(R | S | E)
    if algo.bias:
        assert abs(float(a @ y)) < 1e-10


@pytest.mark.parametrize("C", [0.5, 10.0])
def test_with_bias_equals_libsvm_after_every_example(C: float) -> None:
    """α and the decision function equal SVC's on every prefix (with both classes)."""
    X, y = data()
    grid = np.random.default_rng(9).standard_normal((50, 3))
    algo = make(C, True)
    checked = 0
    for t in range(len(X)):
        algo.learn_one(X[t], y[t])
        assert_kkt(algo, X[: t + 1], y[: t + 1], C)
        if len(set(y[: t + 1])) < 2:
            continue
        a_ref, b_ref = svc_alpha(X[: t + 1], y[: t + 1], C)
        snap = algo.snapshot()
        assert np.abs(snap["alpha"] - a_ref).max() <= 1e-5 * C
        if np.any(snap["set"] == 1):  # b is unique only when a margin vector exists
            f_ref = rbf(grid, X[: t + 1], GAMMA) @ (a_ref * y[: t + 1]) + b_ref
            f = np.array([algo.decision_one(x) for x in grid])
            assert np.abs(f - f_ref).max() <= 1e-5
            checked += 1
    assert checked > 40
    st = algo.stats()
    assert st["n_margin"] > 0 and st["n_error"] > 0 and st["n_reserve"] > 0
    assert st["step_caps"] == 0 and st["degenerate"] == 0


@pytest.mark.parametrize("C", [0.5, 10.0])
def test_without_bias_equals_the_qp_after_every_example(C: float) -> None:
    X, y = data(seed=1)
    K = rbf(X, X, GAMMA)
    grid = np.random.default_rng(8).standard_normal((50, 3))
    algo = make(C, False)
    for t in range(len(X)):
        algo.learn_one(X[t], y[t])
        a_ref = zero_bias_qp(K[: t + 1, : t + 1], y[: t + 1], C)
        snap = algo.snapshot()
        assert snap["b"] == 0.0
        assert np.abs(snap["alpha"] - a_ref).max() <= 1e-8 * max(C, 1.0)
        f_ref = rbf(grid, X[: t + 1], GAMMA) @ (a_ref * y[: t + 1])
        assert np.abs(algo.decision_many(grid) - f_ref).max() <= 1e-7
        assert_kkt(algo, X[: t + 1], y[: t + 1], C)


@pytest.mark.parametrize("bias", [True, False])
def test_block_path_and_stream_order(bias: bool) -> None:
    """The optimum does not depend on the order of the examples (spec 001 claim 20)."""
    X, y = data(80, seed=2)
    a = make(2.0, bias)
    a.learn_predict_many(X, y)
    perm = np.random.default_rng(3).permutation(len(X))
    b = make(2.0, bias)
    b.learn_predict_many(X[perm], y[perm])
    alpha_b = np.empty(len(X))
    alpha_b[perm] = b.snapshot()["alpha"]
    assert np.abs(a.snapshot()["alpha"] - alpha_b).max() < 1e-9
    assert abs(a.snapshot()["b"] - b.snapshot()["b"]) < 1e-9


@pytest.mark.parametrize("bias", [True, False])
def test_unlearning_restores_the_solution_without_the_example(bias: bool) -> None:
    """Decremental unlearning of a margin, an error and a reserve vector gives the solution
    trained without it; unlearning the last example returns the previous solution."""
    C = 2.0
    X, y = data(50, seed=4)
    full = make(C, bias)
    full.learn_predict_many(X, y)
    snap = full.snapshot()
    picks = {
        name: int(np.flatnonzero(snap["set"] == code)[0])
        for name, code in (("reserve", 0), ("margin", 1), ("error", 2))
    }
    for name, j in picks.items():
        algo = make(C, bias)
        algo.learn_predict_many(X, y)
        algo.unlearn(j)
        keep = np.delete(np.arange(len(X)), j)
        ref = make(C, bias)
        ref.learn_predict_many(X[keep], y[keep])
        got, want = algo.snapshot(), ref.snapshot()
        assert np.array_equal(got["ids"], keep), name
        assert np.abs(got["alpha"] - want["alpha"]).max() < 1e-9, name
        assert abs(got["b"] - want["b"]) < 1e-9, name
        assert_kkt(algo, X[keep], y[keep], C)
    # learn one more (an error vector of the full solution), unlearn it: back to the
    # previous solution
    j = picks["error"]
    order = np.append(np.delete(np.arange(len(X)), j), j)
    algo = make(C, bias)
    algo.learn_predict_many(X[order[:-1]], y[order[:-1]])
    before = algo.snapshot()
    algo.learn_one(X[j], y[j])
    assert algo.snapshot()["alpha"][-1] == C
    algo.unlearn(len(X) - 1)
    after = algo.snapshot()
    assert np.abs(after["alpha"] - before["alpha"]).max() < 1e-9
    assert abs(after["b"] - before["b"]) < 1e-9
    with pytest.raises(KeyError, match="no stored example"):
        algo.unlearn(len(X) - 1)


def test_unlearning_every_example_in_turn_empties_the_model() -> None:
    X, y = data(30, seed=5)
    algo = make(1.0, True)
    algo.learn_predict_many(X, y)
    for j in np.random.default_rng(0).permutation(30):
        algo.unlearn(int(j))
        keep = np.sort(algo.snapshot()["ids"])
        if len(keep) and len(set(y[keep])) == 2:
            a_ref, _ = svc_alpha(X[keep], y[keep], 1.0)
            assert np.abs(algo.snapshot()["alpha"] - a_ref).max() < 1e-5
    assert algo.stats()["n_support"] == 0 and algo.snapshot()["alpha"].size == 0


def test_degenerate_inputs_terminate_with_kkt() -> None:
    """Duplicates (same and opposite labels), a rank-2 linear kernel and one class only:
    the loops end, no bound is hit, and the KKT conditions hold."""
    rng = np.random.default_rng(6)
    X = rng.standard_normal((20, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    Xd = np.vstack([X, X[:5], X[5:10]])
    yd = np.concatenate([y, y[:5], -y[5:10]])  # 5 exact copies, 5 copies with flipped labels
    for bias in (True, False):
        algo = make(3.0, bias)
        algo.learn_predict_many(Xd, yd)
        assert_kkt(algo, Xd, yd, 3.0, tol=1e-7)
        assert algo.stats()["step_caps"] == 0
        # opposite-label duplicates cannot both be satisfied: h_i + h_j = −2
        h = algo.snapshot()["h"]
        assert np.all(h[25:30] + h[5:10] == pytest.approx(-2.0, abs=1e-9))
    # Linear kernel in 2-D: at most 2 (3 with bias) margin vectors are independent.
    Xl = rng.standard_normal((60, 2))
    yl = np.where(Xl @ [1.0, -0.5] + 0.2 * rng.standard_normal(60) > 0, 1.0, -1.0)
    for bias in (True, False):
        algo = make(1.0, bias, kernel="linear")
        algo.learn_predict_many(Xl, yl)
        st = algo.stats()
        assert st["n_margin"] <= 2 + bias and st["step_caps"] == 0
        a_ref = zero_bias_qp(Xl @ Xl.T, yl, 1.0) if not bias else None
        if a_ref is not None:  # α may not be unique here, but the decision function is
            f = algo.decision_many(Xl)
            assert np.abs(f - Xl @ (Xl.T @ (a_ref * yl))).max() < 1e-6
    # One class: with a bias the optimum is α = 0, b = 1; without, an ordinary SVM.
    ones = np.ones(15)
    algo = make(1.0, True)
    algo.learn_predict_many(X[:15], ones)
    assert algo.stats()["n_support"] == 0 and algo.snapshot()["b"] == pytest.approx(1.0)
    assert np.all(algo.predict_many(X) == 1.0)
    algo = make(1.0, False)
    algo.learn_predict_many(X[:15], ones)
    assert (
        np.abs(algo.snapshot()["alpha"] - zero_bias_qp(rbf(X[:15], X[:15], GAMMA), ones, 1.0)).max()
        < 1e-8
    )


def kkt_violation(
    K: np.ndarray, y: np.ndarray, alpha: np.ndarray, b: float, C: float, bias: bool
) -> float:
    """Largest violation of the KKT conditions judged from α alone (sets ignored)."""
    h = y * (K @ (alpha * y) + b) - 1.0
    v = np.where(
        alpha <= 0.0, np.maximum(-h, 0.0), np.where(alpha >= C, np.maximum(h, 0.0), np.abs(h))
    )
    return max(float(v.max()), abs(float(alpha @ y)) if bias else 0.0)


def test_low_rank_kernels_on_a_grid_stay_optimal() -> None:
    """Integer grid points with linear and polynomial kernels make the margin-vector
    matrix singular again and again: dependent examples are refused entry to S (counted),
    and the solution still satisfies the KKT conditions (sufficient for optimality: the
    problem is convex) and, with a bias, has LIBSVM's dual value."""
    reg = get_registry()
    refused = 0
    for seed in range(24):
        rng = np.random.default_rng(seed)
        d = 1 + seed % 2
        X = rng.integers(-2, 3, (30, d)).astype(float)
        y = np.where(rng.random(30) < 0.5, 1.0, -1.0)
        C = (0.1, 1.0, 100.0)[seed % 3]
        for spec in ("linear", "poly[degree=2,offset=1.0]", "rbf[gamma=0.5]"):
            K = reg.create("kernel", spec).matrix(X, X)
            for bias in (True, False):
                algo = make(C, bias, kernel=spec)
                algo.learn_predict_many(X, y)
                snap, st = algo.snapshot(), algo.stats()
                assert st["step_caps"] == 0
                refused += st["degenerate"]
                a = snap["alpha"]
                assert kkt_violation(K, y, a, snap["b"], C, bias) < 1e-7, (seed, spec, bias)
                dual = a.sum() - 0.5 * (a * y) @ K @ (a * y)
                if bias and len(set(y)) == 2:
                    svc = SVC(C=C, kernel="precomputed", tol=1e-12, shrinking=False).fit(K, y)
                    ar = np.zeros(30)
                    ar[svc.support_] = np.abs(svc.dual_coef_[0])
                    assert dual == pytest.approx(
                        ar.sum() - 0.5 * (ar * y) @ K @ (ar * y), abs=1e-6 * C
                    )
    assert refused > 20  # the degenerate path was taken


def test_margin_set_emptied_during_an_increment() -> None:
    """With a bias, S can empty while α_c grows; only b moves then, and c, with
    0 < α_c < C, must stop at the margin as S's only member (a regression: it was once filed
    as a reserve vector with α > 0)."""
    rng = np.random.default_rng(100)
    d = int(rng.integers(1, 3))
    X = rng.integers(-2, 3, (30, d)).astype(float)
    y = np.where(rng.random(30) < 0.5, 1.0, -1.0)
    C = float(rng.choice([0.1, 1.0, 100.0]))
    K = rbf(X, X, GAMMA)
    algo = make(C, True)
    for t in range(30):
        algo.learn_one(X[t], y[t])
        snap = algo.snapshot()
        assert (
            kkt_violation(K[: t + 1, : t + 1], y[: t + 1], snap["alpha"], snap["b"], C, True) < 1e-9
        ), t
        assert np.all((snap["set"] != 0) | (snap["alpha"] == 0.0)), t


def test_python_kernel_and_poly_kernel() -> None:
    """A kernel without a compiled form, and one with a non-constant diagonal."""
    X, y = data(40, seed=7)
    reg = get_registry()
    for spec in ("cosine[base=poly[degree=2]]", "poly[degree=2,offset=1.0]"):
        kernel = reg.create("kernel", spec)
        algo = make(1.0, False, kernel=spec)
        algo.learn_predict_many(X, y)
        a_ref = zero_bias_qp(kernel.matrix(X, X), y, 1.0)
        assert np.abs(algo.snapshot()["alpha"] - a_ref).max() < 1e-7


def test_refresh_records_small_drift_and_budgets_freeze() -> None:
    X, y = data(300, seed=8, noise=0.8)
    algo = make(5.0, True, refresh=50)
    algo.learn_predict_many(X, y)
    st = algo.stats()
    assert 0.0 < st["drift_R"] < 1e-8 and st["drift_h"] < 1e-9
    budget = make(5.0, True, max_kernel_evals=5000)
    budget.learn_predict_many(X, y)
    st = budget.stats()
    assert st["frozen"] == 1 and 0 < st["learned"] < 300
    assert st["kernel_requests"] >= 5000
    # the budget counts requested values, so the row cache does not move the stopping point
    uncached = make(5.0, True, max_kernel_evals=5000, cache_mb=0.0)
    uncached.learn_predict_many(X, y)
    assert uncached.stats()["learned"] == st["learned"]
    assert uncached.stats()["kernel_evals"] == st["kernel_requests"]
    n_sv = st["n_support"]
    budget.learn_predict_many(X[:20], y[:20])
    assert budget.stats()["n_support"] == n_sv and budget.stats()["learned"] == st["learned"]


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="C must be"):
        make(0.0, True)
    with pytest.raises(ValueError, match="C must be"):
        make(-1.0, False)
    algo = make(1.0, True)
    with pytest.raises(ValueError, match="labels must be"):
        algo.learn_one(np.zeros(3), 0.5)


@pytest.mark.parametrize("bias", [True, False])
def test_indefinite_kernel_is_a_clear_error(bias: bool) -> None:
    """A negative k(x, x), or a clearly negative Schur complement, stops IDSVM with an error
    naming the problem (rounding-sized ones are refused as degenerate instead)."""
    X, y = data(200, seed=0)
    cls = get_registry().entry("algorithm", "idsvm").cls
    algo = cls(kernel=Sigmoid(a=0.5, c=1.0), C=10.0, bias=bias)
    with pytest.raises(ValueError, match="not positive semi-definite: the Schur complement"):
        algo.learn_predict_many(X, y)
    algo = cls(kernel=Sigmoid(a=1.0, c=-1.0), C=10.0, bias=bias)
    with pytest.raises(ValueError, match=r"k\(x, x\) = -0\.\d+ < 0 for example"):
        algo.learn_predict_many(X, y)


def test_predict_then_learn_reuses_the_row_safely() -> None:
    """decision_one(x) then learn_one(x) reuses the prediction's kernel row; a margin
    recomputation in between must not leave a stale row behind."""
    X, y = data(150, seed=3)
    a, b = make(10.0, True), make(10.0, True)
    for t in range(len(X)):
        x = X[t]  # one object, as the runner passes it: the row is reused by identity
        a.decision_one(x)
        a.exact_margins()
        a.learn_one(x, y[t])
        b.learn_one(X[t], y[t])
    assert np.abs(a.snapshot()["alpha"] - b.snapshot()["alpha"]).max() < 1e-9
    assert_kkt(a, X, y, 10.0)


@pytest.mark.parametrize("bias", [True, False])
def test_row_cache_changes_cost_not_result(bias: bool) -> None:
    """Rows of examples leaving S are kept (byte budget) and reused when they return."""
    X, y = data(400, seed=11, noise=0.8)
    on, off = make(5.0, bias), make(5.0, bias, cache_mb=0.0)
    small = make(5.0, bias, cache_mb=0.004)  # about one row: constant eviction
    for algo in (on, off, small):
        algo.learn_predict_many(X, y)
    for algo in (off, small):
        assert np.abs(algo.snapshot()["alpha"] - on.snapshot()["alpha"]).max() < 1e-9
    assert on.stats()["cache_hits"] > 50 and off.stats()["cache_hits"] == 0
    assert on.stats()["kernel_evals"] < 0.8 * off.stats()["kernel_evals"]
    assert (
        on.stats()["kernel_evals"] <= small.stats()["kernel_evals"] <= off.stats()["kernel_evals"]
    )
    # requests count what a cache-less IDSVM computes: the same with or without the cache
    assert off.stats()["kernel_requests"] == off.stats()["kernel_evals"]
    assert (
        on.stats()["kernel_requests"]
        == small.stats()["kernel_requests"]
        == off.stats()["kernel_evals"]
    )
    # unlearning reorders the stored examples: the cache is dropped, results stay exact
    on.unlearn(3)
    keep = np.delete(np.arange(400), 3)
    ref = make(5.0, bias)
    ref.learn_predict_many(X[keep], y[keep])
    on.learn_predict_many(X[:50], y[:50])
    ref.learn_predict_many(X[:50], y[:50])
    assert np.abs(np.sort(on.snapshot()["alpha"]) - np.sort(ref.snapshot()["alpha"])).max() < 1e-9


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("kernel", [f"rbf[gamma={GAMMA}]", "linear", "poly[degree=2,offset=1.0]"])
def test_csr_rows_give_the_dense_solution(bias: bool, kernel: str) -> None:
    """On the CSR rows of the same data IDSVM keeps the same solution as on the dense rows
    (every counter, margin and α; kernel values differ only in summation order), through
    margin refreshes, unlearning and held-out decisions; its snapshot gives the stored
    rows as CSR."""
    rng = np.random.default_rng(2)
    X, y = data(160, d=12, seed=4, noise=0.8)
    X = X * (rng.random(X.shape) < 0.4)
    algos = [make(5.0, bias, kernel=kernel, refresh=40, cache_mb=0.01) for _ in range(2)]
    dense, csr = algos
    preds = []
    for algo, rows in ((dense, X), (csr, sp.csr_matrix(X))):
        pred = [algo.learn_predict_many(rows[:100], y[:100])]
        for example in (5, 60, 99):
            algo.unlearn(example)
        pred.append(algo.learn_predict_many(rows[100:], y[100:]))
        algo.unlearn(130)
        preds.append(np.concatenate(pred))
    np.testing.assert_array_equal(preds[0], preds[1])
    got, want = csr.snapshot(), dense.snapshot()
    assert sp.issparse(got["X"]) and want["X"].shape == got["X"].shape == (156, 12)
    np.testing.assert_array_equal(got["X"].toarray(), want["X"])
    for key in ("y", "set", "ids"):
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)
    # The rank-one updates of R carry the last bits of the kernel values (linear: κ ~ 1e-2
    # against Q ~ 10), hence 1e-9 on α rather than the kernel values' 1e-15.
    for key in ("alpha", "h", "b"):
        np.testing.assert_allclose(got[key], want[key], rtol=1e-9, atol=1e-9, err_msg=key)
    s_csr, s_dense = csr.stats(), dense.stats()
    for key in ("drift_R", "drift_h", "b"):
        assert abs(s_csr.pop(key) - s_dense.pop(key)) < 1e-9, key
    assert s_csr == s_dense and s_csr["n_support"] > 10 and s_csr["cache_hits"] > 0
    np.testing.assert_allclose(
        csr.decision_many(sp.csr_matrix(X)), dense.decision_many(X), rtol=1e-9, atol=1e-9
    )
    np.testing.assert_allclose(csr.exact_margins(), dense.exact_margins(), rtol=1e-9, atol=1e-9)


def test_csr_rows_are_stored_sparse() -> None:
    """Wide CSR rows take memory by their non-zeros: no dense row is allocated."""
    rng = np.random.default_rng(0)
    n, d = 200, 50_000
    X = sp.random(n, d, density=5e-4, format="csr", random_state=rng) + sp.eye(n, d, format="csr")
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    algo = make(1.0, True, kernel="rbf[gamma=0.5]")
    algo.learn_predict_many(X, y)
    assert not hasattr(algo, "X") and algo.stats()["n_support"] > 50
    stored = algo._pool.nbytes() + algo.store.buf.nbytes()
    assert stored < 2 * 8 * d * 2  # about two scatter work vectors, not n dense rows
    np.testing.assert_array_equal(algo.snapshot()["X"].toarray(), X.toarray())


def test_bad_input_on_csr_rows() -> None:
    """CSR rows need a built-in kernel and the dimension learned; labels are checked; a
    learner of dense rows refuses CSR ones (one line each)."""
    X, y = data(20)
    Xs = sp.csr_matrix(X)
    from kbench.core.dense_rows import DenseRows, for_sparse_rows

    # A kernel written in Python gets dense rows from the runner (DenseRows), the same
    # predictions as on the dense rows; CSR rows handed to it directly are refused.
    py = make(1.0, True, kernel="cosine[base=poly[degree=2]]")
    assert not py.sparse_input and isinstance(for_sparse_rows(py), DenseRows)
    np.testing.assert_array_equal(
        for_sparse_rows(py).learn_predict_many(Xs, y),
        make(1.0, True, kernel="cosine[base=poly[degree=2]]").learn_predict_many(X, y),
    )
    assert make(1.0, True).sparse_input
    with pytest.raises(TypeError, match=r"^sparse input needs a built-in kernel, not Cosine$"):
        make(1.0, True, kernel="cosine[base=poly[degree=2]]").learn_predict_many(Xs, y)
    algo = make(1.0, True)
    algo.learn_predict_many(Xs[:10], y[:10])
    with pytest.raises(ValueError, match=r"^idsvm: X has 4 columns but the model has 3$"):
        algo.learn_predict_many(sp.csr_matrix(np.ones((2, 4))), y[:2])
    with pytest.raises(ValueError, match="labels must be"):
        algo.learn_one(Xs[11], 0.5)
    dense = make(1.0, True)
    dense.learn_predict_many(X[:10], y[:10])
    with pytest.raises(TypeError, match=r"^idsvm has learned dense rows; it cannot continue"):
        dense.learn_predict_many(Xs[10:], y[10:])
