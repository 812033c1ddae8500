"""Exceptions kbench raises for bad input; the CLI prints each as one line."""

from __future__ import annotations

import traceback


class KbenchError(Exception):
    """Base class: an error whose message is meant for the user, on one line."""


class SpecError(KbenchError, ValueError):
    """An unknown component or parameter, or a value that cannot be used."""


class RegistryError(KbenchError):
    """A plugin registered something invalid."""


class DataError(KbenchError, ValueError):
    """A data set or file that cannot be turned into a stream."""


class ResultsError(KbenchError):
    """A results folder or file that cannot be read or written."""


def interrupted(exc: BaseException | None) -> bool:
    """Whether Ctrl-C is behind ``exc``: a ``KeyboardInterrupt`` itself, or one that another
    exception was raised from or while handling.

    A Ctrl-C that lands while a compiled module initialises (an import of matplotlib's
    font module, say) comes out of the import as ``ImportError: initialization failed``
    raised from the ``KeyboardInterrupt``; treated as an ordinary error it would be
    reported as a broken import instead of the user's interruption.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def one_line(exc: BaseException) -> str:
    """An exception on one line: a kbench error's message, else ``Type: message``, first line."""
    text = (
        f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, (SpecError, RegistryError))
        else str(exc)
    )
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


def format_exception_line(exc: BaseException) -> str:
    """The last line of a traceback: ``Type: message``."""
    return traceback.format_exception_only(type(exc), exc)[-1].strip()
