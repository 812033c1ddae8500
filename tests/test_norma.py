"""NORMA against a plain NumPy transcription, for every task, offsets and the ν-trick;
the truncation error of the circular buffer (spec claim C7); bad input.

The reference shrinks every coefficient explicitly and keeps the buffer as Python lists;
the learner shrinks lazily through one global scale and keeps a circular buffer.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import (
    NumpyRBF,
    create,
    make_loss,
    norma_reference,
    online_kernel_refusals,
    range_refusals,
    rbf_of,
    spec_options,
    task_data,
)
from kbench.core.registry import get_registry

GAMMA = 0.5


rbf = rbf_of(GAMMA)


def make(spec: str, loss: str, task: str = "binary", n_classes: int = 3, kernel: str | None = None):
    kernel = kernel or f"rbf[gamma={GAMMA}]"
    return create(spec, kernel=kernel, loss=loss, task=task, n_classes=n_classes)


def data(task: str, n: int = 300, d: int = 3, seed: int = 0):
    return task_data(task, n, d, seed)


CASES = [
    ("norma[eta=0.7,c=0.05,budget=25]", "hinge", "binary"),
    ("norma[eta=0.7,c=0.05,budget=25,schedule=inv_sqrt,offset=true]", "logistic", "binary"),
    ("norma[eta=0.5,c=0.1,budget=20,schedule=decay_tau,tau=10.0]", "squared_hinge", "binary"),
    # The lazy scale underflows and is folded.
    ("norma[eta=0.5,c=1.9,budget=20]", "hinge", "binary"),
    # ηc = 1 at t = 0.
    ("norma[eta=1.0,c=1.0,budget=20,schedule=decay_tau,tau=10.0]", "hinge", "binary"),
    ("norma[eta=0.5,c=0.05,budget=30,offset=true]", "multiclass_hinge", "multiclass"),
    ("norma[eta=0.5,c=0.05,budget=30,schedule=inv_sqrt]", "softmax", "multiclass"),
    ("norma[eta=0.3,c=0.05,budget=40,offset=true]", "eps_insensitive[epsilon=0.2]", "regression"),
    ("norma[eta=0.3,c=0.05,budget=40]", "huber[delta=0.5]", "regression"),
    ("norma[eta=0.5,c=0.1,budget=30]", "novelty_hinge[rho=0.5]", "novelty"),
    ("norma[eta=1.0,c=1.0,budget=40,nu=0.1,schedule=decay_tau,tau=10.0]", "hinge", "binary"),
    (
        "norma[eta=1.0,c=1.0,budget=40,nu=0.1,schedule=decay_tau,tau=100.0]",
        "multiclass_hinge",
        "multiclass",
    ),
    (
        "norma[eta=1.0,c=1.0,budget=40,nu=0.05,nu_rule=additive,eta_eps=0.5]",
        "novelty_hinge",
        "novelty",
    ),
    (
        "norma[eta=0.5,c=0.1,budget=40,nu=0.2,margin0=0.5,offset=true]",
        "eps_insensitive",
        "regression",
    ),
]


@pytest.mark.parametrize(
    ("spec", "loss", "task"),
    CASES,
    ids=[f"{t}-{loss_}-{i}" for i, (_, loss_, t) in enumerate(CASES)],
)
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_norma_matches_plain_reference(spec, loss, task, compiled) -> None:
    """Both paths of NORMA equal the plain algorithm: predictions, the final function, the
    offsets and the margin, through evictions."""
    X, y = data(task)
    algo = make(spec, loss, task)
    if compiled:
        pred = np.concatenate(
            [algo.learn_predict_many(X[:120], y[:120]), algo.learn_predict_many(X[120:], y[120:])]
        )
    else:
        pred = []
        for i in range(len(X)):
            x = X[i]
            pred.append(algo.predict_one(x))
            algo.learn_one(x, y[i])
        pred = np.array(pred)
    ref_pred, sv, coef, b, eps = norma_reference(
        X, y, loss=make_loss(loss), task=task, gamma=GAMMA, **spec_options(spec)
    )
    if task == "regression":
        assert np.allclose(pred, ref_pred, rtol=1e-9, atol=1e-10)
    else:
        assert np.array_equal(pred, ref_pred)
    snap = algo.snapshot()
    assert len(snap["alpha"]) == len(sv) and algo.stats()["n_support"] == len(sv)
    for z in np.random.default_rng(7).standard_normal((6, X.shape[1])):
        f_ref = sum(a * rbf(s, z) for s, a in zip(sv, coef, strict=True)) + b
        f_alg = (
            sum(a * rbf(s, z) for s, a in zip(snap["X"], snap["alpha"], strict=True)) + snap["b"]
        )
        assert np.allclose(f_alg, f_ref, rtol=1e-9, atol=1e-12)
    assert np.allclose(snap["b"], b, rtol=1e-12, atol=1e-14)
    assert snap["eps"] == pytest.approx(eps, rel=1e-10)


def test_multiclass_scores_are_a_coefficient_matrix() -> None:
    """Multiclass NORMA's scores are F = kᵀA with A the ω × C coefficient matrix: the
    decision vector equals the expansion of the snapshot's rows."""
    X, y = data("multiclass")
    algo = make("norma[eta=0.5,c=0.05,budget=30]", "multiclass_hinge", "multiclass")
    algo.learn_predict_many(X, y)
    snap = algo.snapshot()
    assert snap["alpha"].shape == (30, 3)
    z = X[5]
    k = np.array([rbf(s, z) for s in snap["X"]])
    assert np.allclose(algo.decision_one(z), k @ snap["alpha"], rtol=1e-10)
    assert algo.predict_one(z) == float(np.argmax(k @ snap["alpha"]))


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_truncation_error_shrinks_geometrically(loss) -> None:
    """C7: for a constant η with ηc < 1 the error of keeping ω terms, max_t |f_t^(ω)(x_t) −
    f_t^(∞)(x_t)|, is below the bound C·X·(1 − ηc)^ω / c and falls about like (1 − ηc)^ω."""
    eta, c = 0.5, 0.2
    X, y = data("binary", n=400)
    full = make(f"norma[eta={eta},c={c},budget=100000]", loss)
    f_full = []
    for i in range(len(X)):
        f_full.append(full.decision_one(X[i]))
        full.learn_predict_many(X[i : i + 1], y[i : i + 1])
    errors = {}
    for omega in (8, 16, 32, 64):
        algo = make(f"norma[eta={eta},c={c},budget={omega}]", loss)
        err = 0.0
        for i in range(len(X)):
            err = max(err, abs(algo.decision_one(X[i]) - f_full[i]))
            algo.learn_predict_many(X[i : i + 1], y[i : i + 1])
        errors[omega] = err
        # |ξ| ≤ 1 and k(x, x) = 1 for these losses and the RBF kernel.
        assert err <= (1 - eta * c) ** omega / c * (1 + 1e-9)
    assert errors[8] > errors[16] > errors[32] > errors[64] > 0.0
    # The rate per doubling of ω: on a log scale within a factor 2 of the predicted slope.
    slope = np.polyfit(list(errors), np.log(list(errors.values())), 1)[0]
    assert 0.5 * np.log(1 - eta * c) > slope > 2.0 * np.log(1 - eta * c)


def test_hinge_stores_only_margin_violators() -> None:
    """Only terms with ξ ≠ 0 enter the buffer: the number stored equals the violations."""
    X, y = data("binary", n=300)
    algo = make("norma[eta=0.5,c=0.01,budget=1000]", "hinge")
    algo.learn_predict_many(X, y)
    st = algo.stats()
    assert 0 < st["n_support"] == st["violations"] < len(X)


@pytest.mark.parametrize(
    ("spec", "loss", "task", "message"),
    [
        *online_kernel_refusals("norma"),
        *range_refusals(
            "norma",
            {
                "eta=2.0,c=0.6": "eta·c must be ≤ 1",
                "tau=0.0": "tau must be in (0",
                "margin0=-1.0": "margin0 must be in (0",
            },
        ),
        (
            "norma",
            "softmax",
            "regression",
            "norma: loss 'softmax' cannot be used for regression tasks",
        ),
        ("norma[nu=0.1]", "huber", "regression", "adapts the margin of loss 'eps_insensitive'"),
    ],
)
def test_bad_input_fails_at_construction(spec, loss, task, message) -> None:
    """Out-of-range parameters and unusable losses raise ValueError naming the problem."""
    with pytest.raises(ValueError) as err:
        make(spec, loss, task)
    assert message in str(err.value)


def test_novelty_hinge_with_nu_turns_the_trick_on() -> None:
    """The novelty hinge's own nu and rho start the ν-trick (margin0 = rho), as its
    documentation promises to learners that adapt the margin."""
    X, y = data("novelty", n=300)
    a = make(
        "norma[eta=1.0,c=1.0,schedule=decay_tau,tau=10.0]",
        "novelty_hinge[rho=0.3,nu=0.1]",
        "novelty",
    )
    b = make(
        "norma[eta=1.0,c=1.0,schedule=decay_tau,tau=10.0,nu=0.1,margin0=0.3]",
        "novelty_hinge",
        "novelty",
    )
    assert np.array_equal(a.learn_predict_many(X, y), b.learn_predict_many(X, y))
    assert a.stats()["eps"] == b.stats()["eps"] != 0.3


def test_python_only_loss_and_kernel_use_the_per_example_path() -> None:
    """A loss without a compiled form and a kernel written in NumPy run through the Python
    path (the loss plugin's derivative, NumPy kernel rows) and match their compiled twins."""
    from kbench.plugins.losses.multiclass import Softmax

    class PySoftmax(Softmax):
        """Softmax that declares no compiled form, so the learner runs the plugin's."""

        name = "py_softmax"

        def compiled_multiclass(self) -> None:
            return None

    reg = get_registry()
    X, y = data("multiclass")
    spec = "norma[eta=0.5,c=0.05,budget=30,offset=true,schedule=inv_sqrt]"
    ref = make(spec, "softmax", "multiclass")
    p_ref = ref.learn_predict_many(X, y)
    for kernel, loss in [
        (reg.create("kernel", f"rbf[gamma={GAMMA}]"), PySoftmax()),
        (NumpyRBF(gamma=GAMMA), reg.create("loss", "softmax")),
    ]:
        algo = reg.create(
            "algorithm", spec, kernel=kernel, loss=loss, task="multiclass", n_classes=3
        )
        assert not algo._compiled_block()
        assert np.array_equal(algo.learn_predict_many(X, y), p_ref)
        assert np.allclose(algo.snapshot()["alpha"], ref.snapshot()["alpha"], rtol=1e-9, atol=1e-12)
        assert np.array_equal(algo.predict_many(X[:50]), ref.predict_many(X[:50]))
