"""Fail at import, with instructions, when the compiled core has not been built.

kbench never falls back silently to slow pure-Python loops: a benchmark whose
inner loops are slower than intended would distort every comparison it makes.
"""

from __future__ import annotations

import importlib

MODULES = (
    "_kernels",
    "_perceptron",
    "_norma",
    "_losses",
    "_svmd",
    "_budget_perceptrons",
    "_bpa",
    "_bsgd",
    "_bogd",
    "_feature_maps",
    "_pistol",
    "_ramp",
    "_pa",
    "_idsvm",
    "_kernel_cache",
    "_huller",
    "_polk",
    "_lasvm",
    "_averaged_perceptron",
)

MESSAGE = """kbench's compiled core ({module}) could not be imported: {error}

It is built from cython_core/*.pyx when kbench is installed. From a checkout, run
    pip install -e .            (or: bash install.sh)
which needs a C compiler, the Python headers, Cython and numpy. If you changed a
.pyx file, run the same command again to rebuild."""


def check_build() -> None:
    """Import every compiled module, raising ImportError with build help if one is missing."""
    for name in MODULES:
        module = f"kbench.cython_core.{name}"
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ImportError(MESSAGE.format(module=module, error=exc)) from None
