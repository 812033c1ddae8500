"""``kbench asv``: asv regression tracking for a plugin's own repository."""

from __future__ import annotations

from pathlib import Path

import click

from kbench.cli.options import NonEmptyPath


@click.group()
def asv() -> None:
    """Track a plugin's speed and accuracy over its commits with asv (kbench asv init).

    `kbench asv init` in the plugin's folder writes asv.conf.json and
    benchmarks/bench_plugin.py; asv then benchmarks the plugin's algorithms and kernels
    on kbench's fixed streams (see docs/asv.md).
    """


@asv.command()
@click.argument(
    "folder",
    required=False,
    default=".",
    type=NonEmptyPath(exists=True, file_okay=False, path_type=Path),
)
def init(folder: Path) -> None:
    """Write asv.conf.json and benchmarks/bench_plugin.py for the plugin in FOLDER.

    FOLDER (default: the current folder) holds the pyproject.toml that declares the
    plugin's [project.entry-points.kbench], inside a git repository. Existing files are
    never overwritten: if asv.conf.json or benchmarks/bench_plugin.py exists, nothing is
    written.
    """
    from kbench.asv.project import init_project

    project, written = init_project(folder)
    names = ", ".join(repr(p) for p in project.plugins)
    click.echo(
        f"kbench: wrote {', '.join(str(p) for p in written)} for plugin {names} "
        f"({project.distribution})"
    )
    click.echo(
        "next, from that folder, with the Python kbench is installed in:\n"
        "  asv machine --yes\n"
        f"  {'asv run NEW'.ljust(32)}# the commits of {project.branch} not measured yet\n"
        f"  {f'asv continuous {project.branch} HEAD'.ljust(32)}# fails if HEAD got slower or less accurate\n"
        "  asv publish && kbench asv offline .asv/html && asv preview\n"
        "(asv keeps its environments, results and dashboard in .asv/: add it to .gitignore)"
    )


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
