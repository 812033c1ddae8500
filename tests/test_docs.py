"""The plugin documentation stays true: hooks, signatures, the tutorial's code, the API, links."""

from __future__ import annotations

import doctest
import inspect
import re
from pathlib import Path

import pytest

import kbench.api
import kbench.testing
from conftest import REPO
from kbench.core import hookspecs
from kbench.core.registry import ENV_DISABLE, ENV_LOAD, ENV_TRACE

DOCS = REPO / "docs"
EXAMPLE = REPO / "examples" / "kbench-plugin-example"
#: The pages this test suite keeps honest.
PAGES = [
    "index.md",
    "tutorial.md",
    "contracts.md",
    "streams.md",
    "packaging.md",
    "testing.md",
    "asv.md",
]
#: Fenced code blocks: ```lang file=PATH ...``` quote that file of the example plugin.
BLOCK = re.compile(r"^```(\w+)(?: file=(\S+))?\n(.*?)^```$", re.MULTILINE | re.DOTALL)

HOOKS = sorted(name for name, fn in vars(hookspecs).items() if hasattr(fn, "kbench_spec"))


def _short(name: str) -> str:
    """``name(arg, ...)``, the heading of a hook's page."""
    return f"{name}({', '.join(inspect.signature(getattr(hookspecs, name)).parameters)})"


def _full(name: str) -> str:
    """The hook's signature as written in kbench/core/hookspecs.py, annotations included."""
    sig = inspect.signature(getattr(hookspecs, name))
    params = ", ".join(f"{p.name}: {p.annotation}" for p in sig.parameters.values())
    return f"{name}({params}) -> {sig.return_annotation}"


def _tagged_blocks(page: Path) -> list[tuple[str, str]]:
    """(file, code) of every code block of a page that names an example file."""
    return [(m.group(2), m.group(3)) for m in BLOCK.finditer(page.read_text()) if m.group(2)]


def test_hooks_are_the_five_registration_hooks() -> None:
    """The hook list this page checks is what kbench.core.hookspecs defines."""
    assert HOOKS == [
        "kbench_register_algorithms",
        "kbench_register_datasets",
        "kbench_register_executors",
        "kbench_register_kernels",
        "kbench_register_losses",
    ]


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_has_a_page_with_its_exact_signature(hook: str) -> None:
    """docs/hooks/<hook>.md is headed by the call and shows the full annotated signature."""
    page = DOCS / "hooks" / f"{hook}.md"
    assert page.exists(), f"no reference page for hook {hook}"
    text = page.read_text()
    assert text.splitlines()[0] == f"# {_short(hook)}"
    assert f"def {_full(hook)}\n" in text, f"{page.name} lacks the signature {_full(hook)}"
    index = (DOCS / "hooks" / "index.md").read_text()
    assert f"[`{_short(hook)}`]({hook}.md)" in index, f"hooks/index.md does not list {hook}"


def test_tutorial_code_is_the_example_plugin() -> None:
    """The tutorial's file blocks, in order, are the example's files: every line, verbatim."""
    blocks = _tagged_blocks(DOCS / "tutorial.md")
    sources = ("kbench_plugin_example/*.py", "tests/*.py", "benchmarks/*.py")
    required = {
        str(p.relative_to(EXAMPLE)) for pattern in sources for p in EXAMPLE.glob(pattern)
    } | {"pyproject.toml", "asv.conf.json"}
    assert {f for f, _ in blocks} == required
    for name in sorted(required):
        source = (EXAMPLE / name).read_text()
        quoted = [code for f, code in blocks if f == name]
        for code in quoted:
            assert code in source, f"a tutorial block is not verbatim in {name}:\n{code}"
        shown = [ln for code in quoted for ln in code.splitlines() if ln.strip()]
        actual = [ln for ln in source.splitlines() if ln.strip()]
        assert shown == actual, f"the tutorial does not show all of {name}, in order"


def test_other_pages_quote_the_example_verbatim() -> None:
    """Every file block outside the tutorial (the hook examples) is the example's code."""
    pages = [DOCS / p for p in PAGES if p != "tutorial.md"] + sorted((DOCS / "hooks").glob("*.md"))
    quoted = [(page, f, code) for page in pages for f, code in _tagged_blocks(page)]
    # Every component hook's page quotes the example plugin; the executors' page shows the
    # thread-pool executor that tests/test_executor_plugins.py installs and runs.
    quoting = {page.name for page, _, _ in quoted}
    assert {f"{h}.md" for h in HOOKS if h != "kbench_register_executors"} <= quoting
    for page, name, code in quoted:
        assert code in (EXAMPLE / name).read_text(), f"{page.name}: block not verbatim in {name}"


def test_stable_api_is_documented() -> None:
    """Every name kbench.api exports is in the contracts page, and kbench.api's example runs."""
    contracts = (DOCS / "contracts.md").read_text()
    missing = [name for name in kbench.api.__all__ if f"`{name}`" not in contracts]
    assert not missing, f"docs/contracts.md does not document {missing}"
    for method in ("learn_predict_many", "predict_many", "wants_label", "fit"):
        assert f"`{method}(" in contracts
    result = doctest.testmod(kbench.api, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_conformance_checks_and_helpers_are_documented() -> None:
    """Each check kbench.testing runs, and each public helper, is described in testing.md."""
    testing = (DOCS / "testing.md").read_text()
    checks = [c.name for cs in kbench.testing.CHECKS.values() for c in cs]
    helpers = [
        "check_component",
        "parametrize_components",
        "component_cases",
        "parametrize_with_checks",
        "check_cases",
        "checks_not_applicable",
        "toy_stream",
        "make_test_algorithm",
    ]
    missing = [name for name in checks + helpers if f"`{name}" not in testing]
    assert not missing, f"docs/testing.md does not describe {missing}"


def test_load_controls_are_documented() -> None:
    """The environment variables the registry reads are in packaging.md and the README."""
    packaging = (DOCS / "packaging.md").read_text()
    readme = (REPO / "README.md").read_text()
    for var in (ENV_DISABLE, ENV_LOAD, ENV_TRACE):
        assert f"`{var}=" in packaging and var in readme


@pytest.mark.parametrize("page", [*PAGES, *(f"hooks/{h}.md" for h in ["index", *HOOKS])])
def test_relative_links_resolve(page: str) -> None:
    """Every relative link of the plugin pages points at a file or folder that exists."""
    path = DOCS / page
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text()):
        if "://" not in target:
            assert (path.parent / target).exists(), f"{page}: broken link {target}"


def test_readme_plugins_section_points_to_the_docs() -> None:
    """The README's Plugins section links the tutorial, the hooks and the example."""
    readme = (REPO / "README.md").read_text()
    section = readme[
        readme.index("## Plugins\n") : readme.index("\n## ", readme.index("## Plugins\n"))
    ]
    for target in (
        "docs/tutorial.md",
        "docs/hooks/index.md",
        "docs/contracts.md",
        "docs/streams.md",
        "docs/packaging.md",
        "docs/testing.md",
        "examples/kbench-plugin-example/",
    ):
        assert f"]({target})" in section, target
        assert (REPO / target).exists()
