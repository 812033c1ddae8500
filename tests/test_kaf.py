"""The kernel adaptive filters (KLMS, QKLMS, KNLMS) against NumPy transcriptions of their
papers' updates: predictions equal to 1e-10 on dense rows, CSR rows and one row at a time;
their dictionaries; their errors on a kernel they cannot use."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from helpers import prequential
from kbench.api import get_registry
from kbench.core.errors import SpecError

REG = get_registry()


def rbf(A: np.ndarray, x: np.ndarray, gamma: float) -> np.ndarray:
    return np.exp(-gamma * ((A - x) ** 2).sum(axis=1))


def klms_reference(X, y, eta, gamma):
    C, a, pred = np.zeros((0, X.shape[1])), np.zeros(0), []
    for x, t in zip(X, y, strict=True):
        f = rbf(C, x, gamma) @ a
        pred.append(f)
        C, a = np.vstack([C, x]), np.append(a, eta * (t - f))
    return np.array(pred), len(a)


def qklms_reference(X, y, eta, epsilon, gamma):
    C, a, pred = np.zeros((0, X.shape[1])), np.zeros(0), []
    for x, t in zip(X, y, strict=True):
        f = rbf(C, x, gamma) @ a
        pred.append(f)
        e = t - f
        dist = np.sqrt(((C - x) ** 2).sum(axis=1))
        if len(a) and dist.min() <= epsilon:
            a[np.argmin(dist)] += eta * e
        else:
            C, a = np.vstack([C, x]), np.append(a, eta * e)
    return np.array(pred), len(a)


def knlms_reference(X, y, eta, epsilon, mu0, gamma):
    C, a, pred = np.zeros((0, X.shape[1])), np.zeros(0), []
    for x, t in zip(X, y, strict=True):
        h = rbf(C, x, gamma)
        f = h @ a
        pred.append(f)
        if not len(a) or np.abs(h).max() <= mu0:
            C, a, h = np.vstack([C, x]), np.append(a, 0.0), np.append(h, 1.0)
        a = a + eta * (t - f) / (epsilon + h @ h) * h
    return np.array(pred), len(a)


@pytest.fixture(scope="module")
def series():
    d = REG.create("dataset", "mackey_glass[tau=17,sample_period=1,n_train=400,n_test=0]").load(0)
    return d.X, d.y


CASES = [
    ("klms[eta=0.3]", lambda X, y: klms_reference(X, y, 0.3, 1.0)),
    ("qklms[eta=0.3,epsilon=0.2]", lambda X, y: qklms_reference(X, y, 0.3, 0.2, 1.0)),
    (
        "knlms[eta=0.2,epsilon=0.01,mu0=0.9]",
        lambda X, y: knlms_reference(X, y, 0.2, 0.01, 0.9, 1.0),
    ),
]


#: the kernel of every test here but the refusals of other kernels
RBF1 = "rbf[gamma=1.0]"


def learner(spec: str):
    return REG.create("algorithm", spec, kernel=REG.create("kernel", RBF1), task="regression")


def assert_equals_reference(
    series: tuple[np.ndarray, np.ndarray],
    spec: str,
    path: str,
    reference: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, int]],
    *,
    atol: float,
) -> None:
    """``spec`` (RBF γ = 1), run over the series by ``path``, predicts what ``reference``
    does within ``atol`` and ends with as many centres."""
    X, y = series
    want, size = reference(X, y)
    model = learner(spec)
    got = prequential(model, X, y, path)
    np.testing.assert_allclose(got, want, rtol=0, atol=atol)
    assert model.stats()["n_support"] == size


@pytest.mark.parametrize("spec, reference", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("path", ["dense", "csr", "one"])
def test_filters_equal_their_papers_updates(series, spec, reference, path) -> None:
    # the same operations in another order (BLAS dots, NumPy sums): rounding only
    assert_equals_reference(series, spec, path, reference, atol=1e-10)


def test_quantization_keeps_the_dictionary_small_at_klms_accuracy(series) -> None:
    """QKLMS's point (Chen et al. 2012): far fewer centres than KLMS, a similar error."""
    X, y = series
    klms, qklms = learner("klms[eta=0.3]"), learner("qklms[eta=0.3,epsilon=0.1]")
    mse_k = np.mean((klms.learn_predict_many(X, y) - y)[200:] ** 2)
    mse_q = np.mean((qklms.learn_predict_many(X, y) - y)[200:] ** 2)
    assert qklms.stats()["n_support"] < klms.stats()["n_support"] / 4
    assert mse_q < 2 * mse_k


def test_knlms_dictionary_obeys_the_coherence_bound(series) -> None:
    X, y = series
    model = learner("knlms[mu0=0.6]")
    model.learn_predict_many(X, y)
    C = model.model.support_vectors()
    K = np.exp(-((C[:, None, :] - C[None, :, :]) ** 2).sum(axis=2))
    np.fill_diagonal(K, 0.0)
    assert 1 < len(C) < len(X) and np.abs(K).max() <= 0.6


@pytest.mark.parametrize(
    "spec, kernel, message",
    [
        ("qklms", "poly[degree=2]", "qklms: quantizes by the Gaussian kernel's distance"),
        ("knlms", "linear", "knlms: the coherence criterion needs k(x, x) = 1"),
        ("klms[eta=0]", "rbf", "eta"),
        ("knlms[mu0=1.5]", "rbf", "knlms: mu0 must be in [0.0, 1.0], got 1.5"),
        ("knlms[mu0=-0.1]", "rbf", "knlms: mu0 must be in [0.0, 1.0], got -0.1"),
        ("swkrls[window=0]", RBF1, "swkrls: window must be"),
        ("swkrls[window=-2]", RBF1, "swkrls: window must be in [1, inf], got -2"),
        ("swkrls[c=0]", RBF1, "swkrls: c must be"),
        ("swkrls[c=-1]", RBF1, "swkrls: c must be"),
        ("krlst[forgetting=0]", RBF1, "krlst: forgetting must be in (0.0, 1.0], got 0.0"),
        ("krlst[forgetting=1.5]", RBF1, "krlst: forgetting must be in (0.0, 1.0], got 1.5"),
        ("krlst[budget=0]", RBF1, "krlst: budget must be"),
        ("krlst[budget=-3]", RBF1, "krlst: budget must be in [1, inf], got -3"),
        ("krlst[noise=0]", RBF1, "krlst: noise must be"),
        ("krlst[jitter=-1]", RBF1, "krlst: jitter must be"),
    ],
)
def test_a_kernel_or_parameter_they_cannot_use_is_a_one_line_error(spec, kernel, message) -> None:
    with pytest.raises((SpecError, ValueError), match=re.escape(message)) as err:
        REG.create("algorithm", spec, kernel=REG.create("kernel", kernel), task="regression")
    assert "\n" not in str(err.value)


def test_filters_refuse_classification() -> None:
    with pytest.raises((SpecError, ValueError), match="regression"):
        REG.create("algorithm", "klms", kernel=REG.create("kernel", "rbf"), task="binary")


def krls_reference(X, y, tolerance, gamma):
    """ALD-KRLS as Engel, Mannor and Meir (2004) write it, in NumPy."""
    D, a, Kinv, P, pred = X[:0], np.zeros(0), np.zeros((0, 0)), np.zeros((0, 0)), []
    for x, t in zip(X, y, strict=True):
        k = rbf(D, x, gamma)
        f = k @ a
        pred.append(f)
        if not len(a):
            D, Kinv, P, a = x[None, :], np.array([[1.0]]), np.array([[1.0]]), np.array([t])
            continue
        at = Kinv @ k
        delta = 1.0 - k @ at
        e = t - f
        if delta > tolerance:
            m = len(a)
            K2 = np.zeros((m + 1, m + 1))
            K2[:m, :m] = Kinv + np.outer(at, at) / delta
            K2[:m, m] = K2[m, :m] = -at / delta
            K2[m, m] = 1.0 / delta
            P2 = np.zeros((m + 1, m + 1))
            P2[:m, :m], P2[m, m] = P, 1.0
            D, Kinv, P, a = np.vstack([D, x]), K2, P2, np.append(a - at * e / delta, e / delta)
        else:
            q = P @ at / (1.0 + at @ P @ at)
            P = P - np.outer(q, at @ P)
            a = a + Kinv @ q * e
    return np.array(pred), len(a)


@pytest.mark.parametrize("path", ["dense", "csr", "one"])
def test_krls_equals_the_papers_update(series, path) -> None:
    X, y = series
    want, size = krls_reference(X, y, 0.01, 1.0)
    model = learner("krls[tolerance=0.01]")
    got = prequential(model, X, y, path)
    # K̃⁻¹ and P are updated, not recomputed (m ≈ 60): at most 2.7e-11 apart here, and the
    # same under the five OpenBLAS kernels of scripts/check_blas_variants.sh
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)
    assert model.stats()["n_support"] == size


def swkrls_reference(X, y, window, c, gamma):
    """Sliding-window KRLS as Van Vaerenbergh, Vía and Santamaría (2006) define it, in
    NumPy: predict with α = (K + cI)⁻¹ y over the last ``window`` examples, solved afresh."""
    pred = []
    for i, x in enumerate(X):
        lo = max(0, i - window)
        W, t = X[lo:i], y[lo:i]
        if not len(W):
            pred.append(0.0)
            continue
        K = np.exp(-gamma * ((W[:, None, :] - W[None, :, :]) ** 2).sum(axis=2))
        pred.append(rbf(W, x, gamma) @ np.linalg.solve(K + c * np.eye(len(W)), t))
    return np.array(pred)


@pytest.mark.parametrize("path", ["dense", "csr", "one"])
@pytest.mark.parametrize("window, c", [(1, 0.1), (20, 0.01), (60, 0.1)])
def test_swkrls_equals_ridge_regression_on_its_window(series, window, c, path) -> None:
    # P is updated by rank-one steps over 400 examples, the reference solves afresh: the
    # difference is rounding, amplified by the condition number of K + cI (at most 4.5e-13
    # here; 6e-9 at c = 1e-4, a window of 100)
    assert_equals_reference(
        series,
        f"swkrls[window={window},c={c}]",
        path,
        lambda X, y: (swkrls_reference(X, y, window, c, 1.0), window),
        atol=1e-10,
    )


def krlst_reference(X, y, lam, M, sn2, jitter, gamma):
    """KRLS-T as Van Vaerenbergh, Lázaro-Gredilla and Santamaría (2012) write it (KAFBOX's
    krlst), in NumPy: the bases' kernel matrix recomputed every step; prediction kᵀQμ."""
    D, Q, mu, S, pred = X[:0], np.zeros((0, 0)), np.zeros(0), np.zeros((0, 0)), []
    for x, t in zip(X, y, strict=True):
        k = rbf(D, x, gamma)
        pred.append(k @ Q @ mu if len(D) else 0.0)
        kss = 1.0 + jitter
        if not len(D):
            D, Q = x[None, :], np.array([[1.0 / kss]])
            mu, S = np.array([t * kss / (kss + sn2)]), np.array([[kss - kss**2 / (kss + sn2)]])
            continue
        K = np.exp(-gamma * ((D[:, None, :] - D[None, :, :]) ** 2).sum(axis=2))
        S = lam * S + (1 - lam) * (K + jitter * np.eye(len(D)))
        mu = np.sqrt(lam) * mu
        q = Q @ k
        ymean = q @ mu
        g2 = max(kss - k @ q, 0.0)
        h = S @ q
        sf2 = max(g2 + q @ h, 0.0)
        sy2 = sn2 + sf2
        if g2 < jitter:
            mu, S = mu + (t - ymean) / sy2 * h, S - np.outer(h, h) / sy2
            continue
        m = len(D)
        p = np.append(q, -1.0)
        Q2 = np.zeros((m + 1, m + 1))
        Q2[:m, :m] = Q
        Q = Q2 + np.outer(p, p) / g2
        p = np.append(h, sf2)
        mu = np.append(mu, ymean) + (t - ymean) / sy2 * p
        S = np.block([[S, h[:, None]], [h[None, :], np.array([[sf2]])]]) - np.outer(p, p) / sy2
        D = np.vstack([D, x])
        if len(D) > M:
            r = int(np.argmin(np.abs((Q @ mu) / np.diag(Q))))
            keep = np.arange(len(D)) != r
            Q = Q[keep][:, keep] - np.outer(Q[keep, r], Q[r, keep]) / Q[r, r]
            mu, S, D = mu[keep], S[keep][:, keep], D[keep]
    return np.array(pred), len(D)


@pytest.mark.parametrize("path", ["dense", "csr", "one"])
@pytest.mark.parametrize("lam, budget", [(1.0, 30), (0.99, 30), (0.995, 60), (0.9, 400)])
def test_krlst_equals_the_papers_update(series, lam, budget, path) -> None:
    # Q, μ and Σ are updated in another order (and the bases sit in other slots after a
    # removal) than the reference's: rounding only, amplified by 1/γ² ≤ 1/jitter = 1e4
    # (2.3e-10 at most here). At KAFBOX's jitter 1e-10 this over-sampled series admits
    # bases almost in the span, and the two roundings part (0.12 after 400 examples).
    assert_equals_reference(
        series,
        f"krlst[forgetting={lam},budget={budget},noise=0.01,jitter=0.0001]",
        path,
        lambda X, y: krlst_reference(X, y, lam, budget, 0.01, 1e-4, 1.0),
        atol=1e-8,
    )


def test_krls_matches_dlib(tmp_path) -> None:
    """dlib's krls (Debian's libdlib-dev), compiled here, on a Mackey–Glass stream with the
    same Gaussian kernel and threshold: the same predictions to 1e-8 and dictionary size."""
    import subprocess
    from pathlib import Path

    driver = tmp_path / "dlib_krls"
    source = Path(__file__).parent / "drivers" / "dlib_krls.cpp"
    built = subprocess.run(
        ["g++", "-O2", "-o", str(driver), str(source), "-lblas"], capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr[-2000:]
    d = REG.create("dataset", "mackey_glass[n_train=600,n_test=0,embedding=5]").load(3)
    lines = [f"{len(d.y)} {d.X.shape[1]} 0.5 0.001"]
    lines += [" ".join(f"{v:.17g}" for v in (*x, t)) for x, t in zip(d.X, d.y, strict=True)]
    ran = subprocess.run(
        [str(driver)], input="\n".join(lines) + "\n", capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr
    out = ran.stdout.split()
    theirs, their_size = np.array([float(v) for v in out[:-1]]), int(out[-1])
    gaussian = REG.create("kernel", "rbf[gamma=0.5]")
    model = REG.create("algorithm", "krls[tolerance=0.001]", kernel=gaussian, task="regression")
    ours = model.learn_predict_many(d.X, d.y)
    assert model.stats()["n_support"] == their_size > 10
    # dlib's kernel value carries +0.01 that its driver takes away again (a rounding of
    # 1e-17 per value), and a BLAS of its own: rounding, grown by the recursion
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-8)


def test_regression_learning_curves_are_drawn_in_decibels(tmp_path) -> None:
    """The report's curves of a regression study give the MSE in dB (10 log10 MSE), as the
    adaptive-filtering literature does, with the dictionary size beside them."""
    from helpers import kbench
    from kbench.report import plots
    from kbench.results.store import load_results

    out = tmp_path / "r"
    data = "mackey_glass[n_train=300,n_test=100]"
    args = ["-a", "klms", "-a", "qklms", "-k", "rbf[gamma=1.0]", "-d", data, "--seeds", "0-1"]
    ran = kbench("run", *args, "--workers", "0", "--no-report", "--out", str(out))
    assert ran.returncode == 0, ran.stderr
    res = load_results(out)
    runs = res.runs.assign(label=res.runs["algorithm"], offline=False)
    svg, titles = plots.curves_figure(
        runs["stream"].iloc[0], runs, res.traces, {"klms": "#000", "qklms": "#111"}, "regression"
    )
    assert titles[:2] == ["Online MSE in dB (prequential)", "Held-out MSE in dB"]
    assert "Model size" in titles
    assert svg is not None and "−20" in svg  # tick labels of a decibel axis, below 0
    mse = float(res.runs["test_error"].min())
    assert 10 * np.log10(mse) < -15  # what the axis must reach: Mackey–Glass is learned
    assert plots.decibels(pd.Series([0.01, 0.0, -1.0])).round(6).tolist()[0] == -20.0
    assert plots.decibels(pd.Series([0.0, -1.0])).isna().all()
