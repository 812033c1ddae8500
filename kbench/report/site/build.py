"""``kbench publish``: a static site over results folders, rebuilt incrementally.

The site is plain files: an index of studies, a page per data set (its leaderboard over
every study, as a table explorer), a page per learner and per study, figures as SVG and
PDF, tables as CSV, Markdown and LaTeX. It needs no server and no network: it works from
``file://`` and any static host. ``_site/manifest.json`` records what was published; a
folder whose fingerprint is unchanged is read from its cached summary, figures are named
by their data, and a file whose content is unchanged is not rewritten.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbench._version import __version__
from kbench.core.errors import KbenchError
from kbench.core.registry import Registry
from kbench.report.site import figures, pages
from kbench.report.site.files import SiteError, SiteFiles
from kbench.report.site.summary import SUMMARY_FORMAT, Summary, fingerprint, study_id, summarize

#: Where the site keeps its own records (the manifest and the cached summaries).
STATE = "_site"
MANIFEST = "manifest.json"
#: The manifest's layout; a site of another layout is rebuilt from its results folders.
SITE_FORMAT = 1


@dataclass
class Published:
    """What :func:`publish` did."""

    site: Path
    studies: list[str]
    #: One line per results folder left out, and why.
    skipped: list[str] = field(default_factory=list)
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    summaries_computed: int = 0
    figures_drawn: int = 0


def _manifest(site: Path) -> dict[str, Any] | None:
    """The manifest of an existing site, or None when ``site`` holds no kbench site."""
    path = site / STATE / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "files" in data else None


def check_site(site: Path) -> dict[str, Any]:
    """The previous manifest of ``site`` (empty for a new site).

    Raises SiteError when ``site`` is a file, or a folder holding other files than a
    kbench site: publishing never overwrites what it did not write.
    """
    if site.exists() and not site.is_dir():
        raise SiteError(f"{site} is a file; give -o a folder for the site")
    if not site.exists() or not any(site.iterdir()):
        return {"files": []}
    manifest = _manifest(site)
    if manifest is None:
        raise SiteError(
            f"{site} holds other files and no kbench site; give -o an empty or new folder"
        )
    return manifest


def _cached(folder: Path, site: Path) -> tuple[Summary | None, str]:
    """A folder's cache file in the site, and its summary when the folder is unchanged
    since it was published (None: to compute).

    Raises KbenchError when ``folder`` is not a results folder.
    """
    if not folder.is_dir():
        raise KbenchError("no such folder")
    if not (folder / "tasks").is_dir():
        raise KbenchError("not a kbench results folder (no tasks/ inside)")
    cache = f"{STATE}/{study_id(folder)}-{fingerprint(folder)}.json"
    path = site / cache
    if path.is_file():
        try:
            summary = json.loads(path.read_text(encoding="utf-8"))
            if summary.get("format") == SUMMARY_FORMAT:
                return summary, cache
        except (OSError, ValueError):
            pass  # a damaged cache entry is recomputed
    return None, cache


def _summarize_folder(folder: Path) -> Summary | KbenchError:
    """A folder's summary, or the error that leaves it out (a pool worker's task)."""
    from kbench.core.registry import get_registry

    try:
        return summarize(folder, get_registry())
    except KbenchError as exc:
        return KbenchError(str(exc))


class _Pool:
    """Maps a function over items: one process per core when there are several items (each
    folder's statistics, each figure, is independent), in this process otherwise. The
    processes start once, at the first map that needs them, and serve every later map."""

    def __init__(self) -> None:
        self.pool: Any = None

    def __enter__(self) -> _Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown()

    def map(self, fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
        if len(items) < 2 or (os.cpu_count() or 1) < 2:
            return [fn(x) for x in items]
        if self.pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # Forked, as kbench runs its tasks: a spawned process would import kbench,
            # pandas, SciPy and matplotlib again (3 s), more than a small site takes.
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
            self.pool = ProcessPoolExecutor(max_workers=os.cpu_count(), mp_context=ctx)
        return list(self.pool.map(fn, items))


def _disagreements(summaries: list[Summary]) -> list[str]:
    """Drop the rows of a study on a stream whose content differs from an earlier study's
    (same stream and seed, another stream id); one note per such stream."""
    seen: dict[tuple[str, str], tuple[str, str]] = {}
    notes = []
    for s in summaries:
        dropped = set()
        for stream, seeds in s["streams"].items():
            for seed, sid in seeds.items():
                first = seen.setdefault((stream, seed), (sid, s["name"]))
                if first[0] != sid:
                    dropped.add(stream)
                    notes.append(
                        f"{s['name']}: stream {stream} (seed {seed}) differs in content from "
                        f"{first[1]}'s; its rows there are left out"
                    )
                    break
        if dropped:
            s["rows"] = [r for r in s["rows"] if r["stream"] not in dropped]
            s["curves"] = {k: v for k, v in s["curves"].items() if k not in dropped}
    return notes


def _remove_stale(site: Path, old: Sequence[str], kept: set[str]) -> int:
    """Remove the files a previous publish wrote that this one did not (a study dropped)."""
    n = 0
    for rel in old:
        if rel in kept or ".." in Path(rel).parts:
            continue
        path = site / rel
        if path.is_file():
            path.unlink()
            n += 1
    return n


def publish(
    results: Sequence[str | Path],
    site: str | Path,
    registry: Registry,
    *,
    asv: str | Path | None = None,
    title: str = "kbench results",
    note: Callable[[str], None] | None = None,
) -> Published:
    """Publish ``results`` (results folders) as a static site in ``site``.

    Parameters
    ----------
    results
        Results folders written by ``kbench run``, in the order the index lists them.
    site
        The site's folder: new, empty, or a site published before (updated in place).
    registry
        The registry (learner parameters and docstrings for the learner pages).
    asv
        An asv dashboard folder (``asv publish``'s html) to link from the index.
    title
        The site's title.
    note
        Called with one line per results folder left out.

    Raises
    ------
    SiteError
        ``site`` is a file or a folder holding other files; or no results folder could be
        published (nothing is written then).
    """
    site = Path(site)
    old = check_site(site)
    with _Pool() as pool:
        summaries, caches, skipped, computed = _collect(results, site, pool, note)
        if not summaries:
            raise SiteError("no results folder could be published: " + "; ".join(skipped))
        write = SiteFiles(site)
        for cache, summary in caches:
            write(cache, json.dumps(summary, sort_keys=True))
        shown = [json.loads(json.dumps(s)) for s in summaries]  # the cache keeps every row
        skipped += _disagreements(shown)
        context = {
            "title": title,
            "version": __version__,
            "asv": _asv_link(asv, site),
            "skipped": skipped,
        }
        pages.write_site(shown, context, registry, write)
        pool.map(functools.partial(figures.draw, folder=site / "figures"), write.figures)
    removed = _remove_stale(site, old.get("files", []), write.files | {f"{STATE}/{MANIFEST}"})
    manifest = {
        "format": SITE_FORMAT,
        "kbench": __version__,
        # when the pages last changed; kept out of the pages, so that publishing unchanged
        # results rewrites nothing
        "published": old.get("published")
        if not (write.written or removed or write.figures)
        else _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "studies": [s["path"] for s in summaries],
        "files": sorted(write.files),
    }
    write(f"{STATE}/{MANIFEST}", json.dumps(manifest, indent=1))
    return Published(
        site=site,
        studies=[s["name"] for s in summaries],
        skipped=skipped,
        written=write.written,
        unchanged=write.unchanged,
        removed=removed,
        summaries_computed=computed,
        figures_drawn=len(write.figures),
    )


def _collect(
    results: Sequence[str | Path], site: Path, pool: _Pool, note: Callable[[str], None] | None
) -> tuple[list[Summary], list[tuple[str, Summary]], list[str], int]:
    """The summaries of the folders (cached or computed), their cache files, one line per
    folder left out, and how many summaries were computed."""
    folders = list(dict.fromkeys(Path(f) for f in results))  # each folder once, in order
    found: dict[Path, tuple[Summary | KbenchError | None, str]] = {}
    for folder in folders:
        try:
            found[folder] = _cached(folder, site)
        except KbenchError as exc:
            found[folder] = (exc, "")
    missing = [f for f, (s, _) in found.items() if s is None]
    for folder, computed in zip(missing, pool.map(_summarize_folder, missing), strict=True):
        found[folder] = (computed, found[folder][1])
    summaries, caches, skipped = [], [], []
    for folder in folders:
        summary, cache = found[folder]
        if isinstance(summary, KbenchError) or summary is None:
            line = f"{folder}: {summary}"
            skipped.append(line)
            if note:
                note(line)
            continue
        summaries.append(summary)
        caches.append((cache, summary))
    return summaries, caches, skipped, len(missing)


def _asv_link(asv: str | Path | None, site: Path) -> str:
    """The href of the asv dashboard, relative to the site when it can be."""
    if asv is None:
        return ""
    path = Path(asv).resolve()
    index = path / "index.html" if path.is_dir() else path
    try:
        return str(index.relative_to(site.resolve()))
    except ValueError:
        return index.as_uri()
