"""The layers of kbench's package: each imports only from the layers before it.

Data flows core → data → execution → results → analysis → report → reproduce, the
public API at the top of the package (``kbench.run``, ``kbench.api``, ``kbench.testing``,
the scikit-learn and river adapters) is built on them, and the ``kbench`` command (``cli``)
is a shell over all of it. A module may import its own layer and the layers before it,
never a later one; the package root only for ``hookimpl`` and ``__version__``. Built-in
plugins are written as third-party plugins are: against the core, the data readers, the
compiled core and the plugin API. Every import counts, including the ones inside functions
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
#: Names every layer may take from the package root.
ROOT_NAMES = {"hookimpl", "__version__"}


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
        return "root"
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
        if target == "cython_core" or mine == "root":
            continue
        if mine == "plugins":
            if target not in (*PLUGIN_ALLOWED, "plugins"):
                bad.append(f"{where} (plugins build on {', '.join(PLUGIN_ALLOWED)})")
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
        "testing.py",
    ]
    folders = sorted(p.name for p in (REPO / "kbench").iterdir() if (p / "__init__.py").exists())
    # kbench.asv is public API (the asv suites), a package for its vendored dashboard files.
    assert folders == sorted((*LAYERS[:-2], "asv", "cli"))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from kbench.report.html import write_report\n", "layer analysis comes before report"),
        ("from kbench.cli.main import program\n", "layer analysis comes before cli"),
        ("import kbench.reproduce.claims\n", "layer analysis comes before reproduce"),
        ("from kbench import run\n", "from the package root"),
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
        "from kbench import __version__\nfrom kbench.analysis import compare\n"
        "from kbench.core.errors import KbenchError\nimport kbench.cython_core._kernels\n",
    )
    assert _violations(fake, tmp_path) == []


def _probe(root: Path, layer: str, source: str) -> Path:
    """A module ``kbench.<layer>._layer_probe`` of this source in a tree under root."""
    fake = root / "kbench" / layer / "_layer_probe.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(source)
    return fake


#: What a built-in plugin module may import from kbench: the plugin API, the learner
#: toolkit and the compiled core, as a third-party plugin does.
PUBLIC_ONLY = ("kbench.api", "kbench.learners", "kbench.cython_core")
#: Plugin modules not yet written on the public API alone (issue 30 migrates them family
#: by family). Only ever shrinks: a migrated module leaves the list, and a module that
#: reaches past the public API again fails the test below.
NOT_YET_PUBLIC = frozenset(
    f"plugins/{name}.py"
    for name in (
        *(
            f"algorithms/{m}"
            for m in (
                "_averaged", "_budget", "_kernel_cache", "_online_kernel", "_revisit",
                "_sparse_rows", "active", "averaged_perceptron", "batch", "bogd", "bsgd",
                "budget_pa", "budget_perceptrons", "feature_maps", "huller", "idsvm", "lasvm",
                "norma", "pegasos", "pistol", "polk", "ramp_svm", "reductions", "river_model",
                "sgd", "svmd",
            )
        ),
        *(f"datasets/{m}" for m in ("a9a", "bundled", "files", "keel", "mnist", "synthetic")),
        *(f"kernels/{m}" for m in ("dot_product", "normalised", "radial")),
        *(f"losses/{m}" for m in ("margin", "multiclass", "novelty", "regression")),
    )
)  # fmt: skip


def _private_imports(path: Path, root: Path = REPO) -> list[str]:
    """The kbench imports of a plugin module beyond the public API (PUBLIC_ONLY), by line."""
    return [
        f"{path.relative_to(root)}:{line}: imports {module}"
        for line, module, _names in sorted(_imports(path))
        if not any(module == p or module.startswith(p + ".") for p in PUBLIC_ONLY)
    ]


def test_migrated_plugins_import_only_the_public_api() -> None:
    """A built-in plugin is built from what a third-party one can import; the allow-list
    holds the modules not migrated yet, and names no module that has been."""
    plugins = sorted((REPO / "plugins").rglob("*.py"))
    rest = [p for p in plugins if str(p.relative_to(REPO)) not in NOT_YET_PUBLIC]
    bad = [v for p in rest for v in _private_imports(p)]
    assert not bad, "plugins reaching past kbench.api and kbench.learners:\n" + "\n".join(bad)
    clean = [m for m in sorted(NOT_YET_PUBLIC) if not _private_imports(REPO / m)]
    assert not clean, f"migrated: take these off NOT_YET_PUBLIC: {clean}"
    migrated = {"algorithms/perceptron", "algorithms/passive_aggressive"}
    assert {f"plugins/{m}.py" for m in migrated} <= {str(p.relative_to(REPO)) for p in rest}


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
