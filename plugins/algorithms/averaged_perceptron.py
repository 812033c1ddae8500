"""The averaged kernel perceptron (Freund and Schapire 1999), binary and multiclass, without a budget.

The baseline of the Huller paper (specs/003 §3.7), run for one or several passes. It
learns exactly like the kernel perceptron (``perceptron``) and predicts with the average
of all its iterates, kept in closed form: per stored example the sum α of its updates
and the sum β of its updates weighted by the round before them, so that the average
after T rounds is Σᵢ (αᵢ − βᵢ/T) k(xᵢ, ·).
"""

from __future__ import annotations

import numpy as np

from kbench import hookimpl
from kbench.core.arrays import grown, is_sparse
from kbench.core.components import Algorithm
from kbench.cython_core import _averaged_perceptron as _ap
from kbench.learners.sparse_buffer import SparseSupportBuffer
from kbench.learners.support_buffer import SupportBuffer
from kbench.plugins.algorithms._example_ids import ExampleIds
from kbench.plugins.algorithms._sparse_rows import (
    OneRowMethods,
    buffer_rows,
    compiled_kernel,
    csr_rows,
    growing_buffer,
    learn_into_store,
)


class AveragedPerceptron(OneRowMethods, Algorithm):
    """Averaged kernel perceptron: the mistake-driven perceptron, predicting with the mean of its iterates.

    Binary: on ``y f(x) ≤ 0`` (f the current perceptron) add ``y k(x, ·)``. Multiclass
    (one score per class, as ``perceptron``): on a wrong argmax add k(x, ·) to the true
    class and subtract it from the predicted one. Predictions use the average of the
    perceptrons after rounds 1..T (an update made in round t counts (T − t + 1)/T); rounds
    continue across the passes of the runner's ``epochs``. An example stored in an earlier
    pass (known by its row in the stream, see ``_example_ids``) is updated in place when
    it is a mistake again, not stored twice. No bias, no budget, no hyper-parameters.

    CSR rows are learned with the support vectors in a sparse buffer. They have no
    identity across passes: a row stored in an earlier pass is stored again, which leaves
    the averaged function unchanged (its coefficients are summed over equal rows) but
    counts it twice in ``n_support``.
    """

    name = "averaged_perceptron"
    paper = "Freund and Schapire (1999). Large margin classification using the perceptron algorithm. Machine Learning 37."
    tasks = frozenset({"binary", "multiclass"})
    #: CSR rows are learned with support vectors kept sparse (the same buffer interface).
    sparse_input = True

    def __post_init__(self) -> None:
        self._C = self.n_classes if self.task == "multiclass" else 1
        self._buf: SupportBuffer | SparseSupportBuffer | None = None
        self._sv_ids = np.full(64, -1, dtype=np.int64)
        self._ids = ExampleIds()
        self._id_slot = np.full(0, -1, dtype=np.int64)
        self._rounds = 0
        self._mistakes = 0
        self._scores = np.zeros(2 * self._C)

    def _buffer(self, d: int, sparse: bool = False) -> SupportBuffer | SparseSupportBuffer:
        self._buf = growing_buffer(self.name, self._buf, d, 2 * self._C, sparse)
        return self._buf

    def _rows_learned(self):
        return buffer_rows(self._buf)

    def _grow(self) -> None:
        buf = self._buf
        assert buf is not None
        buf.grow()
        self._sv_ids = grown(self._sv_ids, buf.capacity, fill=-1)

    def _bind_ids(self) -> None:
        if len(self._id_slot) != self._ids.n:
            self._id_slot = np.full(self._ids.n, -1, dtype=np.int64)

    # -- learning -----------------------------------------------------------------------------

    def _run(self, X: np.ndarray, y: np.ndarray, ids: np.ndarray, pred: np.ndarray) -> None:
        buf = self._buffer(X.shape[1])
        compiled = self.kernel.compiled()
        i = 0
        while True:
            i, buf.size, evals, self._rounds, mistakes = _ap.avg_perceptron_block(
                compiled, buf.X, buf.sq, buf.alpha, self._sv_ids, buf.size, X, y, ids,
                self._id_slot, pred, buf.krow, self._scores, i, self._rounds,
            )  # fmt: skip
            buf.kernel_evals += evals
            self._mistakes += mistakes
            buf.touch()
            if i == len(X):
                return
            self._grow()

    def _learn_predict_sparse(self, X, y) -> np.ndarray:
        """Predict then learn the CSR rows with the compiled loop, which stores them in the
        sparse buffer (:func:`learn_into_store`); they have no ids, so a mistake on a row
        always stores it."""
        compiled = compiled_kernel(self.kernel)
        buf = self._buffer(X.shape[1], sparse=True)

        def step(stand_in, y, pred, block, i):
            i, m, evals, self._rounds, mistakes = _ap.avg_perceptron_block(
                compiled, np.zeros((buf.capacity, 1)), buf.sq, buf.alpha, self._sv_ids, buf.size,
                stand_in, y, np.full(len(y), -1, dtype=np.int64), self._id_slot[:0], pred, buf.krow, self._scores,
                i, self._rounds, block,
            )  # fmt: skip
            self._mistakes += mistakes
            return i, m, evals

        pred = learn_into_store(buf, compiled, X, y, step, self._grow)
        buf.touch()
        return pred

    def _learn_predict_marked(self, X, y) -> np.ndarray:
        """Predict then learn each CSR row, as learn_one does a dense one without ids."""
        buf = self._buffer(X.shape[1], sparse=True)
        pred = np.empty(X.shape[0])
        for i, x, xsq in csr_rows(X):
            s = buf.scores(buf.row(self.kernel, x, xsq))
            avg = _ap.averaged_scores(s, self._C, self._rounds)
            pred[i] = self.label_of(avg if self.task == "multiclass" else float(avg[0]))
            self._step(buf, x, s, float(y[i]), -1)
        return pred

    def learn_predict_many(self, X, y):
        if (csr := self._csr_block(X)) is not None:
            return self._learn_predict_sparse(csr, y)
        if self.kernel.compiled() is None:
            return super().learn_predict_many(X, y)
        ids = self._ids.block(X)
        self._bind_ids()
        pred = np.empty(len(X))
        self._run(X, np.ascontiguousarray(y, dtype=np.float64), ids, pred)
        return pred

    def _learn_dense(self, x, y):
        xid = self._ids.one(x)
        self._bind_ids()
        if self.kernel.compiled() is not None:
            self._run(x[None, :], np.array([float(y)]), np.array([xid], dtype=np.int64),
                      np.empty(1))  # fmt: skip
            return
        buf = self._buffer(len(x))
        self._step(buf, x, buf.scores(buf.row(self.kernel, x)), y, xid)

    def _step(self, buf, x, s: np.ndarray, y, xid: int) -> None:
        """One round after the raw scores s = [α | β]ᵀk at x: on a mistake, update the slot
        of example xid (stored first when new)."""
        C = self._C
        self._rounds += 1
        w = float(self._rounds - 1)
        if C == 1:
            mistake, yi, guess = y * s[0] <= 0.0, 0, 0
        else:
            guess, yi = int(np.argmax(s[:C])), int(y)
            mistake = guess != yi
        if not mistake:
            return
        slot = int(self._id_slot[xid]) if 0 <= xid < len(self._id_slot) else -1
        if slot < 0:
            if buf.size == buf.capacity:
                self._grow()
            slot = buf.add(x, 0.0)
            self._sv_ids[slot] = xid
            if 0 <= xid < len(self._id_slot):
                self._id_slot[xid] = slot
        if C == 1:
            buf.alpha[slot, 0] += y
            buf.alpha[slot, 1] += y * w
        else:
            buf.alpha[slot, yi] += 1.0
            buf.alpha[slot, guess] -= 1.0
            buf.alpha[slot, C + yi] += w
            buf.alpha[slot, C + guess] -= w
        buf.touch()
        self._mistakes += 1

    # -- prediction ---------------------------------------------------------------------------

    def _decision_dense(self, x):
        s = self._decision_scores(x)
        avg = _ap.averaged_scores(s, self._C, self._rounds)
        return avg if self.task == "multiclass" else float(avg[0])

    def _decision_scores(self, x: np.ndarray) -> np.ndarray:
        buf = self._buffer(len(x))
        compiled = self.kernel.compiled()
        if compiled is None:
            return buf.scores(buf.row(self.kernel, x))
        k = np.empty(buf.capacity)  # not buf.krow: the buffer's row cache stays valid
        return _ap.raw_scores(compiled, buf.X, buf.sq, buf.alpha, buf.size, x, k,
                              np.empty(2 * self._C))  # fmt: skip

    def decision_function(self, X: np.ndarray, *, average: bool = True) -> np.ndarray:
        """Scores of the averaged hypothesis (or of the current perceptron, ``average=False``)."""
        if not is_sparse(X):
            X = np.ascontiguousarray(X, dtype=np.float64)
        C = self._C
        if self._buf is None:
            out = np.zeros((X.shape[0], C))
        else:
            raw = self._buf.decision_many(self.kernel, X)
            out = raw[:, :C].copy()
            if average:
                out = out - raw[:, C:] / self._rounds if self._rounds else np.zeros_like(out)
        return out if self.task == "multiclass" else out[:, 0]

    def _decisions(self, X):
        return self.decision_function(X)

    def stats(self):
        buf = self._buf
        return {
            "n_support": buf.size if buf else 0,
            "kernel_evals": buf.kernel_evals if buf else 0,
            "rounds": self._rounds,
            "mistakes": self._mistakes,
            "model_bytes": buf.nbytes() if buf else 0,
        }


@hookimpl
def kbench_register_algorithms(register):
    """Register the averaged kernel perceptron."""
    register(AveragedPerceptron)
