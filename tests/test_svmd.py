"""SVMD against a plain NumPy transcription of the spec, and the spec's claims C1–C6, C9.

The reference keeps Python lists of stored rows and coefficients and evaluates every
kernel sum explicitly; the claims recompute ⟨f, v⟩, ‖f‖² and ⟨g, v⟩ from the full Gram
matrix of the learner's own expansion at every step, check the closed-form trace value,
the linear-kernel equivalence with primal SMD, the single-step (λ = 0) closed form, the
reduction to NORMA at μ = 0, the step-size guarantees, the exact eviction correction
and the ν-property.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import (
    NumpyRBF,
    create,
    make_loss,
    margin_violation,
    online_kernel_refusals,
    python_loss,
    range_refusals,
    rbf_of,
    spec_options,
    task_data,
    task_label,
)
from helpers import rbf as rbf_matrix
from kbench.core.components import Kernel
from kbench.core.registry import get_registry
from kbench.cython_core import _svmd
from kbench.data.streams import StreamSpec, build_stream
from kbench.execution.prequential import run_task
from kbench.execution.tasks import Task

GAMMA = 0.4


rbf = rbf_of(GAMMA)


def make(
    spec: str,
    loss: str,
    task: str = "binary",
    n_classes: int = 2,
    kernel: str | Kernel | None = None,
):
    kernel = kernel or f"rbf[gamma={GAMMA}]"
    return create(spec, kernel=kernel, loss=loss, task=task, n_classes=n_classes)


def data(task: str, n: int = 200, d: int = 3, seed: int = 0):
    return task_data(task, n, d, seed)


# ------------------------------------------------------------------------------------------
# The plain reference
# ------------------------------------------------------------------------------------------


def svmd_reference(
    X,
    y,
    *,
    loss,
    task,
    n_classes=2,
    eta=0.1,
    mu=0.1,
    lam=0.99,
    c=0.01,
    budget=10**9,
    offset=False,
    nu=0.0,
    margin0=1.0,
    eta_eps=1.0,
    lagged_eps=False,
    incremental="paper",
    kernel=rbf,
):
    """SVMD written straight from the spec's pseudocode (§1.3–1.8): lists for the buffer,
    explicit kernel sums for F, V and the eviction correction, the loss plugin's
    derivatives (or the ν-losses of §1.6 / §1.9)."""
    C = n_classes if task == "multiclass" else 1
    xs, A, B = [], [], []
    pi = N = 0.0
    b, eta_b, v_b = np.zeros(C), np.full(C, eta), np.zeros(C)
    eps, eta_e, v_e = margin0, eta_eps, 0.0
    rec = {"pred": [], "eta": [], "pi": [], "N": [], "eps": [], "eta_b": [], "eta_eps": []}
    for x, yt in zip(X, y, strict=True):
        k = np.array([kernel(s, x) for s in xs])
        F = sum((a * kk for a, kk in zip(A, k, strict=True)), np.zeros(C))
        V = sum((bb * kk for bb, kk in zip(B, k, strict=True)), np.zeros(C))
        Fb = F + b
        rec["pred"].append(task_label(task, Fb, eps if nu > 0 else getattr(loss, "rho", 0.0)))
        # ξ, Λ and the violation indicator s.
        Lam = np.zeros((C, C))
        s = 0
        if nu == 0:
            if C == 1:
                xi = np.array([float(loss.derivative(Fb[0], yt))])
                if loss.has_second_derivative:
                    Lam[0, 0] = float(loss.second_derivative(Fb[0], yt))
            else:
                xi = np.asarray(loss.derivative(Fb, yt), dtype=float)
                if loss.has_second_derivative:
                    Lam = np.asarray(loss.second_derivative(Fb, yt))
        else:
            xi, s = margin_violation(task, Fb, yt, eps, C)
        chi = Lam @ V
        kxx = kernel(x, x)
        # SMD on η (eqs. 48, 36), then the incrementals (eqs. 49–52 with §1.4's terms).
        gv = c * pi + xi @ V
        eta = eta * max(0.5, 1 - mu * gv)
        a = 1 - eta * c
        fg = c * N + xi @ F
        fv1 = a * lam * pi - eta * fg - eta * lam * (chi @ F)
        V1 = a * lam * V - eta * (c * F + kxx * xi) - eta * lam * kxx * chi
        pi = a * fv1 - eta * (xi @ V1)
        N = max(0.0, a * a * N - 2 * eta * a * (xi @ F) + eta**2 * kxx * (xi @ xi))
        B = [a * lam * bb - eta * c * aa for aa, bb in zip(A, B, strict=True)]
        A = [a * aa for aa in A]
        if np.any(xi != 0) or (lam != 0 and np.any(chi != 0)):
            xs.append(x)
            A.append(-eta * xi)
            B.append(-eta * (xi + lam * chi))
            if len(xs) > budget:
                if incremental == "exact":
                    xj, aj, bj = xs[0], A[0], B[0]
                    fj = sum(aa * kernel(s_, xj) for s_, aa in zip(xs, A, strict=True))
                    vj = sum(bb * kernel(s_, xj) for s_, bb in zip(xs, B, strict=True))
                    kjj = kernel(xj, xj)
                    N = N - 2 * aj @ fj + kjj * aj @ aj
                    pi = pi - aj @ vj - bj @ fj + kjj * aj @ bj
                xs, A, B = xs[1:], A[1:], B[1:]
        if offset:  # eqs. 53–55
            eta_b = eta_b * np.maximum(0.5, 1 - mu * xi * v_b)
            v_b = lam * v_b - eta_b * xi
            b = b - eta_b * xi
        if nu > 0:  # eqs. 57–61, g_ε = ε(s − ν) (tubes: ε(ν − s))
            g = eps * ((s - nu) if task != "regression" else (nu - s))
            new = eta_e * max(0.5, 1 - mu * g * v_e)
            used = eta_e if lagged_eps else new
            eta_e = new
            v_e = lam * v_e - used * g * (1 + lam * v_e)
            eps = eps * np.exp(np.clip(-used * g, -50, 50))
        rec["eta"].append(eta)
        rec["pi"].append(pi)
        rec["N"].append(N)
        rec["eps"].append(eps)
        rec["eta_b"].append(eta_b.copy())
        rec["eta_eps"].append(eta_e)
    return {key: np.array(v) for key, v in rec.items()} | {"xs": xs, "A": A, "B": B, "b": b}


def run_steps(algo, X, y, *, compiled: bool = True):
    """Predictions and a snapshot after every step, through the compiled loop (blocks of
    one example) or the per-example path."""
    preds, snaps = [], []
    for i in range(len(X)):
        if compiled:
            preds.append(float(algo.learn_predict_many(X[i : i + 1], y[i : i + 1])[0]))
        else:
            x = X[i]  # one object, so that learn_one reuses predict_one's kernel row
            preds.append(algo.predict_one(x))
            algo.learn_one(x, y[i])
        snaps.append(algo.snapshot())
    return np.array(preds), snaps


CASES = [
    ("svmd[eta=0.3,mu=0.2,lam=0.9,c=0.05]", "hinge", "binary"),
    ("svmd[eta=0.3,mu=0.2,lam=1.0,c=0.05,offset=true]", "logistic", "binary"),
    ("svmd[eta=0.2,mu=0.1,lam=0.9,c=0.05]", "squared", "regression"),
    (
        "svmd[eta=0.2,mu=0.1,lam=0.95,c=0.1,budget=15,offset=true]",
        "huber[delta=0.5]",
        "regression",
    ),
    (
        "svmd[eta=0.3,mu=0.3,lam=0.95,c=0.05,budget=20,incremental=exact]",
        "multiclass_hinge",
        "multiclass",
    ),
    ("svmd[eta=0.3,mu=0.3,lam=0.9,c=0.05,offset=true]", "softmax", "multiclass"),
    ("svmd[eta=1.0,mu=1.0,lam=0.95,c=1.0,nu=0.1,budget=30]", "hinge", "binary"),
    (
        "svmd[eta=1.0,mu=0.5,lam=0.95,c=1.0,nu=0.1,lagged_eps=true]",
        "multiclass_hinge",
        "multiclass",
    ),
    (
        "svmd[eta=1.0,mu=1.0,lam=1.0,c=1.0,nu=0.05,budget=40,incremental=exact]",
        "novelty_hinge",
        "novelty",
    ),
    (
        "svmd[eta=0.5,mu=0.5,lam=0.9,c=0.1,nu=0.3,margin0=0.5,offset=true]",
        "eps_insensitive",
        "regression",
    ),
    ("svmd[eta=0.3,mu=0.2,lam=0.0,c=0.05,budget=25]", "smooth_hinge", "binary"),
]


@pytest.mark.parametrize(
    ("spec", "loss", "task"),
    CASES,
    ids=[f"{c[2]}-{c[1]}-{i}" for i, c in enumerate(CASES)],
)
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_matches_numpy_reference(spec, loss, task, compiled) -> None:
    """Both paths reproduce the plain transcription: predictions, η, π, N, ε, η_b, η_ε and
    the final expansion, through buffer evictions."""
    X, y = data(task, n=160)
    algo = make(spec, loss, task, n_classes=3)
    preds, snaps = run_steps(algo, X, y, compiled=compiled)
    ref = svmd_reference(X, y, loss=make_loss(loss), task=task, n_classes=3, **spec_options(spec))
    if task == "regression":
        assert np.allclose(preds, ref["pred"], rtol=1e-9, atol=1e-10)
    else:
        assert np.array_equal(preds, ref["pred"])
    for key, name in (
        ("eta", "eta"),
        ("pi", "pi"),
        ("N", "norm_sq"),
        ("eps", "eps"),
        ("eta_eps", "eta_eps"),
    ):
        got = np.array([s[name] for s in snaps])
        assert np.allclose(got, ref[key], rtol=1e-9, atol=1e-11), key
    assert np.allclose([s["eta_b"] for s in snaps], ref["eta_b"], rtol=1e-9)
    last = snaps[-1]
    assert len(last["alpha"]) == len(ref["A"])
    # Slots are in circular order; compare the expansions as functions on probe points.
    probes = np.random.default_rng(5).standard_normal((7, X.shape[1]))
    for z in probes:
        f_alg = sum(a * rbf(s, z) for s, a in zip(last["X"], last["alpha"], strict=True))
        v_alg = sum(b * rbf(s, z) for s, b in zip(last["X"], last["beta"], strict=True))
        f_ref = sum(a * rbf(s, z) for s, a in zip(ref["xs"], ref["A"], strict=True))
        v_ref = sum(b * rbf(s, z) for s, b in zip(ref["xs"], ref["B"], strict=True))
        assert np.allclose(f_alg, f_ref, rtol=1e-9, atol=1e-11)
        assert np.allclose(v_alg, v_ref, rtol=1e-9, atol=1e-11)
    assert np.allclose(last["b"], ref["b"], rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------------------------------
# C1, C2, C6: the incremental scalars against the full expansion
# ------------------------------------------------------------------------------------------


def gram(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return rbf_matrix(A, B, GAMMA)


def naive_scalars(snap: dict) -> tuple[float, float]:
    """⟨f, v⟩ and ‖f‖² of the stored expansion from its Gram matrix (delta kernel on labels)."""
    K = gram(snap["X"], snap["X"])
    a, b = snap["alpha"], snap["beta"]
    return float(np.sum(a * (K @ b))), float(np.sum(a * (K @ a)))


LOSSES = [  # (loss, task, ν)
    ("hinge", "binary", 0.0),
    ("logistic", "binary", 0.0),
    ("squared_hinge", "binary", 0.0),
    ("smooth_hinge", "binary", 0.0),
    ("ramp", "binary", 0.0),
    ("squared", "binary", 0.0),
    ("squared", "regression", 0.0),
    ("eps_insensitive", "regression", 0.0),
    ("huber[delta=0.5]", "regression", 0.0),
    ("multiclass_hinge", "multiclass", 0.0),
    ("softmax", "multiclass", 0.0),
    ("novelty_hinge", "novelty", 0.0),
    ("hinge", "binary", 0.2),
    ("multiclass_hinge", "multiclass", 0.2),
    ("novelty_hinge", "novelty", 0.2),
    ("eps_insensitive", "regression", 0.2),
]


def _close(got: float, want: float, tol: float = 1e-10) -> bool:
    return abs(got - want) <= tol * max(1.0, abs(want))


@pytest.mark.parametrize(
    ("loss", "task", "nu"), LOSSES, ids=[f"{t}-{loss_}-nu{n}" for loss_, t, n in LOSSES]
)
@pytest.mark.parametrize("lam", [0.0, 0.9, 1.0])
def test_incrementals_equal_full_gram_recomputation(loss, task, nu, lam) -> None:
    """C1/C2: without truncation, π = ⟨f, v⟩, N = ‖f‖² and ⟨g_t, v_t⟩ equal αᵀKβ, αᵀKα and
    c·αᵀKβ + ξᵀ(βᵀk_t) after every one of 200 steps, and the closed-form v_{t+1}(x_t)
    equals a fresh expansion of the new trace at x_t."""
    X, y = data(task, n=200)
    c = 0.05 if nu == 0 else 1.0
    algo = make(
        f"svmd[eta=0.3,mu=0.3,lam={lam},c={c},nu={nu},budget=1000]", loss, task, n_classes=3
    )
    lossobj = get_registry().create("loss", loss)
    prev = algo.snapshot()
    inserted = 0
    for t in range(len(X)):
        algo.learn_predict_many(X[t : t + 1], y[t : t + 1])
        snap = algo.snapshot()
        pi, N = naive_scalars(snap)
        assert _close(snap["pi"], pi) and _close(snap["norm_sq"], N), (
            t,
            snap["pi"],
            pi,
            snap["norm_sq"],
            N,
        )
        # ⟨g_t, v_t⟩ from the expansion before the step.
        if len(prev["X"]):
            k = gram(prev["X"], X[t : t + 1])[:, 0]
            F, V = prev["alpha"].T @ k, prev["beta"].T @ k
            pi_prev = naive_scalars(prev)[0]
        else:
            F = V = np.zeros(algo.n_outputs)
            pi_prev = 0.0
        if nu == 0:
            xi = np.atleast_1d(
                np.asarray(
                    lossobj.derivative(F if task == "multiclass" else F[0], y[t]), dtype=float
                )
            )
            assert _close(snap["gv"], c * pi_prev + xi @ V), t
        # v_{t+1}(x_t) in closed form against the new trace's expansion.
        v_fresh = snap["beta"].T @ gram(snap["X"], X[t : t + 1])[:, 0] if len(snap["X"]) else 0.0
        assert np.allclose(snap["V1"], v_fresh, rtol=1e-10, atol=1e-10), t
        inserted += len(snap["X"]) > len(prev["X"])
        prev = snap
    assert inserted >= 10  # the run exercised the recursions with a growing expansion


@pytest.mark.parametrize(
    ("loss", "task", "nu"), LOSSES, ids=[f"{t}-{loss_}-nu{n}" for loss_, t, n in LOSSES]
)
def test_exact_eviction_keeps_scalars_equal_to_truncated_expansion(loss, task, nu) -> None:
    """C6: with incremental=exact, π and N equal their values on the truncated buffer after
    every step, through many evictions, on both paths."""
    X, y = data(task, n=240)
    c = 0.05 if nu == 0 else 1.0
    for compiled in (True, False):
        algo = make(
            f"svmd[eta=0.3,mu=0.3,lam=0.9,c={c},nu={nu},budget=15,incremental=exact]",
            loss,
            task,
            n_classes=3,
        )
        _, snaps = run_steps(algo, X, y, compiled=compiled)
        for t, snap in enumerate(snaps):
            pi, N = naive_scalars(snap)
            assert _close(snap["pi"], pi) and _close(snap["norm_sq"], N), (compiled, t)
        assert snaps[-1]["evictions"] >= 20


def test_paper_mode_drifts_under_truncation() -> None:
    """C6's contrast: without the correction, π and N track the untruncated functions and
    drift from the truncated buffer's values (the spec's toy reached 28 %)."""
    X, y = data("multiclass", n=240)
    drift = {}
    for mode in ("paper", "exact"):
        algo = make(
            f"svmd[eta=0.3,mu=0.3,lam=0.9,c=0.05,budget=15,incremental={mode}]",
            "multiclass_hinge",
            "multiclass",
            n_classes=3,
        )
        _, snaps = run_steps(algo, X, y)
        drift[mode] = max(
            abs(s["norm_sq"] - naive_scalars(s)[1]) / max(1.0, naive_scalars(s)[1]) for s in snaps
        )
    assert drift["exact"] < 1e-10
    assert drift["paper"] > 1e-3


# ------------------------------------------------------------------------------------------
# C3, C4, C5 and μ = 0: SVMD against closed forms and other algorithms
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("loss", "task"),
    [
        ("logistic", "binary"),
        ("hinge", "binary"),
        ("squared", "regression"),
        ("smooth_hinge", "binary"),
    ],
)
@pytest.mark.parametrize("lam", [0.0, 0.95])
def test_linear_kernel_equals_primal_smd(loss, task, lam) -> None:
    """C3: with a linear kernel and no budget, kernel SVMD is scalar-η SMD on w ∈ R^d with
    H v = c v + Λ x (xᵀv): the same scores and step sizes at every step (to 1e-10)."""
    X, y = data(task, n=150, d=4)
    eta0, mu, c = 0.2, 0.3, 0.1
    algo = make(
        f"svmd[eta={eta0},mu={mu},lam={lam},c={c},budget=1000]", loss, task, kernel="linear"
    )
    lossobj = get_registry().create("loss", loss)
    w, v, eta = np.zeros(4), np.zeros(4), eta0
    for t in range(len(X)):
        x = X[t]
        f = w @ x
        assert algo.decision_one(x) == pytest.approx(f, rel=1e-10, abs=1e-10)
        algo.learn_predict_many(X[t : t + 1], y[t : t + 1])
        xi = float(lossobj.derivative(f, y[t]))
        h = float(lossobj.second_derivative(f, y[t])) if lossobj.has_second_derivative else 0.0
        g = c * w + xi * x
        eta = eta * max(0.5, 1 - mu * g @ v)
        v = lam * v - eta * (g + lam * (c * v + h * x * (x @ v)))
        w = w - eta * g
        assert algo.stats()["eta"] == pytest.approx(eta, rel=1e-10)
    assert algo.stats()["eta"] != eta0  # the step size moved


@pytest.mark.parametrize(
    ("loss", "task"), [("hinge", "binary"), ("softmax", "multiclass"), ("logistic", "binary")]
)
def test_single_step_svmd_closed_form(loss, task) -> None:
    """C4 and §1.7: with λ = 0 the trace is v_{t+1} = −η_t g_t (old β rows are −η_t c α_t,
    the new row −η_t ξ_t) and η_t = η_{t−1} max(½, 1 + μ η_{t−1} ⟨g_t, g_{t−1}⟩), with
    ⟨g_t, g_{t−1}⟩ computed from the two gradients' expansions."""
    X, y = data(task, n=120)
    mu, c = 0.5, 0.1
    algo = make(f"svmd[eta=0.3,mu={mu},lam=0.0,c={c},budget=1000]", loss, task, n_classes=3)
    lossobj = get_registry().create("loss", loss)
    prev_g = None  # (points, coefficients) of g_{t−1}
    eta_prev = 0.3
    for t in range(len(X)):
        before = algo.snapshot()
        k = gram(before["X"], X[t : t + 1])[:, 0] if len(before["X"]) else np.zeros(0)
        F = before["alpha"].T @ k if len(k) else np.zeros(algo.n_outputs)
        xi = np.atleast_1d(
            np.asarray(lossobj.derivative(F if task == "multiclass" else F[0], y[t]), dtype=float)
        )
        algo.learn_predict_many(X[t : t + 1], y[t : t + 1])
        after = algo.snapshot()
        eta = after["eta"]
        m = len(before["X"])
        # β = −η γ: the old rows −η c α_t, the new row −η ξ_t.
        assert np.allclose(after["beta"][:m], -eta * c * before["alpha"], rtol=1e-12, atol=1e-15)
        if len(after["X"]) > m:
            assert np.allclose(after["beta"][m], -eta * xi, rtol=1e-12)
        # g_t as an expansion: c f_t plus ξ_t on x_t.
        g_pts = np.vstack([before["X"].reshape(-1, X.shape[1]), X[t : t + 1]])
        g_coef = np.vstack([c * before["alpha"].reshape(-1, algo.n_outputs), xi[None, :]])
        if prev_g is not None:
            gg = float(np.sum(prev_g[1] * (gram(prev_g[0], g_pts) @ g_coef)))
            assert eta == pytest.approx(eta_prev * max(0.5, 1 + mu * eta_prev * gg), rel=1e-10)
        prev_g, eta_prev = (g_pts, g_coef), eta


@pytest.mark.parametrize(
    ("loss", "task", "extra"),
    [
        ("hinge", "binary", "budget=20"),
        ("multiclass_hinge", "multiclass", "budget=20,offset=true"),
        ("logistic", "binary", "budget=1000"),
        ("novelty_hinge[rho=0.5]", "novelty", "budget=20"),
        ("eps_insensitive", "regression", "budget=20,offset=true"),
    ],
)
def test_mu_zero_is_norma_with_constant_step(loss, task, extra) -> None:
    """With μ = 0 SVMD never moves η (nor η_b), so it is NORMA with a constant step, example
    for example: the same predictions, and the same function at the end."""
    X, y = data(task, n=300)
    svmd = make(f"svmd[eta=0.4,mu=0.0,lam=0.9,c=0.05,{extra}]", loss, task, n_classes=3)
    norma = make(f"norma[eta=0.4,c=0.05,{extra}]", loss, task, n_classes=3)
    p_s, p_n = svmd.learn_predict_many(X, y), norma.learn_predict_many(X, y)
    if task == "regression":
        assert np.allclose(p_s, p_n, rtol=1e-10, atol=1e-12)
    else:
        assert np.array_equal(p_s, p_n)
    probes = data(task, n=20, seed=9)[0]
    for z in probes:
        assert np.allclose(svmd.decision_one(z), norma.decision_one(z), rtol=1e-10, atol=1e-12)
    assert svmd.stats()["n_support"] == norma.stats()["n_support"]
    assert svmd.stats()["eta"] == 0.4


@pytest.mark.parametrize(
    ("loss", "task", "spec"),
    [
        ("hinge", "binary", "svmd[eta=1.0,mu=1.0,lam=0.95,c=1.0,nu=0.1,offset=true,budget=50]"),
        ("softmax", "multiclass", "svmd[eta=0.5,mu=2.0,lam=1.0,c=0.01,offset=true,budget=50]"),
        ("eps_insensitive", "regression", "svmd[eta=0.5,mu=1.0,lam=0.99,c=0.1,nu=0.2,offset=true]"),
    ],
)
def test_step_sizes_stay_positive_and_halve_at_most(loss, task, spec) -> None:
    """C5: at every step η > 0 and η_t ≥ η_{t−1}/2; the same for η_ε and each η_b."""
    X, y = data(task, n=400)
    algo = make(spec, loss, task, n_classes=3)
    _, snaps = run_steps(algo, X, y)
    eta = np.array([0.0 + float(spec.split("eta=")[1].split(",")[0])] + [s["eta"] for s in snaps])
    eta_e = np.array([1.0] + [s["eta_eps"] for s in snaps])
    eta_b = np.vstack([snaps[0]["eta_b"] * 0 + eta[0]] + [s["eta_b"] for s in snaps])
    for series in (eta, eta_e, *eta_b.T):
        assert np.all(series > 0)
        assert np.all(series[1:] >= 0.5 * series[:-1] * (1 - 1e-15))
    assert np.any(eta[1:] < eta[:-1]) and np.any(eta_b[1:] != eta_b[:-1])  # they did move


# ------------------------------------------------------------------------------------------
# C9 and the paper's behaviour on small data
# ------------------------------------------------------------------------------------------


def _separable(task: str, n: int, seed: int):
    """10-D Gaussians (nearly separable for the label tasks): the spec's ν-trick toy."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 10))
    if task == "binary":
        y = rng.choice([-1.0, 1.0], n)
        X[:, 0] += 3.5 * y
    elif task == "multiclass":
        y = rng.integers(0, 3, n).astype(float)
        X += 7.0 * np.eye(10)[:3][y.astype(int)]
    else:
        y = np.ones(n)
    return np.ascontiguousarray(X), y


@pytest.mark.parametrize("task", ["binary", "multiclass", "novelty"])
@pytest.mark.parametrize("nu", [0.05, 0.2])
@pytest.mark.parametrize("seed", [0, 1])
def test_nu_property(task, nu, seed) -> None:
    """C9: with c = 1, η₀ = 1, μ = 1, λ = 0.95 on nearly separable data, the fraction of
    margin violators over the last quarter of 8000 examples is ν ± 0.02."""
    X, y = _separable(task, 8000, seed)
    loss = {"binary": "hinge", "multiclass": "multiclass_hinge", "novelty": "novelty_hinge"}[task]
    algo = make(
        f"svmd[eta=1.0,mu=1.0,lam=0.95,c=1.0,nu={nu},budget=512]",
        loss,
        task,
        kernel="rbf[gamma=0.05]",
        n_classes=3,
    )
    pred = algo.learn_predict_many(X[:6000], y[:6000])
    before = algo.stats()["violations"]
    pred = np.concatenate([pred, algo.learn_predict_many(X[6000:], y[6000:])])
    rate = (algo.stats()["violations"] - before) / 2000
    assert abs(rate - nu) <= 0.02, rate
    if task != "novelty":
        assert np.mean(pred != y) < nu / 4  # online error ≪ ν: the regime the claim is about
    else:
        assert abs(np.mean(pred[6000:] == -1.0) - nu) <= 0.02  # the flagged fraction is ν too


def test_novelty_flags_outliers() -> None:
    """ν-novelty detection learned on inliers flags far outliers and about ν of the inliers."""
    X, y = _separable("novelty", 4000, 3)
    algo = make(
        "svmd[eta=1.0,mu=1.0,lam=1.0,c=1.0,nu=0.05,budget=512]",
        "novelty_hinge",
        "novelty",
        kernel="rbf[gamma=0.02]",
    )
    pred = algo.learn_predict_many(X, y)
    assert abs(np.mean(pred[3000:] == -1.0) - 0.05) < 0.02
    rng = np.random.default_rng(4)
    inliers = rng.standard_normal((500, 10))
    outliers = rng.standard_normal((200, 10)) + 6.0
    assert np.mean(algo.predict_many(outliers) == -1.0) == 1.0
    assert np.mean(algo.predict_many(inliers) == -1.0) < 0.1


def test_multiclass_learns_blobs_with_offsets() -> None:
    """Multiclass SVMD (delta kernel on labels, per-class offsets) classifies three blobs."""
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 600).astype(float)
    X = np.ascontiguousarray(rng.standard_normal((600, 3)) + 3.0 * np.eye(3)[y.astype(int)])
    algo = make(
        "svmd[eta=0.3,mu=0.1,lam=0.99,c=0.01,budget=100,offset=true]",
        "multiclass_hinge",
        "multiclass",
        n_classes=3,
    )
    pred = algo.learn_predict_many(X, y)
    assert np.mean(pred[300:] != y[300:]) < 0.1
    assert set(np.unique(pred)) == {0.0, 1.0, 2.0}
    assert np.any(algo.snapshot()["b"] != 0.0)


def _digits():
    from sklearn.datasets import load_digits

    Xd, yd = load_digits(return_X_y=True)
    perm = np.random.default_rng(0).permutation(len(Xd))
    return np.ascontiguousarray(Xd[perm] / 8.0 - 1.0), yd[perm].astype(float)


def test_step_size_rises_above_eta0_on_digits() -> None:
    """The paper's §6.1.2 on a small stand-in (scikit-learn's digits scaled to [−1, 1], RBF
    with 2σ² = ½·d as for USPS): with c = 1/(500n), η₀ = 0.1, μ = 0.1, SVMD raises η well
    above η₀ (at least twice), which no decay schedule can do, and ends with fewer errors
    than single-step SVMD, which beats NORMA with τ = 100."""
    X, y = _digits()
    c = 1.0 / (500 * len(X))
    errors, max_eta = {}, {}
    for name, spec in [
        ("svmd", f"svmd[eta=0.1,mu=0.1,lam=0.99,c={c},budget=512]"),
        ("svmd0", f"svmd[eta=0.1,mu=0.1,lam=0.0,c={c},budget=512]"),
        ("norma", f"norma[eta=0.1,c={c},schedule=decay_tau,tau=100.0,budget=512]"),
    ]:
        algo = make(
            spec, "multiclass_hinge", "multiclass", n_classes=10, kernel="rbf[gamma=0.03125]"
        )
        pred, etas = [], []
        for i in range(0, len(X), 25):
            pred.append(algo.learn_predict_many(X[i : i + 25], y[i : i + 25]))
            etas.append(algo.stats()["eta"])
        errors[name] = np.mean(np.concatenate(pred) != y)
        max_eta[name] = max(etas)
    assert max_eta["svmd"] >= 0.2
    assert max_eta["norma"] <= 0.1
    assert errors["svmd"] < errors["svmd0"] < errors["norma"]
    assert errors["svmd"] / errors["norma"] < 0.8


def test_novelty_step_size_falls_but_does_not_anneal_to_zero() -> None:
    """The paper's §6.2.2 (μ = λ = 1, the ν-trick with c = 1, ν = 0.05, η₀ = 1) on the
    digits counting sequence: η falls well below η₀ but stays above 10⁻³ η₀."""
    reg = get_registry()
    stream = build_stream(StreamSpec("digits", order="counting", scale="minmax"), reg)
    algo = make(
        "svmd[eta=1.0,mu=1.0,lam=1.0,c=1.0,nu=0.05,budget=512]",
        "novelty_hinge",
        "novelty",
        kernel="rbf[gamma=0.03125]",
    )
    etas = []
    for i in range(0, stream.n, 10):
        algo.learn_predict_many(stream.X[i : i + 10], np.ones(len(stream.X[i : i + 10])))
        etas.append(algo.stats()["eta"])
    assert etas[-1] < 0.1
    assert min(etas) > 1e-3


# ------------------------------------------------------------------------------------------
# The two paths, the compiled losses, bad input and divergence
# ------------------------------------------------------------------------------------------

PATH_CASES = [  # (loss, task, extra parameters)
    ("hinge", "binary", "offset=true"),
    ("logistic", "binary", "offset=true"),
    ("squared_hinge", "binary", ""),
    ("smooth_hinge", "binary", "incremental=exact"),
    ("ramp", "binary", ""),
    ("squared", "binary", ""),
    ("zero_one", "binary", ""),
    ("squared", "regression", "offset=true"),
    ("eps_insensitive", "regression", "incremental=exact"),
    ("huber[delta=0.3]", "regression", ""),
    ("multiclass_hinge", "multiclass", "offset=true"),
    ("softmax", "multiclass", "incremental=exact"),
    ("multiclass_zero_one", "multiclass", ""),
    ("novelty_hinge[rho=0.5]", "novelty", "offset=true"),
    ("novelty_hinge[rho=0.5,nu=0.1]", "novelty", "incremental=exact"),
    ("hinge", "binary", "nu=0.1,offset=true"),
    ("multiclass_hinge", "multiclass", "nu=0.1"),
    ("eps_insensitive", "regression", "nu=0.2,lagged_eps=true"),
]


@pytest.mark.parametrize(
    ("loss", "task", "extra"), PATH_CASES, ids=[f"{t}-{loss_}-{e}" for loss_, t, e in PATH_CASES]
)
def test_compiled_loop_and_python_path_agree(loss, task, extra) -> None:
    """The compiled block loop (compiled loss) and the per-example path (loss plugin) make
    the same predictions and reach the same state, for every registered loss."""
    X, y = data(task, n=250)
    spec = f"svmd[eta=0.4,mu=0.3,lam=0.95,c=0.05,budget=30{',' + extra if extra else ''}]"
    fast, slow = make(spec, loss, task, n_classes=3), make(spec, loss, task, n_classes=3)
    p_fast = np.concatenate(
        [fast.learn_predict_many(X[:100], y[:100]), fast.learn_predict_many(X[100:], y[100:])]
    )
    p_slow, _ = run_steps(slow, X, y, compiled=False)
    if task == "regression":
        assert np.allclose(p_fast, p_slow, rtol=1e-10, atol=1e-12)
    else:
        assert np.array_equal(p_fast, p_slow)
    a, b = fast.snapshot(), slow.snapshot()
    for key in ("alpha", "beta", "b", "eta_b", "V1"):
        assert np.allclose(a[key], b[key], rtol=1e-10, atol=1e-13), key
    for key in ("eta", "pi", "norm_sq", "eps", "eta_eps", "violations", "m", "head"):
        assert a[key] == pytest.approx(b[key], rel=1e-10, abs=1e-13), key
    assert fast.stats()["kernel_evals"] == slow.stats()["kernel_evals"]


def test_python_only_loss_and_kernel_use_the_per_example_path() -> None:
    """A loss without a compiled form and a kernel written in NumPy run through the Python
    path and give the same results as their compiled twins."""
    from kbench.plugins.losses.margin import Hinge

    reg = get_registry()
    X, y = data("binary", n=250)
    spec = "svmd[eta=0.4,mu=0.3,lam=0.95,c=0.05,budget=30,incremental=exact]"
    ref = make(spec, "hinge")
    p_ref = ref.learn_predict_many(X, y)
    for kernel, loss in [
        (reg.create("kernel", f"rbf[gamma={GAMMA}]"), python_loss(Hinge, "py_hinge")()),
        (NumpyRBF(gamma=GAMMA), reg.create("loss", "hinge")),
    ]:
        algo = reg.create("algorithm", spec, kernel=kernel, loss=loss, task="binary")
        assert not algo._compiled_block()
        assert np.array_equal(algo.learn_predict_many(X, y), p_ref)
        assert algo.snapshot()["pi"] == pytest.approx(ref.snapshot()["pi"], rel=1e-8)
        assert np.allclose(algo.predict_many(X[:50]), ref.predict_many(X[:50]))


@pytest.mark.parametrize(
    "loss",
    [
        "hinge",
        "logistic",
        "squared",
        "eps_insensitive[epsilon=0.3]",
        "smooth_hinge",
        "squared_hinge",
        "ramp[s=-0.5]",
        "huber[delta=0.7]",
        "novelty_hinge[rho=0.4]",
        "multiclass_hinge",
        "softmax",
    ],
)
def test_compiled_gradients_match_the_loss_plugins(loss) -> None:
    """The compiled ξ and χ = Λ·V equal the plugins' derivative and second derivative."""
    from kbench.learners.online_loss import make_cfg, setup_loss

    reg = get_registry()
    lossobj = reg.create("loss", loss)
    task = sorted(lossobj.tasks)[0]
    setup = setup_loss("svmd", lossobj, task, 4, 0.0, 1.0)
    assert setup.loss_id >= 0
    cfg = make_cfg(reg.create("kernel", "rbf"), setup)
    rng = np.random.default_rng(3)
    C = setup.n_out
    for _ in range(200):
        F, V = rng.normal(scale=1.5, size=C), rng.normal(size=C)
        yv = (
            float(rng.integers(0, 4))
            if C > 1
            else (float(rng.normal()) if task == "regression" else float(rng.choice([-1.0, 1.0])))
        )
        if C == 1 and rng.random() < 0.2:
            F[0] = 1.0 / yv if task == "binary" else F[0]  # land on the hinge's kink
        xi, chi = np.zeros(C), np.zeros(C)
        s = _svmd.py_gradient(cfg, 1.0, F, V, yv, xi, chi)
        want = np.atleast_1d(np.asarray(lossobj.derivative(F if C > 1 else F[0], yv), dtype=float))
        assert np.allclose(xi, want, rtol=1e-14, atol=1e-15)
        if lossobj.has_second_derivative:
            H = np.asarray(lossobj.second_derivative(F if C > 1 else F[0], yv), dtype=float)
            assert np.allclose(chi, H @ V if C > 1 else H * V, rtol=1e-12, atol=1e-14)
        else:
            assert np.all(chi == 0.0)
        assert s == int(np.any(want != 0.0))


@pytest.mark.parametrize(
    ("spec", "loss", "task", "message"),
    [
        *online_kernel_refusals("svmd"),
        *range_refusals(
            "svmd",
            {
                "eta=-1.0": "eta must be in (0",
                "mu=-0.1": "mu must be in [0",
                "lam=1.5": "lam must be in [0.0, 1.0], got",
                "lam=-0.1": "lam must be in [0.0, 1.0], got",
                "nu=-0.2": "nu must be in [0.0, 1.0), got",
                "c=-1.0": "c must be in [0",
                "margin0=0.0": "margin0 must be in (0",
                "eta_eps=0.0": "eta_eps must be in (0",
                "eta=0.5,eta_max=0.1": "eta_max must be in [0.5",
            },
        ),
        (
            "svmd",
            "multiclass_hinge",
            "binary",
            "svmd: loss 'multiclass_hinge' cannot be used for binary",
        ),
        ("svmd[nu=0.1]", "softmax", "multiclass", "adapts the margin of loss 'multiclass_hinge'"),
        ("svmd[nu=0.1]", "squared", "regression", "adapts the margin of loss 'eps_insensitive'"),
        ("svmd[nu=0.1]", "novelty_hinge[nu=0.2]", "novelty", "disagree"),
    ],
)
def test_bad_input_fails_at_construction(spec, loss, task, message) -> None:
    """Out-of-range parameters and unusable losses raise ValueError naming the problem."""
    with pytest.raises(ValueError) as err:
        make(spec, loss, task, n_classes=3)
    assert message in str(err.value)


def test_unknown_incremental_mode_is_refused() -> None:
    """The incremental mode is one of paper and exact, in specs and in Python."""
    from kbench.core.errors import SpecError

    with pytest.raises(SpecError, match="incremental"):
        make("svmd[incremental=naive]", "hinge")
    from kbench.plugins.algorithms.svmd import SVMD

    with pytest.raises(ValueError, match="svmd: unknown incremental mode 'naive'"):
        SVMD(
            kernel=get_registry().create("kernel", "rbf"),
            loss=get_registry().create("loss", "hinge"),
            incremental="naive",
        )


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_divergence_stops_the_task_with_the_example_index() -> None:
    """A step size so large that the scores overflow gives NaN predictions from that example
    on (both paths), and the runner records the task as diverged at that example."""
    X, y = data("regression", n=400)
    fast = make("svmd[eta=1000.0,mu=0.0,c=0.1]", "squared", "regression")
    p = fast.learn_predict_many(X, y)
    bad = int(np.argmax(~np.isfinite(p)))
    assert 0 < bad < len(X) and not np.isfinite(p[bad:]).any() and np.isfinite(p[:bad]).all()
    slow = make("svmd[eta=1000.0,mu=0.0,c=0.1]", "squared", "regression")
    p_slow, _ = run_steps(slow, X, y, compiled=False)
    assert int(np.argmax(~np.isfinite(p_slow))) == bad
    binary = make("svmd[eta=1000.0,mu=0.0,c=0.1]", "squared", "binary")
    pb = binary.learn_predict_many(*data("binary", n=400))
    assert np.isnan(pb).any()  # labels too become NaN, not a silent −1
    reg = get_registry()
    task = Task(
        algorithm=reg.canonical("algorithm", "svmd[eta=1000.0,mu=0.0,c=0.1]"),
        kernel=reg.canonical("kernel", "rbf"),
        loss=reg.canonical("loss", "squared"),
        stream=StreamSpec("periodic_beta_regression", n=400),
    )
    result = run_task(task, build_stream(task.stream, reg), reg)
    assert result.status == "diverged"
    assert "example" in result.run["reason"]


def test_stats_report_the_step_size() -> None:
    """stats() carries the current η (and ε, η_ε, η_b when used) for the report's plots."""
    X, y = data("binary", n=300)
    algo = make("svmd[eta=1.0,mu=1.0,lam=0.95,c=1.0,nu=0.1,offset=true,budget=50]", "hinge")
    assert algo.stats()["eta"] == 1.0
    algo.learn_predict_many(X, y)
    st = algo.stats()
    assert {"n_support", "kernel_evals", "eta", "eps", "eta_eps", "eta_b", "f_norm"} <= set(st)
    assert st["eta"] != 1.0 and st["eps"] != 1.0 and st["n_support"] == 50
    assert st["kernel_evals"] >= 50 * 200
