"""Compiled prequential block loop of bounded online gradient descent (BOGD), binary."""
from libc.math cimport fabs
from libc.stdint cimport uint64_t

from kbench.cython_core._kernels cimport _expansion
from kbench.cython_core._labels cimport _sign_label
from kbench.cython_core._budget_ops cimport _fold_scale, _rng_below, _rng_uniform
from kbench.cython_core._losses cimport _loss_deriv
from kbench.cython_core._sparse cimport LoopRows, _row_at, _rows_of, _store_at


cdef enum:
    NOT_COMPILED = -1  # a third-party kernel (or loss): values come from Python


def bogd_block(kernel,
               double[:, ::1] SV, double[::1] sq, double[::1] a, double[::1] state,
               uint64_t[::1] rng, double eta, double lam, bint weighted,
               int loss_kind, double loss_p1,
               const double[:, ::1] X, const double[::1] y, double[::1] pred,
               double[::1] krow, bint have_row, double g_given, sparse=None):
    """BOGD (Zhao et al. 2012) on every row of X.

    ``state`` = ``[m, cs, kernel_evals, removals]``: the true coefficients are cs·a[j].
    Each step: g = ℓ'(f(x), y); f ← (1 − ηλ) f; if g ≠ 0 and B vectors are stored, remove
    one, r, drawn uniformly (or with probability p_j = (1 − |α_j|/Σ|α|)/(B − 1) when
    ``weighted``) and rescale the others by 1/(1 − p_j) so that the expected function is
    unchanged; then add x with coefficient −ηg. With ``loss_kind`` < 0 the derivative of the
    first row is ``g_given`` (a loss without a compiled form, per-example path).
    ``sparse``: CSR rows, as for :func:`kbench.cython_core._budget_perceptrons.rbp_block`.
    """
    cdef LoopRows R = _rows_of(kernel, SV, sq, X, sparse)
    cdef Py_ssize_t n = X.shape[0], B = SV.shape[0]
    cdef Py_ssize_t m = <Py_ssize_t>state[0], i, j, r
    cdef double cs = state[1], evals = state[2], removals = state[3]
    cdef double f, xsq, g, total, u, acc, pj
    with nogil:
        for i in range(n):
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, &krow[0])
            _expansion(&krow[0], &a[0], m, 1, cs, &f)
            pred[i] = _sign_label(f)
            if loss_kind == NOT_COMPILED:
                g = g_given
            else:
                g = _loss_deriv(loss_kind, f, y[i], loss_p1)
            cs *= 1.0 - eta * lam
            if g == 0.0:
                continue
            if m < B:
                r = m
                m += 1
            else:
                removals += 1.0
                total = 0.0
                if weighted:
                    for j in range(m):
                        total += fabs(a[j])
                if not weighted or total <= 0.0:
                    r = _rng_below(&rng[0], B)
                    cs *= <double>B / <double>(B - 1)
                else:
                    u = _rng_uniform(&rng[0])
                    acc = 0.0
                    r = m - 1
                    for j in range(m):
                        acc += (1.0 - fabs(a[j]) / total) / <double>(B - 1)
                        if u < acc:
                            r = j
                            break
                    for j in range(m):
                        if j == r:
                            continue
                        pj = (1.0 - fabs(a[j]) / total) / <double>(B - 1)
                        if pj < 1.0:
                            a[j] /= 1.0 - pj
            _store_at(&R, i, r)
            sq[r] = xsq
            a[r] = -eta * g / cs
            if cs < 1e-200 or cs > 1e200:
                cs = _fold_scale(&a[0], m, cs)
    state[0] = m
    state[1] = cs
    state[2] = evals
    state[3] = removals
