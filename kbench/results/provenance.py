"""Where a results folder came from: one record per study run into it.

``provenance.json`` in the results folder is a list of records, oldest first, one per
``kbench run`` (or :func:`kbench.run`) into the folder: when, the command or study file,
kbench's version and commit, Python, NumPy and its BLAS, the CPU and its cores. The runs
table records the machine of each task; this file records what a reader of published
results asks first: what was run, with which build, on what.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from kbench._version import __version__
from kbench.core.errors import ResultsError
from kbench.core.fileio import atomic_write_text

PROVENANCE_FILE = "provenance.json"
#: Records kept per folder: a folder resumed a hundred times keeps its latest hundred.
KEPT = 100


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else the platform's processor field."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def blas_name() -> str:
    """NumPy's BLAS as its build configuration names it (``openblas 0.3.27``)."""
    import numpy as np

    try:
        config: Any = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except (KeyError, TypeError, ValueError):
        return "unknown"


def source_commit() -> str:
    """The git commit of kbench's source when it runs from a checkout, else ``""``."""
    here = Path(__file__).resolve().parents[2]
    if not (here / ".git").exists():
        return ""
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def invocation() -> str:
    """The command that is running: ``kbench run ...`` from the command line, else the
    Python script (a study run from a notebook or script through :func:`kbench.run`)."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    prog = argv0.name
    if prog == "kbench" or (prog == "__main__.py" and argv0.parent.name == "kbench"):
        return shlex.join(["kbench", *sys.argv[1:]])
    return f"python {shlex.join(sys.argv)}" if prog else "python (interactive)"


def study_record(study_file: str | Path | None = None) -> dict[str, Any]:
    """The record of a study starting now in this process."""
    import numpy as np

    record: dict[str, Any] = {
        "started": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": invocation(),
        "study_file": "",
        "study_text": "",
        "kbench": __version__,
        "commit": source_commit(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": blas_name(),
        "cpu": cpu_model(),
        "cores": os.cpu_count() or 0,
        "host": platform.node(),
    }
    if study_file is not None:
        path = Path(study_file)
        record["study_file"] = path.name
        # The study was read already: a file gone since loses only its copy here.
        with contextlib.suppress(OSError):
            record["study_text"] = path.read_text(encoding="utf-8")
    return record


def read_provenance(folder: str | Path) -> list[dict[str, Any]]:
    """The records of a results folder, oldest first (none: an empty list)."""
    path = Path(folder) / PROVENANCE_FILE
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path} is unreadable ({type(exc).__name__}); delete it") from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise ResultsError(f"{path} is not a list of study records; delete it")
    return data


def record_study(folder: str | Path, record: dict[str, Any]) -> None:
    """Append ``record`` to the folder's records (atomically; the latest :data:`KEPT`)."""
    records = [*read_provenance(folder), record][-KEPT:]
    atomic_write_text(Path(folder) / PROVENANCE_FILE, json.dumps(records, indent=1) + "\n")
