"""Compiled block loop of the averaged kernel perceptron (Freund and Schapire 1999), binary and multiclass.

Coefficients: ``coef`` has 2C columns (C = 1 for binary, the number of classes for
multiclass). Columns 0..C-1 hold α, the current perceptron's coefficients (Σ of the
updates); columns C..2C-1 hold β, the same updates each weighted by (t − 1), t the round
(1-based, counted across passes) in which it was made. After T rounds the average of the
iterates w₁..w_T (wₜ the perceptron after round t) is Σᵢ (αᵢ − βᵢ/T) k(xᵢ, ·): an update
of round t is in T − t + 1 of them. One kernel row per example gives both the current
scores (the mistake test) and the averaged ones (the prediction).
"""
from libc.math cimport NAN, isfinite

from kbench.cython_core._kernels cimport as_spec
from kbench.cython_core._kernels cimport _dot, _expansion, _kernel_row
from kbench.cython_core._sparse cimport LoopRows, _row_at, _rows_of, _store_at
from kbench.cython_core._labels cimport _argmax, _sign_label


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


def averaged_scores(const double[::1] s, Py_ssize_t C, long long T):
    """The averaged decision values from the 2C raw scores (for decision_one)."""
    import numpy as np

    out = np.zeros(C)
    cdef Py_ssize_t c
    if T > 0:
        for c in range(C):
            out[c] = s[c] - s[C + c] / T
    return out


def avg_perceptron_block(kernel,
                         double[:, ::1] SV, double[::1] sq, double[:, ::1] coef,
                         long long[::1] sv_ids, Py_ssize_t m, const double[:, ::1] X,
                         const double[::1] y, const long long[::1] xids, long long[::1] id_slot,
                         double[::1] pred, double[::1] krow, double[::1] scores,
                         Py_ssize_t start, long long T, sparse=None):
    """Predict (averaged) then learn (current) rows start.. of X; (i, m, evals, T, mistakes).

    A mistake on a training example that is already stored (its id maps to a slot)
    updates that slot; otherwise the example takes slot m. i < len(X) means the buffer
    is full: grow it and resume from i. ``sparse``: CSR rows, as for
    :func:`kbench.cython_core._perceptron.perceptron_block` (the rows of X and SV then
    hold stand-ins, which are not read).
    """
    cdef LoopRows R = _rows_of(kernel, SV, sq, X, sparse)
    cdef Py_ssize_t n = X.shape[0], cap = SV.shape[0]
    cdef Py_ssize_t C2 = coef.shape[1], C = C2 // 2, i = start, c, guess, yi, slot
    cdef Py_ssize_t n_ids = id_slot.shape[0]
    cdef long long evals = 0, xid, mistakes = 0
    cdef double xsq, w
    cdef bint mistake
    with nogil:
        while i < n:
            if m == cap:
                break
            evals += _row_at(&R, i, m, False, &xsq, &krow[0])
            _expansion(&krow[0], &coef[0, 0], m, C2, 1.0, &scores[0])
            pred[i] = _predict(&scores[0], C, T)
            T += 1
            w = <double>(T - 1)
            if C == 1:
                mistake = y[i] * scores[0] <= 0.0
                guess = 0
                yi = 0
            else:
                guess = _argmax(&scores[0], C)
                yi = <Py_ssize_t>y[i]
                mistake = guess != yi
            if mistake:
                mistakes += 1
                xid = xids[i]
                slot = id_slot[xid] if 0 <= xid < n_ids else -1
                if slot < 0:
                    slot = m
                    _store_at(&R, i, m)
                    sq[m] = xsq
                    for c in range(C2):
                        coef[m, c] = 0.0
                    sv_ids[m] = xid
                    if 0 <= xid < n_ids:
                        id_slot[xid] = m
                    m += 1
                if C == 1:
                    coef[slot, 0] += y[i]
                    coef[slot, 1] += y[i] * w
                else:
                    coef[slot, yi] += 1.0
                    coef[slot, guess] -= 1.0
                    coef[slot, C + yi] += w
                    coef[slot, C + guess] -= w
            i += 1
    return i, m, evals, T, mistakes


def raw_scores(kernel,
               const double[:, ::1] SV, const double[::1] sq, const double[:, ::1] coef,
               Py_ssize_t m, const double[::1] x, double[::1] krow, double[::1] scores):
    """The 2C sums Σᵢ k(xᵢ, x)·coef[i, c] of x, computed as in the block loop (in scores)."""
    cdef int kind
    cdef double gamma, scale, offset, degree
    kind, gamma, scale, offset, degree = as_spec(kernel).params()  # unpacked once, outside the nogil loop
    cdef Py_ssize_t d = x.shape[0]
    cdef double xsq
    with nogil:
        xsq = _dot(&x[0], &x[0], <int>d) if d > 0 else 0.0
        _kernel_row(kind, gamma, scale, offset, degree, &SV[0, 0], m, d, &sq[0], &x[0], xsq,
                    &krow[0])
        _expansion(&krow[0], &coef[0, 0], m, coef.shape[1], 1.0, &scores[0])
    return scores
