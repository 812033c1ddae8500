"""Compiled prequential block loop of KRLS-T, the kernel recursive least-squares tracker
(Van Vaerenbergh, Lázaro-Gredilla and Santamaría 2012): Gaussian-process regression on a
budget of bases, forgetting back to the prior.

The bases and α = Q μ are the learner's kernel expansion (the store); :class:`KrlstState`
holds the rest, typed: Q (the inverse of the bases' kernel matrix), their kernel matrix K,
the posterior mean μ and S = λΣ + (1 − λ)K, the posterior covariance Σ already forgotten
for the next example, each matrix ``cap × cap`` (row-major, symmetric, only the lower
triangle of its leading m × m block kept). A basis removed leaves its slot to the last one,
in the matrices too.

Per example the loop reads Q twice (q = Qk, then Qμ) and S once (h = Σq), and updates
each once, on its lower triangle (BLAS dsymv, dsyr, or a loop over the triangle): Q with its
new basis and, past the budget, without the basis of least error, in one rank-two pass; Σ
with this example's rank-one update and the next example's forgetting, in one pass.
"""
cimport numpy as cnp
from libc.math cimport fabs, sqrt
from libc.stdlib cimport free
from scipy.linalg.cython_blas cimport dsymv, dsyr

import numpy as np

from kbench.cython_core._loop cimport *

cnp.import_array()


cdef class KrlstState:
    """Q, K, S = λΣ + (1 − λ)K (``cap × cap`` float64, the lower triangle of the leading
    m × m block in use) and μ (``cap``) of KRLS-T, grown with the learner's store;
    picklable."""

    cdef public object Q, K, S, mu

    def __init__(self, Q=None, K=None, S=None, mu=None):
        self.Q = np.zeros((0, 0)) if Q is None else Q
        self.K = np.zeros((0, 0)) if K is None else K
        self.S = np.zeros((0, 0)) if S is None else S
        self.mu = np.zeros(0) if mu is None else mu

    def __reduce__(self):
        return KrlstState, (self.Q, self.K, self.S, self.mu)

    def ensure(self, Py_ssize_t cap):
        """Room for ``cap`` bases, those in use kept (one more than the budget is held
        between a basis's arrival and a removal)."""
        if cap > self.Q.shape[0]:
            self.Q = _grown(self.Q, (cap, cap))
            self.K = _grown(self.K, (cap, cap))
            self.S = _grown(self.S, (cap, cap))
            self.mu = _grown(self.mu, (cap,))


cdef inline void _move(double* M, Py_ssize_t ld, Py_ssize_t r, Py_ssize_t last) noexcept nogil:
    """Row and column ``last`` of the symmetric M (its lower triangle) into row and column r."""
    cdef Py_ssize_t a
    for a in range(r):
        M[r * ld + a] = M[last * ld + a]
    for a in range(r + 1, last):
        M[a * ld + r] = M[last * ld + a]
    M[r * ld + r] = M[last * ld + last]


cdef inline void _forget(double* S, const double* K, const double* h, double inv,
                         double lam, Py_ssize_t ld, Py_ssize_t m) noexcept nogil:
    """S ← λ(S + inv·h hᵀ) + (1 − λ)K on the lower triangle: this example's rank-one
    update of Σ and the next example's forgetting, in one pass."""
    cdef Py_ssize_t a, b
    cdef double c, lam1 = 1.0 - lam
    for a in range(m):
        c = inv * h[a]
        for b in range(a + 1):
            S[a * ld + b] = lam * (S[a * ld + b] + c * h[b]) + lam1 * K[a * ld + b]


cdef inline void _rank_two(double* Q, const double* p, double g, const double* c, double d,
                           Py_ssize_t ld, Py_ssize_t m) noexcept nogil:
    """Q ← Q + g·p pᵀ + d·c cᵀ on the lower triangle, in one pass."""
    cdef Py_ssize_t a, b
    cdef double u, v
    for a in range(m):
        u, v = g * p[a], d * c[a]
        for b in range(a + 1):
            Q[a * ld + b] = Q[a * ld + b] + u * p[b] + v * c[b]


cdef Py_ssize_t _least_error(const double* Q, const double* p, double g,
                             const double* alpha, Py_ssize_t ld, Py_ssize_t m) noexcept nogil:
    """The basis whose removal costs the least: the smallest |(Qμ)ⱼ / Qⱼⱼ| (the first), Q
    being Q + g·p pᵀ."""
    cdef Py_ssize_t j, r = 0
    cdef double e, best = fabs(alpha[0] / (Q[0] + g * p[0] * p[0]))
    for j in range(1, m):
        e = fabs(alpha[j] / (Q[j * ld + j] + g * p[j] * p[j]))
        if e < best:
            best, r = e, j
    return r


def krlst_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
                bint have_row=False, double kxx=0.0, *, KrlstState state not None,
                double forgetting, Py_ssize_t budget, double noise, double jitter):
    """Predict then learn rows start, start+1, … (regression). The prediction is the
    posterior mean f(x) = kᵀQμ; then Σ ← λΣ + (1 − λ)K, μ ← √λ μ, x joins the bases
    (Q, μ, Σ grow), and past ``budget`` the basis of least error leaves; an x within
    ``jitter`` of the bases' span only updates μ and Σ. Calling convention and result as
    :func:`kbench.cython_core._perceptron.perceptron_block`.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "krlst needs one coefficient column, got {}")
    if not (0 < forgetting <= 1 and budget >= 1 and noise > 0 and jitter >= 0):
        raise ValueError("kbench: krlst needs 0 < forgetting ≤ 1, budget ≥ 1, noise > 0 and "
                         f"jitter ≥ 0, got {forgetting}, {budget}, {noise}, {jitter}")
    state.ensure(A.cap)
    cdef double[:, ::1] Qv = state.Q
    cdef double[:, ::1] Kv = state.K
    cdef double[:, ::1] Sv = state.S
    cdef double[::1] muv = state.mu
    cdef double* Q = &Qv[0, 0] if A.cap else NULL
    cdef double* K = &Kv[0, 0] if A.cap else NULL
    cdef double* S = &Sv[0, 0] if A.cap else NULL
    cdef double* mu = &muv[0] if A.cap else NULL
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, a, r, ld = A.cap
    cdef long long evals = 0
    cdef double f, xsq, kss, ymean, g2, sf2, sy2, e, inv, counted = 0.0
    cdef double root = sqrt(forgetting)
    cdef double* q = _doubles(3 * (A.cap + 1))
    cdef double* h = q + A.cap + 1
    cdef double* c = h + A.cap + 1
    cdef int mm, ldd = <int>ld, one = 1
    cdef double d1 = 1.0, d0 = 0.0, lam = forgetting
    cdef char up = b'U'  # row-major lower triangle = column-major upper
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, A.krow)
            # No room for a new basis: grow first (nothing has changed yet).
            if _store_full(m, A.cap, have_row and i == 0, &evals, m):
                break
            kss = _self_at(&R, i, xsq, have_row and i == 0, kxx, &counted) + jitter
            f = _dot(A.krow, A.alpha, <int>m) if m > 0 else 0.0
            A.pred[i] = f
            if m == 0:
                Q[0], K[0] = 1.0 / kss, kss
                mu[0] = A.y[i] * kss / (kss + noise)
                S[0] = lam * (kss - kss * kss / (kss + noise)) + (1.0 - lam) * kss
                _store_at(&R, i, 0)
                R.sq[0] = xsq
                m = 1
                A.alpha[0] = Q[0] * mu[0]
                i += 1
                continue
            mm = <int>m
            for a in range(m):  # back to the prior (Σ's half is already in S): μ ← √λ μ
                mu[a] *= root
            dsymv(&up, &mm, &d1, Q, &ldd, A.krow, &one, &d0, q, &one)       # q = Q k
            ymean = _dot(q, mu, mm)
            g2 = kss - _dot(A.krow, q, mm)
            if g2 < 0.0:
                g2 = 0.0
            dsymv(&up, &mm, &d1, S, &ldd, q, &one, &d0, h, &one)            # h = Σ q
            sf2 = g2 + _dot(q, h, mm)
            if sf2 < 0.0:
                sf2 = 0.0
            sy2 = noise + sf2
            e = (A.y[i] - ymean) / sy2
            inv = -1.0 / sy2
            if g2 < jitter:  # x in the bases' span: μ and Σ learn, no basis joins
                for a in range(m):
                    mu[a] += e * h[a]
                _forget(S, K, h, inv, lam, ld, m)                             # Σ − h hᵀ/σ²ᵧ
                dsymv(&up, &mm, &d1, Q, &ldd, mu, &one, &d0, A.alpha, &one)  # α = Q μ
                i += 1
                continue
            q[m], h[m] = -1.0, sf2  # p = (q, −1) for Q; (h, σ²_f) for Σ
            for a in range(m):  # the new row of K, Σ (their lower triangles); Q's is zero
                K[m * ld + a], S[m * ld + a], Q[m * ld + a] = A.krow[a], h[a], 0.0
            K[m * ld + m], S[m * ld + m], Q[m * ld + m] = kss, sf2, 0.0
            mu[m] = ymean
            for a in range(m + 1):
                mu[a] += e * h[a]
            mm = <int>(m + 1)
            _forget(S, K, h, inv, lam, ld, m + 1)                             # Σ − p pᵀ/σ²ᵧ
            _store_at(&R, i, m)
            R.sq[m] = xsq
            m += 1
            g2 = 1.0 / g2
            dsymv(&up, &mm, &d1, Q, &ldd, mu, &one, &d0, A.alpha, &one)
            f = g2 * _dot(q, mu, mm)
            for a in range(m):  # α = (Q + p pᵀ/γ²) μ, before Q is updated
                A.alpha[a] += f * q[a]
            if m <= budget:
                dsyr(&up, &mm, &g2, q, &one, Q, &ldd)                        # Q + p pᵀ/γ²
                i += 1
                continue
            r = _least_error(Q, q, g2, A.alpha, ld, m)
            for a in range(m):  # column r of Q + p pᵀ/γ², Q from its lower triangle
                c[a] = (Q[r * ld + a] if a <= r else Q[a * ld + r]) + g2 * q[a] * q[r]
            _rank_two(Q, q, g2, c, -1.0 / c[r], ld, m)                      # and without r
            # α without r, in O(m): (Qμ)ⱼ − Qⱼᵣ μᵣ − Qⱼᵣ Σ_{k≠r} Qₖᵣ μₖ / Qᵣᵣ
            e = (_dot(c, mu, mm) - c[r] * mu[r]) / c[r] + mu[r]
            for a in range(m):
                A.alpha[a] -= c[a] * e
            m -= 1
            if r != m:
                _move(Q, ld, r, m)
                _move(K, ld, r, m)
                _move(S, ld, r, m)
                mu[r], A.alpha[r] = mu[m], A.alpha[m]
                R.sq[r] = R.sq[m]  # first: a CSR store's move clears slot m's
                _move_at(&R, r, m)
            i += 1
    free(q)
    return i, m, evals + <long long>counted
