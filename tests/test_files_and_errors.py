"""Files kbench writes and the data errors it refuses: modes that follow the umask, and bad
data that stops ``kbench run`` with one line, exit status 2 and nothing written."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from helpers import KBENCH

DIGITS = "digits[positive=5-9,n=120,test_size=0.3]"


def _kbench_umask(mask: int, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``kbench ARGS`` in a subprocess whose umask is ``mask``."""
    return subprocess.run(
        [*KBENCH, *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=dict(os.environ, COLUMNS="200"),
        preexec_fn=lambda: os.umask(mask),
    )


def _modes(folder: Path) -> dict[str, int]:
    return {
        str(p.relative_to(folder)): stat.S_IMODE(p.stat().st_mode)
        for p in [folder, *folder.rglob("*")]
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mask", "file_mode", "dir_mode"), [(0o022, 0o644, 0o755), (0o027, 0o640, 0o750)]
)
def test_written_files_follow_the_umask(
    tmp_path: Path, mask: int, file_mode: int, dir_mode: int
) -> None:
    """Results, summary tables, the report, compare's files and the data cache get the
    modes a plain open() gives under the umask (0600 before: unreadable to the group)."""
    out = tmp_path / "res"
    proc = _kbench_umask(
        mask, "run", "-a", "perceptron", "-a", "pa", "-d", DIGITS, "--seeds", "0-1",
        "--workers", "0", "--out", str(out), "--report",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    proc = _kbench_umask(
        mask, "compare", str(out), "--csv", str(out / "pairs.csv"),
        "--json", str(out / "pairs.json"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    modes = _modes(out)
    for name in ("runs.parquet", "traces.parquet", "report.html", "pairs.csv", "pairs.json"):
        assert name in modes
    assert len([n for n in modes if n.startswith("tasks/")]) == 4
    cache = Path(os.environ["KBENCH_CACHE"])
    cached = {n: m for n, m in _modes(cache).items() if (cache / n).is_file()}
    assert cached, "the stream was not cached"
    for folder, found in ((out, modes), (cache, cached)):
        for name, mode in found.items():
            want = dir_mode if (folder / name).is_dir() else file_mode
            assert mode == want, f"{folder / name}: {oct(mode)}, not {oct(want)}"


def _data_error_cases(tmp: Path) -> dict[str, tuple[str, str]]:
    """Data-set specs that cannot be built, with a piece of the one line that says why."""
    (tmp / "empty.csv").write_text("")
    (tmp / "bad.svm").write_text("1 1:0.5\n-1 2:x\n1 1:0.7\n")
    return {
        "missing CSV": (f"csv[path={tmp / 'missing.csv'}]", "missing.csv: no such file"),
        "empty CSV": (f"csv[path={tmp / 'empty.csv'}]", "empty.csv: no rows"),
        "malformed LIBSVM": (f"libsvm[path={tmp / 'bad.svm'}]", "bad.svm:2: malformed feature"),
        "positive=11": ("digits[positive=11]", "has no class 11"),
    }


@pytest.mark.parametrize("case", ["missing CSV", "empty CSV", "malformed LIBSVM", "positive=11"])
def test_data_error_exits_2_with_one_line_and_writes_nothing(tmp_path: Path, case: str) -> None:
    """A data set that cannot be built refuses the study: exit 2, one line on stderr, no
    progress bar, no results folder (before: exit 1, a bar of 0/0 and an empty folder)."""
    spec, why = _data_error_cases(tmp_path)[case]
    out = tmp_path / "res"
    proc = _kbench_umask(
        0o022, "run", "-a", "perceptron", "-d", spec, "-d", DIGITS, "--workers", "0",
        "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("kbench: error: stream ") and why in lines[0], lines[0]
    assert proc.stdout == ""
    assert not out.exists()


def test_data_error_leaves_an_existing_folder_as_it_was(tmp_path: Path) -> None:
    """A study with a bad data set run into a folder of earlier results changes nothing
    there, and names every stream that cannot be built in its one line."""
    out = tmp_path / "res"
    proc = _kbench_umask(0o022, "run", "-a", "perceptron", "-d", DIGITS, "--workers", "0",
                         "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    proc = _kbench_umask(
        0o022, "run", "-a", "perceptron", "-d", DIGITS, "-d", "digits[positive=11]",
        "--seeds", "0-2", "--workers", "0", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert "(seed 0): data set 'digits' has no class 11" in line
    assert "2 other streams cannot be built either (digits[positive=11])" in line
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


def test_show_of_a_folder_without_results_exits_2(tmp_path: Path) -> None:
    """``kbench show`` of a results folder with no task in it says so (exit 2), as
    ``compare`` and ``report`` do; before, it printed nothing and exited 0."""
    (tmp_path / "res" / "tasks").mkdir(parents=True)
    for command in ("show", "compare", "report"):
        proc = _kbench_umask(0o022, command, str(tmp_path / "res"))
        assert proc.returncode == 2, (command, proc.stderr)
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith("kbench: error:") and "no task results" in line, line
    assert [p.name for p in (tmp_path / "res").rglob("*")] == ["tasks"]
