"""Compiled POLK, the prequential block loop (Koppel et al. 2017; kbench specs/004).

``polk_block`` predicts then learns rows, dense or CSR, over the learner toolkit's store:
each example's kernel row against the dictionary and the pending points, its scores over
the dictionary, its loss gradient, and, when a mini-batch is full, the POLK step of
:mod:`kbench.cython_core._polk_model`, the probe of the inverse and its refresh.

The store holds the M atoms, then the pending points of the mini-batch (the examples with
a non-zero gradient since the last update, coefficients zero), so that ``store.size`` is
M + nstored between calls: the pending points' rows stay in the store across calls, dense
or CSR, and an example's kernel row, computed once, gives both its row over the atoms and
its kernel values with the pending points before it (the batch's Gram block). The update
moves the points it appends down into the dictionary and frees the others.
"""
cimport numpy as cnp
from libc.string cimport memcpy

from kbench.cython_core._loop cimport *
from kbench.cython_core._online_ops cimport (
    Cfg, OnlineConfig, _check_given, _predict, _row_gradient, _self_kernel,
)
from kbench.cython_core._polk_model cimport (
    Model, PolkState, _attach, _probe_index, _probe_residual, _refresh, _refresh_due,
    _update, _w_a, _w_k,
)

cnp.import_array()


cdef inline void _finish(const LoopRows* R, PolkState st, long long* evals) noexcept nogil:
    """The update of a full mini-batch: the POLK step, then the probe of the inverse and
    its refresh when due; with a kernel the loop cannot compute, ``st.probe_due`` instead
    (the caller probes)."""
    cdef Model* mo = &st.mo
    cdef Py_ssize_t M, j, i
    cdef double probe = 0.0
    cdef double* krow = _w_k(mo)
    _update(st, R)
    M = st.m
    if mo.R == NULL or M == 0:
        return
    if R.kind < 0:
        st.probe_due = True
        return
    if st.rtol > 0.0:
        j = _probe_index(mo.G, M, mo.cap)
        evals[0] += _stored_row_at(R, j, M, krow)
        probe = _probe_residual(mo.G, M, mo.cap, krow, j, _w_a(mo))
        st.probe_residual = probe
    if _refresh_due(st, probe):
        for i in range(M):
            evals[0] += _stored_row_at(R, i, M, mo.R + i * mo.cap)
        if _refresh(mo.G, mo.R, M, mo.cap):
            st.refreshes += 1
        else:
            st.refresh_failures += 1


def polk_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
               bint have_row=False, double kxx=0.0, *, OnlineConfig cfg not None,
               PolkState state not None, double[::1] scores not None,
               const double[::1] xi_given=None):
    """POLK on rows start, start+1, … of ``rows``; the store holds the atoms, then the
    pending points.

    ``cfg`` gives the task, the loss and its C outputs, ``scores`` scratch of 3·C entries;
    ``xi_given`` the loss gradient of a loss without a compiled form (one row a call). Each
    row: its kernel row over the atoms and the pending points (into the state's ``Kb``),
    the scores over the atoms and the prediction, the gradient, and when it is not zero the
    row stored after the pending points; after B rows the update (:func:`_finish`). A
    kernel the loop cannot compute comes with the row (``have_row``, ``kxx``) and leaves
    the probe to the caller (``state.probe_due``, and the loop stops after the update).
    Calling convention and result as :func:`kbench.cython_core._perceptron.perceptron_block`,
    ``size`` being M + nstored.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A)
    cdef Cfg g = cfg.c
    cdef Py_ssize_t C = g.C, n = rows.n, cap = A.cap, i = start, c, M, ns
    if A.C != C or scores.shape[0] < 3 * C:
        raise ValueError(f"kbench: POLK needs a store of {C} columns and 3·{C} scores")
    if state.m + state.nstored != A.m:
        raise ValueError(f"kbench: POLK's store holds {A.m} rows, its state "
                         f"{state.m + state.nstored}")
    _check_given(xi_given, C, n - start, g.loss < 0)
    cdef Model* mo = _attach(state, cap, C, A.alpha, R.sq)
    cdef double* F = &scores[0]
    cdef double* xi = &scores[C]
    cdef double* chi = &scores[2 * C]
    cdef double* kb
    cdef const double* Y = A.y
    cdef double* P = A.pred
    cdef long long evals = 0
    cdef double xsq
    cdef bint first, nonzero
    cdef const double* given = &xi_given[0] if xi_given is not None else NULL
    state.probe_due = False
    with nogil:
        while i < n:
            first = have_row and i == 0
            M = state.m
            ns = state.nstored
            kb = mo.Kb + ns * cap
            evals += _row_at(&R, i, M + ns, first, &xsq, kb)
            if first:
                memcpy(kb, A.krow, (M + ns) * sizeof(double))
            _expansion(kb, mo.W, M, C, 1.0, F)
            nonzero = _row_gradient(&g, F, Y[i], given, xi, chi)
            if nonzero and _store_full(M + ns, cap, first, &evals, M + ns):
                break
            P[i] = _predict(&g, F, g.margin)
            if nonzero:
                _store_at(&R, i, M + ns)
                R.sq[M + ns] = xsq
                for c in range(C):
                    mo.W[(M + ns) * C + c] = 0.0
                    mo.XI[ns * C + c] = xi[c]
                # k(x, x): the given one of a kernel the loop cannot compute.
                mo.kdb[ns] = kxx if R.kind < 0 else _self_kernel(&g, NULL, 0, xsq)
                mo.idb[ns] = <double>state.t
                state.nstored = ns + 1
            state.t += 1
            state.nseen += 1
            i += 1
            if state.nseen == state.B:
                _finish(&R, state, &evals)
                if state.probe_due:
                    break
    return i, state.m + state.nstored, evals
