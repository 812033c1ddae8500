"""Docstrings as the command line shows them: plain text, and their first sentence."""

from __future__ import annotations

import re

#: reStructuredText's inline literals and roles: ``x``, :func:`x`, :class:`~a.x`...
RST_ROLE = re.compile(r"``(.+?)``|:(?:func|class|mod|meth|attr|data):`~?(.+?)`")
#: The end of a sentence: its punctuation, then the blanks before a capital or a bracket.
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")


def plain_text(text: str) -> str:
    """Docstring text without its reStructuredText markup: ``x`` and :func:`x` as x."""
    return RST_ROLE.sub(lambda m: m.group(1) or m.group(2), text)


def summary(doc: str | None) -> str:
    """The first sentence of a docstring, whole (its lines joined), without markup."""
    paragraph = " ".join((doc or "").strip().split("\n\n")[0].split())
    return plain_text(SENTENCE_END.split(paragraph, maxsplit=1)[0])
