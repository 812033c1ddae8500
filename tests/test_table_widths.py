"""Every leaderboard at 80 and 200 columns in a real terminal, and piped (issue 33): no
line wider than the terminal, no name cut (a long label folds onto more lines, never
"…"), and piped output plain text with no control character."""

from __future__ import annotations

import fcntl
import html
import json
import os
import pty
import re
import struct
import subprocess
import termios
from pathlib import Path

import pytest
from rich.cells import cell_len
from test_report_layout import WIDE_STUDY

from helpers import KBENCH, kbench, kbench_run, read_terminal
from kbench.execution.study import DEFAULT_STUDY

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def in_terminal(columns: int, *args: str) -> str:
    """``kbench ARGS`` with standard output on a pseudo-terminal ``columns`` wide; what it
    printed, colours removed."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, columns, 0, 0))
    env = dict(os.environ, COLUMNS=str(columns), TERM="xterm")
    proc = subprocess.Popen(
        [*KBENCH, *args], stdout=slave, stderr=subprocess.DEVNULL, env=env, close_fds=True
    )
    os.close(slave)
    shown = read_terminal(master)
    assert proc.wait(timeout=300) == 0
    return ANSI.sub("", shown.decode().replace("\r\n", "\n"))


def first_column(text: str) -> str:
    """The text of every table's first column, its folded lines joined without spaces."""
    cells = [ln.split("│")[1] for ln in text.splitlines() if ln.startswith("│")]
    return "".join(c.strip().replace(" ", "") for c in cells)


def _run(tmp: Path, *args: str) -> tuple[Path, list[str]]:
    out = tmp / "results"
    kbench_run(out, *args, timeout=900)
    rows = json.loads(kbench("show", str(out), "--format", "json").stdout)["rows"]
    return out, sorted({r["configuration"] for r in rows})


@pytest.fixture(scope="module")
def default_small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """kbench's default study, 200 examples per stream and two seeds."""
    tmp = tmp_path_factory.mktemp("default")
    return _run(tmp, str(DEFAULT_STUDY), "--n", "200", "--seeds", "0-1")


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """12 configurations × 6 data sets with long ids."""
    tmp = tmp_path_factory.mktemp("wide")
    study = tmp / "wide.toml"
    study.write_text(WIDE_STUDY)
    return _run(tmp, str(study))


def test_first_column_check_fails_on_a_cut_name() -> None:
    # The check can fail: a label rich cut with an ellipsis is not found whole.
    table = "│ norma[budget=30,c=0.00… │ 0.1 │\n│ perceptron              │ 0.2 │\n"
    assert "norma[budget=30,c=0.001]" not in first_column(table)
    assert "perceptron" in first_column(table)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["default_small", "wide"])
def test_piped_show_is_plain_full_width_text(which: str, request: pytest.FixtureRequest) -> None:
    out, labels = request.getfixturevalue(which)
    proc = subprocess.run([*KBENCH, "show", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", proc.stdout + proc.stderr)
    assert "…" not in proc.stdout
    for label in labels:  # one line per configuration: every label whole on its line
        assert any(label in ln for ln in proc.stdout.splitlines()), label


@pytest.mark.slow
@pytest.mark.parametrize("which", ["default_small", "wide"])
def test_show_and_compare_agree_on_labels_order_and_marks(
    which: str, request: pytest.FixtureRequest
) -> None:
    """One configuration has one label in show and compare (table and JSON), the rows of a
    stream come in the same order (online error, said in the caption), and the same
    configurations carry the degenerate mark."""
    out, _ = request.getfixturevalue(which)
    shown = json.loads(kbench("show", str(out), "--format", "json").stdout)["rows"]
    compared = json.loads(kbench("compare", str(out), "--format", "json").stdout)["leaderboard"]
    streams = sorted({r["stream"] for r in shown})
    assert streams == sorted({r["stream"] for r in compared})
    for stream in streams:
        a = [r for r in shown if r["stream"] == stream]
        b = [r for r in compared if r["stream"] == stream]
        assert [r["configuration"] for r in a] == [r["label"] for r in b], stream
        errors = [r["online_error"] for r in a]
        assert errors == sorted(errors)
        assert [bool(r["degenerate"]) for r in a] == [bool(r["flags"]) for r in b], stream
    table = kbench("show", str(out)).stdout
    for r in shown:  # the terminal table names every configuration as the JSON does
        assert r["configuration"] in table


@pytest.mark.slow
@pytest.mark.parametrize("command", ["show", "compare"])
@pytest.mark.parametrize("columns", [80, 200])
@pytest.mark.parametrize("which", ["default_small", "wide"])
def test_views_fit_the_terminal_without_cutting_a_name(
    command: str, columns: int, which: str, request: pytest.FixtureRequest
) -> None:
    """No line wider than the terminal and no name cut, in show and compare. show names
    every configuration whole in its first column (a long one folds onto more lines) and
    gives both errors as mean ± sd. compare, at 80 columns, gives the configurations short
    ids (C1, C2, ...) with a legend that names each in full; the rank and win/tie/loss
    tables split their columns over several tables, a long data-set name folds in its
    column's head, and a verdict's reason is said once under its table."""
    out, labels = request.getfixturevalue(which)
    text = in_terminal(columns, command, str(out))
    too_wide = [ln for ln in text.splitlines() if cell_len(ln) > columns]
    assert too_wide == [], too_wide[:3]
    assert "…" not in text
    # show's first column, or all compare printed, its folded lines joined
    names = first_column(text) if command == "show" else "".join(text.split())
    for label in labels:
        assert label.replace(" ", "") in names, label
    if command == "show":
        assert "rows by mean online error over the seeds" in text
        assert re.search(r"0\.\d{4} ± 0\.\d{4} +│ +0\.\d{4} ± 0\.\d{4}", text)  # both errors
        return
    shown = json.loads(kbench("show", str(out), "--format", "json").stdout)["rows"]
    for stream in {r["stream"] for r in shown}:  # every data set named whole
        assert stream.replace(" ", "") in names, stream
    if columns == 80:
        assert "in the tables below" in text and re.search(r"A C\d+ ", text)
        assert "(1)2seeds:cannotbesignificant" in names  # the reason once, numbered


@pytest.mark.slow
@pytest.mark.parametrize("command", ["show", "compare"])
def test_piped_views_keep_no_trailing_blanks(command: str, wide: tuple[Path, list[str]]) -> None:
    """Piped, the tables are drawn at an unbounded width: the blanks padding their
    titles and cells to it are not written."""
    out, _ = wide
    proc = subprocess.run([*KBENCH, command, str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) > 20 and not [ln for ln in lines if ln != ln.rstrip()]


def test_trimmed_lines_keep_text_and_order() -> None:
    """Blanks before a newline go; blanks inside a line, a line still open and the order
    of writes stay."""
    import io

    from kbench.cli.consoles import TrimmedLines

    sink = io.StringIO()
    lines = TrimmedLines(sink)
    lines.write("a  b   \nc")
    assert sink.getvalue() == "a  b\n"  # "c" waits for its newline
    lines.write("d  \n\n  e")
    lines.flush()
    assert sink.getvalue() == "a  b\ncd\n\n  e"


def test_fold_breaks_after_commas_and_keeps_every_character() -> None:
    from kbench.cli.table_fit import fold

    name = "drift[angle=135.0,d=3,drift_at=0.25,kind=rotate,n_test=60,n_train=120,noise=0.05]"
    for width in (10, 20, 30, 200):
        folded = fold(name, width)
        assert folded.replace("\n", "") == name
        assert max(len(line) for line in folded.split("\n")) <= width
    assert fold(name, 30).split("\n")[0] == "drift[angle=135.0,d=3,"


def report_summary(page: str) -> tuple[list[str], dict[tuple[str, str], bool]]:
    """The report's summary table: its configurations in row order, and for each (data
    set, configuration) cell whether it carries the degenerate mark."""
    table = page.split("id='summary'")[1].split("</table>")[0]
    rows = table.split("<tr>")[1:]
    streams = re.findall(r"<th class='num ds' title='([^']*)'", rows[0])
    labels, marked = [], {}
    for row in rows[1:]:
        cfg = re.search(r'<span class="cfg">(.*?)</span> *(?:<span class="flag"|</td>)', row)
        assert cfg, row[:200]
        label = html.unescape(re.sub(r"<[^>]*>", "", cfg.group(1)))  # its <wbr> and swatch
        labels.append(label)
        # after the configuration: its mean rank, a cell per data set, "not finished"
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row.split("</span></td>", 1)[1])[1:-1]
        assert len(cells) == len(streams), row[:300]
        for stream, cell in zip(streams, cells, strict=True):
            marked[(html.unescape(stream), label)] = "flagmark" in cell
    return labels, marked


@pytest.mark.slow
@pytest.mark.parametrize("which", ["default_small", "wide"])
def test_report_agrees_with_show_and_compare(which: str, request: pytest.FixtureRequest) -> None:
    """The HTML report names each configuration as show and compare do, ranks them in
    compare's order (mean rank over the data sets), and marks the same (data set,
    configuration) cells as degenerate as compare's leaderboard flags."""
    out, _ = request.getfixturevalue(which)
    page_path = out.parent / f"{which}-report.html"
    made = kbench("report", str(out), "--out", str(page_path), timeout=600)
    assert made.returncode == 0, made.stderr
    labels, marked = report_summary(page_path.read_text())
    shown = json.loads(kbench("show", str(out), "--format", "json").stdout)["rows"]
    data = json.loads(kbench("compare", str(out), "--format", "json").stdout)
    assert set(labels) == {r["configuration"] for r in shown}
    if len(data["groups"]) == 1:  # one ranking over every data set: the report's order
        ranks = data["groups"][0]["mean_ranks"]
        assert labels == sorted(ranks, key=lambda c: (ranks[c], labels.index(c)))
    flagged = {(r["stream"], r["label"]): bool(r["flags"]) for r in data["leaderboard"]}
    assert {k: v for k, v in marked.items() if k in flagged} == flagged
    assert any(flagged.values()) == any(marked.values())


def test_report_summary_parser_reads_marks() -> None:
    """The parser can fail: a mark on one cell only is found on that cell only."""
    page = (
        "<section id='summary'><table><tr><th>#</th><th class='num ds' title='a[k=1]'>a</th>"
        "<th class='num ds' title='b'>b</th></tr>\n<tr><td class='num'>1</td><td class='cfgcol'>"
        '<span class="cfg"><span class="nowrap"><span class="sw"></span>pa[C=1]</span></span>'
        "</td><td class='num'>1.00</td><td class='num rank1'>1% <span class='flagmark'>⚠</span>"
        "</td><td class='num '>2%</td><td></td></tr></table>"
    )
    labels, marked = report_summary(page)
    assert labels == ["pa[C=1]"]
    assert marked == {("a[k=1]", "pa[C=1]"): True, ("b", "pa[C=1]"): False}
