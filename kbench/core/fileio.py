"""Atomic, durable file writes: every file kbench writes goes through :func:`atomic_write`.

A file is written under a temporary name in its own folder, flushed and fsynced, then
renamed over the target, and the folder is fsynced so the rename survives a power cut. A
reader therefore sees either the previous file or the new one, never a truncated one; a
failed write (a full disk, a file-size limit, Ctrl-C) removes its temporary file and leaves
the previous file as it was. Temporary files are named ``.tmp-<name>.<random>`` so that a
folder can be swept of the ones a killed process left behind (:func:`remove_stale_temps`).
Files get the mode a plain ``open`` would give them (0644 under the usual umask 022), not
the 0600 of a temporary file, so that a shared results folder or a served report can be read.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

TEMP_PREFIX = ".tmp-"


def atomic_write(path: str | Path, write: Callable[[BinaryIO], object]) -> Path:
    """Write ``path`` atomically: ``write(fh)`` fills a temporary file, which replaces it.

    Parameters
    ----------
    path : str or Path
        The file to write; its folder must exist.
    write : callable
        Called with a binary file object open for writing; it writes the content.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    OSError
        When the file cannot be written (the previous file, if any, is untouched and no
        temporary file is left).
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{TEMP_PREFIX}{path.name}.")
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_folder(path.parent)
    return path


def umask() -> int:
    """The process's umask, read without changing it (from /proc on Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    # Elsewhere only os.umask reads it, by setting it: set it back at once.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode ``open(path, "w")`` gives a new file: 0666 less the umask."""
    return 0o666 & ~umask()


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_write`)."""
    return atomic_write(path, lambda fh: fh.write(data))


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_write`)."""
    return atomic_write_bytes(path, text.encode(encoding))


def remove_stale_temps(folder: str | Path) -> None:
    """Delete the temporary files a process killed mid-write left in ``folder``."""
    for stale in Path(folder).glob(f"{TEMP_PREFIX}*"):
        with contextlib.suppress(OSError):
            stale.unlink()


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (some file systems refuse to fsync a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
