"""Command-line options: the ones several commands share, and checks of option values
(finite numbers in range, sizes with units, paths, scheduler addresses).

Each check raises :class:`~kbench.core.errors.KbenchError` (or, for a path, click's
``BadParameter``) with one line that names the option, the value and why it is refused;
the CLI prints it and exits with status 2.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import click

from kbench.core.errors import KbenchError

#: Longest --timeout: beyond it the wait cannot be scheduled; leave --timeout out for none.
MAX_TIMEOUT = 1e7
#: Most worker processes a study may ask for (each is a process of its own).
MAX_WORKERS = 1024
#: Smallest --max-memory: below it a learner cannot allocate even its first kernel rows.
MIN_MEMORY = 16 << 20
#: Largest --max-memory: the address space a 64-bit Linux process can have (128T).
MAX_MEMORY = 1 << 47

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.I)


def _size_text(n: float) -> str:
    for unit in ("T", "G", "M", "K"):
        if n >= _UNITS[unit] and n % _UNITS[unit] == 0:
            return f"{int(n // _UNITS[unit])}{unit}"
    return f"{int(n)}"


def check_number(
    option: str,
    value: float | int | None,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    why_high: str = "",
) -> None:
    """Refuse a value that is not finite or lies outside ``[low, high]`` (``(low`` if open)."""
    if value is None:
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise KbenchError(f"{option} {value}: must be a finite number")
    if low is not None and (value < low or (low_open and value == low)):
        bound = "more than" if low_open else "at least"
        raise KbenchError(f"{option} must be {bound} {low:g}, got {value:g}")
    if high is not None and value > high:
        raise KbenchError(
            f"{option} must be at most {high:g}, got {value:g}"
            + (f" ({why_high})" if why_high else "")
        )


def parse_size(
    option: str, text: str | None, *, low: int = MIN_MEMORY, high: int = MAX_MEMORY
) -> int | None:
    """Bytes from ``512M``, ``2G``, ``1.5T``, ``100K`` or plain bytes (``KB``/``KiB`` too)."""
    if text is None:
        return None
    m = _SIZE.match(text)
    if not m:
        raise KbenchError(f"{option} {text!r}: expected a size such as 2G, 500M or 1000000")
    value = float(m.group(1)) * _UNITS[m.group(2).upper()]
    if not math.isfinite(value) or value > high:
        raise KbenchError(
            f"{option} {text!r}: at most {_size_text(high)}, the address space a process can have"
        )
    if value < low:
        raise KbenchError(
            f"{option} {text!r}: at least {_size_text(low)}; a task's learner, kernel rows and "
            f"Python's own allocations need that much beyond the memory already mapped"
        )
    return int(value)


_ADDRESS = re.compile(
    r"^(?:(?P<scheme>[a-z][a-z0-9+.\-]*)://)?"
    r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.\-]+)(?::(?P<port>[0-9]{1,5}))?/?$"
)
_SCHEMES = ("tcp", "tls", "ucx", "ws", "wss", "inproc")


def check_address(text: str | None) -> str | None:
    """A Dask scheduler address ``[tcp://]host[:port]``, checked before anything starts."""
    if text is None:
        return None
    m = _ADDRESS.match(text.strip())
    if not m or (m["scheme"] not in (None, *_SCHEMES)) or not 0 < int(m["port"] or 1) < 65536:
        scheme = m and m["scheme"] not in (None, *_SCHEMES)
        why = (
            f"unknown protocol {m and m['scheme']!r} (expected one of {', '.join(_SCHEMES)})"
            if scheme
            else "expected an address such as tcp://host:8786 or host:8786"
        )
        raise KbenchError(f"--scheduler {text!r}: {why}")
    return text.strip()


#: The results folder ``kbench run`` writes, and the one show, compare and report read,
#: when none is given.
DEFAULT_RESULTS = "kbench-results"


def results_argument(**path: Any) -> Any:
    """The RESULTS argument of show, compare and report: a folder, ``kbench-results`` (where
    ``kbench run`` writes by default) when left out."""
    return click.argument(
        "results",
        required=False,
        default=DEFAULT_RESULTS,
        type=NonEmptyPath(path_type=Path, **path),
    )


#: What the commands that print tables can print them as (``--format``).
TABLE_FORMATS = click.Choice(["table", "markdown", "latex", "csv", "json"])


def format_option(help: str) -> Any:
    """The ``--format`` option (into ``fmt``) of a command that prints tables, with its help."""
    return click.option(
        "--format", "fmt", type=TABLE_FORMATS, default="table", show_default=True, help=help
    )


#: Options that several commands take word for word (``kbench run`` and ``kbench reproduce``;
#: ``kbench compare`` and ``kbench report``).
workers_option = click.option(
    "--workers",
    type=int,
    default=None,
    help="Tasks run at once [default: number of cores]; 0 runs in this process.",
)
force_option = click.option("--force", is_flag=True, help="Rerun tasks that already have results.")
alpha_option = click.option(
    "--alpha", type=float, default=0.05, show_default=True, help="Significance level."
)


class ExecutorOption(click.Option):
    """``--executor``: its help names the registered executors, which are looked up only when
    the help is shown (it may load every plugin)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from kbench.core.registry import get_registry

        names = ", ".join(get_registry().names("executor"))
        self.help = f"Where tasks run: a registered executor ({names})."
        return super().get_help_record(ctx)


class NonEmptyPath(click.Path):
    """A click path that refuses the empty string (which would otherwise mean ``.``)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("an empty path names no file or folder", param, ctx)
        if isinstance(value, str) and "\x00" in value:
            self.fail(f"{value!r} holds a NUL character, which no path may", param, ctx)
        return super().convert(value, param, ctx)


__all__ = [
    "DEFAULT_RESULTS",
    "MAX_MEMORY",
    "MAX_TIMEOUT",
    "MAX_WORKERS",
    "MIN_MEMORY",
    "TABLE_FORMATS",
    "NonEmptyPath",
    "alpha_option",
    "check_address",
    "check_number",
    "force_option",
    "format_option",
    "parse_size",
    "results_argument",
    "workers_option",
]
