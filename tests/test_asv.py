"""The asv suite as CI runs it: ``.ci/asv_smoke.sh``, then its dashboard in a real browser.

The script runs ``asv machine``, ``asv check``, a quick ``asv run`` of a subset against this
interpreter's environment and ``asv publish`` into a temporary folder. The test then serves
the dashboard from a local HTTP server (the dashboard loads its data with ``fetch``, which
``file://`` pages may not do) and loads it in headless Chromium. A probe script, added to
``index.html`` as it is served, records console errors, uncaught exceptions, rejected
promises and resources that fail to load into an element of the page, which Chromium's
``--dump-dom`` then prints with the rendered page.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE = """<script>
(function () {
  var seen = [];
  function note(text) {
    seen.push(text);
    var el = document.getElementById("kbench-console-errors");
    if (el) { el.textContent = seen.join("\\n"); }
  }
  var error = console.error;
  console.error = function () {
    note("console.error: " + Array.prototype.join.call(arguments, " "));
    return error.apply(console, arguments);
  };
  window.addEventListener("error", function (e) {
    var t = e.target;
    if (t && t !== window && (t.src || t.href)) { note("failed to load " + (t.src || t.href)); }
    else { note("uncaught: " + e.message); }
  }, true);
  window.addEventListener("unhandledrejection", function (e) { note("unhandled rejection: " + e.reason); });
  document.addEventListener("DOMContentLoaded", function () {
    var el = document.createElement("pre");
    el.id = "kbench-console-errors";
    el.style.display = "none";
    el.textContent = seen.join("\\n");
    document.body.appendChild(el);
  });
})();
</script>"""


class _Dashboard(http.server.SimpleHTTPRequestHandler):
    """Serves the dashboard folder, with the probe added to index.html; records every status."""

    statuses: list[tuple[str, int]]

    def do_GET(self) -> None:
        if self.path.split("?")[0] in ("/", "/index.html"):
            html = (Path(self.directory) / "index.html").read_text(encoding="utf-8")
            body = html.replace("<head>", "<head>\n" + PROBE, 1).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        self.statuses.append((self.path, int(code) if str(code).isdigit() else 0))

    def log_message(self, format: str, *args: object) -> None:  # quiet: statuses are recorded
        pass


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
    html = out / "html"
    statuses: list[tuple[str, int]] = []
    handler = type("Handler", (_Dashboard,), {"statuses": statuses})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(html))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html", out, statuses
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError(
        "the dashboard test needs Chromium: apt-get install chromium (install.sh does)"
    )


def _render(url: str, profile: Path) -> tuple[str, list[str]]:
    """The DOM of url after its scripts ran, and the console lines Chromium logged."""
    cmd = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=30000",
        "--dump-dom",
        url,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, f"chromium exited {proc.returncode}: {proc.stderr[-2000:]}"
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return proc.stdout, console


def _element_text(dom: str, element_id: str) -> str | None:
    m = re.search(rf'<(\w+)[^>]*\bid="{element_id}"[^>]*>(.*?)</\1>', dom, re.S)
    return None if m is None else m.group(2)


def _check_clean(dom: str, console: list[str], where: str) -> None:
    probe = _element_text(dom, "kbench-console-errors")
    assert probe is not None, (
        f"{where}: the page did not run its scripts (no probe element):\n{dom[:1500]}"
    )
    assert probe.strip() == "", f"{where}: errors in the browser:\n{probe}"
    uncaught = [line for line in console if "Uncaught" in line or "Error" in line]
    assert not uncaught, f"{where}: console errors:\n" + "\n".join(uncaught)
    message = _element_text(dom, "error-message")
    assert message is not None and message.strip() == "", (
        f"{where}: the dashboard shows an error: {message}"
    )


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
    dom, console = _render(url + "#/summarylist", tmp_path / "chrome-list")
    _check_clean(dom, console, "benchmark list")
    table = _element_text(dom, "summarylist-table-0")
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
    dom, console = _render(url, tmp_path / "chrome-grid")
    _check_clean(dom, console, "benchmark grid")
    assert dom.count("benchmark-container") >= len(names), "the grid lacks benchmarks"

    failed = [(path, code) for path, code in statuses if code >= 400]
    assert not failed, f"the dashboard requested missing files: {failed}"
    fetched = {path.split("?")[0] for path, _ in statuses}
    assert "/index.json" in fetched and any(p.startswith("/graphs/") for p in fetched), sorted(
        fetched
    )
