"""kbench as a package: what its sdist and wheel hold, the files it opens at run time, its
version, ``python -m kbench``, and the extras.

Run from the checkout, the wheel's files are those ``setup.py build_py`` copies (its Python
modules and package data) plus one compiled module per ``.pyx``; run by
``.ci/installed.sh`` against kbench installed from a wheel (``KBENCH_TEST_INSTALLED=1``),
they are the installed distribution's RECORD, and the sdist is the one that script built
(``KBENCH_SDIST``).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import textwrap
from pathlib import Path

import pytest

import kbench
from conftest import INSTALLED, REPO
from kbench.core import extras

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
#: Where each top folder of the checkout goes in the wheel (the package-dir of pyproject).
IN_WHEEL = {"plugins": "kbench/plugins", "cython_core": "kbench/cython_core", "kbench": "kbench"}
#: Folders of the checkout that a copy for building leaves out (nothing in them is built).
NOT_COPIED = (".git", ".venv", ".asv", ".pytest_cache", ".ruff_cache", ".hypothesis", "build")


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kwargs)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the checkout as it is, generated C, compiled modules and caches included
    (so that the sdist's exclusions are put to the test), to build from without writing
    into the checkout."""
    copy = tmp_path_factory.mktemp("source") / "kbench"
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(*NOT_COPIED), symlinks=True)
    return copy


@pytest.fixture(scope="module")
def sdist(source: Path, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The names in kbench's sdist, without the ``kbench-VERSION/`` prefix."""
    given = os.environ.get("KBENCH_SDIST")
    if given:
        path = Path(given)
    else:
        out = tmp_path_factory.mktemp("sdist")
        proc = _run(
            [sys.executable, "-m", "build", "--sdist", "--no-isolation", "-o", str(out), "."],
            cwd=source,
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        (path,) = out.glob("kbench-*.tar.gz")
    with tarfile.open(path) as tar:
        return [m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()]


@pytest.fixture(scope="module")
def wheel_files(source: Path, tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The package's files in its wheel (installed: the RECORD of the installed wheel)."""
    if INSTALLED:
        names = {str(f) for f in importlib.metadata.files("kbench") or []}
        return {n for n in names if n.startswith("kbench/")}
    lib = tmp_path_factory.mktemp("build_py")
    proc = _run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)],
        cwd=source,
        env=dict(os.environ, KBENCH_PREBUILT="1"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    names = {p.relative_to(lib).as_posix() for p in lib.rglob("*") if p.is_file()}
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    compiled = {
        f"kbench/cython_core/{p.stem}{suffix}" for p in (REPO / "cython_core").glob("*.pyx")
    }
    return names | compiled | {"kbench/cython_core/_build_info.json"}


def _wheel_name(path: Path) -> str | None:
    """The name in the wheel of a file of the package (checkout or installed), or None for a
    file outside it. Bytecode counts as its module."""
    path = path.resolve()
    if path.parent.name == "__pycache__" and path.suffix == ".pyc":
        path = path.parent.parent / (path.name.split(".")[0] + ".py")
    if INSTALLED:
        roots = {Path(kbench.__file__).resolve().parent: "kbench"}
    else:
        roots = {(REPO / folder).resolve(): name for folder, name in IN_WHEEL.items()}
    for root, name in roots.items():
        if path.is_relative_to(root):
            return f"{name}/{path.relative_to(root).as_posix()}"
    return None


#: Runs the commands a user starts with inside one process, recording every file opened
#: (Python's audit events see every open, imports included): the default study (short
#: streams, one seed, in-process), its report, every component listed, and every study
#: file kbench reproduce reads.
PROBE = textwrap.dedent(
    """
    import json, os, sys
    opened = set()

    def hook(event, args):
        if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            opened.add(os.fsdecode(args[0]))

    sys.addaudithook(hook)
    from kbench.cli.main import cli
    from kbench.execution.study import load_study
    from kbench.reproduce.folders import resolve_claims

    out = sys.argv[1]
    for args in (
        ["run", "--n", "120", "--seeds", "0", "--workers", "0", "--out", out],
        ["report", out, "-o", os.path.join(out, "report.html")],
        ["list"],
    ):
        cli.main(args, standalone_mode=False)
    for paper in resolve_claims("all"):
        for quick in (True, False):
            load_study(paper.study(quick))
    print(json.dumps(sorted(opened)))
    """
)


@pytest.mark.slow
def test_every_file_kbench_opens_at_run_time_is_in_the_wheel(
    tmp_path: Path, wheel_files: set[str]
) -> None:
    """A study, its report, the component list and the reproductions open studies,
    templates, bundled data and the plugin index: every one is in the wheel. (A data file
    missing from pyproject's package-data fails here, not on a user's machine.)"""
    proc = _run(
        [sys.executable, "-c", PROBE, str(tmp_path / "results")],
        cwd=tmp_path,
        env=dict(os.environ, COLUMNS="200"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    opened = {_wheel_name(Path(p)) for p in json.loads(proc.stdout.splitlines()[-1])}
    opened.discard(None)
    for expected in (
        "kbench/studies/default.toml",
        "kbench/studies/reproduce/polk-quick.toml",
        "kbench/studies/reproduce/svmd.toml",
        "kbench/report/templates/report.html.j2",
        "kbench/plugins/datasets/data/a9a_train.txt.gz",
        "kbench/core/_plugin_index.py",
    ):
        assert expected in opened, f"the probe did not open {expected}"
    assert sorted(opened - wheel_files) == []


def test_the_wheel_holds_the_package_data(wheel_files: set[str]) -> None:
    """Every data file of the package's folders (what is not Python or a Cython source)
    is in the wheel, with a compiled module per ``.pyx``."""
    for folder, name in IN_WHEEL.items():
        for path in (REPO / folder).rglob("*"):
            rel = path.relative_to(REPO / folder)
            if (
                not path.is_file()
                or "__pycache__" in rel.parts
                or path.suffix in (".pyx", ".c", ".so", ".html")
                or path.name == "_build_info.json"
                or (folder == "kbench" and rel.parts[0] in ("plugins", "cython_core"))
            ):
                continue
            assert f"{name}/{rel.as_posix()}" in wheel_files
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    for pyx in (REPO / "cython_core").glob("*.pyx"):
        assert f"kbench/cython_core/{pyx.stem}{suffix}" in wheel_files


def test_the_sdist_holds_what_the_build_needs_and_nothing_else(sdist: list[str]) -> None:
    names = set(sdist)
    core = REPO / "cython_core"
    for pattern in ("*.pyx", "*.pxd", "*.h", "*.pyi", "*.py"):
        for path in core.glob(pattern):
            assert f"cython_core/{path.name}" in names
    for path in [*(REPO / "kbench").rglob("*"), *(REPO / "plugins").rglob("*")]:
        rel = path.relative_to(REPO).as_posix()
        if path.is_file() and "__pycache__" not in rel:
            assert rel in names
    for top in ("LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml", "setup.py"):
        assert top in names
    # Generated C, compiled modules, caches and build records belong to one build; tests,
    # docs and scripts to the repository.
    unwanted = re.compile(
        r"\.(c|so|pyc|html)$|__pycache__|_build_info\.json|^(tests|docs|scripts|benchmarks|"
        r"examples|build|\.venv|\.git)/"
    )
    assert sorted(n for n in names if unwanted.search(n)) == []


def test_setup_refuses_a_source_tree_without_its_cython_sources(tmp_path: Path) -> None:
    """An sdist that lost its .pyx used to install a kbench with no compiled core, which
    pip reported as a success; the build now fails, saying why in one line."""
    shutil.copy(REPO / "setup.py", tmp_path)
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    (tmp_path / "cython_core").mkdir()
    proc = _run([sys.executable, "setup.py", "build_ext"], cwd=tmp_path)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1] == (
        "kbench: no Cython sources (cython_core/*.pyx) to build the compiled core from; "
        "build from a git checkout or from kbench's source distribution"
    )


def test_python_m_kbench_version_names_the_build(tmp_path: Path) -> None:
    """``python -m kbench --version``: the version of the one source, where kbench is
    imported from, and how its compiled core was built."""
    from kbench._version import __version__

    proc = _run([sys.executable, "-m", "kbench", "--version"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"kbench {__version__}"
    assert __version__ == kbench.__version__ == importlib.metadata.version("kbench")
    assert lines[1] == f"package: {Path(kbench.__file__).parent}"
    assert lines[2] == f"Python {platform.python_version()} ({sys.executable})"
    built = re.fullmatch(
        r"compiled core: (\d+) modules, built by CPython (\d+\.\d+)\.\d+ for (\S+) with "
        r"Cython 3\.\S+, NumPy 2\.\S+, .+ \((-O3 -g0|-O0 -g)\)",
        lines[3],
    )
    assert built, lines[3]
    assert int(built[1]) == len(list((REPO / "cython_core").glob("*.pyx")))
    assert built[2] == "{}.{}".format(*sys.version_info[:2])
    assert built[3] == sysconfig.get_platform()
    assert re.match(r"vector loops on this CPU: (baseline|AVX2|AVX-512) ", lines[4]), lines[4]


def test_the_version_is_written_once() -> None:
    """pyproject.toml reads the version from kbench/_version.py; nothing else writes it."""
    assert "version" in PYPROJECT["project"]["dynamic"]
    assert "version" not in PYPROJECT["project"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "kbench._version.__version__"
    }


def test_every_package_of_the_source_tree_goes_into_the_wheel() -> None:
    """pyproject.toml lists kbench's packages one by one: a new subpackage left out of the
    list would be missing from the wheel while the editable install still finds it."""
    roots = {"kbench": REPO / "kbench", "kbench.plugins": REPO / "plugins"}
    found = set()
    for name, root in roots.items():
        for init in root.rglob("__init__.py"):
            rel = init.parent.relative_to(root).parts
            if "__pycache__" not in rel and "vendor" not in rel:
                found.add(".".join((name, *rel)))
    declared = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert found - declared == set(), "packages missing from pyproject.toml"


def test_the_extras_are_declared_as_kbench_checks_them() -> None:
    """Each extra that kbench names in an error installs the modules it checks for, and
    ``all`` installs every one."""
    declared = PYPROJECT["project"]["optional-dependencies"]
    for extra, modules in extras.EXTRAS.items():
        packages = {re.split(r"[\[<>=; ]", req)[0] for req in declared[extra]}
        wanted = {"distributed": "dask"}  # dask[distributed] installs the module distributed
        assert {wanted.get(m, m) for m in modules} == packages, extra
    assert declared["all"] == [f"kbench[{','.join(extras.EXTRAS)}]"]


HIDE = "import sys; sys.modules['matplotlib'] = None; from kbench.cli.main import main; "


@pytest.mark.parametrize(
    ("args", "feature"),
    [
        (["report", "{out}"], "kbench report"),
        (
            ["run", "-a", "perceptron", "-d", "a9a", "--report", "--out", "{out}"],
            "kbench run --report",
        ),
        (["reproduce", "polk", "--quick", "--out", "{out}"], "kbench reproduce's report"),
    ],
)
def test_a_missing_extra_is_named_in_one_line(
    tmp_path: Path, args: list[str], feature: str
) -> None:
    """Without matplotlib (the ``report`` extra), the commands that draw say so in one line,
    before running anything, and write nothing."""
    out = tmp_path / "out"
    argv = ["kbench", *(a.format(out=out) for a in args)]
    if args[0] == "report":
        out.mkdir()
    proc = _run([sys.executable, "-c", HIDE + f"sys.argv = {argv!r}; main()"], cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    tail = " (or run it with --no-report)" if args[0] == "reproduce" else ""
    assert proc.stderr.splitlines() == [
        f"kbench: error: {feature} needs matplotlib, which is not installed: "
        f"pip install 'kbench[report]'{tail}"
    ]
    assert not out.exists() or not any(out.iterdir())


def test_on_another_system_kbench_starts_and_says_what_needs_linux(tmp_path: Path) -> None:
    """Off Linux, ``kbench --version`` and ``kbench list`` work; running tasks says in one
    line that it needs Linux (tests/test_faults.py checks that line)."""
    code = (
        "import sys, pandas, kbench.cli.main, kbench.core.registry; sys.platform = 'darwin'; "
        "sys.argv = ['kbench', *sys.argv[1:]]; kbench.cli.main.main()"
    )
    version = _run([sys.executable, "-c", code, "--version"], cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("kbench "), version.stderr
    listed = _run([sys.executable, "-c", code, "list", "kernels"], cwd=tmp_path)
    assert listed.returncode == 0 and "rbf" in listed.stdout, listed.stderr
    ran = _run(
        [sys.executable, "-c", code, "run", "-a", "perceptron", "-d", "digits"], cwd=tmp_path
    )
    assert ran.returncode == 2
    assert ran.stderr.splitlines()[-1].startswith("kbench: error: running tasks needs Linux")


def test_kbench_under_test_is_the_one_meant() -> None:
    """From the checkout the suite tests the checkout's kbench; under ``.ci/installed.sh``
    the installed one, in this interpreter's site-packages, also in subprocesses."""
    here = Path(kbench.__file__).resolve()
    if INSTALLED:
        site = Path(sysconfig.get_paths()["purelib"]).resolve()
        assert here.is_relative_to(site) and not here.is_relative_to(REPO)
    else:
        assert here.is_relative_to(REPO)
    proc = _run([sys.executable, "-c", "import kbench; print(kbench.__file__)"])
    assert Path(proc.stdout.strip()).resolve() == here


def test_the_river_extra_resolves_to_a_wheel_on_every_supported_python() -> None:
    """River's releases after 0.22 have no CPython 3.10 wheel, and their sdist needs Rust and
    crates.io to build: on 3.10 the extra pins river below 0.23, on 3.11+ it does not."""
    from packaging.requirements import Requirement

    reqs = [Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"]["river"]]
    for python, allows_023 in (("3.10", False), ("3.11", True), ("3.13", True)):
        env = {"python_version": python}
        active = [r for r in reqs if r.marker is None or r.marker.evaluate(env)]
        assert [r.name for r in active] == ["river"], python
        assert active[0].specifier.contains("0.22.0"), python
        assert active[0].specifier.contains("0.23.0") is allows_023, python


def test_only_kbench_core_toml_imports_tomllib() -> None:
    """tomllib joined the standard library in Python 3.11: a module of kbench that imports it
    directly breaks on 3.10 (``kbench asv init`` did). Every TOML read goes through
    kbench.core.toml."""
    import ast

    package = Path(kbench.__file__).parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        if path == package / "core" / "toml.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            if any(n.split(".")[0] in ("tomllib", "tomli") for n in names):
                offenders.append(f"{path.relative_to(package)}:{node.lineno}")
    assert offenders == []
