"""kbench learners as river classifiers (needs the optional river package).

:class:`RiverClassifier` wraps a kbench algorithm, kernel and loss spec as a river binary
classifier: ``learn_one(x, y)`` with ``x`` a dict of numbers and ``y`` a boolean,
``predict_one(x)``, and ``predict_proba_one(x)`` for learners whose loss is logistic (their
score is a log-odds). It works wherever river takes a classifier: ``evaluate.
progressive_val_score``, pipelines, and river's ``multiclass.OneVsRestClassifier`` for more
than two classes.

The features are the keys of the first example learned, in a fixed order: a feature
missing from a later example counts as 0, a feature that appears only later is ignored
(the support vectors of a kernel learner all have the same dimension).

This module imports river; ``import kbench`` does not.

Examples
--------
>>> from river import datasets, evaluate, metrics, preprocessing
>>> from kbench.river import RiverClassifier
>>> model = preprocessing.StandardScaler() | RiverClassifier(
...     algorithm="pistol", kernel="rbf[gamma=0.1]")
>>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
Accuracy: 8...%
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

try:
    from river import base
except ImportError:  # pragma: no cover - exercised with river hidden, in a subprocess
    raise ImportError(
        "kbench.river needs the river package: pip install 'kbench[river]' (or pip install river)"
    ) from None

from kbench.core.components import Algorithm
from kbench.core.seeds import derive_seed

__all__ = ["RiverClassifier"]


class RiverClassifier(base.Classifier):
    """A kbench online kernel learner as a river binary classifier.

    Parameters
    ----------
    algorithm
        Spec of a kbench algorithm that runs binary tasks, such as ``"perceptron"``,
        ``"pistol"`` or ``"bsgd[budget=50]"``.
    kernel
        Spec of a kbench kernel (ignored by algorithms that use none).
    loss
        Spec of a kbench loss for the algorithms that take one; None gives the
        algorithm's default (``logistic`` for PiSTOL, which makes probabilities).
    seed
        Seed of the learner's randomness: the learner gets the seed ``kbench run``
        derives from a study seed of this value (``derive_seed(seed, "learner")``).

    Notes
    -----
    A label is positive when it is truthy (``True``, 1). ``predict_one`` gives True where
    the score is ≥ 0, as kbench's runner does, and None before the first example.
    """

    def __init__(
        self,
        algorithm: str = "perceptron",
        kernel: str = "rbf",
        loss: str | None = None,
        seed: int = 0,
    ) -> None:
        self.algorithm = algorithm
        self.kernel = kernel
        self.loss = loss
        self.seed = seed
        self._learner: Algorithm | None = None
        self._keys: list[Any] | None = None
        self._last: np.ndarray | None = None

    @property
    def _multiclass(self) -> bool:
        return False

    def _make(self) -> Algorithm:
        from kbench.sklearn import _make

        return _make(
            self.algorithm, self.kernel, self.loss, "binary", 2, derive_seed(self.seed, "learner")
        )

    def _vector(self, x: dict[Any, Any]) -> np.ndarray:
        assert self._keys is not None
        v = np.array([float(x.get(k, 0.0)) for k in self._keys], dtype=np.float64)
        # river calls predict_one(x) then learn_one(x): handing the learner the same array
        # object both times lets its support-vector buffer reuse the kernel row it computed.
        last = self._last
        if last is not None and np.array_equal(last, v):
            return last
        v.flags.writeable = False
        self._last = v
        return v

    def learn_one(self, x: dict[Any, Any], y: Any) -> None:
        """Update the learner with one example; ``y`` truthy is the positive class."""
        if self._learner is None:
            # A fixed order that does not depend on the order of the dict's keys.
            self._keys = sorted(x, key=repr)
            self._learner = self._make()
        self._learner.learn_one(self._vector(x), 1.0 if y else -1.0)

    def _score(self, x: dict[Any, Any]) -> float | None:
        if self._learner is None:
            return None
        return float(self._learner.decision_one(self._vector(x)))

    def predict_one(self, x: dict[Any, Any], **kwargs: Any) -> bool | None:
        """True where the learner's score is ≥ 0; None before any example was learned."""
        f = self._score(x)
        return None if f is None else f >= 0.0

    def predict_proba_one(self, x: dict[Any, Any], **kwargs: Any) -> dict[Any, float]:
        """``{False: 1 − p, True: p}`` with p = σ(score), for learners with the logistic loss.

        Other learners' scores are margins, not log-odds: they raise NotImplementedError.
        """
        if self._learner is None:
            if self._probabilistic():
                return {False: 0.5, True: 0.5}
        elif getattr(self._learner.loss, "name", None) == "logistic":
            f = self._score(x)
            assert f is not None
            p = 1.0 / (1.0 + math.exp(-f)) if f >= 0 else math.exp(f) / (1.0 + math.exp(f))
            return {False: 1.0 - p, True: p}
        raise NotImplementedError(
            f"{self.algorithm}: its scores are not probabilities (only a logistic loss gives them)"
        )

    def _probabilistic(self) -> bool:
        loss = self._make().loss
        return loss is not None and loss.name == "logistic"

    def learner(self) -> Algorithm | None:
        """The kbench learner (None before the first example), for its ``stats()``."""
        return self._learner

    @classmethod
    def _unit_test_params(cls) -> Any:
        yield {"algorithm": "perceptron", "kernel": "rbf[gamma=0.1]"}
        yield {"algorithm": "pistol", "kernel": "rbf[gamma=0.1]"}
