"""asv's ``kbench`` environment type: each commit of a plugin built into a virtual
environment layered over the environment kbench is installed in.

asv measures a commit by building it and installing it into an environment of its own;
``asv continuous`` and ``asv run RANGE`` need that (asv's ``existing`` environment can
only measure what is installed already). A plugin's commits need kbench, its compiled
core and its dependencies in that environment; building them again per environment would
take minutes and a network. The ``kbench`` environment instead is a virtual environment
(``python -m venv``, no pip of its own) whose ``site-packages`` holds a ``.pth`` file
adding the site directories of the interpreter that runs asv: the plugin's commit is
installed into the environment itself, ahead of them (:mod:`kbench.asv.install`), and
imports the kbench, NumPy and asv runner of the environment below. Every commit is therefore measured against the
same kbench; the environment's name carries kbench's version, so that results under two
kbench versions are two lines of the dashboard, never one.

asv loads this module through the ``plugins`` entry of ``asv.conf.json``
(``".kbench.asv.environment"``, which ``kbench asv init`` writes); run asv with the
interpreter kbench is installed in. Requirements of the project's build backend
(``[build-system] requires``) and of asv's matrix that the environment below does not
satisfy are installed into the layered environment with pip.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from pathlib import Path
from typing import Any

from asv import environment, util
from asv.console import log
from packaging.requirements import InvalidRequirement, Requirement

from kbench.asv.install import BASE_PTH


def base_site_dirs() -> list[str]:
    """The site directories of this interpreter (the environment kbench is installed in),
    in import order."""
    return [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]


def _satisfied(declaration: Any) -> bool:
    """Whether the environment below already provides a parsed pip declaration of asv's."""
    if declaration.path or not declaration.pkgname:
        return False  # a path or a URL: install it
    try:
        req = Requirement(declaration.pkgname + (declaration.specification or ""))
        version = importlib.metadata.version(req.name)
    except (InvalidRequirement, importlib.metadata.PackageNotFoundError):
        return False
    return req.specifier.contains(version, prereleases=True)


class KbenchEnvironment(environment.Environment):
    """A virtual environment over the one kbench is installed in (asv's environment type
    ``kbench``)."""

    tool_name = "kbench"
    matches_python_fallback = False

    def __init__(
        self, conf: Any, python: str, requirements: dict[str, str], tagged_env_vars: dict
    ) -> None:
        here = f"{sys.version_info[0]}.{sys.version_info[1]}"
        if python not in (here, "same"):
            raise environment.EnvironmentUnavailable(
                f"kbench environments use the interpreter kbench is installed in (Python "
                f"{here}), not Python {python}"
            )
        self._kbench_version = importlib.metadata.version("kbench")
        self._base_sites = base_site_dirs()
        # asv's constructor reads the name (and so these) before it sets them itself.
        self._python, self._requirements = here, requirements
        self._tagged_env_vars = tagged_env_vars
        super().__init__(conf, here, requirements, tagged_env_vars)

    @classmethod
    def matches(cls, python: str) -> bool:
        return python == f"{sys.version_info[0]}.{sys.version_info[1]}"

    @property
    def name(self) -> str:
        """asv's name of the environment, with kbench's version among its requirements."""
        reqs = {"kbench": self._kbench_version, **self._requirements}
        return environment.get_env_name(self.tool_name, self._python, reqs, self._tagged_env_vars)

    def _site_packages(self) -> Path:
        lib = "python" + self._python
        return Path(self._path, "lib", lib, "site-packages")

    def _pth_text(self) -> str:
        # site.addsitedir, not bare paths: the .pth files below run too (an editable kbench).
        lines = [f"import site; site.addsitedir({d!r})" for d in self._base_sites]
        return "\n".join(lines) + "\n"

    def check_presence(self) -> bool:
        """The environment exists, was made for this configuration and over the same
        environment below (asv's own check also wants a ``pip``, which this one borrows)."""
        try:
            info = self.load_info_file(self._path)
        except (util.UserError, OSError):
            return False
        expected = {
            "tool_name": self.tool_name,
            "python": self._python,
            "requirements": self._requirements,
            "build_env_vars": self.build_env_vars,
        }
        pth = self._site_packages() / BASE_PTH
        if info != expected or not pth.exists() or pth.read_text() != self._pth_text():
            return False
        try:
            self.run_executable("python", ["-c", "import kbench"])
        except (util.ProcessError, OSError):
            return False
        return True

    def _setup(self) -> None:
        """Create the virtual environment, link it to the one below, install what is
        missing."""
        log.info(f"Creating a virtual environment over {sys.prefix} for {self.name}")
        util.check_call([sys.executable, "-m", "venv", "--without-pip", self._path])
        site_packages = self._site_packages()
        if not site_packages.is_dir():
            raise util.UserError(f"the new environment has no {site_packages}")
        (site_packages / BASE_PTH).write_text(self._pth_text())
        # As asv's virtualenv environments read them: "name version" or "name", pip+ for pip.
        wanted = [
            util.ParsedPipDeclaration(f"{key.removeprefix('pip+')} {version}".strip())
            for key, version in {**self._base_requirements, **self._requirements}.items()
        ]
        missing = [d for d in wanted if not _satisfied(d)]
        for declaration in missing:
            log.info(f"Installing {declaration.pkgname or declaration.path} into {self.name}")
            util.construct_pip_call(self._run_pip, declaration)()

    def _run_pip(self, args: list[str], **kwargs: Any) -> str:
        # pip itself comes from the environment below, and installs into this one.
        env = dict(kwargs.pop("env", os.environ), PIP_DISABLE_PIP_VERSION_CHECK="1")
        return self.run_executable("python", ["-m", "pip", *args], env=env, **kwargs)

    def run(self, args: list[str], **kwargs: Any) -> str:
        log.debug(f"Running '{' '.join(args)}' in {self.name}")
        return self.run_executable("python", args, **kwargs)
