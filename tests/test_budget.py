"""The budgeted learners against plain NumPy references written from the papers' updates.

Each reference keeps its support set in a Python list with explicit coefficients (no lazy
scale factors, no incremental inverses, no slot reuse tricks beyond what the algorithm
itself specifies) and must give the same predictions as kbench's compiled loops.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from helpers import NumpyRBF, assert_refused, create, rbf
from kbench.core.components import Kernel, Loss
from kbench.core.registry import get_registry
from kbench.cython_core import _bsgd, _budget_perceptrons
from kbench.cython_core._bsgd import bsgd_block
from kbench.plugins.algorithms import _pegasos_family

GAMMA = 0.5
MASK = (1 << 64) - 1


# -- shared reference pieces --------------------------------------------------------------------


def krow(S: list, x: np.ndarray, gamma: float = GAMMA) -> np.ndarray:
    return rbf(np.array(S), x, gamma)[:, 0] if S else np.zeros(0)


class SplitMix64:
    """The generator of cython_core/_budget_ops.pxd, written again in Python."""

    def __init__(self, seed: int) -> None:
        self.s = seed & MASK

    def uniform(self) -> float:
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        return (z >> 11) * 2.0**-53

    def below(self, n: int) -> int:
        return min(int(self.uniform() * n), n - 1)


def binary_stream(n: int = 300, d: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] ** 2 - 0.7 > 0, 1.0, -1.0)
    flip = rng.random(n) < 0.1
    y[flip] = -y[flip]
    return X, y


def multiclass_stream(
    n: int = 300, d: int = 4, C: int = 3, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((C, d)) * 1.5
    y = rng.integers(0, C, n).astype(float)
    X = rng.standard_normal((n, d)) + centers[y.astype(int)]
    return X, y


def make(
    spec: str,
    task: str = "binary",
    n_classes: int = 2,
    seed: int = 0,
    kernel: str | Kernel = f"rbf[gamma={GAMMA}]",
    loss: str | Loss | None = None,
):
    cls = get_registry().entry("algorithm", spec.split("[")[0]).cls
    if cls.uses_loss and loss is None:
        loss = "multiclass_hinge" if task == "multiclass" else cls.default_loss
    return create(spec, kernel=kernel, loss=loss, task=task, n_classes=n_classes, seed=seed)


def one_by_one(algo, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.empty(len(X))
    for i in range(len(X)):
        out[i] = algo.predict_one(X[i])
        algo.learn_one(X[i], y[i])
    return out


def sign(f: float) -> float:
    return 1.0 if f >= 0 else -1.0


# -- random budget perceptron -------------------------------------------------------------------


def rbp_reference(X, y, budget, seed, C=1):
    rng = SplitMix64(seed)
    S, A, pred = [], [], []
    for x, yt in zip(X, y, strict=True):
        f = krow(S, x) @ np.array(A).reshape(len(S), C) if S else np.zeros(C)
        if C == 1:
            pred.append(sign(f[0]))
            mistake, coef = yt * f[0] <= 0, np.array([yt])
        else:
            guess = int(np.argmax(f))
            pred.append(float(guess))
            mistake = guess != int(yt)
            coef = np.zeros(C)
            coef[int(yt)], coef[guess] = 1.0, -1.0
        if mistake:
            if len(S) < budget:
                S.append(x)
                A.append(coef)
            else:
                r = rng.below(budget)
                S[r], A[r] = x, coef
    return np.array(pred), len(S)


@pytest.mark.parametrize("seed", [0, 7])
def test_rbp_matches_reference(seed: int) -> None:
    """RBP: uniform random replacement from the seeded generator, binary."""
    X, y = binary_stream()
    ref, m = rbp_reference(X, y, 15, seed)
    algo = make("rbp[budget=15]", seed=seed)
    assert np.array_equal(algo.learn_predict_many(X, y), ref)
    assert algo.stats()["n_support"] == m == 15


def test_rbp_multiclass_matches_reference() -> None:
    X, y = multiclass_stream()
    ref, _ = rbp_reference(X, y, 10, 3, C=3)
    algo = make("rbp[budget=10]", task="multiclass", n_classes=3, seed=3)
    assert np.array_equal(algo.learn_predict_many(X, y), ref)


def test_rbp_seeds_differ_and_repeat() -> None:
    """Different seeds remove different vectors; the same seed repeats the run."""
    X, y = binary_stream(600)
    runs = [make("rbp[budget=8]", seed=s).learn_predict_many(X, y) for s in (1, 1, 2)]
    assert np.array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


def test_generator_matches_python_splitmix() -> None:
    """The compiled generator is SplitMix64."""
    g = SplitMix64(12345)
    assert _budget_perceptrons.rng_draws(12345, 5) == [g.uniform() for _ in range(5)]


@pytest.mark.parametrize(
    "spec", ["rbp[budget=1000]", "forgetron[budget=1000]", "projectron[budget=1000,eta=0.0]"]
)
def test_large_budget_equals_perceptron(spec: str) -> None:
    """With B above the number of mistakes RBP, Forgetron, Projectron (η = 0) are the perceptron."""
    X, y = binary_stream(250)
    p = make(spec).learn_predict_many(X, y)
    q = make("perceptron").learn_predict_many(X, y)
    assert np.array_equal(p, q)


def test_projectron_multiclass_eta0_equals_perceptron() -> None:
    X, y = multiclass_stream()
    p = make("projectron[budget=1000,eta=0.0]", task="multiclass", n_classes=3).learn_predict_many(
        X, y
    )
    q = make("perceptron", task="multiclass", n_classes=3).learn_predict_many(X, y)
    assert np.array_equal(p, q)


# -- Forgetron ------------------------------------------------------------------------------------


def forgetron_reference(X, y, budget):
    """Self-tuned Forgetron with explicit coefficients and a queue."""
    S, A, pred = [], [], []
    Q, M = 0.0, 0
    shrunk = {"convex": 0, "concave": 0}  # removals with φ < 1, by the sign of qa
    for x, yt in zip(X, y, strict=True):
        f = float(krow(S, x) @ np.array(A)) if S else 0.0
        pred.append(sign(f))
        if yt * f > 0:
            continue
        M += 1
        S.append(x)
        A.append(yt)
        if len(S) <= budget:
            continue
        # f' has B+1 terms; the oldest is S[0].
        a = np.array(A)
        fr = float(krow(S, S[0]) @ a)
        sigma, yr = abs(A[0]), np.sign(A[0])
        mu = yr * fr  # margin of the oldest vector under f'; under f'' = φf' it is φμ
        room = 15.0 / 32.0 * M - Q
        # Ψ(σφ, φμ) = (σφ)² + 2σφ − 2σφ·φμ = qa·φ² + qb·φ: the paper's damage, with the
        # margin taken after shrinking (Dekel, Shalev-Shwartz and Singer 2008, Fig. 3).
        qa, qb = sigma**2 - 2 * sigma * mu, 2 * sigma
        if qa + qb <= room:
            phi = 1.0
        else:
            # the first φ > 0 where Ψ reaches room: the positive root for qa > 0, the
            # smaller of the two positive roots for a concave Ψ (qa < 0)
            roots = np.roots([qa, qb, -room]) if qa != 0 else np.array([room / qb])
            phi = float(min(r.real for r in np.atleast_1d(roots) if r.real > 0))
            shrunk["convex" if qa > 0 else "concave"] += 1
        Q += qa * phi**2 + qb * phi
        assert Q <= 15.0 / 32.0 * M + 1e-9
        A = [phi * c for c in A[1:]]
        S = S[1:]
    return np.array(pred), Q, shrunk


def test_forgetron_matches_reference() -> None:
    X, y = binary_stream(400)
    ref, Q, shrunk = forgetron_reference(X, y, 12)
    # Both shapes of Ψ occur on this stream, so the comparison covers both root choices.
    assert shrunk["convex"] > 0 and shrunk["concave"] > 0
    algo = make("forgetron[budget=12]")
    assert np.array_equal(algo.learn_predict_many(X, y), ref)
    assert algo.stats()["removal_damage"] == pytest.approx(Q, rel=1e-9)
    assert algo.stats()["n_support"] == 12


def test_forgetron_only_shrinks() -> None:
    """φ ∈ (0, 1] as in the paper: the coefficient scale never grows, also when Ψ is concave.

    (LIBOKL's Forgetron takes the larger root of the quadratic when Ψ is concave, a φ
    above 1 that inflates every coefficient; kbench follows the paper.)
    """
    X, y = binary_stream(400)
    _, _, shrunk = forgetron_reference(X, y, 12)
    assert shrunk["concave"] > 0
    algo = make("forgetron[budget=12]")
    scales = []
    for i in range(len(X)):
        algo.learn_one(X[i], y[i])
        scales.append(algo.stats()["scale"])
    assert np.all(np.diff(scales) <= 0.0)
    assert scales[-1] < 1.0


# -- Projectron and Projectron++ --------------------------------------------------------------


def projectron_reference(X, y, budget, eta, plus, C=1, U=None, log=None):
    """Projectron(++) with the projection computed by a fresh solve of the Gram system.

    ``U`` None: the margin-error step of the authors' DOGMA code (test ℓ − δ²/η > 0);
    otherwise the paper's β ≥ 0 test with U for the competitor's norm,
    β = τ(2ℓ − τ‖Pk‖² − 2U‖δ‖), τ = min(ℓ/‖Pk‖², 1).
    """
    S, A, pred = [], np.zeros((0, C)), []
    for x, yt in zip(X, y, strict=True):
        k = krow(S, x)
        f = k @ A if S else np.zeros(C)
        if C == 1:
            pred.append(sign(f[0]))
            margin = yt * f[0]
            mistake = margin <= 0
            u = np.array([yt])
        else:
            guess = int(np.argmax(f))
            pred.append(float(guess))
            yi = int(yt)
            mistake = guess != yi
            rv = guess if mistake else int(np.argmax(np.where(np.arange(C) == yi, -np.inf, f)))
            margin = f[yi] - f[rv]
            u = np.zeros(C)
            u[yi], u[rv] = 1.0, -1.0
        if not (mistake or (plus and margin < 1)):
            continue
        if S:
            K = rbf(np.array(S), np.array(S), GAMMA)
            d = np.linalg.solve(K, k)
            delta2 = max(1.0 - k @ d, 0.0)
        else:
            d, delta2 = np.zeros(0), 1.0
        pk2 = 1.0 - delta2
        if mistake:
            if not S or (len(S) < budget and delta2 > eta and delta2 > 1e-10):
                S.append(x)
                A = np.vstack([A, u])
            else:
                A = A + np.outer(d, u)
            continue
        mult = 1.0 if C == 1 else 2.0  # the joint feature Φ(x,y) − Φ(x,r) doubles squared norms
        loss = 1 - margin
        if U is not None:
            # the paper's quantities: ‖P k‖² and the distance ‖δ‖ of the joint feature
            pk, dist = mult * pk2, math.sqrt(mult * delta2)
            tau = min(loss / pk, 1.0) if pk > 0 else 0.0
            if pk > 0 and tau * (2 * loss - tau * pk - 2 * U * dist) >= 0:
                A = A + tau * np.outer(d, u)
                if log is not None:
                    log.append("taken")
            elif log is not None:
                log.append("refused")
            continue
        excess = loss - mult * delta2 / eta
        if pk2 > 0 and excess > 0:
            tau = min(loss / (mult * pk2), 1.0, 2 * excess / (mult * pk2))
            A = A + tau * np.outer(d, u)
    return np.array(pred), S, A


@pytest.mark.parametrize(("name", "plus"), [("projectron", False), ("projectronpp", True)])
@pytest.mark.parametrize("eta", [0.05, 0.3])
def test_projectron_matches_reference(name: str, plus: bool, eta: float) -> None:
    X, y = binary_stream(300)
    ref, S, _ = projectron_reference(X, y, 25, eta, plus)
    algo = make(f"{name}[budget=25,eta={eta}" + (",margin=eta]" if plus else "]"))
    assert np.array_equal(algo.learn_predict_many(X, y), ref)
    assert algo.stats()["n_support"] == len(S)


@pytest.mark.parametrize(("name", "plus"), [("projectron", False), ("projectronpp", True)])
def test_projectron_multiclass_matches_reference(name: str, plus: bool) -> None:
    X, y = multiclass_stream(250)
    ref, _, _ = projectron_reference(X, y, 20, 0.1, plus, C=3)
    spec = f"{name}[budget=20,eta=0.1" + (",margin=eta]" if plus else "]")
    algo = make(spec, task="multiclass", n_classes=3)
    assert np.array_equal(algo.learn_predict_many(X, y), ref)


@pytest.mark.parametrize(
    ("task", "C", "U"), [("binary", 1, 0.3), ("binary", 1, 1.0), ("multiclass", 3, 0.5)]
)
def test_projectronpp_bound_rule_matches_paper_update(task: str, C: int, U: float) -> None:
    """The β ≥ 0 margin step against a NumPy transcription of the paper's update."""
    X, y = binary_stream(300) if C == 1 else multiclass_stream(250)
    log: list[str] = []
    ref, S, A = projectron_reference(X, y, 20, 0.1, True, C=C, U=U, log=log)
    algo = make(f"projectronpp[budget=20,eta=0.1,U={U}]", task=task, n_classes=2 if C == 1 else C)
    assert np.array_equal(algo.learn_predict_many(X, y), ref)
    m = algo.stats()["n_support"]
    assert m == len(S)
    # The reference solves K d = k afresh each step; kbench keeps K⁻¹ by rank-one updates.
    # The two projections differ by rounding amplified by K's conditioning (about 1e-12
    # relative here), so the coefficients are compared to 1e-7, far above that and far
    # below any difference in the update rule (steps are of order 0.1 to 1).
    np.testing.assert_allclose(algo.model.store.alpha[:m], A, rtol=1e-7, atol=1e-9)
    # Not vacuous: on this stream the test both takes and refuses margin steps.
    assert algo.stats()["margin_updates"] == log.count("taken") > 0
    assert log.count("refused") > 0


def test_projectronpp_default_is_the_bound_rule_with_unit_norm() -> None:
    """The default margin test is β ≥ 0 with U = 1 at every budget; LIBOKL's U(B) can be set."""
    X, y = binary_stream(300)
    for B in (20, 1600):
        algo = make(f"projectronpp[budget={B}]")
        assert (algo.margin, algo.U) == ("bound", 1.0)
    ref, _, _ = projectron_reference(X, y, 20, 0.1, True, U=1.0)
    assert np.array_equal(make("projectronpp[budget=20]").learn_predict_many(X, y), ref)
    libokl_u = 0.25 * math.sqrt(21 / math.log(21))  # the Forgetron's bound at B = 20
    ref_libokl, _, _ = projectron_reference(X, y, 20, 0.1, True, U=libokl_u)
    assert not np.array_equal(ref, ref_libokl)  # the two choices differ on this stream
    algo = make(f"projectronpp[budget=20,U={libokl_u!r}]")
    assert np.array_equal(algo.learn_predict_many(X, y), ref_libokl)


def test_projectron_inverse_equals_direct_inverse() -> None:
    """The incrementally maintained K⁻¹ equals a direct inverse of the support set's Gram matrix."""
    X, y = binary_stream(400, d=6)
    algo = make("projectron[budget=40,eta=0.02]")
    algo.learn_predict_many(X, y)
    m = algo.stats()["n_support"]
    assert m > 20
    K = rbf(algo.model.store.X[:m], algo.model.store.X[:m], GAMMA)
    assert np.allclose(algo.kernel_inverse(), np.linalg.inv(K), rtol=1e-8, atol=1e-8)
    assert np.allclose(algo.kernel_inverse() @ K, np.eye(m), atol=1e-9)


def test_projectron_projects_repeated_points() -> None:
    """A repeated example lies in the span: it never becomes a second support vector."""
    X, y = binary_stream(50)
    X = np.repeat(X, 4, axis=0)
    y = np.repeat(-y, 4) * np.tile([1.0, -1.0, 1.0, -1.0], 50)
    algo = make("projectron[budget=200,eta=0.0]")
    algo.learn_predict_many(X, y)
    m = algo.stats()["n_support"]
    assert m <= 50
    assert np.all(np.isfinite(algo.kernel_inverse()))


# -- BPA-S --------------------------------------------------------------------------------------


def bpa_reference(X, y, budget, C):
    S, A, pred = [], [], []
    for x, yt in zip(X, y, strict=True):
        k = krow(S, x)
        f = float(k @ np.array(A)) if S else 0.0
        pred.append(sign(f))
        loss = 1 - yt * f
        if loss <= 0:
            continue
        tau = min(C, loss / 1.0)
        if len(S) < budget:
            S.append(x)
            A.append(tau * yt)
            continue
        a = np.array(A)
        objective = a**2 * (1.0 - k**2)  # the r-dependent part of ½‖f − f_t‖² + Cξ
        r = int(np.argmin(objective))
        S[r], A[r] = x, tau * yt + A[r] * k[r]
    return np.array(pred), np.array(A)


@pytest.mark.parametrize("C", [0.1, 1.0])
def test_bpa_s_matches_reference(C: float) -> None:
    X, y = binary_stream(300)
    ref, A = bpa_reference(X, y, 15, C)
    algo = make(f"bpa_s[budget=15,C={C}]")
    assert np.array_equal(algo.learn_predict_many(X, y), ref)
    assert np.allclose(np.sort(algo.model.store.alpha[:15, 0]), np.sort(A), rtol=1e-9)


def test_bpa_s_removal_solves_the_constrained_problem() -> None:
    """The BPA-S coefficient minimises ½‖f − f_t‖² + Cξ (checked on a grid)."""
    rng = np.random.default_rng(3)
    S = rng.standard_normal((5, 3))
    a = rng.standard_normal(5)
    x, yt, C = rng.standard_normal(3), 1.0, 0.7
    k = rbf(S, x, GAMMA)[:, 0]
    f = k @ a
    loss = 1 - yt * f
    tau = min(C, loss)
    best = []
    for r in range(5):
        beta = tau * yt + a[r] * k[r]
        grid = np.linspace(beta - 2, beta + 2, 40001)
        # ‖β k(x,·) − a_r k(x_r,·)‖² with k(x,x) = k(x_r,x_r) = 1
        obj = 0.5 * (grid**2 - 2 * grid * a[r] * k[r] + a[r] ** 2) + C * np.maximum(
            0, 1 - yt * (f - a[r] * k[r] + grid)
        )
        assert abs(grid[np.argmin(obj)] - beta) < 2e-4
        best.append(obj.min())
    assert int(np.argmin(best)) == int(np.argmin(a**2 * (1 - k**2)))


# -- Pegasos and BSGD ---------------------------------------------------------------------------


def golden_reference(a: float, b: float, k: float, tol: float = 1e-4) -> float:
    """The golden-section search of _bsgd.pyx, step for step."""
    invphi = (math.sqrt(5) - 1) / 2
    logk = math.log(max(k, 1e-300))

    def g(h):
        return a * math.exp(logk * (1 - h) * (1 - h)) + b * math.exp(logk * h * h)

    lo, hi = 0.0, 1.0
    x1, x2 = hi - 0.6180339887498949 * (hi - lo), lo + 0.6180339887498949 * (hi - lo)
    f1, f2 = g(x1), g(x2)
    assert abs(invphi - 0.6180339887498949) < 1e-15
    while hi - lo > tol:
        if f1 < f2 - 1e-12 * max(f1, f2):
            lo, x1, f1 = x1, x2, f2
            x2 = lo + 0.6180339887498949 * (hi - lo)
            f2 = g(x2)
        else:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - 0.6180339887498949 * (hi - lo)
            f1 = g(x1)
    return 0.5 * (lo + hi)


def sgd_reference(X, y, lam, budget=None, maintenance=None, project=False, C=1):
    """Pegasos / BSGD with explicit coefficients shrunk by (1 − 1/t) every step."""
    S, A, T, pred = [], np.zeros((0, C)), [], []

    def smallest(norms):
        # smallest ‖α‖², the oldest (earliest step) among ties within a relative 1e-9
        best = norms.min()
        tied = [j for j in range(len(norms)) if norms[j] <= best * (1 + 1e-9)]
        return min(tied, key=lambda j: T[j])

    for t, (x, yt) in enumerate(zip(X, y, strict=True), start=1):
        k = krow(S, x)
        f = k @ A if S else np.zeros(C)
        if C == 1:
            pred.append(sign(f[0]))
            viol = yt * f[0] < 1
            u = np.array([yt])
        else:
            pred.append(float(np.argmax(f)))
            yi = int(yt)
            rv = int(np.argmax(np.where(np.arange(C) == yi, -np.inf, f)))
            viol = f[yi] - f[rv] < 1
            u = np.zeros(C)
            u[yi], u[rv] = 1.0, -1.0
        eta = 1.0 / (lam * t)
        A = A * (1 - 1 / t)
        if viol:
            if maintenance == "projection" and S:
                K = rbf(np.array(S), np.array(S), GAMMA)
                d = np.linalg.solve(K, k)
                if 1.0 - k @ d <= 1e-10:
                    A = A + eta * np.outer(d, u)
                    viol = False
            if viol:
                S.append(x)
                T.append(t)
                A = np.vstack([A, eta * u])
        if budget is not None and len(S) > budget:
            norms = (A**2).sum(1)
            if maintenance == "removal":
                p = smallest(norms)
                del S[p], T[p]
                A = np.delete(A, p, 0)
            elif maintenance == "projection":
                K = rbf(np.array(S), np.array(S), GAMMA)
                deg = []
                for p in range(len(S)):
                    rest = [j for j in range(len(S)) if j != p]
                    dp = np.linalg.solve(K[np.ix_(rest, rest)], K[rest, p])
                    deg.append(norms[p] * (1.0 - K[rest, p] @ dp))
                p = int(np.argmin(deg))
                rest = [j for j in range(len(S)) if j != p]
                dp = np.linalg.solve(K[np.ix_(rest, rest)], K[rest, p])
                A[rest] += np.outer(dp, A[p])
                del S[p], T[p]
                A = np.delete(A, p, 0)
            else:  # merge
                p = smallest(norms)
                lab = (A[p, 0] >= 0) if C == 1 else int(np.argmax(A[p]))
                c = 0 if C == 1 else lab
                best = None
                for j in range(len(S)):
                    lj = (A[j, 0] >= 0) if C == 1 else int(np.argmax(A[j]))
                    if j == p or lj != lab:
                        continue
                    kpj = float(rbf(S[p], S[j], GAMMA)[0, 0])
                    s = 1.0 if A[p, c] + A[j, c] >= 0 else -1.0
                    h = golden_reference(s * A[p, c], s * A[j, c], kpj)
                    az = A[p] * kpj ** ((1 - h) ** 2) + A[j] * kpj ** (h * h)
                    deg = float(A[p] @ A[p] + A[j] @ A[j] + 2 * kpj * A[p] @ A[j] - az @ az)
                    if best is None or deg < best[0]:
                        best = (deg, j, h, az)
                if best is None:
                    del S[p], T[p]
                    A = np.delete(A, p, 0)
                else:
                    _, j, h, az = best
                    S[p] = h * S[p] + (1 - h) * S[j]
                    A[p] = az
                    T[p] = t  # the merged vector is new
                    del S[j], T[j]
                    A = np.delete(A, j, 0)
        if project and S:
            K = rbf(np.array(S), np.array(S), GAMMA)
            norm2 = float(np.einsum("ic,ij,jc->", A, K, A))
            if norm2 > 1 / lam:
                A = A / math.sqrt(lam * norm2)
    return np.array(pred), len(S)


@pytest.mark.parametrize("project", [False, True])
@pytest.mark.parametrize(("task", "C"), [("binary", 1), ("multiclass", 3)])
def test_pegasos_matches_reference(project: bool, task: str, C: int) -> None:
    X, y = binary_stream(200) if C == 1 else multiclass_stream(200)
    ref, m = sgd_reference(X, y, lam=0.05, project=project, C=C)
    algo = make(f"pegasos[lam=0.05,project={project}]", task=task, n_classes=max(C, 2))
    assert np.array_equal(algo.learn_predict_many(X, y), ref)
    assert algo.stats()["n_support"] == m > 64  # grew past its first allocation


@pytest.mark.parametrize("maintenance", ["removal", "projection", "merge"])
@pytest.mark.parametrize(("task", "C"), [("binary", 1), ("multiclass", 3)])
def test_bsgd_matches_reference(maintenance: str, task: str, C: int) -> None:
    X, y = binary_stream(160) if C == 1 else multiclass_stream(160)
    ref, m = sgd_reference(X, y, lam=0.02, budget=10, maintenance=maintenance, C=C)
    algo = make(
        f"bsgd[budget=10,lam=0.02,maintenance={maintenance}]", task=task, n_classes=max(C, 2)
    )
    assert np.array_equal(algo.learn_predict_many(X, y), ref)
    assert algo.stats()["n_support"] == m == 10
    assert algo.stats()["maintenance_steps"] > 20


@pytest.mark.parametrize("maintenance", ["removal", "projection", "merge"])
@pytest.mark.parametrize(("task", "C"), [("binary", 1), ("multiclass", 3)])
def test_bsgd_takes_csr_rows(maintenance: str, task: str, C: int) -> None:
    """Every maintenance takes CSR rows as they are and matches the reference (to 1e-10: the
    sparse kernel row sums its products in another order); a merge writes the merged point
    into the store as a CSR row, the union of the two rows' indices."""
    X, y = binary_stream(160) if C == 1 else multiclass_stream(160)
    X = X * (np.random.default_rng(5).random(X.shape) < 0.6)
    ref, m = sgd_reference(X, y, lam=0.02, budget=10, maintenance=maintenance, C=C)
    spec = f"bsgd[budget=10,lam=0.02,maintenance={maintenance}]"
    algo = make(spec, task=task, n_classes=max(C, 2))
    assert algo.sparse_input
    pred = algo.learn_predict_many(sp.csr_matrix(X), y)
    np.testing.assert_allclose(pred, ref, rtol=0, atol=1e-10)
    assert algo.stats()["n_support"] == m == 10
    assert algo.stats()["maintenance_steps"] > 20
    dense = make(spec, task=task, n_classes=max(C, 2))
    dense.learn_predict_many(X, y)
    # The stored rows are those of the dense rows (merged points included), in slot order.
    np.testing.assert_allclose(
        algo.model.store.to_dense(), dense.model.store.X[:m], rtol=0, atol=1e-12
    )


def test_bsgd_merges_csr_rows_into_their_union_and_reserves_pool_room(monkeypatch) -> None:
    """On wide CSR rows with few shared features, merged rows hold the union of their rows'
    features and outgrow every example; the loop stops when the pool lacks room for a merge
    and goes on after Python reserved it, with the dense rows' predictions and stored rows."""
    rng = np.random.default_rng(2)
    n, d = 400, 300
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.05)
    y = np.where(X[:, :150].sum(1) >= X[:, 150:].sum(1), 1.0, -1.0)
    spec = "bsgd[budget=15,lam=0.001]"
    dense = make(spec)
    Xs = sp.csr_matrix(X)
    runs: list[tuple[int, int]] = []  # (examples handed to the loop, examples it learned)

    def counted(kernel, rows, store, y, pred, start=0, *args, **params):
        done = bsgd_block(kernel, rows, store, y, pred, start, *args, **params)
        runs.append((rows.n - start, done[0] - start))
        return done

    monkeypatch.setattr(_pegasos_family, "bsgd_block", counted)
    csr = make(spec)  # made after: a learner takes its loop when it is made
    parts = [csr.learn_predict_many(Xs[a : a + 100], y[a : a + 100]) for a in range(0, n, 100)]
    pred = np.concatenate(parts)
    np.testing.assert_allclose(pred, dense.learn_predict_many(X, y), rtol=0, atol=1e-10)
    store = csr.model.store
    m = store.size
    np.testing.assert_allclose(store.to_dense(), dense.model.store.X[:m], rtol=0, atol=1e-12)
    lengths = store.ends[:m] - store.starts[:m]
    assert lengths.max() > 2 * np.diff(Xs.indptr).max()  # merged rows of merged rows
    assert store.spare == 0  # reserved for the loop only
    assert any(0 < done < given for given, done in runs)  # it stopped for room, and went on
    np.testing.assert_allclose(store.sq[:m], (store.to_dense() ** 2).sum(1), rtol=1e-13)
    np.testing.assert_allclose(csr.decision_many(Xs), dense.decision_many(X), rtol=0, atol=1e-10)
    # One row at a time (one compiled call per row) makes the same steps.
    rows = make(spec)
    per_row = [rows.learn_predict_many(Xs[i], y[i : i + 1])[0] for i in range(n)]
    np.testing.assert_array_equal(per_row, pred)
    np.testing.assert_array_equal(rows.model.store.to_dense(), store.to_dense())


def test_bsgd_large_budget_is_pegasos() -> None:
    X, y = binary_stream(200)
    for maintenance in ("removal", "projection", "merge"):
        p = make(f"bsgd[budget=1000,lam=0.05,maintenance={maintenance}]").learn_predict_many(X, y)
        q = make("pegasos[lam=0.05,project=false]").learn_predict_many(X, y)
        assert np.array_equal(p, q), maintenance


def test_bsgd_projection_inverse_stays_exact() -> None:
    """After many projections the maintained K⁻¹ still inverts the support set's Gram matrix."""
    X, y = binary_stream(500, d=5)
    algo = make("bsgd[budget=20,lam=0.01,maintenance=projection]")
    algo.learn_predict_many(X, y)
    m = algo.stats()["n_support"]
    K = rbf(algo.model.store.X[:m], algo.model.store.X[:m], GAMMA)
    assert algo.stats()["maintenance_steps"] > 100
    assert np.allclose(algo._state.Kinv[:m, :m] @ K, np.eye(m), atol=1e-8)


def test_merge_of_two_points_is_the_analytic_merge() -> None:
    """Two violations of equal weight merge into their midpoint with α_z = 2α·k^{1/4} (RBF)."""
    lam = 10.0
    X = np.array([[0.0, 0.0], [0.6, 0.2]])
    y = np.array([1.0, 1.0])
    algo = make(f"bsgd[budget=1,lam={lam},maintenance=merge]")
    algo.learn_predict_many(X, y)
    k12 = math.exp(-GAMMA * 0.4)
    assert algo.stats()["n_support"] == 1
    assert np.allclose(algo.model.store.X[0], X.mean(0), atol=1e-4)
    # Both coefficients are 1/(2λ) after the second step; the merged one is 2·(1/(2λ))·k^{1/4}.
    alpha_z = algo.model.scale * algo.model.store.alpha[0, 0]
    assert alpha_z == pytest.approx(2 * (1 / (2 * lam)) * k12**0.25, rel=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_golden_section_merge_against_brute_force(seed: int) -> None:
    """The golden-section merge is as good as the best of a fine grid over h."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        a, b = rng.uniform(0.01, 2.0, 2) * rng.choice([-1, 1])
        k = rng.uniform(0.55, 0.999)  # unimodal range: k ≥ e^{-1/2} keeps g concave enough
        h, az = _bsgd.merge_point(a, b, k)
        grid = np.linspace(0, 1, 200001)
        g = a * k ** ((1 - grid) ** 2) + b * k ** (grid**2)
        best = int(np.argmax(np.abs(g)))
        assert abs(h - grid[best]) < 2e-4
        assert abs(az) >= np.abs(g).max() - 1e-9
        assert az == pytest.approx(a * k ** ((1 - h) ** 2) + b * k ** (h * h), rel=1e-12)
        assert h == pytest.approx(golden_reference(abs(a), abs(b), k), abs=1e-15)


def test_merge_rejects_kernels_without_closed_form() -> None:
    with pytest.raises(ValueError, match="kernels that support merging: rbf"):
        make("bsgd[maintenance=merge]", kernel="linear")
    with pytest.raises(ValueError, match="kernels that support merging: rbf"):
        make("bsgd[maintenance=merge]", kernel="laplacian")
    make("bsgd[maintenance=projection]", kernel="laplacian")  # other strategies are fine


# -- BOGD ---------------------------------------------------------------------------------------


def bogd_reference(X, y, budget, eta, lam, weighted, seed):
    rng = SplitMix64(seed)
    S, A, pred = [], [], []
    for x, yt in zip(X, y, strict=True):
        f = float(krow(S, x) @ np.array(A)) if S else 0.0
        pred.append(sign(f))
        g = -yt if yt * f < 1 else 0.0
        A = [(1 - eta * lam) * a for a in A]
        if g == 0.0:
            continue
        if len(S) < budget:
            S.append(x)
            A.append(-eta * g)
            continue
        a = np.array(A)
        total = np.abs(a).sum()
        if not weighted:
            r = rng.below(budget)
            keep = np.full(budget, budget / (budget - 1))
        else:
            p = (1 - np.abs(a) / total) / (budget - 1)
            u = rng.uniform()
            r = int(np.searchsorted(np.cumsum(p), u, side="right"))
            r = min(r, budget - 1)
            keep = 1 / (1 - p)
        A = list(a * keep)
        S[r], A[r] = x, -eta * g
    return np.array(pred)


@pytest.mark.parametrize("sampling", ["uniform", "weighted"])
def test_bogd_matches_reference(sampling: str) -> None:
    X, y = binary_stream(300)
    ref = bogd_reference(X, y, 12, 0.3, 0.05, sampling == "weighted", seed=5)
    algo = make(f"bogd[budget=12,eta=0.3,lam=0.05,sampling={sampling}]", seed=5)
    assert np.array_equal(algo.learn_predict_many(X, y), ref)
    assert algo.stats()["n_support"] == 12


def test_bogd_removal_is_unbiased() -> None:
    """Averaged over draws, the rescaled expansion after a removal equals the one before."""
    rng = np.random.default_rng(0)
    a = rng.uniform(0.1, 1.0, 6) * rng.choice([-1, 1], 6)
    for weighted in (False, True):
        p = (1 - np.abs(a) / np.abs(a).sum()) / 5 if weighted else np.full(6, 1 / 6)
        assert p.sum() == pytest.approx(1.0)
        expected = sum(p[r] * np.where(np.arange(6) == r, 0.0, a / (1 - p)) for r in range(6))
        assert np.allclose(expected, a)


def test_bogd_default_lambda_offsets_the_rescaling() -> None:
    """λ defaults to 1/(ηB): (1 − ηλ)·B/(B − 1) = 1 + O(1/B²) at every budget."""
    for B, eta in ((2, 0.5), (100, 0.5), (1600, 0.5), (300, 0.1)):
        algo = make(f"bogd[budget={B},eta={eta}]")
        assert algo.regulariser() == pytest.approx(1 / (eta * B))
        assert abs((1 - eta * algo.regulariser()) * B / (B - 1) - 1) <= 1.0 / (B - 1) ** 2
    assert make("bogd[budget=100,lam=0.3]").regulariser() == 0.3


def test_bogd_learns_both_classes_where_one_class_is_clearly_worse() -> None:
    """BOGD is no constant predictor: on a synthetic stream it beats the majority rule clearly."""
    X, y = binary_stream(3000, d=2, seed=4)
    Xt, yt = binary_stream(2000, d=2, seed=5)
    majority = max((yt > 0).mean(), (yt < 0).mean())
    for spec in ("bogd[budget=100]", "bogd[budget=100,sampling=weighted]"):
        algo = make(spec)
        algo.learn_predict_many(X, y)
        pred = algo.predict_many(Xt)
        assert 0.1 < (pred > 0).mean() < 0.9
        assert (pred == yt).mean() > majority + 0.1


@pytest.mark.slow
def test_bogd_default_lambda_is_not_one_class_on_a9a_at_a_large_budget() -> None:
    """a9a, γ = 0.01, B = 1600, one pass: λ = 1/(ηB) learns; the old fixed λ = 0.02 does not.

    With λ = 0.02 the shrinking (1 − ηλ) = 0.99 per step leaves about 100 steps of memory
    whatever the budget, and the final model predicts one class (the majority rate,
    76.4 %). λ = 1/(ηB) keeps the whole budget in play: 81.6 % held out, measured (a
    trajectory driven by a seeded generator; the bound below leaves three points for
    arithmetic that differs between BLAS builds).
    """
    from kbench.data.streams import StreamSpec, get_stream

    stream = get_stream(StreamSpec("a9a", order="file"), get_registry())
    X, y = np.ascontiguousarray(stream.X), np.ascontiguousarray(stream.y)
    Xt, yt = stream.X_test, stream.y_test
    accuracy, positive = {}, {}
    for spec in ("bogd[budget=1600]", "bogd[budget=1600,lam=0.02]"):
        algo = make(spec, kernel="rbf[gamma=0.01]")
        algo.learn_predict_many(X, y)
        pred = algo.predict_many(Xt)
        accuracy[spec], positive[spec] = (pred == yt).mean(), (pred > 0).mean()
    assert accuracy["bogd[budget=1600]"] > 0.785  # majority rate 0.7638 plus two points
    assert 0.05 < positive["bogd[budget=1600]"] < 0.5
    assert positive["bogd[budget=1600,lam=0.02]"] < 0.01


# -- FOGD and NOGD ------------------------------------------------------------------------------


def kernel_ogd_reference(X, y, eta, budget=None, C=1, gamma=GAMMA):
    """Kernel OGD on the hinge loss: add −η·g k(x, ·) on every non-zero gradient."""
    S, A, pred = [], np.zeros((0, C)), []
    for x, yt in zip(X, y, strict=True):
        f = krow(S, x, gamma) @ A if S else np.zeros(C)
        if C == 1:
            pred.append(sign(f[0]))
            g = np.array([-yt]) if yt * f[0] < 1 else None
        else:
            pred.append(float(np.argmax(f)))
            yi = int(yt)
            rv = int(np.argmax(np.where(np.arange(C) == yi, -np.inf, f)))
            g = None
            if 1 + f[rv] - f[yi] > 0:
                g = np.zeros(C)
                g[rv], g[yi] = 1.0, -1.0
        if g is not None and (budget is None or len(S) < budget):
            S.append(x)
            A = np.vstack([A, -eta * g])
    return np.array(pred), S, A


@pytest.mark.parametrize(("task", "C"), [("binary", 1), ("multiclass", 3)])
def test_nogd_without_switch_is_kernel_ogd(task: str, C: int) -> None:
    """With B above the number of updates NOGD is exact kernel OGD."""
    X, y = binary_stream(200) if C == 1 else multiclass_stream(200)
    ref, S, _ = kernel_ogd_reference(X, y, 0.3, C=C)
    algo = make("nogd[budget=1000,eta=0.3]", task=task, n_classes=max(C, 2))
    assert np.array_equal(algo.learn_predict_many(X, y), ref)
    assert algo.stats()["n_support"] == len(S) and algo.stats()["nystrom_rank"] == 0


@pytest.mark.parametrize(("extra", "k"), [(",rank_fraction=1.0", 20), ("", 4), (",rank=7", 7)])
def test_nogd_matches_reference_after_the_switch(extra: str, k: int) -> None:
    """After the switch NOGD is linear OGD on the rank-k Nyström features (k = ⌈0.2·B⌉ by
    default, every direction with rank_fraction=1)."""
    X, y = binary_stream(400)
    eta, B = 0.3, 20
    pred, _, _ = kernel_ogd_reference(X, y, eta, budget=B)
    # The reference switches at the update that fills B landmarks.
    first, count = 0, 0
    Sl, Al = [], []
    for i, (x, yt) in enumerate(zip(X, y, strict=True)):
        f = float(krow(Sl, x) @ np.array(Al)) if Sl else 0.0
        if yt * f < 1:
            Sl.append(x)
            Al.append(eta * yt)
            count += 1
            if count == B:
                first = i + 1
                break
    L = np.array(Sl)
    lam, V = np.linalg.eigh(rbf(L, L, GAMMA))
    lam, V = lam[::-1][:k], V[:, ::-1][:, :k]  # the k largest eigenvalues
    Mmap = V.T / np.sqrt(lam)[:, None]
    w = (V.T * np.sqrt(lam)[:, None]) @ np.array(Al)
    ref = list(pred[:first])
    for x, yt in zip(X[first:], y[first:], strict=True):
        z = Mmap @ rbf(L, x, GAMMA)[:, 0]
        f = float(w @ z)
        ref.append(sign(f))
        if yt * f < 1:
            w = w + eta * yt * z
    algo = make(f"nogd[budget={B},eta={eta}{extra}]")
    assert np.array_equal(algo.learn_predict_many(X, y), np.array(ref))
    assert algo.stats()["nystrom_rank"] == k
    assert algo._state.M.shape == (k, B)  # O(B·k) features per example
    if k == B:
        # Before and after the switch f is the same function (full rank).
        probe = np.random.default_rng(1).standard_normal((5, 4))
        assert np.allclose(
            rbf(probe, L, GAMMA) @ np.array(Al),
            rbf(probe, L, GAMMA) @ Mmap.T @ ((V.T * np.sqrt(lam)[:, None]) @ np.array(Al)),
        )


def test_nogd_rank_deficient_landmarks_warn_and_work() -> None:
    """Repeated landmarks make K singular: NOGD drops null directions, says so, learns on."""
    X, y = binary_stream(60)
    X = np.repeat(X, 3, axis=0)
    y = np.repeat(y, 3)
    algo = make("nogd[budget=30,eta=0.3,rank_fraction=1.0]")
    with pytest.warns(RuntimeWarning, match="rank-deficient"):
        pred = algo.learn_predict_many(X, y)
    r = algo.stats()["nystrom_rank"]
    assert 0 < r < 30
    assert np.all(np.isfinite(algo._state.W)) and np.all(np.isfinite(pred))


def test_fogd_features_approach_the_kernel() -> None:
    """z(x)ᵀz(x') → k(x, x') for RBF and Laplacian as D grows."""
    rng = np.random.default_rng(0)
    P = rng.standard_normal((6, 3)) * 0.7
    for kernel, exact in (
        ("rbf[gamma=0.5]", rbf(P, P, 0.5)),
        ("laplacian[gamma=0.4]", np.exp(-0.4 * np.abs(P[:, None] - P[None]).sum(-1))),
    ):
        errs = []
        for D in (50, 20000):
            algo = make(f"fogd[D={D}]", kernel=kernel, seed=1)
            Z = np.array([algo.features(p) for p in P])
            errs.append(np.abs(Z @ Z.T - exact).max())
        assert errs[1] < 0.03 < errs[0] or errs[1] < errs[0] / 5
        assert errs[1] < 0.03


def test_fogd_with_many_features_approaches_kernel_ogd() -> None:
    """FOGD with large D predicts like exact kernel OGD with the same step on the same stream."""
    X, y = binary_stream(300)
    ref, _, _ = kernel_ogd_reference(X, y, 0.2)
    agree = []
    for D in (10, 8000):
        p = make(f"fogd[D={D},eta=0.2]").learn_predict_many(X, y)
        agree.append(np.mean(p == ref))
    assert agree[1] > 0.95 and agree[1] > agree[0]


def test_fogd_matches_numpy_reference() -> None:
    """The compiled loop is OGD on [cos, sin]/√D features with the seeded frequencies."""
    X, y = multiclass_stream(200)
    algo = make("fogd[D=64,eta=0.1]", task="multiclass", n_classes=3, seed=4)
    algo._setup(4)
    Omega = algo._Omega.copy()
    W = np.zeros((128, 3))
    ref = []
    for x, yt in zip(X, y, strict=True):
        u = x @ Omega
        z = np.concatenate([np.cos(u), np.sin(u)]) / 8.0
        f = z @ W
        ref.append(float(np.argmax(f)))
        yi = int(yt)
        rv = int(np.argmax(np.where(np.arange(3) == yi, -np.inf, f)))
        if 1 + f[rv] - f[yi] > 0:
            W[:, yi] += 0.1 * z
            W[:, rv] -= 0.1 * z
    assert np.array_equal(algo.learn_predict_many(X, y), np.array(ref))
    assert np.allclose(algo._W, W, atol=1e-12)


def test_fogd_sparse_and_dense_features_agree() -> None:
    """Sparse rows (few non-zeros) take another code path with the same features."""
    rng = np.random.default_rng(2)
    algo = make("fogd[D=50]", seed=0)
    x = np.zeros(40)
    x[[3, 17, 30]] = rng.standard_normal(3)
    algo._setup(40)
    u = x @ algo._Omega
    assert np.allclose(
        algo.features(x), np.concatenate([np.cos(u), np.sin(u)]) / math.sqrt(50), atol=1e-14
    )
    x2 = rng.standard_normal(40)
    u2 = x2 @ algo._Omega
    assert np.allclose(
        algo.features(x2), np.concatenate([np.cos(u2), np.sin(u2)]) / math.sqrt(50), atol=1e-13
    )


def test_fogd_needs_a_spectral_kernel() -> None:
    with pytest.raises(ValueError, match="supported kernels: rbf, laplacian"):
        make("fogd", kernel="linear")


# -- properties shared by every budgeted learner --------------------------------------------------

#: The budgeted learners.
BUDGETED_NAMES = ["rbp", "forgetron", "projectron", "projectronpp", "bpa_s", "bsgd", "bogd", "nogd"]
#: Settings of them that more than one test below runs (at its own budget); the Projectrons
#: set their projection threshold in each test.
SETTINGS = [
    "rbp",
    "forgetron",
    "bpa_s",
    "bsgd[maintenance=removal]",
    "bsgd[maintenance=projection]",
    "bogd",
    "nogd",
]


def at_budget(budget: int, *settings: str) -> list[str]:
    """Each ``name`` or ``name[options]`` with ``budget=B`` put first among its options."""
    specs = []
    for setting in settings:
        name, _, options = setting.partition("[")
        options = f",{options.removesuffix(']')}" if options else ""
        specs.append(f"{name}[budget={budget}{options}]")
    return specs


BUDGETED = at_budget(
    7,
    *SETTINGS,
    "projectron[eta=0.0]",
    "projectronpp[eta=0.01]",
    "bsgd[maintenance=merge]",
    "bogd[sampling=weighted]",
)


@pytest.mark.parametrize("spec", BUDGETED)
def test_budget_never_exceeded(spec: str) -> None:
    """After every example the model holds at most B support vectors, and it fills the budget."""
    X, y = binary_stream(150)
    algo = make(spec)
    sizes = []
    for i in range(len(X)):
        algo.predict_one(X[i])
        algo.learn_one(X[i], y[i])
        sizes.append(algo.stats()["n_support"])
    assert max(sizes) == 7


@pytest.mark.parametrize("name", BUDGETED_NAMES)
def test_budget_below_minimum_is_rejected(name: str) -> None:
    low = 1 if name == "bogd" else 0
    with pytest.raises(ValueError, match=f"{name}: budget must be in"):
        make(f"{name}[budget={low}]")


def test_other_bad_parameters_are_rejected() -> None:
    assert_refused(
        make,
        {
            "fogd[D=0]": "fogd: D must be in",
            "fogd[eta=0.0]": "fogd: eta must be in",
            "projectron[eta=-0.1]": "projectron: eta must be in",
            "projectronpp[U=-1.0]": "projectronpp: U must be in",
            "bpa_s[C=0.0]": "bpa_s: C must be in",
            "bsgd[lam=0.0]": "bsgd: lam must be in",
            "pegasos[lam=-1.0]": "pegasos: lam must be in",
            "bogd[eta=2.0,lam=0.6]": "bogd: eta·lam must be < 1",
            "nogd[budget=5,rank=6]": r"nogd: rank must be at most budget \(5\)",
            "nogd[budget=5,rank=0]": "nogd: rank must be in",
            "nogd[rank_fraction=0.0]": "nogd: rank_fraction must be in",
            "nogd[rank_fraction=1.5]": "nogd: rank_fraction must be in",
        },
    )


class PyHinge(Loss):
    """The hinge loss without a compiled form."""

    name = "py_hinge"

    def __init__(self) -> None:
        pass

    lipschitz = 1.0

    def value(self, f, y):
        return max(0.0, 1 - y * f)

    def derivative(self, f, y):
        return -y if y * f < 1 else 0.0


PYTHON_PATH = [
    *at_budget(9, *SETTINGS, "projectron[eta=0.05]", "projectronpp[eta=0.05]"),
    "pegasos",
]


@pytest.mark.parametrize("spec", PYTHON_PATH)
def test_third_party_kernel_path_equals_compiled_path(spec: str) -> None:
    """A NumPy kernel runs through the per-example path and learns the same model."""
    X, y = binary_stream(200)
    p = make(spec, kernel=NumpyRBF(gamma=GAMMA)).learn_predict_many(X, y)
    q = make(spec).learn_predict_many(X, y)
    assert np.array_equal(p, q)


@pytest.mark.parametrize("spec", ["bogd[budget=9]", "nogd[budget=9]", "fogd[D=20]"])
def test_python_loss_path_equals_compiled_loss(spec: str) -> None:
    """A loss without a compiled form gives the same predictions as the compiled hinge."""
    X, y = binary_stream(200)
    p = make(spec, loss=PyHinge()).learn_predict_many(X, y)
    q = make(spec, loss="hinge").learn_predict_many(X, y)
    assert np.array_equal(p, q)


def test_nogd_regression_is_kernel_ogd_on_the_squared_loss() -> None:
    """Regression: before the switch NOGD is kernel OGD, f ← f − η (f(x) − y) k(x, ·)."""
    X, _ = binary_stream(150)
    y = np.sin(X[:, 0]) + 0.1 * X[:, 1]
    algo = make("nogd[budget=1000,eta=0.2]", task="regression", loss="squared")
    pred = algo.learn_predict_many(X, y)
    S, A, ref = [], [], []
    for x, yt in zip(X, y, strict=True):
        f = float(krow(S, x) @ np.array(A)) if S else 0.0
        ref.append(f)
        if f != yt:
            S.append(x)
            A.append(-0.2 * (f - yt))
    assert np.allclose(pred, ref, rtol=1e-10, atol=1e-12)


class PySoftmax(Loss):
    """kbench's softmax loss seen as a third-party loss (no compiled form)."""

    name = "py_softmax"
    tasks = frozenset({"multiclass"})
    lipschitz = math.sqrt(2.0)

    def __init__(self) -> None:
        self._inner = get_registry().create("loss", "softmax")

    def value(self, f, y):
        return self._inner.value(f, y)

    def derivative(self, f, y):
        return self._inner.derivative(f, y)


@pytest.mark.parametrize("spec", ["fogd[D=30]", "nogd[budget=12]"])
def test_multiclass_softmax_compiled_equals_python(spec: str) -> None:
    """The compiled softmax gradient and the Python loss's give the same learner."""
    X, y = multiclass_stream(200)
    a = make(spec, task="multiclass", n_classes=3, loss="softmax")
    b = make(spec, task="multiclass", n_classes=3, loss=PySoftmax())
    assert np.array_equal(a.learn_predict_many(X, y), b.learn_predict_many(X, y))
    Wa, Wb = (algo._state.W if algo.name == "nogd" else algo._W for algo in (a, b))
    assert np.allclose(Wa, Wb, rtol=1e-10, atol=1e-12)


def test_budgeted_study_file_is_valid() -> None:
    """The shipped study names valid learners at B = 50–500, on four or more data sets, 5 seeds."""
    import re
    from pathlib import Path

    import kbench
    from kbench.execution.study import load_study

    experiments = load_study(Path(kbench.__file__).parent / "studies" / "budgeted.toml")
    assert len({ds for e in experiments for ds in e.datasets}) >= 4
    budgets = set()
    for e in experiments:
        assert e.seeds == [0, 1, 2, 3, 4]
        task = "multiclass" if e.losses == ["multiclass_hinge"] else "binary"
        for spec in e.algorithms:
            budgets.add(int(re.search(r"(?:budget|D)=(\d+)", spec).group(1)))
            make(spec, task=task, n_classes=10 if task == "multiclass" else 2, kernel=e.kernels[0])
    assert budgets == {50, 100, 200, 500}


@pytest.mark.parametrize("spec", ["projectron[budget=8]", "projectronpp[budget=8]"])
@pytest.mark.parametrize("C", [1, 3])
def test_projectrons_skip_a_row_with_no_direction(spec: str, C: int) -> None:
    """With the linear kernel a zero row has k(x, x) = 0: the Projectrons learn nothing from
    it (it used to enter K⁻¹ with 1/δ² = inf, and every later prediction was NaN)."""
    X, y = binary_stream(150) if C == 1 else multiclass_stream(150)
    X0 = np.vstack([np.zeros((1, X.shape[1])), X])
    y0 = np.concatenate([[y[0]], y])
    task, n_classes = ("binary", 2) if C == 1 else ("multiclass", C)
    with_zero = make(spec, task=task, n_classes=n_classes, kernel="linear")
    without = make(spec, task=task, n_classes=n_classes, kernel="linear")
    pred = with_zero.learn_predict_many(X0, y0)
    assert np.isfinite(pred).all()
    np.testing.assert_array_equal(pred[1:], without.learn_predict_many(X, y))
    assert with_zero.stats()["n_support"] == without.stats()["n_support"] > 1


@pytest.mark.parametrize(
    "spec",
    [
        "rbp[budget=9]",
        "forgetron[budget=9]",
        "projectron[budget=9,eta=0.05]",
        "projectronpp[budget=9]",
        "bpa_s[budget=9]",
        "bogd[budget=9,sampling=weighted]",
    ],
)
@pytest.mark.parametrize("sparse", [False, True])
def test_a_pickled_budget_learner_goes_on_as_the_original(spec: str, sparse: bool) -> None:
    """The toolkit's budget learners pickle halfway (store, typed loop state, generator) and
    then learn and predict exactly as the original."""
    X, y = binary_stream(300)
    Xin = sp.csr_matrix(X) if sparse else X
    algo = make(spec, loss="hinge" if spec.startswith("bogd") else None)
    algo.learn_predict_many(Xin[:150], y[:150])
    copy = pickle.loads(pickle.dumps(algo))
    np.testing.assert_array_equal(
        algo.learn_predict_many(Xin[150:], y[150:]), copy.learn_predict_many(Xin[150:], y[150:])
    )
    np.testing.assert_array_equal(algo.decision_many(Xin[:50]), copy.decision_many(Xin[:50]))
    assert algo.stats() == copy.stats()
