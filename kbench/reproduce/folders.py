"""Checks of ``kbench reproduce``'s arguments made before anything runs.

``--out`` is the parent of one results folder per paper (``OUT/<paper>/``). Pointing it at a
results folder, or at a folder whose ``<paper>/`` holds another study's results, would mix
studies in one folder; both are refused with a message saying what the folder holds.
``PAPER:CLAIM`` selects one claim of a paper (``polk:C10``); an unknown claim is refused
with the paper's claim ids.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kbench.core.errors import KbenchError, ResultsError
from kbench.reproduce.claims import Paper, resolve
from kbench.results.store import read_run

#: Result files read to tell whose study a folder holds (enough to see its algorithms).
SAMPLE = 200


def resolve_claims(name: str) -> list[Paper]:
    """The papers ``name`` selects: ``PAPER``, ``all`` or ``PAPER:CLAIM`` (that claim only)."""
    paper, sep, claim = name.partition(":")
    papers = resolve(paper)
    if not sep:
        return papers
    if paper == "all":
        raise KbenchError(f"a claim needs a paper: {name!r} (e.g. polk:C10)")
    p = papers[0]
    ids = [c.id for c in p.claims]
    wanted = [c for c in p.claims if c.id.lower() == claim.lower()]
    if not wanted:
        raise KbenchError(f"unknown claim {claim!r} of {p.key}: expected one of {', '.join(ids)}")
    return [dataclasses.replace(p, claims=tuple(wanted))]


def _algorithms(folder: Path) -> set[str]:
    """Algorithms of (up to :data:`SAMPLE`) finished tasks in a results folder."""
    found: set[str] = set()
    files = sorted(p for p in (folder / "tasks").glob("*.parquet") if not p.name.startswith("."))
    for path in files[:SAMPLE]:
        try:
            found.add(str(read_run(path)["algorithm"]))
        except (ResultsError, KeyError):
            continue  # an unreadable file is set aside by the run itself
    return found


def check_out(out: Path, papers: list[Paper]) -> None:
    """KbenchError when ``out`` is a results folder itself, or when ``out/<paper>`` holds
    results of algorithms the paper's study does not run (another study's folder)."""
    if (out / "tasks").is_dir():
        raise KbenchError(
            f"--out {out} is a results folder: kbench reproduce writes one results folder per "
            "paper inside --out; give its parent or a new folder"
        )
    for p in papers:
        folder = out / p.key
        if not (folder / "tasks").is_dir():
            continue
        other = _algorithms(folder) - set(p.algorithms)
        if other:
            raise KbenchError(
                f"{folder} holds results of another study (algorithm {', '.join(sorted(other))}; "
                f"kbench reproduce {p.key} runs {', '.join(p.algorithms)}): give another --out"
            )
