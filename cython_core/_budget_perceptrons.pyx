"""Compiled prequential block loops of the budget perceptrons: RBP, Forgetron, Projectron(++).

Every loop predicts then learns examples in turn, computing one kernel row per example
(``_scores_at``) and reusing it for the prediction and the update. The loops follow the
learner toolkit's calling convention
(:func:`kbench.cython_core._perceptron.perceptron_block`: dense, CSR and one-row input
through ``kbench.learners.Expansion``).
"""
cimport numpy as cnp
from libc.math cimport fabs, sqrt
from libc.stdint cimport uint64_t
from libc.stdlib cimport free
from scipy.linalg.cython_blas cimport daxpy

import numpy as np

from kbench.cython_core._loop cimport *
from kbench.cython_core._labels cimport _argmax, _class_label, _rival, _sign_label

cnp.import_array()
from kbench.cython_core._budget_ops cimport (
    _fold_scale, _kinv_append, _kinv_solve, _rng_below, _rng_uniform,
)


def rng_draws(unsigned long long state, Py_ssize_t n):
    """The next n uniform doubles of the generator started at ``state`` (for tests)."""
    cdef uint64_t s = state
    out = []
    for _ in range(n):
        out.append(_rng_uniform(&s))
    return out


# -- random budget perceptron ---------------------------------------------------------------

def rbp_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
              bint have_row=False, double kxx=0.0, *, rng, Py_ssize_t budget):
    """Random budget perceptron on rows start, start+1, … of ``rows``.

    Binary: on y·f(x) ≤ 0 store x with α = y. Multiclass (C columns): on a mistake store x
    with +1 for the true class and −1 for the predicted one. When ``budget`` rows are
    stored the new one overwrites a slot drawn uniformly from the SplitMix64 generator
    whose one-word state ``rng`` (uint64) is updated in place. Calling convention and
    result as :func:`kbench.cython_core._perceptron.perceptron_block`.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A)
    if budget < 1:
        raise ValueError(f"kbench: a budget must be at least 1, got {budget}")
    cdef uint64_t[::1] g = rng
    if g.shape[0] != 1:
        raise ValueError("kbench: rbp's generator state is one uint64")
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, C = A.C, c, guess, yi, slot
    cdef long long evals = 0
    cdef double f, xsq
    cdef bint mistake
    cdef double* scores = _doubles(C)
    with nogil:
        while i < n:
            evals += _scores_at(&R, i, m, have_row and i == 0, &xsq, A.krow, A.alpha, C, 1.0,
                                scores)
            if C == 1:
                f = scores[0]
                A.pred[i] = _sign_label(f)
                mistake = A.y[i] * f <= 0.0
                guess = 0
            else:
                guess = _argmax(scores, C)
                A.pred[i] = _class_label(<double>guess, scores, C)
                mistake = guess != <Py_ssize_t>A.y[i]
            if not mistake:
                i += 1
                continue
            if m < budget:
                if _store_full(m, A.cap, have_row and i == 0, &evals, m):
                    break
                slot = m
                m += 1
            else:
                slot = _rng_below(&g[0], budget)
            _store_at(&R, i, slot)
            R.sq[slot] = xsq
            if C == 1:
                A.alpha[slot] = A.y[i]
            else:
                yi = <Py_ssize_t>A.y[i]
                for c in range(C):
                    A.alpha[slot * C + c] = 0.0
                A.alpha[slot * C + yi] = 1.0
                A.alpha[slot * C + guess] = -1.0
            i += 1
    free(scores)
    return i, m, evals


# -- Forgetron (self-tuned) -----------------------------------------------------------------

cdef inline double _forgetron_psi(double sigma, double phi, double mu) noexcept nogil:
    """Ψ(σφ, φμ) = (σφ)² + 2σφ(1 − φμ): the damage of removing a term of weight σ after shrinking by φ.

    μ = y_r f'(x_r) is the margin of the oldest vector under the unshrunk function f'; after
    shrinking, its margin under f'' = φ f' is φμ, which is the μ of the paper's Ψ(λ, μ).
    """
    return sigma * phi * sigma * phi + 2.0 * sigma * phi * (1.0 - phi * mu)


cdef inline double _forgetron_phi(double sigma, double mu, double room) noexcept nogil:
    """The largest φ in (0, 1] with Ψ(σφ, φμ) = (σ² − 2σμ)φ² + 2σφ ≤ room.

    room = (15/32)·M − Q is positive on every mistake (Q stays below (15/32)·M by
    construction and M has just grown by one). Ψ(0) = 0 < room, so when Ψ(1) > room the
    answer is the smallest positive root of aφ² + bφ − room with a = σ² − 2σμ, b = 2σ:
    for a > 0 the only positive root; for a < 0 (Ψ concave) the first crossing, the second
    lying beyond 1. Both cases are 2·room / (b + √(b² + 4a·room)), a form that does not
    cancel; b² + 4a·room ≥ 0 whenever Ψ(1) > room.
    """
    cdef double a = sigma * sigma - 2.0 * sigma * mu, b = 2.0 * sigma, disc, phi
    if a + b <= room:
        return 1.0
    disc = b * b + 4.0 * a * room
    if disc < 0.0:  # rounding only (see above)
        disc = 0.0
    if b + sqrt(disc) <= 0.0:
        return 0.0
    phi = 2.0 * room / (b + sqrt(disc))
    if phi > 1.0:
        phi = 1.0
    if phi < 0.0:
        phi = 0.0
    return phi


cdef class ForgetronState:
    """The Forgetron's state beside its expansion: the oldest slot (``head``), the scale cs of
    the stored coefficients (the true ones are cs·αⱼ), the removal damage Q and the number
    of mistakes M; ``krow2``, the kernel row of the oldest vector, which Python fills (and
    sets ``have_row2``) for a kernel the loop cannot compute. Picklable."""

    cdef public object krow2
    cdef public Py_ssize_t head
    cdef public double cs, Q, M
    cdef public bint have_row2

    def __init__(self, krow2=None, Py_ssize_t head=0, double cs=1.0, double Q=0.0,
                 double M=0.0):
        self.krow2 = np.zeros(0) if krow2 is None else krow2
        self.head, self.cs, self.Q, self.M = head, cs, Q, M
        self.have_row2 = False

    def __reduce__(self):
        return ForgetronState, (self.krow2, self.head, self.cs, self.Q, self.M)

    def ensure(self, Py_ssize_t cap):
        """Room for the kernel row of ``cap`` support vectors."""
        if cap > self.krow2.shape[0]:
            self.krow2 = _grown(self.krow2, (cap,))


def forgetron_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
                    bint have_row=False, double kxx=0.0, *, ForgetronState state not None,
                    Py_ssize_t budget):
    """Self-tuned Forgetron on rows start, start+1, … of ``rows`` (binary), at most ``budget``
    support vectors: once they are stored, each mistake shrinks the expansion by φ and
    replaces the oldest (``state.head``). Calling convention and result as
    :func:`kbench.cython_core._perceptron.perceptron_block`.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "the Forgetron is binary (got {} columns)")
    if budget < 1:
        raise ValueError(f"kbench: a budget must be at least 1, got {budget}")
    state.ensure(A.cap)
    cdef double[::1] k2 = state.krow2
    cdef double* a = A.alpha
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, head = state.head, j, r
    cdef double cs = state.cs, Q = state.Q, M = state.M
    cdef bint given2 = state.have_row2
    cdef long long evals = 0
    cdef double f, xsq, fr, yr, mu, sigma, phi
    with nogil:
        while i < n:
            evals += _scores_at(&R, i, m, have_row and i == 0, &xsq, A.krow, a, 1, cs, &f)
            A.pred[i] = _sign_label(f)
            if A.y[i] * f > 0.0:
                i += 1
                continue
            if m < budget:
                if _store_full(m, A.cap, have_row and i == 0, &evals, m):
                    break
                M += 1.0
                _store_at(&R, i, m)
                R.sq[m] = xsq
                a[m] = A.y[i] / cs
                m += 1
                i += 1
                continue
            M += 1.0
            # Full: the perceptron step makes B+1 terms; shrink by φ, then drop the oldest.
            r = head
            if not (given2 and i == 0):
                evals += _stored_row_at(&R, r, m, &k2[0])
            _expansion(&k2[0], a, m, 1, cs, &fr)
            fr = fr + A.y[i] * A.krow[r]  # f'(x_r) with f' = f + y_t k(x_t, ·)
            yr = 1.0 if a[r] > 0.0 else -1.0  # shrinking keeps the sign of the label
            mu = yr * fr
            sigma = fabs(cs * a[r])
            phi = _forgetron_phi(sigma, mu, 15.0 / 32.0 * M - Q)
            Q += _forgetron_psi(sigma, phi, mu)
            _store_at(&R, i, r)
            R.sq[r] = xsq
            a[r] = A.y[i] / cs  # true coefficient φ·y once cs is multiplied by φ below
            head = (head + 1) % budget
            if phi <= 0.0:
                # Nothing of the old function survives: keep only the new term.
                for j in range(m):
                    a[j] = 0.0
                a[r] = A.y[i]
                cs = 1.0
            else:
                cs *= phi
                if cs < 1e-200:
                    cs = _fold_scale(a, m, cs)
            i += 1
    state.head, state.cs, state.Q, state.M = head, cs, Q, M
    state.have_row2 = False
    return i, m, evals


# -- Projectron and Projectron++ ------------------------------------------------------------

cdef class ProjectronState:
    """The Projectron's inverse Gram matrix of its support vectors (``Kinv``, ``cap × cap``,
    the leading m × m block in use), its scratch d = K⁻¹k (``d``), and the counts of
    projected mistakes and of margin-error updates; picklable."""

    cdef public object Kinv, d
    cdef public long long projected, margin_updates

    def __init__(self, Kinv=None, d=None, long long projected=0, long long margin_updates=0):
        self.Kinv = np.zeros((0, 0)) if Kinv is None else Kinv
        self.d = np.zeros(0) if d is None else d
        self.projected, self.margin_updates = projected, margin_updates

    def __reduce__(self):
        return ProjectronState, (self.Kinv, self.d, self.projected, self.margin_updates)

    def ensure(self, Py_ssize_t cap):
        """Room for ``cap`` support vectors, those stored kept."""
        if cap > self.Kinv.shape[0]:
            self.Kinv = _grown(self.Kinv, (cap, cap))
            self.d = _grown(self.d, (cap,))


def projectron_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
                     bint have_row=False, double kxx=0.0, *, ProjectronState state not None,
                     Py_ssize_t budget, double eta, bint plus, double U=-1.0):
    """Projectron (``plus`` false) or Projectron++ (``plus`` true) on rows start, start+1, …
    of ``rows``, with at most ``budget`` support vectors.

    Margin errors of Projectron++: with ``U`` ≥ 0 the step τ = min(ℓ/‖Pk‖², 1) is taken when
    β = τ(2ℓ − τ‖Pk‖² − 2U‖δ‖) ≥ 0 (U bounds the competitor's norm in the mistake bound);
    with ``U`` < 0 the test is ℓ − δ²/η > 0 and τ is also capped by 2(ℓ − δ²/η)/‖Pk‖².
    Calling convention and result as :func:`kbench.cython_core._perceptron.perceptron_block`.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A)
    if budget < 1:
        raise ValueError(f"kbench: a budget must be at least 1, got {budget}")
    state.ensure(A.cap)
    cdef double[:, ::1] Kinv = state.Kinv
    cdef double[::1] dvec = state.d
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, C = A.C, ld = Kinv.shape[0], c, guess, yi, rv
    cdef long long evals = 0, nproj = state.projected, nmargin = state.margin_updates
    cdef double f, xsq, kx, yt, margin, delta2, pk2, loss, excess, tau, mult, dirn
    cdef double counted = 0.0
    cdef double* alpha = A.alpha
    cdef bint mistake
    cdef int one = 1, mm, nc = <int>C
    cdef double* scores = _doubles(C)
    with nogil:
        while i < n:
            evals += _scores_at(&R, i, m, have_row and i == 0, &xsq, A.krow, alpha, C, 1.0,
                                scores)
            yt = A.y[i]
            yi = <Py_ssize_t>yt
            if C == 1:
                f = scores[0]
                A.pred[i] = _sign_label(f)
                margin = yt * f
                mistake = margin <= 0.0
                guess = 0
                rv = 0
            else:
                guess = _argmax(scores, C)
                A.pred[i] = _class_label(<double>guess, scores, C)
                mistake = guess != yi
                rv = guess if mistake else _rival(scores, C, yi)
                margin = scores[yi] - scores[rv]
            if not (mistake or (plus and margin < 1.0)):
                i += 1
                continue
            kx = _self_at(&R, i, xsq, have_row and i == 0, kxx, &counted)
            if kx <= 0.0:  # k(x, ·) = 0: no direction to move in (and 1/δ² would be inf)
                i += 1
                continue
            if m > 0:
                _kinv_solve(&Kinv[0, 0], ld, m, A.krow, &dvec[0])
                pk2 = _dot(A.krow, &dvec[0], <int>m)
                delta2 = kx - pk2
                if delta2 < 0.0:  # rounding when x is (almost) in the span
                    delta2 = 0.0
                pk2 = kx - delta2
            else:
                delta2 = kx
                pk2 = 0.0
            mm = <int>m
            if mistake:
                # Add x unless it is within η of the span (or the budget is full); the 1e-10
                # floor keeps a point that is numerically in the span out of Kinv.
                if m == 0 or (m < budget and delta2 > eta and delta2 > 1e-10 * kx):
                    # m + 1: its kernel row and k(x, x) are computed again
                    if _store_full(m, A.cap, have_row and i == 0, &evals, m + 1):
                        break
                    _kinv_append(&Kinv[0, 0], ld, m, &dvec[0], delta2)
                    _store_at(&R, i, m)
                    R.sq[m] = xsq
                    if C == 1:
                        alpha[m] = yt
                    else:
                        for c in range(C):
                            alpha[m * C + c] = 0.0
                        alpha[m * C + yi] = 1.0
                        alpha[m * C + guess] = -1.0
                    m += 1
                else:
                    nproj += 1
                    if C == 1:
                        dirn = yt
                        daxpy(&mm, &dirn, &dvec[0], &one, alpha, &one)
                    else:
                        dirn = 1.0
                        daxpy(&mm, &dirn, &dvec[0], &one, &alpha[yi], &nc)
                        dirn = -1.0
                        daxpy(&mm, &dirn, &dvec[0], &one, &alpha[guess], &nc)
                i += 1
                continue
            # Projectron++ margin error: a projected step only, never a new support vector.
            i += 1
            if pk2 <= 0.0:
                continue
            loss = 1.0 - margin
            mult = 1.0 if C == 1 else 2.0  # ‖Φ(x,y) − Φ(x,r)‖² = 2k(x,x) in the multiclass case
            tau = loss / (mult * pk2)
            if tau > 1.0:
                tau = 1.0
            if U >= 0.0:
                # β ≥ 0: the step's progress beats the projection error it lets in.
                if tau * (2.0 * loss - tau * mult * pk2 - 2.0 * U * sqrt(mult * delta2)) < 0.0:
                    continue
            else:
                if eta > 0.0:
                    excess = loss - mult * delta2 / eta
                else:
                    excess = loss if delta2 == 0.0 else -1.0
                if excess <= 0.0:
                    continue
                if 2.0 * excess / (mult * pk2) < tau:
                    tau = 2.0 * excess / (mult * pk2)
            nmargin += 1
            if C == 1:
                dirn = tau * yt
                daxpy(&mm, &dirn, &dvec[0], &one, alpha, &one)
            else:
                dirn = tau
                daxpy(&mm, &dirn, &dvec[0], &one, &alpha[yi], &nc)
                dirn = -tau
                daxpy(&mm, &dirn, &dvec[0], &one, &alpha[rv], &nc)
    free(scores)
    state.projected, state.margin_updates = nproj, nmargin
    return i, m, evals + <long long>counted
