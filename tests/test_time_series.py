"""The time-series and drifting regression streams (issue 34's data): Mackey–Glass and
Lorenz integrated by the compiled Runge–Kutta against independent transcriptions and
solvers, their embedding, their order, and the drifting regression target."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from test_datasets import REG, load, stream

from kbench.core.errors import SpecError
from kbench.core.seeds import derive_seed
from kbench.cython_core._time_series import lorenz, mackey_glass


def mackey_glass_python(x0: float, k: int, n: int, every: int, washout: int, h: float):
    """The compiled integrator's scheme, transcribed: RK4, the delayed value at the half
    step the mean of its grid neighbours, a constant history x0."""
    f = lambda x, d: 0.2 * d / (1.0 + d**10.0) - 0.1 * x  # noqa: E731
    grid = [x0] * (k + 1)  # x at t − τ, ..., t
    x, out = x0, []
    for i in range(1, washout + n * every + 1):
        d0, d1 = grid[-k - 1], grid[-k]
        dm = 0.5 * (d0 + d1)
        k1 = f(x, d0)
        k2 = f(x + 0.5 * h * k1, dm)
        k3 = f(x + 0.5 * h * k2, dm)
        k4 = f(x + h * k3, d1)
        x = x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        grid.append(x)
        if i > washout and (i - washout) % every == 0:
            out.append(x)
    return np.array(out)


def test_mackey_glass_is_the_transcribed_scheme() -> None:
    # The same operations in the same order in C and in Python; the tolerance covers a
    # compiler that contracts a multiply-add (a few ulps, grown over 3 000 steps).
    ours = mackey_glass(1.2, 170, 300, 10, 0, 0.1)
    ref = mackey_glass_python(1.2, 170, 300, 10, 0, 0.1)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-9)


def test_mackey_glass_converges_to_a_finer_step() -> None:
    """Step 0.1 against step 0.01 of the same scheme over 60 time units of τ = 17: the
    scheme converges (its error shrinks with the step), so the two agree closely."""
    coarse = mackey_glass(1.2, 170, 60, 10, 0, 0.1)
    fine = mackey_glass(1.2, 1700, 60, 100, 0, 0.01)
    assert np.abs(coarse - fine).max() < 1e-4


def test_mackey_glass_series_stays_on_its_attractor() -> None:
    s = mackey_glass(1.2, 300, 5000, 60, 10000, 0.1)  # τ = 30 sampled every 6
    assert s.min() > 0.15 and s.max() < 1.5
    assert 0.85 < s.mean() < 0.95  # the attractor's mean, ≈ 0.9 for τ = 17 and 30
    assert s.std() > 0.15  # chaotic, not at the fixed point x = 1


def test_lorenz_converges_at_fourth_order_to_an_adaptive_solver() -> None:
    """Against DOP853 at 1e-13 over one time unit: halving the step divides the error by
    about 16 (a fourth-order scheme; measured 16.3, 16.1, 16.1), and it is below 1e-6 at
    step 0.00125."""
    sol = solve_ivp(
        lambda t, s: [10 * (s[1] - s[0]), s[0] * (28 - s[2]) - s[1], s[0] * s[1] - 8 / 3 * s[2]],
        (0.0, 1.0),
        [1.0, 1.0, 1.0],
        method="DOP853",
        rtol=1e-13,
        atol=1e-13,
        t_eval=np.arange(1, 101) * 0.01,
    )
    errors = [
        np.abs(lorenz(1.0, 1.0, 1.0, 100, k, 0, 0.01 / k) - sol.y.T).max() for k in (1, 2, 4, 8)
    ]
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert (ratios > 12).all() and (ratios < 20).all(), ratios
    assert errors[-1] < 1e-6


@pytest.mark.parametrize(
    "spec", ["mackey_glass[", "mackey_glass[tau=17,sample_period=1,", "lorenz["]
)
def test_windows_are_the_series_embedded(spec: str) -> None:
    ds = REG.create("dataset", f"{spec}embedding=4,horizon=3,n_train=300,n_test=50]")
    d = ds.load(5)
    s = ds.series(np.random.default_rng(5), 350 + 4 - 1 + 3)
    X = np.vstack([d.X, d.X_test])
    y = np.concatenate([d.y, d.y_test])
    for i in (0, 1, 299, 300, 349):
        np.testing.assert_array_equal(X[i], s[i : i + 4][::-1])  # most recent first
        assert y[i] == s[i + 3 + 3]
    assert d.task == "regression" and d.X.shape == (300, 4) and d.X_test.shape == (50, 4)


def test_seeds_give_other_series_and_noise_is_added() -> None:
    a, b = load("mackey_glass[n_train=200]", 0), load("mackey_glass[n_train=200]", 1)
    assert not np.array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.y, load("mackey_glass[n_train=200]", 0).y)
    noisy = load("mackey_glass[n_train=4000,n_test=0,noise=0.1]", 0)
    clean = load("mackey_glass[n_train=4000,n_test=0]", 0)
    assert abs((noisy.y - clean.y).std() - 0.1) < 0.005


def test_time_series_keep_their_order_in_a_stream() -> None:
    spec = "lorenz[n_train=500,n_test=0]"
    s = stream(spec, seed=3)
    assert s.spec.order == "shuffle"
    np.testing.assert_array_equal(s.X, load(spec, derive_seed(3, "data")).X)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("mackey_glass[tau=17.05]", "tau=17.05 must be a multiple of step=0.1"),
        ("mackey_glass[sample_period=0.25]", "sample_period=0.25 must be a multiple"),
        ("lorenz[washout=0.005]", "washout=0.005 must be a multiple of step=0.01"),
        ("mackey_glass[embedding=0]", "embedding"),
        ("drift_regression[kind=gradual,drift_at=0.5]", "kind=gradual takes drift_at=START|END"),
        ("drift_regression[drift_at=0.6|0.5]", "change points must increase"),
    ],
)
def test_bad_specs_are_one_line_errors(spec: str, message: str) -> None:
    with pytest.raises(SpecError, match=message.replace("|", r"\|")) as err:
        REG.create("dataset", spec)
    assert "\n" not in str(err.value)


def test_drift_regression_turns_abruptly_or_gradually() -> None:
    ds = REG.create("dataset", "drift_regression[n_train=1000,drift_at=0.5,noise=0]")
    d = ds.load(0)
    np.testing.assert_allclose(d.y[:500], np.sin(2 * d.X[:500, 0]), atol=1e-12)
    np.testing.assert_allclose(d.y[500:], np.sin(2 * d.X[500:, 1]), atol=1e-12)
    np.testing.assert_allclose(d.y_test, np.sin(2 * d.X_test[:, 1]), atol=1e-12)
    gradual = REG.create("dataset", "drift_regression[kind=gradual,drift_at=200|600,angle=90]")
    theta = gradual.angles()
    assert theta[:201].max() == 0 and np.allclose(theta[600:], np.pi / 2)
    assert np.allclose(np.diff(theta[200:601]), np.pi / 2 / 400)
    noisy = REG.create("dataset", "drift_regression[n_train=20000,noise=0.3]").load(1)
    resid = noisy.y - ds.target(noisy.X, REG.create("dataset", "drift_regression").angles()[0])
    assert abs(resid[:10000].std() - 0.3) < 0.01  # before the change: only the noise
