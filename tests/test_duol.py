"""DUOL against a NumPy transcription of the paper's Algorithm 1 (Zhao, Hoi and Jin 2011)."""

from __future__ import annotations

import itertools
from functools import partial

import numpy as np
import pytest

from helpers import (
    NumpyRBF,
    assert_one_line_error,
    checkerboard,
    create,
    linear_gram,
    ovr_error,
    prequential,
    rbf,
)

GAMMA = 0.5
gram_rbf = partial(rbf, gamma=GAMMA)
#: f^i ≤ 1 up to rounding: the PA-I step puts a new margin at exactly 1 in exact arithmetic
SLACK = 1e-9


def double_step(lt, lb, kt, kb, w, C, gb):
    """The paper's closed form of the double update: (γ_t, d), d the increment of γ_b."""
    room = C - gb
    if kt * C + w * room - lt < 0 and kb * room + w * C - lb < 0:
        return C, room
    d = (lb - w * C) / kb
    if (w * w * C - w * lb - kt * kb * C + kb * lt) / kb > 0 and -gb <= d <= room:
        return C, d
    g = (lt - w * room) / kt
    if 0 <= g <= C and lb - kb * room - w * g > 0:
        return g, room
    det = kt * kb - w * w
    return (kb * lt - w * lb) / det, (kt * lb - w * lt) / det


def duol_reference(X, y, C, rho, gram):
    """Algorithm 1 of the paper: f(x) = Σ y_i γ_i k(x_i, x), the margins f^i kept as it says.
    Returns every f(x_t) before its update, the final α_i = y_i γ_i, the margins and the
    number of double updates."""
    keep, gam, marg, f_all, doubles = [], [], [], [], 0
    for t in range(len(y)):
        k = gram(X[keep], X[t : t + 1])[:, 0] if keep else np.zeros(0)
        f = float(np.dot(k, y[keep] * np.array(gam))) if keep else 0.0
        f_all.append(f)
        lt = 1 - y[t] * f
        kt = gram(X[t : t + 1], X[t : t + 1])[0, 0]
        if lt <= 0 or kt == 0:  # k(x, x) = 0: no direction, not learned
            continue
        b, wmin = None, np.inf
        for i, j in enumerate(keep):
            if marg[i] <= 1 + SLACK and y[j] * y[t] * k[i] <= wmin:
                b, wmin = i, y[j] * y[t] * k[i]
        if b is not None and wmin <= -rho:
            kb = gram(X[keep[b] : keep[b] + 1], X[keep[b] : keep[b] + 1])[0, 0]
            gt, d = double_step(lt, 1 - marg[b], kt, kb, wmin, C, gam[b])
            doubles += 1
        else:
            gt, d = min(C, lt / kt), 0.0
        keep.append(t)
        gam.append(gt)
        marg.append(y[t] * f)
        step = gt * y[t] * gram(X[keep], X[t : t + 1])[:, 0]
        if d:
            step = step + d * y[keep[b]] * gram(X[keep], X[keep[b] : keep[b] + 1])[:, 0]
            gam[b] += d
        marg = list(np.array(marg) + y[keep] * step)
    return np.array(f_all), y[keep] * np.array(gam), np.array(marg), doubles


@pytest.fixture(scope="module")
def data():
    X, y = checkerboard(300, seed=1, noise=0.05)
    return np.ascontiguousarray(X), y


KERNELS = {"rbf": (f"rbf[gamma={GAMMA}]", gram_rbf), "linear": ("linear", linear_gram)}


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize(("C", "rho"), [(10.0, 0.0), (1.0, 0.1), (0.3, 0.0)])
@pytest.mark.parametrize("path", ["dense", "csr", "one"])
def test_predictions_equal_the_papers_algorithm(data, kernel, C, rho, path) -> None:
    X, y = data
    spec, gram = KERNELS[kernel]
    f, alpha, margins, doubles = duol_reference(X, y, C, rho, gram)
    assert doubles > 10  # the double update is exercised, not only the PA-I step
    model = create(f"duol[C={C},rho={rho}]", kernel=spec, loss=None)
    got = prequential(model, X, y, path)
    # f(x_0) = 0 (+1); afterwards no f is within rounding of 0 on these data
    assert np.abs(f[1:]).min() > 1e-8
    np.testing.assert_array_equal(got, np.where(f >= 0, 1.0, -1.0))
    snap = model.snapshot()
    np.testing.assert_allclose(snap["alpha"], alpha, rtol=0, atol=1e-10)
    np.testing.assert_allclose(snap["margins"], margins, rtol=0, atol=1e-10)
    assert np.all(np.abs(alpha) <= C + 1e-12)  # the box constraint 0 ≤ γ_i ≤ C


def test_a_third_party_kernel_takes_the_per_example_path(data) -> None:
    X, y = data
    f, alpha, _, _ = duol_reference(X[:150], y[:150], 10.0, 0.0, gram_rbf)
    model = create("duol", kernel=NumpyRBF(gamma=GAMMA), loss=None)
    got = model.learn_predict_many(X[:150], y[:150])
    assert np.abs(f[1:]).min() > 1e-8  # no f within rounding of 0 after the first
    np.testing.assert_array_equal(got, np.where(f >= 0, 1.0, -1.0))
    np.testing.assert_allclose(model.snapshot()["alpha"], alpha, rtol=0, atol=1e-10)


def test_a_zero_row_is_not_learned(data) -> None:
    """With the linear kernel a zero row has k(x, x) = 0: no direction, and no division by 0."""
    X, y = data
    X = X.copy()
    X[[3, 40, 41, 90]] = 0.0
    f, alpha, _, doubles = duol_reference(X, y, 1.0, 0.0, linear_gram)
    assert doubles > 0
    model = create("duol[C=1.0]", kernel="linear", loss=None)
    got = model.learn_predict_many(X, y)
    # a zero row's f is an exact 0 on both sides (+1); no other f is within rounding of 0
    assert np.all((f == 0.0) | (np.abs(f) > 1e-8))
    np.testing.assert_array_equal(got, np.where(f >= 0, 1.0, -1.0))
    np.testing.assert_allclose(model.snapshot()["alpha"], alpha, rtol=0, atol=1e-10)
    assert np.isfinite(model.snapshot()["alpha"]).all()


def test_decisions_are_the_expansion(data) -> None:
    X, y = data
    model = create("duol[C=1.0]", kernel=f"rbf[gamma={GAMMA}]", loss=None)
    model.learn_predict_many(X[:200], y[:200])
    snap = model.snapshot()
    want = gram_rbf(X[200:], snap["X"]) @ snap["alpha"]
    np.testing.assert_allclose(model.decision_many(X[200:]), want, rtol=0, atol=1e-10)


@pytest.mark.parametrize("seed", range(5))
def test_the_closed_form_is_the_two_variable_optimum(seed) -> None:
    """The four cases give the maximum of γℓ_t + dℓ_b − ½k_tγ² − ½k_b d² − wγd over the box
    (every KKT candidate of the box enumerated), on random conflicts."""
    rng = np.random.default_rng(seed)
    for _ in range(200):
        kt, kb = rng.uniform(0.2, 2.0, 2)
        w = -rng.uniform(0.0, 0.999) * np.sqrt(kt * kb)
        C = rng.uniform(0.1, 5.0)
        gb, lt, lb = rng.uniform(0, C), rng.uniform(0.01, 3.0), rng.uniform(0.0, 2.0)

        def h(g, d, lt=lt, lb=lb, kt=kt, kb=kb, w=w):
            return g * lt + d * lb - 0.5 * kt * g * g - 0.5 * kb * d * d - w * g * d

        cands = []
        for g, d in itertools.product([0.0, C, None], [0.0, C - gb, None]):
            if g is None and d is None:
                det = kt * kb - w * w
                g, d = (kb * lt - w * lb) / det, (kt * lb - w * lt) / det
            elif g is None:
                g = (lt - w * d) / kt
            elif d is None:
                d = (lb - w * g) / kb
            if -1e-12 <= g <= C + 1e-12 and -1e-12 <= d <= C - gb + 1e-12:
                cands.append(h(g, d))
        g, d = double_step(lt, lb, kt, kb, w, C, gb)
        assert -1e-12 <= g <= C + 1e-12 and -1e-12 <= d <= C - gb + 1e-12
        assert h(g, d) == pytest.approx(max(cands), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("base", ["duol", "alma2", "oisvm", "second_order_perceptron"])
def test_multiclass_one_vs_rest(base: str) -> None:
    """The binary online classifiers of issue 34 learn three classes through ovr."""
    assert ovr_error(base) < 0.1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("duol[C=0]", r"duol: C must be in \(0.0, inf\], got 0.0"),
        ("duol[C=-1]", r"duol: C must be in \(0.0, inf\]"),
        ("duol[rho=-0.1]", r"duol: rho must be in \[0.0, inf\], got -0.1"),
        ("alma2[alpha=0]", r"alma2: alpha must be in \(0.0, 1.0\], got 0.0"),
        ("alma2[alpha=1.5]", r"alma2: alpha must be in \(0.0, 1.0\], got 1.5"),
        ("alma2[B=0]", r"alma2: B must be in \(0.0, inf\], got 0.0"),
        ("alma2[C=-1]", r"alma2: C must be in \(0.0, inf\], got -1.0"),
        ("oisvm[C=0]", r"oisvm: C must be in \(0.0, inf\], got 0.0"),
        ("oisvm[eta=0]", r"oisvm: eta must be in \(0.0, inf\], got 0.0"),
        ("oisvm[eta=-1]", r"oisvm: eta must be in \(0.0, inf\]"),
        ("oisvm[newton_steps=0]", r"oisvm: newton_steps must be in \[1, inf\], got 0"),
    ],
)
def test_bad_parameters_are_one_line_errors(spec, message) -> None:
    """DUOL, ALMA₂ and OISVM (issue 34) refuse a parameter out of its range in one line."""
    assert_one_line_error(spec, message)


@pytest.mark.parametrize("name", ["duol", "alma2", "oisvm"])
def test_bad_labels_and_tasks_are_refused(data, name) -> None:
    """They learn two classes: a third label, or a regression task, is refused."""
    X, _ = data
    model = create(name, kernel="rbf", loss=None)
    with pytest.raises(ValueError, match=name):
        model.learn_predict_many(X[:3], np.array([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError):
        create(name, kernel="rbf", loss=None, task="regression")
