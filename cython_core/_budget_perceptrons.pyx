"""Compiled prequential block loops of the budget perceptrons: RBP, Forgetron, Projectron(++).

Every loop predicts then learns examples in turn, computing one kernel row per example
(``_scores_at``) and reusing it for the prediction and the update. The per-example
Python path (``learn_one``) calls the same loop on one example with ``have_row`` set: the
row it passes in is then used as is, so a third-party kernel (``kind < 0``) can be used
and both paths run the same update code.
"""
from libc.math cimport fabs, sqrt
from libc.stdint cimport uint64_t
from scipy.linalg.cython_blas cimport daxpy

from kbench.cython_core._kernels cimport _dot, _expansion
from kbench.cython_core._labels cimport _argmax, _class_label, _rival, _sign_label
from kbench.cython_core._sparse cimport (
    LoopRows, _rows_of, _scores_at, _self_at, _store_at, _stored_row_at,
)
from kbench.cython_core._budget_ops cimport (
    _fold_scale, _kinv_append, _kinv_solve, _rng_below, _rng_uniform,
)


def scores(const double[::1] krow, const double[:, ::1] alpha, Py_ssize_t m, double cs,
           double[::1] out):
    """out = cs · alpha[:m]ᵀ krow[:m], with the arithmetic of the block loops."""
    with nogil:
        _expansion(&krow[0], &alpha[0, 0], m, alpha.shape[1], cs, &out[0])


def sqnorm(const double[::1] x):
    """‖x‖², with the arithmetic of the block loops."""
    return _dot(&x[0], &x[0], <int>x.shape[0]) if x.shape[0] > 0 else 0.0


def rng_draws(unsigned long long state, Py_ssize_t n):
    """The next n uniform doubles of the generator started at ``state`` (for tests)."""
    cdef uint64_t s = state
    out = []
    for _ in range(n):
        out.append(_rng_uniform(&s))
    return out


# -- random budget perceptron ---------------------------------------------------------------

def rbp_block(kernel,
              double[:, ::1] SV, double[::1] sq, double[:, ::1] alpha, uint64_t[::1] rng,
              Py_ssize_t m, const double[:, ::1] X, const double[::1] y, double[::1] pred,
              double[::1] krow, double[::1] scores, bint have_row, sparse=None):
    """Random budget perceptron on every row of X; returns ``(m, kernel_evals)``.

    Binary: on y·f(x) ≤ 0 store x with α = y. Multiclass (C columns): on a mistake store x
    with +1 for the true class and −1 for the predicted one. When the B slots are full the
    new vector overwrites a slot drawn uniformly from the generator ``rng``. With a
    ``sparse`` block (:class:`kbench.cython_core._sparse.SparseBlock`) the rows of X are
    the examples' marks, their kernel rows come from the block's CSR rows against its
    store, and a stored example is written into the store too.
    """
    cdef LoopRows R = _rows_of(kernel, SV, sq, X, sparse)
    cdef Py_ssize_t n = X.shape[0], B = SV.shape[0], C = alpha.shape[1]
    cdef Py_ssize_t i, c, guess, yi, slot
    cdef long long evals = 0
    cdef double f, xsq
    cdef bint mistake
    with nogil:
        for i in range(n):
            evals += _scores_at(&R, i, m, have_row and i == 0, &xsq, &krow[0],
                                &alpha[0, 0], C, 1.0, &scores[0])
            if C == 1:
                f = scores[0]
                pred[i] = _sign_label(f)
                mistake = y[i] * f <= 0.0
                guess = 0
            else:
                guess = _argmax(&scores[0], C)
                pred[i] = _class_label(<double>guess, &scores[0], C)
                mistake = guess != <Py_ssize_t>y[i]
            if not mistake:
                continue
            if m < B:
                slot = m
                m += 1
            else:
                slot = _rng_below(&rng[0], B)
            _store_at(&R, i, slot)
            sq[slot] = xsq
            if C == 1:
                alpha[slot, 0] = y[i]
            else:
                yi = <Py_ssize_t>y[i]
                for c in range(C):
                    alpha[slot, c] = 0.0
                alpha[slot, yi] = 1.0
                alpha[slot, guess] = -1.0
    return m, evals


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


def forgetron_block(kernel,
                    double[:, ::1] SV, double[::1] sq, double[::1] a, double[::1] state,
                    const double[:, ::1] X, const double[::1] y, double[::1] pred,
                    double[::1] krow, double[::1] krow2, bint have_row, bint have_row2,
                    sparse=None):
    """Self-tuned Forgetron on every row of X (binary).

    ``state`` = ``[m, head, cs, Q, M, kernel_evals]``: the true coefficients are cs·a[j];
    head is the oldest slot; Q the accumulated removal damage; M the number of mistakes.
    ``have_row2`` says krow2 already holds the row of the oldest vector (per-example path
    with a third-party kernel); otherwise it is computed when needed. ``sparse``: CSR rows,
    as for :func:`rbp_block`.
    """
    cdef LoopRows R = _rows_of(kernel, SV, sq, X, sparse)
    cdef Py_ssize_t n = X.shape[0], B = SV.shape[0]
    cdef Py_ssize_t m = <Py_ssize_t>state[0], head = <Py_ssize_t>state[1], i, j, r
    cdef double cs = state[2], Q = state[3], M = state[4], evals = state[5]
    cdef double f, xsq, fr, yr, mu, sigma, phi, out
    with nogil:
        for i in range(n):
            evals += _scores_at(&R, i, m, have_row and i == 0, &xsq, &krow[0], &a[0], 1, cs, &out)
            f = out
            pred[i] = _sign_label(f)
            if y[i] * f > 0.0:
                continue
            M += 1.0
            if m < B:
                _store_at(&R, i, m)
                sq[m] = xsq
                a[m] = y[i] / cs
                m += 1
                continue
            # Full: the perceptron step makes B+1 terms; shrink by φ, then drop the oldest.
            r = head
            if not (have_row2 and i == 0):
                evals += _stored_row_at(&R, r, m, &krow2[0])
            _expansion(&krow2[0], &a[0], m, 1, cs, &out)
            fr = out + y[i] * krow[r]  # f'(x_r) with f' = f + y_t k(x_t, ·)
            yr = 1.0 if a[r] > 0.0 else -1.0  # shrinking keeps the sign of the label
            mu = yr * fr
            sigma = fabs(cs * a[r])
            phi = _forgetron_phi(sigma, mu, 15.0 / 32.0 * M - Q)
            Q += _forgetron_psi(sigma, phi, mu)
            _store_at(&R, i, r)
            sq[r] = xsq
            a[r] = y[i] / cs  # true coefficient φ·y once cs is multiplied by φ below
            head = (head + 1) % B
            if phi <= 0.0:
                # Nothing of the old function survives: keep only the new term.
                for j in range(m):
                    a[j] = 0.0
                a[r] = y[i]
                cs = 1.0
            else:
                cs *= phi
                if cs < 1e-200:
                    cs = _fold_scale(&a[0], m, cs)
    state[0] = m
    state[1] = head
    state[2] = cs
    state[3] = Q
    state[4] = M
    state[5] = evals


# -- Projectron and Projectron++ ------------------------------------------------------------

def projectron_block(kernel,
                     double[:, ::1] SV, double[::1] sq, double[:, ::1] alpha,
                     double[:, ::1] Kinv, double[::1] state, double eta, bint plus,
                     const double[:, ::1] X, const double[::1] y, double[::1] pred,
                     double[::1] krow, double[::1] dvec, double[::1] scores,
                     bint have_row, double kxx_given, double U=-1.0, sparse=None):
    """Projectron (``plus`` false) or Projectron++ (``plus`` true) on every row of X.

    ``state`` = ``[m, kernel_evals, n_projected, n_margin_updates]``. Kinv (B×B) holds the
    inverse Gram matrix of the m support vectors. ``kxx_given`` is k(x, x) of the first
    example when ``have_row`` is set and the kernel is not compiled. Margin errors of
    Projectron++: with ``U`` ≥ 0 the step τ = min(ℓ/‖Pk‖², 1) is taken when
    β = τ(2ℓ − τ‖Pk‖² − 2U‖δ‖) ≥ 0 (U bounds the competitor's norm in the mistake bound);
    with ``U`` < 0 the test is ℓ − δ²/η > 0 and τ is also capped by 2(ℓ − δ²/η)/‖Pk‖².
    ``sparse``: CSR rows, as for :func:`rbp_block`.
    """
    cdef LoopRows R = _rows_of(kernel, SV, sq, X, sparse)
    cdef Py_ssize_t n = X.shape[0], B = SV.shape[0], C = alpha.shape[1]
    cdef Py_ssize_t m = <Py_ssize_t>state[0], i, c, guess, yi, rv
    cdef double evals = state[1], nproj = state[2], nmargin = state[3]
    cdef double f, xsq, kxx, margin, delta2, pk2, loss, excess, tau, mult, dirn
    cdef bint mistake
    cdef int one = 1, mm, nc = <int>C
    with nogil:
        for i in range(n):
            evals += _scores_at(&R, i, m, have_row and i == 0, &xsq, &krow[0],
                                &alpha[0, 0], C, 1.0, &scores[0])
            yi = <Py_ssize_t>y[i]
            if C == 1:
                f = scores[0]
                pred[i] = _sign_label(f)
                margin = y[i] * f
                mistake = margin <= 0.0
                guess = 0
                rv = 0
            else:
                guess = _argmax(&scores[0], C)
                pred[i] = _class_label(<double>guess, &scores[0], C)
                mistake = guess != yi
                rv = guess if mistake else _rival(&scores[0], C, yi)
                margin = scores[yi] - scores[rv]
            if not (mistake or (plus and margin < 1.0)):
                continue
            kxx = _self_at(&R, i, xsq, have_row and i == 0, kxx_given, &evals)
            if m > 0:
                _kinv_solve(&Kinv[0, 0], B, m, &krow[0], &dvec[0])
                pk2 = _dot(&krow[0], &dvec[0], <int>m)
                delta2 = kxx - pk2
                if delta2 < 0.0:  # rounding when x is (almost) in the span
                    delta2 = 0.0
                pk2 = kxx - delta2
            else:
                delta2 = kxx
                pk2 = 0.0
            mm = <int>m
            if mistake:
                # Add x unless it is within η of the span (or the budget is full); the 1e-10
                # floor keeps a point that is numerically in the span out of Kinv.
                if m == 0 or (m < B and delta2 > eta and delta2 > 1e-10 * kxx):
                    _kinv_append(&Kinv[0, 0], B, m, &dvec[0], delta2)
                    _store_at(&R, i, m)
                    sq[m] = xsq
                    if C == 1:
                        alpha[m, 0] = y[i]
                    else:
                        for c in range(C):
                            alpha[m, c] = 0.0
                        alpha[m, yi] = 1.0
                        alpha[m, guess] = -1.0
                    m += 1
                else:
                    nproj += 1.0
                    if C == 1:
                        dirn = y[i]
                        daxpy(&mm, &dirn, &dvec[0], &one, &alpha[0, 0], &one)
                    else:
                        dirn = 1.0
                        daxpy(&mm, &dirn, &dvec[0], &one, &alpha[0, yi], &nc)
                        dirn = -1.0
                        daxpy(&mm, &dirn, &dvec[0], &one, &alpha[0, guess], &nc)
                continue
            # Projectron++ margin error: a projected step only, never a new support vector.
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
            nmargin += 1.0
            if C == 1:
                dirn = tau * y[i]
                daxpy(&mm, &dirn, &dvec[0], &one, &alpha[0, 0], &one)
            else:
                dirn = tau
                daxpy(&mm, &dirn, &dvec[0], &one, &alpha[0, yi], &nc)
                dirn = -tau
                daxpy(&mm, &dirn, &dvec[0], &one, &alpha[0, rv], &nc)
    state[0] = m
    state[1] = evals
    state[2] = nproj
    state[3] = nmargin
