"""Compiled prequential block loop of kernel Pegasos and budgeted SGD (BSGD), binary and multiclass.

Both run the Pegasos step f ← (1 − 1/t) f + (1/(λt)) · (violation) on the hinge loss
(Crammer–Singer's for multiclass). Coefficients are stored unscaled: the true ones are
cs·alpha[j], so the (1 − 1/t) shrinking costs nothing per support vector. BSGD keeps at
most B support vectors by removal, projection or merging after each addition; Pegasos
has no budget (the arrays grow) and an optional projection onto the ball of radius 1/√λ.
"""
cimport numpy as cnp
from libc.math cimport exp, log, sqrt
from libc.stdlib cimport free
from libc.string cimport memcpy

import numpy as np

from kbench.cython_core._loop cimport *
from kbench.cython_core._budget_ops cimport _kinv_append, _kinv_remove, _kinv_solve
from kbench.cython_core._labels cimport _argmax, _class_label, _rival, _sign_label
from kbench.cython_core._sparse cimport _block_merge, _block_widest

cnp.import_array()


cpdef enum Maintenance:
    M_NONE = 0         # Pegasos: no budget
    M_REMOVAL = 1
    M_PROJECTION = 2
    M_MERGE = 3


cdef class BsgdState:
    """Pegasos' and BSGD's running state; picklable: the steps ``t``, the scale ``cs`` of the
    stored coefficients (the true ones are cs·α), the maintenance steps, ‖f‖² (``norm2``,
    which only Pegasos' projection reads), and per support vector k(x, x) (``kdiag``) and
    the step at which it entered (``stamp``: ties go to the oldest), grown with the store;
    ``Kinv`` the inverse Gram matrix of the support vectors (projection; else 1 × 1)."""

    cdef public double t, cs, maintenance_steps, norm2
    cdef public cnp.ndarray kdiag, stamp, Kinv

    def __init__(self, Kinv, *, double t=0.0, double cs=1.0, double maintenance_steps=0.0,
                 double norm2=0.0, kdiag=None, stamp=None):
        self.Kinv, self.t, self.cs = Kinv, t, cs
        self.maintenance_steps, self.norm2 = maintenance_steps, norm2
        self.kdiag = np.zeros(0) if kdiag is None else kdiag
        self.stamp = np.zeros(0) if stamp is None else stamp

    def ensure(self, Py_ssize_t cap):
        """Room for ``cap`` support vectors, those stored kept."""
        if cap > self.kdiag.shape[0]:
            self.kdiag = _grown(self.kdiag, (cap,))
            self.stamp = _grown(self.stamp, (cap,))

    def __reduce__(self):
        return _rebuild, (self.Kinv, self.t, self.cs, self.maintenance_steps, self.norm2,
                          self.kdiag, self.stamp)


def _rebuild(Kinv, t, cs, maintenance_steps, norm2, kdiag, stamp):
    return BsgdState(Kinv, t=t, cs=cs, maintenance_steps=maintenance_steps, norm2=norm2,
                     kdiag=kdiag, stamp=stamp)

# Golden-section search: shrink [0, 1] until it is narrower than this (h to about 1e-4).
cdef double GOLDEN_TOL = 1e-4
cdef double INV_PHI = 0.6180339887498949  # (√5 − 1)/2
# Relative difference below which two removal costs count as equal.
cdef double TIE_TOL = 1e-9
# A new vector this close to the span (δ² below SPAN_TOL·k(x,x)) is projected, not added.
cdef double SPAN_TOL = 1e-10


cdef inline double _merge_value(double a, double b, double logk, double h) noexcept nogil:
    """a·k^{(1−h)²} + b·k^{h²}: the merged coefficient for z = h·x_m + (1−h)·x_n (RBF)."""
    return a * exp(logk * (1.0 - h) * (1.0 - h)) + b * exp(logk * h * h)


cdef inline double _golden_h(double a, double b, double k) noexcept nogil:
    """The h in [0, 1] maximising a·k^{(1−h)²} + b·k^{h²} (a, b ≥ 0), by golden-section search.

    For the RBF kernel k(x_m, z) = k^{(1−h)²} and k(x_n, z) = k^{h²} with k = k(x_m, x_n),
    so this maximises the merged coefficient, which minimises the weight degradation.
    """
    cdef double lo = 0.0, hi = 1.0, x1, x2, f1, f2, logk
    if k < 1e-300:
        k = 1e-300
    logk = log(k)
    x1 = hi - INV_PHI * (hi - lo)
    x2 = lo + INV_PHI * (hi - lo)
    f1 = _merge_value(a, b, logk, x1)
    f2 = _merge_value(a, b, logk, x2)
    while hi - lo > GOLDEN_TOL:
        # A near-tie (exact when a = b, the Pegasos case, by symmetry about h = ½) keeps the
        # left part; deciding it by rounding noise would make the merge irreproducible.
        if f1 < f2 - 1e-12 * (f1 if f1 > f2 else f2):
            lo = x1
            x1 = x2
            f1 = f2
            x2 = lo + INV_PHI * (hi - lo)
            f2 = _merge_value(a, b, logk, x2)
        else:
            hi = x2
            x2 = x1
            f2 = f1
            x1 = hi - INV_PHI * (hi - lo)
            f1 = _merge_value(a, b, logk, x1)
    return 0.5 * (lo + hi)


def merge_point(double a, double b, double k):
    """``(h, α_z)`` for merging a·φ(x_m) + b·φ(x_n) (same sign) into α_z·φ(h x_m + (1−h) x_n)."""
    cdef double s = 1.0 if a + b >= 0.0 else -1.0
    cdef double h = _golden_h(s * a, s * b, k)
    cdef double logk = log(k if k > 1e-300 else 1e-300)
    return h, _merge_value(a, b, logk, h)


cdef inline double _norm2(double[:, ::1] alpha, Py_ssize_t j, Py_ssize_t C) noexcept nogil:
    cdef Py_ssize_t c
    cdef double s = 0.0
    for c in range(C):
        s += alpha[j, c] * alpha[j, c]
    return s


cdef inline void _remove_slot(const LoopRows* R, double[::1] sq, double[:, ::1] alpha,
                              double[::1] kdiag, double[::1] stamp, Py_ssize_t p,
                              Py_ssize_t last, Py_ssize_t C) noexcept nogil:
    """Delete support vector p by moving the last one into its slot (its squared norm with
    it: for CSR rows ``_move_at`` moves the store's, which is ``sq``)."""
    _move_at(R, p, last)
    if p == last:
        return
    memcpy(&alpha[p, 0], &alpha[last, 0], C * sizeof(double))
    if R.sp == NULL:
        sq[p] = sq[last]
    kdiag[p] = kdiag[last]
    stamp[p] = stamp[last]


cdef inline Py_ssize_t _smallest(double[:, ::1] alpha, double[::1] kdiag, double[::1] stamp,
                                 Py_ssize_t m, Py_ssize_t C) noexcept nogil:
    """The vector with the smallest ‖α_j‖² k(x_j, x_j), the oldest among ties.

    Pegasos gives every vector the same |α| (each enters with 1/(λt) and all shrink
    alike), so ties are the rule, not the exception; costs within a relative 10⁻⁹ count
    as tied, so that rounding noise does not decide which vector goes.
    """
    cdef Py_ssize_t j, p = 0
    cdef double cost, best = _norm2(alpha, 0, C) * kdiag[0]
    for j in range(1, m):
        cost = _norm2(alpha, j, C) * kdiag[j]
        if cost < best * (1.0 - TIE_TOL) or (cost <= best * (1.0 + TIE_TOL) and stamp[j] < stamp[p]):
            best = cost
            p = j
    return p


cdef inline Py_ssize_t _label(double[:, ::1] alpha, Py_ssize_t j, Py_ssize_t C) noexcept nogil:
    """The class a support vector stands for: the sign (binary) or the largest coefficient."""
    if C == 1:
        return 1 if alpha[j, 0] >= 0.0 else 0
    return _argmax(&alpha[j, 0], C)


def bsgd_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
               bint have_row=False, double kxx=0.0, *, BsgdState state not None, double lam,
               Maintenance mode, Py_ssize_t budget, bint project_ball):
    """Pegasos (``mode`` M_NONE) or BSGD on rows start, start+1, … of ``rows``.

    The loop stops before a row when the store is full so that Python can grow it; BSGD's
    store holds budget + 1 rows at most (the new vector is stored, then maintenance brings
    the count back to ``budget``). On CSR rows a merge writes the merged point as a CSR row
    into the store, which needs free pool entries for the two merged rows: before each
    example the loop checks that the pool holds the non-zeros of the block's examples left
    plus twice the widest row stored or seen, and stops before the example when it does
    not, so that Python reserves more (``SparseSupportBuffer.spare``) and calls again from
    there. Calling convention and result as
    :func:`kbench.cython_core._perceptron.perceptron_block`.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A)
    state.ensure(A.cap)
    cdef double[:, ::1] alpha = store.alpha
    cdef double[::1] sq = store.sq
    cdef double[::1] krow = store.krow
    cdef double[::1] kdiag = state.kdiag
    cdef double[::1] stamp = state.stamp
    cdef double[:, ::1] Kinv = state.Kinv
    cdef const double* Y = A.y
    cdef double* P = A.pred
    cdef double kxx_given = kxx
    cdef Py_ssize_t n = rows.n, d = R.d, cap = A.cap, C = A.C
    cdef Py_ssize_t ld = Kinv.shape[0]
    if mode == M_PROJECTION and ld < budget + 1:
        raise ValueError(f"kbench: BSGD's projection needs Kinv of {budget + 1} rows, got {ld}")
    cdef Py_ssize_t m = A.m, i, j, c, yi, guess, rv, p, q, lab
    cdef double t = state.t, cs = state.cs, evals = 0.0
    cdef double nmaint = state.maintenance_steps, norm2 = state.norm2
    cdef double f, xsq, eta, decay, marg, delta2, cost, best, pk, ratio, h, kpn, logk
    cdef double ca, cb, sgn, deg, bestdeg, besth, az, rho
    cdef bint viol
    cdef double coef[2]
    cdef Py_ssize_t cls[2]
    cdef Py_ssize_t ncoef
    # Merging CSR rows: the widest row stored or seen (a merged row has at most the
    # non-zeros of its two rows), for the pool room a merge may take.
    cdef bint merge_sparse = R.sp != NULL and mode == M_MERGE
    cdef long long widest = 0, nx
    cdef double* scratch = _doubles(2 * cap + C)
    cdef double* krow2 = scratch
    cdef double* dvec = scratch + cap
    cdef double* scores = scratch + 2 * cap
    i = start
    with nogil:
        if merge_sparse:
            widest = _block_widest(R.sp, m)
        while i < n:
            if m == cap:
                break  # Python grows the store and calls again from row i
            if merge_sparse:
                nx = R.sp.xp[i + 1] - R.sp.xp[i]
                if nx > widest:
                    widest = nx
                if R.sp.pool_len - R.sp.pool_end < R.sp.xp[n] - R.sp.xp[i] + 2 * widest:
                    break  # Python reserves pool room and calls again from row i
            evals += _row_at(&R, i, m, have_row and i == start, &xsq, &krow[0])
            _expansion(&krow[0], &alpha[0, 0], m, C, cs, scores)
            yi = <Py_ssize_t>Y[i]
            if C == 1:
                f = scores[0]
                P[i] = _sign_label(f)
                marg = Y[i] * f
                viol = marg < 1.0
                ncoef = 1
                cls[0] = 0
                coef[0] = Y[i]
            else:
                guess = _argmax(scores, C)
                P[i] = _class_label(<double>guess, scores, C)
                rv = _rival(scores, C, yi)
                marg = scores[yi] - scores[rv]
                viol = marg < 1.0
                ncoef = 2
                cls[0] = yi
                cls[1] = rv
                coef[0] = 1.0
                coef[1] = -1.0
            t += 1.0
            eta = 1.0 / (lam * t)
            decay = 1.0 - 1.0 / t
            # ‖f‖² after the shrink and the step (only Pegasos' projection needs it):
            # ‖decay·f + η u k(x, ·)‖² = decay²‖f‖² + 2·decay·η·(u·f(x)) + η²‖u‖² k(x, x).
            if t == 1.0:
                cs = 1.0  # (1 − 1/1) = 0 erases f; the model is empty anyway
                norm2 = 0.0
            else:
                cs *= decay
                norm2 *= decay * decay
            if viol:
                kxx = _self_at(&R, i, xsq, have_row and i == start, kxx_given, &evals)
                if project_ball:
                    norm2 += 2.0 * decay * eta * marg + eta * eta * ncoef * kxx
                    if t == 1.0:
                        norm2 = eta * eta * ncoef * kxx
                # the new term's stored coefficients are η·u / cs
                if mode == M_PROJECTION and m > 0:
                    _kinv_solve(&Kinv[0, 0], ld, m, &krow[0], dvec)
                    delta2 = kxx - _dot(&krow[0], dvec, <int>m)
                    if delta2 <= SPAN_TOL * kxx:
                        # x is (numerically) in the span: project its term onto it.
                        for j in range(m):
                            for q in range(ncoef):
                                alpha[j, cls[q]] += eta * coef[q] / cs * dvec[j]
                        nmaint += 1.0
                        viol = False
                    else:
                        _kinv_append(&Kinv[0, 0], ld, m, dvec, delta2)
                elif mode == M_PROJECTION:
                    Kinv[0, 0] = 1.0 / kxx
                if viol:
                    _store_at(&R, i, m)
                    sq[m] = xsq
                    kdiag[m] = kxx
                    stamp[m] = t
                    for c in range(C):
                        alpha[m, c] = 0.0
                    for q in range(ncoef):
                        alpha[m, cls[q]] = eta * coef[q] / cs
                    m += 1
                if mode != M_NONE and m > budget:
                    nmaint += 1.0
                    if mode == M_REMOVAL or mode == M_MERGE:
                        p = _smallest(alpha, kdiag, stamp, m, C)
                        if mode == M_MERGE:
                            evals += _stored_row_at(&R, p, m, krow2)
                            lab = _label(alpha, p, C)
                            q = -1
                            bestdeg = 0.0
                            besth = 0.0
                            for j in range(m):
                                if j == p or _label(alpha, j, C) != lab:
                                    continue
                                kpn = krow2[j]
                                c = 0 if C == 1 else lab
                                sgn = 1.0 if alpha[p, c] + alpha[j, c] >= 0.0 else -1.0
                                h = _golden_h(sgn * alpha[p, c], sgn * alpha[j, c], kpn)
                                logk = log(kpn if kpn > 1e-300 else 1e-300)
                                ca = exp(logk * (1.0 - h) * (1.0 - h))
                                cb = exp(logk * h * h)
                                # ‖α_p φ_p + α_j φ_j‖² − ‖α_z‖², α_z = α_p·ca + α_j·cb
                                deg = 0.0
                                for c in range(C):
                                    az = alpha[p, c] * ca + alpha[j, c] * cb
                                    deg += (alpha[p, c] * alpha[p, c] + alpha[j, c] * alpha[j, c]
                                            + 2.0 * kpn * alpha[p, c] * alpha[j, c] - az * az)
                                if q < 0 or deg < bestdeg:
                                    q = j
                                    bestdeg = deg
                                    besth = h
                            if q >= 0:
                                h = besth
                                kpn = krow2[q]
                                logk = log(kpn if kpn > 1e-300 else 1e-300)
                                ca = exp(logk * (1.0 - h) * (1.0 - h))
                                cb = exp(logk * h * h)
                                for c in range(C):
                                    alpha[p, c] = alpha[p, c] * ca + alpha[q, c] * cb
                                if merge_sparse:
                                    nx = _block_merge(R.sp, p, q, h)
                                    if nx > widest:
                                        widest = nx
                                    sq[p] = R.sp.sq[p]
                                else:
                                    for j in range(d):
                                        R.SV[p * d + j] = h * R.SV[p * d + j] + (1.0 - h) * R.SV[q * d + j]
                                    sq[p] = _dot(R.SV + p * d, R.SV + p * d, <int>d) if d > 0 else 0.0
                                kdiag[p] = 1.0
                                stamp[p] = t  # the merged vector is new
                                p = q  # the partner's slot is the one freed
                        _remove_slot(&R, sq, alpha, kdiag, stamp, p, m - 1, C)
                        m -= 1
                    else:
                        # Projection: drop the vector whose projection onto the others loses
                        # least, ‖α_p‖² / Kinv_pp, and add its term's projection to the others.
                        p = 0
                        best = 0.0
                        for j in range(m):
                            cost = _norm2(alpha, j, C) / Kinv[j, j]
                            if j == 0 or cost < best:
                                best = cost
                                p = j
                        pk = Kinv[p, p]
                        for j in range(m):
                            if j == p:
                                continue
                            ratio = -Kinv[j, p] / pk
                            for c in range(C):
                                alpha[j, c] += alpha[p, c] * ratio
                        _kinv_remove(&Kinv[0, 0], ld, m, p, dvec)
                        _remove_slot(&R, sq, alpha, kdiag, stamp, p, m - 1, C)
                        m -= 1
            if project_ball and norm2 > 1.0 / lam:
                rho = 1.0 / sqrt(lam * norm2)
                cs *= rho
                norm2 = 1.0 / lam
            i += 1
    free(scratch)
    state.t, state.cs, state.maintenance_steps, state.norm2 = t, cs, nmaint, norm2
    return i, m, <long long>evals
