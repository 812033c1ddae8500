"""``kbench asv init``: the asv configuration and benchmark module of a plugin's repository.

A plugin's project folder (the one holding the ``pyproject.toml`` that declares its
``kbench`` entry points) gets two files, and ``benchmarks/__init__.py`` when it lacks one:

- ``asv.conf.json``: the project, its git repository, the branch being tracked, and
  asv's ``kbench`` environment type (:mod:`kbench.asv.environment`), which builds each
  commit and installs it over the environment kbench is installed in
  (:mod:`kbench.asv.install`);
- ``benchmarks/bench_plugin.py``: two lines that give asv kbench's suites of the
  plugin's algorithms and kernels (:func:`kbench.asv.suites`).

Nothing is written unless everything can be: outside a git repository, without a kbench
entry point, or when either file exists already, :func:`init_project` raises KbenchError
and the folder is left as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kbench.core import toml
from kbench.core.errors import KbenchError
from kbench.core.fileio import atomic_write_text

#: The benchmark module ``kbench asv init`` writes, relative to the project folder.
BENCH_MODULE = Path("benchmarks") / "bench_plugin.py"
#: The asv configuration, relative to the project folder.
CONFIG = Path("asv.conf.json")
#: The branch tracked when the repository is on no branch (a detached HEAD).
DEFAULT_BRANCH = "main"


@dataclass(frozen=True)
class PluginProject:
    """What ``kbench asv init`` needs to know of a plugin's project folder."""

    folder: Path
    #: The distribution's name (``[project] name``), asv's project name.
    distribution: str
    #: Names of the ``kbench`` entry points: the plugins the suites select.
    plugins: tuple[str, ...]
    #: The git repository's top folder.
    git_root: Path
    #: The branch asv tracks: the one checked out.
    branch: str


def _git(folder: Path, *args: str) -> str | None:
    """Output of a git command in ``folder``, or None when it fails (or git is missing)."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=folder, capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def read_project(folder: Path) -> PluginProject:
    """The plugin project in ``folder``; KbenchError if it is none (or not in git).

    Parameters
    ----------
    folder
        The folder holding the plugin's ``pyproject.toml``.
    """
    folder = folder.resolve()
    if shutil.which("git") is None:
        raise KbenchError("git is not installed (or not on PATH): asv measures git commits")
    top = _git(folder, "rev-parse", "--show-toplevel")
    if top is None:
        raise KbenchError(
            f"{folder} is not in a git repository: asv measures commits (run git init and "
            "commit the plugin first)"
        )
    pyproject = folder / "pyproject.toml"
    if not pyproject.is_file():
        raise KbenchError(
            f"no kbench plugin in {folder}: there is no pyproject.toml declaring "
            "[project.entry-points.kbench] (run kbench asv init in the plugin's folder)"
        )
    try:
        meta = toml.loads(pyproject.read_text(encoding="utf-8"))
    except (toml.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise KbenchError(f"cannot read {pyproject}: {exc}") from None
    project = meta.get("project", {})
    plugins = tuple(project.get("entry-points", {}).get("kbench", {}))
    if not plugins:
        raise KbenchError(
            f"no kbench plugin in {folder}: {pyproject.name} declares no "
            "[project.entry-points.kbench]"
        )
    name = project.get("name")
    if not isinstance(name, str) or not name:
        raise KbenchError(f"{pyproject} has no [project] name")
    branch = _git(folder, "symbolic-ref", "--quiet", "--short", "HEAD") or DEFAULT_BRANCH
    return PluginProject(folder, name, plugins, Path(top).resolve(), branch)


def config_text(project: PluginProject) -> str:
    """The ``asv.conf.json`` of a plugin project (JSON with asv's ``//`` comments)."""
    repo = os.path.relpath(project.git_root, project.folder)
    subdir = os.path.relpath(project.folder, project.git_root)

    def value(v: object) -> str:
        return json.dumps(v)

    where = "" if subdir == "." else f'\n    "repo_subdir": {value(subdir)},'
    continuous = f"asv continuous {project.branch} HEAD".ljust(30)
    return f"""{{
    // asv configuration of the kbench plugin {project.distribution}, written by
    // `kbench asv init`. Run asv from this folder with the Python kbench is installed in:
    //   asv machine --yes             once per machine
    //   asv run NEW                   the commits of the branch below not measured yet
    //   {continuous}fails when HEAD is slower or less accurate
    //   asv publish && kbench asv offline .asv/html && asv preview
    "version": 1,
    "project": {value(project.distribution)},
    "repo": {value(repo)},{where}
    "dvcs": "git",
    "branches": [{value(project.branch)}],

    // Each commit is built into a wheel and installed into an environment layered over
    // the one kbench is installed in: the same kbench, NumPy and asv for every commit,
    // nothing downloaded. A commit is installed once; switching back to it is instant.
    "plugins": [".kbench.asv.environment"],
    "environment_type": "kbench",
    "build_command": [
        "python -m pip wheel --no-deps --no-build-isolation --no-index -w {{build_cache_dir}} {{build_dir}}"
    ],
    "install_command": ["in-dir={{env_dir}} python -m kbench.asv.install {{wheel_file}}"],
    "uninstall_command": ["in-dir={{env_dir}} python -m kbench.asv.install --remove"],
    // Imports kbench once and forks each benchmark from it.
    "launch_method": "forkserver",

    "benchmark_dir": "benchmarks",
    "env_dir": ".asv/env",
    "results_dir": ".asv/results",
    "html_dir": ".asv/html"
}}
"""


def bench_module_text(project: PluginProject) -> str:
    """The benchmark module of a plugin project: kbench's suites of its plugins."""
    quoted = [json.dumps(p) for p in project.plugins]
    plugins = quoted[0] if len(quoted) == 1 else f"[{', '.join(quoted)}]"
    which = ", ".join(repr(p) for p in project.plugins)
    return f'''"""asv benchmarks of the kbench plugin {which} ({project.distribution}), written by
`kbench asv init`.

kbench.asv.suites gives asv the time, peak-memory and track_ (online error, held-out
error, support vectors) benchmarks of the plugin's algorithms on kbench's fixed seeded
streams, and the kernel-row benchmarks of its kernels beside the BLAS floor.
KBENCH_ASV_PROFILE=fast|regular|large_scale scales them (regular by default).
"""

from __future__ import annotations

import kbench.asv

globals().update(kbench.asv.suites(plugin={plugins}))
'''


#: ``benchmarks/__init__.py`` when the folder has none (asv imports the folder as a package).
INIT_TEXT = '"""asv benchmarks (see asv.conf.json)."""\n'


def init_project(folder: Path) -> tuple[PluginProject, list[Path]]:
    """Write a plugin project's asv configuration and benchmark module.

    Parameters
    ----------
    folder
        The plugin's project folder, inside a git repository.

    Returns
    -------
    PluginProject
        What was found in the folder.
    list of Path
        The files written, relative to ``folder``.

    Raises
    ------
    KbenchError
        When the folder is not in git, declares no kbench plugin, or already has an
        ``asv.conf.json`` or ``benchmarks/bench_plugin.py``; nothing is written then.
    """
    project = read_project(folder)
    root = project.folder
    for existing in (CONFIG, BENCH_MODULE):
        if (root / existing).exists():
            raise KbenchError(
                f"{root / existing} already exists: kbench asv init leaves it as it is "
                "(remove it to write a new one)"
            )
    files = {CONFIG: config_text(project), BENCH_MODULE: bench_module_text(project)}
    package = BENCH_MODULE.parent / "__init__.py"
    if not (root / package).exists():
        files[package] = INIT_TEXT
    written: list[Path] = []
    made_folder = not (root / BENCH_MODULE.parent).exists()
    try:
        (root / BENCH_MODULE.parent).mkdir(exist_ok=True)
        for rel, text in files.items():
            atomic_write_text(root / rel, text)
            written.append(rel)
    except BaseException:
        # All or nothing: a full disk or Ctrl-C halfway leaves the folder as it was.
        for rel in written:
            with contextlib.suppress(OSError):
                (root / rel).unlink()
        if made_folder:
            with contextlib.suppress(OSError):
                (root / BENCH_MODULE.parent).rmdir()
        raise
    return project, written
