"""``kbench reproduce --markdown``: the claims tables of docs/reproductions.md are regenerated."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kbench.core.errors import KbenchError
from kbench.reproduce.claims import Row, markdown
from kbench.reproduce.markdown import END, begin_marker, merge_rows, update_markdown

KBENCH = [sys.executable, "-m", "kbench.cli.main"]
DOCS = Path(__file__).parents[1] / "docs" / "reproductions.md"


def _row(paper: str, claim: str, value: str = "v", verdict: str = "reproduced") -> Row:
    return Row(
        paper, claim, f"text of {claim} | with a pipe", "paper", value, "data", verdict, "why"
    )


def _page(rows: list[Row], quick: bool = False) -> str:
    return (
        "# Title\n\nprose before\n\n"
        + begin_marker(quick)
        + "\n"
        + markdown(rows)
        + END
        + "\n\nprose after\n"
    )


def test_merge_replaces_the_papers_run_and_keeps_the_others_in_place():
    old = markdown(
        [_row("svmd", "R1"), _row("polk", "C6"), _row("polk", "C10"), _row("huller", "9")]
    )
    lines = merge_rows(old.splitlines(), [_row("polk", "C6", "new"), _row("polk", "C11", "new")])
    papers = [line.split(" | ")[0].strip("| ") for line in lines]
    assert papers == ["svmd", "polk", "polk", "huller"]
    assert "**C11**" in lines[2] and "**C10**" not in "".join(lines)
    assert lines[0] == old.splitlines()[2]  # svmd's row untouched, byte for byte
    # a paper not yet in the table is appended
    lines = merge_rows(old.splitlines(), [_row("ramp", "9")])
    assert lines[-1].startswith("| ramp | **9**")


def test_update_markdown_rewrites_only_between_the_markers(tmp_path):
    doc = tmp_path / "page.md"
    doc.write_text(
        _page([_row("svmd", "R1"), _row("polk", "C6")]) + _page([_row("svmd", "R1", "q")], True)
    )
    update_markdown(doc, [_row("polk", "C6", "fresh", "partly")], quick=False)
    text = doc.read_text()
    assert text.count("prose before") == 2 and text.count("prose after") == 2
    full, quick = text.split(begin_marker(True))
    assert "| fresh |" in full and "| partly |" in full and "| fresh |" not in quick
    assert "| q |" in quick  # the quick table is another table


def test_update_markdown_refuses_a_page_without_the_table(tmp_path):
    doc = tmp_path / "page.md"
    doc.write_text("# no table here\n")
    with pytest.raises(KbenchError, match="has no line"):
        update_markdown(doc, [_row("polk", "C6")], quick=False)
    doc.write_text(begin_marker(False) + "\n| paper |\n")
    with pytest.raises(KbenchError, match="has no"):
        update_markdown(doc, [_row("polk", "C6")], quick=False)


def test_the_docs_page_has_both_generated_tables_with_every_claim():
    from kbench.reproduce.claims import PAPERS

    text = DOCS.read_text()
    for quick in (False, True):
        start = text.index(begin_marker(quick))
        table = text[start : text.index(END, start)]
        for p in PAPERS.values():
            for c in p.claims:
                assert f"| {p.key} | **{c.id}** " in table, (quick, p.key, c.id)


def test_cli_markdown_checks_the_page_before_running(tmp_path):
    """A page without the markers is refused in one line, exit 2, before any task runs."""
    doc = tmp_path / "page.md"
    doc.write_text("# no table\n")
    out = tmp_path / "out"
    res = subprocess.run(
        [*KBENCH, "reproduce", "polk", "--quick", "--out", str(out), "--markdown", str(doc)],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2
    assert "has no line" in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_paper_colon_claim_selects_one_claim_and_refuses_an_unknown_one():
    from kbench.reproduce.folders import resolve_claims

    (p,) = resolve_claims("polk:c10")
    assert [c.id for c in p.claims] == ["C10"]
    with pytest.raises(KbenchError, match=r"unknown claim 'C99' of polk: expected one of C6, C10"):
        resolve_claims("polk:C99")
    with pytest.raises(KbenchError, match="unknown paper"):
        resolve_claims("nope:C1")
    with pytest.raises(KbenchError, match="a claim needs a paper"):
        resolve_claims("all:C1")


def test_out_folder_of_another_study_is_refused(tmp_path):
    """A folder whose polk/ holds svmd's results, or --out given a results folder itself."""
    import pandas as pd

    from kbench.core.errors import KbenchError as Err
    from kbench.execution.prequential import TaskResult
    from kbench.reproduce.claims import PAPERS
    from kbench.reproduce.folders import check_out
    from kbench.results.store import ResultsStore

    store = ResultsStore(tmp_path / "polk")
    store.prepare()
    store.write(
        TaskResult(
            run={"task_id": "t1", "algorithm": "svmd", "status": "ok"},
            traces=pd.DataFrame({"task_id": pd.Series([], dtype=str)}),
        )
    )
    with pytest.raises(Err, match=r"holds results of another study \(algorithm svmd"):
        check_out(tmp_path, [PAPERS["polk"]])
    check_out(tmp_path, [PAPERS["svmd"]])  # svmd's own folder: fine (resume)
    with pytest.raises(Err, match="is a results folder"):
        check_out(tmp_path / "polk", [PAPERS["polk"]])
