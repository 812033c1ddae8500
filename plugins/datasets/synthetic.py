"""Seeded generators of synthetic classification streams."""

from __future__ import annotations

import numpy as np

from kbench import hookimpl
from kbench.components import Data, Dataset, check_range


class Checkerboard(Dataset):
    """Checkerboard: x ~ U[0, 1)², y = +1 on the white squares of a k×k board, else −1.

    A non-linear task that a linear learner cannot solve. ``noise`` flips that fraction of
    the training labels; the held-out test split (``n_test`` examples) stays clean.

    Parameters
    ----------
    n
        Number of training examples.
    n_test
        Number of clean test examples (0 for none).
    k
        Squares per side.
    noise
        Label-flip rate of the training stream, in [0, 0.5].
    """

    name = "checkerboard"
    task = "binary"
    source = "generator"
    test_params = {"n": 300, "n_test": 100}

    def __init__(self, *, n: int = 10000, n_test: int = 2000, k: int = 4, noise: float = 0.0) -> None:
        check_range("checkerboard", "n", n, low=1)
        check_range("checkerboard", "n_test", n_test, low=0)
        check_range("checkerboard", "k", k, low=1)
        check_range("checkerboard", "noise", noise, low=0.0, high=0.5)
        self.n, self.n_test, self.k, self.noise = n, n_test, k, noise

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        X = rng.random((n, 2))
        cells = np.floor(self.k * X).astype(int).sum(axis=1)
        return X, np.where(cells % 2 == 0, 1.0, -1.0)

    def load(self, seed: int) -> Data:  # noqa: D102
        rng = np.random.default_rng(seed)
        X, y = self._draw(rng, self.n)
        flip = rng.random(self.n) < self.noise
        y[flip] = -y[flip]
        Xt, yt = self._draw(rng, self.n_test) if self.n_test else (None, None)
        return Data(X=X, y=y, X_test=Xt, y_test=yt, task="binary", n_classes=2)

    def info(self):  # noqa: D102
        return {"n": self.n, "n_test": self.n_test, "d": 2, "classes": 2}


class Twonorm(Dataset):
    """Breiman's twonorm: class ±1 drawn from N(±a·1, I) in d dimensions, a = 2/√d.

    Parameters
    ----------
    n
        Number of training examples.
    n_test
        Number of test examples (0 for none).
    d
        Dimension.
    """

    name = "twonorm"
    task = "binary"
    source = "generator"
    test_params = {"n": 300, "n_test": 100}

    def __init__(self, *, n: int = 5000, n_test: int = 2000, d: int = 20) -> None:
        check_range("twonorm", "n", n, low=1)
        check_range("twonorm", "n_test", n_test, low=0)
        check_range("twonorm", "d", d, low=1)
        self.n, self.n_test, self.d = n, n_test, d

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        X = rng.standard_normal((n, self.d)) + (2.0 / np.sqrt(self.d)) * y[:, None]
        return X, y

    def load(self, seed: int) -> Data:  # noqa: D102
        rng = np.random.default_rng(seed)
        X, y = self._draw(rng, self.n)
        Xt, yt = self._draw(rng, self.n_test) if self.n_test else (None, None)
        return Data(X=X, y=y, X_test=Xt, y_test=yt, task="binary", n_classes=2)

    def info(self):  # noqa: D102
        return {"n": self.n, "n_test": self.n_test, "d": self.d, "classes": 2}


@hookimpl
def kbench_register_datasets(register):
    """Register the generators."""
    register(Checkerboard)
    register(Twonorm)
