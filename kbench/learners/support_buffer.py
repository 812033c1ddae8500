"""The support-vector buffer: fixed-size arrays that hold a kernel expansion.

``f(x) = Σ_i alpha[i] · k(X[i], x)`` (one column of ``alpha`` per output). Rows live in a
preallocated C-contiguous block with their squared norms cached, so one kernel row
per example is one compiled call. A buffer either grows (doubling) or, with a fixed
capacity, overwrites its oldest row (a circular buffer).
"""

from __future__ import annotations

import numpy as np

from kbench.core.arrays import grown
from kbench.core.components import Kernel
from kbench.core.kernel_rows import KIND_RBF, as_matrix
from kbench.cython_core import _kernels
from kbench.cython_core._kernels import KernelSpec

_F64 = np.dtype(np.float64)


class RowStore:
    """What the dense and the sparse support-vector stores share: per-row arrays that grow
    together (``_ROW_ARRAYS``), a version that tells when the last kernel row computed is
    out of date, and the expansion's outputs given a kernel row."""

    #: The arrays with one entry per row, enlarged together by :meth:`grow`.
    _ROW_ARRAYS: tuple[str, ...] = ()
    alpha: np.ndarray
    size: int
    _version: int

    @property
    def capacity(self) -> int:
        """Number of allocated rows."""
        raise NotImplementedError

    def grow(self, capacity: int | None = None) -> None:
        """Enlarge the row arrays (to twice the capacity by default), keeping the rows in order."""
        new = capacity or 2 * self.capacity
        for attr in self._ROW_ARRAYS:
            setattr(self, attr, grown(getattr(self, attr), new))
        self._version += 1

    def touch(self) -> None:
        """Mark the contents as changed by code that writes the arrays directly."""
        self._version += 1

    def scores(self, k: np.ndarray, scale: float = 1.0) -> np.ndarray:
        """``scale · alpha[:size]ᵀ k``: the expansion's outputs given a kernel row (``scale``:
        a factor on every coefficient, kept apart by a learner that shrinks them all)."""
        out = np.empty(self.alpha.shape[1])
        _kernels.expansion(k, self.alpha, self.size, out, scale)
        return out


class SupportBuffer(RowStore):
    """Support vectors, their squared norms and coefficients in fixed-size arrays.

    Parameters
    ----------
    d
        Dimension of the examples.
    capacity
        Number of rows allocated (the budget when ``growable`` is False).
    n_outputs
        Columns of ``alpha``: 1 for scalar scores, C for multiclass.
    growable
        Double the arrays when full instead of overwriting the oldest row.
    """

    _ROW_ARRAYS = ("X", "sq", "alpha", "krow")

    def __init__(
        self, d: int, capacity: int, *, n_outputs: int = 1, growable: bool = False
    ) -> None:
        if capacity < 1:
            raise ValueError(f"buffer capacity must be at least 1, got {capacity}")
        self.d = d
        self._row_shape = (d,)
        self.growable = growable
        self.X = np.zeros((capacity, d))
        self.sq = np.zeros(capacity)
        self.alpha = np.zeros((capacity, n_outputs))
        self.size = 0
        self.head = 0  # oldest row once a fixed-capacity buffer is full
        self.krow = np.zeros(capacity)
        self.kernel_evals = 0
        # The last row computed, so that predict_one then learn_one on the same x cost one row.
        self._last_x: np.ndarray | None = None
        self._version = 0
        self._last_version = -1

    @property
    def capacity(self) -> int:
        """Number of allocated rows."""
        return self.X.shape[0]

    def row(
        self, kernel: Kernel | KernelSpec, x: np.ndarray, xsq: float | None = None
    ) -> np.ndarray:
        """Kernel values between the stored rows and x (a view of length ``size``).

        ``kernel``: the kernel, or the :class:`KernelSpec` of a built-in one (what an
        :class:`~kbench.learners.Expansion` holds, so that no spec is made per row).
        Asking again for the same array object with the buffer unchanged returns the
        cached row without recomputing or recounting it.
        """
        m = self.size
        if x is self._last_x and self._version == self._last_version:
            return self.krow[:m]
        if type(x) is not np.ndarray or x.ndim != 1:
            raise ValueError(
                f"x must be one dense row (a 1-D float64 array), got {type(x).__name__} "
                f"of shape {np.shape(x)}"
            )
        if isinstance(kernel, KernelSpec):
            if not kernel.compiled:
                raise TypeError("a third-party kernel's rows need the kernel, not its spec")
            compiled: KernelSpec | tuple[int, float, float, float, float] | None = kernel
            kind = kernel.kind
        else:
            compiled = kernel.compiled()
            kind = -1 if compiled is None else compiled[0]
        if compiled is not None:
            if m:
                # Only the RBF kernel reads ‖x‖²; the others skip computing it. Summed as
                # the block loops sum it, so that a row learned alone is learned alike.
                if xsq is None:
                    if kind != KIND_RBF:
                        xsq = 0.0
                    elif x.dtype is _F64 and x.flags.c_contiguous:
                        xsq = -1.0  # kernel_row sums it, as sqnorm(x) does
                    else:
                        xsq = float(x @ x)  # kernel_row refuses such an x, in one line
                _kernels.kernel_row(compiled, self.X, self.sq, x, xsq, self.krow, m)
        else:
            assert not isinstance(kernel, KernelSpec)  # refused above
            # xsq as given: a kernel that reads ‖x‖² computes it when it is None, one that
            # does not (a view that caches rows) is spared it.
            self.krow[:m] = kernel.row(self.X[:m], x, sq=self.sq[:m], xsq=xsq)
        self.kernel_evals += m
        self._last_x, self._last_version = x, self._version
        return self.krow[:m]

    def add(self, x: np.ndarray, coef: float | np.ndarray, xsq: float | None = None) -> int:
        """Store x with coefficient(s) coef; return its slot (evicting the oldest when full)."""
        if not (type(x) is np.ndarray and x.shape == self._row_shape):
            self._check_row(x)  # the common case above costs no call
        if self.size < self.capacity:
            slot = self.size
            self.size += 1
        elif self.growable:
            self.grow()
            slot = self.size
            self.size += 1
        else:
            slot = self.head
            self.head = (self.head + 1) % self.capacity
        self.X[slot] = x  # _write's lines, inline: this runs once per stored example
        self.sq[slot] = float(x @ x) if xsq is None else xsq
        self.alpha[slot] = coef
        self._version += 1
        return slot

    def put(
        self, slot: int, x: np.ndarray, coef: float | np.ndarray, xsq: float | None = None
    ) -> int:
        """Store x with coefficient(s) coef in ``slot`` (below ``size``: the row there is
        replaced, as a budget's removal does); return the slot."""
        if not 0 <= slot < self.size:
            raise IndexError(f"slot {slot} is not a stored row (size {self.size})")
        self._check_row(x)
        self._write(slot, x, coef, xsq)
        return slot

    def _check_row(self, x: np.ndarray) -> None:
        # Checked before anything changes: a bad row leaves the buffer as it was.
        if np.shape(x) != self._row_shape:
            raise ValueError(f"x must be a row of {self.d} values, got shape {np.shape(x)}")

    def _write(self, slot: int, x: np.ndarray, coef: float | np.ndarray, xsq: float | None) -> None:
        self.X[slot] = x
        self.sq[slot] = float(x @ x) if xsq is None else xsq
        self.alpha[slot] = coef
        self._version += 1

    def decision_many(
        self, kernel: Kernel, X: np.ndarray, *, scale: float = 1.0, block: int = 2048
    ) -> np.ndarray:
        """Outputs for every row of X (shape ``n × n_outputs``), in blocks of Gram rows."""
        X = as_matrix(X, "X")
        n, m = len(X), self.size
        out = np.zeros((n, self.alpha.shape[1]))
        if m == 0 or n == 0:
            return out
        compiled = kernel.compiled()
        xsq = np.einsum("ij,ij->i", X, X)
        block = max(1, min(block, 4_000_000 // m))  # keep the Gram scratch block under 32 MB
        K = np.empty((min(block, n), m))
        for a in range(0, n, block):
            b = min(a + block, n)
            if compiled is not None:
                _kernels.decision_block(
                    compiled, self.X, self.sq, self.alpha, m, X[a:b], xsq[a:b], K, out[a:b]
                )
            else:
                out[a:b] = kernel.matrix(X[a:b], self.X[:m]) @ self.alpha[:m]
        return out * scale if scale != 1.0 else out

    def nbytes(self) -> int:
        """Memory held by the buffer's arrays."""
        return self.X.nbytes + self.sq.nbytes + self.alpha.nbytes + self.krow.nbytes
