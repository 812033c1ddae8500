"""The checks of kernels, losses and data sets."""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.core.components import Dataset, Kernel, Loss
from kbench.core.registry import Registry
from kbench.testing.checks import conformance_check, make


@conformance_check("kernel")
def check_kernel_consistency(cls: type[Kernel], registry: Registry) -> None:
    """row equals the matrix's rows, diag its diagonal; the Gram matrix is symmetric PSD."""
    k = make(cls)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((12, 4)) * 0.5
    x = rng.standard_normal(4) * 0.5
    K = np.asarray(k.matrix(A, A))
    assert K.shape == (12, 12), f"kernel {cls.name!r}: matrix shape {K.shape}"
    assert np.allclose(K, K.T, atol=1e-10), f"kernel {cls.name!r}: Gram matrix not symmetric"
    assert np.linalg.eigvalsh(K).min() > -1e-8 * max(1.0, np.abs(K).max()), (
        f"kernel {cls.name!r}: Gram matrix not PSD"
    )
    for i in (0, 5, 11):
        assert np.allclose(k.row(A, A[i]), K[:, i], atol=1e-10), (
            f"kernel {cls.name!r}: row != matrix column"
        )
    assert np.allclose(k.row(A, x), np.asarray(k.matrix(A, x[None, :]))[:, 0], atol=1e-10), (
        f"kernel {cls.name!r}: row(S, x) != matrix(S, [x])"
    )
    d = np.asarray(k.diag(A))
    assert np.allclose(d, np.diag(K), atol=1e-10), f"kernel {cls.name!r}: diag != matrix diagonal"
    if cls.constant_diagonal:
        assert np.allclose(d, d[0]), (
            f"kernel {cls.name!r}: declares a constant diagonal but it varies"
        )
    assert k.row(A[:0], x).shape == (0,), (
        f"kernel {cls.name!r}: a row against no vectors must be empty"
    )


# --------------------------------------------------------------------------------------------
# Losses
# --------------------------------------------------------------------------------------------


def _loss_points(loss: Loss) -> list[tuple[Any, Any]]:
    rng = np.random.default_rng(1)
    if "multiclass" in loss.tasks:
        return [(rng.standard_normal(4) * 2, int(rng.integers(4))) for _ in range(20)]
    if "regression" in loss.tasks:
        return [(float(f), float(y)) for f, y in rng.standard_normal((20, 2)) * 2]
    return [
        (float(f), float(y))
        for f, y in zip(rng.standard_normal(20) * 2, rng.choice([-1.0, 1.0], 20), strict=True)
    ]


@conformance_check("loss")
def check_loss_derivatives(cls: type[Loss], registry: Registry) -> None:
    """Derivatives match central finite differences wherever the loss is differentiable."""
    loss = make(cls)
    h = 1e-6
    for f, y in _loss_points(loss):
        v = np.asarray(loss.value(f, y), dtype=float)
        assert np.all(np.isfinite(v)), f"loss {cls.name!r}: value {v} at f={f}, y={y}"
        g = np.asarray(loss.derivative(f, y), dtype=float)
        f_arr = np.atleast_1d(np.asarray(f, dtype=float))
        g_arr = np.atleast_1d(g)
        assert g_arr.shape == f_arr.shape, (
            f"loss {cls.name!r}: derivative shape {g_arr.shape} != score shape {f_arr.shape}"
        )
        for j in range(len(f_arr)):
            e = np.zeros_like(f_arr)
            e[j] = h
            fp, fm = (f_arr + e), (f_arr - e)
            up = float(loss.value(fp if f_arr.size > 1 else float(fp[0]), y))
            dn = float(loss.value(fm if f_arr.size > 1 else float(fm[0]), y))
            mid = float(v)
            fwd, bwd = (up - mid) / h, (mid - dn) / h
            if abs(fwd - bwd) > 1e-4 * max(1.0, abs(fwd)):
                continue  # a kink: no derivative to compare with
            assert abs(g_arr[j] - (up - dn) / (2 * h)) < 1e-4 * max(1.0, abs(g_arr[j])), (
                f"loss {cls.name!r}: derivative {g_arr[j]} != finite difference {(up - dn) / (2 * h)} at f={f}, y={y}"
            )
        lip = loss.lipschitz
        if np.isfinite(lip):
            assert np.all(np.abs(g_arr) <= lip * (1 + 1e-9) + 1e-12) or f_arr.size > 1, (
                f"loss {cls.name!r}: |derivative| {np.abs(g_arr).max()} exceeds its Lipschitz constant {lip}"
            )
        if cls.has_second_derivative and f_arr.size == 1:
            s = float(loss.second_derivative(f, y))
            num = (float(loss.derivative(f + h, y)) - float(loss.derivative(f - h, y))) / (2 * h)
            assert abs(s - num) < 1e-4 * max(1.0, abs(s)), (
                f"loss {cls.name!r}: second derivative {s} != {num}"
            )


# --------------------------------------------------------------------------------------------
# Data sets
# --------------------------------------------------------------------------------------------


@conformance_check("dataset")
def check_dataset(cls: type[Dataset], registry: Registry) -> None:
    """load is deterministic and consistent with the declared task and info()."""
    ds = make(cls)
    if ds.unavailable() is not None:
        why = ds.unavailable()
        assert isinstance(why, str) and why and "\n" not in why, (
            f"dataset {cls.name!r}: unavailable() must be one line"
        )
        return
    a, b = ds.load(0), ds.load(0)
    who = f"dataset {cls.name!r}"
    assert a.X.ndim == 2 and len(a.X) == len(a.y) > 0, (
        f"{who}: X {a.X.shape} and y {a.y.shape} do not match"
    )
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y), (
        f"{who}: load(seed) is not deterministic"
    )
    assert a.task == ds.task, f"{who}: loads a {a.task} task but declares {ds.task}"
    _check_labels(who, a.task, a.y, a.n_classes)
    if a.X_test is not None:
        assert a.X_test.shape[1] == a.X.shape[1], (
            f"{who}: test split has {a.X_test.shape[1]} columns, training {a.X.shape[1]}"
        )
        _check_labels(who, a.task, a.y_test, a.n_classes)
    info = ds.info()
    for key, actual in (("n", len(a.X)), ("d", a.X.shape[1]), ("classes", a.n_classes)):
        if (key in info and a.task in ("binary", "multiclass")) or (
            key in ("n", "d") and key in info
        ):
            assert info[key] == actual, (
                f"{who}: info() says {key}={info[key]} but the data have {actual}"
            )


def _check_labels(who: str, task: str, y: np.ndarray, n_classes: int) -> None:
    if task == "binary":
        assert set(np.unique(y)) <= {-1.0, 1.0}, (
            f"{who}: binary labels must be ±1, got {np.unique(y)[:5]}"
        )
    elif task == "multiclass":
        assert np.all((y >= 0) & (y < n_classes) & (y == np.round(y))), (
            f"{who}: multiclass labels must be 0..{n_classes - 1}"
        )
