"""Make a published asv dashboard work without network access.

asv's ``index.html`` loads jQuery, Flot, Bootstrap, MD5 and stupidtable from CDNs.
:func:`make_offline` copies the vendored copies in ``kbench/asv/vendor/`` next to the
dashboard and rewrites those tags to load them, so the dashboard renders on an offline
machine and in the browser tests of ``tests/test_asv.py``. ``kbench asv offline HTML_DIR``
runs it (``.ci/asv_smoke.sh`` does, after ``asv publish``).

A CDN address it does not know (after an asv upgrade) is an error that names it, so the
table below gets updated rather than a dashboard that silently fails to load.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from kbench.core.errors import KbenchError
from kbench.core.fileio import atomic_write_text

VENDOR = Path(__file__).with_name("vendor")

#: CDN address in asv's index.html → vendored file.
LOCAL = {
    "https://code.jquery.com/jquery-3.3.1.min.js": "jquery-3.3.1.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js": "jquery.flot-0.8.3.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.time.min.js": "jquery.flot-0.8.3.time.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.selection.min.js": "jquery.flot-0.8.3.selection.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.categories.min.js": "jquery.flot-0.8.3.categories.min.js",
    "https://cdn.jsdelivr.net/npm/flot-orderbars@1.0.0/js/jquery.flot.orderBars.js": "jquery.flot.orderBars.js",
    "https://cdnjs.cloudflare.com/ajax/libs/stupidtable/1.0.1/stupidtable.min.js": "stupidtable.js",
    "https://cdnjs.cloudflare.com/ajax/libs/blueimp-md5/2.19.0/js/md5.min.js": "md5.js",
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/js/bootstrap.min.js": "bootstrap-3.1.0.min.js",
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css": "bootstrap-3.1.0.min.css",
}

# A <script src="https://..."></script> or <link ... href="https://..."> tag.
_TAG = re.compile(r'<(script|link)\b[^>]*?\b(?:src|href)="(https://[^"]+)"[^>]*>(?:</script>)?')


def make_offline(html_dir: Path) -> list[str]:
    """Rewrite ``html_dir/index.html`` to load the vendored libraries.

    Parameters
    ----------
    html_dir
        The folder ``asv publish`` wrote (``html_dir`` of ``asv.conf.json``).

    Returns
    -------
    list of str
        The CDN addresses replaced (none when the page was already offline).

    Raises
    ------
    KbenchError
        When there is no dashboard, or it loads a library kbench has no copy of (the page
        is then left as it was).
    """
    index = html_dir / "index.html"
    if not index.exists():
        raise KbenchError(f"no asv dashboard at {index}; run asv publish first")
    text = index.read_text(encoding="utf-8")
    target = html_dir / "vendor"
    target.mkdir(exist_ok=True)
    replaced: list[str] = []

    def local(match: re.Match[str]) -> str:
        kind, url = match.group(1), match.group(2)
        if url not in LOCAL:
            raise KbenchError(
                f"asv's dashboard loads {url}, which kbench has no vendored copy of; "
                "add it to kbench/asv/vendor/ and to kbench.asv.dashboard.LOCAL"
            )
        name = LOCAL[url]
        shutil.copyfile(VENDOR / name, target / name)
        replaced.append(url)
        if kind == "link":
            return f'<link rel="stylesheet" href="vendor/{name}">'
        return f'<script src="vendor/{name}" onerror="js_load_failure()"></script>'

    text = _TAG.sub(local, text)
    atomic_write_text(index, text)
    return replaced
