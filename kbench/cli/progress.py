"""The terminal's view of a running study: a progress bar (on a terminal only) and one line
per event."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

_STYLES = {"info": None, "warning": "yellow", "error": None}


class RichProgress:
    """A :class:`kbench.execution.driver.Progress` that draws on a rich console.

    Parameters
    ----------
    console : rich.console.Console
        Where the bar and the messages go (the CLI's standard error).
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self._bar: Progress | None = None
        self._task: Any = None

    def message(self, text: str, *, level: str = "info") -> None:
        # markup off: specs hold brackets, which rich would take for markup tags;
        # soft_wrap: one line, however long a data set's spec.
        self.console.print(
            text, style=_STYLES.get(level), highlight=False, markup=False, soft_wrap=True
        )

    def start(self, total: int) -> None:
        if not self.console.is_terminal:
            # A log file or a pipe gets the messages, not a bar redrawn into it.
            return
        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=self.console,
            auto_refresh=False,
            transient=False,
        )
        self._bar.start()
        self._task = self._bar.add_task("starting", total=total)

    def task_started(self, task: Any) -> None:
        if self._bar is not None:
            self._bar.update(self._task, description=escape(task.label[:60]))
            self._bar.refresh()

    def task_done(self, result: Any) -> None:
        if self._bar is not None:
            self._bar.advance(self._task)
            self._bar.refresh()

    def tick(self) -> None:
        if self._bar is not None:
            self._bar.refresh()

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
