"""Compiled prequential block loop of the averaged kernel perceptron (Freund and Schapire
1999), binary and multiclass, over the learner toolkit's kernel expansion.

The store has 2C coefficient columns (C = 1 for binary, the number of classes for
multiclass). Columns 0..C-1 hold α, the current perceptron's coefficients (Σ of the
updates); columns C..2C-1 hold β, the same updates each weighted by (t − 1), t the round
(1-based, counted across passes) in which it was made. After T rounds the average of the
iterates w₁..w_T (wₜ the perceptron after round t) is Σᵢ (αᵢ − βᵢ/T) k(xᵢ, ·): an update
of round t is in T − t + 1 of them. One kernel row per example gives both the current
scores (the mistake test) and the averaged ones (the prediction).
"""
cimport numpy as cnp
from libc.math cimport NAN, isfinite
from libc.stdlib cimport free

from kbench.cython_core._loop cimport *
from kbench.cython_core._labels cimport _argmax, _sign_label

cnp.import_array()


cdef class AveragedPerceptronState:
    """The rounds T (counted across passes), the mistakes, and ``id_slot``: the slot of each
    training example's id (-1 while it is not stored), so that a mistake on an example
    stored in an earlier pass updates its slot; picklable."""

    cdef public long long rounds, mistakes
    cdef public cnp.ndarray id_slot

    def __init__(self, long long rounds=0, long long mistakes=0, id_slot=None):
        import numpy as np

        self.rounds, self.mistakes = rounds, mistakes
        self.id_slot = np.full(0, -1, dtype=np.int64) if id_slot is None else id_slot

    def know(self, Py_ssize_t n):
        """Make room for the ids 0..n-1 (their slots -1 until stored)."""
        import numpy as np

        if self.id_slot.shape[0] < n:
            grown = np.full(n, -1, dtype=np.int64)
            grown[: self.id_slot.shape[0]] = self.id_slot
            self.id_slot = grown

    def __reduce__(self):
        return AveragedPerceptronState, (self.rounds, self.mistakes, self.id_slot)

    def outputs(self, const double[:, ::1] raw not None, double[:, ::1] out not None):
        """The averaged scores (n × C) into ``out`` from the raw ones ``[α·k | β·k]``
        (n × 2C): α − β/T, zeros before any round; one call for one row or a block."""
        cdef Py_ssize_t n = raw.shape[0], C = out.shape[1], i, c
        cdef long long T = self.rounds
        if raw.shape[1] != 2 * C or out.shape[0] != n:
            raise ValueError(f"kbench: {n} × {raw.shape[1]} raw scores for {out.shape[0]} × "
                             f"{C} averaged ones (2 raw values a score)")
        with nogil:
            for i in range(n):
                for c in range(C):
                    out[i, c] = raw[i, c] - raw[i, C + c] / T if T else 0.0


cdef inline double _predict(const double* s, Py_ssize_t C, long long T) noexcept nogil:
    """Label of the averaged hypothesis (α − β/T); +1 (binary) or class 0 before any round."""
    cdef Py_ssize_t c, best = 0
    cdef double v, bestv
    if C == 1:
        if T == 0:
            return 1.0
        return _sign_label(s[0] - s[1] / T)
    if T == 0:
        return 0.0
    bestv = s[0] - s[C] / T
    if not isfinite(bestv):
        return NAN
    for c in range(1, C):
        v = s[c] - s[C + c] / T
        if not isfinite(v):
            return NAN
        if v > bestv:
            best = c
            bestv = v
    return <double>best


def averaged_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
                   bint have_row=False, double kxx=0.0, *,
                   AveragedPerceptronState state not None, const long long[::1] ids):
    """Predict (averaged) then learn (current) rows start, start+1, … of ``rows``.

    Binary: on ``y f(x) ≤ 0`` (f the current perceptron) add ``y k(x, ·)``; multiclass: on
    a wrong argmax add k(x, ·) to the true class and subtract it from the predicted one.
    ``ids`` gives each row's example id (-1: none): a mistake on an example already stored
    (``state.id_slot``) updates its slot; otherwise the example takes the next one. Calling
    convention and result as :func:`kbench.cython_core._perceptron.perceptron_block`.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A)
    if A.C % 2:
        raise ValueError(f"kbench: the averaged perceptron's store needs 2C columns, got {A.C}")
    if ids.shape[0] != rows.n:
        raise ValueError(f"kbench: ids holds {ids.shape[0]} entries for {rows.n} rows")
    cdef long long[::1] id_slot = state.id_slot
    cdef double* coef = A.alpha
    cdef double* krow = A.krow
    cdef const double* Y = A.y
    cdef double* P = A.pred
    cdef Py_ssize_t m = A.m, n = rows.n, cap = A.cap, C2 = A.C, C = A.C // 2
    cdef Py_ssize_t n_ids = id_slot.shape[0], i = start, c, guess, yi, slot
    cdef long long evals = 0, T = state.rounds, mistakes = 0, xid
    cdef double xsq, w
    cdef bint mistake, first
    cdef double* scores = _doubles(C2)
    with nogil:
        while i < n:
            first = have_row and i == 0
            evals += _row_at(&R, i, m, first, &xsq, krow)
            _expansion(krow, coef, m, C2, 1.0, scores)
            if C == 1:
                mistake = Y[i] * scores[0] <= 0.0
                guess = 0
                yi = 0
            else:
                guess = _argmax(scores, C)
                yi = <Py_ssize_t>Y[i]
                mistake = guess != yi
            slot = -1
            if mistake:
                xid = ids[i]
                slot = id_slot[xid] if 0 <= xid < n_ids else -1
                if slot < 0 and _store_full(m, cap, first, &evals, m):
                    break
            P[i] = _predict(scores, C, T)
            T += 1
            w = <double>(T - 1)
            if mistake:
                mistakes += 1
                if slot < 0:
                    slot = m
                    _store_at(&R, i, m)
                    R.sq[m] = xsq
                    for c in range(C2):
                        coef[m * C2 + c] = 0.0
                    if 0 <= xid < n_ids:
                        id_slot[xid] = m
                    m += 1
                if C == 1:
                    coef[slot * C2] += Y[i]
                    coef[slot * C2 + 1] += Y[i] * w
                else:
                    coef[slot * C2 + yi] += 1.0
                    coef[slot * C2 + guess] -= 1.0
                    coef[slot * C2 + C + yi] += w
                    coef[slot * C2 + C + guess] -= w
            i += 1
    free(scores)
    state.rounds = T
    state.mistakes += mistakes
    return i, m, evals
