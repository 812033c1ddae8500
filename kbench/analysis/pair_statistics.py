"""Statistics of a pair over seeds beside the verdict's own: the one place to add one.

A :class:`PairStatistic` computes one number from the paired differences of two
configurations' final errors (A − B) over the seeds of a data set that both finished.
Each statistic in :data:`PAIR_STATISTICS` becomes a column of
:attr:`~kbench.analysis.comparison.Comparison.seeds`, hence of the JSON output
(``seed_pairs``) and of the CSV output (``--csv``, ``--format csv``), and a column of
every table of pairs over seeds: ``kbench compare`` in the terminal, ``--format
markdown`` and the HTML report, each with its sentence in the legend. Adding a statistic
is adding an entry here (docs/architecture.md); the verdict itself stays the exact
signed-rank test of :mod:`kbench.analysis.statistics`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


def number_text(value: float, regression: bool) -> str:
    """A statistic's cell: four significant digits, a dash where there is no value."""
    return "–" if not math.isfinite(value) else f"{value:.4g}"


@dataclass(frozen=True)
class PairStatistic:
    """One number per pair and data set, from the seeds' paired differences.

    Parameters
    ----------
    name
        Column name in the tables and the CSV/JSON outputs (an identifier).
    header
        Column head of the terminal, Markdown and HTML tables of pairs.
    compute
        ``compute(d) -> float``, ``d`` the differences of final errors A − B over the
        seeds both configurations finished (at least one).
    legend
        One sentence for the legends that says what the number is.
    text
        ``text(value, regression) -> str``: the cell (``regression``: errors are mean
        squared errors, not error rates).
    """

    name: str
    header: str
    compute: Callable[[np.ndarray], float]
    legend: str
    text: Callable[[float, bool], str] = number_text


#: The statistics every view of the pairs over seeds shows, in column order.
PAIR_STATISTICS: list[PairStatistic] = []


def statistic_names() -> list[str]:
    """Column names of :data:`PAIR_STATISTICS`, in order."""
    return [s.name for s in PAIR_STATISTICS]


def statistic_values(d: np.ndarray) -> dict[str, float]:
    """Every statistic of the differences ``d`` (NaN where there are none)."""
    d = np.asarray(d, dtype=float)
    return {s.name: float(s.compute(d)) if len(d) else math.nan for s in PAIR_STATISTICS}


def statistic_headers() -> list[str]:
    """Column heads of :data:`PAIR_STATISTICS`, in order."""
    return [s.header for s in PAIR_STATISTICS]


def statistic_cells(row: Any, regression: bool) -> list[str]:
    """The cells of one row of a pairs table (a namedtuple or mapping with the columns)."""

    def get(name: str) -> float:
        return float(row[name] if isinstance(row, dict) else getattr(row, name))

    return [s.text(get(s.name), regression) for s in PAIR_STATISTICS]


def statistic_legend() -> str:
    """The legends' sentences, joined; empty when there is no statistic."""
    return " ".join(f"{s.header}: {s.legend}" for s in PAIR_STATISTICS)
