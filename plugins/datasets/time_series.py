"""Chaotic time series for one-step (or h-step) prediction, the streams of the kernel
adaptive-filtering literature: Mackey–Glass and the Lorenz attractor.

A series is integrated by fourth-order Runge–Kutta in kbench's compiled core
(``kbench.cython_core._time_series``) from an initial state drawn from the stream's seed,
past a washout so that it is on the attractor, then sampled at a fixed period. Each
example is a window of ``embedding`` past values, most recent first, and its target the
value ``horizon`` samples after the window's last. The training stream is the series in
time order; the test sample is its continuation. Gaussian noise of standard deviation
``noise`` is added to the observed series.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np

from kbench.api import hookimpl, param
from kbench.cython_core._time_series import lorenz, mackey_glass
from kbench.plugins.datasets._generator import Generator


def steps(owner: str, name: str, length: float, step: float) -> int:
    """``length`` as a whole number of integration steps, or a one-line error."""
    k = round(length / step)
    if k < 1 or abs(k * step - length) > 1e-9 * max(1.0, length):
        raise ValueError(f"{owner}: {name}={length:g} must be a multiple of step={step:g}")
    return k


class _Series(Generator):
    """Shared part of the time series: the embedding of one observed scalar series.

    Parameters
    ----------
    embedding
        Past values per example (the input dimension).
    horizon
        Samples ahead of the window's last value that the target lies.
    noise
        Standard deviation of the Gaussian noise added to the observed series.
    step
        Integration step of the Runge–Kutta scheme.
    sample_period
        Time between two samples, a multiple of ``step``.
    washout
        Time integrated and dropped before the first sample, a multiple of ``step``.
    """

    task = "regression"
    classes = None
    time_ordered: ClassVar[bool] = True
    n_train, n_test = 2000, 500
    embedding: int = param(7, low=1)
    horizon: int = param(1, low=1)
    noise: float = param(0.0, low=0.0)

    @property
    def d(self) -> int:  # type: ignore[override]
        return self.embedding

    def __post_init__(self) -> None:
        self._grid()  # a bad period or washout fails before anything runs

    def _grid(self) -> tuple[int, int]:
        """(steps between samples, washout steps)."""
        every = steps(self.name, "sample_period", self.sample_period, self.step)
        washout = steps(self.name, "washout", self.washout, self.step) if self.washout else 0
        return every, washout

    def series(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """n samples of the clean series, from an initial state drawn with ``rng``: what
        each series (MackeyGlass, Lorenz) defines."""
        raise NotImplementedError(f"{type(self).__name__} must define series(rng, n)")

    def load(self, seed: int):
        rng = np.random.default_rng(seed)
        w, h = self.embedding, self.horizon
        n_windows = self.n_train + self.n_test
        s = self.series(rng, n_windows + w - 1 + h)
        if self.noise:
            s = s + self.noise * rng.standard_normal(len(s))
        # window i: s[i + w − 1], s[i + w − 2], ..., s[i] (most recent first)
        X = np.lib.stride_tricks.sliding_window_view(s, w)[:n_windows, ::-1].copy()
        y = s[w - 1 + h : w - 1 + h + n_windows].copy()
        t = self.n_train
        if not self.n_test:
            return self._data(X, y, None, None)
        return self._data(X[:t], y[:t], X[t:], y[t:])


class MackeyGlass(_Series):
    """The Mackey–Glass series: dx/dt = β x(t−τ) / (1 + x(t−τ)^10) − γ x(t).

    Chaotic for τ ≥ 17 (τ = 17 and τ = 30 are the usual benchmarks), with β = 0.2 and
    γ = 0.1. The history before t = 0 is constant, x0 ~ U(0.5, 1.5) from the seed. The
    delayed value at a Runge–Kutta half step is the mean of its neighbours on the grid.

    Parameters
    ----------
    tau
        The delay τ, a multiple of ``step``.
    beta, gamma
        The equation's coefficients.
    """

    name = "mackey_glass"
    tau: float = param(30.0, low=0.0, low_open=True)
    beta: float = param(0.2, low=0.0, low_open=True)
    gamma: float = param(0.1, low=0.0, low_open=True)
    step: float = param(0.1, low=0.0, low_open=True)
    sample_period: float = param(6.0, low=0.0, low_open=True)
    washout: float = param(1000.0, low=0.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        steps(self.name, "tau", self.tau, self.step)

    def series(self, rng: np.random.Generator, n: int) -> np.ndarray:
        every, washout = self._grid()
        delay = steps(self.name, "tau", self.tau, self.step)
        x0 = float(rng.uniform(0.5, 1.5))
        return mackey_glass(
            x0, delay, n, every, washout, self.step, beta=self.beta, gamma=self.gamma
        )


class Lorenz(_Series):
    """The Lorenz attractor: dx/dt = σ(y − x), dy/dt = x(ρ − z) − y, dz/dt = xy − βz.

    One coordinate is observed (``coordinate``); the initial state is (1, 1, 1) plus a
    standard normal draw from the seed.

    Parameters
    ----------
    sigma, rho, beta
        The system's coefficients (chaotic at 10, 28, 8/3).
    coordinate
        The observed coordinate, ``x``, ``y`` or ``z``.
    """

    name = "lorenz"
    sigma: float = param(10.0)
    rho: float = param(28.0)
    beta: float = param(8.0 / 3.0)
    coordinate: Literal["x", "y", "z"] = param("x")
    step: float = param(0.01, low=0.0, low_open=True)
    sample_period: float = param(0.05, low=0.0, low_open=True)
    washout: float = param(50.0, low=0.0)

    def series(self, rng: np.random.Generator, n: int) -> np.ndarray:
        every, washout = self._grid()
        x0, y0, z0 = 1.0 + rng.standard_normal(3)
        path = lorenz(x0, y0, z0, n, every, washout, self.step, self.sigma, self.rho, self.beta)
        return path[:, "xyz".index(self.coordinate)].copy()


@hookimpl
def kbench_register_datasets(register):
    """Register the time series."""
    register(MackeyGlass)
    register(Lorenz)
