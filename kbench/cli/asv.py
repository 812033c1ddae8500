"""``kbench asv``: asv regression tracking for a plugin's own repository."""

from __future__ import annotations

from pathlib import Path

import click

from kbench.cli.options import NonEmptyPath


@click.group()
def asv() -> None:
    """asv, the airspeed velocity benchmark runner, and kbench's asv suites."""


@asv.command()
@click.argument("html_dir", type=NonEmptyPath(exists=True, file_okay=False, path_type=Path))
def offline(html_dir: Path) -> None:
    """Make the dashboard in HTML_DIR (asv publish's html_dir) work without network.

    asv's page loads jQuery, Flot and Bootstrap from CDNs; this copies kbench's vendored
    copies next to it and points the page at them.
    """
    from kbench.asv.dashboard import make_offline

    replaced = make_offline(html_dir)
    click.echo(f"kbench: dashboard {html_dir} now loads {len(replaced)} vendored libraries")
