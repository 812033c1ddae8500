"""The ``kbench`` command line."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.markup import escape
from rich.table import Table

from kbench.cli.consoles import error_console, output_console
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
from kbench.core.errors import KbenchError, ResultsError, interrupted

KIND_NAMES = {
    "algorithms": "algorithm",
    "kernels": "kernel",
    "losses": "loss",
    "datasets": "dataset",
}
err = error_console()


def main() -> None:
    """Entry point: run the click group, turning kbench errors into one line and exit status 2."""
    try:
        cli.main(standalone_mode=False)
    except KeyboardInterrupt as exc:
        _exit_interrupted(exc)
    except Exception as exc:
        # Ctrl-C can surface as another error (see interrupted); click's Abort is its form.
        if interrupted(exc) or isinstance(exc, click.exceptions.Abort):
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
    landing inside this hook would be dropped in its turn.
    """
    import _thread
    import signal
    import threading
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
        "Publish RESULTS folders as a static site: leaderboards, figures, provenance.",
    ),
    "report": (
        "kbench.cli.compare",
        "Write a self-contained HTML report of a RESULTS folder (plots embedded).",
    ),
    "reproduce": (
        "kbench.cli.reproduce",
        "Run PAPER's experiments (svmd, ramp, pistol, huller, polk, qklms or all) and check its claims.",
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
    from kbench.core._check_build import describe_build

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


def watched_registry() -> Any:
    """The registry, every plugin that fails to load reported as a warning, once."""
    from kbench.core.registry import get_registry

    reg = get_registry()
    # Plugins load when first needed: each failure is reported when it happens, once.
    reg.watch_failures(_warn_broken_plugin)
    return reg


def _warn_broken_plugin(info: Any) -> None:
    err.print(
        f"[yellow]kbench: warning: plugin {info.name!r} skipped: {info.error}[/yellow]",
        highlight=False,
    )


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
        "--timeout", timeout, low=0, low_open=True, high=MAX_TIMEOUT,
        why_high="leave --timeout out for no limit",
    )  # fmt: skip
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
# kbench show / list / plugins
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


def _component_rows(registry: Any, kind: str) -> list[dict[str, Any]]:
    rows = []
    for name in registry.names(kind):
        entry = registry.entry(kind, name)
        cls = entry.cls
        row: dict[str, Any] = {
            "kind": kind,
            "name": name,
            "plugin": entry.plugin,
            "version": entry.version,
            "parameters": {
                p.name: {
                    "type": p.type_name,
                    "default": p.default,
                    "range": p.range_text,
                    "doc": p.doc,
                }
                for p in cls.parameters().values()
            },
            "summary": summary(cls.__doc__),
        }
        if kind == "algorithm":
            row["tasks"] = sorted(cls.tasks)
            row["uses_kernel"], row["uses_loss"] = cls.uses_kernel, cls.uses_loss
        elif kind == "loss":
            row["tasks"] = sorted(cls.tasks)
        elif kind == "dataset":
            row["task"], row["source"] = cls.task, cls.source
            try:
                obj = cls()
                row["task"] = obj.task
                row.update(obj.info())
                why = obj.unavailable()
            except Exception as exc:  # a listing must not fail because one data set is broken
                why = str(exc)
            row["available"] = why is None
            if why:
                row["unavailable"] = why
        elif kind == "kernel":
            row["constant_diagonal"] = cls.constant_diagonal
        rows.append(row)
        if kind == "dataset":
            try:
                variants = cls.variants()
            except Exception:  # a listing must not fail because one catalogue is broken
                variants = []
            for v in variants:
                sub = {
                    "kind": kind,
                    "plugin": entry.plugin,
                    "version": entry.version,
                    "parameters": {},
                    "source": cls.source,
                    "summary": v.get("summary")
                    or f"{v['name']}: a {v.get('task', 'binary')} set of the LIBSVM collection, "
                    f"n={v.get('n', '?')}, d={v.get('d', '?')}.",
                }
                sub.update(v)
                sub["available"] = "unavailable" not in v
                rows.append(sub)
    return rows


_RST = re.compile(r"``(.+?)``|:(?:func|class|mod|meth|attr|data):`~?(.+?)`")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")


def plain_text(text: str) -> str:
    """Docstring text without its reStructuredText markup: ``x`` and :func:`x` as x."""
    return _RST.sub(lambda m: m.group(1) or m.group(2), text)


def summary(doc: str | None) -> str:
    """The first sentence of a docstring, whole (its lines joined), without markup."""
    paragraph = " ".join((doc or "").strip().split("\n\n")[0].split())
    return plain_text(_SENTENCE_END.split(paragraph, maxsplit=1)[0])


def _bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n} B"  # unreachable


@cli.command(name="list")
@click.argument("kind", required=False, type=click.Choice(list(KIND_NAMES)))
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_(kind: str | None, name: str | None, as_json: bool) -> None:
    """List registered components with their parameters and the plugin they came from.

    With a KIND and a NAME (kbench list algorithms norma), document that component's
    parameters: type, default, the range its constructor checks, and what each means.
    """
    registry = watched_registry()
    if name is not None:
        assert kind is not None  # click fills KIND before NAME
        _print_parameters(registry, KIND_NAMES[kind], name, as_json)
        return
    kinds = [KIND_NAMES[kind]] if kind else list(KIND_NAMES.values())
    rows = [r for k in kinds for r in _component_rows(registry, k)]
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    console = output_console()
    for k in kinds:
        plural = next(p for p, one in KIND_NAMES.items() if one == k)
        table = Table(title=f"[bold]{plural}[/bold]", title_justify="left")
        for col in (
            "name",
            "parameters (default)",
            "tasks" if k in ("algorithm", "loss", "dataset") else "",
            "plugin",
        ):
            if col:
                # Nothing is cut: a name keeps its line (a catalogue entry's spec is its
                # name, folded only past the width), the other cells wrap or fold.
                table.add_column(col, overflow="fold", no_wrap=col == "name" and k != "dataset")
        for r in (r for r in rows if r["kind"] == k):
            params = ", ".join(f"{p}={v['default']!r}" for p, v in r["parameters"].items()) or "–"
            cells = [r["name"], params]
            if k in ("algorithm", "loss"):
                cells.append(", ".join(r["tasks"]))
            elif k == "dataset":
                shape = f"n={r.get('n', '?')}, d={r.get('d', '?')}" + (
                    f", classes={r['classes']}" if "classes" in r else ""  # none: regression
                )
                if "cached" in r:  # a catalogue entry: its download size and where it is
                    size = _bytes(r["size"]) if r.get("size") else "size unknown"
                    shape += f"; {size}, {'cached' if r['cached'] else 'not cached'}"
                avail = (
                    "" if r["available"] else f" [red]unavailable: {escape(r['unavailable'])}[/red]"
                )
                cells.append(escape(f"{r['task']} ({r['source']}; {shape})") + avail)
            cells.append(r["plugin"])
            table.add_row(*(c if "[red]" in c else escape(c) for c in cells))
        console.print(table)


def _print_parameters(registry: Any, kind: str, name: str, as_json: bool) -> None:
    """The parameter table of one component (``kbench list KIND NAME``)."""
    entry = registry.entry(kind, name)  # an unknown name: a SpecError listing the valid ones
    params = entry.cls.parameters()
    first = summary(entry.cls.__doc__)
    if as_json:
        rows = [
            {"name": p.name, "type": p.type_name, "default": p.default, "range": p.range_text,
             "doc": p.doc}
            for p in params.values()
        ]  # fmt: skip
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    table = Table(
        title=f"[bold]{kind} {escape(name)}[/bold]: {escape(first)}", title_justify="left"
    )
    for col in ("parameter", "type", "default", "range", "description"):
        table.add_column(col, overflow="fold")
    for p in params.values():
        table.add_row(
            escape(p.name),
            escape(p.type_name),
            escape(repr(p.default)),
            p.range_text,
            escape(plain_text(p.doc)),
        )
    if not params:
        table.add_row("–", "", "", "", "no parameters")
    output_console().print(table)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def plugins(as_json: bool) -> None:
    """List plugins and what each registered."""
    registry = watched_registry()
    infos = list(registry.plugins.values())
    if as_json:
        click.echo(json.dumps([i.to_dict() for i in infos], indent=2))
        return
    table = Table(title="[bold]plugins[/bold]", title_justify="left")
    for col in ("plugin", "source", "version", "registered", "status"):
        table.add_column(col)
    for i in infos:
        status = f"[red]broken: {escape(i.error)}[/red]" if i.error else i.status
        registered = "; ".join(f"{k}: {', '.join(v)}" for k, v in i.components.items()) or "–"
        table.add_row(escape(i.name), i.source, i.version, escape(registered), status)
    output_console().print(table)


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    program()
