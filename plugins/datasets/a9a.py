"""a9a: the Adult census-income data in LIBSVM's 123-feature binary encoding, shipped with kbench."""

from __future__ import annotations

from pathlib import Path

from kbench.api import Data, Dataset, hookimpl, read_libsvm

DATA = Path(__file__).parent / "data"


class A9A(Dataset):
    """Adult (a9a): 32 561 training and 16 281 test examples, 123 binary features.

    The LIBSVM data-set page's ``a9a``/``a9a.t``: UCI Adult (Becker and Kohavi, 1996;
    CC BY 4.0) binarised by Platt. Task: income above 50K (+1) or not (−1). The
    majority class gives 76.38 % test accuracy. The test split is the file ``a9a.t``.
    """

    name = "a9a"
    task = "binary"
    source = "bundled"

    def load(self, seed: int) -> Data:
        X, y = read_libsvm(DATA / "a9a_train.txt.gz", n_features=123)
        Xt, yt = read_libsvm(DATA / "a9a_test.txt.gz", n_features=123)
        return Data(
            X=X,
            y=y,
            X_test=Xt,
            y_test=yt,
            task="binary",
            n_classes=2,
            class_names=("<=50K", ">50K"),
        )

    def info(self):
        return {"n": 32561, "n_test": 16281, "d": 123, "classes": 2}


@hookimpl
def kbench_register_datasets(register):
    """Register a9a."""
    register(A9A)
