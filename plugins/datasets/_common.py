"""Helpers shared by the data-set plugins (not a plugin: the registry skips ``_`` modules)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

#: Ways to scale 8-bit pixel values: as stored, to [0, 1], or to [−1, 1] (USPS's range).
PIXELS = ("unit", "raw", "signed")


def missing_module(module: str, install: str) -> str | None:
    """None when ``module`` can be imported, else the one-line message naming the install command."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    return (
        None
        if found
        else f"the Python package providing {module!r} is not installed; install it with: {install}"
    )


def module_folder(module: str) -> Path:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(module)
    return Path(next(iter(spec.submodule_search_locations)))


def scale_pixels(X: np.ndarray, pixels: str, top: float = 255.0) -> np.ndarray:
    """Pixel values in [0, top] scaled as ``pixels`` says (see :data:`PIXELS`), in place.

    ``X`` must be a float array the caller owns; in place because image sets are large
    (Fashion-MNIST is 376 MB as float64) and a copy costs as much time as the parse.
    """
    if pixels == "unit":
        X *= 1.0 / top
    elif pixels == "signed":
        X *= 2.0 / top
        X -= 1.0
    return X


def digit_names() -> tuple[str, ...]:
    """Class names of digit data sets: '0' … '9'."""
    return tuple(str(i) for i in range(10))
