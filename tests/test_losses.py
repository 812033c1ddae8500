"""Built-in losses: values, derivatives, flags, vectorisation and the compiled derivatives."""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers import make_loss
from kbench.core.components import TASKS, Loss
from kbench.core.registry import get_registry
from kbench.cython_core import _losses
from kbench.plugins.losses import _common

SCALAR = [
    "hinge",
    "logistic",
    "squared_hinge",
    "smooth_hinge",
    "ramp",
    "ramp[s=-2.5]",
    "ramp[s=0.5]",
    "zero_one",
    "squared",
    "eps_insensitive",
    "eps_insensitive[epsilon=0.5]",
    "huber",
    "huber[delta=0.3]",
    "novelty_hinge",
    "novelty_hinge[rho=0.4,nu=0.1]",
]
MULTICLASS = ["multiclass_hinge", "softmax", "multiclass_zero_one"]
ALL_BUILTIN = {
    "hinge",
    "logistic",
    "squared_hinge",
    "smooth_hinge",
    "ramp",
    "zero_one",
    "squared",
    "eps_insensitive",
    "huber",
    "novelty_hinge",
    "multiclass_hinge",
    "softmax",
    "multiclass_zero_one",
}


def kinks(loss: Loss) -> list[float]:
    """Score values (for y = +1 and, for regression, y = 0) where the loss has a kink."""
    name = loss.name
    if name in ("hinge", "squared_hinge"):
        return [1.0]
    if name == "smooth_hinge":
        return [-1.0, 1.0]
    if name == "ramp":
        return [loss.s, 1.0]
    if name == "zero_one":
        return [0.0]
    if name == "eps_insensitive":
        return [-loss.epsilon, loss.epsilon]
    if name == "huber":
        return [-loss.delta, loss.delta]
    if name == "novelty_hinge":
        return [loss.rho]
    return []


def label_grid(loss: Loss) -> list[float]:
    if "regression" in loss.tasks:
        return [0.0, 1.7, -2.3]
    return [1.0, -1.0]


def score_grid(loss: Loss, y: float) -> np.ndarray:
    """Scores in [-4, 4] at least 1e-3 away from every kink (kinks move with y)."""
    f = np.linspace(-4.0, 4.0, 401) + 0.00731
    if "regression" in loss.tasks:
        ks = [k + y for k in kinks(loss)]
    elif loss.name == "novelty_hinge":
        ks = kinks(loss)
    else:
        ks = [k / y for k in kinks(loss)]
    for k in ks:
        f = f[np.abs(f - k) > 1e-3]
    return f


# --------------------------------------------------------------------------------------------
# Registration and declared properties
# --------------------------------------------------------------------------------------------


def test_every_builtin_loss_is_registered():
    names = set(get_registry().names("loss"))
    assert names >= ALL_BUILTIN


@pytest.mark.parametrize("name", sorted(ALL_BUILTIN))
def test_declared_properties(name):
    cls = get_registry().entry("loss", name).cls
    loss = cls(**cls.test_params)
    assert (cls.__doc__ or "").strip()
    assert cls.tasks and set(cls.tasks) <= set(TASKS)
    assert isinstance(cls.smooth, bool) and isinstance(cls.has_second_derivative, bool)
    lip = loss.lipschitz
    assert isinstance(lip, float) and lip > 0.0
    if not cls.has_second_derivative:
        with pytest.raises(NotImplementedError):
            loss.second_derivative(0.3, 1.0 if "multiclass" not in cls.tasks else 0)


@pytest.mark.parametrize(
    "spec, tasks, smooth, second, lipschitz",
    [
        ("hinge", {"binary"}, False, False, 1.0),
        ("logistic", {"binary"}, True, True, 1.0),
        ("squared_hinge", {"binary"}, True, True, math.inf),
        ("smooth_hinge", {"binary"}, True, True, 1.0),
        ("ramp", {"binary"}, False, False, 1.0),
        ("zero_one", {"binary"}, False, False, math.inf),
        ("squared", {"regression", "binary"}, True, True, math.inf),
        ("eps_insensitive", {"regression"}, False, False, 1.0),
        ("huber[delta=2.5]", {"regression"}, True, True, 2.5),
        ("novelty_hinge", {"novelty"}, False, False, 1.0),
        ("multiclass_hinge", {"multiclass"}, False, False, math.sqrt(2.0)),
        ("softmax", {"multiclass"}, True, True, math.sqrt(2.0)),
        ("multiclass_zero_one", {"multiclass"}, False, False, math.inf),
    ],
)
def test_flags(spec, tasks, smooth, second, lipschitz):
    loss = make_loss(spec)
    assert set(loss.tasks) == tasks
    assert loss.smooth is smooth
    assert loss.has_second_derivative is second
    assert loss.lipschitz == lipschitz


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------

VALUES = [
    # (spec, f, y, value, derivative)
    ("hinge", 0.0, 1.0, 1.0, -1.0),
    ("hinge", 2.0, 1.0, 0.0, 0.0),
    ("hinge", 1.0, 1.0, 0.0, 0.0),
    ("hinge", 0.5, -1.0, 1.5, 1.0),
    ("logistic", 0.0, 1.0, math.log(2.0), -0.5),
    ("logistic", 2.0, -1.0, math.log1p(math.exp(2.0)), 1.0 / (1.0 + math.exp(-2.0))),
    ("logistic", 800.0, 1.0, 0.0, 0.0),
    ("logistic", -800.0, 1.0, 800.0, -1.0),
    ("squared_hinge", 0.0, 1.0, 1.0, -2.0),
    ("squared_hinge", -1.0, 1.0, 4.0, -4.0),
    ("squared_hinge", 0.5, -1.0, 2.25, 3.0),
    ("squared_hinge", 3.0, 1.0, 0.0, 0.0),
    ("smooth_hinge", 0.0, 1.0, 0.25, -0.5),
    ("smooth_hinge", -1.0, 1.0, 1.0, -1.0),
    ("smooth_hinge", -3.0, 1.0, 3.0, -1.0),
    ("smooth_hinge", 0.5, 1.0, 0.0625, -0.25),
    ("smooth_hinge", 0.5, -1.0, 0.5625, 0.75),
    ("smooth_hinge", 1.0, 1.0, 0.0, 0.0),
    ("smooth_hinge", 4.0, -1.0, 4.0, 1.0),
    # The unit values of the ramp SVM paper (s = −1).
    ("ramp", 2.0, 1.0, 0.0, 0.0),
    ("ramp", 1.0, 1.0, 0.0, 0.0),
    ("ramp", 0.0, 1.0, 1.0, -1.0),
    ("ramp", -1.0, 1.0, 2.0, -1.0),
    ("ramp", -5.0, 1.0, 2.0, 0.0),
    ("ramp", 0.5, -1.0, 1.5, 1.0),
    ("ramp[s=0]", -0.5, 1.0, 1.0, 0.0),
    ("ramp[s=0]", 0.25, 1.0, 0.75, -1.0),
    ("ramp[s=-3]", -2.0, 1.0, 3.0, -1.0),
    ("ramp[s=-3]", -7.0, 1.0, 4.0, 0.0),
    ("zero_one", 0.3, 1.0, 0.0, 0.0),
    ("zero_one", -0.3, 1.0, 1.0, 0.0),
    ("zero_one", 0.0, 1.0, 0.0, 0.0),
    ("zero_one", 0.0, -1.0, 1.0, 0.0),
    ("zero_one", -2.0, -1.0, 0.0, 0.0),
    ("squared", 3.0, 1.0, 2.0, 2.0),
    ("squared", -0.5, 1.5, 2.0, -2.0),
    ("squared", 0.0, 0.0, 0.0, 0.0),
    ("eps_insensitive", 1.0, 1.05, 0.0, 0.0),
    ("eps_insensitive", 2.0, 1.0, 0.9, 1.0),
    ("eps_insensitive", -1.0, 1.0, 1.9, -1.0),
    ("eps_insensitive[epsilon=0]", 0.5, 1.0, 0.5, -1.0),
    ("huber", 0.5, 0.0, 0.125, 0.5),
    ("huber", 3.0, 0.0, 2.5, 1.0),
    ("huber", -3.0, 1.0, 3.5, -1.0),
    ("huber[delta=0.5]", 2.0, 0.0, 0.875, 0.5),
    ("huber[delta=0.5]", 0.2, 0.0, 0.02, 0.2),
    ("novelty_hinge", 0.2, 0.0, 0.8, -1.0),
    ("novelty_hinge", 1.5, 0.0, 0.0, 0.0),
    ("novelty_hinge", 1.0, 0.0, 0.0, 0.0),
    ("novelty_hinge[rho=0.5,nu=0.2]", -1.0, 0.0, 1.4, -1.0),
    ("novelty_hinge[rho=0.5,nu=0.2]", 2.0, 0.0, -0.1, 0.0),
    # Labels are ignored in novelty detection.
    ("novelty_hinge", 0.2, -1.0, 0.8, -1.0),
]


@pytest.mark.parametrize("spec, f, y, value, deriv", VALUES)
def test_values_and_derivatives(spec, f, y, value, deriv):
    loss = make_loss(spec)
    v = loss.value(f, y)
    d = loss.derivative(f, y)
    assert np.ndim(v) == 0 and np.ndim(d) == 0, "scalar inputs give scalar outputs"
    assert float(v) == pytest.approx(value, abs=1e-12)
    assert float(d) == pytest.approx(deriv, abs=1e-12)


SECOND = [
    ("logistic", 0.0, 1.0, 0.25),
    ("squared_hinge", 0.0, 1.0, 2.0),
    ("squared_hinge", 2.0, 1.0, 0.0),
    ("smooth_hinge", 0.0, 1.0, 0.5),
    ("smooth_hinge", 1.5, -1.0, 0.0),
    ("smooth_hinge", 0.9, -1.0, 0.5),
    ("smooth_hinge", -2.0, 1.0, 0.0),
    ("squared", 5.0, -3.0, 1.0),
    ("huber", 0.5, 0.0, 1.0),
    ("huber", 1.5, 0.0, 0.0),
]


@pytest.mark.parametrize("spec, f, y, expected", SECOND)
def test_second_derivative_values(spec, f, y, expected):
    assert float(make_loss(spec).second_derivative(f, y)) == pytest.approx(expected, abs=1e-12)


def test_ramp_is_difference_of_hinges():
    """R_s = H_1 − H_s, in value and (with each hinge's kink convention) in derivative."""
    z = np.concatenate([np.linspace(-5, 3, 161), [-2.0, 1.0]])
    for s in (-1.0, -2.0, 0.0, 0.5):
        ramp = make_loss(f"ramp[s={s}]")
        for y in (1.0, -1.0):
            f = z / y
            h1 = np.maximum(0.0, 1.0 - z)
            hs = np.maximum(0.0, s - z)
            assert np.allclose(ramp.value(f, y), h1 - hs, atol=1e-12)
            d1 = np.where(z < 1.0, -y, 0.0)
            ds = np.where(z < s, -y, 0.0)
            assert np.array_equal(ramp.derivative(f, y), d1 - ds)
            assert np.all(ramp.value(f, y) <= 1.0 - s + 1e-12)


def test_smooth_hinge_is_continuously_differentiable():
    loss = make_loss("smooth_hinge")
    for z in (-1.0, 1.0):
        for y in (1.0, -1.0):
            f = z / y
            lo, hi = f - 1e-9, f + 1e-9
            assert loss.value(lo, y) == pytest.approx(loss.value(hi, y), abs=1e-8)
            assert loss.derivative(lo, y) == pytest.approx(loss.derivative(hi, y), abs=1e-8)


def test_losses_are_stable_at_extreme_scores():
    # Underflow to 0 is the right answer here; overflow or NaN would be a bug.
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        assert make_loss("logistic").value(1e4, -1.0) == pytest.approx(1e4)
        assert make_loss("logistic").derivative(-1e4, 1.0) == pytest.approx(-1.0)
        assert make_loss("softmax").value(np.array([1e4, 0.0, -1e4]), 2) == pytest.approx(2e4)
        assert np.allclose(make_loss("softmax").derivative(np.array([1e4, 0.0, -1e4]), 0), 0.0)


# --------------------------------------------------------------------------------------------
# Derivatives against finite differences
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SCALAR)
def test_derivative_matches_finite_differences(spec):
    loss = make_loss(spec)
    h = 1e-6
    for y in label_grid(loss):
        f = score_grid(loss, y)
        numeric = (loss.value(f + h, y) - loss.value(f - h, y)) / (2 * h)
        assert np.allclose(loss.derivative(f, y), numeric, atol=1e-6, rtol=1e-6), (spec, y)
        if loss.has_second_derivative:
            numeric2 = (loss.derivative(f + h, y) - loss.derivative(f - h, y)) / (2 * h)
            second = loss.second_derivative(f, y)
            assert np.allclose(second, numeric2, atol=1e-5, rtol=1e-5), (spec, y)


@pytest.mark.parametrize("spec", SCALAR)
def test_derivative_bounded_by_lipschitz(spec):
    loss = make_loss(spec)
    lip = loss.lipschitz
    for y in label_grid(loss):
        f = np.linspace(-50.0, 50.0, 1001)
        g = np.abs(loss.derivative(f, y))
        if np.isfinite(lip):
            assert g.max() <= lip + 1e-12
            # The constant is tight: some score attains it (zero-one has none to attain).
            assert g.max() == pytest.approx(lip)
        elif loss.name != "zero_one":
            assert g.max() > 10.0, "a loss declared non-Lipschitz has unbounded slope"


@pytest.mark.parametrize("spec", SCALAR)
def test_smooth_flag_matches_derivative_continuity(spec):
    loss = make_loss(spec)
    jumps = []
    for y in label_grid(loss)[:1]:
        for k in kinks(loss):
            if "regression" in loss.tasks:
                f = k + y
            else:
                f = k if loss.name == "novelty_hinge" else k / y
            up, down = loss.derivative(f + 1e-9, y), loss.derivative(f - 1e-9, y)
            jumps.append(abs(float(up) - float(down)))
    if loss.smooth:
        assert all(j < 1e-6 for j in jumps)
    elif loss.name != "zero_one":
        assert jumps and max(jumps) > 0.1


@pytest.mark.parametrize("spec", SCALAR)
def test_vectorised_equals_elementwise(spec):
    loss = make_loss(spec)
    y0 = label_grid(loss)
    rng = np.random.default_rng(3)
    f = rng.normal(scale=2.0, size=30)
    y = rng.choice(y0, size=30)
    v = loss.value(f, y)
    d = loss.derivative(f, y)
    assert v.shape == f.shape and d.shape == f.shape
    pairs = [(float(a), float(b)) for a, b in zip(f, y, strict=True)]
    assert np.array_equal(v, [loss.value(a, b) for a, b in pairs])
    assert np.array_equal(d, [loss.derivative(a, b) for a, b in pairs])
    # One label broadcast against a block of scores.
    assert loss.value(f, y0[0]).shape == f.shape


# --------------------------------------------------------------------------------------------
# Compiled derivatives
# --------------------------------------------------------------------------------------------


def test_compiled_ids_match_the_compiled_enum():
    python_ids = {k: v for k, v in vars(_common).items() if k.startswith("L_")}
    assert python_ids == _losses.LOSS_KINDS
    assert len(set(python_ids.values())) == len(python_ids)


def test_compiled_entry_rejects_unknown_kinds():
    with pytest.raises(ValueError, match="unknown compiled loss kind"):
        _losses.py_loss_deriv(len(_losses.LOSS_KINDS), 0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="unknown compiled loss kind"):
        _losses.py_loss_deriv(-1, 0.0, 1.0, 0.0)


COMPILED = [
    "hinge",
    "logistic",
    "squared_hinge",
    "smooth_hinge",
    "ramp",
    "ramp[s=0.25]",
    "ramp[s=-3]",
    "squared",
    "eps_insensitive",
    "eps_insensitive[epsilon=0.5]",
    "huber",
    "huber[delta=0.2]",
    "novelty_hinge",
    "novelty_hinge[rho=0.3]",
]


def test_every_compiled_loss_is_checked():
    have = {
        get_registry().entry("loss", n).cls.name
        for n in get_registry().names("loss")
        if make_loss(n).compiled() is not None
    }
    assert have == {make_loss(s).name for s in COMPILED}


@pytest.mark.parametrize("spec", COMPILED)
def test_compiled_derivative_equals_python(spec):
    loss = make_loss(spec)
    kind, p1 = loss.compiled()
    ys = label_grid(loss)
    # A grid that hits every kink exactly, so the conventions at kinks must agree too.
    f = np.concatenate([np.linspace(-4.0, 4.0, 161), [-1.0, 0.0, 1.0, 0.25, 0.3, 0.5, -0.5, -3.0]])
    for y in ys:
        extra = [k + y for k in kinks(loss)] + [k / y for k in kinks(loss) if y != 0.0]
        for fi in np.concatenate([f, extra]):
            expected = float(loss.derivative(fi, y))
            got = _losses.py_loss_deriv(kind, float(fi), y, p1)
            assert got == pytest.approx(expected, rel=1e-13, abs=1e-15), (spec, fi, y)


# --------------------------------------------------------------------------------------------
# Multiclass
# --------------------------------------------------------------------------------------------


def test_multiclass_hinge_values():
    loss = make_loss("multiclass_hinge")
    f = np.array([2.0, 0.5, 1.8])
    # true class 0: rival 2 at 1.8, margin 1 + 1.8 − 2 = 0.8
    assert loss.value(f, 0) == pytest.approx(0.8)
    assert np.array_equal(loss.derivative(f, 0), [-1.0, 0.0, 1.0])
    # true class 1: rival 0 at 2.0, 1 + 2 − 0.5 = 2.5
    assert loss.value(f, 1) == pytest.approx(2.5)
    assert np.array_equal(loss.derivative(f, 1), [1.0, -1.0, 0.0])
    # a margin above 1 costs nothing
    g = np.array([3.5, 0.5, 1.0])
    assert loss.value(g, 0) == 0.0
    assert np.array_equal(loss.derivative(g, 0), [0.0, 0.0, 0.0])
    # exactly at the kink: value 0 and derivative 0
    k = np.array([2.0, 1.0, 0.0])
    assert loss.value(k, 0) == 0.0
    assert not np.any(loss.derivative(k, 0))
    # ties between rivals go to the lowest index
    t = np.array([0.0, 1.0, 1.0, 1.0])
    assert np.array_equal(loss.derivative(t, 0), [-1.0, 1.0, 0.0, 0.0])
    assert np.array_equal(loss.derivative(t, 1), [0.0, -1.0, 1.0, 0.0])


def test_softmax_values():
    loss = make_loss("softmax")
    f = np.array([1.0, 2.0, 3.0])
    lse = math.log(math.exp(1) + math.exp(2) + math.exp(3))
    p = np.exp(f) / np.exp(f).sum()
    for y in range(3):
        assert loss.value(f, y) == pytest.approx(lse - f[y])
        assert np.allclose(loss.derivative(f, y), p - np.eye(3)[y])
        assert loss.derivative(f, y).sum() == pytest.approx(0.0, abs=1e-15)
    assert np.allclose(loss.second_derivative(f, 0), np.diag(p) - np.outer(p, p))
    assert loss.value(np.zeros(4), 2) == pytest.approx(math.log(4.0))


def test_multiclass_zero_one_values():
    loss = make_loss("multiclass_zero_one")
    f = np.array([[0.1, 0.9, 0.2], [1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    assert np.array_equal(loss.value(f, [1, 0, 1]), [0.0, 0.0, 1.0])
    assert np.array_equal(loss.derivative(f, [1, 0, 1]), np.zeros((3, 3)))


def _multiclass_points():
    rng = np.random.default_rng(7)
    F = rng.normal(scale=1.5, size=(40, 4))
    y = rng.integers(0, 4, size=40)
    return F, y


@pytest.mark.parametrize("spec", MULTICLASS)
def test_multiclass_gradient_matches_finite_differences(spec):
    loss = make_loss(spec)
    F, y = _multiclass_points()
    h = 1e-6
    checked = 0
    for f, c in zip(F, y, strict=True):
        if loss.name == "multiclass_hinge":
            rival = np.sort(np.delete(f, c))
            margin = 1.0 + rival[-1] - f[c]
            # away from the kink and from ties between the top rivals
            if abs(margin) < 1e-3 or rival[-1] - rival[-2] < 1e-3:
                continue
        if loss.name == "multiclass_zero_one" and np.sort(f)[-1] - np.sort(f)[-2] < 1e-3:
            continue
        g = loss.derivative(f, int(c))
        assert g.shape == f.shape
        num = np.array(
            [
                (loss.value(f + h * e, int(c)) - loss.value(f - h * e, int(c))) / (2 * h)
                for e in np.eye(len(f))
            ]
        )
        assert np.allclose(g, num, atol=1e-6), (f, c)
        assert np.linalg.norm(g) <= loss.lipschitz + 1e-12
        if loss.has_second_derivative:
            H = loss.second_derivative(f, int(c))
            numH = np.array(
                [
                    (loss.derivative(f + h * e, int(c)) - loss.derivative(f - h * e, int(c)))
                    / (2 * h)
                    for e in np.eye(len(f))
                ]
            )
            assert H.shape == (4, 4)
            assert np.allclose(H, numH, atol=1e-5)
            assert np.linalg.eigvalsh(H).min() > -1e-12
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize("spec", MULTICLASS)
def test_multiclass_batches_equal_rows(spec):
    loss = make_loss(spec)
    F, y = _multiclass_points()
    v = loss.value(F, y)
    d = loss.derivative(F, y)
    assert v.shape == (40,) and d.shape == F.shape
    assert np.array_equal(v, [loss.value(f, c) for f, c in zip(F, y, strict=True)])
    assert np.array_equal(d, np.array([loss.derivative(f, c) for f, c in zip(F, y, strict=True)]))
    # Stream labels are float64: integral floats are accepted.
    assert np.array_equal(loss.value(F, y.astype(float)), v)
    if loss.has_second_derivative:
        H = loss.second_derivative(F, y)
        assert H.shape == (40, 4, 4)
        assert np.allclose(H[5], loss.second_derivative(F[5], y[5]))


@pytest.mark.parametrize("spec", MULTICLASS)
@pytest.mark.parametrize(
    "f, y",
    [
        (np.zeros(3), 3),
        (np.zeros(3), -1),
        (np.zeros(3), 0.5),
        (np.zeros(3), [0, 1]),
        (np.zeros((2, 3)), [0, 1, 2]),
        (np.zeros(1), 0),
        (np.zeros((2, 2, 2)), 0),
    ],
)
def test_multiclass_bad_inputs(spec, f, y):
    with pytest.raises(ValueError):
        make_loss(spec).value(f, y)


def test_multiclass_hinge_upper_bounds_zero_one():
    F, y = _multiclass_points()
    assert np.all(
        make_loss("multiclass_hinge").value(F, y) >= make_loss("multiclass_zero_one").value(F, y)
    )
    errors = make_loss("multiclass_zero_one").value(F, y)
    assert np.all(make_loss("softmax").value(F, y) / math.log(2.0) >= errors)


# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------


def test_parameters_are_stored_and_round_trip():
    for spec, params in [
        ("ramp[s=-0.5]", {"s": -0.5}),
        ("eps_insensitive[epsilon=0.3]", {"epsilon": 0.3}),
        ("huber[delta=2.0]", {"delta": 2.0}),
        ("novelty_hinge[nu=0.05,rho=0.5]", {"rho": 0.5, "nu": 0.05}),
    ]:
        loss = make_loss(spec)
        assert loss.get_params() == params
        assert loss.spec() == spec
        assert make_loss(loss.spec()).get_params() == params


@pytest.mark.parametrize(
    "spec, task",
    [
        ("huber[delta=0.3]", "regression"),
        ("eps_insensitive", "regression"),
        ("ramp", "binary"),
        ("smooth_hinge", "binary"),
        ("squared_hinge", "binary"),
    ],
)
def test_compiled_learner_agrees_with_python_learner(spec, task):
    """NORMA's compiled block loop (compiled derivative) and its one-by-one path (Python
    derivative) make the same predictions, so the compiled id selects the same loss."""
    reg = get_registry()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=200) if task == "regression" else np.sign(X[:, 1] + 1e-9)

    def learner():
        return reg.create(
            "algorithm",
            "norma",
            kernel=reg.create("kernel", "rbf[gamma=0.5]"),
            loss=make_loss(spec),
            task=task,
            n_classes=2,
            seed=0,
        )

    fast = learner().learn_predict_many(X, y)
    slow_learner = learner()
    slow = []
    for x, t in zip(X, y, strict=True):
        slow.append(slow_learner.predict_one(x))
        slow_learner.learn_one(x, t)
    assert np.allclose(fast, slow, rtol=1e-10, atol=1e-12)
    assert slow_learner.stats()["n_support"] > 0
