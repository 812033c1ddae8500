"""Small real data sets bundled with scikit-learn (no download, no optional package)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from kbench.api import Data, Dataset, hookimpl


def _sklearn(loader: str) -> Any:
    from sklearn import datasets

    return getattr(datasets, loader)()


class _Bundled(Dataset):
    """One of scikit-learn's bundled tables, loaded by ``sklearn.datasets.<loader>()``.

    Subclasses give the loader, the size (``n_examples``, ``d``) and the number of classes (None
    for regression); class names are scikit-learn's ``target_names``.
    """

    source = "bundled"
    loader: ClassVar[str]
    n_examples: ClassVar[int]
    d: ClassVar[int]
    classes: ClassVar[int | None] = None

    def _labels(self, b: Any) -> tuple[np.ndarray, tuple[str, ...] | None]:
        if self.classes is None:
            return b.target.astype(float), None
        return b.target.astype(float), tuple(str(c) for c in b.target_names)

    def load(self, seed: int) -> Data:
        b = _sklearn(self.loader)
        y, names = self._labels(b)
        return Data(
            X=b.data.astype(float),
            y=y,
            task=self.task,
            n_classes=self.classes or 0,
            class_names=names,
        )

    def info(self):
        return {"n": self.n_examples, "d": self.d} | (
            {"classes": self.classes} if self.classes else {}
        )


class Digits(_Bundled):
    """scikit-learn's handwritten digits: 1 797 images of 8×8 pixels (values 0–16), 10 classes.

    A copy of the test set of the UCI optical recognition of handwritten digits data.
    Use the stream option ``positive`` to make a binary task, e.g. ``digits[positive=5-9]``,
    and ``order=counting`` for the SVMD paper's counting sequence (2 digits, 8 runs fit).
    """

    name = "digits"
    task = "multiclass"
    loader, n_examples, d, classes = "load_digits", 1797, 64, 10


class Iris(_Bundled):
    """Fisher's iris (scikit-learn's copy): 150 flowers, 4 measurements in cm, 3 species.

    Classes 0, 1, 2 are setosa, versicolor and virginica (50 each); ``positive=virginica``
    makes the classic hard binary split.
    """

    name = "iris"
    task = "multiclass"
    loader, n_examples, d, classes = "load_iris", 150, 4, 3


class Wine(_Bundled):
    """UCI wine recognition (scikit-learn's copy): 178 wines, 13 chemical measurements, 3 cultivars.

    The features have very different scales: use ``scale=standard``.
    """

    name = "wine"
    task = "multiclass"
    loader, n_examples, d, classes = "load_wine", 178, 13, 3


class BreastCancer(_Bundled):
    """Wisconsin diagnostic breast cancer (WDBC, scikit-learn's copy): 569 tumours, 30 features.

    Binary: malignant (212) is +1, benign (357) is −1. The features have very different
    scales: use ``scale=standard``. (LIBSVM's ``breast-cancer`` is the other Wisconsin
    set, KEEL's ``wisconsin``.)
    """

    name = "breast_cancer"
    task = "binary"
    loader, n_examples, d, classes = "load_breast_cancer", 569, 30, 2

    def _labels(self, b: Any) -> tuple[np.ndarray, tuple[str, ...]]:
        # scikit-learn codes malignant as 0 and benign as 1
        return np.where(b.target == 0, 1.0, -1.0), ("benign", "malignant")


class Diabetes(_Bundled):
    """Efron et al.'s diabetes regression data (scikit-learn's copy): 442 patients, 10 features.

    The target is a measure of disease progression one year after baseline (25–346);
    the features are already centred and scaled.
    """

    name = "diabetes"
    task = "regression"
    loader, n_examples, d = "load_diabetes", 442, 10


@hookimpl
def kbench_register_datasets(register):
    """Register the scikit-learn bundled sets."""
    for cls in (Digits, Iris, Wine, BreastCancer, Diabetes):
        register(cls)
