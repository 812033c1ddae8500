"""The files of a site: each written only when its content changed, and listed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kbench.core.errors import KbenchError
from kbench.core.fileio import atomic_write_bytes


class SiteError(KbenchError):
    """The site folder cannot be written (exit 2, nothing in it lost)."""


class SiteFiles:
    """Writes a site's files, each only when its content changed, and keeps their list
    (the manifest's, so that the next publish removes what this one no longer wrote)."""

    def __init__(self, site: Path) -> None:
        self.site = site
        self.files: set[str] = set()
        self.written = 0
        self.unchanged = 0
        #: Figures to draw (:data:`kbench.report.site.figures.Job`): the pages name them
        #: first, and they are drawn together, in parallel.
        self.figures: list[tuple[str, str, dict[str, Any]]] = []

    def keep(self, rel: str) -> None:
        """Record a file written by someone else (a figure) as part of the site."""
        self.files.add(rel)

    def __call__(self, rel: str, content: str | bytes) -> None:
        data = content.encode("utf-8") if isinstance(content, str) else content
        path = self.site / rel
        self.files.add(rel)
        try:
            if path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data:
                self.unchanged += 1
                return
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, data)
        except OSError as exc:
            raise SiteError(f"cannot write {path}: {exc.strerror or exc}") from None
        self.written += 1
