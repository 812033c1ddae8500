"""The asv suite as CI runs it: ``.ci/asv_smoke.sh``, then its dashboard in a real browser.

The script runs ``asv machine``, ``asv check``, a quick ``asv run`` of a subset against this
interpreter's environment and ``asv publish`` into a temporary folder. The test then serves
the dashboard from a local HTTP server and loads it in headless Chromium, with the probe of
``tests/asv_dashboard.py`` recording what goes wrong in the page.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from asv_dashboard import check_clean, element_text, render, serve

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def dashboard_server(tmp_path: Path) -> Iterator[tuple[str, Path, list[tuple[str, int]]]]:
    """Run the smoke script into tmp_path and serve its dashboard on 127.0.0.1."""
    home = tmp_path / "home"  # asv machine writes ~/.asv-machine.json: keep it out of the real home
    home.mkdir()
    env = dict(os.environ, HOME=str(home), PYTHON=sys.executable)
    out = tmp_path / "asv"
    proc = subprocess.run(
        ["bash", str(ROOT / ".ci" / "asv_smoke.sh"), str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    log = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, f"asv smoke script failed (exit {proc.returncode}):\n{log}"
    with serve(out / "html") as (url, statuses):
        yield url, out, statuses


@pytest.mark.slow
def test_asv_smoke_and_dashboard(
    dashboard_server: tuple[str, Path, list[tuple[str, int]]], tmp_path: Path
) -> None:
    url, out, statuses = dashboard_server
    index = json.loads((out / "html" / "index.json").read_text())
    names = sorted(index["benchmarks"])
    assert "bench_algorithms.StreamQuality.track_online_error" in names
    assert "bench_kernels.KernelRow.time_row" in names

    # The benchmark list: a table row for every benchmark and parameter combination.
    dom, console = render(url + "#/summarylist", tmp_path / "chrome-list")
    check_clean(dom, console, "benchmark list")
    table = element_text(dom, "summarylist-table-0")
    assert table is not None, f"no benchmark list in the page:\n{dom[:2000]}"
    listed = set(re.findall(r'<td><a href="#([\w.]+)\?"', table))
    assert listed == set(names), f"benchmark list shows {sorted(listed)}, results have {names}"
    perceptron = re.search(
        r"LearnOne\.time_learn_one</a><a[^>]*> \('perceptron', 'binary-d2'\)</a></td>"
        r'<td class="value" data-sort-value="([^"]+)"',
        table,
    )
    assert perceptron is not None and float(perceptron.group(1)) > 0, (
        "no time for perceptron's learn_one"
    )

    # The grid of plots, the dashboard's front page: one box per benchmark.
    dom, console = render(url, tmp_path / "chrome-grid")
    check_clean(dom, console, "benchmark grid")
    assert dom.count("benchmark-container") >= len(names), "the grid lacks benchmarks"

    failed = [(path, code) for path, code in statuses if code >= 400]
    assert not failed, f"the dashboard requested missing files: {failed}"
    fetched = {path.split("?")[0] for path, _ in statuses}
    assert "/index.json" in fetched and any(p.startswith("/graphs/") for p in fetched), sorted(
        fetched
    )
