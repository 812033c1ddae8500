"""Every compiled module of cython_core/ has its .pyi stub beside it: ``.ci/typecheck.sh``
checks each stub against its module with mypy's stubtest, and refuses a module without one
(a stub is how mypy, and a plugin author's editor, see the compiled API)."""

from __future__ import annotations

import importlib
import importlib.machinery
import inspect

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


#: The calling convention of a toolkit block loop (``kbench.learners.Expansion.learn``),
#: which the stubs write once, as ``_types.BlockLoop``: name, default (None: required).
CONVENTION = [
    ("kernel", None),
    ("rows", None),
    ("store", None),
    ("y", None),
    ("pred", None),
    ("start", 0),
    ("have_row", False),
    ("kxx", 0.0),
]


def test_block_loops_typed_as_blockloop_follow_its_convention() -> None:
    """A stub declares a toolkit block loop as ``name: BlockLoop``, which stubtest cannot
    hold to a signature: each such loop's run-time signature is checked here instead, the
    convention's eight parameters then keyword-only ones."""
    loops = []
    for stub in sorted((REPO / "cython_core").glob("*.pyi")):
        for line in stub.read_text(encoding="utf-8").splitlines():
            name, sep, kind = line.partition(": ")
            if sep and kind == "BlockLoop" and name.isidentifier():
                loops.append((stub.stem, name))
    assert len(loops) >= 15, loops  # every toolkit learner's loop
    for module, name in loops:
        fn = getattr(importlib.import_module(f"kbench.cython_core.{module}"), name)
        params = list(inspect.signature(fn).parameters.values())
        head = [(p.name, None if p.default is p.empty else p.default) for p in params[:8]]
        assert head == CONVENTION, f"{module}.{name}: {head}"
        assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params[:8]), f"{module}.{name}"
        assert all(p.kind is p.KEYWORD_ONLY for p in params[8:]), f"{module}.{name}"
