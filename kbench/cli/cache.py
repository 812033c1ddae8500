"""``kbench cache``: what the data cache holds, per data set, and clearing it."""

from __future__ import annotations

import json

import click
from rich.markup import escape
from rich.table import Table

from kbench.cli.consoles import output_console
from kbench.core.errors import KbenchError


def _size(nbytes: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if nbytes < 1024 or unit == "GiB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024  # type: ignore[assignment]
    return f"{nbytes} B"  # not reached


@click.command()
@click.option(
    "--clear",
    "clear",
    is_flag=True,
    help="Delete the cache, or only DATASET's cached streams.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.argument("dataset", required=False)
def cache(clear: bool, as_json: bool, dataset: str | None) -> None:
    """Show the data cache's size per data set (and in total), or clear it.

    The cache holds each data set's arrays once and one small record per stream (spec
    and seed); it lives in $KBENCH_CACHE, else ~/.cache/kbench. `kbench cache --clear`
    empties it (downloads included); `kbench cache --clear DATASET` deletes one data
    set's entries. Cleared streams are rebuilt when next needed.
    """
    from kbench.data.downloads import cache_dir
    from kbench.data.streams import cache_usage, clear_cache

    root = cache_dir()
    usage = cache_usage()
    if dataset is not None and not clear:
        usage = [u for u in usage if u.name == dataset]
        if not usage:
            if _registered(dataset):
                click.echo(f"kbench: nothing cached for data set {dataset!r}")
                return
            raise KbenchError(_nothing_cached(dataset, root))
    if clear:
        try:
            freed = clear_cache(dataset)
        except KeyError:
            if _registered(dataset or ""):
                click.echo(f"kbench: nothing cached for data set {dataset!r}")
                return
            raise KbenchError(_nothing_cached(dataset or "", root)) from None
        except OSError as exc:
            raise KbenchError(f"cannot clear the cache {root}: {exc}") from None
        what = f"{dataset!r}'s cached streams" if dataset else f"the cache {root}"
        click.echo(f"kbench: cleared {what} ({_size(freed)})")
        return
    total = sum(u.nbytes for u in usage)
    if as_json:
        click.echo(
            json.dumps(
                {"cache": str(root), "total_bytes": total, "entries": [vars(u) for u in usage]},
                indent=2,
            )
        )
        return
    table = Table(title=f"[bold]data cache[/bold] {escape(str(root))}", title_justify="left")
    for col, justify in (("data set", "left"), ("arrays", "right"), ("streams", "right")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    table.add_column("size", justify="right")
    for u in usage:
        table.add_row(
            escape(u.name),
            str(u.data_files) if u.data_files else "–",
            str(u.streams) if u.streams else "–",
            _size(u.nbytes),
        )
    table.add_row("[bold]total[/bold]", "", "", f"[bold]{_size(total)}[/bold]")
    output_console().print(table)


def _registered(dataset: str) -> bool:
    from kbench.core.registry import get_registry

    return dataset in get_registry().names("dataset")


def _nothing_cached(dataset: str, root: object) -> str:
    from kbench.core.registry import get_registry
    from kbench.core.specs import suggest
    from kbench.data.streams import cache_usage

    cached = [u.name for u in cache_usage() if u.data_files or u.streams]
    hint = suggest(dataset, [*cached, *get_registry().names("dataset")])
    known = f"cached: {', '.join(cached)}" if cached else "the cache is empty"
    return f"no data set named {dataset!r}{hint}; {known} in {root}"
