"""Degenerate runs behind a reproduction row: the mark the row carries wherever it is shown.

A claim's verdict may rest on a learner that learned nothing (:mod:`kbench.results.degenerate`).
When the paper's study has degenerate runs on the claim's data set, the row says so: its
``degenerate`` text names them, and the terminal table, ``reproduction.md``, ``claims.json``
and the tables of ``docs/reproductions.md`` all show it, with :data:`MARK` after the verdict.

A degenerate configuration belongs to a row when the row's data set names its data set (the
names compared in lower case: ``usps_like`` belongs to ``usps_like[positive=5-9] (stand-in
for USPS)``). Configurations no row names are listed by the command under the table.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from kbench.results.degenerate import MARK, degenerate_summary

__all__ = ["MARK", "degenerate_text", "matches", "summary", "unmatched"]


def summary(runs: pd.DataFrame | None) -> pd.DataFrame:
    """The degenerate configurations of a paper's runs table (:func:`degenerate_summary`)."""
    return degenerate_summary(runs if runs is not None else pd.DataFrame())


def matches(bad: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The rows of a :func:`summary` whose data set the claim's ``dataset`` names."""
    if bad is None or bad.empty:
        return summary(None)
    ds = str(dataset).lower()
    return bad[[str(name).lower() in ds for name in bad["dataset"]]]


def degenerate_text(bad: pd.DataFrame, dataset: str) -> str:
    """The row's degenerate text for its ``dataset`` ('' when no degenerate run is on it):
    ``⚠ degenerate runs on this data set: SPEC (k of n: reasons); …``."""
    hits = matches(bad, dataset)
    if hits.empty:
        return ""
    return f"{MARK} degenerate runs on this data set: " + "; ".join(
        f"{h.algorithm_spec} ({h.degenerate} of {h.runs}: {h.reasons})" for h in hits.itertuples()
    )


def unmatched(bad: pd.DataFrame, datasets: Iterable[str]) -> pd.DataFrame:
    """The rows of a paper's :func:`summary` that none of its claims' ``datasets`` names."""
    if bad is None or bad.empty:
        return summary(None)
    used: set[int] = set()
    for dataset in datasets:
        used |= set(matches(bad, dataset).index)
    return bad.loc[[i for i in bad.index if i not in used]]
