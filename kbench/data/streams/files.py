"""The data cache's files: a magic string, a JSON head and arrays, each array at a multiple
of 64 bytes, written atomically and mapped read-only (the rows a task reads come from the
file's pages, which it may give back)."""

from __future__ import annotations

import json
import mmap
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from kbench.core.fileio import atomic_write
from kbench.data.paging import register_map

#: Every array of a file starts at a multiple of this many bytes.
ALIGN = 64


def padded(n: int) -> int:
    """``n`` rounded up to a multiple of :data:`ALIGN`."""
    return -(-n // ALIGN) * ALIGN


def layout(arrays: dict[str, np.ndarray]) -> dict[str, list[Any]]:
    """Where each array lies after the header: shape, offset, and dtype unless float64."""
    layout: dict[str, list[Any]] = {}
    offset = 0
    for k, a in arrays.items():
        layout[k] = [list(a.shape), offset] + ([] if a.dtype == np.float64 else [a.dtype.str])
        offset += padded(a.nbytes)
    return layout


def write_arrays(path: Path, magic: bytes, head: dict[str, Any], arrays: dict[str, Any]) -> None:
    """Write ``magic``, the JSON ``head`` (whose ``arrays`` is their :func:`layout`) and
    the arrays, each at a multiple of 64 bytes, atomically."""
    text = json.dumps(head).encode()
    prefix = magic + len(text).to_bytes(8, "little") + text

    def write(fh: BinaryIO) -> None:
        fh.write(prefix + bytes(padded(len(prefix)) - len(prefix)))
        for a in arrays.values():
            a = np.ascontiguousarray(a)
            fh.write(a.data.cast("B"))
            fh.write(bytes(padded(a.nbytes) - a.nbytes))

    atomic_write(path, write)


def map_arrays(path: Path, magic: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Map a file of :func:`write_arrays` read-only; return its head and arrays.

    Raises ValueError when the file is not such a file or is shorter than its arrays."""
    fh = open(path, "rb")  # noqa: SIM115 (kept open while its map lives: rows are read from it)
    try:
        if fh.read(len(magic)) != magic:
            raise ValueError(f"{path} is not a kbench cache file")
        n = int.from_bytes(fh.read(8), "little")
        head = json.loads(fh.read(n))
        buffer = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except BaseException:
        fh.close()
        raise
    # read-only and file-backed: a task may give back the pages it read, and read rows
    # scattered over it from the file
    register_map(buffer, fh)
    start = padded(len(magic) + 8 + n)
    arrays: dict[str, Any] = {
        k: np.ndarray(
            tuple(spec[0]),
            dtype=np.dtype(spec[2]) if len(spec) > 2 else np.float64,
            buffer=buffer,
            offset=start + spec[1],
        )
        for k, spec in head["arrays"].items()
    }
    return head, arrays
