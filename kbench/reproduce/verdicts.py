"""A paper, its claims and what checking a claim gives: :class:`Paper`, :class:`Claim`,
:class:`Finding` and the verdicts.

A claim is ``reproduced`` only when its tests reach α after Holm; a claim whose direction
holds without significance is ``consistent, not significant`` (with the seeds that would be
needed when the seeds run cannot reach α at all); ``partly`` is a significant result with a
quantitative part missed; and ``not reproduced`` the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbench.results.store import Results

STUDIES = Path(__file__).parents[1] / "studies" / "reproduce"
REPRODUCED = "reproduced"
PARTLY = "partly"
CONSISTENT = "consistent, not significant"
NOT = "not reproduced"
VERDICTS = (REPRODUCED, PARTLY, CONSISTENT, NOT)
"""The verdicts a claim can get; ``consistent, not significant`` may carry ``(needs ≥ N
seeds)``."""
SMOKE = "smoke run: "
"""Prefix of every verdict of ``kbench reproduce --quick`` (quick sizes, not the paper's)."""


def base_verdict(verdict: str) -> str:
    """The verdict of :data:`VERDICTS` a verdict string starts with (after a smoke-run prefix)."""
    v = verdict.removeprefix(SMOKE)
    for name in VERDICTS:
        if v == name or v.startswith(name + " "):
            return name
    raise ValueError(f"verdict must start with one of {VERDICTS}, got {verdict!r}")


@dataclass(frozen=True)
class Finding:
    """What kbench measured for one claim.

    Attributes
    ----------
    value : str
        kbench's value, with its spread over seeds (mean ± sd).
    verdict : str
        One of :data:`VERDICTS` (``consistent, not significant`` may say how many seeds
        would be needed).
    reason : str
        Why that verdict: the numbers and the test behind it.
    """

    value: str
    verdict: str
    reason: str

    def __post_init__(self) -> None:
        base_verdict(self.verdict)


@dataclass(frozen=True)
class Claim:
    """One claim of a paper and how kbench checks it.

    Attributes
    ----------
    id : str
        The claim's id in the paper's spec (R1, C10, 9, ...).
    text : str
        What the paper claims, in one sentence.
    paper : str
        The paper's value.
    dataset : str
        The data set kbench uses, naming any stand-in.
    evaluate : callable
        ``evaluate(results) -> Finding`` over the tables of the paper's study.
    """

    id: str
    text: str
    paper: str
    dataset: str
    evaluate: Callable[[Results], Finding]


@dataclass(frozen=True)
class Paper:
    """A seed paper: its study files, the algorithms they need, its claims.

    Attributes
    ----------
    key : str
        The name given to ``kbench reproduce``.
    title : str
        Authors, title and venue.
    algorithms : tuple of str
        Registered algorithms the study needs.
    claims : tuple of Claim
        The claims checked.
    references : tuple of dict
        Published values marked in the report (see :func:`kbench.report.html.render_report`).
    """

    key: str
    title: str
    algorithms: tuple[str, ...]
    claims: tuple[Claim, ...]
    references: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    def study(self, quick: bool) -> Path:
        """The study file of the full or the quick version."""
        return STUDIES / (f"{self.key}-quick.toml" if quick else f"{self.key}.toml")
