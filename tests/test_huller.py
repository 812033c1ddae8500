"""The Huller against a plain NumPy reference written from specs/003, LIBSVM, and its own invariants.

The reference keeps support vectors in Python lists (removed by moving the last one into
the freed place, as the learner does, so that a random pick names the same vector) and
follows the UPDATE of §3.2 and the streaming loop of §3.3 line by line.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.svm import SVC

from helpers import NumpyRBF, binary_stream, rbf, readonly, run_stream, same_with_a_tiny_cache
from kbench.core.registry import get_registry
from kbench.cython_core import _huller
from kbench.learners.example_ids import ExampleIds
from kbench.plugins.algorithms.huller import Huller

MASK = (1 << 64) - 1


def u01(seed: int, t: int) -> float:
    """splitmix64 of a counter, written again from _huller.pyx."""
    z = (seed * 0xD1B54A32D192ED03 + (t + 1) * 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    z ^= z >> 31
    return (z >> 11) * 2.0**-53


def make(kernel: str = "rbf[gamma=1.0]", **params) -> Huller:
    reg = get_registry()
    return reg.create("algorithm", "huller", kernel=reg.create("kernel", kernel), **params)


def separable(n: int = 150, d: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A curved boundary with a gap: separable, and not linearly."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, (4 * n, d))
    s = X[:, 0] ** 2 + X[:, 1] - 1.0
    keep = np.abs(s) > 0.3
    X, s = X[keep][:n], s[keep][:n]
    return readonly(X), readonly(np.where(s > 0, 1.0, -1.0))


class RefHuller:
    """The streaming Huller of specs/003 §3.2–3.3 in plain NumPy."""

    def __init__(
        self,
        gamma: float,
        *,
        n_init: int = 5,
        removals: int = 1,
        C: float | None = None,
        seed: int = 0,
        allow_negative: bool = True,
    ) -> None:
        self.gamma, self.n_init, self.removals, self.seed = gamma, n_init, removals, seed
        self.ridge = 0.0 if C is None else 1.0 / C
        self.allow_negative = allow_negative
        self.X: list[np.ndarray] = []
        self.y: list[float] = []
        self.a: list[float] = []
        self.ids: list[int] = []
        self.PP = self.NP = self.NN = 0.0
        self.avg = {1.0: 0, -1.0: 0}
        self.draws = 0
        self.pending: list[tuple[np.ndarray, float, int]] = []

    def k(self, a: np.ndarray, b: np.ndarray) -> float:
        return float(rbf(a, b, self.gamma)[0, 0])

    def count(self, c: float) -> int:
        return sum(1 for v in self.y if v == c)

    def raw(self, x: np.ndarray) -> float:
        A = sum(a * self.k(s, x) for s, c, a in zip(self.X, self.y, self.a, strict=True) if c > 0)
        B = sum(a * self.k(s, x) for s, c, a in zip(self.X, self.y, self.a, strict=True) if c < 0)
        return A - B + 0.5 * (self.NN - self.PP)

    def predict(self, x: np.ndarray) -> float:
        if self.count(1.0) and self.count(-1.0):
            return 1.0 if self.raw(x) >= 0 else -1.0
        return -1.0 if self.count(-1.0) else 1.0

    def remove(self, i: int) -> None:
        last = len(self.X) - 1
        for lst in (self.X, self.y, self.a, self.ids):
            lst[i] = lst[last]
            lst.pop()

    def update(
        self, k: int | None, x: np.ndarray, yk: float, xid: int, forced: float = 0.0
    ) -> float:
        """UPDATE (§3.2) towards x; k its index if it is a support vector. Returns the new α."""
        ak = self.a[k] if k is not None else 0.0
        A = sum(a * self.k(s, x) for s, c, a in zip(self.X, self.y, self.a, strict=True) if c > 0)
        B = sum(a * self.k(s, x) for s, c, a in zip(self.X, self.y, self.a, strict=True) if c < 0)
        if k is not None:  # δᵢⱼ on identities: only the example itself gets the ridge
            if yk > 0:
                A += ak * self.ridge
            else:
                B += ak * self.ridge
        kap = self.k(x, x) + self.ridge
        if forced:
            lam, lo = forced, 0.0
        else:
            if yk > 0:
                num, den, base = self.PP - self.NP - A + B, self.PP + kap - 2 * A, self.PP + kap
            else:
                num, den, base = self.NN - self.NP - B + A, self.NN + kap - 2 * B, self.NN + kap
            if den <= 1e-12 * base:
                return ak
            lo = -ak / (1 - ak) if (self.allow_negative and 0 < ak < 1) else 0.0
            lam = min(1.0, max(lo, num / den))
            if lam == 0.0:
                return ak
        if yk > 0:
            self.PP = (1 - lam) ** 2 * self.PP + 2 * lam * (1 - lam) * A + lam**2 * kap
            self.NP = (1 - lam) * self.NP + lam * B
        else:
            self.NN = (1 - lam) ** 2 * self.NN + 2 * lam * (1 - lam) * B + lam**2 * kap
            self.NP = (1 - lam) * self.NP + lam * A
        for i, c in enumerate(self.y):
            if c == yk:
                self.a[i] *= 1 - lam
        new = 0.0 if (lam == lo and not forced and k is not None) else ak * (1 - lam) + lam
        if k is not None:
            self.a[k] = new
        i = len(self.X) - 1
        while i >= 0:  # purge exact zeros of this class, last first
            if self.y[i] == yk and self.a[i] == 0.0:
                self.remove(i)
            i -= 1
        return new

    def insert(self, x: np.ndarray, yk: float, xid: int) -> str:
        k = self.ids.index(xid) if xid >= 0 and xid in self.ids else None
        if k is not None:
            if self.avg[yk] >= self.n_init:
                self.update(k, x, yk, xid)
            return "done"
        if self.avg[yk] < self.n_init:
            first = self.count(yk) == 0
            self.avg[yk] += 1
            alpha = self.update(None, x, yk, xid, forced=1.0 / self.avg[yk])
            self.X.append(x.copy())
            self.y.append(yk)
            self.a.append(alpha)
            self.ids.append(xid)
            if first and self.pending and self.count(1.0) and self.count(-1.0):
                return "flush"
            return "done"
        if self.count(-yk) == 0:
            return "pending"
        alpha = self.update(None, x, yk, xid)
        if alpha > 0:
            self.X.append(x.copy())
            self.y.append(yk)
            self.a.append(alpha)
            self.ids.append(xid)
        return "done"

    def learn(self, x: np.ndarray, yk: float, xid: int) -> float:
        pred = self.predict(x)
        status = self.insert(x, yk, xid)
        if status == "pending":
            if xid < 0 or xid not in [p[2] for p in self.pending]:
                self.pending.append((x, yk, xid))
            return pred
        if status == "flush":
            pending, self.pending = self.pending, []
            for px, py, pid in pending:
                self.insert(px, py, pid)
            return pred
        for _ in range(self.removals):
            if not (self.count(1.0) and self.count(-1.0)):
                break
            r = int(u01(self.seed, self.draws) * len(self.X))
            self.draws += 1
            if self.avg[self.y[r]] < self.n_init:
                continue
            self.update(r, self.X[r], self.y[r], self.ids[r])
        return pred


def run_ref(ref: RefHuller, X: np.ndarray, y: np.ndarray, epochs: int = 1) -> np.ndarray:
    preds = []
    for _ in range(epochs):
        preds.append([ref.learn(X[i], float(y[i]), i) for i in range(len(X))])
    return np.array(preds)


def sorted_alpha(h: Huller) -> np.ndarray:
    SV, lab, alpha = h.support()
    order = np.lexsort(SV.T[::-1])
    return np.column_stack([SV[order], lab[order], alpha[order]])


def ref_alpha(ref: RefHuller) -> np.ndarray:
    SV, lab, alpha = np.array(ref.X), np.array(ref.y), np.array(ref.a)
    order = np.lexsort(SV.T[::-1])
    return np.column_stack([SV[order], lab[order], alpha[order]])


# -- the generator ------------------------------------------------------------------------------


def test_removal_generator_is_the_documented_splitmix() -> None:
    for seed in (0, 1, 12345, MASK):
        for t in (0, 1, 7, 10**9):
            assert _huller.uniform(seed, t) == u01(seed, t)
    draws = np.array([u01(3, t) for t in range(20000)])
    assert draws.min() >= 0.0 and draws.max() < 1.0
    assert abs(draws.mean() - 0.5) < 0.01


# -- specs/003 §3.2 hand examples (claim 4) ----------------------------------------------------


def test_hand_example_one_dimension() -> None:
    """Positives 3 then 2, negative 0: λ_u = 3 clips to 1, the 3 is removed, ŷ(x) = 2x − 2."""
    X, y = readonly([[3.0], [0.0], [2.0]]), readonly([1.0, -1.0, 1.0])
    h = make("linear", n_init_per_class=1, removals=0)
    h.learn_predict_many(X, y)
    SV, _, alpha = h.support()
    assert sorted(SV.ravel().tolist()) == [0.0, 2.0]
    assert sorted(alpha.tolist()) == [1.0, 1.0]
    assert h.hull_scalars() == (4.0, 0.0, 0.0)
    raw = h.decision_function(readonly([[2.0], [0.0], [1.0]]), canonical=False)
    assert raw.tolist() == [2.0, -2.0, 0.0]


def test_hand_example_two_dimensions() -> None:
    """(a) λ = 0.5 and PP' = 4; (b) a repeat of p1 changes nothing; (c) λ = −1 removes p3."""
    p1, p2, p3, n = [2.0, 1.0], [2.0, -1.0], [4.0, 0.0], [0.0, 0.0]
    X, y = readonly([p1, n, p2]), readonly([1.0, -1.0, 1.0])
    h = make("linear", n_init_per_class=1, removals=0)
    h.learn_predict_many(X, y)
    _, _, alpha = h.support()
    assert sorted(alpha.tolist()) == [0.5, 0.5, 1.0]
    assert h.hull_scalars()[0] == pytest.approx(4.0, abs=1e-15)
    before = sorted_alpha(h)
    h.learn_one(X[0], 1.0)  # p1 again: the same training example, already optimal
    assert np.array_equal(sorted_alpha(h), before)
    assert h.stats()["n_support"] == 3

    X, y = readonly([p1, p3, n]), readonly([1.0, 1.0, -1.0])
    h = make("linear", n_init_per_class=2, removals=0)
    h.learn_predict_many(X, y)
    assert h.hull_scalars()[0] == pytest.approx(9.25, abs=1e-14)
    h.learn_one(X[1], 1.0)  # UPDATE(p3): λ_u = −2.2 clipped at −α/(1 − α) = −1
    SV, _, alpha = h.support()
    assert sorted(map(tuple, SV.tolist())) == [(0.0, 0.0), (2.0, 1.0)]
    assert alpha.tolist() == [1.0, 1.0]
    assert h.hull_scalars()[0] == pytest.approx(5.0, abs=1e-13)
    assert h.stats()["removed"] == 1


# -- against the NumPy reference ------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"n_init_per_class": 1, "removals": 2},
        {"C": 2.0},
        {"allow_negative_lambda": False},
        {"removals": 0, "n_init_per_class": 3},
    ],
    ids=["default", "n0=1,removals=2", "soft", "no-negative-lambda", "insert-only"],
)
def test_matches_numpy_reference_over_two_passes(params: dict) -> None:
    X, y = separable(120, seed=1)
    h = make("rbf[gamma=1.5]", seed=7, **params)
    ref = RefHuller(
        1.5,
        seed=7,
        n_init=params.get("n_init_per_class", 5),
        removals=params.get("removals", 1),
        C=params.get("C"),
        allow_negative=params.get("allow_negative_lambda", True),
    )
    expected = run_ref(ref, X, y, epochs=2)
    got = np.array([h.learn_predict_many(X, y) for _ in range(2)])
    assert np.array_equal(got, expected)
    a, b = sorted_alpha(h), ref_alpha(ref)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)
    np.testing.assert_allclose(h.hull_scalars(), (ref.PP, ref.NP, ref.NN), rtol=1e-12, atol=1e-13)


def test_python_path_matches_compiled_path() -> None:
    """A kernel without a compiled form runs the same core with rows from kernel.row."""

    X, y = separable(120, seed=2)
    fast = make("rbf[gamma=1.5]", seed=3, cache_mb=0.01)
    slow = Huller(kernel=NumpyRBF(gamma=1.5), seed=3, cache_mb=0.01)
    for _ in range(2):
        pf = fast.learn_predict_many(X, y)
        ps = slow.learn_predict_many(X, y)
        assert np.array_equal(pf, ps)
    np.testing.assert_allclose(sorted_alpha(fast), sorted_alpha(slow), atol=1e-11)
    Xt = separable(60, seed=9)[0]
    np.testing.assert_allclose(fast.decision_function(Xt), slow.decision_function(Xt), atol=1e-9)
    assert slow.stats()["cache_misses"] > 0 and slow.stats()["kernel_evals"] > 0


# -- invariants (claims 1–3) --------------------------------------------------------------------


@pytest.mark.parametrize("C", [None, 0.5])
def test_recursive_dot_products_equal_recomputation_after_every_step(C: float | None) -> None:
    X, y = separable(100, seed=3)
    h = make("rbf[gamma=2.0]", C=C, seed=1, n_init_per_class=2)
    d2_prev = np.inf
    worst = 0.0
    for epoch in range(3):
        for i in range(len(X)):
            h.learn_one(X[i], y[i])
            PP, NP, NN = h.hull_scalars()
            ePP, eNP, eNN = h.exact_scalars()
            scale = max(abs(ePP), abs(eNN), 1e-300)
            worst = max(worst, abs(PP - ePP) / scale, abs(NP - eNP) / scale, abs(NN - eNN) / scale)
            _, lab, alpha = h.support()
            assert np.all(alpha > 0.0), "a zero coefficient left in the support set"
            if (lab > 0).any():
                assert abs(alpha[lab > 0].sum() - 1.0) < 1e-12
            if (lab < 0).any():
                assert abs(alpha[lab < 0].sum() - 1.0) < 1e-12
            if epoch > 0:  # after the initial averaging, no UPDATE increases ‖X_P − X_N‖²
                assert h.d2 <= d2_prev * (1 + 1e-12)
            d2_prev = h.d2
    assert worst < 1e-12


def test_scalars_stay_exact_over_many_updates() -> None:
    """Claim 3 at 10⁴+ updates: no drift correction is needed at this scale."""
    X, y = separable(200, seed=4)
    h = make("rbf[gamma=1.0]", seed=2)
    for _ in range(30):
        h.learn_predict_many(X, y)
    assert h.stats()["updates"] > 10_000
    np.testing.assert_allclose(h.hull_scalars(), h.exact_scalars(), rtol=1e-10)
    _, lab, alpha = h.support()
    assert abs(alpha[lab > 0].sum() - 1) < 1e-12 and abs(alpha[lab < 0].sum() - 1) < 1e-12


# -- convergence to the SVM (claims 5, 6, 8) ----------------------------------------------------


def test_converges_to_hard_margin_svm() -> None:
    """Run to convergence on separable data: LIBSVM's solution with a huge C (§1.3 mapping)."""
    X, y = separable(150, seed=5)
    h = make("rbf[gamma=1.0]", seed=0)
    for _ in range(400):
        h.learn_predict_many(X, y)
    f = h.decision_function(X)
    assert (y * f).min() > 1 - 1e-4, "canonical margins must all reach 1"
    svc = SVC(C=1e8, kernel="rbf", gamma=1.0, tol=1e-9).fit(X, y)
    assert np.max(np.abs(svc.dual_coef_)) < 1e7  # no coefficient at the bound: hard margin
    dual, bias = h.svm_dual()
    SV, _, _ = h.support()
    ref = dict(zip(map(tuple, svc.support_vectors_), svc.dual_coef_[0], strict=True))
    mine = dict(zip(map(tuple, SV), dual, strict=True))
    big = {k for k, v in ref.items() if abs(v) > 1e-6 * np.abs(svc.dual_coef_).max()}
    assert big <= set(mine), "every SVM support vector is a Huller support vector"
    for key in big:
        assert mine[key] == pytest.approx(ref[key], rel=1e-3)
    assert bias == pytest.approx(svc.intercept_[0], rel=1e-4, abs=1e-4)
    Xt = separable(300, seed=6)[0]
    ft, st = h.decision_function(Xt), svc.decision_function(Xt)
    assert np.max(np.abs(ft - st)) < 1e-3 * np.max(np.abs(st))


def test_removals_recover_from_a_bad_start() -> None:
    """Claim 6: every example averaged into its hull; later passes remove the needless ones."""
    X, y = separable(200, seed=7)
    pos, neg = np.flatnonzero(y > 0)[:40], np.flatnonzero(y < 0)[:40]
    idx = np.random.default_rng(0).permutation(np.concatenate([pos, neg]))
    X, y = readonly(X[idx]), readonly(y[idx])
    h = make("rbf[gamma=1.0]", seed=1, n_init_per_class=40)
    h.learn_predict_many(X, y)
    assert h.stats()["n_support"] == 80 and h.stats()["removed"] == 0
    sizes = []
    for _ in range(300):
        h.learn_predict_many(X, y)
        sizes.append(h.stats()["n_support"])
    svc = SVC(C=1e8, kernel="rbf", gamma=1.0, tol=1e-9).fit(X, y)
    assert sizes[0] < 80 and sizes[-1] <= sizes[10] <= sizes[0]
    assert {tuple(v) for v in h.support()[0]} == {tuple(v) for v in svc.support_vectors_}


def test_soft_margin_is_the_l2_slack_svm() -> None:
    """Claim 8: with K + I/C the Huller converges to the hard-margin SVM of that kernel."""
    rng = np.random.default_rng(8)
    X = rng.standard_normal((90, 2))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.6 * rng.standard_normal(90) > 0, 1.0, -1.0)
    X, y = readonly(X), readonly(y)
    C = 3.0
    h = make("rbf[gamma=0.5]", C=C, seed=0)
    for _ in range(400):
        h.learn_predict_many(X, y)
    K = rbf(X, X, 0.5) + np.eye(len(X)) / C
    svc = SVC(C=1e9, kernel="precomputed", tol=1e-10).fit(K, y)
    dual, bias = h.svm_dual()
    full = np.zeros(len(X))
    full[svc.support_] = svc.dual_coef_[0]
    SV = h.support()[0]
    index = {tuple(v): i for i, v in enumerate(X)}
    mine = np.zeros(len(X))
    for v, a in zip(SV, dual, strict=True):
        mine[index[tuple(v)]] = a
    np.testing.assert_allclose(mine, full, atol=1e-3 * np.abs(full).max())
    assert bias == pytest.approx(svc.intercept_[0], abs=1e-3)
    Xt = readonly(rng.standard_normal((200, 2)))
    plain = rbf(Xt, X, 0.5) @ full + svc.intercept_[0]  # test points: the plain kernel
    np.testing.assert_allclose(h.decision_function(Xt), plain, atol=2e-3 * np.abs(plain).max())


# -- ablations (claim 7) ----------------------------------------------------------------------


def _updates_to_margin(
    h: Huller, X: np.ndarray, y: np.ndarray, level: float, max_epochs: int
) -> tuple[int, int]:
    peak = 0
    for _ in range(max_epochs):
        h.learn_predict_many(X, y)
        peak = max(peak, h.stats()["n_support"])
        if (y * h.decision_function(X)).min() > level:
            return h.stats()["updates"], peak
    return 10**12, peak


def test_negative_lambda_and_removal_attempts_speed_up_convergence() -> None:
    X, y = separable(150, seed=10)
    full, peak_full = _updates_to_margin(make("rbf[gamma=1.0]", seed=0), X, y, 0.99, 400)
    no_neg, _ = _updates_to_margin(
        make("rbf[gamma=1.0]", seed=0, allow_negative_lambda=False), X, y, 0.99, 400
    )
    insert_only, peak_ins = _updates_to_margin(
        make("rbf[gamma=1.0]", seed=0, removals=0), X, y, 0.99, 400
    )
    assert full < 10**12
    assert no_neg > 2 * full
    assert insert_only > full
    final = make("rbf[gamma=1.0]", seed=0)
    for _ in range(200):
        final.learn_predict_many(X, y)
    assert peak_ins > peak_full >= final.stats()["n_support"]


# -- multi-pass identity and the runner's epochs -------------------------------------------------


def test_second_pass_revisits_support_vectors_instead_of_copying_them() -> None:
    X, y = separable(150, seed=11)
    h = make("rbf[gamma=1.0]", seed=0)
    for _ in range(3):
        h.learn_predict_many(X, y)
        SV = h.support()[0]
        assert len({tuple(v) for v in SV}) == len(SV)
    ids = h._ids
    assert ids.block(X[10:20]).tolist() == list(range(10, 20))
    assert ids.one(X[7]) == 7
    assert (ids.block(np.array(X[10:20])) == -1).all()  # a copy is a new example
    writeable = np.array(X)
    assert ExampleIds().block(writeable).tolist() == [-1] * len(X)


def test_runner_epochs_give_error_after_each_pass() -> None:
    X, y = separable(300, seed=12)
    Xt, yt = separable(200, seed=13)
    stream = binary_stream(X, y, Xt, yt, dataset="test-huller")
    result = run_stream(stream, "huller", kernel="rbf[gamma=1.0]", epochs=3, checkpoints=8)
    tr = result.traces
    ends = tr[tr["seen"] == len(X)].set_index("epoch")
    assert list(ends.index) == [1, 2, 3]
    assert ends["test_error"].notna().all()
    assert ends.loc[3, "online_error"] < ends.loc[1, "online_error"]  # later passes fit better
    assert result.run["online_error"] == ends.loc[1, "online_error"]
    assert result.run["test_error"] == ends.loc[3, "test_error"]


# -- bad input ---------------------------------------------------------------------------------


def test_non_separable_data_warns_and_stays_finite() -> None:
    """Conflicting duplicates: the hulls intersect; the learner warns and suggests C."""
    rng = np.random.default_rng(14)
    X = rng.standard_normal((60, 2))
    X = readonly(np.vstack([X, X[:10]]))
    y = readonly(
        np.concatenate([np.where(X[:60, 0] > 0, 1.0, -1.0), -np.where(X[:10, 0] > 0, 1.0, -1.0)])
    )
    h = make("rbf[gamma=1.0]", seed=0)
    with pytest.warns(RuntimeWarning, match=r"not separable.*huller\[C="):
        for _ in range(400):  # ‖X_P − X_N‖² only tends to 0, about as 1/t²
            h.learn_predict_many(X, y)
    assert h.stats()["nonseparable"] == 1
    assert np.all(np.isfinite(h.decision_function(X)))
    assert all(np.isfinite(v) for v in h.stats().values())
    soft = make("rbf[gamma=1.0]", seed=0, C=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(400):
            soft.learn_predict_many(X, y)
    assert soft.stats()["nonseparable"] == 0 and soft.d2 > 1e-3


def test_linear_kernel_on_xor_reports_non_separable() -> None:
    X = readonly([[1, 1], [-1, -1], [1, -1], [-1, 1]] * 5)
    y = readonly([1, 1, -1, -1] * 5)
    h = make("linear", seed=0, n_init_per_class=1)
    with pytest.warns(RuntimeWarning, match="not separable"):
        for _ in range(5):
            h.learn_predict_many(X, y)
    assert h.d2 < 1e-10


def test_stream_starting_with_one_class() -> None:
    """Sorted by class: negatives are held until the first positive, then inserted."""
    X, y = separable(200, seed=15)
    order = np.argsort(y, kind="stable")
    Xs, ys = readonly(X[order]), readonly(y[order])
    n_neg = int((ys < 0).sum())
    h = make("rbf[gamma=1.0]", seed=0)
    pred = h.learn_predict_many(Xs, ys)
    assert pred[0] == 1.0 and np.all(pred[1:n_neg] == -1.0)  # then predict the only class seen
    assert h.stats()["pending"] == 0
    shuffled = make("rbf[gamma=1.0]", seed=0)
    shuffled.learn_predict_many(X, y)
    Xt, yt = separable(300, seed=16)
    err_sorted = np.mean(h.predict_many(Xt) != yt)
    err_shuffled = np.mean(shuffled.predict_many(Xt) != yt)
    assert err_sorted < 0.1 and err_shuffled < 0.1
    # A stream of one class only: nothing to learn, nothing blows up.
    one = make("rbf[gamma=1.0]", seed=0)
    neg = readonly(X[y < 0])
    one.learn_predict_many(neg, readonly(-np.ones(len(neg))))
    one.learn_predict_many(neg, readonly(-np.ones(len(neg))))  # a second pass adds nothing
    assert one.stats()["pending"] == len(neg) - 5
    assert np.all(one.predict_many(Xt) == -1.0)


def test_cache_smaller_than_one_row_changes_nothing_but_speed() -> None:
    X, y = separable(150, seed=17)
    big = make("rbf[gamma=1.0]", seed=4, cache_mb=64.0)
    tiny = make("rbf[gamma=1.0]", seed=4, cache_mb=1e-6)
    sb, st = same_with_a_tiny_cache(big, tiny, X, y, passes=3)
    assert st["kernel_evals"] > sb["kernel_evals"]
    # A cached kernel value and a recomputed one come from BLAS calls over rows of different
    # lengths, whose summation order (hence last bits) depends on the BLAS kernel: the same
    # support vectors and labels, coefficients equal to rounding (observed 7e-15 absolute).
    a_big, a_tiny = sorted_alpha(big), sorted_alpha(tiny)
    np.testing.assert_array_equal(a_big[:, :-1], a_tiny[:, :-1])
    np.testing.assert_allclose(a_big[:, -1], a_tiny[:, -1], rtol=1e-9, atol=1e-12)


def test_parameter_ranges() -> None:
    for bad in (
        {"C": 0.0},
        {"C": -1.0},
        {"n_init_per_class": 0},
        {"removals": -1},
        {"cache_mb": -1.0},
    ):
        with pytest.raises(ValueError, match="huller"):
            make(**bad)


# -- the kernel-row cache ------------------------------------------------------------------------


def test_kernel_cache_against_an_lru_model() -> None:
    """Random fetches, stores and removals: same hits, misses and rows as a dict-based LRU."""
    from collections import OrderedDict

    from kbench.learners.kernel_cache import KernelCache

    rng = np.random.default_rng(0)
    kernel = get_registry().create("kernel", "rbf[gamma=0.7]")
    L, d = 40, 3
    SV = rng.standard_normal((L, d))
    sq = (SV**2).sum(1)
    scratch = np.zeros(L)
    cache = KernelCache(6 * L * 8 + 100, L)  # six rows
    assert cache.n_slots == 6
    model: OrderedDict[int, int] = OrderedDict()  # key → valid length, most recent last
    hits = partial = misses = evals = 0
    m = 10
    for _ in range(3000):
        op = rng.random()
        if op < 0.6 and m > 0:
            key, need = int(rng.integers(m)), int(rng.integers(1, m + 1))
            need = max(need, key + 1)
            row = cache.fetch(kernel, key, need, SV, sq, scratch)
            np.testing.assert_allclose(row, rbf(SV[:need], SV[key], 0.7)[:, 0], atol=1e-14)
            if key in model:
                model.move_to_end(key)
                have = model[key]
                hits += have >= need
                partial += have < need
            else:
                if len(model) == 6:
                    model.popitem(last=False)
                have = 0
                misses += 1
            evals += max(0, need - have)
            model[key] = max(have, need)
        elif op < 0.75 and m < L:  # a new support vector whose row is known
            SV[m] = rng.standard_normal(d)
            sq[m] = SV[m] @ SV[m]
            cache.store(m, rbf(SV[: m + 1], SV[m], 0.7)[:, 0])
            if m in model:
                model.move_to_end(m)
            elif len(model) == 6:
                model.popitem(last=False)
            model[m] = m + 1
            m += 1
        elif m > 1:  # remove support vector i: the last one moves into its slot
            i, last = int(rng.integers(m)), m - 1
            cache.move(i, last)
            SV[i], sq[i] = SV[last].copy(), sq[last]
            model.pop(i, None)
            for key in list(model):
                if model[key] > last:
                    model[key] = last
                elif model[key] > i:
                    model[key] = i
            if last in model and i != last:
                items = [(i if k == last else k, v) for k, v in model.items()]
                model = OrderedDict(items)
            m -= 1
        st = cache.stats()
        assert (st["cache_hits"], st["cache_partial"], st["cache_misses"]) == (
            hits,
            partial,
            misses,
        )
        assert cache.kernel_evals == evals
        assert st["cache_rows"] == len(model)
    # Every cached prefix still holds the right values for the current slots.
    for key, have in model.items():
        slot = int(cache.key_slot[key])
        np.testing.assert_allclose(
            cache.rows[slot, :have], rbf(SV[:have], SV[key], 0.7)[:, 0], atol=1e-14
        )
    # Growing keeps the most recent rows that fit the budget.
    recent = list(model)[::-1]
    cache.resize(2 * L)
    assert cache.n_slots == 3
    kept = [k for k in recent[:3]]
    assert sorted(int(k) for k in np.flatnonzero(cache.key_slot >= 0)) == sorted(kept)


def test_kernel_cache_budget_below_one_row() -> None:
    from kbench.learners.kernel_cache import KernelCache

    kernel = get_registry().create("kernel", "rbf[gamma=0.7]")
    SV = np.random.default_rng(1).standard_normal((16, 3))
    sq = (SV**2).sum(1)
    cache = KernelCache(8 * 16 - 1, 16)
    assert cache.n_slots == 0
    scratch = np.zeros(16)
    for _ in range(3):
        row = cache.fetch(kernel, 2, 16, SV, sq, scratch)
        np.testing.assert_allclose(row, rbf(SV, SV[2], 0.7)[:, 0], atol=1e-14)
    cache.store(3, row)
    cache.move(1, 15)
    st = cache.stats()
    assert (st["cache_hits"], st["cache_misses"], st["cache_rows"]) == (0, 3, 0)
    with pytest.raises(ValueError, match="kernel cache budget"):
        KernelCache(-1, 16)


def test_paper_study_plans() -> None:
    """kbench/studies/huller.toml: every spec valid, the paper's passes (1, 2 and 10)."""
    from pathlib import Path

    from kbench.execution.study import load_study, plan

    path = Path(__file__).resolve().parents[1] / "kbench" / "studies" / "huller.toml"
    p = plan(load_study(path), get_registry())
    assert not p.skipped
    passes = {(t.algorithm.split("[")[0], t.epochs) for t in p.tasks}
    assert {("huller", 1), ("huller", 2), ("lasvm", 1), ("lasvm", 2), ("libsvm", 1),
            ("averaged_perceptron", 1), ("averaged_perceptron", 10)} == passes  # fmt: skip
    assert all(t.kernel.startswith("rbf[gamma=0.005") for t in p.tasks)
