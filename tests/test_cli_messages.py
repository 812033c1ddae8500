"""What the command line says, and how: help without markup or cut sentences, messages that
are one line in a log file, no progress bar where there is no terminal, plurals, p-values,
the default results folder, and the hints that tell a user what to change."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from helpers import KBENCH
from kbench.analysis.tables import count, p_text

COMMANDS = ["run", "show", "list", "plugins", "compare", "report", "cache", "reproduce"]
MARKUP = re.compile(r"``|:(func|class|mod|meth|attr|data):`")


def _kbench(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    """``kbench ARGS`` with standard output and error piped, and no COLUMNS unless given:
    as in a log file or a pipe."""
    environ = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | env
    return subprocess.run(
        [*KBENCH, *args], capture_output=True, text=True, timeout=300, cwd=cwd, env=environ
    )


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    """``kbench run`` into the default folder of a fresh working directory: FOGD with the
    RBF kernel at its default width on digits (degenerate), the perceptron, and LASVM,
    binary only (skipped)."""
    cwd = tmp_path_factory.mktemp("cwd")
    proc = _kbench(
        "run", "-a", "fogd", "-a", "perceptron", "-a", "lasvm", "-d", "digits[n=300]",
        "--workers", "0", cwd=cwd,
        KBENCH_CACHE=str(tmp_path_factory.mktemp("cache")),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return cwd, proc


def test_piped_stderr_has_no_progress_bar_and_no_hard_wrap(study) -> None:
    """Piped, a run's stderr is its messages, each on one line (before: a bar's last frame
    and messages broken at 80 columns)."""
    _, proc = study
    assert "━" not in proc.stderr and " eta " not in proc.stderr
    assert "\x1b" not in proc.stderr + proc.stdout  # no colours or cursor moves
    lines = proc.stderr.splitlines()
    assert all(line.startswith("kbench: ") for line in lines), lines
    skip = next(line for line in lines if "skipped lasvm" in line)
    assert len(skip) > 80


def test_multiclass_skip_suggests_one_vs_rest(study) -> None:
    _, proc = study
    assert (
        "kbench: skipped lasvm on digits: lasvm does not support multiclass tasks (supports "
        'binary); --multiclass ovr (multiclass = "ovr" in a study) runs it one-vs-rest'
    ) in proc.stderr


def test_degenerate_note_and_width_hint(study) -> None:
    """One run: "1 of 1 run" (not "1 runs"); and a degenerate learner whose RBF kernel is at
    its default width gets a hint saying which knob to turn."""
    _, proc = study
    assert "degenerate (1 of 1 run)" in proc.stdout, proc.stdout
    assert "kbench: hint: fogd with rbf at its default width is degenerate on digits" in (
        proc.stderr
    )


def test_show_compare_report_default_to_the_folder_run_writes(study) -> None:
    """Without RESULTS, show, compare and report read kbench-results, where run wrote."""
    cwd, _ = study
    assert (cwd / "kbench-results" / "runs.parquet").is_file()
    for command in ("show", "compare", "report"):
        proc = _kbench(command, cwd=cwd)
        assert proc.returncode == 0, (command, proc.stderr)
    assert (cwd / "kbench-results" / "report.html").is_file()
    proc = _kbench("show", cwd=cwd / "kbench-results")  # no kbench-results below: one line
    assert proc.returncode == 2 and "kbench-results is not a kbench results folder" in proc.stderr


def test_list_titles_and_piped_cells_are_whole() -> None:
    """The losses table is titled "losses" (was "losss"); piped, no cell is cut at 80."""
    proc = _kbench("list")
    assert proc.returncode == 0
    assert "losss" not in proc.stdout and re.search(r"^losses\b", proc.stdout, re.M)
    for whole in ("averaged_perceptron", "kbench.algorithms.averaged_perceptron"):
        assert re.search(rf"[│ ]{re.escape(whole)}[│ ]", proc.stdout), whole
    assert "…" not in proc.stdout


def test_summaries_are_whole_sentences_without_markup() -> None:
    """kbench list's summaries: a docstring's first sentence, all of it, no RST."""
    rows = json.loads(_kbench("list", "--json").stdout)
    for row in rows:
        text = row["summary"]
        assert text and text.rstrip()[-1] in ".)!?", (row["name"], text)
        assert not MARKUP.search(text), (row["name"], text)


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_has_no_markup_and_no_cut_sentence(command: str) -> None:
    """--help at 80 columns: no reStructuredText, and kbench --help gives each command's
    first sentence whole (click cut them with "...")."""
    proc = _kbench(*([command] if command else []), "--help", COLUMNS="80")
    assert proc.returncode == 0
    assert not MARKUP.search(proc.stdout), proc.stdout
    assert "..." not in proc.stdout.replace("[ARGS]...", "").replace("[OPTIONS]...", "")
    if not command:
        text = " ".join(proc.stdout.split())
        assert (
            "Run PAPER's experiments (svmd, ramp, pistol, huller, polk, qklms, duol, krlst, oisvm or all) and check its "
            "claims." in text
        )


def test_plural_and_p_value_text() -> None:
    assert [count(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]
    assert p_text(1e-20) == "p < 1e-16"
    assert p_text(0.0021) == "p = 0.002"
    assert p_text(3.1e-5) == "p = 3.1e-05"
    assert p_text(float("nan")) == "p = –"


def test_study_file_key_list_names_out(tmp_path: Path) -> None:
    """An unknown key in [study] lists every key [study] takes, out included."""
    study = tmp_path / "s.toml"
    study.write_text(
        '[study]\nlosss = ["hinge"]\n[[experiment]]\nalgorithms = ["perceptron"]\n'
        'datasets = ["digits"]\n'
    )
    proc = _kbench("run", str(study))
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert "unknown key 'losss' in [study] (did you mean 'losses'?)" in line
    keys = line.split("; keys: ")[1].split(", ")
    assert "out" in keys and "losses" in keys
