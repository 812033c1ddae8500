"""``kbench list`` and ``kbench plugins``: the registered components, their parameters and
the plugins they came from."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from kbench.cli.consoles import output_console
from kbench.cli.docstrings import plain_text, summary
from kbench.cli.plugin_warnings import watched_registry

#: ``kbench list``'s kinds: plural, as typed, to the registry's kind.
KIND_NAMES = {
    "algorithms": "algorithm",
    "kernels": "kernel",
    "losses": "loss",
    "datasets": "dataset",
}


def component_rows(registry: Any, kind: str) -> list[dict[str, Any]]:
    """``kbench list``'s rows of one kind: each component's plugin, parameters and summary,
    with what its kind adds (an algorithm's tasks, a data set's shape and availability);
    a data set's catalogue entries follow it, one row each."""
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


def _bytes(n: float) -> str:
    """A size in bytes, in decimal units (``1.5 MB``)."""
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n} B"  # unreachable


@click.command(name="list")
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
    rows = [r for k in kinds for r in component_rows(registry, k)]
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
            {
                "name": p.name,
                "type": p.type_name,
                "default": p.default,
                "range": p.range_text,
                "doc": p.doc,
            }
            for p in params.values()
        ]
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


@click.command()
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
