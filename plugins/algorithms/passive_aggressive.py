"""Kernel passive–aggressive learning: PA, PA-I and PA-II (Crammer et al. 2006), binary."""

from __future__ import annotations

from typing import Literal

import numpy as np

from kbench import hookimpl
from kbench.core.components import Algorithm, param
from kbench.cython_core import _pa
from kbench.learners.support_buffer import SupportBuffer
from kbench.plugins.algorithms._budget import NOT_COMPILED, expansion_stats, run_growing
from kbench.plugins.algorithms._sparse_rows import (
    MarkedRows,
    OneRowMethods,
    compiled_kernel,
    csr_rows,
    open_rows,
    refuse_switch,
    self_kernel,
    stored_rows,
)

VARIANTS = {"PA": 0, "PA-I": 1, "PA-II": 2}


class PassiveAggressive(OneRowMethods, Algorithm):
    """Kernel passive–aggressive classifier without a budget (Crammer, Dekel, Keshet,
    Shalev-Shwartz and Singer 2006), binary.

    ``f(x) = Σ_i α_i k(x_i, x)``. On a hinge loss ``ℓ = max(0, 1 − y f(x)) > 0`` the example
    is stored with ``α = τ y``, the smallest change of f that satisfies (PA) or trades off
    (PA-I, PA-II) the margin constraint ``y f(x) ≥ 1``:

    * PA: ``τ = ℓ / k(x, x)``;
    * PA-I: ``τ = min(C, ℓ / k(x, x))``;
    * PA-II: ``τ = ℓ / (k(x, x) + 1/(2C))``.

    Every example with a positive loss becomes a support vector: the model grows with the
    stream (on Covertype the ramp-SVM paper's PA kept all 10 000 examples). The paper does not
    say which variant it ran; kbench defaults to PA-I.

    Parameters
    ----------
    variant
        ``PA``, ``PA-I`` or ``PA-II``.
    C
        Aggressiveness C > 0 of PA-I and PA-II (unused by PA).
    """

    name = "pa"
    tasks = frozenset({"binary"})
    test_params = {"C": 1.0}
    #: CSR rows are learned with the same update, support vectors kept sparse.
    sparse_input = True

    variant: Literal["PA", "PA-I", "PA-II"] = param("PA-I")
    C: float = param(1.0, low=0.0, low_open=True)

    def __post_init__(self) -> None:
        variant = self.variant
        if variant not in VARIANTS:
            raise ValueError(f"pa: unknown variant {variant!r} (choose from {', '.join(VARIANTS)})")
        self._v = VARIANTS[variant]
        self._buf: SupportBuffer | None = None
        assert self.kernel is not None
        self._compiled = self.kernel.compiled()
        self._one = np.empty(1)
        self._sparse: MarkedRows | None = None  # the support vectors as CSR rows

    def _buffer(self, d: int) -> SupportBuffer:
        if self._sparse is not None:  # the stand-in rows are one value wide
            refuse_switch(self.name, False)
        if self._buf is None:
            self._buf = SupportBuffer(d, 64, growable=True)
        return self._buf

    def _decision_dense(self, x):
        buf = self._buffer(len(x))
        return float(buf.scores(buf.row(self.kernel, x))[0])

    def _learn_dense(self, x, y):
        if y != 1.0 and y != -1.0:
            raise ValueError(f"pa: labels must be −1 or +1, got {y!r}")
        buf = self._buffer(len(x))
        if buf.size == buf.capacity:
            buf.grow()
        buf.row(self.kernel, x)  # the cached row when predict_one(x) came just before
        kxx = float("nan")
        if self._compiled is None:
            kxx = float(np.asarray(self.kernel.diag(x[None, :]))[0])
            buf.kernel_evals += 1
        self._one[0] = float(y)
        _i, m, evals = _pa.pa_block(
            self._compiled or NOT_COMPILED,
            buf.X,
            buf.sq,
            buf.alpha,
            buf.size,
            x[None, :],
            self._one,
            np.empty(1),
            buf.krow,
            self._v,
            float(self.C),
            True,
            kxx,
            0,
        )
        buf.size = m
        buf.kernel_evals += evals
        buf.touch()

    def _learn_predict_sparse(self, X, y: np.ndarray) -> np.ndarray:
        """Predict then learn the CSR rows, one compiled call per block of rows
        (:meth:`MarkedRows.learn`; the buffer and the store double when full)."""
        kern = compiled_kernel(self.kernel)
        self._sparse = rows = open_rows(self.name, self._sparse, self._buf, X, self._buffer)
        buf = self._buf
        assert buf is not None
        C = float(self.C)

        def step(marks, y, pred, block):
            i, buf.size, evals = _pa.pa_block(
                kern, buf.X, buf.sq, buf.alpha, buf.size, marks, y, pred, buf.krow, self._v, C,
                False, 0.0, 0, block,
            )  # fmt: skip
            buf.kernel_evals += evals
            return i

        return rows.learn(kern, X, y, buf, step)

    def _learn_predict_marked(self, X, y: np.ndarray) -> np.ndarray:
        """Predict then learn each CSR row: the kernel row from the sparse store, then the
        compiled update on the example's mark with that row and k(x, x) given (as for a
        kernel the loop cannot evaluate; see ``_sparse_rows``)."""
        kern = compiled_kernel(self.kernel)
        self._sparse = rows = open_rows(self.name, self._sparse, self._buf, X, self._buffer)
        buf = self._buf
        assert buf is not None
        pred, one = np.empty(X.shape[0]), np.empty(1)
        C = float(self.C)
        for i, x, xsq in csr_rows(X):
            if buf.size == buf.capacity:
                buf.grow()
            rows.row(kern, x, xsq, buf)
            self._one[0] = y[i]
            _i, buf.size, _evals = _pa.pa_block(
                NOT_COMPILED, buf.X, buf.sq, buf.alpha, buf.size, rows.next_mark(), self._one,
                one, buf.krow, self._v, C, True, self_kernel(kern, xsq), 0,
            )  # fmt: skip
            pred[i] = one[0]
            rows.sync(buf, x, rows.count)
        buf.touch()
        return pred

    @staticmethod
    def _checked(y) -> np.ndarray:
        y = np.ascontiguousarray(y, dtype=np.float64)
        if not np.all((y == 1.0) | (y == -1.0)):
            raise ValueError("pa: labels must be −1 or +1")
        return y

    def learn_predict_many(self, X, y):
        if (csr := self._csr_block(X)) is not None:
            return self._learn_predict_sparse(csr, self._checked(y))
        if self._compiled is None:
            return super().learn_predict_many(X, y)
        y = self._checked(y)
        buf = self._buffer(X.shape[1])
        pred = np.empty(len(X))
        run_growing(buf, len(X), lambda i: _pa.pa_block(
            self._compiled, buf.X, buf.sq, buf.alpha, buf.size, X, y, pred, buf.krow, self._v,
            float(self.C), False, 0.0, i,
        ))  # fmt: skip
        return pred

    def _decisions(self, X):
        if self._buf is None or self._buf.size == 0:
            return np.zeros(X.shape[0])
        if self._sparse is not None:
            return self._sparse.decision_many(self.kernel, X, self._buf.alpha, 1.0)[:, 0]
        return self._buf.decision_many(self.kernel, X)[:, 0]

    def snapshot(self) -> dict[str, np.ndarray]:
        """Copies of the support vectors X (CSR once it has learned CSR rows) and their coefficients alpha (α_i = τ_i y_i)."""
        buf = self._buf
        m = buf.size if buf else 0
        return {
            "X": stored_rows(buf, self._sparse),
            "alpha": buf.alpha[:m, 0].copy() if buf else np.zeros(0),
        }

    def stats(self):
        if self._buf is None or self._sparse is None:
            return expansion_stats(self._buf)
        return expansion_stats(self._buf, self._buf.nbytes() + self._sparse.nbytes())


@hookimpl
def kbench_register_algorithms(register):
    """Register the passive–aggressive learners."""
    register(PassiveAggressive)
