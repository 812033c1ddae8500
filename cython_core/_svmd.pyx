"""Compiled SVMD (Vishwanathan, Schraudolph and Smola 2006): SMD step sizes in an RKHS.

Each buffer row j holds x_j and the coefficients [α_j | β_j] of f and of the gradient
trace v, so ONE kernel row k of the new example gives both F = kᵀA and V = kᵀB through
one matrix–vector product. The step size η is adapted with ⟨g_t, v_t⟩ = cπ + ξᵀV, where
π = ⟨f, v⟩ and N = ‖f‖² are kept by the linear-time recursions of the paper (eqs. 48–52),
extended with the Hessian term χ = Λ·V of smooth losses (eqs. 44–45) and, optionally,
corrected exactly when the circular buffer evicts an entry. Offsets (eqs. 53–55) and the
ν-trick's margin ε (eqs. 57–61, in the generalised form of the kbench spec) have step
sizes of their own.

``svmd_block`` runs the prequential loop for compiled kernels and losses; ``svmd_apply``
is the update alone, given the gradient, which the learner's Python path calls after
evaluating the loss plugin. ``py_gradient`` exposes the compiled loss gradients for tests.
"""
from kbench.cython_core._kernels cimport _expansion, _kernel_row
from kbench.cython_core._online_ops cimport (
    Cfg, L_PYTHON, Model, NU_MARGIN, NU_OFF, OnlineConfig, _clipped_exp, _gradient, _predict,
    _ring_slot, _row_scores, _self_kernel, model_of,
)
from kbench.cython_core._sparse cimport (
    SparseRows, _attach, _block_stored_row, _copy_at,
)


# Indices of the state array. Keep STATE_FIELDS in the same order.
cdef enum:
    V_M = 0
    V_HEAD = 1
    V_T = 2
    V_EVALS = 3
    V_ETA = 4
    V_PI = 5
    V_N = 6
    V_EPS = 7
    V_ETA_EPS = 8
    V_V_EPS = 9
    V_VIOL = 10
    V_ETAC = 11
    V_GV = 12
    V_EVICT = 13
    V_SIZE = 14

STATE_FIELDS = ("m", "head", "t", "kernel_evals", "eta", "pi", "norm_sq", "eps", "eta_eps",
                "v_eps", "violations", "steps_eta_c_ge_1", "gv", "evictions")


cdef inline double _smd_factor(double u) noexcept nogil:
    """max(½, u), the linearised exp of eq. 4, except that NaN stays NaN: a diverged
    ⟨g, v⟩ must show in η rather than pass for a halving."""
    return 0.5 if u < 0.5 else u


cdef inline bint _inserts(const Cfg* g, const double* xi, const double* chi) noexcept nogil:
    """Whether the step stores a term: α_t = −ηξ or β_t = −η(ξ + λχ) is non-zero."""
    cdef Py_ssize_t c
    for c in range(g.C):
        if xi[c] != 0.0 or (g.lam != 0.0 and chi[c] != 0.0):
            return True
    return False


cdef inline void _svmd_update(const Cfg* g, double* st, double* off, double* SV, double* sq,
                              double* AB, Py_ssize_t d, Py_ssize_t cap, const double* k,
                              const double* kj, const double* x, double xsq, double kxx,
                              const double* FV, const double* xi, const double* chi, int s,
                              double* V1, double* fv, SparseRows* sp,
                              Py_ssize_t ix) noexcept nogil:
    """One SVMD step after the prediction, in the order of the paper's Algorithm 2.

    k is this example's kernel row over the m stored rows, FV = [F | V] the scores of f
    and v at x before the step (offsets excluded), ξ and χ the loss gradient and
    Hessian–trace product at F + b, s the margin-violation indicator. kj is the kernel
    row of the oldest stored row, needed only with the exact eviction correction when the
    buffer is full. V1 receives v_{t+1}(x_t) (C entries); fv is scratch of 4C entries.
    With sparse rows ``sp``, x is example ix's mark and its CSR row is stored too.
    """
    cdef Py_ssize_t C = g.C, C2 = 2 * g.C, m = <Py_ssize_t>st[V_M]
    cdef Py_ssize_t head = <Py_ssize_t>st[V_HEAD], c, i, slot
    cdef const double* F = FV
    cdef const double* V = FV + C
    cdef double* row
    cdef double gv, eta, a, al, ec, lam = g.lam, cc = g.c, pi = st[V_PI], N = st[V_N]
    cdef double xF = 0.0, cF = 0.0, xx = 0.0, xV1 = 0.0, fg, fv1, alpha, kjt, kjj
    cdef double eb, ge, ee, ee_old, sg
    cdef bint evicting
    # (b) iii: ⟨g_t, v_t⟩ = c π_t + ξᵀ V_t (eq. 48).
    gv = cc * pi
    for c in range(C):
        gv += xi[c] * V[c]
    st[V_GV] = gv
    # (c) i: η_t = η_{t−1} max(½, 1 − μ ⟨g_t, v_t⟩) (eq. 36), adapted before use.
    eta = st[V_ETA] * _smd_factor(1.0 - g.mu * gv)
    if eta > g.eta_max:
        eta = g.eta_max
    st[V_ETA] = eta
    ec = eta * cc
    if ec >= 1.0:
        st[V_ETAC] += 1.0  # 1 − ηc ≤ 0: the step flips or cancels f; counted for the report
    a = 1.0 - ec
    al = a * lam
    # (d): incrementals from F, V, π, N before the coefficients change (eqs. 49–52, with
    # the Hessian term −ηλχ on the new trace row, spec §1.4).
    for c in range(C):
        xF += xi[c] * F[c]
        cF += chi[c] * F[c]
        xx += xi[c] * xi[c]
    fg = cc * N + xF                                   # ⟨f_t, g_t⟩ (eq. 51)
    fv1 = al * pi - eta * fg - eta * lam * cF          # ⟨f_t, v_{t+1}⟩ (eq. 50)
    for c in range(C):                                 # v_{t+1}(x_t), closed form
        V1[c] = al * V[c] - eta * (cc * F[c] + kxx * xi[c]) - eta * lam * kxx * chi[c]
        xV1 += xi[c] * V1[c]
    pi = a * fv1 - eta * xV1                           # π_{t+1} (eq. 49)
    N = a * a * N - 2.0 * eta * a * xF + eta * eta * kxx * xx   # ‖f_{t+1}‖² (eq. 52)
    if N < 0.0:
        N = 0.0
    # (c) iii and (e): old rows β ← (1 − ηc)λβ − ηcα with the OLD α (eq. 43), then
    # α ← (1 − ηc)α (eq. 35).
    for i in range(m):
        row = AB + i * C2
        for c in range(C):
            alpha = row[c]
            row[C + c] = al * row[C + c] - ec * alpha
            row[c] = a * alpha
    if _inserts(g, xi, chi):
        for c in range(C):
            fv[c] = -eta * xi[c]                       # α_t
            fv[C + c] = -eta * (xi[c] + lam * chi[c])  # β_t (eq. 45)
        evicting = m >= cap
        slot = _ring_slot(&m, &head, cap, &st[V_EVICT])
        if evicting and g.exact:
            # Remove the evicted term from π and N exactly (spec §1.8): with the
            # buffer before eviction (the updated old rows and the new term),
            # N ← N − 2α_jᵀf(x_j) + k_jj α_jᵀα_j and
            # π ← π − α_jᵀv(x_j) − β_jᵀf(x_j) + k_jj α_jᵀβ_j.
            kjt = k[slot]
            kjj = kj[slot]
            row = AB + slot * C2
            _expansion(kj, AB, m, C2, 1.0, fv + C2)        # [f | v](x_j), old terms
            for c in range(C2):
                fv[C2 + c] += fv[c] * kjt                  # plus the new term
            for c in range(C):
                N -= 2.0 * row[c] * fv[C2 + c] - kjj * row[c] * row[c]
                pi -= (row[c] * fv[C2 + C + c] + row[C + c] * fv[C2 + c]
                       - kjj * row[c] * row[C + c])
            if N < 0.0:
                N = 0.0
        _copy_at(sp, ix, SV, slot, x, d)
        sq[slot] = xsq
        row = AB + slot * C2
        for c in range(C2):
            row[c] = fv[c]
    st[V_PI] = pi
    st[V_N] = N
    # Offsets (eqs. 53–55): per-class step sizes and traces, adapted with the same μ, λ.
    if g.use_offset:
        for c in range(C):
            eb = off[C + c] * _smd_factor(1.0 - g.mu * xi[c] * off[2 * C + c])
            off[C + c] = eb
            off[2 * C + c] = lam * off[2 * C + c] - eb * xi[c]
            off[c] -= eb * xi[c]
    # ν-trick (eqs. 57–61 generalised): g_ε = ε(s − ν) for margins, ε(ν − s) for tubes;
    # the log-space Hessian of J in ε is g_ε itself.
    if g.nu_mode != NU_OFF:
        sg = (s - g.nu) if g.nu_mode == NU_MARGIN else (g.nu - s)
        ge = st[V_EPS] * sg
        ee_old = st[V_ETA_EPS]
        ee = ee_old * _smd_factor(1.0 - g.mu * ge * st[V_V_EPS])
        st[V_ETA_EPS] = ee
        if g.lagged:
            ee = ee_old  # eq. 60's indexing: the new step size is first used next step
        st[V_V_EPS] = lam * st[V_V_EPS] - ee * ge * (1.0 + lam * st[V_V_EPS])
        st[V_EPS] *= _clipped_exp(-ee * ge)
    st[V_VIOL] += s
    st[V_M] = m
    st[V_HEAD] = head
    st[V_T] += 1.0


def svmd_block(OnlineConfig cfg not None, tuple model, const double[:, ::1] X,
               const double[::1] y, double[::1] pred, double[::1] krow, double[::1] kj,
               double[::1] work, sparse=None):
    """Predict then learn every row of X; predictions (made before each update) go to pred.

    ``model`` is ``(SV, sq, AB, state, off)``: the buffer's rows and squared norms, ``AB``
    its cap × 2C block of [α | β] rows, ``state`` the array named by
    STATE_FIELDS, ``off`` the offsets, their step sizes and traces (3 × C, flattened),
    ``kj`` scratch of the buffer's capacity and ``work`` scratch of at least 10·C entries.
    Predictions follow the rules of kbench's online learners (NaN once a score is not
    finite). ``sparse``: CSR rows, as for :func:`kbench.cython_core._norma.norma_block`.
    """
    cdef Model mo = model_of(model)
    cdef Cfg g = cfg.c
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], cap = mo.cap, i, c, m, head
    cdef Py_ssize_t C = g.C
    cdef double xsq, kxx, eps
    cdef double* FV = &work[0]
    cdef double* Fb = &work[2 * C]
    cdef double* xi = &work[3 * C]
    cdef double* chi = &work[4 * C]
    cdef double* V1 = &work[5 * C]
    cdef double* fv = &work[6 * C]
    cdef int s
    if mo.ncol != 2 * C or mo.nb != 3 * C or work.shape[0] < 10 * C or mo.nstate != V_SIZE:
        raise ValueError("kbench: svmd_block array shapes do not match the configuration")
    if X.shape[0] and (d != mo.d or krow.shape[0] < cap or kj.shape[0] < cap):
        raise ValueError("kbench: svmd_block got rows of the wrong dimension")
    cdef SparseRows* sp = _attach(sparse, n, cap)
    if n == 0:
        return
    with nogil:
        for i in range(n):
            m = <Py_ssize_t>mo.state[V_M]
            mo.state[V_EVALS] += _row_scores(&g, mo.SV, mo.sq, m, d, &X[i, 0], &xsq, &krow[0],
                                             mo.A, 2 * C, FV, sp, i)
            for c in range(C):
                Fb[c] = FV[c] + mo.b[c]
            eps = mo.state[V_EPS]
            pred[i] = _predict(&g, Fb, eps if g.nu_mode != NU_OFF else g.margin)
            s = _gradient(&g, eps, Fb, FV + C, y[i], xi, chi)
            if g.exact and m == cap and _inserts(&g, xi, chi):
                # The row of the entry about to be evicted, for the exact correction.
                head = <Py_ssize_t>mo.state[V_HEAD]
                if sp == NULL:
                    _kernel_row(g.kind, g.gamma, g.scale, g.offset, g.degree, mo.SV, m, d,
                                mo.sq, mo.SV + head * d, mo.sq[head], &kj[0])
                else:
                    _block_stored_row(sp, head, m, &kj[0])
                mo.state[V_EVALS] += m
            kxx = _self_kernel(&g, &X[i, 0], d, xsq)
            _svmd_update(&g, mo.state, mo.b, mo.SV, mo.sq, mo.A, d, cap, &krow[0], &kj[0],
                         &X[i, 0], xsq, kxx, FV, xi, chi, s, V1, fv, sp, i)


def svmd_apply(OnlineConfig cfg not None, tuple model, const double[::1] k, const double[::1] kj,
               const double[::1] x, double xsq, double kxx, const double[::1] FV,
               const double[::1] xi, const double[::1] chi, int s, double[::1] V1,
               double[::1] fv):
    """The update of one example whose gradient ξ, Hessian–trace product χ and violation
    indicator s the caller computed at the current scores FV = [F | V]; the per-example
    Python path of the learner. kj is the kernel row of the oldest stored row (only read
    with the exact eviction correction when the buffer is full); V1 (C entries) receives
    v_{t+1}(x_t); fv is scratch of 4C entries. ``model`` as for :func:`svmd_block`."""
    cdef Model mo = model_of(model)
    cdef Cfg g = cfg.c
    cdef Py_ssize_t C = g.C
    if (mo.ncol != 2 * C or mo.nb != 3 * C or FV.shape[0] != 2 * C
            or xi.shape[0] != C or chi.shape[0] != C or V1.shape[0] < C
            or fv.shape[0] < 4 * C or mo.nstate != V_SIZE):
        raise ValueError("kbench: svmd_apply array shapes do not match the configuration")
    cdef Py_ssize_t m = <Py_ssize_t>mo.state[V_M]
    if x.shape[0] != mo.d or k.shape[0] < m or kj.shape[0] < m:
        raise ValueError("kbench: svmd_apply got a row of the wrong length")
    _svmd_update(&g, mo.state, mo.b, mo.SV, mo.sq, mo.A, mo.d, mo.cap,
                 &k[0] if k.shape[0] else NULL, &kj[0] if kj.shape[0] else NULL,
                 &x[0] if x.shape[0] else NULL, xsq, kxx, &FV[0], &xi[0], &chi[0], s,
                 &V1[0], &fv[0], NULL, 0)


def py_gradient(OnlineConfig cfg not None, double eps, const double[::1] Fb, const double[::1] V,
                double y, double[::1] xi, double[::1] chi):
    """The compiled ξ and χ = Λ·V at the scores Fb (written into xi, chi); returns the
    violation indicator. For tests against the loss plugins."""
    cdef Cfg g = cfg.c
    if Fb.shape[0] != g.C or V.shape[0] != g.C or xi.shape[0] != g.C or chi.shape[0] != g.C:
        raise ValueError("kbench: py_gradient arrays must have one entry per output")
    if g.loss == L_PYTHON:
        raise ValueError("kbench: py_gradient needs a compiled loss")
    return _gradient(&g, eps, &Fb[0], &V[0], y, &xi[0], &chi[0])
