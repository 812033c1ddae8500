"""Install a commit into a ``kbench`` asv environment once, and switch to it in an instant.

asv installs the commit it measures into its environment, and ``asv continuous``
interleaves the seven rounds of the two commits it compares: fourteen installs, each
after an uninstall. With pip that is about five seconds a switch on a busy 2-core
machine, most of a continuous run of a plugin's learner. Here the wheel of a commit is
installed once, with ``pip install --target``, into a folder of the environment named
after the wheel's hash (``kbench-asv-commits/``); switching to a commit rewrites one
``.pth`` file of the environment's ``site-packages``, which puts that folder on
``sys.path`` ahead of the environment below (:mod:`kbench.asv.environment`).

``kbench asv init`` writes this module as asv's install and uninstall commands::

    python -m kbench.asv.install WHEEL      # install (once) and switch to WHEEL
    python -m kbench.asv.install --remove   # no commit: what asv's uninstall means

Run it with the environment's interpreter (asv does). Console scripts and data files of
the wheel are installed into the commit's folder, not on ``PATH``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

#: The ``.pth`` file that names the commit's folder. ``site`` reads ``.pth`` files in
#: sorted order, and this one must put the commit ahead of :data:`BASE_PTH`'s folders
#: (an editable install of the same plugin below must not shadow the commit).
COMMIT_PTH = "_kbench_asv_1_commit.pth"
#: The ``.pth`` file that adds the site folders of the environment kbench is installed in.
BASE_PTH = "_kbench_asv_2_base.pth"
#: Folder of the environment holding one installed commit per wheel.
COMMITS = "kbench-asv-commits"


def _site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def commit_folder(wheel: Path) -> Path:
    """Where a wheel is installed: named by its file name and the hash of its bytes."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()[:16]
    return Path(sys.prefix) / COMMITS / f"{wheel.stem}-{digest}"


def _write_pth(text: str | None) -> None:
    """Replace (or, with None, remove) the commit's ``.pth`` file in one step."""
    pth = _site_packages() / COMMIT_PTH
    if text is None:
        with contextlib.suppress(FileNotFoundError):
            pth.unlink()
        return
    fd, tmp = tempfile.mkstemp(dir=pth.parent, prefix=f".tmp-{COMMIT_PTH}.")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, pth)


def install(wheel: Path) -> Path:
    """Install ``wheel`` into its folder unless it is there already, then switch to it.

    Returns
    -------
    Path
        The commit's folder.
    """
    target = commit_folder(wheel)
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".tmp-"))
        try:
            cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index"]
            cmd += ["--disable-pip-version-check", "--target", str(staging), str(wheel)]
            subprocess.run(cmd, check=True)
            os.replace(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    _write_pth(f"{target}\n")
    return target


def main(argv: list[str]) -> int:
    """``python -m kbench.asv.install WHEEL`` or ``--remove``."""
    if argv == ["--remove"]:
        _write_pth(None)
        return 0
    if len(argv) != 1 or not Path(argv[0]).is_file():
        print(
            "usage: python -m kbench.asv.install WHEEL | --remove (WHEEL: an existing file)",
            file=sys.stderr,
        )
        return 2
    install(Path(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
