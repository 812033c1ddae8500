"""Growing preallocated arrays: the one helper every learner with growable storage uses.

Learners keep their model in arrays allocated for a capacity (support vectors, kernel
rows, Gram blocks) and, when the capacity is reached, move the contents into larger
arrays. :func:`grown` is that move, for any number of axes.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np


def grown(
    old: np.ndarray,
    shape: int | tuple[int, ...],
    *,
    keep: int | tuple[int, ...] | None = None,
    fill: Any = 0,
) -> np.ndarray:
    """A new C-contiguous array of ``shape`` (same dtype) holding the leading block of ``old``.

    Parameters
    ----------
    old
        The array to enlarge.
    shape
        The new shape, or the new length of the first axis (the other axes are kept).
    keep
        How many leading entries to copy along each axis (an int applies to the first axis;
        the other axes then copy everything that fits). By default, all of ``old`` that fits.
    fill
        The value of the entries not copied from ``old``.

    Returns
    -------
    numpy.ndarray
        The new array; ``old`` is left as it was.
    """
    if isinstance(shape, int):
        shape = (shape, *old.shape[1:])
    if len(shape) != old.ndim:
        raise ValueError(f"cannot grow a {old.ndim}-d array to shape {shape}")
    counts = list(old.shape) if keep is None else ([keep] if isinstance(keep, int) else list(keep))
    counts += list(old.shape[len(counts) :])
    block = tuple(slice(0, min(c, n, o)) for c, n, o in zip(counts, shape, old.shape, strict=True))
    new = np.full(shape, fill, dtype=old.dtype)
    new[block] = old[block]
    return new


def is_sparse(X: Any) -> bool:
    """Whether ``X`` is a scipy.sparse matrix or array.

    Without importing scipy.sparse (about 0.2 s, which every command would pay): a sparse
    ``X`` means the module is loaded already.
    """
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(X)


def csr_over(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: Any) -> Any:
    """A scipy CSR matrix over exactly these arrays (of a canonical CSR matrix), not copies.

    scipy's constructor copies an array that is a view of less than half of its base, as
    the first rows of a mapped data set are: the arrays are set on an empty matrix instead.
    """
    import scipy.sparse as sp

    m = sp.csr_matrix(tuple(shape), dtype=np.float64)
    m.data, m.indices, m.indptr = data, indices, indptr
    for flag in ("_has_sorted_indices", "_has_canonical_format"):
        m.__dict__.pop(flag, None)  # worked out again from the arrays when asked
    return m


def one_rows(X: Any) -> Iterator[Any]:
    """X's rows one at a time, for a loop that hands a learner one row: the rows of a dense
    array, or one-row CSR matrices of a CSR matrix's rows.

    scipy's ``X[i]`` takes 25-35 µs a row, which a per-row loop over a9a (a few µs of
    learning a row) would pay three times over; a row made here from a template takes
    about 5. Its arrays are copies, so a learner may keep the row.
    """
    if not is_sparse(X) or type(X).__name__ != "csr_matrix":
        yield from (X[i] for i in range(X.shape[0]))
        return
    template = type(X)((1, X.shape[1]), dtype=X.dtype)
    for flag in ("_has_sorted_indices", "_has_canonical_format"):
        template.__dict__.pop(flag, None)  # worked out from each row's arrays when asked
    indptr, indices, data = X.indptr, X.indices, X.data
    for i in range(X.shape[0]):
        a, b = indptr[i], indptr[i + 1]
        row = copy.copy(template)
        row.data, row.indices = data[a:b].copy(), indices[a:b].copy()
        row.indptr = np.array([0, b - a], dtype=indptr.dtype)
        yield row


def squared_errors(pred: Any, y: Any) -> np.ndarray:
    """(pred − y)² in float64, inf where it overflows: a diverging learner's predictions give
    inf, which the runner's divergence check reports once, not a NumPy warning per block."""
    with np.errstate(over="ignore"):
        out: np.ndarray = (np.asarray(pred, dtype=np.float64) - y) ** 2
    return out
