"""Measure a report's text in headless Chromium: overlapping text, text cut off by its
figure, text running out of its box or off the page.

``layout_problems(html, width)`` copies the page with a small script that reads the
bounding box of every text element (each ``<text>`` of the inline SVG figures, each
line of every HTML text node) once the fonts are loaded, and writes what it found into
the DOM; Chromium's ``--dump-dom`` hands the DOM back. Run as a script to print the
problems of a report: ``python tests/layout_check.py REPORT.html [WIDTH]``.
"""

from __future__ import annotations

import html as _html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CHECK = r"""
<script>
(function () {
  function box(r) { return {l: r.left + scrollX, t: r.top + scrollY, r: r.right + scrollX,
                            b: r.bottom + scrollY}; }
  function run() {
    var items = [], clipped = [], spill = [], offpage = [];
    var pageW = document.documentElement.clientWidth;
    document.querySelectorAll('svg text').forEach(function (t) {
      if (t.closest('details:not([open])')) return;
      var r = t.getBoundingClientRect();
      if (r.width < 0.5 || r.height < 0.5 || !t.textContent.trim()) return;
      var it = box(r); it.s = t.textContent.trim().slice(0, 80); it.k = 'svg';
      items.push(it);
      var f = box(t.ownerSVGElement.getBoundingClientRect());
      if (it.l < f.l - 1 || it.r > f.r + 1 || it.t < f.t - 1 || it.b > f.b + 1)
        clipped.push(it.s);
    });
    var w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT), n;
    while ((n = w.nextNode())) {
      if (!n.textContent.trim()) continue;
      var p = n.parentElement;
      if (!p || p.closest('svg, script, style, title')) continue;
      // The closed part of a <details> is not drawn (its boxes are stale, not visible).
      var d = p.closest('details:not([open])');
      if (d && !p.closest('summary')) continue;
      if (p.checkVisibility && !p.checkVisibility({visibilityProperty: true})) continue;
      var st = getComputedStyle(p);
      if (st.visibility === 'hidden' || st.display === 'none') continue;
      var range = document.createRange(); range.selectNodeContents(n);
      var rs = range.getClientRects();
      for (var i = 0; i < rs.length; i++) {
        if (rs[i].width < 0.5 || rs[i].height < 0.5) continue;
        var it = box(rs[i]); it.s = n.textContent.trim().slice(0, 80) + ' <' + p.tagName.toLowerCase() + '>'; it.k = 'html';
        items.push(it);
        if (!p.closest('.scroll') && it.r > pageW + 1) offpage.push(it.s);
      }
    }
    // Text that runs out of its own box (a cell, a heading) into its neighbour's.
    document.querySelectorAll('td, th, h1, h2, h3, p, li, figcaption, a, span, div')
      .forEach(function (el) {
        if (el.closest('details:not([open])') && !el.closest('summary')) return;
        var st = getComputedStyle(el);
        if (st.display === 'inline' || st.overflowX !== 'visible') return;
        if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0 &&
            !el.querySelector('svg, table, .scroll'))
          spill.push(el.tagName + ': ' + el.textContent.trim().slice(0, 80));
      });
    items.sort(function (a, b) { return a.t - b.t; });
    var overlaps = [];
    for (var i = 0; i < items.length; i++) {
      var a = items[i];
      for (var j = i + 1; j < items.length && items[j].t < a.b - 1; j++) {
        var b = items[j];
        var ow = Math.min(a.r, b.r) - Math.max(a.l, b.l);
        var oh = Math.min(a.b, b.b) - Math.max(a.t, b.t);
        if (ow > 1 && oh > 1) overlaps.push([a.s, b.s, Math.round(ow), Math.round(oh)]);
      }
    }
    document.body.setAttribute('data-layout', JSON.stringify({
      texts: items.length, svg_texts: items.filter(function (x) { return x.k === 'svg'; }).length,
      overlaps: overlaps, clipped: clipped, spill: spill, offpage: offpage,
      page_width: pageW, scroll_width: document.documentElement.scrollWidth}));
  }
  window.addEventListener('load', function () { document.fonts.ready.then(run); });
})();
</script>
"""


def layout_script() -> str:
    """The check as a script to run in a page already loaded (by WebDriver, say): it
    measures at once and leaves its findings in ``document.body``'s ``data-layout``."""
    body = CHECK.split("<script>", 1)[1].rsplit("</script>", 1)[0]
    waiting = "window.addEventListener('load', function () { document.fonts.ready.then(run); });"
    assert waiting in body
    return body.replace(waiting, "run();")


def chromium() -> str:
    """Path of Debian's chromium (install.sh installs it)."""
    path = shutil.which("chromium")
    assert path is not None, "chromium is needed to test the report: apt-get install chromium"
    return path


def browser(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """Run headless Chromium with the given arguments."""
    return subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--font-render-hinting=none",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def layout_problems(page: Path, width: int = 1280) -> dict[str, Any]:
    """Open ``page`` in headless Chromium ``width`` pixels wide and measure its text.

    Returns a dict: ``texts`` (text boxes measured), ``svg_texts``, ``overlaps`` (pairs of
    texts whose boxes intersect by more than 1 px both ways, with the intersection's size),
    ``clipped`` (figure texts outside their figure), ``spill`` (elements whose text runs
    out of their box), ``offpage`` (text beyond the page's right edge), ``page_width``
    and ``scroll_width``.
    """
    text = page.read_text()
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.html"
        probe.write_text(text.replace("</body>", CHECK + "</body>", 1))
        ran = browser(
            "--virtual-time-budget=20000",
            f"--window-size={width},1000",
            "--dump-dom",
            probe.as_uri(),
        )
    assert ran.returncode == 0, ran.stderr[-2000:]
    found = re.search(r'data-layout="([^"]*)"', ran.stdout)
    assert found, "the layout check did not run in the page"
    return json.loads(_html.unescape(found.group(1)))


if __name__ == "__main__":
    res = layout_problems(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1280)
    for key, value in res.items():
        if isinstance(value, list):
            print(f"{key}: {len(value)}")
            for item in value[:15]:
                print("   ", item)
        else:
            print(f"{key}: {value}")
