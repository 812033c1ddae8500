"""The base of kbench's seeded data generators (``synthetic``, ``drift``, ``time_series``).

The module name starts with an underscore so that the registry does not load it as a
plugin.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from kbench.api import Data, Dataset, param


def expit(x: np.ndarray) -> np.ndarray:
    """SciPy's logistic function, imported when first used (SciPy's modules load slowly,
    and listing or planning with the data sets of this module never calls it)."""
    from scipy.special import expit as _expit

    return _expit(x)


class Generator(Dataset):
    """Base of the generators: the sizes, the draws from one seed, the data and the listing.

    The training stream and then the test sample are drawn from one
    ``default_rng(seed)``, by :meth:`_train` (by default ``_draw(rng, n_train)``) and
    ``_draw(rng, n_test)``. A subclass declares its own parameters, sets the defaults of
    ``n_train`` and ``n_test`` by assigning them, and says its dimension ``d`` and its
    number of classes ``classes`` (None for regression). Its docstring documents its own
    parameters (and the sizes only when they mean more than below).

    Parameters
    ----------
    n_train
        Number of training examples.
    n_test
        Number of test examples (0 for none).
    """

    source = "generator"
    task = "binary"
    test_params: ClassVar[dict] = {"n_train": 300, "n_test": 100}
    n_train: int = param(5000, low=1)
    n_test: int = param(2000, low=0)
    #: Dimension and number of classes (None: regression), for the data and the listing;
    #: a generator may make either a parameter or a property.
    d = 2
    classes: int | None = 2

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """n examples (X, y) drawn with ``rng``: what each generator defines."""
        raise NotImplementedError(f"{type(self).__name__} must define _draw(rng, n)")

    def _train(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        return self._draw(rng, self.n_train)

    def load(self, seed: int) -> Data:
        rng = np.random.default_rng(seed)
        X, y = self._train(rng)
        Xt, yt = self._draw(rng, self.n_test) if self.n_test else (None, None)
        return self._data(X, y, Xt, yt)

    def _data(self, X, y, X_test, y_test) -> Data:
        C = self.classes
        names = tuple(str(c) for c in range(C)) if C and self.task == "multiclass" else None
        return Data(
            X=X,
            y=y,
            X_test=X_test,
            y_test=y_test,
            task=self.task,
            n_classes=C or 0,
            class_names=names,
        )

    def info(self):
        out = {"n": self.n_train, "n_test": self.n_test, "d": self.d}
        return out | ({"classes": self.classes} if self.classes else {})


def coin(rng: np.random.Generator, n: int) -> np.ndarray:
    """n labels ±1 with equal probability (one uniform draw each)."""
    return np.where(rng.random(n) < 0.5, 1.0, -1.0)


def flip(rng: np.random.Generator, y: np.ndarray, rate: float) -> np.ndarray:
    """Flip each ±1 label with probability ``rate`` (one uniform draw per label)."""
    flip = rng.random(len(y)) < rate
    y[flip] = -y[flip]
    return y
