"""The ``kbench compare`` and ``kbench report`` commands (registered on the ``kbench`` group)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from kbench.analysis.tables import count
from kbench.cli.consoles import error_console
from kbench.cli.options import NonEmptyPath, alpha_option, format_option, results_argument
from kbench.core.errors import ResultsError
from kbench.results.degenerate import LEGEND as DEGENERATE_LEGEND

METRIC_CHOICE = click.Choice(["online_error", "test_error", "final_epoch_error"])
err = error_console()

#: The RESULTS folder both commands read.
_results_argument = results_argument()


def _metric_option(help: str) -> Any:
    """The ``--metric`` option (the final error to compare), with its help."""
    return click.option(
        "--metric", type=METRIC_CHOICE, default="online_error", show_default=True, help=help
    )


def _file_option(*names: str, help: str) -> Any:
    """An option naming a file to write (none by default), with its help."""
    return click.option(
        *names, type=NonEmptyPath(dir_okay=False, path_type=Path), default=None, help=help
    )


@click.command()
@_results_argument
@_metric_option(
    "Final error compared across seeds and data sets "
    "(per-stream tests always use the online outcomes)."
)
@alpha_option
@click.option(
    "--rope",
    type=float,
    default=None,
    help="Also run the Bayesian signed-rank test across data sets with this region of "
    "practical equivalence on the error difference (0.01 = one point).",
)
@click.option(
    "--streams", "show_streams", is_flag=True, help="Also print every pair on every single stream."
)
@_file_option("--csv", "csv_path", help="Write what --format csv prints to this file.")
@_file_option("--json", "json_path", help="Write what --format json prints to this file.")
@format_option(
    "table: terminal tables; markdown: per data set, configurations and pairs; latex: "
    "one booktabs table (mean ± sd over seeds, best in bold, marks and legend); csv: every "
    "pairwise test; json: every table."
)
@click.option(
    "--tune-budget",
    type=click.IntRange(min=1),
    default=None,
    help="Compare only the runs tuned with this many configurations (tune = {budget = N}), "
    "so every learner had the same tuning budget.",
)
def compare(
    results: Path,
    metric: str,
    alpha: float,
    rope: float | None,
    show_streams: bool,
    csv_path: Path | None,
    json_path: Path | None,
    fmt: str,
    tune_budget: int | None,
) -> None:
    """Compare every pair of algorithm configurations in a RESULTS folder.

    RESULTS defaults to kbench-results, where kbench run writes by default.

    Per data set: an exact Wilcoxon signed-rank test over the seeds' final errors for every
    pair (the verdict), with the mean difference and its interval, Holm-corrected; across
    data sets: mean ranks, the Friedman test, Nemenyi groups, pairwise tests and, with
    --rope, the Bayesian signed-rank test; per stream (--streams): a description of each
    stream, and a win/tie/loss count.
    """
    import kbench
    from kbench.cli.render import output_console, print_comparison, print_tuning

    started = time.perf_counter()
    cmp = kbench.compare(results, metric=metric, alpha=alpha, rope=rope, tune_budget=tune_budget)
    cmp.check_pairable(results)
    if fmt == "table":
        console = output_console()
        print_comparison(cmp, console, show_streams)
        print_tuning(cmp, console)
        if any(cmp.configs["flags"].fillna("") != ""):
            console.print(f"[yellow]{escape(DEGENERATE_LEGEND)}[/yellow]", highlight=False)
    else:
        click.echo(cmp.format(fmt), nl=False)
    for path, write in ((csv_path, cmp.write_csv), (json_path, cmp.write_json)):
        if path is not None:
            write(path)
            err.print(f"kbench: wrote {path}", highlight=False)
    err.print(
        f"kbench: compared {count(len(cmp.configs), 'configuration')} on "
        f"{count(cmp.pairs['stream_id'].nunique(), 'stream')} "
        f"({count(len(cmp.pairs), 'paired stream')}, "
        f"{count(len(cmp.seeds), 'pair')} tested over seeds) "
        f"in {time.perf_counter() - started:.2f} s",
        highlight=False,
    )


@click.command()
@_results_argument
@_file_option("-o", "--out", help="HTML file to write [default: RESULTS/report.html].")
@_metric_option("Final error ranked across seeds and data sets.")
@alpha_option
@click.option(
    "--title", default=None, help="Title of the report [default: the results folder's name]."
)
def report(results: Path, out: Path | None, metric: str, alpha: float, title: str | None) -> None:
    """Write a self-contained HTML report of a RESULTS folder (plots embedded).

    RESULTS defaults to kbench-results, where kbench run writes by default.
    """
    from kbench.core.extras import require
    from kbench.report.html import write_report

    require("report", "kbench report")

    import kbench

    started = time.perf_counter()
    tables = kbench.load(results)  # read once, for the comparison and the plots
    cmp = kbench.compare(tables, metric=metric, alpha=alpha)
    out = out if out is not None else results / "report.html"
    try:
        path = write_report(
            cmp, tables, out, title=title or results.resolve().name, source=str(results.resolve())
        )
    except OSError as exc:
        raise ResultsError(f"cannot write the report to {out}: {exc.strerror or exc}") from None
    click.echo(str(path))
    err.print(
        f"kbench: report of {count(len(cmp.runs), 'task')} written in {time.perf_counter() - started:.2f} s",
        highlight=False,
    )
