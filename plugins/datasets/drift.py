"""Drifting streams: a concept that changes abruptly or gradually along the stream.

``drift`` is a classification stream whose linear concept changes at given positions;
``drift_regression`` a regression stream whose target turns abruptly or gradually.
Their order is their definition: both are ``time_ordered``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np

from kbench.api import hookimpl, param
from kbench.plugins.datasets._generator import Generator, flip


def change_points(owner: str, drift_at: str, n: int) -> list[int]:
    """The change points of ``drift_at`` (``|``-separated example indices or fractions of
    a stream of n examples) as strictly increasing indices inside the stream."""
    points: list[int] = []
    for tok in str(drift_at).replace(";", "|").split("|"):
        tok = tok.strip()
        if not tok:
            continue
        try:
            v = float(tok)
        except ValueError:
            raise ValueError(f"{owner}: drift_at entry {tok!r} is not a number") from None
        if not np.isfinite(v):
            raise ValueError(f"{owner}: drift_at entry {tok!r} is not finite")
        i = round(v * n) if 0.0 < v < 1.0 else int(v)
        if v != int(v) and not 0.0 < v < 1.0:
            raise ValueError(
                f"{owner}: drift_at entry {tok!r} must be an index or a fraction in (0, 1)"
            )
        if not 0 < i < n:
            raise ValueError(f"{owner}: change point {tok!r} is outside the stream (1..{n - 1})")
        if points and i <= points[-1]:
            raise ValueError(f"{owner}: change points must increase ({i} after {points[-1]})")
        points.append(i)
    return points


class Drift(Generator):
    """A drifting stream: a linear concept that changes abruptly at given positions.

    x ~ N(0, I_d). Concept k (after the k-th change point) labels y = sign(w_k·x), with
    w_k the unit normal rotated by k·angle degrees in the plane of the first two axes
    (``kind=rotate``), or the first concept's labels negated on odd k (``kind=swap``).
    ``noise`` flips each training label with that probability. The test sample comes
    from the final concept, clean.

    The order of a drifting stream is its definition: the stream option
    ``order=shuffle`` keeps it (this class is ``time_ordered``); ``n`` cuts it short.

    Parameters
    ----------
    n_train
        Length of the stream.
    n_test
        Number of test examples of the final concept (0 for none).
    d
        Dimension, at least 2.
    drift_at
        Change points separated by ``|``: example indices (``2500|5000``) or fractions of
        the stream (``0.25|0.5``), strictly increasing, inside the stream.
    kind
        ``rotate`` (the boundary turns) or ``swap`` (the labels swap).
    angle
        Rotation per change, in degrees (``kind=rotate``).
    noise
        Label-flip rate of the training stream, in [0, 0.5].
    """

    name = "drift"
    time_ordered: ClassVar[bool] = True
    n_train, n_test = 10000, 1000
    d: int = param(2, low=2)
    drift_at: str = param("0.5")
    kind: Literal["rotate", "swap"] = param("rotate")
    angle: float = param(90.0)
    noise: float = param(0.0, low=0.0, high=0.5)

    def __post_init__(self) -> None:
        self.change_points()  # validate now, so a bad spec fails before anything runs

    def change_points(self) -> list[int]:
        """The change points as example indices."""
        return change_points(self.name, self.drift_at, self.n_train)

    def concepts(self) -> np.ndarray:
        """The concept index of every training example."""
        k = np.zeros(self.n_train, dtype=np.intp)
        for p in self.change_points():
            k[p:] += 1
        return k

    def _labels(self, X: np.ndarray, k: np.ndarray) -> np.ndarray:
        if self.kind == "rotate":
            theta = np.deg2rad(self.angle) * k
            score = np.cos(theta) * X[:, 0] + np.sin(theta) * X[:, 1]
        else:
            score = np.where(k % 2 == 0, 1.0, -1.0) * X[:, 0]
        return np.where(score >= 0, 1.0, -1.0)

    def _train(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = rng.standard_normal((self.n_train, self.d))
        return X, flip(rng, self._labels(X, self.concepts()), self.noise)

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """A sample of the final concept (the test sample)."""
        X = rng.standard_normal((n, self.d))
        return X, self._labels(X, np.full(n, len(self.change_points())))


class DriftRegression(Generator):
    """A regression stream whose target turns, abruptly or gradually.

    x ~ N(0, I_d); y = sin(2 w(t)·x) + noise·N(0, 1), with w(t) the first axis rotated
    by an angle in the plane of the first two axes. ``kind=abrupt``: the angle jumps by
    ``angle`` degrees at each change point of ``drift_at``. ``kind=gradual``: it turns
    linearly from 0 to ``angle`` between the two points of ``drift_at`` (``start|end``).
    The test sample comes from the final target, without noise.

    Parameters
    ----------
    n_train
        Length of the stream.
    n_test
        Number of test examples of the final target (0 for none).
    d
        Dimension, at least 2.
    drift_at
        ``kind=abrupt``: change points separated by ``|``, example indices or fractions
        of the stream, strictly increasing. ``kind=gradual``: the start and end of the
        turn, in the same units.
    kind
        ``abrupt`` or ``gradual``.
    angle
        Degrees per change (``abrupt``), or of the whole turn (``gradual``).
    noise
        Standard deviation of the Gaussian noise on the training targets.
    """

    name = "drift_regression"
    task = "regression"
    classes = None
    time_ordered: ClassVar[bool] = True
    n_train, n_test = 5000, 1000
    d: int = param(2, low=2)
    drift_at: str = param("0.5")
    kind: Literal["abrupt", "gradual"] = param("abrupt")
    angle: float = param(90.0)
    noise: float = param(0.1, low=0.0)

    def __post_init__(self) -> None:
        points = change_points(self.name, self.drift_at, self.n_train)
        if self.kind == "gradual" and len(points) != 2:
            raise ValueError(
                f"drift_regression: kind=gradual takes drift_at=START|END, got {self.drift_at!r}"
            )

    def angles(self) -> np.ndarray:
        """The angle of w, in radians, at every training example."""
        points = change_points(self.name, self.drift_at, self.n_train)
        t = np.arange(self.n_train, dtype=float)
        if self.kind == "abrupt":
            steps = np.searchsorted(np.asarray(points), t, side="right")
            return np.deg2rad(self.angle) * steps
        start, end = points
        return np.deg2rad(self.angle) * np.clip((t - start) / (end - start), 0.0, 1.0)

    def final_angle(self) -> float:
        points = change_points(self.name, self.drift_at, self.n_train)
        turns = len(points) if self.kind == "abrupt" else 1
        return float(np.deg2rad(self.angle) * turns)

    @staticmethod
    def target(X: np.ndarray, theta: np.ndarray | float) -> np.ndarray:
        """sin(2 w·x), w at angle θ from the first axis in the first two axes' plane."""
        return np.sin(2.0 * (np.cos(theta) * X[:, 0] + np.sin(theta) * X[:, 1]))

    def _train(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = rng.standard_normal((self.n_train, self.d))
        y = self.target(X, self.angles()) + self.noise * rng.standard_normal(self.n_train)
        return X, y

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """A sample of the final target, without noise (the test sample)."""
        X = rng.standard_normal((n, self.d))
        return X, self.target(X, self.final_angle())


@hookimpl
def kbench_register_datasets(register):
    """Register the drifting streams."""
    register(Drift)
    register(DriftRegression)
