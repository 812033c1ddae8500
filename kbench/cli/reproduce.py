"""``kbench reproduce``: run a seed paper's experiments and check its claims."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from kbench.cli.consoles import error_console, output_console
from kbench.cli.options import force_option, workers_option
from kbench.core.errors import KbenchError
from kbench.results.degenerate import LEGEND, MARK


@click.command()
@click.argument("paper")
@click.option(
    "--quick", is_flag=True, help="The reduced version (a few minutes on two cores; CI runs it)."
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("kbench-reproduce"),
    show_default=True,
    help="Folder for the results (one subfolder per paper), the reports and the claims table.",
)
@workers_option
@force_option
@click.option("--no-report", is_flag=True, help="Do not write a report per paper.")
@click.option(
    "--markdown",
    type=click.Path(dir_okay=False, path_type=Path),
    is_flag=False,
    flag_value=Path("docs/reproductions.md"),
    default=None,
    help="Also rewrite the claims table of this Markdown page (bare: docs/reproductions.md) "
    "between its kbench reproduce markers: the rows of the papers run, the others kept.",
)
def reproduce(
    paper: str,
    quick: bool,
    out: Path,
    workers: int | None,
    force: bool,
    no_report: bool,
    markdown: Path | None,
) -> None:
    """Run PAPER's experiments (svmd, ramp, pistol, huller, polk, qklms, duol, krlst, oisvm or all) and check its claims.

    PAPER:CLAIM (e.g. polk:C10) runs the paper's study and checks that claim only.

    Prints one row per claim: the paper's value, kbench's value with its spread over seeds,
    the data set used and a verdict with its reason. Running the same command again resumes.
    """
    from kbench.cli.plugin_warnings import watched_registry
    from kbench.cli.progress import RichProgress
    from kbench.execution.driver import run_experiments
    from kbench.execution.study import load_study
    from kbench.reproduce.claims import (
        CONSISTENT,
        NOT,
        PARTLY,
        REPRODUCED,
        base_verdict,
        evaluate,
        missing_algorithms,
        not_run,
        write_tables,
    )
    from kbench.reproduce.degenerate import summary, unmatched
    from kbench.reproduce.folders import check_out, resolve_claims
    from kbench.results.store import ResultsStore

    err = error_console()
    if not no_report:  # said before the studies run, not after
        from kbench.core.extras import require

        require("report", "kbench reproduce's report", "or run it with --no-report")
    papers = resolve_claims(paper)
    check_out(out, papers)
    if workers is not None and workers < 0:
        raise KbenchError(f"--workers must be 0 or more, got {workers}")
    if markdown is not None:
        from kbench.reproduce.markdown import check_page

        check_page(markdown, quick)  # before the run, not after it
    registry = watched_registry()
    if len(papers) == 1:
        missing = missing_algorithms(papers[0], registry)
        if missing:
            raise KbenchError(
                f"cannot reproduce {papers[0].key}: algorithm {', '.join(missing)} is not available"
            )
    rows = []
    degenerate = {}  # paper → its study's degenerate runs (the rows carry those they match)
    for p in papers:
        missing = missing_algorithms(p, registry)
        if missing:
            err.print(f"kbench: {p.key}: not run: algorithm {', '.join(missing)} is not available")
            rows += not_run(p, missing)
            continue
        err.print(
            f"kbench: reproducing {p.key} ({'quick' if quick else 'full'}): {p.title}",
            highlight=False,
        )
        folder = out / p.key
        store = ResultsStore(folder)
        outcome = run_experiments(
            load_study(p.study(quick)),
            registry,
            store,
            progress=RichProgress(err),
            workers=workers,
            force=force,
            skip_bad_streams=True,  # a paper's other data sets still run
        )
        tables = store.collect().subset(outcome.task_ids)
        rows += evaluate(p, tables, quick=quick)
        degenerate[p.key] = summary(tables.runs)
        if not no_report and (tables.runs["status"] == "ok").any():
            import kbench
            from kbench.report.html import write_report

            path = write_report(
                kbench.compare(folder),
                kbench.load(folder),
                folder / "report.html",
                title=f"kbench reproduce {p.key}",
                source=str(folder.resolve()),
                references=list(p.references),
            )
            err.print(f"kbench: report written to {path}", highlight=False)
    table = Table(title=f"kbench reproduce {paper}{' --quick' if quick else ''}", show_lines=True)
    for col in (
        "paper",
        "claim",
        "paper's value",
        "kbench (mean ± sd)",
        "data set",
        "verdict",
        "why",
    ):
        table.add_column(col, overflow="fold")
    colour = {REPRODUCED: "green", PARTLY: "yellow", CONSISTENT: "yellow", NOT: "red"}
    for r in rows:  # the degenerate mark and text are the row's own (kbench.reproduce.degenerate)
        c = colour[base_verdict(r.verdict)]
        mark = f" [yellow]{MARK}[/yellow]" if r.degenerate else ""
        why = f"\n[yellow]{escape(r.degenerate)}[/yellow]" if r.degenerate else ""
        table.add_row(
            r.paper,
            f"{r.claim}: {escape(r.text)}",
            escape(r.paper_value),
            escape(r.kbench_value),
            escape(r.dataset),
            f"[{c}]{escape(r.verdict)}[/{c}]{mark}",
            escape(r.reason) + why,
        )
    console = output_console()
    console.print(table)
    for key, bad in degenerate.items():  # degenerate runs no row's data set names
        for h in unmatched(bad, [r.dataset for r in rows if r.paper == key]).itertuples():
            console.print(
                f"[yellow]{MARK} {escape(key)}: degenerate runs of {escape(h.algorithm_spec)} on "
                f"{escape(h.stream)} ({h.degenerate} of {h.runs}: {escape(h.reasons)})[/yellow]",
                highlight=False,
            )
    if any(len(v) for v in degenerate.values()):
        console.print(f"[yellow]{escape(LEGEND)}[/yellow]", highlight=False)
    md, _ = write_tables(rows, out)
    err.print(
        f"kbench: claims table written to {md} and {md.with_name('claims.json')}", highlight=False
    )
    if markdown is not None:
        from kbench.reproduce.markdown import update_markdown

        update_markdown(markdown, rows, quick)
        err.print(f"kbench: claims table of {markdown} regenerated", highlight=False)
    sys.stdout.flush()
