"""The CLI is a shell over the library: ``kbench run`` is :func:`kbench.run`, ``kbench
compare`` is :func:`kbench.compare`, and the CLI imports no private name."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import kbench
from kbench.cli.main import cli
from kbench.results.labels import read_labels

CLI = Path(kbench.__file__).parent / "cli"


def private_imports(folder: Path) -> list[str]:
    """``file: name`` for every private name (``_x``, not ``__x__``) imported from kbench."""
    found = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kbench"):
                found += [
                    f"{path.name}: {a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.endswith("__")
                ]
    return found


def test_the_cli_imports_no_private_name() -> None:
    assert private_imports(CLI) == []


def test_the_private_import_check_finds_one(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "def f():\n    from kbench.cli.compare import _load\n"
        "from kbench._version import __version__\n"
    )
    assert private_imports(tmp_path) == ["a.py: _load"]


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Record the calls of kbench.run and kbench.compare; each still does its work."""
    calls: dict[str, list[Any]] = {"run": [], "compare": []}
    for name in calls:
        real = getattr(kbench, name)

        def spy(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls[_name].append(kwargs)
            return _real(*args, **kwargs)

        monkeypatch.setattr(kbench, name, spy)
    return calls


def test_run_and_compare_go_through_the_library(
    spied: dict[str, list[Any]], tmp_path: Path
) -> None:
    """The CLI's options reach kbench.run and kbench.compare; their outputs agree."""
    out = tmp_path / "res"
    args = ["run", "-a", "perceptron@P", "-a", "pa", "-d", "digits[n=200,positive=5-9]"]
    args += [
        "--seeds",
        "0,1",
        "--workers",
        "1",
        "--no-memory",
        "--timeout",
        "60",
        "--out",
        str(out),
    ]
    got = CliRunner().invoke(cli, args)
    assert got.exit_code == 0, got.output
    (options,) = spied["run"]
    assert options["trace_memory"] is False and options["timeout"] == 60
    assert options["workers"] == 1 and Path(options["out"]) == out
    labels = read_labels(out)  # written by kbench.run, keyed by the canonical spec
    assert list(labels.values()) == ["P"] and next(iter(labels)).startswith("perceptron")

    got = CliRunner().invoke(cli, ["compare", str(out), "--format", "csv"])
    assert got.exit_code == 0, got.output
    assert spied["compare"] == [
        {"metric": "online_error", "alpha": 0.05, "rope": None, "tune_budget": None}
    ]
    assert got.stdout == kbench.compare(out).format("csv")


def test_kbench_run_writes_labels_from_python(tmp_path: Path) -> None:
    """A label given in Python is kept as the CLI keeps it."""
    study = kbench.Experiment(algorithms=["pa@PA"], datasets=["digits[n=120,positive=5-9]"])
    results = kbench.run(study, out=tmp_path / "res", workers=0, trace_memory=False)
    labels = read_labels(tmp_path / "res")
    assert list(labels.values()) == ["PA"] and next(iter(labels)).startswith("pa[")
    assert results.runs["peak_memory"].isna().all()
