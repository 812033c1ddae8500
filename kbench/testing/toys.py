"""The small streams and test instances the checks run on; public for plugin authors' tests."""

from __future__ import annotations

import numpy as np

from kbench.core.components import Algorithm, Loss
from kbench.core.registry import Registry
from kbench.data.streams import Stream, StreamSpec
from kbench.data.streams.arrays import readonly
from kbench.testing.checks import CONFIGURED, make, params_of


def toy_stream(task: str, n: int = 160, d: int = 5, seed: int = 0) -> Stream:
    """A small read-only stream of the given task for checks and tests."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Xt = rng.standard_normal((40, d))
    n_classes = 2
    if task == "multiclass":
        n_classes = 3
        centers = rng.standard_normal((3, d)) * 2
        y, yt = rng.integers(0, 3, n).astype(float), rng.integers(0, 3, 40).astype(float)
        X, Xt = X + centers[y.astype(int)], Xt + centers[yt.astype(int)]
    elif task == "regression":
        y, yt = np.sin(X[:, 0]) + 0.1 * X[:, 1], np.sin(Xt[:, 0]) + 0.1 * Xt[:, 1]
    elif task == "novelty":
        y, yt = np.ones(n), np.ones(40)
    else:
        y, yt = (
            np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.3, 1.0, -1.0),
            np.where(Xt[:, 0] + 0.5 * Xt[:, 1] ** 2 > 0.3, 1.0, -1.0),
        )
    X_ro, y_ro, Xt_ro, yt_ro = (readonly(a) for a in (X, y, Xt, yt))
    assert X_ro is not None and y_ro is not None  # read-only copies of the arrays above
    spec = StreamSpec(dataset=f"toy-{task}", seed=seed)
    return Stream.of(spec, (X_ro, y_ro, Xt_ro, yt_ro, task, n_classes))


def _loss_for(cls: type[Algorithm], task: str, registry: Registry) -> Loss | None:
    if not cls.uses_loss:
        return None
    names = ([cls.default_loss] if cls.default_loss else []) + registry.names("loss")
    for name in names:
        loss = make(registry.entry("loss", name).cls)
        if task in loss.tasks:
            return loss
    raise AssertionError(f"algorithm {cls.name!r}: no registered loss supports its task {task}")


def make_test_algorithm(
    cls: type[Algorithm], task: str, registry: Registry, seed: int = 0
) -> Algorithm:
    """Construct an algorithm with its test parameters, an RBF kernel and a suitable loss."""
    config = (CONFIGURED.get() or {}).get(cls, {})
    kernel = None
    if cls.uses_kernel:
        kernel = config.get("kernel") or registry.create("kernel", "rbf[gamma=0.3]")
    stream = toy_stream(task)
    return cls(
        **params_of(cls),
        kernel=kernel,
        loss=_loss_for(cls, task, registry),
        task=task,
        n_classes=stream.n_classes,
        seed=seed,
    )
