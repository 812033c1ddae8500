"""Every compiled module of cython_core/ has its .pyi stub beside it: ``.ci/typecheck.sh``
checks each stub against its module with mypy's stubtest, and refuses a module without one
(a stub is how mypy, and a plugin author's editor, see the compiled API)."""

from __future__ import annotations

import importlib.machinery

from conftest import REPO


def test_every_compiled_module_has_a_stub() -> None:
    core = REPO / "cython_core"
    sources = {p.stem for p in core.glob("*.pyx")}
    built = {
        p.name.split(".")[0]
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
        for p in core.glob(f"*{suffix}")
    }
    assert sources, "no Cython source found"
    missing = sorted(m for m in sources | built if not (core / f"{m}.pyi").exists())
    assert not missing, f"compiled modules without a .pyi stub: {', '.join(missing)}"
