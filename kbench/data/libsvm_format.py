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
import zlib
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np

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
    # Imported here: readers imports this module for read_libsvm.
    from kbench.data.readers import _existing

    return _existing(path)


def read_libsvm_csr(
    path: str | Path, n_features: int | None = None
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Read a LIBSVM/svmlight file into a CSR ``(X, y)`` without densifying it.

    Parameters
    ----------
    path
        The file; gzip, bz2 and xz files are recognised by their first bytes.
    n_features
        Fix the dimension (the files of a train/test pair can differ in their highest
        index); an index beyond it is an error. None takes the highest index seen.

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
    from sklearn.datasets import load_svmlight_file

    try:
        with _open_binary(path) as fh:
            X, y = load_svmlight_file(fh, n_features=n_features, dtype=np.float64, zero_based=False)
    except (ValueError, OverflowError, *_READ_ERRORS):
        # The compiled parser says what but not where: find the line, or read the file
        # with the Python parser when the format allows what the compiled one refused.
        X, y = _parse_lines(path, n_features)
    else:
        if not (np.isfinite(X.data).all() and np.isfinite(y).all()):
            X, y = _parse_lines(path, n_features)
    if X.shape[0] == 0:
        raise DataError(f"{path}: no examples")
    return _canonical(X), np.ascontiguousarray(y, dtype=np.float64)


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
    from kbench.data.readers import MAX_ELEMENTS, _check_size

    X, y = read_libsvm_csr(path, n_features)
    _check_size(
        path, X.shape[0], X.shape[1], MAX_ELEMENTS if max_elements is None else max_elements
    )
    return X.toarray(), y


def _parse_lines(path: Path, n_features: int | None) -> tuple[sp.csr_matrix, np.ndarray]:
    """Read the file line by line in Python: raise DataError at its first bad line, or
    return its arrays when every line is valid."""
    import scipy.sparse as sp

    labels: list[float] = []
    cols: list[int] = []
    vals: list[float] = []
    indptr = [0]
    lineno = 0
    try:
        with io.TextIOWrapper(_open_binary(path), encoding="utf-8", errors="strict") as fh:
            for lineno, line in enumerate(fh, 1):
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                parts = line.split()
                try:
                    label = float(parts[0])
                except ValueError:
                    raise DataError(
                        f"{path}:{lineno}: label {parts[0]!r} is not a number"
                    ) from None
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
                        raise DataError(
                            f"{path}:{lineno}: malformed feature {tok!r} (indices start at 1)"
                        )
                    if j <= prev:
                        raise DataError(
                            f"{path}:{lineno}: feature indices must increase ({j} after {prev})"
                        )
                    if not math.isfinite(v):
                        raise DataError(
                            f"{path}:{lineno}: feature {j} has non-finite value {val!r}"
                        )
                    if n_features is not None and j > n_features:
                        raise DataError(
                            f"{path}:{lineno}: feature index {j} exceeds the declared dimension {n_features}"
                        )
                    prev = j
                    cols.append(j - 1)
                    vals.append(v)
                indptr.append(len(cols))
    except DataError:
        raise
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start})"
        ) from None
    except _READ_ERRORS as exc:
        where = f" after line {lineno}" if lineno else ""
        raise DataError(
            f"{path}: cannot read{where} ({type(exc).__name__}: {_first_line(exc)}); "
            f"a compressed file may be truncated"
        ) from None
    if not labels:
        raise DataError(f"{path}: no examples")
    d = n_features if n_features is not None else ((max(cols) + 1) if cols else 0)
    X = sp.csr_matrix(
        (np.asarray(vals, dtype=np.float64), np.asarray(cols, dtype=np.int64), indptr),
        shape=(len(labels), d),
    )
    return X, np.asarray(labels, dtype=np.float64)
