"""A reproduction row carries the degenerate runs of its data set, so every output of
``kbench reproduce`` marks them: the terminal table, reproduction.md, claims.json and the
tables of docs/reproductions.md."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from test_reproduce import NORMA_SPEC, SVMD_SPEC, _results

from kbench.reproduce.claims import SVMD, evaluate, markdown, write_tables
from kbench.reproduce.degenerate import degenerate_text, summary, unmatched
from kbench.reproduce.markdown import END, begin_marker, update_markdown
from kbench.results.degenerate import MARK
from kbench.results.store import Results

REASON = "online: at the majority-class rate (50.0% vs 50.0%)"


def _svmd_results(norma_degenerate: bool) -> Results:
    """SVMD's R1 arms on usps_like; NORMA's runs degenerate or not."""
    res = _results(
        {
            "smd": (SVMD_SPEC.format(lam=0.95), 0.10),
            "one": (SVMD_SPEC.format(lam=0.0), 0.14),
            "norma": (NORMA_SPEC, 0.20),
        },
        seeds=8,
    )
    bad = res.runs["algorithm"].eq("norma") & norma_degenerate
    res.runs["degenerate"] = [REASON if b else "" for b in bad]
    return res


def _row_line(md: str, claim: str) -> str:
    return next(line for line in md.splitlines() if f"| **{claim}** " in line)


def test_a_degenerate_run_on_the_claims_data_set_marks_its_row(tmp_path: Path) -> None:
    rows = evaluate(SVMD, _svmd_results(norma_degenerate=True))
    r1 = next(r for r in rows if r.claim == "R1")
    assert r1.verdict == "reproduced"  # the verdict itself is unchanged
    assert r1.degenerate == (
        f"{MARK} degenerate runs on this data set: {NORMA_SPEC} (8 of 8: "
        "online: at the majority-class rate)"
    )
    assert r1.marked_verdict == f"reproduced {MARK}"
    assert r1.why.endswith("\n" + r1.degenerate)
    # Every SVMD claim is on usps_like or another data set: only those on usps_like are marked.
    for r in rows:
        assert bool(r.degenerate) == ("usps_like" in r.dataset.lower()), r.claim
    # reproduction.md and claims.json
    md_path, js_path = write_tables(rows, tmp_path)
    line = _row_line(md_path.read_text(), "R1")
    assert f"| reproduced {MARK} |" in line
    assert line.endswith(f" {r1.degenerate} |")
    entry = next(e for e in json.loads(js_path.read_text()) if e["claim"] == "R1")
    assert entry["degenerate"] == r1.degenerate and entry["verdict"] == "reproduced"
    # the tables of docs/reproductions.md (--markdown)
    doc = tmp_path / "page.md"
    doc.write_text(begin_marker(False) + "\n" + markdown([]) + END + "\n")
    update_markdown(doc, rows, quick=False)
    assert _row_line(doc.read_text(), "R1") == line


def test_no_degenerate_run_no_mark(tmp_path: Path) -> None:
    rows = evaluate(SVMD, _svmd_results(norma_degenerate=False))
    assert all(r.degenerate == "" and r.marked_verdict == r.verdict for r in rows)
    assert all(r.why == r.reason for r in rows)
    md_path, js_path = write_tables(rows, tmp_path)
    assert MARK not in md_path.read_text()
    assert all(e["degenerate"] == "" for e in json.loads(js_path.read_text()))


def test_degenerate_runs_no_row_names_are_left_for_the_command() -> None:
    runs = pd.DataFrame(
        {
            "stream": ["usps_like[positive=5-9]", "checkerboard", "checkerboard"],
            "algorithm_spec": ["norma", "svmd", "svmd"],
            "degenerate": [REASON, REASON, ""],
        }
    )
    bad = summary(runs)
    assert degenerate_text(bad, "usps_like[positive=5-9] (stand-in for USPS)").startswith(MARK)
    assert "checkerboard" not in degenerate_text(bad, "USPS_LIKE (stand-in)")
    assert degenerate_text(bad, "a9a") == ""
    rows = evaluate(SVMD, _svmd_results(norma_degenerate=False))  # data sets: usps_like, …
    left = unmatched(bad, [r.dataset for r in rows])
    assert list(left["dataset"]) == ["checkerboard"] and list(left["degenerate"]) == [1]
    assert unmatched(summary(None), [r.dataset for r in rows]).empty
