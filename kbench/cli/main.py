"""The ``kbench`` command line."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any, NoReturn

import click

from kbench.cli.consoles import error_console
from kbench.cli.docstrings import summary
from kbench.cli.listing import list_, plugins
from kbench.cli.options import (
    DEFAULT_RESULTS,
    MAX_TIMEOUT,
    MAX_WORKERS,
    ExecutorOption,
    NonEmptyPath,
    check_address,
    check_number,
    force_option,
    format_option,
    parse_size,
    results_argument,
    workers_option,
)
from kbench.cli.plugin_warnings import watched_registry
from kbench.core.errors import KbenchError, ResultsError, interrupted

err = error_console()

#: Set when a Ctrl-C landed where Python could not raise it (see :func:`_ctrl_c_again`).
#: Until it is delivered again, the code it interrupted runs on, possibly with half-done
#: state (a matplotlib transform invalidated halfway), and may fail in its own way first.
_ctrl_c_dropped = threading.Event()


def main() -> None:
    """Entry point: run the click group, turning kbench errors into one line and exit status 2."""
    try:
        cli.main(standalone_mode=False)
    except KeyboardInterrupt as exc:
        _exit_interrupted(exc)
    except Exception as exc:
        # Ctrl-C can surface as another error (see interrupted); click's Abort is its form.
        # An error after a dropped Ctrl-C is its consequence, not a fault to report.
        if interrupted(exc) or _ctrl_c_dropped.is_set() or isinstance(exc, click.exceptions.Abort):
            _exit_interrupted(exc.__cause__ if isinstance(exc, click.exceptions.Abort) else exc)
        _exit_on_error(exc)
        raise


def _exit_on_error(exc: Exception) -> None:
    """Exit with one line and its status for click's and kbench's errors; return for others."""
    if isinstance(exc, click.UsageError):
        # One line, like kbench's own errors, with where to look for the valid options.
        command = exc.ctx.command_path if exc.ctx is not None else "kbench"
        message = " ".join(exc.format_message().split())
        click.echo(f"kbench: error: {message} (see {command} --help)", err=True)
        sys.exit(exc.exit_code)
    if isinstance(exc, click.ClickException):
        exc.show()
        sys.exit(exc.exit_code)
    if isinstance(exc, KbenchError):
        click.echo(f"kbench: error: {exc}", err=True)
        sys.exit(2)


def program() -> None:
    """The ``kbench`` program: :func:`main`, then a Ctrl-C during the interpreter's shutdown
    is ignored. The command is over by then and what it wrote is whole; the signal could
    only print a traceback from some exit handler. (In-process callers use :func:`main`,
    which leaves the process's signal handlers alone.)"""
    sys.unraisablehook = _ctrl_c_again(sys.unraisablehook)
    try:
        main()
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _ctrl_c_again(hook: Any) -> Any:
    """``sys.unraisablehook`` that delivers again a Ctrl-C that landed where Python cannot
    raise it.

    Python runs the Ctrl-C handler wherever the main thread is; inside a weakref callback
    or a finaliser (matplotlib's transforms have them, during the report) the
    KeyboardInterrupt is printed as "Exception ignored in ..." with its traceback and
    dropped, and the study would run on. It is delivered again instead, from a thread,
    once this hook has returned; other unraisable errors go to ``hook``. The thread sends
    SIGINT to the main thread itself, so that a main thread already blocked in a system
    call (a sleep, a wait) is woken, which ``_thread.interrupt_main`` (it only sets Python's
    flag) does not do; and it waits until the hook is over, plus 20 ms, because a Ctrl-C
    landing inside this hook would be dropped in its turn. Meanwhile the interrupted code
    runs on and may fail (a callback cut short leaves its object half-updated): the hook
    sets :data:`_ctrl_c_dropped`, so that :func:`main` takes such an error for the Ctrl-C.
    """
    import _thread
    import time

    main_thread = threading.main_thread().ident

    def interrupt(hook_over: threading.Event) -> None:
        hook_over.wait()
        time.sleep(0.02)
        if hasattr(signal, "pthread_kill") and main_thread is not None:
            signal.pthread_kill(main_thread, signal.SIGINT)
        else:
            _thread.interrupt_main()

    def deliver_again(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _ctrl_c_dropped.set()
            hook_over = threading.Event()
            threading.Thread(target=interrupt, args=(hook_over,), daemon=True).start()
            hook_over.set()
            return
        hook(unraisable)

    return deliver_again


def _exit_interrupted(exc: BaseException | None) -> NoReturn:
    """Ctrl-C: say so (unless the study already said what it kept) and exit 130 at once.

    Every file is whole by then (writes are atomic) and the task processes are killed;
    the interpreter's own shutdown (joining Dask's threads, unloading modules) would only
    add a second or more before the prompt returns.
    """
    from kbench.execution.driver import StudyInterrupted

    with contextlib.suppress(Exception):
        if not isinstance(exc, StudyInterrupted):
            click.echo("kbench: interrupted", err=True)
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(130)


#: Commands defined in other modules, imported only when one of them is used, so that
#: ``kbench --help`` and ``kbench run`` do not pay for the statistics and plotting they
#: import: name -> (module, the command's one-line help for ``kbench --help``).
LAZY_COMMANDS = {
    "asv": (
        "kbench.cli.asv",
        "Track a plugin's speed and accuracy over its commits with asv (kbench asv init).",
    ),
    "cache": (
        "kbench.cli.cache",
        "Show the data cache's size per data set (and in total), or clear it.",
    ),
    "compare": (
        "kbench.cli.compare",
        "Compare every pair of algorithm configurations in a RESULTS folder.",
    ),
    "publish": (
        "kbench.cli.publish",
        "Publish RESULTS folders as a static site in OUT.",
    ),
    "report": (
        "kbench.cli.compare",
        "Write a self-contained HTML report of a RESULTS folder (plots embedded).",
    ),
    "reproduce": (
        "kbench.cli.reproduce",
        "Run PAPER's experiments (svmd, ramp, pistol, huller, polk, qklms, duol, krlst, oisvm or all) and check its claims.",
    ),
}


class _Group(click.Group):
    """The ``kbench`` group: the commands of :data:`LAZY_COMMANDS` load when first used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in LAZY_COMMANDS:
            import importlib

            self.add_command(getattr(importlib.import_module(LAZY_COMMANDS[name][0]), name))
        return self.commands.get(name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Each command's first sentence whole, wrapped to the terminal: click's short help
        # would cut it with "..." at 80 columns.
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.commands.get(name)
            if cmd is None:
                rows.append((name, LAZY_COMMANDS[name][1]))
            elif not cmd.hidden:
                rows.append((name, summary(cmd.help)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _show_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from kbench._version import __version__
    from kbench.core.compiled_core import describe_build

    click.echo(f"kbench {__version__}\n{describe_build()}")
    ctx.exit()


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="Show kbench's version and how its compiled core was built, and exit.",
)
def cli() -> None:
    """kbench: benchmark online kernel learning algorithms on identical streams."""


cli.add_command(list_)
cli.add_command(plugins)


# ---------------------------------------------------------------------------------------------
# kbench run
# ---------------------------------------------------------------------------------------------


@cli.command()
@click.argument("study", required=False, type=NonEmptyPath(dir_okay=False, path_type=Path))
@click.option(
    "-a",
    "--algorithm",
    "algorithms",
    multiple=True,
    help="Algorithm spec, e.g. norma[eta=0.1] (repeatable); spec@LABEL gives it a short "
    'label for every table and export, e.g. "pa[C=1]@PA".',
)
@click.option(
    "-k",
    "--kernel",
    "kernels",
    multiple=True,
    help="Kernel spec, e.g. rbf[gamma=0.5] (repeatable).",
)
@click.option(
    "-l",
    "--loss",
    "losses",
    multiple=True,
    help="Loss spec for algorithms that take one (repeatable).",
)
@click.option(
    "-d",
    "--dataset",
    "datasets",
    multiple=True,
    help="Data-set spec with stream options, e.g. digits[positive=5-9] (repeatable).",
)
@click.option("--seeds", default=None, help="Seeds: 0,1,2 or 0-4 [default: 0].")
@click.option(
    "--n", "n", type=int, default=None, help="Stream length (at most this many training examples)."
)
@click.option("--epochs", type=int, default=None, help="Passes over the stream [default: 1].")
@click.option(
    "--max-queries",
    type=int,
    default=None,
    help="Label budget: a task stops at the example that uses its last label.",
)
@workers_option
@click.option(
    "--out",
    type=NonEmptyPath(file_okay=False, path_type=Path),
    default=Path(DEFAULT_RESULTS),
    show_default=True,
    help='Results folder (a study file may name one: out = "FOLDER" in [study]).',
)
@click.option(
    "--timeout",
    type=float,
    default=None,
    help="Kill a task after this many seconds (recorded as timeout).",
)
@click.option(
    "--max-memory",
    default=None,
    help="Memory a task may allocate, e.g. 2G (a task that runs out is recorded).",
)
@click.option(
    "--executor",
    cls=ExecutorOption,
    default="local",
    show_default=True,
    help="Where tasks run: a registered executor.",
)
@click.option(
    "--scheduler",
    default=None,
    help="Dask scheduler address (tcp://host:8786); without it a local Dask cluster is started.",
)
@click.option(
    "--multiclass",
    type=click.Choice(["ovr", "ovo"]),
    default=None,
    help="Run binary-only learners on multiclass data through one-vs-rest or one-vs-one "
    "[default: skip them].",
)
@force_option
@click.option("--retry-failed", is_flag=True, help="Rerun tasks whose recorded status is not ok.")
@click.option("--no-memory", is_flag=True, help="Do not trace the learners' peak memory.")
@click.option(
    "--report/--no-report",
    "with_report",
    default=False,
    help="Write OUT/report.html at the end (error curves, all-pairs tests, rankings; "
    "`kbench report OUT` writes it at any time) [default: no report].",
)
def run(
    study: Path | None,
    algorithms: tuple[str, ...],
    kernels: tuple[str, ...],
    losses: tuple[str, ...],
    datasets: tuple[str, ...],
    seeds: str | None,
    n: int | None,
    epochs: int | None,
    max_queries: int | None,
    workers: int | None,
    out: Path,
    timeout: float | None,
    max_memory: str | None,
    executor: str,
    scheduler: str | None,
    multiclass: str | None,
    force: bool,
    retry_failed: bool,
    no_memory: bool,
    with_report: bool,
) -> None:
    """Run a study and print a leaderboard per stream.

    With no STUDY file and no -a/-d it runs the default study on bundled data. Running
    the same command again resumes: tasks with results are skipped.
    """
    import kbench
    from kbench.cli.progress import RichProgress
    from kbench.cli.render import print_leaderboard
    from kbench.execution.study import DEFAULT_STUDY, Experiment, load_study, parse_seeds

    if with_report:  # said before the study runs, not after
        from kbench.core.extras import require

        require("report", "kbench run --report")
    registry = watched_registry()
    check_number("--workers", workers, low=0, high=MAX_WORKERS, why_high="each is a process")
    check_number(
        "--timeout",
        timeout,
        low=0,
        low_open=True,
        high=MAX_TIMEOUT,
        why_high="leave --timeout out for no limit",
    )
    memory_limit = parse_size("--max-memory", max_memory)
    scheduler = check_address(scheduler)
    registry.executor(executor)  # an unknown name: refused now, listing the registered ones
    if study is not None and (algorithms or datasets):
        raise KbenchError("give either a STUDY file or -a/-d flags, not both")
    if study is None and not algorithms and not datasets:
        study = DEFAULT_STUDY
        err.print(
            f"kbench: running the default study ({DEFAULT_STUDY.name}); see kbench run --help for your own"
        )
    if study is not None:
        experiments = load_study(study)
        source = click.get_current_context().get_parameter_source("out")
        if experiments[0].out is not None and source is click.core.ParameterSource.DEFAULT:
            out = experiments[0].out  # the study file's own `out`, relative to its folder
    else:
        if not algorithms or not datasets:
            raise KbenchError(
                "give at least one -a/--algorithm and one -d/--dataset (or a STUDY file)"
            )
        experiments = [
            Experiment(
                algorithms=list(algorithms),
                datasets=list(datasets),
                kernels=list(kernels),
                losses=list(losses),
            )
        ]
    for exp in experiments:
        if seeds is not None:
            exp.seeds = parse_seeds(seeds)
        if n is not None:
            exp.n = n
        if epochs is not None:
            exp.epochs = epochs
        if max_queries is not None:
            exp.max_queries = max_queries
        if multiclass is not None:
            exp.multiclass = multiclass
        if study is not None and (kernels or losses):
            exp.kernels = list(kernels) or exp.kernels
            exp.losses = list(losses) or exp.losses
    runs = kbench.run(
        experiments,
        out=out,
        progress=RichProgress(err),
        workers=workers,
        timeout=timeout,
        memory_limit=memory_limit,
        executor=executor,
        scheduler=scheduler,
        force=force,
        retry_failed=retry_failed,
        trace_memory=not no_memory,
    ).runs
    print_leaderboard(runs, registry)
    if with_report and "status" in runs and (runs["status"] == "ok").any():
        from kbench.report.html import write_report

        cmp = kbench.compare(out)
        path = write_report(
            cmp,
            kbench.load(out),
            out / "report.html",
            title=out.resolve().name,
            source=str(out.resolve()),
        )
        err.print(
            f"kbench: report written to {path} (kbench compare {out} for every pair's tests)",
            highlight=False,
        )


# ---------------------------------------------------------------------------------------------
# kbench show (kbench list and kbench plugins: kbench.cli.listing)
# ---------------------------------------------------------------------------------------------


@cli.command()
@results_argument(file_okay=False)
@format_option(
    "table: terminal tables; markdown; latex (booktabs, mean ± sd over seeds, best in "
    "bold); csv or json (every column, one row per stream and configuration)."
)
@click.option(
    "--tuning",
    is_flag=True,
    help="Print a tuned study's tuning runs instead: every configuration tried, its mean "
    "online error on the tuning streams, and the one selected.",
)
def show(results: Path, fmt: str, tuning: bool) -> None:
    """Print the leaderboards of an existing RESULTS folder.

    RESULTS defaults to kbench-results, where kbench run writes by default.
    """
    from kbench.cli.render import print_leaderboard
    from kbench.results.store import load_results

    if tuning:
        from kbench.cli.tuning import print_search

        print_search(load_results(results).tuning, fmt=fmt)
        return
    from kbench.analysis.configs import check_results_format
    from kbench.analysis.pairs import stream_mismatches

    registry = watched_registry()
    runs = load_results(results).runs
    if not len(runs):
        # An empty table would print nothing and exit 0, as if there were nothing wrong.
        raise ResultsError(
            f"{results} holds no task results (no task has finished into it); "
            f"run kbench run --out {results} first"
        )
    check_results_format(runs)
    print_leaderboard(runs, registry, fmt=fmt)
    for note in stream_mismatches(runs):
        click.echo(f"kbench: note: {note}", err=True)


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    program()
