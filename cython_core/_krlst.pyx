"""Compiled prequential block loop of KRLS-T, the kernel recursive least-squares tracker
(Van Vaerenbergh, Lázaro-Gredilla and Santamaría 2012): Gaussian-process regression on a
budget of bases, forgetting back to the prior.

The bases and α = Q μ are the learner's kernel expansion (the store); :class:`KrlstState`
holds the rest, typed: Q (the inverse of the bases' kernel matrix), their kernel matrix K,
the posterior covariance Σ and mean μ, each matrix ``cap × cap`` (row-major, its leading
m × m block in use). A basis removed leaves its slot to the last one, in the matrices too.
"""
cimport numpy as cnp
from libc.math cimport fabs, sqrt
from libc.stdlib cimport free, malloc
from scipy.linalg.cython_blas cimport dgemv, dger

import numpy as np

from kbench.cython_core._expansion cimport ExpansionArrays, _expansion_arrays, _grown
from kbench.cython_core._kernels cimport _dot
from kbench.cython_core._sparse cimport (
    BlockRows, LoopRows, _loop_rows, _move_at, _row_at, _self_at, _store_at,
)

cnp.import_array()


cdef class KrlstState:
    """Q, K, Σ (``cap × cap`` float64) and μ (``cap``) of KRLS-T, the leading m × m block in
    use, grown with the learner's store; picklable."""

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


cdef inline void _move(double* M, Py_ssize_t ld, Py_ssize_t m, Py_ssize_t r,
                       Py_ssize_t last) noexcept nogil:
    """Row and column ``last`` of the symmetric M into row and column r (m rows in use)."""
    cdef Py_ssize_t a
    for a in range(m):
        M[r * ld + a] = M[last * ld + a]
    for a in range(m):
        M[a * ld + r] = M[a * ld + last]
    M[r * ld + r] = M[last * ld + last]


cdef Py_ssize_t _least_error(const double* Q, const double* alpha, Py_ssize_t ld,
                             Py_ssize_t m) noexcept nogil:
    """The basis whose removal costs the least: the smallest |(Qμ)ⱼ / Qⱼⱼ| (the first)."""
    cdef Py_ssize_t j, r = 0
    cdef double e, best = fabs(alpha[0] / Q[0])
    for j in range(1, m):
        e = fabs(alpha[j] / Q[j * ld + j])
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
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A)
    if A.C != 1:
        raise ValueError(f"kbench: krlst needs one coefficient column, got {A.C}")
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
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, a, b, r, ld = A.cap
    cdef long long evals = 0
    cdef double f, xsq, kss, ymean, g2, sf2, sy2, e, inv, counted = 0.0
    cdef double root = sqrt(forgetting)
    cdef double* q = <double*>malloc(2 * (A.cap + 1) * sizeof(double))
    if q == NULL:
        raise MemoryError()
    cdef double* h = q + A.cap + 1
    cdef int mm, ldd = <int>ld, one = 1
    cdef double d1 = 1.0, d0 = 0.0
    cdef char tr = b'T'
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, A.krow)
            if m == A.cap:  # no room for a new basis: grow first (nothing has changed yet)
                if not (have_row and i == 0):
                    evals -= m  # this example is redone after the store grows
                break
            kss = _self_at(&R, i, xsq, have_row and i == 0, kxx, &counted) + jitter
            f = _dot(A.krow, A.alpha, <int>m) if m > 0 else 0.0
            A.pred[i] = f
            if m == 0:
                Q[0], K[0] = 1.0 / kss, kss
                mu[0] = A.y[i] * kss / (kss + noise)
                S[0] = kss - kss * kss / (kss + noise)
                _store_at(&R, i, 0)
                R.sq[0] = xsq
                m = 1
                A.alpha[0] = Q[0] * mu[0]
                i += 1
                continue
            mm = <int>m
            for a in range(m):  # back to the prior: Σ ← λΣ + (1 − λ)K, μ ← √λ μ
                for b in range(m):
                    S[a * ld + b] = forgetting * S[a * ld + b] + (1.0 - forgetting) * K[a * ld + b]
                mu[a] *= root
            dgemv(&tr, &mm, &mm, &d1, Q, &ldd, A.krow, &one, &d0, q, &one)   # q = Q k
            ymean = _dot(q, mu, mm)
            g2 = kss - _dot(A.krow, q, mm)
            if g2 < 0.0:
                g2 = 0.0
            dgemv(&tr, &mm, &mm, &d1, S, &ldd, q, &one, &d0, h, &one)        # h = Σ q
            sf2 = g2 + _dot(q, h, mm)
            if sf2 < 0.0:
                sf2 = 0.0
            sy2 = noise + sf2
            e = (A.y[i] - ymean) / sy2
            inv = -1.0 / sy2
            if g2 < jitter:  # x in the bases' span: μ and Σ learn, no basis joins
                for a in range(m):
                    mu[a] += e * h[a]
                dger(&mm, &mm, &inv, h, &one, h, &one, S, &ldd)              # Σ − h hᵀ/σ²ᵧ
            else:
                q[m], h[m] = -1.0, sf2
                for a in range(m):  # the new row and column of K, Σ; Q's are zero before
                    K[a * ld + m] = K[m * ld + a] = A.krow[a]
                    S[a * ld + m] = S[m * ld + a] = h[a]
                    Q[a * ld + m] = Q[m * ld + a] = 0.0
                K[m * ld + m], S[m * ld + m], Q[m * ld + m] = kss, sf2, 0.0
                mu[m] = ymean
                mm = <int>(m + 1)
                g2 = 1.0 / g2
                dger(&mm, &mm, &g2, q, &one, q, &one, Q, &ldd)               # Q + p pᵀ/γ²
                for a in range(m + 1):
                    mu[a] += e * h[a]
                dger(&mm, &mm, &inv, h, &one, h, &one, S, &ldd)              # Σ − p pᵀ/σ²ᵧ
                _store_at(&R, i, m)
                R.sq[m] = xsq
                m += 1
                if m > budget:
                    dgemv(&tr, &mm, &mm, &d1, Q, &ldd, mu, &one, &d0, A.alpha, &one)  # Qμ
                    r = _least_error(Q, A.alpha, ld, m)
                    for a in range(m):
                        q[a] = Q[a * ld + r]
                    inv = -1.0 / q[r]
                    dger(&mm, &mm, &inv, q, &one, q, &one, Q, &ldd)          # Q without r
                    # α without r, in O(m): (Qμ)ⱼ − Qⱼᵣ μᵣ − Qⱼᵣ Σ_{k≠r} Qₖᵣ μₖ / Qᵣᵣ
                    e = (_dot(q, mu, mm) - q[r] * mu[r]) / q[r] + mu[r]
                    for a in range(m):
                        A.alpha[a] -= q[a] * e
                    m -= 1
                    if r != m:
                        _move(Q, ld, m, r, m)
                        _move(K, ld, m, r, m)
                        _move(S, ld, m, r, m)
                        mu[r], A.alpha[r] = mu[m], A.alpha[m]
                        R.sq[r] = R.sq[m]  # first: a CSR store's move clears slot m's
                        _move_at(&R, r, m)
                    i += 1
                    continue
            mm = <int>m
            dgemv(&tr, &mm, &mm, &d1, Q, &ldd, mu, &one, &d0, A.alpha, &one)  # α = Q μ
            i += 1
    free(q)
    return i, m, evals + <long long>counted
