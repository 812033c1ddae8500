"""Small real data sets bundled with scikit-learn."""

from __future__ import annotations

import numpy as np

from kbench import hookimpl
from kbench.components import Data, Dataset


class Digits(Dataset):
    """scikit-learn's handwritten digits: 1 797 images of 8×8 pixels (values 0–16), 10 classes.

    A copy of the test set of the UCI optical recognition of handwritten digits data.
    Use the stream option ``positive`` to make a binary task, e.g. ``digits[positive=5-9]``.
    """

    name = "digits"
    task = "multiclass"
    source = "bundled"

    def __init__(self) -> None:
        pass

    def load(self, seed: int) -> Data:  # noqa: D102
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return Data(X=X.astype(float), y=y.astype(float), task="multiclass", n_classes=10,
                    class_names=tuple(str(i) for i in range(10)))

    def info(self):  # noqa: D102
        return {"n": 1797, "d": 64, "classes": 10}


@hookimpl
def kbench_register_datasets(register):
    """Register the scikit-learn bundled sets."""
    register(Digits)
