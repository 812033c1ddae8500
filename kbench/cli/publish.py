"""The ``kbench publish`` command (registered on the ``kbench`` group)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from kbench.cli.consoles import error_console
from kbench.cli.options import NonEmptyPath

err = error_console()


@click.command()
@click.argument("results", nargs=-1, required=True, type=NonEmptyPath(path_type=Path))
@click.option(
    "-o",
    "--out",
    required=True,
    type=NonEmptyPath(path_type=Path),
    help="The site's folder: new, empty, or a site published before (updated in place).",
)
@click.option(
    "--asv",
    type=NonEmptyPath(path_type=Path, exists=True),
    default=None,
    help="An asv dashboard (asv publish's html folder) to link from the index.",
)
@click.option("--title", default="kbench results", show_default=True, help="The site's title.")
def publish(results: tuple[Path, ...], out: Path, asv: Path | None, title: str) -> None:
    """Publish RESULTS folders as a static site in OUT.

    The site needs no server (open OUT/index.html, or copy OUT to any static host): an
    index of the studies with their provenance; per data set, the leaderboard of every
    study as a table to sort, filter and search, with figures (error against time per
    example with the Pareto front, error against model size, learning curves) as SVG
    and PDF and the table as CSV, Markdown and LaTeX; a page per learner and per study.

    Publishing again into OUT updates the site: folders unchanged since are read from its
    cache, and files whose content is unchanged are left as they are. A folder that
    cannot be published is named in one line and on the index, and the site is built
    from the others (exit status 1); exit status 2 when nothing could be published.
    """
    import kbench

    started = time.perf_counter()
    done = kbench.publish(
        results,
        out,
        asv=asv,
        title=title,
        note=lambda line: err.print(f"kbench: left out {line}", highlight=False, markup=False),
    )
    click.echo(str(done.site / "index.html"))
    n = len(done.studies)
    err.print(
        f"kbench: published {n} {'study' if n == 1 else 'studies'} in "
        f"{time.perf_counter() - started:.2f} s ({done.written} files written, "
        f"{done.unchanged} unchanged, {done.removed} removed, {done.figures_drawn} figures drawn; "
        f"{done.summaries_computed} of {n} read from their results)",
        highlight=False,
    )
    if done.skipped:
        sys.exit(1)
