"""Rows: the examples handed to a learner, dense or CSR, checked once.

A learner written on the toolkit takes whatever the runner, a test or a user hands it (a
2-D float64 block, a CSR matrix, one 1-D row) as :class:`Rows`, which checks the dtype,
the shape and the sparsity once and names the parameter in its one-line error. Its block
loops then read the rows without further checks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.core.arrays import is_sparse
from kbench.core.components import Kernel
from kbench.cython_core._kernels import KernelSpec
from kbench.cython_core._sparse import all_signs

#: Examples per call of a compiled loop on CSR rows: the store's pool is reserved for their
#: non-zeros before each call.
BLOCK_ROWS = 1024

_F64 = np.dtype(np.float64)


def _real(dtype: np.dtype, name: str) -> None:
    """Refuse a dtype that is not real numbers (complex, object, strings, dates)."""
    if dtype.kind not in "biuf":
        raise ValueError(f"{name}: rows must hold real numbers, got dtype {dtype}")


def as_csr(X: Any) -> Any:
    """X (a dense 2-D block, or any sparse matrix) as a CSR matrix."""
    if is_sparse(X):
        return X.tocsr() if X.format != "csr" else X
    import scipy.sparse as sp  # only here: dense streams never import scipy.sparse

    return sp.csr_matrix(np.asarray(X, dtype=np.float64))


def csr_parts(X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """int64 row pointers, int32 sorted indices and float64 values of a CSR block (copied
    only if need be)."""
    X = X.tocsr() if X.format != "csr" else X
    if not X.has_sorted_indices:
        X = X.sorted_indices()
    return (
        np.asarray(X.indptr).astype(np.int64, copy=False),
        np.ascontiguousarray(X.indices, dtype=np.int32),
        np.ascontiguousarray(X.data, dtype=np.float64),
    )


class Rows:
    """Examples for a learner: a C-contiguous float64 block ``X`` (n × d), or CSR rows
    (``csr``, their arrays in ``parts``).

    Make them with :meth:`of` (a block) or :meth:`one` (one row, for ``learn_one``); both
    accept dense or sparse input and raise a one-line error naming the parameter for
    anything else. ``row0`` is the caller's own 1-D row of :meth:`one` (dense), so that a
    store can tell it computed that row's kernel row just before.
    """

    __slots__ = ("X", "_parts", "csr", "d", "n", "row0")

    def __init__(self, X: np.ndarray | None, csr: Any = None, row0: np.ndarray | None = None):
        self.X, self.csr, self.row0 = X, csr, row0
        shape = csr.shape if csr is not None else X.shape  # type: ignore[union-attr]
        self.n, self.d = int(shape[0]), int(shape[1])
        self._parts: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def sparse(self) -> bool:
        """True for CSR rows."""
        return self.csr is not None

    @property
    def parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(indptr, indices, data)`` of CSR rows (:func:`csr_parts`), made once."""
        if self._parts is None:
            self._parts = csr_parts(self.csr)
        return self._parts

    @classmethod
    def of(cls, X: Any, name: str = "X") -> Rows:
        """A block of rows: X itself when it is Rows, else checked (2-D, real numbers)."""
        if isinstance(X, Rows):
            return X
        if type(X) is np.ndarray and X.dtype is _F64 and X.ndim == 2 and X.flags.c_contiguous:
            # A block as the runner hands it: nothing to convert or check.
            rows = cls.__new__(cls)
            rows.X, rows.csr, rows.row0, rows._parts = X, None, None, None
            rows.n, rows.d = X.shape
            return rows
        if is_sparse(X):
            if X.ndim != 2:
                raise ValueError(f"{name} must be a 2-D block of rows, got shape {X.shape}")
            _real(X.dtype, name)
            return cls(None, as_csr(X))
        A = np.asarray(X)
        _real(A.dtype, name)
        if A.ndim != 2:
            raise ValueError(f"{name} must be a 2-D block of rows (n, d), got shape {A.shape}")
        return cls(np.ascontiguousarray(A, dtype=np.float64))

    @classmethod
    def one(cls, x: Any, name: str = "x") -> Rows:
        """One row: a 1-D dense row, or a sparse row (1 × d)."""
        if type(x) is np.ndarray and x.dtype is _F64 and x.ndim == 1 and x.flags.c_contiguous:
            # The runner's row, once per example: no conversion to make or check to repeat.
            rows = cls.__new__(cls)
            rows.X, rows.csr, rows.row0, rows._parts = x[None, :], None, x, None
            rows.n, rows.d = 1, x.shape[0]
            return rows
        if is_sparse(x):
            x = as_csr(x.reshape(1, -1) if x.ndim == 1 else x)
            if x.shape[0] != 1:
                raise ValueError(f"{name} must be one row, got {x.shape[0]}")
            _real(x.dtype, name)
            return cls(None, x)
        a = np.asarray(x)
        _real(a.dtype, name)
        if a.ndim != 1:
            raise ValueError(f"{name} must be one 1-D row, got shape {a.shape}")
        a = np.ascontiguousarray(a, dtype=np.float64)
        return cls(a[None, :], row0=a)

    def as_sparse(self) -> Rows:
        """These rows as CSR (for a learner that holds CSR rows)."""
        return self if self.sparse else Rows(None, as_csr(self.X))

    def dense(self) -> np.ndarray:
        """These rows as a dense float64 block (densified when CSR)."""
        if self.X is not None:
            return self.X
        return np.ascontiguousarray(self.csr.toarray(), dtype=np.float64)


def labels(y: Any, n: int, name: str = "y", signs: str | None = None) -> np.ndarray:
    """y as a C-contiguous float64 vector of n labels, or a one-line error naming it;
    ``signs``: the learner (binary) that takes −1 and +1 only."""
    a: np.ndarray = y
    if n == 1 and signs is None and type(a) is np.ndarray and a.shape == (1,) and a.dtype is _F64:
        return a  # learn_one's label, once per example: one value is contiguous at any stride
    if not (type(a) is np.ndarray and a.dtype is _F64 and a.flags.c_contiguous):
        a = np.asarray(y)
        _real(a.dtype, name)
        a = np.ascontiguousarray(a.reshape(-1) if a.ndim == 0 else a, dtype=np.float64)
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(f"{name} must hold one label per row: {n} rows, got shape {a.shape}")
    if signs:
        # One pass in compiled code (one row in Python): NumPy would take three calls.
        ok = a[0] in (1.0, -1.0) if n == 1 else all_signs(a)
        if not ok:
            raise ValueError(f"{signs}: labels must be −1 or +1")
    return a


def one_row(x: Any) -> Any:
    """x, a dense 1-D row or one sparse row, as a one-row CSR matrix."""
    if not is_sparse(x):
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 1:
            raise ValueError(f"a one-row method takes a 1-D row, got shape {x.shape}")
        return as_csr(x[None, :])
    x = as_csr(x.reshape(1, -1) if x.ndim == 1 else x)
    if x.shape[0] != 1:
        raise ValueError(f"a one-row method takes one row, got {x.shape[0]}")
    return x


def compiled_kernel(kernel: Kernel) -> KernelSpec:
    """The :class:`KernelSpec` of a built-in kernel: sparse rows are computed only for
    those, and any other kernel gets a one-line TypeError."""
    spec = KernelSpec.of(kernel)
    if not spec.compiled:
        raise TypeError(f"sparse input needs a built-in kernel, not {type(kernel).__name__}")
    return spec


def packed_rows(
    rows: list[tuple[np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row pointers (int64), indices (int32) and values of CSR rows given as pairs."""
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r[0]) for r in rows], out=indptr[1:])
    indices = np.concatenate([r[0] for r in rows] or [np.zeros(0)]).astype(np.int32)
    data = np.concatenate([r[1] for r in rows] or [np.zeros(0)]).astype(np.float64)
    return indptr, indices, data
