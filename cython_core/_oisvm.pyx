"""Compiled prequential block loop of OISVM, online independent support vector machines
(Orabona, Castellini, Caputo, Jie and Sandini 2010), binary.

``f(x) = Σⱼ βⱼ k(bⱼ, x)`` over a basis B of linearly independent examples (the store): an
example joins B when its distance to their span, ``δ = k(x, x) − kᵀK_BB⁻¹k``, exceeds η.
β minimises ``½ βᵀK_BB β + (C/2) Σᵢ max(0, 1 − yᵢ oᵢ)²`` over every example seen,
``oᵢ = Σⱼ βⱼ k(bⱼ, xᵢ)``: Newton's method on the margin violators I, whose step is
``β = C H⁻¹ Σ_{i∈I} yᵢ kᵢ``, ``H = K_BB + C Σ_{i∈I} kᵢkᵢᵀ``, ``kᵢ`` the kernel values of
xᵢ against B. :class:`OisvmState` keeps, typed: K_BB⁻¹, the Cholesky factor of H (updated by
rank one as examples enter or leave I), ``Σ_{i∈I} yᵢ kᵢ``, and the kernel values of every
example against B, with the examples themselves (``history``): a new basis vector needs
its kernel values against all of them.
"""
cimport numpy as cnp
from libc.math cimport sqrt
from libc.stdlib cimport free
from scipy.linalg.cython_blas cimport dgemv, dger, dtrsv
from scipy.linalg.cython_lapack cimport dpotrf

import numpy as np

from kbench.cython_core._loop cimport *
from kbench.cython_core._labels cimport _sign_label

cnp.import_array()


cdef class OisvmState:
    """What OISVM keeps beside its expansion: K_BB⁻¹ (``Kinv``) and the upper Cholesky factor
    ``R`` of H (``cap × cap``, row-major, the leading m × m block in use), ``ss`` =
    Σ_{i∈I} yᵢ kᵢ, the example index of each basis vector (``basis``); per example seen
    (``t`` of them): its kernel values against B (column i of ``G``, ``cap × tcap``), its
    label and whether it is a margin violator (``violator``, 0 or 1); and ``history``, the
    store of every example seen (a SupportBuffer or SparseSupportBuffer). Picklable."""

    cdef public object Kinv, R, ss, basis, G, labels, violator, history
    cdef public Py_ssize_t t

    def __init__(self, Kinv=None, R=None, ss=None, basis=None, G=None, labels=None,
                 violator=None, history=None, Py_ssize_t t=0):
        self.Kinv = np.zeros((0, 0)) if Kinv is None else Kinv
        self.R = np.zeros((0, 0)) if R is None else R
        self.ss = np.zeros(0) if ss is None else ss
        self.basis = np.zeros(0, dtype=np.int64) if basis is None else basis
        self.G = np.zeros((0, 0)) if G is None else G
        self.labels = np.zeros(0) if labels is None else labels
        self.violator = np.zeros(0) if violator is None else violator
        self.history, self.t = history, t

    def __reduce__(self):
        return OisvmState, (self.Kinv, self.R, self.ss, self.basis, self.G, self.labels,
                            self.violator, self.history, self.t)

    def ensure(self, Py_ssize_t cap, Py_ssize_t seen):
        """Room for ``cap`` basis vectors and ``seen`` examples, what is kept kept (the
        examples' room at least doubled, so that a stream costs amortised O(1) copies)."""
        cdef Py_ssize_t tcap = self.G.shape[1]
        if seen > tcap:
            tcap = max(seen, 2 * tcap)
            self.labels = _grown(self.labels, (tcap,))
            self.violator = _grown(self.violator, (tcap,))
        cap = max(cap, self.Kinv.shape[0])
        if cap > self.Kinv.shape[0]:
            self.Kinv = _grown(self.Kinv, (cap, cap))
            self.R = _grown(self.R, (cap, cap))
            self.ss = _grown(self.ss, (cap,))
            self.basis = _grown(self.basis, (cap,)).astype(np.int64)
        if (cap, tcap) != self.G.shape:
            self.G = _grown(self.G, (cap, tcap))


cdef bint _rank_one(double* R, int ld, int m, double* x, double sign) noexcept nogil:
    """R ← the Cholesky factor of RᵀR + sign·x xᵀ (sign ±1; x is overwritten); False when
    a downdate would lose positive definiteness (R then partly updated)."""
    cdef int k, j
    cdef double r2, r, c, s, rkk
    for k in range(m):
        rkk = R[k * ld + k]
        r2 = rkk * rkk + sign * x[k] * x[k]
        if r2 <= 0.0:
            return False
        r = sqrt(r2)
        c, s = r / rkk, x[k] / rkk
        R[k * ld + k] = r
        for j in range(k + 1, m):
            R[k * ld + j] = (R[k * ld + j] + sign * s * x[j]) / c
            x[j] = c * x[j] - s * R[k * ld + j]
    return True


cdef bint _refactor(double* R, int ld, int m, const double* G, Py_ssize_t tcap, Py_ssize_t t,
                    const long long* basis, const double* viol, double C) noexcept nogil:
    """R ← the Cholesky factor of H = K_BB + C Σ_{i∈I} kᵢkᵢᵀ computed afresh (after a
    downdate that rounding made fail); False if H is not positive definite."""
    cdef Py_ssize_t i, j, l
    cdef int info = 0
    cdef double one = 1.0
    cdef char lo = b'L'
    for j in range(m):
        for l in range(j, m):
            R[j * ld + l] = G[j * tcap + basis[l]]
    for i in range(t):
        if viol[i] != 0.0:
            for j in range(m):
                for l in range(j, m):
                    R[j * ld + l] += C * G[j * tcap + i] * G[l * tcap + i]
    dpotrf(&lo, &m, R, &ld, &info)  # the row-major upper triangle is column-major lower
    for j in range(m):
        for l in range(j):
            R[j * ld + l] = 0.0
    return info == 0


def oisvm_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
                bint have_row=False, double kxx=0.0, *, OisvmState state not None,
                BlockRows history not None, double C, double eta, int newton_steps):
    """Predict then learn rows start, start+1, … of ``rows`` (labels ±1), whose examples are
    already the history's rows ``state.t``, ``state.t + 1``, … (``history``: a BlockRows of
    no rows over ``state.history``, to compute kernel rows between its stored rows).
    Calling convention and result as :func:`kbench.cython_core._perceptron.perceptron_block`.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef LoopRows Hs = _loop_rows(kernel, history, state.history)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "OISVM is binary (got {} columns)")
    if not (C > 0 and eta > 0 and newton_steps >= 1):
        raise ValueError(f"kbench: OISVM needs C > 0, eta > 0 and newton_steps >= 1")
    if state.history.size < state.t + rows.n - start:
        raise ValueError("kbench: OISVM's history must hold every example of the block")
    state.ensure(A.cap, state.t + rows.n - start)
    cdef double[:, ::1] Kinv = state.Kinv, Rc = state.R, G = state.G
    cdef double[::1] ss = state.ss, ys = state.labels, viol = state.violator
    cdef long long[::1] basis = state.basis
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, g = state.t, j, r
    cdef Py_ssize_t tcap = G.shape[1]
    cdef long long evals = 0
    cdef double f, xsq, kx, delta, yt, sgn, counted = 0.0
    cdef double* w = _doubles(3 * A.cap + tcap + 2)
    cdef double* a = w + A.cap + 1
    cdef double* beta = a + A.cap + 1
    cdef double* o = beta + A.cap
    cdef double* RR = &Rc[0, 0] if A.cap > 0 else NULL
    cdef int mm, ld = <int>A.cap, tld = <int>tcap, gg, one = 1, step
    cdef double d1 = 1.0, d0 = 0.0, scale, rootC = sqrt(C)
    cdef char tr = b'T', nt = b'N', lo = b'L'
    cdef bint changed, failed = False
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, A.krow)
            f = _dot(A.krow, A.alpha, <int>m) if m > 0 else 0.0
            A.pred[i] = _sign_label(f)
            yt = A.y[i]
            kx = _self_at(&R, i, xsq, have_row and i == 0, kxx, &counted)
            mm = <int>m
            delta = kx
            if m > 0:
                dgemv(&tr, &mm, &mm, &d1, &Kinv[0, 0], &ld, A.krow, &one, &d0, a, &one)
                delta = kx - _dot(A.krow, a, <int>m)  # ‖φ(x) − its projection on B‖²
            if delta > eta:  # x joins the basis, with β = 0
                if _store_full(m, A.cap, have_row and i == 0, &evals, m):
                    counted -= 1.0
                    break
                if m > 0:  # K_BB⁻¹ by the block-inverse formula
                    scale = 1.0 / delta
                    dger(&mm, &mm, &scale, a, &one, a, &one, &Kinv[0, 0], &ld)
                    for r in range(m):
                        Kinv[r, m] = -a[r] / delta
                        Kinv[m, r] = -a[r] / delta
                Kinv[m, m] = 1.0 / delta
                _store_at(&R, i, m)
                R.sq[m] = xsq
                A.alpha[m] = 0.0
                basis[m] = g
                evals += _stored_row_at(&Hs, g, g, &G[m, 0])  # k(x, xᵢ) for i < g
                G[m, g] = kx
                # H's new column, (K_Bx + C Σ_{i∈I} kᵢ k(x, xᵢ), k(x, x) + C Σ_{i∈I} k(x, xᵢ)²),
                # and ss's new entry Σ_{i∈I} yᵢ k(x, xᵢ)
                scale = 0.0
                ss[m] = 0.0
                for r in range(g):
                    o[r] = viol[r] * G[m, r]
                    scale += o[r] * G[m, r]
                    ss[m] += o[r] * ys[r]
                for r in range(m):
                    w[r] = A.krow[r]
                gg = <int>g
                if m > 0 and g > 0:
                    dgemv(&tr, &gg, &mm, &C, &G[0, 0], &tld, o, &one, &d1, w, &one)
                if m > 0:  # R's new column u solves Rᵀu = h
                    dtrsv(&lo, &nt, &nt, &mm, RR, &ld, w, &one)
                    for r in range(m):
                        Rc[r, m] = w[r]
                        Rc[m, r] = 0.0
                scale = kx + C * scale - (_dot(w, w, <int>m) if m > 0 else 0.0)
                m += 1
                if scale > 0.0:
                    Rc[m - 1, m - 1] = sqrt(scale)
                else:  # lost to rounding: factor H afresh
                    failed = not _refactor(RR, ld, <int>m, &G[0, 0], tcap, g, &basis[0],
                                           &viol[0], C)
                    if failed:
                        break
            for r in range(mm):
                G[r, g] = A.krow[r]
            ys[g] = yt
            viol[g] = 0.0
            if yt * f < 1.0 and m > 0:  # a margin violator: into I, then Newton's steps
                viol[g] = 1.0
                mm = <int>m
                for r in range(m):
                    w[r] = rootC * G[r, g]
                    ss[r] += yt * G[r, g]
                failed = not _rank_one(RR, ld, mm, w, 1.0)
                gg = <int>(g + 1)
                for step in range(newton_steps):
                    if failed:
                        failed = not _refactor(RR, ld, mm, &G[0, 0], tcap, g + 1, &basis[0],
                                               &viol[0], C)
                        if failed:
                            break
                    for r in range(m):  # β = C H⁻¹ ss = C R⁻¹R⁻ᵀ ss
                        beta[r] = C * ss[r]
                    dtrsv(&lo, &nt, &nt, &mm, RR, &ld, beta, &one)
                    dtrsv(&lo, &tr, &nt, &mm, RR, &ld, beta, &one)
                    dgemv(&nt, &gg, &mm, &d1, &G[0, 0], &tld, beta, &one, &d0, o, &one)
                    for r in range(m):
                        A.alpha[r] = beta[r]
                    changed = False
                    for j in range(g + 1):  # I: the examples with yᵢ oᵢ < 1
                        sgn = (1.0 if ys[j] * o[j] < 1.0 else 0.0) - viol[j]
                        if sgn == 0.0:
                            continue
                        changed = True
                        viol[j] += sgn
                        for r in range(m):
                            w[r] = rootC * G[r, j]
                            ss[r] += sgn * ys[j] * G[r, j]
                        if not failed:
                            failed = not _rank_one(RR, ld, mm, w, sgn)
                    if not changed:
                        break
                if failed:
                    failed = not _refactor(RR, ld, mm, &G[0, 0], tcap, g + 1, &basis[0],
                                           &viol[0], C)
                    if failed:
                        break
            elif yt * f < 1.0:
                viol[g] = 1.0  # no basis yet: in I, with no values against it
            g += 1
            i += 1
    free(w)
    state.t = g
    if failed:
        raise ValueError("kbench: OISVM's Hessian is not positive definite (raise eta)")
    return i, m, evals + <long long>counted
