"""Resumable, verified downloads into kbench's data folder, and decompression of what arrives.

- :func:`data_dir`: the folder downloaded data sets live in (``$KBENCH_DATA``, else the user
  data folder of ``platformdirs``).
- :func:`download`: fetch a URL to a file once, resuming a cut-off download from its ``.part``
  file with an HTTP ``Range`` request, verifying its size and SHA-256 checksum where they are
  known, with a progress bar on a terminal. A file already there (downloaded before or placed
  by hand) is verified and used without the network.
- :func:`decompress`: a ``.bz2``, ``.xz`` or ``.gz`` file to a plain one, all or nothing.

Every failure is a one-line :class:`~kbench.core.errors.DataError`: offline, it names the URL and
the path to put the file at by hand; a file that fails its checksum is moved aside (never
used, never deleted); a cut-off or failed write leaves no file under the final name.
"""

from __future__ import annotations

import bz2
import errno
import gzip
import hashlib
import lzma
import os
import re
import sys
import tempfile
import time
import urllib.parse
import zlib
from pathlib import Path
from typing import IO, BinaryIO

from kbench.core.errors import DataError
from kbench.core.fileio import TEMP_PREFIX, atomic_write, file_mode

#: Bytes read from the network or a decompressor at a time.
BLOCK = 1 << 20

_MAGIC = {b"BZh": "bz2", b"\xfd7zXZ\x00": "xz", b"\x1f\x8b": "gz"}
_SUFFIX = {".bz2": "bz2", ".xz": "xz", ".gz": "gz"}


def cache_dir() -> Path:
    """Where streams are cached: ``$KBENCH_CACHE``, else the user's cache folder."""
    env = os.environ.get("KBENCH_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kbench"


def data_dir() -> Path:
    """The folder kbench keeps downloaded data sets in: ``$KBENCH_DATA``, else the user data
    folder (``platformdirs.user_data_dir("kbench")``, e.g. ``~/.local/share/kbench``)."""
    env = os.environ.get("KBENCH_DATA", "").strip()
    if env:
        return Path(env).expanduser()
    import platformdirs  # only here: listing and running built-in data sets never need it

    return Path(platformdirs.user_data_dir("kbench", appauthor=False))


def compression_of(path: str | Path) -> str | None:
    """``bz2``, ``xz`` or ``gz`` from a file's first bytes (its name when it is not there yet)."""
    path = Path(path)
    if path.is_file():
        with open(path, "rb") as fh:
            head = fh.read(6)
        return next((kind for magic, kind in _MAGIC.items() if head.startswith(magic)), None)
    return _SUFFIX.get(path.suffix)


def plain_name(name: str) -> str:
    """A compressed file's name without its compression suffix (``a.bz2`` -> ``a``)."""
    for suffix in _SUFFIX:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def sha256_of(path: str | Path) -> str:
    """The SHA-256 hex digest of a file."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(BLOCK), b""):
            h.update(block)
    return h.hexdigest()


def verify(path: Path, size: int | None, sha256: str | None) -> str | None:
    """None when ``path`` has the given size and checksum (each checked if known), else why not."""
    got_size = path.stat().st_size
    if size is not None and got_size != size:
        return f"{got_size} bytes where {size} were expected"
    if sha256:
        got = sha256_of(path)
        if got != sha256.lower():
            return f"sha256 {got} where {sha256.lower()} was expected"
    return None


def move_aside(path: Path) -> Path:
    """Rename a file that failed verification so that it is never used (nor lost)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.mismatch-{stamp}")
    n = 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.mismatch-{stamp}-{n}")
    os.replace(path, aside)
    return aside


def _first_line(exc: object) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _by_hand(url: str, dest: Path) -> str:
    return f"without a network, download it elsewhere and put it at {dest}"


class _Progress:
    """A rich progress bar on stderr when it is a terminal; silent otherwise."""

    def __init__(self, label: str, total: int | None, done: int) -> None:
        self.bar = None
        if not sys.stderr.isatty():
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self.bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True, soft_wrap=True),
            transient=True,
        )
        self.task = self.bar.add_task(label, total=total, completed=done)
        self.bar.start()

    def advance(self, n: int) -> None:
        if self.bar is not None:
            self.bar.advance(self.task, n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _content_range(header: str | None) -> tuple[int, int | None] | None:
    """(first byte, total or None) of a ``Content-Range: bytes a-b/total`` header."""
    m = re.fullmatch(r"\s*bytes\s+(\d+)-\d+/(\d+|\*)\s*", header or "")
    if not m:
        return None
    return int(m.group(1)), (None if m.group(2) == "*" else int(m.group(2)))


def download(
    url: str,
    dest: str | Path,
    *,
    size: int | None = None,
    sha256: str | None = None,
    attempts: int = 3,
    timeout: float = 60.0,
) -> Path:
    """Fetch ``url`` to ``dest`` once, resumably, and verify it.

    Parameters
    ----------
    url
        http, https or file URL.
    dest
        The final file. Bytes arrive in ``dest.part``; it is renamed to ``dest`` only once
        complete and verified.
    size, sha256
        The file's size in bytes and SHA-256 checksum, each verified when given.
    attempts
        Requests to make before giving up on a connection that keeps closing early; each
        resumes where the last stopped (``Range: bytes=N-``). A ``.part`` left by an earlier
        run is resumed the same way.
    timeout
        Seconds to wait for the server on each read.

    Returns
    -------
    Path
        ``dest``. A file already at ``dest`` that passes verification is returned without
        the network; one that fails it is moved aside (``<name>.mismatch-<time>``) and
        downloaded again.
    """
    dest = Path(dest)
    moved = ""
    if dest.is_file():
        why = verify(dest, size, sha256)
        if why is None:
            return dest
        moved = f" (the file there had {why}: moved to {move_aside(dest).name}, not used)"
    part = dest.with_name(dest.name + ".part")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"cannot write the data folder {dest.parent}: {exc.strerror}") from None
    # Imported here: urllib.request imports http, email and ssl (tens of milliseconds).
    from http.client import HTTPException
    from urllib.error import HTTPError, URLError
    from urllib.request import Request, urlopen

    total = size
    for _ in range(max(1, attempts)):
        have = part.stat().st_size if part.is_file() else 0
        if total is not None and have > total:  # not a prefix of this file: start again
            part.unlink()
            have = 0
        if total is not None and have == total:
            break
        request = Request(url, headers={"Range": f"bytes={have}-"} if have else {})
        try:
            resp = urlopen(request, timeout=timeout)
        except HTTPError as exc:
            exc.close()  # it holds the response
            if exc.code == 416 and have:  # nothing past what we have: the .part is whole
                total = have
                break
            raise DataError(
                f"cannot download {url}: HTTP {exc.code} {exc.reason}; {_by_hand(url, dest)}{moved}"
            ) from None
        except (URLError, OSError, ValueError) as exc:
            reason = _first_line(getattr(exc, "reason", None) or exc)
            raise DataError(
                f"cannot download {url} ({reason}); {_by_hand(url, dest)}{moved}"
            ) from None
        with resp:
            first = 0
            if resp.status == 206:
                rng = _content_range(resp.headers.get("Content-Range"))
                if rng is None or rng[0] != have:
                    raise DataError(f"cannot download {url}: the server sent the wrong range")
                first, sent_total = rng
                total = sent_total if sent_total is not None else total
            else:  # a whole file (the server ignores Range, or this is the first request)
                length = resp.headers.get("Content-Length")
                if length is not None and length.isdigit():
                    total = int(length)
            progress = _Progress(dest.name, total, first)
            try:
                with open(part, "ab" if first else "wb") as out:
                    try:
                        while block := resp.read(BLOCK):
                            out.write(block)
                            progress.advance(len(block))
                    except (OSError, ValueError, HTTPException) as exc:
                        # A connection cut mid-file keeps what arrived: the next request resumes.
                        if isinstance(exc, OSError) and exc.errno in _DISK_ERRNOS:
                            raise
                    out.flush()
                    os.fsync(out.fileno())
            except OSError as exc:
                raise DataError(
                    f"cannot write {part}: {exc.strerror or _first_line(exc)} "
                    f"(the part downloaded so far is kept; free space and run again to resume)"
                ) from None
            finally:
                progress.close()
        got = part.stat().st_size
        if total is None or got >= total:
            break
    got = part.stat().st_size if part.is_file() else 0
    if total is not None and got < total:
        raise DataError(
            f"cannot download {url}: the connection closed after {got} of {total} bytes "
            f"({attempts} attempts); kept in {part}, run again to resume"
        )
    why = verify(part, size, sha256)
    if why is not None:
        aside = move_aside(part)
        raise DataError(
            f"{url}: the download failed verification ({why}); moved to {aside}, not used"
        )
    os.replace(part, dest)
    return dest


#: The disk, not the connection or the input: EFBIG, ENOSPC, EDQUOT.
_DISK_ERRNOS = {errno.EFBIG, errno.ENOSPC, errno.EDQUOT}


def _reader(path: Path, kind: str) -> IO[bytes] | gzip.GzipFile:
    if kind == "bz2":
        return bz2.open(path, "rb")
    if kind == "xz":
        return lzma.open(path, "rb")
    return gzip.open(path, "rb")


def decompress(src: str | Path, dest: str | Path) -> Path:
    """Decompress ``src`` (bz2, xz or gzip, by its first bytes) to ``dest``, all or nothing.

    The output is written through :func:`~kbench.core.fileio.atomic_write` (a temporary
    file beside ``dest``, synced, then renamed), so a damaged input or a full disk leaves no
    ``dest`` (and no temporary file) behind.
    """
    src, dest = Path(src), Path(dest)
    kind = compression_of(src)
    if kind is None:
        raise DataError(f"{src}: not a bz2, xz or gzip file")

    def copy(out: BinaryIO) -> None:
        with _reader(src, kind) as fh:
            try:
                for block in iter(lambda: fh.read(BLOCK), b""):
                    out.write(block)
            except (EOFError, lzma.LZMAError, zlib.error, OSError) as exc:
                if isinstance(exc, OSError) and exc.errno in _DISK_ERRNOS:
                    raise  # the disk, not the input: reported as a write error below
                raise DataError(
                    f"{src}: truncated or damaged {kind} file ({_first_line(exc)}); "
                    f"delete it to download it again"
                ) from None

    try:
        return atomic_write(dest, copy)
    except DataError:
        raise
    except OSError as exc:
        # Only the temporary file's creation fails naming one path, that file, in dest's
        # folder (a write names none, the rename two): the folder cannot be written.
        if exc.filename2 is None and Path(str(exc.filename)).name.startswith(TEMP_PREFIX):
            raise DataError(f"cannot write {dest.parent}: {exc.strerror}") from None
        raise DataError(
            f"cannot write {dest}: {exc.strerror or _first_line(exc)} "
            f"(nothing was kept; free space and run again)"
        ) from None


# --------------------------------------------------------------------------------------------
# Single files by URL and checksum (the url data set)
# --------------------------------------------------------------------------------------------


def cached_path(url: str, sha256: str, folder: str | Path) -> Path:
    """Where :func:`fetch_url` keeps the file of ``url`` (named by its checksum and base name)."""
    base = os.path.basename(urllib.parse.urlparse(url).path) or "download"
    base = re.sub(r"[^A-Za-z0-9._-]", "_", base)[:100]
    return Path(folder) / f"{sha256.lower()[:16]}-{base}"


def fetch_url(url: str, sha256: str, folder: str | Path, *, timeout: float = 60.0) -> Path:
    """Download ``url`` into ``folder`` once and return the local file, verified by SHA-256.

    A cached copy whose checksum matches is used without touching the network. A download
    whose checksum differs from ``sha256`` is deleted and raises DataError; it never
    replaces the cached file.
    """
    sha256 = sha256.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{64}", sha256):
        raise DataError(f"sha256={sha256!r} is not a SHA-256 checksum (64 hex digits)")
    scheme = urllib.parse.urlparse(url).scheme
    if scheme not in ("http", "https", "file"):
        raise DataError(f"url={url!r}: kbench downloads http, https or file URLs")
    target = cached_path(url, sha256, folder)
    if target.is_file() and sha256_of(target) == sha256:
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".download-")
        os.fchmod(fd, file_mode())  # a shared cache: the mode open() would give
    except OSError as exc:
        raise DataError(f"cannot write the download cache {target.parent}: {exc}") from None
    # Imported here: urllib.request imports http, email and ssl (tens of milliseconds).
    from urllib.error import HTTPError, URLError
    from urllib.request import urlopen

    h = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out, urlopen(url, timeout=timeout) as resp:
            for block in iter(lambda: resp.read(1 << 20), b""):
                h.update(block)
                out.write(block)
            out.flush()
            os.fsync(out.fileno())  # renamed into the cache only once it is on disk
        got = h.hexdigest()
        if got != sha256:
            raise DataError(
                f"{url}: checksum mismatch: expected sha256 {sha256}, the download has {got}; "
                f"it was discarded{' and the cached copy left as it was' if target.exists() else ''}"
            )
        os.replace(tmp, target)
    except DataError:
        Path(tmp).unlink(missing_ok=True)
        raise
    except (URLError, OSError, ValueError) as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, HTTPError):
            reason = f"HTTP {exc.code} {exc.reason}"
            exc.close()  # it holds the response
        else:
            reason = _first_line(getattr(exc, "reason", None) or exc)
        raise DataError(f"cannot download {url}: {reason}") from None
    return target
