"""An asv dashboard in a real browser: served from a local HTTP server, rendered by headless
Chromium, with a probe that records what went wrong in the page.

The dashboard loads its data with ``fetch``, which ``file://`` pages may not do, hence the
server. The probe, added to ``index.html`` as it is served, records console errors, uncaught
exceptions, rejected promises and resources that fail to load into an element of the page,
which Chromium's ``--dump-dom`` then prints with the rendered page. ``tests/test_asv.py``
(kbench's own suite) and ``tests/test_asv_plugin.py`` (a plugin's) use it.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

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


@contextlib.contextmanager
def serve(html: Path) -> Iterator[tuple[str, list[tuple[str, int]]]]:
    """Serve a dashboard folder on 127.0.0.1: yields the URL of index.html and the statuses."""
    statuses: list[tuple[str, int]] = []
    handler = type("Handler", (_Dashboard,), {"statuses": statuses})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(html))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html", statuses
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def listed_benchmarks(dom: str) -> set[str]:
    """The benchmark names of the dashboard's list page (``#/summarylist``)."""
    table = element_text(dom, "summarylist-table-0")
    assert table is not None, f"no benchmark list in the page:\n{dom[:2000]}"
    return set(re.findall(r'<td><a href="#([\w.]+)\?"', table))


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError(
        "the dashboard test needs Chromium: apt-get install chromium (install.sh does)"
    )


def render(url: str, profile: Path) -> tuple[str, list[str]]:
    """The DOM of url after its scripts ran, and the console lines Chromium logged."""
    cmd = [
        chromium(),
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


def element_text(dom: str, element_id: str) -> str | None:
    m = re.search(rf'<(\w+)[^>]*\bid="{element_id}"[^>]*>(.*?)</\1>', dom, re.S)
    return None if m is None else m.group(2)


def check_clean(dom: str, console: list[str], where: str) -> None:
    probe = element_text(dom, "kbench-console-errors")
    assert probe is not None, (
        f"{where}: the page did not run its scripts (no probe element):\n{dom[:1500]}"
    )
    assert probe.strip() == "", f"{where}: errors in the browser:\n{probe}"
    uncaught = [line for line in console if "Uncaught" in line or "Error" in line]
    assert not uncaught, f"{where}: console errors:\n" + "\n".join(uncaught)
    message = element_text(dom, "error-message")
    assert message is not None and message.strip() == "", (
        f"{where}: the dashboard shows an error: {message}"
    )
