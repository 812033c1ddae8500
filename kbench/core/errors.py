"""Exceptions kbench raises for bad input; the CLI prints each as one line."""

from __future__ import annotations


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
