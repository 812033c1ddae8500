"""Tables that fit the terminal without cutting a cell: columns split over several tables,
each repeating the first, and long labels and heads folded after their commas."""

from __future__ import annotations

import itertools

from rich.cells import cell_len
from rich.markup import escape
from rich.table import Table
from rich.text import Text

#: Columns narrower than this for a configuration's label make the table split instead.
LABEL_MIN = 24


def cell_width(text: str) -> int:
    """The widest line of a cell's text (markup removed)."""
    return max(cell_len(line) for line in Text.from_markup(text).plain.split("\n"))


def fold(text: str, width: int) -> str:
    """``text`` in lines of at most ``width`` cells, broken after commas where it can
    (a data set's name in a column head): the name stays whole, over several lines."""
    if width < 8 or cell_len(text) <= width:
        return text
    lines, line = [], ""
    for part in text.replace(",", ",\0").split("\0"):
        while cell_len(part) > width:  # no comma near enough: a hard break
            room = width - cell_len(line)
            lines.append(line + part[:room])
            line, part = "", part[room:]
        if line and cell_len(line + part) > width:
            lines.append(line)
            line = ""
        line += part
    return "\n".join([*lines, line] if line else lines)


def fold_markup(markup: str, width: int) -> str | Text:
    """A cell's markup folded after commas (:func:`fold`) when wider than ``width``:
    ``norma[c=0.001,`` / ``offset=True]`` rather than ``norma[c=0.001,offset=T`` / ``rue]``."""
    text = Text.from_markup(markup)
    lines = fold(text.plain, width).split("\n")
    if len(lines) == 1:
        return markup
    offsets = list(itertools.accumulate(len(line) for line in lines[:-1]))
    return Text("\n").join(text.divide(offsets))


def column_chunks(needed: list[int], fixed: int, width: int) -> list[list[int]]:
    """The columns (by index, ``needed`` their widths) split into tables that each fit
    ``width`` beside the ``fixed`` columns every one repeats; at least one column each."""
    chunks: list[list[int]] = [[]]
    used = fixed
    for j, w in enumerate(needed):
        if chunks[-1] and used + w > width:
            chunks.append([])
            used = fixed
        chunks[-1].append(j)
        used += w
    return chunks


def needed_widths(heads: list[str], rows: list[list[str]]) -> list[int]:
    """Each column's width with rich's padding and rule: the widest cell or head, plus 3."""
    return [max(cell_width(h), *(cell_width(r[i]) for r in rows)) + 3 for i, h in enumerate(heads)]


def notes_fit(
    labels: list[str], heads: list[str], rows: list[list[str]], notes: list[str], width: int
) -> bool:
    """Whether the notes fit as the table's last column at this width."""
    if not any(notes):
        return True
    widest = max(cell_width(x) for x in labels) + 4
    return widest + sum(needed_widths(heads, rows)) + max(map(cell_width, notes)) + 3 <= width


def fitted_tables(
    title: str,
    caption: str,
    labels: list[str],
    heads: list[str],
    rows: list[list[str]],
    notes: list[str],
    width: int,
) -> list[Table]:
    """The leaderboard of one stream as tables that fit ``width`` without cutting a cell.

    One table when everything fits (a pipe or a wide terminal); otherwise the notes go
    below it, and the number columns are split over as many tables as it takes, each
    repeating the configuration, whose label folds onto more lines rather than being cut.
    """
    with_notes = notes_fit(labels, heads, rows, notes, width)
    needed = needed_widths(heads, rows)
    label_w = min(max(cell_width(x) for x in labels) + 4, max(LABEL_MIN, width // 3))
    groups = column_chunks(needed, label_w, width)
    tables = []
    for g, cols in enumerate(groups):
        part = f" ({g + 1}/{len(groups)})" if len(groups) > 1 else ""
        t = Table(
            title=f"[bold]{escape(title)}[/bold]{part}",
            caption=caption if g == len(groups) - 1 else None,
            caption_justify="left",
            title_justify="left",
        )
        t.add_column("algorithm", overflow="fold", ratio=1)
        for i in cols:
            t.add_column(heads[i], justify="right", no_wrap=True, min_width=needed[i] - 3)
        if with_notes and g == len(groups) - 1 and any(notes):
            t.add_column("notes", overflow="fold")
        for k, label in enumerate(labels):
            cells = [fold_markup(label, label_w - 4), *(rows[k][i] for i in cols)]
            if with_notes and g == len(groups) - 1 and any(notes):
                cells.append(notes[k])
            t.add_row(*cells)
        tables.append(t)
    return tables
