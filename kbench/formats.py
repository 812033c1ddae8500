"""Readers for the file formats data sets come in. Each reports the file and line of bad input."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np

from kbench.errors import DataError


def _open_text(path: str | Path) -> io.TextIOBase:
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file")
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="strict")
    return open(path, encoding="utf-8", errors="strict")


def read_libsvm(path: str | Path, n_features: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Read a LIBSVM/svmlight file into a dense ``(X, y)``.

    Feature indices are 1-based. ``n_features`` fixes the dimension (files of a train/test
    pair can differ in their highest index); an index beyond it is an error.
    """
    labels: list[float] = []
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    try:
        with _open_text(path) as fh:
            for lineno, line in enumerate(fh, 1):
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                parts = line.split()
                try:
                    label = float(parts[0])
                except ValueError:
                    raise DataError(f"{path}:{lineno}: label {parts[0]!r} is not a number") from None
                if not np.isfinite(label):
                    raise DataError(f"{path}:{lineno}: label {parts[0]!r} is not finite")
                r = len(labels)
                labels.append(label)
                prev = 0
                for tok in parts[1:]:
                    if tok.startswith("qid:"):
                        continue
                    idx, sep, val = tok.partition(":")
                    try:
                        j, v = int(idx), float(val)
                    except ValueError:
                        raise DataError(f"{path}:{lineno}: malformed feature {tok!r} (expected index:value)") from None
                    if not sep or j < 1:
                        raise DataError(f"{path}:{lineno}: malformed feature {tok!r} (indices start at 1)")
                    if j <= prev:
                        raise DataError(f"{path}:{lineno}: feature indices must increase ({j} after {prev})")
                    if not np.isfinite(v):
                        raise DataError(f"{path}:{lineno}: feature {j} has non-finite value {val!r}")
                    prev = j
                    rows.append(r)
                    cols.append(j - 1)
                    vals.append(v)
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not a text file ({exc.reason})") from None
    except (OSError, EOFError) as exc:
        raise DataError(f"{path}: cannot read: {exc}") from None
    if not labels:
        raise DataError(f"{path}: no examples")
    d = (max(cols) + 1) if cols else 0
    if n_features is not None:
        if d > n_features:
            raise DataError(f"{path}: feature index {d} exceeds the declared dimension {n_features}")
        d = n_features
    X = np.zeros((len(labels), d))
    X[np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)] = vals
    return X, np.asarray(labels)
