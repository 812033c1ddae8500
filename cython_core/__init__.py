"""Compiled inner loops of kbench (built from cython_core/ by setup.py).

The modules call BLAS and LAPACK through SciPy's Cython tables (``scipy.linalg.cython_blas``
and ``cython_lapack``). Importing a table the usual way runs ``scipy.linalg``'s package
``__init__`` first, which imports the whole of ``scipy.linalg`` and SciPy's array-API layer:
a tenth of a second at every start of the ``kbench`` command, for two modules that need
none of it. :func:`_load_tables` loads the two extension modules from their files instead;
if anything about that fails (a SciPy laid out otherwise), the usual import happens when
the first compiled module is imported, as before. ``scipy.linalg`` itself imports as usual
whenever something asks for it, and finds the tables already loaded.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys


def _load_tables() -> None:
    try:
        scipy = importlib.util.find_spec("scipy")  # finds it without importing it
    except (ImportError, ValueError):
        return
    if scipy is None or scipy.origin is None:
        return
    folder = os.path.join(os.path.dirname(scipy.origin), "linalg")
    for table in ("cython_blas", "cython_lapack"):
        name = f"scipy.linalg.{table}"
        if name in sys.modules or "scipy.linalg" in sys.modules:
            continue
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, table + suffix)
            if os.path.isfile(path):
                break
        else:
            continue
        try:
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            if not hasattr(module, "__pyx_capi__"):
                raise ImportError(f"{path} exports no Cython function table")
        except Exception:
            sys.modules.pop(name, None)  # the usual import, then


_load_tables()
