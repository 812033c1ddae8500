"""The README's quick start is what CI runs."""

from __future__ import annotations

from conftest import REPO


def test_ci_runs_the_readme_test_command() -> None:
    """.ci/run ends with the README's second quick-start command, verbatim."""
    readme = (REPO / "README.md").read_text()
    blocks = [b.split("```", 1)[0].strip() for b in readme.split("```bash\n")[1:]]
    quick = blocks[:2]
    assert quick[0] == "bash install.sh && .venv/bin/kbench run"
    ci_lines = [
        ln
        for ln in (REPO / ".ci" / "run").read_text().splitlines()
        if ln and not ln.startswith("#")
    ]
    assert ci_lines[-1] == quick[1]
