"""kbench learners as scikit-learn estimators.

:class:`OnlineKernelClassifier` and :class:`OnlineKernelRegressor` wrap any kbench
algorithm (a spec string such as ``"bsgd[budget=50]"``) with a kernel and, for the
algorithms that take one, a loss. ``fit`` trains a fresh learner online, one pass per
epoch, on the rows in the order given; ``partial_fit`` continues the same learner on
another block. They work in pipelines, grid searches and cross-validation like any
scikit-learn estimator. X may be a scipy.sparse matrix: a learner that takes CSR rows
learns and scores them as they are, any other is handed them densified a block at a time.

Labels are encoded to the algorithm's task: two classes become −1/+1 (``classes_[1]`` is
+1), more become 0..C−1. A binary-only algorithm (LASVM, the Forgetron, ...) on more than
two classes is run one-vs-rest: one kbench learner per class, each on the whole stream.

This module imports scikit-learn; ``import kbench`` does not.

Examples
--------
>>> from sklearn.datasets import make_moons
>>> from kbench.sklearn import OnlineKernelClassifier
>>> X, y = make_moons(200, noise=0.1, random_state=0)
>>> clf = OnlineKernelClassifier(algorithm="perceptron", kernel="rbf[gamma=2.0]", n_epochs=2)
>>> clf.fit(X, y).score(X, y) > 0.9
True
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin  # type: ignore[import-untyped]
from sklearn.preprocessing import LabelEncoder  # type: ignore[import-untyped]
from sklearn.utils import check_random_state  # type: ignore[import-untyped]
from sklearn.utils.multiclass import check_classification_targets  # type: ignore[import-untyped]
from sklearn.utils.validation import check_is_fitted  # type: ignore[import-untyped]

try:  # scikit-learn ≥ 1.6
    from sklearn.utils.validation import (  # type: ignore[import-untyped]
        validate_data as _validate_data,
    )
except ImportError:  # pragma: no cover - older scikit-learn

    def _validate_data(est: Any, *args: Any, **kwargs: Any) -> Any:
        return est._validate_data(*args, **kwargs)


from kbench.core.arrays import is_sparse
from kbench.core.components import Algorithm
from kbench.core.dense_rows import dense_blocks, for_sparse_rows, takes_csr
from kbench.core.registry import get_registry
from kbench.core.seeds import child_seed, derive_seed

__all__ = ["OnlineKernelClassifier", "OnlineKernelRegressor"]


def _seed(random_state: Any) -> int:
    """The kbench learner's seed for scikit-learn's ``random_state``: the learner's seed
    that ``kbench run`` derives from a study seed of that value (``derive_seed(s,
    "learner")``), so the estimator is the learner of that run."""
    if random_state is None:
        seed = 0
    elif isinstance(random_state, numbers.Integral):
        seed = int(random_state)
    else:
        seed = int(check_random_state(random_state).randint(2**31 - 1))
    return derive_seed(seed, "learner")


def _algorithm_class(algorithm: str) -> type[Algorithm]:
    """The class of an algorithm spec (an unknown name is a one-line SpecError)."""
    cls, _ = get_registry().resolve("algorithm", algorithm)
    assert issubclass(cls, Algorithm)
    return cls


def _make(
    algorithm: str, kernel: str, loss: str | None, task: str, n_classes: int, seed: int
) -> Algorithm:
    """Construct one kbench learner for a task, as ``kbench run`` would."""
    from kbench.execution.study import _default_loss

    registry = get_registry()
    cls = _algorithm_class(algorithm)
    kernel_obj = registry.create("kernel", kernel) if cls.uses_kernel else None
    loss_obj = None
    if cls.uses_loss:
        loss_obj = registry.create("loss", loss or _default_loss(cls, task, registry))
    return registry.create(
        "algorithm",
        algorithm,
        kernel=kernel_obj,
        loss=loss_obj,
        task=task,
        n_classes=n_classes,
        seed=seed,
    )


def _native(algorithm: str, loss: str | None, task: str) -> bool:
    """Whether the algorithm (with the loss, or its default one) runs the task itself."""
    from kbench.execution.study import _default_loss

    registry = get_registry()
    cls = _algorithm_class(algorithm)
    loss_obj = None
    if cls.uses_loss:
        loss_obj = registry.create("loss", loss or _default_loss(cls, task, registry))
    return cls.supports(task, loss_obj) is None


def _pass_rows(X: Any, n_epochs: int) -> Any:
    """The rows of ``fit``'s passes. With several passes, dense rows as one read-only copy:
    the learners that revisit examples (the Huller, LASVM) know a row of a later pass again
    only in a read-only array (a writeable one could change between passes), as they know
    CSR rows again by position; otherwise a later pass would add each example again."""
    X = _rows(X)
    if n_epochs > 1 and not is_sparse(X) and X.flags.writeable:
        X = X.copy()
        X.flags.writeable = False
    return X


def _rows(X: Any) -> Any:
    """The rows kbench's learners read, not written into: C-contiguous float64, or CSR
    float64 rows with sorted indices (validation has turned other sparse formats to CSR)."""
    if is_sparse(X):
        X = X.tocsr().astype(np.float64, copy=False)
        return X if X.has_sorted_indices else X.sorted_indices()
    return np.ascontiguousarray(X, dtype=np.float64)


def _train(learner: Algorithm, X: Any, y: np.ndarray) -> None:
    """One online pass over the rows, then the end-of-pass step (LASVM's finishing). CSR
    rows go as they are to a learner that takes them, densified a block at a time to any
    other (:func:`~kbench.core.dense_rows.for_sparse_rows`)."""
    taker = for_sparse_rows(learner) if is_sparse(X) else learner
    if learner.offline:
        taker.fit(X, y)
        return
    taker.learn_predict_many(X, np.ascontiguousarray(y, dtype=np.float64))
    if learner.end_pass is not None:
        learner.end_pass()


def _decisions(learner: Algorithm, X: Any) -> np.ndarray:
    """Decision values of a block: shape (n,) for one score, (n, C) for class scores."""
    if is_sparse(X):
        many = getattr(learner, "decision_many", None)
        if takes_csr(learner) and callable(many):  # the CSR rows' kernel rows, in blocks
            return np.asarray(many(X), dtype=np.float64)
        # One row at a time (a learner without block decisions): the rows densified a
        # block at a time, as a learner that takes only dense rows learned them.
        return np.concatenate([_decisions(learner, rows) for _, _, rows in dense_blocks(X)])
    # One kernel row per example; the expansion itself runs in the compiled core.
    return np.array([learner.decision_one(x) for x in X], dtype=np.float64)


def _writeable(obj: Any, seen: set[int]) -> Any:
    """``obj`` with every read-only array inside kbench objects replaced by a copy.

    A model loaded with ``joblib.load(..., mmap_mode="r")`` holds read-only memory maps,
    and kbench's compiled core writes into a learner's arrays (its kernel row, its
    support vectors) in place.
    """
    if isinstance(obj, np.ndarray):
        return obj if obj.flags.writeable else np.array(obj)
    if id(obj) in seen:
        return obj
    seen.add(id(obj))
    if isinstance(obj, list):
        obj[:] = [_writeable(v, seen) for v in obj]
    elif isinstance(obj, dict):
        for k, v in obj.items():
            obj[k] = _writeable(v, seen)
    elif type(obj).__module__.startswith("kbench") and hasattr(obj, "__dict__"):
        for k, v in vars(obj).items():
            new = _writeable(v, seen)
            if new is not v:
                setattr(obj, k, new)
    return obj


class _OnlineKernelBase(BaseEstimator):
    """Parameters and training loop shared by the classifier and the regressor."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _writeable(self.__dict__, set())

    def __init__(
        self,
        *,
        algorithm: str = "perceptron",
        kernel: str = "rbf",
        loss: str | None = None,
        n_epochs: int = 1,
        random_state: int | None = None,
    ) -> None:
        self.algorithm = algorithm
        self.kernel = kernel
        self.loss = loss
        self.n_epochs = n_epochs
        self.random_state = random_state

    def _check_params(self) -> None:
        if not isinstance(self.n_epochs, numbers.Integral) or self.n_epochs < 1:
            raise ValueError(f"n_epochs must be an integer ≥ 1, got {self.n_epochs!r}")

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # Learners are deterministic given random_state (checks set it), and every
        # row must be finite: a kernel of NaN is NaN.
        tags.input_tags.allow_nan = False
        # CSR rows go as they are to the learners that take them, densified a block at a
        # time to the others.
        tags.input_tags.sparse = True
        return tags


class OnlineKernelClassifier(ClassifierMixin, _OnlineKernelBase):
    """A kbench online kernel classifier as a scikit-learn estimator.

    Parameters
    ----------
    algorithm
        Spec of a kbench algorithm, such as ``"pistol"`` or ``"bsgd[budget=50,lam=0.01]"``.
    kernel
        Spec of a kbench kernel (ignored by algorithms that use none).
    loss
        Spec of a kbench loss for the algorithms that take one; None gives the
        algorithm's default for the task (as ``kbench run`` does).
    n_epochs
        Passes over the data in :meth:`fit` (each :meth:`partial_fit` call is one pass).
    random_state
        Seed of the learner's randomness (an int, None for 0, or a RandomState).

    Attributes
    ----------
    classes_ : numpy.ndarray
        The class labels, in the order of the decision columns.
    learners_ : list of kbench.Algorithm
        The kbench learner, or one per class when a binary-only algorithm runs one-vs-rest.
    n_features_in_ : int
        Number of features seen in fit.

    Notes
    -----
    With two classes ``decision_function`` returns the score of ``classes_[1]`` and
    ``predict`` gives ``classes_[1]`` where it is positive (scikit-learn's convention;
    kbench's own runner also counts a score of exactly 0 as +1). With more classes it
    returns one score per class and ``predict`` takes the largest.
    """

    def fit(self, X: Any, y: Any) -> OnlineKernelClassifier:
        """Train a new learner on (X, y) for ``n_epochs`` passes, rows in the order given."""
        self._check_params()
        X, y = _validate_data(self, X, y, dtype=np.float64, order="C", accept_sparse="csr")
        check_classification_targets(y)
        self._setup(np.unique(y))
        X = _pass_rows(X, self.n_epochs)
        for _ in range(self.n_epochs):
            self._learn(X, y)
        return self

    def partial_fit(self, X: Any, y: Any, classes: Any = None) -> OnlineKernelClassifier:
        """One online pass over (X, y), continuing the current learner.

        ``classes`` (every label the stream will have) is required on the first call, as
        the task (binary or multiclass) depends on it.
        """
        first = not hasattr(self, "classes_")
        self._check_params()
        X, y = _validate_data(
            self, X, y, dtype=np.float64, order="C", accept_sparse="csr", reset=first
        )
        check_classification_targets(y)
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            self._setup(np.unique(np.asarray(classes)))
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if len(unknown):
            raise ValueError(f"labels {unknown.tolist()} are not in classes_ {self.classes_}")
        self._learn(X, y)
        return self

    def _setup(self, classes: np.ndarray) -> None:
        if len(classes) < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 classes; the data have "
                f"{len(classes)} class"
            )
        self._encoder = LabelEncoder().fit(classes)
        self.classes_ = self._encoder.classes_
        seed = _seed(self.random_state)
        n = len(classes)
        if n == 2:
            self.learners_ = [_make(self.algorithm, self.kernel, self.loss, "binary", 2, seed)]
            self._ovr = False
        elif _native(self.algorithm, self.loss, "multiclass"):
            self.learners_ = [_make(self.algorithm, self.kernel, self.loss, "multiclass", n, seed)]
            self._ovr = False
        else:
            # A binary-only learner: one per class against the rest, each seeded apart.
            self.learners_ = [
                _make(self.algorithm, self.kernel, self.loss, "binary", 2, child_seed(seed, k))
                for k in range(n)
            ]
            self._ovr = True

    def _learn(self, X: np.ndarray, y: np.ndarray) -> None:
        X = _rows(X)
        codes = self._encoder.transform(y)
        if len(self.classes_) == 2:
            _train(self.learners_[0], X, np.where(codes == 1, 1.0, -1.0))
        elif not self._ovr:
            _train(self.learners_[0], X, codes.astype(np.float64))
        else:
            for k, learner in enumerate(self.learners_):
                _train(learner, X, np.where(codes == k, 1.0, -1.0))

    def decision_function(self, X: Any) -> np.ndarray:
        """Scores: shape (n,) for two classes (of ``classes_[1]``), (n, C) for more."""
        check_is_fitted(self)
        X = _rows(
            _validate_data(self, X, dtype=np.float64, order="C", accept_sparse="csr", reset=False)
        )
        if self._ovr:
            return np.column_stack([_decisions(learner, X) for learner in self.learners_])
        F = _decisions(self.learners_[0], X)
        n = X.shape[0]
        return F.reshape(n, -1) if len(self.classes_) > 2 else F.reshape(n)

    def predict(self, X: Any) -> np.ndarray:
        """The class of each row, from :meth:`decision_function`."""
        F = self.decision_function(X)
        if F.ndim == 1:
            return self.classes_[(F > 0).astype(int)]
        return self.classes_[np.argmax(F, axis=1)]


class OnlineKernelRegressor(RegressorMixin, _OnlineKernelBase):
    """A kbench online kernel regressor as a scikit-learn estimator.

    For the algorithms that support regression (NORMA, PiSTOL, ...). Parameters as for
    :class:`OnlineKernelClassifier`; the loss defaults to the algorithm's regression
    default (``squared``; PiSTOL needs a Lipschitz one such as ``huber``).

    Attributes
    ----------
    learner_ : kbench.Algorithm
        The kbench learner.
    n_features_in_ : int
        Number of features seen in fit.
    """

    def fit(self, X: Any, y: Any) -> OnlineKernelRegressor:
        """Train a new learner on (X, y) for ``n_epochs`` passes, rows in the order given."""
        self._check_params()
        X, y = _validate_data(
            self, X, y, dtype=np.float64, order="C", accept_sparse="csr", y_numeric=True
        )
        self.learner_ = _make(
            self.algorithm, self.kernel, self.loss, "regression", 1, _seed(self.random_state)
        )
        X = _pass_rows(X, self.n_epochs)
        for _ in range(self.n_epochs):
            _train(self.learner_, X, y)
        return self

    def partial_fit(self, X: Any, y: Any) -> OnlineKernelRegressor:
        """One online pass over (X, y), continuing the current learner."""
        first = not hasattr(self, "learner_")
        self._check_params()
        X, y = _validate_data(
            self,
            X,
            y,
            dtype=np.float64,
            order="C",
            accept_sparse="csr",
            y_numeric=True,
            reset=first,
        )
        if first:
            self.learner_ = _make(
                self.algorithm, self.kernel, self.loss, "regression", 1, _seed(self.random_state)
            )
        _train(self.learner_, _rows(X), y)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """The learner's prediction for each row."""
        check_is_fitted(self)
        X = _rows(
            _validate_data(self, X, dtype=np.float64, order="C", accept_sparse="csr", reset=False)
        )
        return _decisions(self.learner_, X).reshape(X.shape[0])
