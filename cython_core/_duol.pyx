"""Compiled prequential block loop of DUOL, double updating online learning (Zhao, Hoi and
Jin 2011, JMLR 12, Algorithm 1), binary.

``f(x) = Σ_i α_i k(x_i, x)`` with α_i = y_i γ_i, 0 ≤ γ_i ≤ C. On a margin error (hinge loss
ℓ_t = 1 − y_t f(x_t) > 0) x_t is stored; among the support vectors whose margin
f^i = y_i f(x_i) is at most 1, b is the one most in conflict with it, w = y_t y_b k(x_t, x_b)
smallest. When w ≤ −ρ both weights move by the closed form of the two-variable problem (the
paper's four cases), else x_t alone enters with the PA-I step min(C, ℓ_t / k(x_t, x_t)).
The margins f^i are kept up to date, which needs k(x_i, x_b) for every i: the loop keeps
the Gram matrix of the support vectors (:class:`DuolState`), each row of it the kernel row
the example's prediction already computed, so that no kernel value is computed twice.
"""
cimport numpy as cnp

import numpy as np

from kbench.cython_core._loop cimport *
from kbench.cython_core._labels cimport _sign_label

cnp.import_array()

#: A margin counts as at most 1 up to this rounding: the PA-I step leaves the new example's
#: margin at exactly 1 in exact arithmetic, which the paper's f^i ≤ 1 includes; in floating
#: point it lands on either side of 1, and the candidate b would depend on the rounding.
cdef double MARGIN_SLACK = 1e-9


cdef class DuolState:
    """The Gram matrix of the support vectors (``K``, ``cap × cap``, the leading m × m block in
    use), their labels y_i (``labels``) and margins f^i = y_i f(x_i) (``margins``); picklable."""

    cdef public object K
    cdef public object labels
    cdef public object margins

    def __init__(self, K=None, labels=None, margins=None):
        self.K = np.zeros((0, 0)) if K is None else K
        self.labels = np.zeros(0) if labels is None else labels
        self.margins = np.zeros(0) if margins is None else margins

    def __reduce__(self):
        return DuolState, (self.K, self.labels, self.margins)

    def ensure(self, Py_ssize_t cap):
        """Room for ``cap`` support vectors, those stored kept."""
        if cap > self.K.shape[0]:
            self.K = _grown(self.K, (cap, cap))
            self.labels = _grown(self.labels, (cap,))
            self.margins = _grown(self.margins, (cap,))


cdef inline bint _within(double v, double lo, double hi) noexcept nogil:
    return lo <= v <= hi


cdef void _double_step(double lt, double lb, double kt, double kb, double w, double C,
                       double gb, double* gt, double* db) noexcept nogil:
    """The paper's closed form (its Proposition on the double update): the new example's weight
    gt and the increment db of b's weight gb, maximising
    γ ℓ_t + d ℓ_b − ½ k_t γ² − ½ k_b d² − w γ d over γ ∈ [0, C], d ∈ [0, C − gb]. Its four
    cases: both at the box, γ at C, d at C − gb, or the stationary point (w < 0 makes the
    lower bounds inactive)."""
    cdef double room = C - gb, d, g
    if kt * C + w * room - lt < 0.0 and kb * room + w * C - lb < 0.0:
        gt[0], db[0] = C, room
        return
    d = (lb - w * C) / kb
    if (w * w * C - w * lb - kt * kb * C + kb * lt) / kb > 0.0 and _within(d, -gb, room):
        gt[0], db[0] = C, d
        return
    g = (lt - w * room) / kt
    if _within(g, 0.0, C) and lb - kb * room - w * g > 0.0:
        gt[0], db[0] = g, room
        return
    d = kt * kb - w * w
    gt[0] = (kb * lt - w * lb) / d
    db[0] = (kt * lb - w * lt) / d


def duol_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
               bint have_row=False, double kxx=0.0, *, DuolState state not None, double C,
               double rho):
    """Predict then learn rows start, start+1, … of ``rows`` (labels ±1). Calling convention
    and result as :func:`kbench.cython_core._perceptron.perceptron_block`; ``C`` > 0 bounds
    each weight γ_i, ``rho`` ≥ 0 is the conflict threshold of the double update."""
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "DUOL is binary (got {} columns)")
    if not (C > 0 and rho >= 0):
        raise ValueError(f"kbench: DUOL needs C > 0 and rho >= 0, got C={C}, rho={rho}")
    state.ensure(A.cap)
    cdef double[:, ::1] K = state.K
    cdef double[::1] ys = state.labels
    cdef double[::1] fm = state.margins
    cdef double* alpha = A.alpha
    cdef double* krow = A.krow
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, j, b
    cdef long long evals = 0
    cdef double f, xsq, kt, yt, lt, wmin, wj, gt, db, counted = 0.0
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, krow)
            f = _dot(krow, alpha, <int>m) if m > 0 else 0.0
            A.pred[i] = _sign_label(f)
            yt = A.y[i]
            lt = 1.0 - yt * f
            if lt > 0.0:
                if _store_full(m, A.cap, have_row and i == 0, &evals, m):
                    break
                kt = _self_at(&R, i, xsq, have_row and i == 0, kxx, &counted)
                if kt <= 0.0:  # k(x, ·) = 0 gives no direction to move in (as PA)
                    i += 1
                    continue
                b = -1
                wmin = 0.0
                for j in range(m):  # the paper's line 8: the most conflicting SV, last on ties
                    if fm[j] <= 1.0 + MARGIN_SLACK:
                        wj = ys[j] * yt * krow[j]
                        if b < 0 or wj <= wmin:
                            wmin, b = wj, j
                for j in range(m):  # the new row of the Gram matrix: the kernel row just used
                    K[m, j] = krow[j]
                    K[j, m] = krow[j]
                K[m, m] = kt
                _store_at(&R, i, m)
                R.sq[m] = xsq
                ys[m] = yt
                fm[m] = yt * f
                db = 0.0
                if b >= 0 and wmin <= -rho:
                    _double_step(lt, 1.0 - fm[b], kt, K[b, b], wmin, C, ys[b] * alpha[b],
                                 &gt, &db)
                else:
                    gt = lt / kt if lt / kt < C else C
                alpha[m] = yt * gt
                m += 1
                for j in range(m):  # f^j += y_j (γ_t y_t k_jt + d y_b k_jb)
                    fm[j] += ys[j] * gt * yt * K[j, m - 1]
                    if db != 0.0:
                        fm[j] += ys[j] * db * ys[b] * K[j, b]
                if db != 0.0:
                    alpha[b] += ys[b] * db
            i += 1
    return i, m, evals + <long long>counted
