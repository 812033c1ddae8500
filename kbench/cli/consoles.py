"""The consoles the command line prints to.

Standard output is as wide as the terminal, and unbounded when it is a file or a pipe, so a
table sent to a pager, a file or ``cut`` is never cut at 80 columns. Standard error is
never hard-wrapped: a message is one line however long (a terminal folds it on screen, a
log file keeps it whole). Neither writes colours or other control characters where it is
not a terminal.
"""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console

WIDE = 10_000
"""Console width when standard output is not a terminal: wide enough for any table."""


class TrimmedLines:
    """A text stream that writes lines to ``out`` without their trailing blanks: tables
    drawn at an unbounded width pad titles and cells with spaces that a file or a pipe
    should not keep. A line waits for its newline; ``flush`` writes a partial one as it is
    (rich prints whole lines, so that happens only to text written without one)."""

    def __init__(self, out: TextIO) -> None:
        self.out, self.pending = out, ""

    def write(self, text: str) -> int:
        *lines, self.pending = (self.pending + text).split("\n")
        if lines:
            self.out.write("".join(line.rstrip() + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.out.write(self.pending)
            self.pending = ""
        self.out.flush()

    def isatty(self) -> bool:
        return False


def output_console() -> Console:
    """A console for standard output: the terminal's width, unbounded (and without the
    blanks that pad its lines) when not a terminal."""
    if sys.stdout.isatty():
        return Console()
    trimmed = TrimmedLines(sys.stdout)
    return Console(file=trimmed, width=WIDE, soft_wrap=False)  # type: ignore[arg-type]


def error_console() -> Console:
    """A console for standard error whose messages are never hard-wrapped."""
    return Console(stderr=True, soft_wrap=True)


__all__ = ["WIDE", "TrimmedLines", "error_console", "output_console"]
