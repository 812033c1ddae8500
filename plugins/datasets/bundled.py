"""Small real data sets bundled with scikit-learn (no download, no optional package)."""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench import hookimpl
from kbench.core.components import Data, Dataset


def _sklearn(loader: str) -> Any:
    from sklearn import datasets

    return getattr(datasets, loader)()


class Digits(Dataset):
    """scikit-learn's handwritten digits: 1 797 images of 8×8 pixels (values 0–16), 10 classes.

    A copy of the test set of the UCI optical recognition of handwritten digits data.
    Use the stream option ``positive`` to make a binary task, e.g. ``digits[positive=5-9]``,
    and ``order=counting`` for the SVMD paper's counting sequence (2 digits, 8 runs fit).
    """

    name = "digits"
    task = "multiclass"
    source = "bundled"

    def __init__(self) -> None:
        pass

    def load(self, seed: int) -> Data:
        b = _sklearn("load_digits")
        return Data(
            X=b.data.astype(float),
            y=b.target.astype(float),
            task="multiclass",
            n_classes=10,
            class_names=tuple(str(i) for i in range(10)),
        )

    def info(self):
        return {"n": 1797, "d": 64, "classes": 10}


class Iris(Dataset):
    """Fisher's iris (scikit-learn's copy): 150 flowers, 4 measurements in cm, 3 species.

    Classes 0, 1, 2 are setosa, versicolor and virginica (50 each); ``positive=virginica``
    makes the classic hard binary split.
    """

    name = "iris"
    task = "multiclass"
    source = "bundled"

    def __init__(self) -> None:
        pass

    def load(self, seed: int) -> Data:
        b = _sklearn("load_iris")
        return Data(
            X=b.data.astype(float),
            y=b.target.astype(float),
            task="multiclass",
            n_classes=3,
            class_names=tuple(str(c) for c in b.target_names),
        )

    def info(self):
        return {"n": 150, "d": 4, "classes": 3}


class Wine(Dataset):
    """UCI wine recognition (scikit-learn's copy): 178 wines, 13 chemical measurements, 3 cultivars.

    The features have very different scales: use ``scale=standard``.
    """

    name = "wine"
    task = "multiclass"
    source = "bundled"

    def __init__(self) -> None:
        pass

    def load(self, seed: int) -> Data:
        b = _sklearn("load_wine")
        return Data(
            X=b.data.astype(float),
            y=b.target.astype(float),
            task="multiclass",
            n_classes=3,
            class_names=tuple(str(c) for c in b.target_names),
        )

    def info(self):
        return {"n": 178, "d": 13, "classes": 3}


class BreastCancer(Dataset):
    """Wisconsin diagnostic breast cancer (WDBC, scikit-learn's copy): 569 tumours, 30 features.

    Binary: malignant (212) is +1, benign (357) is −1. The features have very different
    scales: use ``scale=standard``. (LIBSVM's ``breast-cancer`` is the other Wisconsin
    set, KEEL's ``wisconsin``.)
    """

    name = "breast_cancer"
    task = "binary"
    source = "bundled"

    def __init__(self) -> None:
        pass

    def load(self, seed: int) -> Data:
        b = _sklearn("load_breast_cancer")
        # scikit-learn codes malignant as 0 and benign as 1
        y = np.where(b.target == 0, 1.0, -1.0)
        return Data(
            X=b.data.astype(float),
            y=y,
            task="binary",
            n_classes=2,
            class_names=("benign", "malignant"),
        )

    def info(self):
        return {"n": 569, "d": 30, "classes": 2}


class Diabetes(Dataset):
    """Efron et al.'s diabetes regression data (scikit-learn's copy): 442 patients, 10 features.

    The target is a measure of disease progression one year after baseline (25–346);
    the features are already centred and scaled.
    """

    name = "diabetes"
    task = "regression"
    source = "bundled"

    def __init__(self) -> None:
        pass

    def load(self, seed: int) -> Data:
        b = _sklearn("load_diabetes")
        return Data(
            X=b.data.astype(float), y=b.target.astype(float), task="regression", n_classes=0
        )

    def info(self):
        return {"n": 442, "d": 10}


@hookimpl
def kbench_register_datasets(register):
    """Register the scikit-learn bundled sets."""
    for cls in (Digits, Iris, Wine, BreastCancer, Diabetes):
        register(cls)
