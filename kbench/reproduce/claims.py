"""``kbench reproduce``: the seed papers' experiments as studies, with the papers' claims checked.

Each paper is a study file shipped with kbench (``kbench/studies/reproduce/<paper>.toml``, and
``<paper>-quick.toml`` for the reduced version CI runs) plus a list of :class:`Claim`, in
:mod:`kbench.reproduce.papers` (one module a paper). A claim names the paper's value and the
data set kbench actually uses, and evaluates itself over the results tables: it returns
kbench's value with its spread over seeds and a verdict with the reason
(:mod:`kbench.reproduce.verdicts`), decided by kbench's paired statistics with the paired
streams as the replicates (:mod:`kbench.reproduce.evidence`).

This module runs the claims of a paper into the rows of a reproduction table and writes
them; it also gathers the names the command and the tests take from it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kbench.core.errors import KbenchError
from kbench.core.fileio import atomic_write_text
from kbench.reproduce.causes import cause
from kbench.reproduce.degenerate import MARK, degenerate_text, summary
from kbench.reproduce.evidence import adjust, mean_sd, paired, seeds_needed, select
from kbench.reproduce.papers import PAPERS
from kbench.reproduce.papers.huller import HULLER
from kbench.reproduce.papers.pistol import PISTOL
from kbench.reproduce.papers.polk import POLK
from kbench.reproduce.papers.ramp import RAMP
from kbench.reproduce.papers.svmd import SVMD
from kbench.reproduce.verdicts import (
    CONSISTENT,
    NOT,
    PARTLY,
    REPRODUCED,
    SMOKE,
    VERDICTS,
    Claim,
    Finding,
    Paper,
    base_verdict,
)
from kbench.results.store import Results

__all__ = [
    "CONSISTENT",
    "HULLER",
    "NOT",
    "PAPERS",
    "PARTLY",
    "PISTOL",
    "POLK",
    "RAMP",
    "REPRODUCED",
    "SMOKE",
    "SVMD",
    "VERDICTS",
    "Claim",
    "Finding",
    "Paper",
    "Row",
    "adjust",
    "base_verdict",
    "evaluate",
    "markdown",
    "mean_sd",
    "missing_algorithms",
    "not_run",
    "paired",
    "resolve",
    "seeds_needed",
    "select",
    "write_tables",
]


@dataclass
class Row:
    """One line of a reproduction table."""

    paper: str
    claim: str
    text: str
    paper_value: str
    kbench_value: str
    dataset: str
    verdict: str
    reason: str
    degenerate: str = ""
    """Degenerate runs of the paper's study on the row's data set, as one text starting with
    the mark ('' when there are none): :func:`kbench.reproduce.degenerate.degenerate_text`."""

    @property
    def marked_verdict(self) -> str:
        """The verdict, with the degenerate mark when the row has degenerate runs."""
        return f"{self.verdict} {MARK}" if self.degenerate else self.verdict

    @property
    def why(self) -> str:
        """The reason, and the degenerate text on a line of its own when there is one."""
        return f"{self.reason}\n{self.degenerate}" if self.degenerate else self.reason


def resolve(name: str) -> list[Paper]:
    """The papers a ``kbench reproduce`` argument names; KbenchError for an unknown one."""
    if name == "all":
        return list(PAPERS.values())
    if name not in PAPERS:
        raise KbenchError(f"unknown paper {name!r}: expected one of {', '.join(PAPERS)} or all")
    return [PAPERS[name]]


def missing_algorithms(paper: Paper, registry: Any) -> list[str]:
    """The algorithms a paper's study needs that are not registered."""
    have = set(registry.names("algorithm"))
    return [a for a in paper.algorithms if a not in have]


def evaluate(paper: Paper, results: Results, quick: bool = False) -> list[Row]:
    """Evaluate every claim of a paper; a claim that cannot be evaluated is not reproduced,
    with why. ``quick``: the results are those of the smoke-run study, and every verdict
    says so (:data:`SMOKE`). A row whose data set has degenerate runs in ``results`` says so
    in its ``degenerate`` text (:mod:`kbench.reproduce.degenerate`)."""
    bad = summary(getattr(results, "runs", None))
    rows = []
    for c in paper.claims:
        try:
            f = c.evaluate(results)
        except (KbenchError, KeyError, ValueError, ZeroDivisionError) as exc:
            # A claim whose runs failed or are missing is not reproduced; say why, go on.
            f = Finding("–", NOT, f"could not be evaluated: {exc}")
        verdict = SMOKE + f.verdict if quick else f.verdict
        reason = f.reason
        why_not = cause(paper.key, c.id)
        if why_not and not quick and base_verdict(f.verdict) != REPRODUCED:
            reason = f"{reason}; {why_not}"  # the experiment that isolates the gap
        rows.append(
            Row(
                paper.key,
                c.id,
                c.text,
                c.paper,
                f.value,
                c.dataset,
                verdict,
                reason,
                degenerate_text(bad, c.dataset),
            )
        )
    return rows


def not_run(paper: Paper, missing: Sequence[str]) -> list[Row]:
    """Rows of a paper whose algorithms are not registered."""
    reason = f"not run: algorithm {', '.join(missing)} is not available"
    return [
        Row(paper.key, c.id, c.text, c.paper, "–", c.dataset, NOT, reason) for c in paper.claims
    ]


def markdown(rows: Sequence[Row]) -> str:
    """The rows as a Markdown table: a row with degenerate runs has the mark after its verdict
    and the degenerate text after its reason."""
    head = "| paper | claim | paper's value | kbench (mean ± sd over seeds) | data set | verdict | why |\n"
    head += "|---|---|---|---|---|---|---|\n"

    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    return head + "".join(
        f"| {r.paper} | **{r.claim}** {cell(r.text)} | {cell(r.paper_value)} | {cell(r.kbench_value)} "
        f"| {cell(r.dataset)} | {r.marked_verdict} | {cell(r.why)} |\n"
        for r in rows
    )


def write_tables(rows: Sequence[Row], out: Path) -> tuple[Path, Path]:
    """Write ``reproduction.md`` and ``claims.json`` into ``out``; a row's entry in
    ``claims.json`` carries its ``degenerate`` text ('' when none)."""
    out.mkdir(parents=True, exist_ok=True)
    md, js = out / "reproduction.md", out / "claims.json"
    atomic_write_text(md, markdown(rows))
    atomic_write_text(js, json.dumps([asdict(r) for r in rows], indent=1, ensure_ascii=False))
    return md, js
