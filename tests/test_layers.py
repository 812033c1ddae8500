"""The layers of kbench's package: each imports only from the layers before it.

Data flows core → data → execution → results → analysis → report → reproduce, the
public API at the top of the package (``kbench.run``, ``kbench.api``, ``kbench.testing``,
the scikit-learn and river adapters) is built on them, and the ``kbench`` command (``cli``)
is a shell over all of it. A module may import its own layer and the layers before it,
never a later one; the package root only for ``hookimpl`` (the version comes from its leaf
module, ``kbench._version``, which imports nothing: the package root imports every
layer's entry points, so importing it from a layer would be an import cycle). Built-in
plugins are written as third-party plugins are: against the core, the data readers, the
compiled core and the plugin API; built-in executors (``kbench.plugins.executors``) also
on the execution layer, whose tasks they run. Every import counts, including the ones inside functions
(they are dependencies too, only deferred).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import REPO

#: Layers in the order data flows through them; "api" is the package's top-level modules.
LAYERS = (
    "core",
    "learners",
    "data",
    "execution",
    "results",
    "analysis",
    "report",
    "reproduce",
    "api",
    "cli",
)
#: What plugins (kbench.plugins) may import from kbench besides other plugins.
PLUGIN_ALLOWED = ("core", "learners", "data", "api")
#: What executor plugins may import besides: an executor runs the execution layer's tasks.
EXECUTOR_PLUGIN_ALLOWED = (*PLUGIN_ALLOWED, "execution")
#: Names every layer may take from the package root.
ROOT_NAMES = {"hookimpl"}


def _layer_of(module: str) -> str | None:
    """The layer of a ``kbench.…`` module name, or None for the compiled core and plugins."""
    parts = module.split(".")
    if parts[0] != "kbench":
        raise ValueError(module)
    if len(parts) == 1:
        return "root"
    if parts[1] in ("cython_core", "plugins"):
        return parts[1]
    if parts[1] in LAYERS:
        return parts[1]
    if parts[1] == "_version":  # the version string, which every layer may show
        return "version"
    if parts[1] == "__main__":  # ``python -m kbench``: the command line
        return "cli"
    return "api"  # kbench.api, kbench.testing, kbench.sklearn, kbench.river


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every kbench import in a file, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names if a.name.startswith("kbench")]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and (node.module == "kbench" or node.module.startswith("kbench."))
        ):
            found.append((node.lineno, node.module, [a.name for a in node.names]))
    return found


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root)
    if rel.parts[0] == "plugins":
        return ".".join(("kbench", *rel.with_suffix("").parts))
    return ".".join(rel.with_suffix("").parts)


def _violations(path: Path, root: Path = REPO) -> list[str]:
    """The imports of one file against the layers; ``root`` holds its ``kbench`` folder."""
    here = _module_name(path, root)
    mine = _layer_of(here.removesuffix(".__init__"))
    bad = []
    for line, module, names in _imports(path):
        target = _layer_of(module)
        where = f"{path.relative_to(root)}:{line}: {here} imports {module}"
        if target == "root":
            extra = set(names) - ROOT_NAMES
            # The root's lazy names (Algorithm…) are the core's: allowed where the core is.
            if extra and mine not in ("api", "cli", "root"):
                extra -= {"Algorithm", "Dataset", "Kernel", "Loss"}
            if extra and mine not in ("api", "cli", "root"):
                bad.append(f"{where} ({', '.join(sorted(extra))} from the package root)")
            continue
        if target in ("cython_core", "version") or mine in ("root", "version"):
            continue
        if mine == "plugins":
            allowed = (
                EXECUTOR_PLUGIN_ALLOWED
                if here.startswith("kbench.plugins.executors.")
                else PLUGIN_ALLOWED
            )
            if target not in (*allowed, "plugins"):
                bad.append(f"{where} (plugins build on {', '.join(allowed)})")
            continue
        if target == "plugins":
            bad.append(f"{where} (the core finds plugins through the registry)")
        elif LAYERS.index(target) > LAYERS.index(mine):
            bad.append(f"{where} (layer {mine} comes before {target})")
    return bad


def _files() -> list[Path]:
    return sorted([*(REPO / "kbench").rglob("*.py"), *(REPO / "plugins").rglob("*.py")])


def test_every_module_imports_only_earlier_layers() -> None:
    bad = [v for path in _files() for v in _violations(path)]
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_every_kbench_module_is_in_a_layer() -> None:
    """A new module goes into a layer folder (or is public API at the top, named here)."""
    top = sorted(p.name for p in (REPO / "kbench").glob("*.py"))
    assert top == [
        "__init__.py",
        "__main__.py",
        "_version.py",
        "api.py",
        "river.py",
        "sklearn.py",
    ]
    folders = sorted(p.name for p in (REPO / "kbench").iterdir() if (p / "__init__.py").exists())
    # kbench.asv is public API (the asv suites), a package for its vendored dashboard files;
    # kbench.testing too (the conformance checks), a package for its modules' size.
    assert folders == sorted((*LAYERS[:-2], "asv", "cli", "testing"))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from kbench.report.html import write_report\n", "layer analysis comes before report"),
        ("from kbench.cli.main import program\n", "layer analysis comes before cli"),
        ("import kbench.reproduce.claims\n", "layer analysis comes before reproduce"),
        ("from kbench import run\n", "from the package root"),
        ("from kbench import __version__\n", "from the package root"),
        ("def f():\n    from kbench.plugins.algorithms import norma\n", "through the registry"),
    ],
)
def test_the_check_catches_a_later_layer(tmp_path: Path, source: str, expected: str) -> None:
    """The walk sees an import against the layers, also inside a function. (The probe
    lives in a tree of its own: written into the package, it would be seen by the tests
    that read the package while the suite runs in parallel.)"""
    fake = _probe(tmp_path, "analysis", source)
    bad = _violations(fake, tmp_path)
    assert len(bad) == 1 and expected in bad[0], bad


def test_the_check_allows_earlier_layers(tmp_path: Path) -> None:
    fake = _probe(
        tmp_path,
        "report",
        "from kbench._version import __version__\nfrom kbench.analysis import compare\n"
        "from kbench.core.errors import KbenchError\nimport kbench.cython_core._kernels\n",
    )
    assert _violations(fake, tmp_path) == []


def _probe(root: Path, layer: str, source: str) -> Path:
    """A module ``kbench.<layer>._layer_probe`` of this source in a tree under root."""
    fake = root / "kbench" / layer / "_layer_probe.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(source)
    return fake


def _import_graph(root: Path = REPO) -> dict[str, dict[str, int]]:
    """module -> {kbench module it imports: line} for every module of ``root/kbench``.

    ``from kbench.a import b`` is an edge to ``kbench.a.b`` when that is a module, else to
    ``kbench.a``; imports inside functions and under ``TYPE_CHECKING`` count (a deferred
    import is a dependency too, and one that dodges a cycle hides it).
    """
    files = {
        _module_name(path, root).removesuffix(".__init__"): path
        for path in sorted((root / "kbench").rglob("*.py"))
    }
    graph: dict[str, dict[str, int]] = {}
    for module, path in files.items():
        edges: dict[str, int] = {}
        for line, target, names in _imports(path):
            for name in names or [""]:
                full = f"{target}.{name}" if name else target
                hit = full if full in files else target
                if hit in files and hit != module:
                    edges.setdefault(hit, line)
        graph[module] = edges
    return graph


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The import cycles of a graph: each strongly connected component of more than one
    module (Tarjan's algorithm, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _describe(cycle: list[str], graph: dict[str, dict[str, int]]) -> str:
    """A cycle's modules and the imports that close it, with their lines."""
    edges = [
        f"    {a} imports {b} (line {graph[a][b]})" for a in cycle for b in cycle if b in graph[a]
    ]
    return " <-> ".join(cycle) + "\n" + "\n".join(edges)


def test_no_import_cycle_in_kbench() -> None:
    """No module of kbench/ imports, directly or through others, a module that imports it."""
    graph = _import_graph()
    assert graph.get("kbench.core.registry")
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(_describe(c, graph) for c in cycles)


def test_the_cycle_check_finds_a_cycle(tmp_path: Path) -> None:
    """Two modules importing each other (one inside a function) and a longer loop through
    the package root are found; a module importing a third is not part of a cycle."""
    package = tmp_path / "kbench"
    (package / "core").mkdir(parents=True)
    (package / "__init__.py").write_text("from kbench.data.c import f\n")
    (package / "core" / "__init__.py").write_text("")
    (package / "core" / "a.py").write_text("from kbench.core import b\n")
    (package / "core" / "b.py").write_text("def f():\n    import kbench.core.a\n")
    (package / "core" / "leaf.py").write_text("import kbench.core.a\n")
    (package / "data").mkdir()
    (package / "data" / "__init__.py").write_text("")
    (package / "data" / "c.py").write_text("from kbench import __version__\n")
    assert _cycles(_import_graph(tmp_path)) == [
        ["kbench", "kbench.data.c"],
        ["kbench.core.a", "kbench.core.b"],
    ]


#: What a built-in plugin module may import from kbench: the plugin API, the learner
#: toolkit and the compiled core, as a third-party plugin does.
PUBLIC_ONLY = ("kbench.api", "kbench.learners", "kbench.cython_core")


def _own_helper(path: Path, module: str, root: Path) -> bool:
    """Whether ``module`` is a private helper of the plugin package that holds ``path``
    (``kbench.plugins.losses._common`` for ``plugins/losses/margin.py``) that is itself
    built on the public API alone: a third-party plugin keeps such helpers too."""
    package = "kbench.plugins." + path.parent.name + "."
    if not module.startswith(package):
        return False
    helper = root / "plugins" / path.parent.name / (module.removeprefix(package) + ".py")
    return helper.exists() and not _private_imports(helper, root)


def _private_imports(path: Path, root: Path = REPO) -> list[str]:
    """The kbench imports of a plugin module beyond the public API (PUBLIC_ONLY) and its
    package's own helpers (_own_helper), by line."""
    return [
        f"{path.relative_to(root)}:{line}: imports {module}"
        for line, module, _names in sorted(_imports(path))
        if not any(module == p or module.startswith(p + ".") for p in PUBLIC_ONLY)
        and not _own_helper(path, module, root)
    ]


def test_migrated_plugins_import_only_the_public_api() -> None:
    """A built-in plugin is built from what a third-party one can import: every module
    under plugins/, the private helpers of its packages included."""
    plugins = sorted((REPO / "plugins").rglob("*.py"))
    assert len(plugins) > 40  # the walk found the plugins
    bad = [v for p in plugins for v in _private_imports(p)]
    assert not bad, "plugins reaching past kbench.api and kbench.learners:\n" + "\n".join(bad)


def test_the_public_api_check_catches_a_private_import(tmp_path: Path) -> None:
    """The check sees an import of a private base or of the core, also inside a function."""
    fake = tmp_path / "plugins" / "algorithms" / "probe.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(
        "from kbench.api import hookimpl\nfrom kbench.learners import Rows\n"
        "import kbench.cython_core._pa\ndef f():\n"
        "    from kbench.plugins.algorithms._budget import run_growing\n"
        "from kbench.core.components import Algorithm\n"
    )
    got = [v.split(": ", 1)[1] for v in _private_imports(fake, tmp_path)]
    assert got == ["imports kbench.plugins.algorithms._budget", "imports kbench.core.components"]
