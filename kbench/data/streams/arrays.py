"""A stream's arrays: a data set's as loaded and checked, and the read-only arrays a stream
serves, dense (C-contiguous float64) or CSR (float64 values, sorted int32 indices while they
fit, no stored zeros). What :mod:`kbench.data.streams.build` builds streams from and what
the data cache (:mod:`kbench.data.streams.cache`) maps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kbench.core.arrays import csr_over, is_sparse
from kbench.core.components import Data
from kbench.core.errors import DataError
from kbench.data.gathered import RowGather
from kbench.data.readers import MAX_ELEMENTS

if TYPE_CHECKING:
    import scipy.sparse as sp

#: Rows (dense) or stored values (CSR) checked at once: a stream larger than memory is read
#: a chunk at a time rather than copied into one temporary array.
CHECK_CHUNK = 1 << 20


def check_finite(name: str, part: str, X: Any, y: np.ndarray) -> None:
    """A DataError naming the first row of features or label with a NaN or an infinity."""
    bad = ~np.isfinite(y)
    if is_sparse(X):
        for lo in range(0, X.nnz, CHECK_CHUNK):
            bad_values = lo + np.flatnonzero(~np.isfinite(X.data[lo : lo + CHECK_CHUNK]))
            bad[np.searchsorted(X.indptr, bad_values, side="right") - 1] = True
    else:
        step = max(1, CHECK_CHUNK // max(1, X.shape[1]))
        for lo in range(0, X.shape[0], step):
            bad[lo : lo + step] |= ~np.isfinite(X[lo : lo + step]).all(axis=1)
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(
            f"data set {name!r}: {part} row {row} has a NaN or infinite value "
            f"({int(bad.sum())} such rows); clean the data or drop those rows"
        )


def parse_classes(text: str, data: Data, name: str) -> set[int]:
    """The classes ``positive=`` names (numbers, ranges ``5-9`` or class names), checked."""
    names = list(data.class_names or [])
    chosen: set[int] = set()
    for part in text.replace("|", " ").replace(";", " ").split():
        lo, dash, hi = part.partition("-")
        if dash and lo.isdigit() and hi.isdigit():
            chosen.update(range(int(lo), int(hi) + 1))
        elif part.lstrip("-").isdigit():
            chosen.add(int(part))
        elif part in names:
            chosen.add(names.index(part))
        else:
            raise DataError(
                f"data set {name!r} has no class {part!r} (classes: {', '.join(names) or f'0..{data.n_classes - 1}'})"
            )
    missing = sorted(c for c in chosen if not 0 <= c < data.n_classes)
    if missing:
        raise DataError(
            f"data set {name!r} has no class {missing[0]} (it has classes 0..{data.n_classes - 1})"
        )
    if not chosen or len(chosen) == data.n_classes:
        raise DataError(f"positive={text!r} on {name!r} must name some but not all classes")
    return chosen


def label_text(label: float, data: Data, grouped: bool) -> str:
    """A label as the user knows it: the class name if the data set gives names."""
    names = list(data.class_names or [])
    if grouped:
        return f"{label:+g}"
    if data.task == "binary" and len(names) == 2:
        return repr(names[int(label > 0)])
    if data.task == "multiclass" and 0 <= int(label) < len(names):
        return repr(names[int(label)])
    return f"{label:g}"


def readonly(a: np.ndarray | None) -> np.ndarray | None:
    """A read-only C-contiguous float64 copy of ``a`` (None stays None)."""
    if a is None:
        return None
    a = np.array(a, dtype=np.float64, order="C", copy=True)  # owned, so no view can write to it
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class DatasetArrays:
    """A data set's arrays as loaded and checked, before any stream option.

    ``data`` holds float64 arrays. ``frozen`` arrays are read-only maps of a cache file,
    which streams may serve as they are; other arrays are copied before being served.
    """

    data: Data
    name: str
    label: str
    time_ordered: bool
    frozen: bool = False


def canonical_features(X: Any, sparse: bool) -> Any:
    """A data set's features as C-order float64, or canonical CSR when ``sparse``: float64
    values, indices sorted and unique (duplicates summed), no stored zeros, and int32
    indices while they fit (the cache maps the arrays as they are stored)."""
    if not sparse:
        # C order here, as in the cache file: a scaled stream's column means must be
        # summed in the same order whether it is built from the data set or from the cache
        return np.ascontiguousarray(X, dtype=np.float64)
    if is_canonical_csr(X):
        return X  # already as kbench keeps it: not copied (it may be a map of a large file)
    import scipy.sparse as sp

    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    X.sum_duplicates()  # sorts the indices too
    X.eliminate_zeros()
    if X.nnz < np.iinfo(np.int32).max and X.shape[1] <= np.iinfo(np.int32).max:
        X.indices = X.indices.astype(np.int32, copy=False)
        X.indptr = X.indptr.astype(np.int32, copy=False)
    return X


def is_canonical_csr(X: Any) -> bool:
    """Whether ``X`` is already CSR as kbench keeps it: float64 values, int32 indices,
    sorted and unique within each row, no stored zeros (checked without copying it)."""
    import scipy.sparse as sp  # loaded already: X came from it

    if not (
        sp.isspmatrix_csr(X)
        and X.data.dtype == np.float64
        and X.indices.dtype == np.int32
        and X.indptr.dtype == np.int32
        and X.has_canonical_format
    ):
        return False
    return not any(
        (X.data[lo : lo + CHECK_CHUNK] == 0).any() for lo in range(0, X.nnz, CHECK_CHUNK)
    )


def head_rows(X: Any, n: int, mapped: bool) -> Any:
    """The first ``n`` rows of ``X``; of a CSR map of the data cache (``mapped``), over the
    same arrays (a prefix of a CSR matrix is a prefix of each of its arrays), not a copy
    as scipy's slice would be."""
    if n >= X.shape[0]:
        return X  # scipy's X[:n] would copy a CSR matrix even then
    if not (mapped and is_sparse(X)):
        return X[:n]
    end = int(X.indptr[n])
    return csr_over(X.data[:end], X.indices[:end], X.indptr[: n + 1], (n, X.shape[1]))


def one_label(y: np.ndarray) -> bool:
    """Whether every label is the first: (y != y[0]).any() a chunk at a time, stopping at
    the first other label (not np.unique: no sorted copy of a long stream's labels, and
    most streams are decided by their first chunk)."""
    chunks = (y[lo : lo + CHECK_CHUNK] for lo in range(0, len(y), CHECK_CHUNK))
    return not any((c != y[0]).any() for c in chunks)


def densified(X: Any, Xt: Any, label: str) -> tuple[np.ndarray, np.ndarray | None]:
    """The dense arrays of a sparse stream, for ``dense=true``, within kbench's dense limit."""
    n = X.shape[0] + (0 if Xt is None else Xt.shape[0])
    if n * X.shape[1] > MAX_ELEMENTS:
        raise DataError(
            f"data set {label!r} with dense=true: {n} examples × {X.shape[1]} features would "
            f"need {n * X.shape[1] * 8 / 1e9:.1f} GB as dense float64 arrays (kbench's limit "
            f"is {MAX_ELEMENTS} values); drop dense=true to keep it sparse, or use n= to shorten it"
        )
    return X.toarray(), None if Xt is None else Xt.toarray()


def csr_frozen(X: Any, copy: bool) -> sp.csr_matrix:
    """A CSR matrix over read-only arrays (float64 values; int32 indices while they fit)."""
    small = X.nnz < np.iinfo(np.int32).max and X.shape[1] <= np.iinfo(np.int32).max
    index = np.int32 if small else np.int64
    parts = [
        np.array(X.data, dtype=np.float64, copy=copy),
        np.array(X.indices, dtype=index, copy=copy),
        np.array(X.indptr, dtype=index, copy=copy),
    ]
    for part in parts:
        if part.flags.writeable:
            part.setflags(write=False)
    return csr_over(parts[0], parts[1], parts[2], shape=X.shape)


def freeze(a: Any, base: DatasetArrays) -> Any:
    """Make ``a`` read-only C-contiguous float64 (or CSR over read-only arrays), copying
    only when something else holds it."""
    if a is None:
        return None
    if isinstance(a, RowGather):
        return a  # gathers read-only rows of a read-only map, a slice at a time
    given = any(a is b for b in (base.data.X, base.data.y, base.data.X_test, base.data.y_test))
    if is_sparse(a):
        # gathered by the stream's rows (nothing else refers to it), or the read-only map of a cache file
        return csr_frozen(a, copy=given and not base.frozen)
    plain = a.dtype == np.float64 and a.flags.c_contiguous
    if plain and base.frozen and not a.flags.writeable:
        return a  # the read-only map of a cache file, or a slice of it
    if plain and not given and a.flags.owndata:
        a.setflags(write=False)  # made by the stream's options: nothing else refers to it
        return a
    return readonly(a)
