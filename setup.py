"""Build the compiled core of kbench.

All static metadata lives in ``pyproject.toml``; this file only compiles
``cython_core/*.pyx`` into ``kbench.cython_core.*``. Compiler directives are set
here, once. ``KBENCH_CYTHON_DEBUG=1`` turns bounds checks and wraparound checks on.

``KBENCH_PREBUILT=1`` declares no extension: ``install.sh`` builds them in place first
(``setup.py build_ext --inplace``, which recompiles only what changed) and then installs
kbench in editable mode with it set, because pip's editable build compiles every module
again, into a new temporary folder, each time it runs. The editable install finds the
modules built in place in ``cython_core/``.

The modules share declarations and inline functions through ``.pxd`` files, cimported by
the package's installed name (``from kbench.cython_core._kernels cimport _kernel_row``).
The sources sit in ``cython_core/``, which pyproject.toml maps to ``kbench.cython_core``,
so Cython is shown that layout: ``build/cython_include/kbench/cython_core`` links to (or,
where links cannot be made, mirrors) ``cython_core/``, and is on its include path.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup

try:
    from Cython.Build import cythonize
except ImportError:  # pragma: no cover - exercised only on a broken build environment
    sys.exit("kbench needs Cython>=3.0 to build its compiled core: pip install Cython")

import numpy as np

DEBUG = os.environ.get("KBENCH_CYTHON_DEBUG", "0") != "0"
PREBUILT = os.environ.get("KBENCH_PREBUILT", "0") != "0"

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "nonecheck": False,
    "cdivision": True,
    "embedsignature": True,
}


def cython_include_dir() -> str:
    """A folder in which ``kbench/cython_core`` is ``cython_core/``, for cimports by package name."""
    root = Path("build", "cython_include")
    link = root / "kbench" / "cython_core"
    source = Path("cython_core").resolve()
    if link.is_symlink() and link.resolve() == source:
        return str(root)
    if link.is_symlink() or link.is_file():
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    try:
        if not link.exists():
            link.symlink_to(source, target_is_directory=True)
    except OSError:
        # No symbolic links (some Windows set-ups): mirror the declarations instead, keeping
        # their times so that cythonize recompiles only the modules whose cimports changed.
        link.mkdir(exist_ok=True)
        for path in [source / "__init__.py", *source.glob("*.pxd")]:
            target = link / path.name
            if not target.exists() or target.read_bytes() != path.read_bytes():
                shutil.copy2(path, target)
    return str(root)


macros = [("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
extensions = [
    Extension(
        f"kbench.cython_core.{path.stem}",
        [str(path)],
        include_dirs=[np.get_include(), "cython_core"],
        define_macros=macros,
        extra_compile_args=["-O3"] if not DEBUG else ["-O0", "-g"],
    )
    for path in sorted(Path("cython_core").glob("*.pyx"))
]

setup(
    ext_modules=[]
    if PREBUILT
    else cythonize(
        extensions,
        compiler_directives=directives,
        include_path=[cython_include_dir()],
        annotate=os.environ.get("KBENCH_CYTHON_ANNOTATE", "0") != "0",
    )
)
