"""Every module of kbench/, plugins/ and cython_core/ stays short enough to read: at most
600 lines.

A module that grows past it is split along a seam (what it holds, not where its lines
fall), as kbench/execution/executors.py was into the local and the Dask executor, and
cython_core/_sparse.pyx into the sparse rows and their argument checks.
"""

from __future__ import annotations

from pathlib import Path

from conftest import REPO

MAX_LINES = 600
PATTERNS = ("kbench/**/*.py", "plugins/**/*.py", "cython_core/*.pyx", "cython_core/*.pxd")


def _too_long(root: Path) -> dict[str, int]:
    """The modules under ``root`` (PATTERNS) longer than MAX_LINES, with their line counts."""
    lengths = {
        str(path.relative_to(root)): len(path.read_text(encoding="utf-8").splitlines())
        for pattern in PATTERNS
        for path in sorted(root.glob(pattern))
    }
    return {path: n for path, n in lengths.items() if n > MAX_LINES}


def test_no_module_exceeds_600_lines() -> None:
    long = _too_long(REPO)
    assert not long, f"modules over {MAX_LINES} lines (split them along a seam): {long}"


def test_the_check_sees_a_long_module(tmp_path: Path) -> None:
    (tmp_path / "kbench" / "core").mkdir(parents=True)
    (tmp_path / "kbench" / "core" / "short.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "kbench" / "core" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "cython_core").mkdir()
    (tmp_path / "cython_core" / "_long.pyx").write_text("x = 1\n" * (MAX_LINES + 1))
    assert _too_long(tmp_path) == {
        "kbench/core/long.py": MAX_LINES + 1,
        "cython_core/_long.pyx": MAX_LINES + 1,
    }
