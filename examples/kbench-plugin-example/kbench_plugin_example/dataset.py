"""Two interleaved spirals: a seeded generator of a classic hard binary problem."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from kbench.api import Data, Dataset, check_range


class Spirals(Dataset):
    """Two interleaved spirals in the plane (Lang and Witbrock 1988), labels ±1.

    Each example picks a class, a position along that class's spiral (uniform in arc
    length, so the outer turns are not sparse) and Gaussian noise of standard
    deviation ``noise``. The training stream and the held-out sample are drawn
    independently from ``numpy.random.default_rng(seed)``: a seed fixes the data.

    Parameters
    ----------
    n_train
        Number of training examples.
    n_test
        Number of held-out examples (0 for none).
    noise
        Standard deviation of the noise added to each coordinate.
    turns
        Turns of each spiral.
    """

    name = "spirals"
    task = "binary"
    source = "generator"
    test_params: ClassVar[dict[str, Any]] = {"n_train": 200, "n_test": 50}

    def __init__(
        self, *, n_train: int = 1000, n_test: int = 500, noise: float = 0.05, turns: float = 1.5
    ) -> None:
        check_range("spirals", "n_train", n_train, low=1)
        check_range("spirals", "n_test", n_test, low=0)
        check_range("spirals", "noise", noise, low=0.0)
        check_range("spirals", "turns", turns, low=0.0, low_open=True)
        self.n_train = n_train
        self.n_test = n_test
        self.noise = noise
        self.turns = turns

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.choice([-1.0, 1.0], size=n)
        r = np.sqrt(rng.random(n))  # radius in (0, 1]; sqrt makes arc length uniform
        angle = 2.0 * np.pi * self.turns * r + np.where(y > 0, 0.0, np.pi)
        X = r[:, None] * np.column_stack([np.cos(angle), np.sin(angle)])
        return X + self.noise * rng.standard_normal((n, 2)), y

    def load(self, seed: int) -> Data:
        """Draw the training stream, then the held-out sample, from one seeded generator."""
        rng = np.random.default_rng(seed)
        X, y = self._draw(rng, self.n_train)
        X_test, y_test = self._draw(rng, self.n_test) if self.n_test else (None, None)
        return Data(
            X=X,
            y=y,
            task="binary",
            n_classes=2,
            X_test=X_test,
            y_test=y_test,
            class_names=("second spiral", "first spiral"),
        )

    def info(self) -> dict[str, Any]:
        """Size and shape, known without drawing anything."""
        return {"n": self.n_train, "d": 2, "classes": 2}
