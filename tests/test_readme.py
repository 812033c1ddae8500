"""The README's quick start is what CI runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO


def test_ci_runs_the_readme_test_command() -> None:
    """.ci/run runs the README's second quick-start command, verbatim, and then tests kbench
    as installed from its wheel, which pip builds from its sdist."""
    readme = (REPO / "README.md").read_text()
    blocks = [b.split("```", 1)[0].strip() for b in readme.split("```bash\n")[1:]]
    quick = blocks[:2]
    assert quick[0] == "bash install.sh && .venv/bin/kbench run"
    ci_lines = [
        ln
        for ln in (REPO / ".ci" / "run").read_text().splitlines()
        if ln and not ln.startswith("#")
    ]
    assert ci_lines[-2:] == [quick[1], "SUITE=fast INSTALL_SDIST=0 bash .ci/installed.sh 3.11"]


def _python_example() -> str:
    """The code block of the README's "From Python" section, verbatim."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.slow
def test_readme_python_example_runs_verbatim(tmp_path: Path) -> None:
    """The README's library example runs as printed, with no terminal, and resumes."""
    script = tmp_path / "example.py"
    script.write_text(_python_example())
    first = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert first.returncode == 0, first.stderr
    # The study's 12 tasks are in the folder; the comparison printed a verdict line.
    assert len(list((tmp_path / "results-python" / "tasks").glob("*.parquet"))) == 12
    assert " vs " in first.stdout and "(p = " in first.stdout
    assert first.stderr == ""  # the library prints nothing of its own
    # Run again: every task is resumed from the folder, and the printed tables are the same.
    again = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout


def test_readme_images_are_files_kbench_drew() -> None:
    """Every image the README shows is in the repository: the leaderboard's a9a figure, an
    SVG that kbench publish drew (its title and its Pareto front's numbered legend)."""
    import re

    readme = (REPO / "README.md").read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)
    assert "docs/images/leaderboard-a9a.svg" in images
    for rel in images:
        assert (REPO / rel).is_file(), rel
    svg = (REPO / "docs/images/leaderboard-a9a.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "a9a[n=1500]: online error against time" in svg and "1: " in svg
