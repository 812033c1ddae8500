"""Compiled prequential block loop of ALMA₂ with kernels (Gentile 2001, JMLR 2, ALMA_p with
p = 2), binary.

The weight w = Σ_i α_i φ(x_i) lives in the kernel form; every instance enters normalized,
x̂ = φ(x)/‖φ(x)‖, ‖φ(x)‖² = k(x, x). On the k-th update (k = 1, 2, …), made when
y w·x̂ ≤ (1 − α) γ_k, γ_k = B/√k: w′ = w + η_k y x̂, η_k = C/√k, then w is projected onto
the unit ball, w ← w′/max(1, ‖w′‖). ‖w‖² is tracked (‖w′‖² = ‖w‖² + 2η_k y w·x̂ + η_k²) and
the projection scales every coefficient. ``state`` holds k and ‖w‖².
"""
cimport numpy as cnp
from libc.math cimport sqrt

from kbench.cython_core._loop cimport *
from kbench.cython_core._arrays cimport _f64
from kbench.cython_core._labels cimport _sign_label

cnp.import_array()


def alma_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
               bint have_row=False, double kxx=0.0, *, state, double alpha, double B,
               double C):
    """Predict then learn rows start, start+1, … of ``rows`` (labels ±1). Calling convention
    and result as :func:`kbench.cython_core._perceptron.perceptron_block`; ``state`` is a
    float64 array (k, ‖w‖²), updated in place; ``alpha`` ∈ (0, 1], ``B`` and ``C`` > 0 are
    the paper's."""
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "ALMA2 is binary (got {} columns)")
    if not (0 < alpha <= 1 and B > 0 and C > 0):
        raise ValueError("kbench: ALMA2 needs 0 < alpha <= 1, B > 0, C > 0")
    cdef Py_ssize_t ns[1]
    ns[0] = 0
    cdef double* S = _f64(state, 1, True, "state", ns)
    if ns[0] != 2:
        raise ValueError("kbench: ALMA2's state is (k, |w|^2)")
    cdef double* a = A.alpha
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, j
    cdef long long evals = 0
    cdef double f, xsq, kx, nx, margin, eta, wsq, scale, before, counted = 0.0
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, A.krow)
            f = _dot(A.krow, a, <int>m) if m > 0 else 0.0
            A.pred[i] = _sign_label(f)
            before = counted
            kx = _self_at(&R, i, xsq, have_row and i == 0, kxx, &counted)
            if kx > 0.0:  # φ(x) = 0 has no direction to normalize
                nx = sqrt(kx)
                margin = A.y[i] * f / nx
                if margin <= (1.0 - alpha) * B / sqrt(S[0]):
                    if _store_full(m, A.cap, have_row and i == 0, &evals, m):
                        counted = before
                        break
                    eta = C / sqrt(S[0])
                    _store_at(&R, i, m)
                    R.sq[m] = xsq
                    a[m] = eta * A.y[i] / nx
                    m += 1
                    wsq = S[1] + 2.0 * eta * margin + eta * eta
                    if wsq > 1.0:  # the projection onto the unit ball
                        scale = 1.0 / sqrt(wsq)
                        for j in range(m):
                            a[j] *= scale
                        wsq = 1.0
                    S[1] = wsq
                    S[0] += 1.0
            i += 1
    return i, m, evals + <long long>counted
