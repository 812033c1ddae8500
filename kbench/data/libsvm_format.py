"""The LIBSVM/svmlight text format (``label index:value ...``), read into CSR or dense arrays.

Files are parsed by scikit-learn's compiled :func:`sklearn.datasets.load_svmlight_file`.
Its errors do not say where the file is wrong, so when it refuses a file (or a value is
not finite) kbench reads the file a second time with its own line-by-line parser, which
names the file and the line: the second pass costs only when the file is bad. The few
files the compiled parser refuses but the format allows (a ``qid:`` token after the
features) are read by the second pass.

Feature indices are 1-based and must increase along a line; ``qid:`` tokens and ``#``
comments are ignored; gzip, bz2 and xz files are recognised by their first bytes.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import math
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np

from kbench.data.readers import MAX_ELEMENTS, check_dense_size, existing_file

if TYPE_CHECKING:  # scipy.sparse is imported when a file is read, not when kbench loads
    import scipy.sparse as sp

from kbench.core.errors import DataError

#: First bytes of the compressed formats a LIBSVM file may come in.
_MAGICS = {b"\x1f\x8b": "gz", b"BZh": "bz2", b"\xfd7zXZ": "xz"}
#: Errors of reading a damaged compressed file or a non-text file.
_READ_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError, UnicodeDecodeError)


def _compression(path: Path) -> str | None:
    with open(path, "rb") as fh:
        head = fh.read(6)
    return next((kind for magic, kind in _MAGICS.items() if head.startswith(magic)), None)


def _open_binary(path: Path) -> IO[bytes]:
    kind = _compression(path)
    if kind == "gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if kind == "bz2":
        return bz2.open(path, "rb")
    if kind == "xz":
        return lzma.open(path, "rb")
    return open(path, "rb")


def _first_line(exc: object) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _checked_path(path: str | Path) -> Path:
    return existing_file(path)


#: Uncompressed text parsed at once by :func:`read_libsvm_csr` (the parser's arrays for a
#: block take a few times its size).
BLOCK_BYTES = 16 << 20


def read_libsvm_csr(
    path: str | Path,
    n_features: int | None = None,
    *,
    block_bytes: int | None = None,
    scratch: Path | None = None,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Read a LIBSVM/svmlight file into a CSR ``(X, y)`` without densifying it.

    The text is parsed a block of lines at a time (about ``block_bytes`` of uncompressed
    text). A file of one block is returned in memory; the blocks of a longer file are
    written to files in a fresh folder under ``scratch`` (default: ``tmp`` in kbench's
    cache folder) as they are parsed, and the returned arrays map those files (removed at
    once: they live as long as the maps), so that a file larger than memory can be read.

    Parameters
    ----------
    path
        The file; gzip, bz2 and xz files are recognised by their first bytes.
    n_features
        Fix the dimension (the files of a train/test pair can differ in their highest
        index); an index beyond it is an error. None takes the highest index seen.
    block_bytes
        Text parsed at once, ≥ 1 (default :data:`BLOCK_BYTES`).
    scratch
        Where the arrays of a file of several blocks are written.

    Returns
    -------
    X, y
        ``(n, d)`` CSR features (float64 values, int32 indices sorted within each row,
        no stored zeros) and ``(n,)`` float64 labels.

    Raises
    ------
    DataError
        One line naming the file and, for a bad line, its number and what is wrong.
    """
    if n_features is not None and n_features < 0:
        raise DataError(f"{path}: n_features must be at least 0, got {n_features}")
    path = _checked_path(path)
    first: tuple[sp.csr_matrix, np.ndarray] | None = None
    spill: _Spill | None = None
    line, offset = 1, 0
    try:
        with _open_binary(path) as fh:
            for text, lines in _blocks(fh, max(1, block_bytes or BLOCK_BYTES)):
                X, y = _parse_block(path, text, line, offset, n_features)
                line, offset = line + lines, offset + len(text)
                if X.shape[0] == 0:
                    continue
                if first is None:
                    first = X, y
                    continue
                if spill is None:  # a second block: from now on, to files
                    spill = _Spill(scratch)
                    spill.add(*first)
                spill.add(X, y)
    except BaseException as exc:
        if spill is not None:
            spill.discard()  # no half-written arrays are left in the cache folder
        if not isinstance(exc, _READ_ERRORS):
            raise
        where = f" after line {line - 1}" if line > 1 else ""
        raise DataError(
            f"{path}: cannot read{where} ({type(exc).__name__}: {_first_line(exc)}); "
            f"a compressed file may be truncated"
        ) from None
    if first is None:
        raise DataError(f"{path}: no examples")
    if spill is not None:
        return spill.finish(n_features)
    X, y = first
    return _canonical(X), np.ascontiguousarray(y, dtype=np.float64)


def _blocks(fh: IO[bytes], size: int) -> Iterator[tuple[bytes, int]]:
    """Whole lines of the file, about ``size`` bytes at a time, with their line count."""
    rest = b""
    while True:
        chunk = fh.read(size)
        if not chunk:
            if rest:
                yield rest, rest.count(b"\n") + (not rest.endswith(b"\n"))
            return
        chunk = rest + chunk
        cut = chunk.rfind(b"\n") + 1
        rest = chunk[cut:]  # a line longer than a block is read on until it ends
        if cut:
            yield chunk[:cut], chunk.count(b"\n", 0, cut)


def _parse_block(
    path: Path, text: bytes, line: int, offset: int, n_features: int | None
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Parse a block of lines (the first is line ``line`` of the file, at byte ``offset``)."""
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(
            io.BytesIO(text), n_features=n_features, dtype=np.float64, zero_based=False
        )
    except (ValueError, OverflowError):
        # The compiled parser says what but not where: find the line, or read the block
        # with the Python parser when the format allows what the compiled one refused.
        return _parse_lines(path, text, line, offset, n_features)
    if not (np.isfinite(X.data).all() and np.isfinite(y).all()):
        return _parse_lines(path, text, line, offset, n_features)
    return X, y


class _Spill:
    """The CSR arrays of a file of several blocks, written to files a block at a time."""

    _PARTS: dict[str, type] = {
        "data": np.float64,
        "indices": np.int32,
        "indptr": np.int64,
        "y": np.float64,
    }

    def __init__(self, scratch: Path | None) -> None:
        import tempfile

        from kbench.data.downloads import cache_dir

        root = scratch if scratch is not None else cache_dir() / "tmp"
        root.mkdir(parents=True, exist_ok=True)
        self._dir = tempfile.TemporaryDirectory(dir=root, prefix="libsvm-")
        # Open until finish() or discard(): the blocks are appended as they are parsed.
        self._files = {k: open(Path(self._dir.name) / k, "wb") for k in self._PARTS}  # noqa: SIM115
        self._files["indptr"].write(np.zeros(1, dtype=np.int64).tobytes())
        self.n = self.nnz = self.d = 0

    def add(self, X: sp.csr_matrix, y: np.ndarray) -> None:
        X = _canonical(X)
        for k, a in (("data", X.data), ("indices", X.indices), ("y", y)):
            self._files[k].write(np.ascontiguousarray(a, dtype=self._PARTS[k]).tobytes())
        self._files["indptr"].write((X.indptr[1:].astype(np.int64) + self.nnz).tobytes())
        self.n, self.nnz, self.d = self.n + X.shape[0], self.nnz + X.nnz, max(self.d, X.shape[1])

    def finish(self, n_features: int | None) -> tuple[sp.csr_matrix, np.ndarray]:
        """The matrix and labels, mapped from the files (which are then removed)."""
        from kbench.core.arrays import csr_over

        try:
            for fh in self._files.values():
                fh.close()
            if self.nnz < np.iinfo(np.int32).max:  # int32 pointers, as the cache keeps them
                self._narrow("indptr", np.int32)
            a = {k: self._map(k) for k in self._PARTS}
        finally:
            self._dir.cleanup()  # the maps keep the files' pages until they are closed
        d = n_features if n_features is not None else self.d
        return csr_over(a["data"], a["indices"], a["indptr"], (self.n, d)), a["y"]

    def discard(self) -> None:
        """Remove the files (the file could not be read to its end)."""
        for fh in self._files.values():
            fh.close()
        self._dir.cleanup()

    def _narrow(self, k: str, dtype: type) -> None:
        src = np.memmap(Path(self._dir.name) / k, dtype=self._PARTS[k], mode="r")
        with open(Path(self._dir.name) / f"{k}.narrow", "wb") as fh:
            for lo in range(0, len(src), 1 << 22):
                fh.write(src[lo : lo + (1 << 22)].astype(dtype).tobytes())
        del src
        os.replace(Path(self._dir.name) / f"{k}.narrow", Path(self._dir.name) / k)
        self._PARTS = {**self._PARTS, k: dtype}

    def _map(self, k: str) -> np.ndarray:
        path = Path(self._dir.name) / k
        if path.stat().st_size == 0:  # no values (every row empty): nothing to map
            return np.zeros(0, dtype=self._PARTS[k])
        return np.memmap(path, dtype=self._PARTS[k], mode="r")


def _canonical(X: sp.spmatrix) -> sp.csr_matrix:
    """CSR with float64 values, int32 indices and index pointers, no stored zeros."""
    import scipy.sparse as sp

    X = sp.csr_matrix(X, dtype=np.float64)
    X.eliminate_zeros()
    if X.nnz < np.iinfo(np.int32).max and X.shape[1] <= np.iinfo(np.int32).max:
        X.indices = X.indices.astype(np.int32, copy=False)
        X.indptr = X.indptr.astype(np.int32, copy=False)
    return X


def read_libsvm(
    path: str | Path, n_features: int | None = None, *, max_elements: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Read a LIBSVM/svmlight file into a dense ``(X, y)``.

    As :func:`read_libsvm_csr`, then densified; ``max_elements`` (default
    :data:`kbench.data.readers.MAX_ELEMENTS`) refuses files whose dense matrix would hold
    more values than this.
    """
    X, y = read_libsvm_csr(path, n_features)
    check_dense_size(
        path, X.shape[0], X.shape[1], MAX_ELEMENTS if max_elements is None else max_elements
    )
    return X.toarray(), y


def _parse_lines(
    path: Path, text: bytes, first: int, offset: int, n_features: int | None
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Read a block of lines in Python (the first is line ``first`` of the file, at byte
    ``offset``): raise DataError at its first bad line, or return its arrays when every
    line is valid."""
    import scipy.sparse as sp

    try:
        lines = text.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{path}: not a UTF-8 text file ({exc.reason} at byte {offset + exc.start})"
        ) from None
    labels: list[float] = []
    cols: list[int] = []
    vals: list[float] = []
    indptr = [0]
    for lineno, line in enumerate(lines, first):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        try:
            label = float(parts[0])
        except ValueError:
            raise DataError(f"{path}:{lineno}: label {parts[0]!r} is not a number") from None
        if not math.isfinite(label):
            raise DataError(f"{path}:{lineno}: label {parts[0]!r} is not finite")
        labels.append(label)
        prev = 0
        for tok in parts[1:]:
            if tok.startswith("qid:"):
                continue
            idx, sep, val = tok.partition(":")
            try:
                j, v = int(idx), float(val)
            except ValueError:
                raise DataError(
                    f"{path}:{lineno}: malformed feature {tok!r} (expected index:value)"
                ) from None
            if not sep or j < 1:
                raise DataError(f"{path}:{lineno}: malformed feature {tok!r} (indices start at 1)")
            if j <= prev:
                raise DataError(
                    f"{path}:{lineno}: feature indices must increase ({j} after {prev})"
                )
            if not math.isfinite(v):
                raise DataError(f"{path}:{lineno}: feature {j} has non-finite value {val!r}")
            if n_features is not None and j > n_features:
                raise DataError(
                    f"{path}:{lineno}: feature index {j} exceeds the declared dimension {n_features}"
                )
            prev = j
            cols.append(j - 1)
            vals.append(v)
        indptr.append(len(cols))
    d = n_features if n_features is not None else ((max(cols) + 1) if cols else 0)
    X = sp.csr_matrix(
        (np.asarray(vals, dtype=np.float64), np.asarray(cols, dtype=np.int64), indptr),
        shape=(len(labels), d),
    )
    return X, np.asarray(labels, dtype=np.float64)
