"""Compiled POLK, the prequential block loop (Koppel et al. 2017; kbench specs/004).

``polk_block`` predicts then learns the rows of a dense block with a compiled kernel and
loss: each example's kernel row against the dictionary and its scores, its loss gradient,
and, when a mini-batch is full, the batch Gram block, the POLK step of
:mod:`kbench.cython_core._polk_model`, the probe of the inverse and its refresh. The
kernel computations the per-example Python path needs (the dictionary's Gram matrix, the
batch Gram block, the loss gradient and κ(x, x)) are here too, so that both paths do the
same arithmetic. The kernel crosses as a :class:`~kbench.cython_core._kernels.KernelSpec`.
"""
from libc.string cimport memcpy

from kbench.cython_core._kernels cimport KernelSpec, _kernel_row
from kbench.cython_core._online_ops cimport Cfg, OnlineConfig, _gradient, _predict, _row_scores, _self_kernel
from kbench.cython_core._online_ops import compiled_gradient, compiled_self_kernel
from kbench.cython_core._polk_model cimport (Model, PolkState, _bound, _probe_index,
                                            _probe_residual, _refresh, _refresh_due, _update,
                                            _w_a, _w_k)


cdef inline void _gram(KernelSpec k, const double* D, const double* sq, Py_ssize_t M,
                       Py_ssize_t d, Py_ssize_t ld, double* R) noexcept nogil:
    """R[i, :M] = κ(D[:M], D[i]) for i < M (row stride ld), one kernel row per atom."""
    cdef Py_ssize_t i
    for i in range(M):
        _kernel_row(k.kind, k.gamma, k.scale, k.offset, k.degree, D, M, d, sq, D + i * d,
                    sq[i], R + i * ld)


cdef inline void _batch_gram(KernelSpec k, const double* Xb, const double* xsqb,
                             Py_ssize_t d, Py_ssize_t ns, Py_ssize_t B,
                             double* Kbb) noexcept nogil:
    """Kbb[b, :b] = κ(Xb[:b], x_b): the kernel between the pending points, one row each."""
    cdef Py_ssize_t b
    for b in range(1, ns):
        _kernel_row(k.kind, k.gamma, k.scale, k.offset, k.degree, Xb, b, d, xsqb,
                    Xb + b * d, xsqb[b], Kbb + b * B)


cdef inline void _finish(KernelSpec k, PolkState st) noexcept nogil:
    """The compiled-kernel update of a full mini-batch: batch Gram block, POLK step, the
    probe of the inverse, and its refresh when due."""
    cdef Model* mo = &st.mo
    cdef Py_ssize_t ns = st.nstored, M, j
    cdef double probe = 0.0
    cdef double* krow = _w_k(mo)
    _batch_gram(k, mo.Xb, mo.xsqb, mo.d, ns, st.B, mo.Kbb)
    st.kernel_evals += ns * (ns - 1) // 2
    _update(st)
    M = st.m
    if mo.R == NULL or M == 0:
        return
    if st.rtol > 0.0:
        j = _probe_index(mo.G, M, mo.cap)
        _kernel_row(k.kind, k.gamma, k.scale, k.offset, k.degree, mo.D, M, mo.d, mo.sq,
                    mo.D + j * mo.d, mo.sq[j], krow)
        st.kernel_evals += M
        probe = _probe_residual(mo.G, M, mo.cap, krow, j, _w_a(mo))
        st.probe_residual = probe
    if _refresh_due(st, probe):
        _gram(k, mo.D, mo.sq, M, mo.d, mo.cap, mo.R)
        st.kernel_evals += M * M
        if _refresh(mo.G, mo.R, M, mo.cap):
            st.refreshes += 1
        else:
            st.refresh_failures += 1


def polk_block(KernelSpec kernel not None, const double[:, ::1] X, const double[::1] y,
               double[::1] pred, Py_ssize_t start, *, OnlineConfig cfg not None,
               PolkState state not None, double[::1] scores):
    """Predict then learn rows start, start+1, … of X (compiled kernel and loss).

    ``state`` holds the settings, the running state and the bound arrays (the dictionary
    and the pending mini-batch, which persist between calls, and the scratch); ``cfg``
    gives the task, the loss and its C outputs, ``scores`` scratch of 3·C entries. A batch
    whose update does not fit the capacity sets ``state.update_due`` and returns; the
    caller grows the arrays and calls again from the returned index, and the pending
    update runs first. Returns the index of the first row not processed.
    """
    cdef Cfg g = cfg.c
    cdef Model* mo = _bound(state)
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], C = mo.C, cap = mo.cap, i, c, M, ns
    cdef double xsq
    cdef double* F = &scores[0]
    cdef double* xi = &scores[C]
    cdef double* chi = &scores[2 * C]
    cdef bint nonzero
    if kernel.kind < 0 or g.loss < 0:
        raise ValueError("kbench: polk_block needs a compiled kernel and loss")
    # The kernel is the spec's: the rows and scores below read it from g.
    g.kind, g.gamma, g.scale, g.offset, g.degree = (
        kernel.kind, kernel.gamma, kernel.scale, kernel.offset, kernel.degree)
    if scores.shape[0] < 3 * C or C != g.C:
        raise ValueError("kbench: polk_block state or scratch has the wrong size")
    if n and (d != mo.d or y.shape[0] < n or pred.shape[0] < n):
        raise ValueError("kbench: polk_block got arrays of the wrong size")
    i = start
    if state.update_due:
        if state.m + state.nstored > cap:
            return i
        with nogil:
            _finish(kernel, state)
        state.update_due = False
    with nogil:
        while i < n:
            M = state.m
            ns = state.nstored
            state.kernel_evals += <Py_ssize_t>_row_scores(
                &g, mo.D, mo.sq, M, d, &X[i, 0], &xsq, mo.Kb + ns * cap, mo.W, C, F)
            pred[i] = _predict(&g, F, g.margin)
            _gradient(&g, 0.0, F, F, y[i], xi, chi)
            nonzero = False
            for c in range(C):
                if xi[c] != 0.0:
                    nonzero = True
            if nonzero:
                memcpy(mo.Xb + ns * d, &X[i, 0], d * sizeof(double))
                mo.xsqb[ns] = xsq
                mo.kdb[ns] = _self_kernel(&g, &X[i, 0], d, xsq)
                for c in range(C):
                    mo.XI[ns * C + c] = xi[c]
                mo.idb[ns] = <double>state.t
                state.nstored = ns + 1
            state.t += 1
            state.nseen += 1
            i += 1
            if state.nseen == state.B:
                if M + state.nstored > cap:
                    state.update_due = True
                    break
                _finish(kernel, state)
    return i


def polk_gram(KernelSpec kernel not None, const double[:, ::1] D, const double[::1] sq,
              Py_ssize_t M, double[:, ::1] R):
    """R[:M, :M] = K_DD for a compiled kernel, computed as the block loop computes it."""
    if kernel.kind < 0:
        raise ValueError("kbench: polk_gram needs a compiled kernel")
    if M < 0 or M > D.shape[0] or R.shape[0] < M or R.shape[1] < M or sq.shape[0] < M:
        raise ValueError("kbench: polk_gram got arrays smaller than M")
    if M == 0:
        return
    with nogil:
        _gram(kernel, &D[0, 0] if D.shape[1] else NULL, &sq[0], M, D.shape[1], R.shape[1],
              &R[0, 0])


def polk_batch_gram(KernelSpec kernel not None, double[:, ::1] Xb, double[::1] xsqb,
                    Py_ssize_t ns, double[:, ::1] Kbb):
    """Kbb[b, :b] = κ(Xb[:b], x_b) for b < ns (compiled kernel), as the block loop does."""
    if kernel.kind < 0:
        raise ValueError("kbench: polk_batch_gram needs a compiled kernel")
    if ns < 0 or ns > Xb.shape[0] or Kbb.shape[0] != Xb.shape[0] or Kbb.shape[1] != Xb.shape[0]:
        raise ValueError("kbench: polk_batch_gram array shapes do not match")
    if ns < 2:
        return
    with nogil:
        _batch_gram(kernel, &Xb[0, 0] if Xb.shape[1] else NULL, &xsqb[0], Xb.shape[1], ns,
                    Xb.shape[0], &Kbb[0, 0])


# The per-example path's gradient and κ(x, x), shared with PiSTOL.
polk_gradient = compiled_gradient
polk_self_kernel = compiled_self_kernel
