"""What the data cache holds, per data set, and clearing it (``kbench cache``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kbench.data.downloads import cache_dir


@dataclass(frozen=True)
class CacheUsage:
    """What the cache holds for one data set (or one other kind of cached file)."""

    name: str
    data_files: int
    streams: int
    nbytes: int


def cache_usage(cache: Path | None = None) -> list[CacheUsage]:
    """The cache's size per data set, then its other folders (downloads, older layouts)."""
    root = cache or cache_dir()
    out = []
    data = root / "data"
    for folder in sorted(p for p in _children(data) if p.is_dir()):
        files = [f for f in folder.iterdir() if f.is_file()]
        out.append(
            CacheUsage(
                name=folder.name,
                data_files=sum(f.name.endswith(".data") for f in files),
                streams=sum(f.name.endswith(".stream.json") for f in files),
                nbytes=sum(f.stat().st_size for f in files),
            )
        )
    for other in sorted(p for p in _children(root) if p.name != "data"):
        size = (
            sum(f.stat().st_size for f in other.rglob("*") if f.is_file())
            if other.is_dir()
            else other.stat().st_size
        )
        label = "streams (old format)" if other.name == "streams" else other.name
        out.append(CacheUsage(name=label, data_files=0, streams=0, nbytes=size))
    return out


def _children(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def clear_cache(dataset: str | None = None, cache: Path | None = None) -> int:
    """Delete the cache (or one data set's cached streams); return the bytes freed.

    Raises
    ------
    KeyError
        If nothing is cached for ``dataset``.
    """
    import shutil

    root = cache or cache_dir()
    if dataset is None:
        targets = _children(root)
    else:
        folder = root / "data" / dataset
        if dataset in ("", ".", "..") or "/" in dataset or not folder.is_dir():
            raise KeyError(dataset)
        targets = [folder]
    freed = 0
    for target in targets:
        if target.is_dir():
            freed += sum(f.stat().st_size for f in target.rglob("*") if f.is_file())
            shutil.rmtree(target)
        else:
            freed += target.stat().st_size
            target.unlink()
    return freed
