"""Compiled prequential block loop of NORMA (Kivinen, Smola and Williamson) for scalar scores.

The ω most recent non-zero terms are kept in a circular buffer. The shrinking
f ← (1 − ηc) f is done lazily: stored coefficients are a_j and the true ones are
scale·a_j, so one step costs one kernel row and no pass over the buffer.
"""
include "_kernel_ops.pxi"
include "_loss_ops.pxi"

from libc.math cimport sqrt

cdef enum:
    S_CONSTANT = 0
    S_INV_SQRT = 1
    S_DECAY_TAU = 2


cdef inline double _step(int schedule, double eta0, double tau, double t) noexcept nogil:
    """η_t with t the number of examples seen before this one (so the first step is η0)."""
    if schedule == S_CONSTANT:
        return eta0
    elif schedule == S_INV_SQRT:
        return eta0 / sqrt(t + 1.0)
    return eta0 * sqrt(tau / (tau + t))


def norma_block(int kind, double gamma, double scale, double offset, double degree,
                int loss_kind, double loss_p1, int schedule, double eta0, double tau,
                double c, bint use_offset, bint regression,
                double[:, ::1] SV, double[::1] sq, double[::1] a, double[::1] state,
                const double[:, ::1] X, const double[::1] y, double[::1] pred,
                double[::1] krow):
    """Predict then learn every row of X.

    ``state`` holds ``[m, head, t, coef_scale, b, kernel_evals]`` and is updated in place.
    Binary predictions are ±1 (sign of f + b, ties to +1); regression predicts f + b.
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], cap = SV.shape[0], i, j, slot
    cdef Py_ssize_t m = <Py_ssize_t>state[0], head = <Py_ssize_t>state[1]
    cdef double t = state[2], cs = state[3], b = state[4], evals = state[5]
    cdef double f, xi, eta, xsq, shrink
    with nogil:
        for i in range(n):
            xsq = _dot(&X[i, 0], &X[i, 0], <int>d) if d > 0 else 0.0
            _kernel_row(kind, gamma, scale, offset, degree, &SV[0, 0], m, d, &sq[0],
                        &X[i, 0], xsq, &krow[0])
            evals += m
            f = (cs * _dot(&krow[0], &a[0], <int>m) if m > 0 else 0.0) + b
            if regression:
                pred[i] = f
            else:
                pred[i] = 1.0 if f >= 0.0 else -1.0
            xi = _loss_deriv(loss_kind, f, y[i], loss_p1)
            eta = _step(schedule, eta0, tau, t)
            shrink = 1.0 - eta * c
            cs *= shrink
            if cs < 1e-200:  # fold the global scale into the coefficients before it underflows
                for j in range(m):
                    a[j] *= cs
                cs = 1.0
            if xi != 0.0:
                if m < cap:
                    slot = m
                    m += 1
                else:
                    slot = head
                    head = (head + 1) % cap
                memcpy(&SV[slot, 0], &X[i, 0], d * sizeof(double))
                sq[slot] = xsq
                a[slot] = -eta * xi / cs
                if use_offset:
                    b -= eta * xi
            t += 1.0
    state[0] = m
    state[1] = head
    state[2] = t
    state[3] = cs
    state[4] = b
    state[5] = evals
