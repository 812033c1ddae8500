"""The consoles the command line prints to.

Standard output is as wide as the terminal, and unbounded when it is a file or a pipe, so a
table sent to a pager, a file or ``cut`` is never cut at 80 columns. Standard error is
never hard-wrapped: a message is one line however long (a terminal folds it on screen, a
log file keeps it whole). Neither writes colours or other control characters where it is
not a terminal.
"""

from __future__ import annotations

import sys

from rich.console import Console

WIDE = 10_000
"""Console width when standard output is not a terminal: wide enough for any table."""


def output_console() -> Console:
    """A console for standard output: the terminal's width, unbounded when not a terminal."""
    if sys.stdout.isatty():
        return Console()
    return Console(width=WIDE, soft_wrap=False)


def error_console() -> Console:
    """A console for standard error whose messages are never hard-wrapped."""
    return Console(stderr=True, soft_wrap=True)


__all__ = ["WIDE", "error_console", "output_console"]
