"""River's online classifiers as kbench algorithms (needs the optional river package).

``river[model=linear_model.PAClassifier]`` runs ``river.linear_model.PAClassifier`` on
kbench's streams, beside kbench's own learners on identical examples;
``features=rbf_sampler`` puts ``river.feature_extraction.RBFSampler`` (random Fourier
features of an RBF kernel) in front of the model. River is imported when such a learner
is constructed, never when kbench starts or lists its components.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np

from kbench.api import Algorithm, child_seed, hookimpl, is_sparse, param, suggest

INSTALL = "pip install 'kbench[river]' (or pip install river)"


def import_river() -> Any:
    """The river package, or a one-line ValueError saying how to install it."""
    try:
        return importlib.import_module("river")
    except ImportError:
        raise ValueError(f"river: the river package is not installed; {INSTALL}") from None


def river_class(path: str) -> type:
    """The river classifier class at ``module.Class`` under ``river.``, or a one-line error."""
    river = import_river()
    module_name, _, class_name = path.rpartition(".")
    if not module_name or not class_name:
        raise ValueError(
            f"river: model must be a path under river such as linear_model.PAClassifier, "
            f"got {path!r}"
        )
    try:
        module = importlib.import_module(f"river.{module_name}")
    except ImportError:
        modules = [m.name for m in pkgutil.iter_modules(river.__path__)]
        raise ValueError(
            f"river: no module river.{module_name}{suggest(module_name, modules)}"
        ) from None
    from river import base

    classifiers = sorted(
        name
        for name, obj in vars(module).items()
        if inspect.isclass(obj) and issubclass(obj, base.Classifier) and not name.startswith("_")
    )
    cls = getattr(module, class_name, None)
    if not inspect.isclass(cls):
        choices = ", ".join(classifiers) or "none"
        raise ValueError(
            f"river: river.{module_name} has no {class_name!r}"
            f"{suggest(class_name, classifiers)}; classifiers there: {choices}"
        )
    if not issubclass(cls, base.Classifier):
        raise ValueError(f"river: river.{path} is not a classifier")
    return cls


def parse_args(text: str) -> dict[str, Any]:
    """Constructor arguments ``"C=0.5,mode=2"``: Python literals, anything else a string."""
    out: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, eq, raw = item.partition("=")
        if not eq or not key.strip().isidentifier():
            raise ValueError(
                f"river: args must be name=value pairs separated by commas, got {item!r}"
            )
        try:
            out[key.strip()] = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError):
            out[key.strip()] = raw.strip()
    return out


class RiverModel(Algorithm):
    """A river classifier run as a kbench learner, optionally on random Fourier features.

    Each example is handed to river as a dict of its non-zero features (river's linear
    models read a missing feature as 0; with ``rbf_sampler``, of all its features). Binary labels go to river as booleans (+1 is True); a binary
    river model on a multiclass stream is wrapped in river's ``OneVsRestClassifier``.
    Decision values are river's class probabilities (minus 1/2 for binary), or the
    predicted class when the model has no probabilities. River computes no kernel, so the
    learner reports 0 kernel evaluations and 0 support vectors.

    Parameters
    ----------
    model
        Path of a river classifier under ``river.``, such as ``linear_model.PAClassifier``,
        ``linear_model.LogisticRegression`` or ``tree.HoeffdingTreeClassifier``.
    args
        Its constructor arguments as ``name=value`` pairs, comma-separated (quote the
        value in a spec: ``args="C=0.5,mode=2"``); values are Python literals or strings.
        A model with a ``seed`` argument gets one derived from the learner's seed
        unless given here (and the RBFSampler another).
    features
        ``none`` (the raw features) or ``rbf_sampler`` (river's RBFSampler in front). River's
        RBFSampler maps each feature on its own, cos(w·xᵢ + b): its features approximate
        the additive kernel Σᵢ exp(−γ(xᵢ − x′ᵢ)²), not kbench's ``rbf`` kernel of the whole
        vector, so it cannot learn interactions between features (XOR).
    gamma
        RBFSampler's kernel width γ in exp(−γ‖x−x′‖²), > 0.
    n_components
        RBFSampler's number of random features, ≥ 1.
    """

    name = "river"
    tasks = frozenset({"binary", "multiclass"})
    uses_kernel = False
    test_params = {"n_components": 20}

    model: str = param("linear_model.PAClassifier")
    args: str = param("")
    features: Literal["none", "rbf_sampler"] = param("none")
    gamma: float = param(1.0, low=0.0, low_open=True)
    n_components: int = param(100, low=1)

    def __post_init__(self) -> None:
        model, seed = self.model, self.seed
        cls = river_class(model)
        kwargs = parse_args(self.args)
        if "seed" in inspect.signature(cls).parameters and "seed" not in kwargs:
            kwargs["seed"] = child_seed(seed, 0)  # the model's draws and the features' apart
        try:
            estimator = cls(**kwargs)
        except TypeError as exc:
            raise ValueError(f"river: {model}: {exc}") from None
        if self.task == "multiclass" and not estimator._multiclass:
            from river import multiclass

            estimator = multiclass.OneVsRestClassifier(estimator)
        if self.features == "rbf_sampler":
            from river import feature_extraction

            sampler = feature_extraction.RBFSampler(
                gamma=self.gamma, n_components=self.n_components, seed=child_seed(seed, 1)
            )
            estimator = sampler | estimator
        self._river = estimator
        self._has_proba = True

    @property
    def sparse_input(self) -> bool:
        """CSR rows as they are with the raw features (river reads a dict of the non-zero
        ones either way); RBFSampler needs every feature, so its rows are densified."""
        return self.features == "none"

    def _dict(self, x: Any) -> dict[int, float]:
        if is_sparse(x):  # a one-row CSR matrix
            if self.features == "rbf_sampler":
                return self._dict(x.toarray().ravel())
            return next(self._dicts(x))
        if self.features == "rbf_sampler":
            # RBFSampler maps a feature of value 0 to cos(offset) ≠ 0: it needs every feature.
            return dict(enumerate(x.tolist()))
        nz = np.flatnonzero(x)
        return dict(zip(nz.tolist(), x[nz].tolist(), strict=True))

    def _dicts(self, X: Any) -> Iterator[dict[int, float]]:
        """The dicts river is handed for the rows of a dense or CSR block."""
        if not is_sparse(X):
            yield from map(self._dict, X)
            return
        X = X.tocsr()
        indptr, indices, data = X.indptr, X.indices.tolist(), X.data.tolist()
        for i in range(X.shape[0]):
            a, b = indptr[i], indptr[i + 1]
            # Stored zeros are left out, as a dense row's zeros are.
            yield {j: v for j, v in zip(indices[a:b], data[a:b], strict=True) if v != 0.0}

    def _label(self, y: float) -> Any:
        return bool(y > 0) if self.task == "binary" else int(y)

    def decision_one(self, x):
        return self._decision(self._dict(x))

    def learn_one(self, x, y):
        self._river.learn_one(self._dict(x), self._label(y))

    def learn_predict_many(self, X, y):
        pred = np.empty(X.shape[0])
        for i, xd in enumerate(self._dicts(X)):
            pred[i] = self.label_of(self._decision(xd))
            self._river.learn_one(xd, self._label(y[i]))
        return pred

    def decision_many(self, X: Any) -> np.ndarray:
        """Decision values of the rows of a dense or CSR block (n, or n × C)."""
        return np.array([self._decision(xd) for xd in self._dicts(X)], dtype=float)

    def predict_many(self, X):
        return np.array([self.label_of(self._decision(xd)) for xd in self._dicts(X)], dtype=float)

    def _decision(self, xd: dict[int, float]) -> Any:
        proba: dict[Any, float] | None = None
        if self._has_proba:
            try:
                proba = self._river.predict_proba_one(xd)
            except NotImplementedError:
                self._has_proba = False
        if self.task == "binary":
            if proba is not None:
                return float(proba.get(True, 0.0)) - 0.5 if proba else 0.0
            guess = self._river.predict_one(xd)
            return 0.0 if guess is None else (0.5 if guess else -0.5)
        scores = np.zeros(self.n_classes)
        if proba is not None:
            for label, p in proba.items():
                if 0 <= int(label) < self.n_classes:
                    scores[int(label)] = p
        else:
            guess = self._river.predict_one(xd)
            if guess is not None:
                scores[int(guess)] = 1.0
        return scores

    def stats(self):
        return {
            "n_support": 0,
            "kernel_evals": 0,
            "random_features": self.n_components if self.features == "rbf_sampler" else 0,
        }


@hookimpl
def kbench_register_algorithms(register):
    """Register river's classifiers as one algorithm, ``river[model=...]``."""
    register(RiverModel)
