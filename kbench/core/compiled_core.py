"""The compiled core: fail at import, with instructions, when it has not been built
(:func:`check_build`), and say how it was built (:func:`describe_build`, ``kbench --version``).

kbench never falls back silently to slow pure-Python loops: a benchmark whose
inner loops are slower than intended would distort every comparison it makes.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys

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
    "_ramp_store",
    "_pa",
    "_idsvm",
    "_kernel_cache",
    "_huller",
    "_polk",
    "_polk_model",
    "_lasvm",
    "_averaged_perceptron",
    "_sparse",
    "_online_ops",
    "_time_series",
    "_kaf",
    "_krls",
    "_sop",
)

MESSAGE = """kbench's compiled core ({module}) could not be imported: {error}

It is built from cython_core/*.pyx when kbench is installed. From a checkout, run
    pip install -e .            (or: bash install.sh)
which needs a C compiler, the Python headers, Cython and numpy. If you changed a
.pyx file, run the same command again to rebuild."""


def check_build(*, load: bool = False) -> None:
    """Raise ImportError with build help if a compiled module is missing.

    By default the modules are only looked for, not imported: importing them imports
    SciPy's BLAS (a tenth of a second), which only the commands that run learners need.
    With ``load=True`` each is imported, so that one that exists but cannot load (built
    against another Python or NumPy) is named too; the registry does that when a built-in
    plugin fails to import.
    """
    # The package's folders, found without importing the package (its __init__ loads SciPy's
    # BLAS tables).
    package = importlib.util.find_spec("kbench.cython_core")
    folders = list(package.submodule_search_locations or []) if package else []
    for name in MODULES:
        module = f"kbench.cython_core.{name}"
        try:
            if load or (module in sys.modules and sys.modules[module] is None):
                importlib.import_module(module)  # (None in sys.modules: an import that fails)
            elif not any(
                os.path.isfile(os.path.join(folder, name + suffix))
                for folder in folders
                for suffix in importlib.machinery.EXTENSION_SUFFIXES
            ):
                raise ImportError(f"No module named {module!r}")
        except ImportError as exc:
            raise ImportError(MESSAGE.format(module=module, error=exc)) from None


_SIMD = {0: "baseline", 1: "AVX2", 2: "AVX-512"}


def build_info() -> dict[str, object]:
    """How the compiled core was built, as ``setup.py`` recorded it beside the modules
    (``_build_info.json``): Python, platform, Cython, NumPy, compiler, flags, modules.
    Empty when it was not recorded."""
    import json

    package = importlib.util.find_spec("kbench.cython_core")
    for folder in (package.submodule_search_locations or []) if package else []:
        path = os.path.join(folder, "_build_info.json")
        if os.path.isfile(path):
            try:
                with open(path, encoding="utf-8") as fh:
                    info = json.load(fh)
            except (OSError, ValueError):
                return {}
            return dict(info, folder=folder) if isinstance(info, dict) else {}
    return {}


def describe_build() -> str:
    """``kbench --version``'s lines after the first: where kbench is, how its compiled core
    was built, and the vector instructions its loops use on this CPU."""
    import platform

    check_build(load=True)  # a core that cannot load says so here, with the fix
    from kbench.cython_core._feature_maps import simd_level

    info = build_info()
    recorded = info.get("modules")
    modules = recorded if isinstance(recorded, list) and recorded else MODULES
    if info:
        built = (
            f"built by {info.get('python')} for {info.get('platform')} with Cython "
            f"{info.get('cython')}, NumPy {info.get('numpy')}, {info.get('compiler')} "
            f"({info.get('flags')})"
        )
    else:
        built = "build not recorded (built before kbench recorded it)"
    return "\n".join(
        [
            # The package's folder, found from this module's: importing the package here
            # would be an import cycle (the package imports this module).
            f"package: {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}",
            f"Python {platform.python_version()} ({sys.executable})",
            f"compiled core: {len(modules)} modules, {built}",
            f"vector loops on this CPU: {_SIMD.get(simd_level(), '?')} (KBENCH_SIMD=base|avx2 lowers it)",
        ]
    )
