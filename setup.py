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

The ``.pyx`` files are translated to C by ``build_ext`` itself, only when modules are
compiled: a source distribution ships the ``.pyx``, ``.pxd`` and ``.h`` files (never the
generated C), and building one needs no work beyond copying them. ``build_ext`` compiles
on every core unless told otherwise (``-j``), and writes ``_build_info.json`` beside the
modules it built (Python, platform, Cython, NumPy, compiler, flags), which ``kbench
--version`` shows.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

DEBUG = os.environ.get("KBENCH_CYTHON_DEBUG", "0") != "0"
PREBUILT = os.environ.get("KBENCH_PREBUILT", "0") != "0"
SOURCES = sorted(Path("cython_core").glob("*.pyx"))
if not SOURCES and not PREBUILT:
    # An sdist without its Cython sources would otherwise "build" a kbench with no compiled
    # core, which pip reports as a success and which fails at its first import. Said before
    # the build tools are imported: it needs none of them.
    sys.exit(
        "kbench: no Cython sources (cython_core/*.pyx) to build the compiled core from; "
        "build from a git checkout or from kbench's source distribution"
    )

from setuptools import Extension, setup  # noqa: E402
from setuptools.command.build_ext import build_ext  # noqa: E402

try:
    from Cython.Build import cythonize
except ImportError:  # pragma: no cover - exercised only on a broken build environment
    sys.exit("kbench needs Cython>=3.0 to build its compiled core: pip install Cython")

import numpy as np  # noqa: E402

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
# -g0: no debug information (Python's own CFLAGS may ask for it), which would triple the
# size of the modules and of the wheels; KBENCH_CYTHON_DEBUG builds keep it.
FLAGS = ["-O3", "-g0"] if not DEBUG else ["-O0", "-g"]
extensions = [
    Extension(
        f"kbench.cython_core.{path.stem}",
        [str(path)],
        include_dirs=[np.get_include(), "cython_core"],
        define_macros=macros,
        extra_compile_args=FLAGS,
    )
    for path in SOURCES
]


@functools.cache
def _compiler() -> str:
    """The C compiler: the first line of its ``--version`` (``gcc (Debian 12.2.0-14) 12.2.0``)."""
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    try:
        out = subprocess.run(
            [cc, "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return cc
    return out.splitlines()[0].strip() if out.strip() else cc


class BuildCore(build_ext):
    """``build_ext`` for the compiled core: Cython to C first, then C on every core."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:  # -j not given: one compiler per core
            self.parallel = os.cpu_count() or 1

    def run(self) -> None:
        recorded = self.recorded_info() if self.extensions else None
        toolchain = {k: v for k, v in self.build_info().items() if k != "modules"}
        if (
            self.extensions
            and {k: v for k, v in (recorded or {}).items() if k != "modules"} != toolchain
        ):
            # Built by another Python, NumPy, Cython, compiler or flags (or not recorded):
            # every module is rebuilt, so that the record is true of all of them.
            self.force = True
        if self.extensions:
            # Translated here, not when setup.py is read, so that an sdist (which runs
            # setup.py too) neither translates nor ships the generated C.
            translated = cythonize(
                self.extensions,
                compiler_directives=directives,
                include_path=[cython_include_dir()],
                annotate=os.environ.get("KBENCH_CYTHON_ANNOTATE", "0") != "0",
                nthreads=int(self.parallel or 1) if len(self.extensions) > 1 else 0,
                force=bool(self.force),
            )
            # cythonize returns new Extension objects; the ones build_ext prepared keep
            # their settings and take the generated C as their sources.
            by_name = {ext.name: ext for ext in translated}
            for ext in self.extensions:
                ext.sources = by_name[ext.name].sources
                ext.depends = by_name[ext.name].depends
        super().run()
        if self.extensions:
            self.write_build_info()

    def info_path(self) -> Path:
        """``_build_info.json``, in the folder the modules are built into."""
        return Path(self.get_ext_fullpath(self.extensions[0].name)).parent / "_build_info.json"

    def build_info(self) -> dict[str, object]:
        """How this run builds the modules: Python, platform, Cython, NumPy, compiler, flags."""
        import Cython

        return {
            "python": f"{platform.python_implementation()} {platform.python_version()}",
            "platform": sysconfig.get_platform(),
            "cython": Cython.__version__,
            "numpy": np.__version__,
            "compiler": _compiler(),
            "flags": " ".join(FLAGS),
            "modules": sorted(ext.name.rsplit(".", 1)[-1] for ext in self.extensions),
        }

    def recorded_info(self) -> dict[str, object] | None:
        """What the last build into the same folder recorded, if anything."""
        try:
            return json.loads(self.info_path().read_text())
        except (OSError, ValueError):
            return None

    def write_build_info(self) -> None:
        """Record how the modules were built, beside them (``kbench --version`` reads it)."""
        path = self.info_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.build_info(), indent=1) + "\n")


setup(ext_modules=[] if PREBUILT else extensions, cmdclass={"build_ext": BuildCore})
