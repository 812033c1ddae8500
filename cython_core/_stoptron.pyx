"""Compiled prequential block loop of two budget kernel perceptrons (binary): the Stoptron
(Orabona, Keshet and Caputo 2009), which stops learning once B support vectors are stored,
and the remove-oldest perceptron, whose mistakes beyond B overwrite the oldest one.

Both are the kernel perceptron below the budget: on a mistake, y f(x) ≤ 0, x is stored
with α = y. The remove-oldest loop keeps the stored rows as a ring: ``state[0]`` is the
slot of the oldest once B rows are stored.
"""
cimport numpy as cnp

from kbench.cython_core._loop cimport *
from kbench.cython_core._arrays cimport _f64
from kbench.cython_core._labels cimport _sign_label

cnp.import_array()


def budget_perceptron_block(kernel, BlockRows rows not None, store, y, pred,
                            Py_ssize_t start=0, bint have_row=False, double kxx=0.0, *,
                            state, Py_ssize_t budget, bint oldest):
    """Predict then learn rows start, start+1, … of ``rows`` (labels ±1). Calling convention
    and result as :func:`kbench.cython_core._perceptron.perceptron_block`; ``budget`` ≥ 1 is
    B; ``oldest``: replace the oldest support vector when full (else stop learning);
    ``state`` a float64 array holding the oldest slot, updated in place."""
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A,
                      "the budget perceptrons are binary (got {} columns)")
    if budget < 1:
        raise ValueError(f"kbench: a budget must be at least 1, got {budget}")
    cdef Py_ssize_t ns[1]
    ns[0] = 0
    cdef double* S = _f64(state, 1, True, "state", ns)
    if ns[0] != 1:
        raise ValueError("kbench: the budget perceptron's state is (oldest slot,)")
    cdef Py_ssize_t m = A.m, n = rows.n, i = start, slot
    cdef long long evals = 0
    cdef double f, xsq
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, A.krow)
            f = _dot(A.krow, A.alpha, <int>m) if m > 0 else 0.0
            A.pred[i] = _sign_label(f)
            if A.y[i] * f <= 0.0 and (m < budget or oldest):
                if m < budget:
                    if _store_full(m, A.cap, have_row and i == 0, &evals, m):
                        break
                    slot = m
                    m += 1
                else:
                    slot = <Py_ssize_t>S[0]
                    S[0] = <double>((slot + 1) % budget)
                _store_at(&R, i, slot)
                R.sq[slot] = xsq
                A.alpha[slot] = A.y[i]
            i += 1
    return i, m, evals
