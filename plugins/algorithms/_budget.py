"""The block path of the feature-map learners (not a plugin: the name starts with _).

:class:`CompiledBlocks` runs a learner's compiled loop on a dense block, CSR rows through
its own sparse path, and the per-example path when the loop cannot run on its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.core.components import Algorithm
from kbench.cython_core import _kernels
from kbench.learners.support_buffer import SupportBuffer
from kbench.plugins.algorithms._sparse_rows import (
    OneRowMethods,
)

#: The kernel tuple the compiled loops receive for a kernel they cannot compute.
NOT_COMPILED = (-1, 0.0, 1.0, 0.0, 1.0)


def sqnorm(x: np.ndarray) -> float:
    """‖x‖² computed exactly as the compiled loops compute it."""
    return _kernels.sqnorm(x)


class CompiledBlocks(OneRowMethods, Algorithm):
    """The block path of a learner whose compiled loop ``_run`` predicts then learns the
    rows of a block in its buffer (``_buffer``): CSR rows through ``_learn_predict_sparse``,
    the per-example path when the loop cannot run on its own, else the loop. Its one-row
    methods take dense or CSR rows (:class:`OneRowMethods`)."""

    _compiled: Any
    _buf: SupportBuffer | None

    def _buffer(self, d: int) -> SupportBuffer:
        """The support-vector buffer for d features, made on first use (each learner's)."""
        raise NotImplementedError

    def _learn_predict_sparse(self, X: Any, y: np.ndarray) -> np.ndarray:
        """Predict then learn every CSR row of X (BudgetLearner's, for every learner here)."""
        raise NotImplementedError

    def _fast_ok(self) -> bool:
        """Whether the compiled block loop can run on its own (compiled kernel and loss)."""
        return self._compiled is not None

    def _run(self, X: np.ndarray, y: np.ndarray, pred: np.ndarray, have_row: bool) -> None:
        """Predict then learn every row of X in compiled code, writing the predictions."""
        raise NotImplementedError

    def learn_predict_many(self, X, y):
        if (csr := self._csr_block(X)) is not None:
            return self._learn_predict_sparse(csr, np.asarray(y, dtype=np.float64))
        if not self._fast_ok():
            return super().learn_predict_many(X, y)
        self._buffer(X.shape[1])
        pred = np.empty(len(X))
        if len(X):
            self._run(X, np.ascontiguousarray(y, dtype=np.float64), pred, False)
            self._buf.touch()
        return pred
