"""Compiled prequential block loop of the budget passive–aggressive learner BPA-S (binary)."""
from kbench.cython_core._labels cimport _sign_label
from kbench.cython_core._sparse cimport LoopRows, _rows_of, _scores_at, _self_at, _store_at


def bpa_s_block(kernel,
                double[:, ::1] SV, double[::1] sq, double[::1] a, double[::1] kdiag,
                double[::1] state, double C,
                const double[:, ::1] X, const double[::1] y, double[::1] pred,
                double[::1] krow, bint have_row, double kxx_given, sparse=None):
    """BPA-S (Wang and Vucetic 2010) on every row of X.

    ``state`` = ``[m, kernel_evals, removals]``; ``kdiag[j]`` = k(x_j, x_j). On a hinge loss
    ℓ = 1 − y f(x) > 0: τ = min(C, ℓ / k(x, x)); below the budget x is added with α = τy;
    at the budget the support vector r minimising α_r² (k(x_r, x_r) − k(x_r, x)²/k(x, x))
    is replaced by x with α = τy + α_r k(x_r, x)/k(x, x). ``sparse``: CSR rows, as for
    :func:`kbench.cython_core._budget_perceptrons.rbp_block`.
    """
    cdef LoopRows R = _rows_of(kernel, SV, sq, X, sparse)
    cdef Py_ssize_t n = X.shape[0], B = SV.shape[0]
    cdef Py_ssize_t m = <Py_ssize_t>state[0], i, j, r
    cdef double evals = state[1], removals = state[2]
    cdef double f, xsq, kxx, loss, tau, cost, best, beta
    with nogil:
        for i in range(n):
            evals += _scores_at(&R, i, m, have_row and i == 0, &xsq, &krow[0], &a[0], 1, 1.0, &f)
            pred[i] = _sign_label(f)
            loss = 1.0 - y[i] * f
            if loss <= 0.0:
                continue
            kxx = _self_at(&R, i, xsq, have_row and i == 0, kxx_given, &evals)
            if kxx <= 0.0:
                continue  # k(x, ·) = 0: there is no direction to move in
            tau = loss / kxx
            if tau > C:
                tau = C
            if m < B:
                _store_at(&R, i, m)
                sq[m] = xsq
                a[m] = tau * y[i]
                kdiag[m] = kxx
                m += 1
                continue
            r = 0
            best = 0.0
            for j in range(m):
                cost = a[j] * a[j] * (kdiag[j] - krow[j] * krow[j] / kxx)
                if j == 0 or cost < best:
                    best = cost
                    r = j
            beta = tau * y[i] + a[r] * krow[r] / kxx
            _store_at(&R, i, r)
            sq[r] = xsq
            a[r] = beta
            kdiag[r] = kxx
            removals += 1.0
    state[0] = m
    state[1] = evals
    state[2] = removals
