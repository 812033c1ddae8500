"""How fast the ``kbench`` command starts: every sample in a fresh interpreter (asv's
``timeraw_`` benchmarks), so that the time includes every import the command makes.

The commands run in that interpreter through click (``kbench.cli.main.cli.main``), their output
discarded, without third-party plugins (``KBENCH_LOAD_PLUGINS`` set but empty). The one-task
run finds its stream in a cache and its results in a folder that an unmeasured run of the
same command made in the sample's setup. ``scripts/bench_startup.py`` times the same
commands as whole processes, against ``python -c pass``.
"""

from __future__ import annotations

#: The untimed setup of every sample: nothing of kbench is imported before the statement.
_SETUP = """
import contextlib, io, os, subprocess, sys, tempfile
os.environ["KBENCH_LOAD_PLUGINS"] = ""
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

def kbench(*args):
    from kbench.cli.main import cli

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            cli.main(list(args), standalone_mode=False)
        except SystemExit as exc:
            if exc.code:
                raise
"""

#: The one-task study of ``scripts/bench_startup.py``.
_RUN = ["run", "-a", "rbp", "-d", "a9a[n=2000]", "--seeds", "1"]

#: Setup of the run: a stream cache and results folder of its own, filled by one run; one
#: folder per user, since another user's folder in the shared temporary folder is not ours
#: to write.
_RUN_SETUP = (
    _SETUP
    + f"""
folder = os.path.join(tempfile.gettempdir(), f"kbench-asv-startup-{{os.getuid()}}")
os.environ["KBENCH_CACHE"] = os.path.join(folder, "cache")
RUN = {_RUN!r} + ["--out", os.path.join(folder, "results")]
subprocess.run([sys.executable, "-m", "kbench.cli.main", *RUN], check=True, capture_output=True)
"""
)


def timeraw_import_kbench() -> tuple[str, str]:
    """``import kbench``: what every command and plugin pays first."""
    return "import kbench", _SETUP


def timeraw_help() -> tuple[str, str]:
    """``kbench --help``."""
    return 'kbench("--help")', _SETUP


def timeraw_list() -> tuple[str, str]:
    """``kbench list``: every plugin loaded, every component described."""
    return 'kbench("list")', _SETUP


def timeraw_run_one_task() -> tuple[str, str]:
    """``kbench run -a rbp -d "a9a[n=2000]" --seeds 1 --force`` with its stream cached."""
    return 'kbench(*RUN, "--force")', _RUN_SETUP


# Each sample starts an interpreter, and the run's setup runs kbench once more.
for _bench in (timeraw_import_kbench, timeraw_help, timeraw_list, timeraw_run_one_task):
    _bench.repeat = (3, 7, 40.0)  # type: ignore[attr-defined]
    _bench.timeout = 300  # type: ignore[attr-defined]
del _bench
