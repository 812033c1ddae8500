"""Compiled bookkeeping step of IDSVM (Cauwenberghs and Poggio 2001).

One adiabatic step of incremental (sign = +1) or decremental (sign = −1) learning of
example c: the sensitivities β = −R v_c (v_c = [y_c; Q_Sc] with a bias, Q_Sc without) and
γ_i = y_i (y_c K_ic + Σ_j K_{i,S_j} y_{S_j} β_j + β_b) for every stored example, the
largest step t ≥ 0 that keeps every other example's KKT conditions (the min-ratio test),
and the update of α, h and b. Set changes (and the rank-one updates of R they need) are
left to the caller. Ties go to c's own transition, then to margin vectors, then to the
lowest index.
"""
from scipy.linalg.cython_blas cimport dgemv

import numpy as np

#: The set of a stored example, shared with the Python side (``_idsvm.Set``), never copied.
cpdef enum Set:
    RESERVE = 0
    MARGIN = 1
    ERROR = 2
    MOVING = 3          # the example being learned or unlearned (Python side only)


#: What ended a step of ids_step, shared with the Python side (``_idsvm.Event``).
cpdef enum Event:
    EV_C_MARGIN = 0     # c reached h = 0 (incremental)
    EV_C_ERROR = 1      # c reached α = C (incremental)
    EV_C_ZERO = 2       # α_c reached 0 (decremental)
    EV_S_ERROR = 3      # margin vector k reached α = C
    EV_S_RESERVE = 4    # margin vector k reached α = 0
    EV_ENTER = 5        # error or reserve vector k reached h = 0
    EV_UNBOUNDED = 6    # nothing bounds the step


def ids_step(double[:, ::1] R, double[:, ::1] Ks, Py_ssize_t n, Py_ssize_t ns,
             const Py_ssize_t[::1] sidx, const double[::1] y, double[::1] alpha,
             double[::1] h, const signed char[::1] kind, const unsigned char[::1] excluded,
             const double[::1] kc, Py_ssize_t c, double sign, bint bias, bint c_blocked,
             double C, double eps, double[::1] v, double[::1] beta, double[::1] w,
             double[::1] gamma):
    """One bookkeeping step; returns ``(event, k, t, db)`` (db: the change of b).

    ``Ks`` holds K(x_{S_j}, x_i) in row j, column i (capacity ≥ ns rows, ≥ n columns);
    ``R`` is the inverse of the bordered margin-vector matrix (its leading ns + bias block).
    """
    cdef Py_ssize_t o = 1 if bias else 0, m = ns + o, i, j, k = -1
    cdef int mm = <int>m, nn = <int>n, nss = <int>ns, one = 1
    cdef int ldr = <int>R.shape[1], ldk = <int>Ks.shape[1]
    cdef double minus1 = -1.0, zero = 0.0, onef = 1.0
    cdef char tr = b'T', nt = b'N'
    cdef double yc = y[c], bb, t, tc, tcm, tce, ts, tt, bs, gi, ai, hi, db
    cdef Py_ssize_t js = -1, it = -1
    cdef int event
    with nogil:
        # v_c and β = −R v_c (R symmetric: row-major R is its own transpose)
        if bias:
            v[0] = yc
        for j in range(ns):
            i = sidx[j]
            v[o + j] = y[i] * yc * kc[i]
        if m > 0:
            dgemv(&tr, &mm, &mm, &minus1, &R[0, 0], &ldr, &v[0], &one, &zero, &beta[0], &one)
        bb = beta[0] if bias else 0.0
        # γ over every stored example: KsT (row-major ns×n, one margin vector's kernel
        # values per row) is column-major n×ns, so γ = KsTᵀ w is one plain gemv.
        for j in range(ns):
            w[j] = y[sidx[j]] * beta[o + j]
        if ns > 0:
            dgemv(&nt, &nn, &nss, &onef, &Ks[0, 0], &ldk, &w[0], &one, &zero, &gamma[0], &one)
        else:
            for i in range(n):
                gamma[i] = 0.0
        for i in range(n):
            gamma[i] = sign * y[i] * (yc * kc[i] + gamma[i] + bb)  # Δh per unit step
        # c's own transitions
        tcm = tce = 1e300
        if sign > 0:
            if gamma[c] > eps and not c_blocked:
                tcm = -h[c] / gamma[c]
                if tcm < 0.0:
                    tcm = 0.0
            tce = C - alpha[c]
            if tce < 0.0:
                tce = 0.0
            tc = tcm if tcm <= tce else tce
        else:
            tc = alpha[c]
        # margin vectors reaching a bound
        ts = 1e300
        for j in range(ns):
            bs = sign * beta[o + j]
            ai = alpha[sidx[j]]
            if bs > eps:
                t = (C - ai) / bs
            elif bs < -eps:
                t = -ai / bs
            else:
                continue
            if t < 0.0:
                t = 0.0
            if js < 0 or t < ts or (t == ts and sidx[j] < sidx[js]):
                ts = t
                js = j
        # error and reserve vectors reaching the margin
        tt = 1e300
        for i in range(n):
            if excluded[i]:
                continue
            gi = gamma[i]
            if kind[i] == ERROR and gi > eps:
                t = -h[i] / gi
            elif kind[i] == RESERVE and gi < -eps:
                t = h[i] / -gi
            else:
                continue
            if t < 0.0:
                t = 0.0
            if t < tt:
                tt = t
                it = i
        # the smallest step; ties: c, then margin vectors, then the others
        if tc <= ts and tc <= tt:
            t = tc
            if sign < 0:
                event = EV_C_ZERO
            elif tcm <= tce:
                event = EV_C_MARGIN
            else:
                event = EV_C_ERROR
            k = c
        elif ts <= tt:
            t = ts
            k = sidx[js]
            event = EV_S_ERROR if sign * beta[o + js] > 0 else EV_S_RESERVE
        else:
            t = tt
            k = it
            event = EV_ENTER
        if t >= 1e299:
            event = EV_UNBOUNDED
            k = -1
            t = 0.0
        # apply the step
        alpha[c] += sign * t
        for j in range(ns):
            alpha[sidx[j]] += sign * beta[o + j] * t
        for i in range(n):
            h[i] += gamma[i] * t
        for j in range(ns):
            h[sidx[j]] = 0.0
        db = sign * bb * t
    return event, k, t, db


def r_expand(double[:, ::1] R, Py_ssize_t m, const double[::1] v, double qkk,
             double threshold, double[::1] beta):
    """Border R (the inverse of an m×m matrix A) with a new row and column v, qkk.

    β = −R v and the Schur complement κ = qkk + vᵀβ; when κ > threshold, R becomes the
    inverse of the bordered matrix, ``[[R, 0], [0, 0]] + [β; 1][β; 1]ᵀ / κ``. Returns κ
    (R is left unchanged when κ ≤ threshold).
    """
    cdef Py_ssize_t i, j
    cdef int mm = <int>m, one = 1, ldr = <int>R.shape[1]
    cdef double minus1 = -1.0, zero = 0.0, kappa = qkk, inv
    cdef char tr = b'T'
    with nogil:
        if m > 0:
            dgemv(&tr, &mm, &mm, &minus1, &R[0, 0], &ldr, <double*>&v[0], &one, &zero,
                  &beta[0], &one)
        for i in range(m):
            kappa += v[i] * beta[i]
        if kappa > threshold:
            inv = 1.0 / kappa
            beta[m] = 1.0
            for i in range(m + 1):
                for j in range(m + 1):
                    if i == m or j == m:
                        R[i, j] = beta[i] * beta[j] * inv
                    else:
                        R[i, j] += beta[i] * beta[j] * inv
    return kappa


def r_contract(double[:, ::1] R, Py_ssize_t m, Py_ssize_t q):
    """Remove row and column q from the inverse R of an m×m matrix A (the inverse of A
    without row and column q): R_ij −= R_iq R_qj / R_qq; the last row and column then move
    into place q, and row and column m − 1 are zeroed."""
    cdef Py_ssize_t i, j, last = m - 1
    cdef double rqq = R[q, q], f
    with nogil:
        for i in range(m):
            if i == q:
                continue
            f = R[i, q] / rqq
            for j in range(m):
                if j != q:
                    R[i, j] -= f * R[q, j]
        if q != last:
            for j in range(m):
                R[q, j] = R[last, j]
            for i in range(m):
                R[i, q] = R[i, last]
        for j in range(m):
            R[last, j] = 0.0
            R[j, last] = 0.0
