"""Spec names and short labels: one parser, one short-name function for every view."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kbench.core.specs import short_names, spec_name
from kbench.data.streams import StreamSpec
from kbench.execution.tasks import Task

REPO = Path(__file__).resolve().parents[1]
#: The one module that may take a spec string apart by hand.
PARSER = REPO / "kbench" / "core" / "specs.py"
_AD_HOC = re.compile(r"""\.split\(\s*(['"])\[\1""")


def ad_hoc_parses(roots: list[Path]) -> list[str]:
    """``path:line`` of every ``.split("[")`` in the Python files under ``roots``, bar the
    spec parser's own module."""
    hits = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if path == PARSER:
                continue
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if _AD_HOC.search(line):
                    hits.append(f"{path.relative_to(root.parent)}:{i}")
    return hits


def test_no_spec_is_split_by_hand_outside_the_parser() -> None:
    """Views and the runner read names through :func:`spec_name`, not ``split("[")``."""
    hits = ad_hoc_parses([REPO / "kbench", REPO / "plugins"])
    assert not hits, f"use kbench.core.specs.spec_name or Spec.parse: {hits}"


def test_the_check_finds_a_hand_split(tmp_path: Path) -> None:
    """The check above is not vacuous: it sees both quote styles."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text('name = spec.split("[")[0]\nok = 1\n')
    (pkg / "b.py").write_text("name = spec.split('[')[0]\n")
    (pkg / "c.py").write_text('parts = spec.split(",")\n')
    assert ad_hoc_parses([pkg]) == ["pkg/a.py:1", "pkg/b.py:1"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("norma[eta=0.1,budget=200]", "norma"),
        ("rbf", "rbf"),
        ("cosine[base=poly[degree=9]]", "cosine"),
        ('file[path="a[1].svm"]', "file"),
        ("not a spec[x", "not a spec"),  # does not parse: the text before its '['
    ],
)
def test_spec_name(text: str, name: str) -> None:
    """The name of a spec, and a readable fallback for a text that does not parse."""
    assert spec_name(text) == name


def test_short_names_keep_only_the_parameters_that_tell_specs_apart() -> None:
    """One name per data set where it is enough; else the differing parameters only."""
    assert short_names(["a9a[scale=1]", "usps[scale=1]"]) == {
        "a9a[scale=1]": "a9a",
        "usps[scale=1]": "usps",
    }
    got = short_names(["a9a[scale=1,n=10]", "a9a[scale=2,n=10]", "usps"])
    assert got == {
        "a9a[scale=1,n=10]": "a9a[scale=1]",
        "a9a[scale=2,n=10]": "a9a[scale=2]",
        "usps": "usps",
    }
    # a spec that does not parse among same-named ones: every one of them in full
    assert short_names(["x[a=1]", "x[b"]) == {"x[a=1]": "x[a=1]", "x[b": "x[b"}


def test_views_share_the_one_short_name_function() -> None:
    """The CLI, the exports, the rank groups and the report use the same function."""
    from kbench.analysis import formats, groups
    from kbench.cli import render
    from kbench.report import html

    for module in (formats, groups, render, html):
        assert module.short_names is short_names, module.__name__


def test_a_task_parses_its_specs_once() -> None:
    """A task's names come from its specs, parsed once and kept."""
    task = Task("pa[C=1]", "rbf[gamma=0.5]", None, StreamSpec(dataset="a9a[scale=1]"))
    assert (task.algorithm_name, task.dataset_name) == ("pa", "a9a")
    assert task.algorithm_name is task.algorithm_name
    assert task.label.startswith("pa/rbf on ")
