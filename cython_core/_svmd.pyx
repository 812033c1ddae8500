"""Compiled SVMD (Vishwanathan, Schraudolph and Smola 2006): SMD step sizes in an RKHS, over
the learner toolkit's kernel expansion.

Each stored row j holds x_j and the coefficients [α_j | β_j] of f and of the gradient trace
v, so ONE kernel row k of the new example gives both F = kᵀA and V = kᵀB through one
matrix–vector product. The step size η is adapted with ⟨g_t, v_t⟩ = cπ + ξᵀV, where π =
⟨f, v⟩ and N = ‖f‖² are kept by the linear-time recursions of the paper (eqs. 48–52),
extended with the Hessian term χ = Λ·V of smooth losses (eqs. 44–45) and, optionally,
corrected exactly when the circular store evicts an entry. Offsets (eqs. 53–55) and the
ν-trick's margin ε (eqs. 57–61, in the generalised form of the kbench spec) have step
sizes of their own.

``py_gradient`` exposes the compiled loss gradients for tests.
"""
cimport numpy as cnp
from libc.stdlib cimport free

from kbench.cython_core._loop cimport *
from kbench.cython_core._online_ops cimport (
    Cfg, L_PYTHON, NU_MARGIN, NU_OFF, OnlineConfig, _clipped_exp, _gradient, _predict,
    _ring_slot, _self_kernel,
)

cnp.import_array()


cdef class SvmdState:
    """SVMD's running state; picklable. ``head``: the oldest stored row (replaced next once
    the store holds ω rows); ``t``: examples seen; ``eta``: the step size; ``pi`` = ⟨f, v⟩
    and ``norm_sq`` = ‖f‖²; ``gv`` = ⟨g_t, v_t⟩ of the last step; the ν-trick's margin
    ``eps``, its step size ``eta_eps`` and trace ``v_eps``; the margin ``violations``, the
    steps with ηc ≥ 1 and the ``evictions``; ``off``: the offsets, their step sizes and
    their traces (3 × C, flattened); ``V1``: v_{t+1}(x_t) of the last example learned."""

    cdef public Py_ssize_t head
    cdef public double t, eta, pi, norm_sq, gv, eps, eta_eps, v_eps
    cdef public double violations, steps_eta_c_ge_1, evictions
    cdef public cnp.ndarray off, V1

    def __init__(self, off, V1, double eta, double eps, double eta_eps, **values):
        self.off, self.V1, self.eta, self.eps, self.eta_eps = off, V1, eta, eps, eta_eps
        self.head, self.t, self.pi, self.norm_sq, self.gv, self.v_eps = 0, 0.0, 0.0, 0.0, 0.0, 0.0
        self.violations, self.steps_eta_c_ge_1, self.evictions = 0.0, 0.0, 0.0
        for name, value in values.items():
            setattr(self, name, value)

    def scalars(self) -> dict:
        """The scalar fields by name."""
        return {name: getattr(self, name) for name in (
            "head", "t", "eta", "pi", "norm_sq", "gv", "eps", "eta_eps", "v_eps",
            "violations", "steps_eta_c_ge_1", "evictions")}

    def __reduce__(self):
        fields = self.scalars()
        return _rebuild, (self.off, self.V1, fields)


def _rebuild(off, V1, dict fields):
    return SvmdState(off, V1, **fields)


# The scalars of the state in the loop, as local C values (read from and written back to
# the SvmdState once per call).
cdef struct Vars:
    Py_ssize_t m, head
    double t, eta, pi, N, gv, eps, eta_eps, v_eps, viol, etac, evict


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


cdef inline void _svmd_update(const Cfg* g, Vars* st, double* off, const LoopRows* R,
                              double* AB, Py_ssize_t cap, const double* k, const double* kj,
                              double xsq, double kxx, const double* FV, const double* xi,
                              const double* chi, int s, double* V1, double* fv,
                              Py_ssize_t ix) noexcept nogil:
    """One SVMD step after the prediction, in the order of the paper's Algorithm 2.

    k is this example's kernel row over the m stored rows, FV = [F | V] the scores of f
    and v at x before the step (offsets excluded), ξ and χ the loss gradient and
    Hessian–trace product at F + b, s the margin-violation indicator. kj is the kernel
    row of the oldest stored row, needed only with the exact eviction correction when the
    store is full. V1 receives v_{t+1}(x_t) (C entries); fv is scratch of 4C entries.
    Example ix of the loop's rows R is stored when the step inserts a term.
    """
    cdef Py_ssize_t C = g.C, C2 = 2 * g.C, m = st.m
    cdef Py_ssize_t head = st.head, c, i, slot
    cdef const double* F = FV
    cdef const double* V = FV + C
    cdef double* row
    cdef double gv, eta, a, al, ec, lam = g.lam, cc = g.c, pi = st.pi, N = st.N
    cdef double xF = 0.0, cF = 0.0, xx = 0.0, xV1 = 0.0, fg, fv1, alpha, kjt, kjj
    cdef double eb, ge, ee, ee_old, sg
    cdef bint evicting
    # (b) iii: ⟨g_t, v_t⟩ = c π_t + ξᵀ V_t (eq. 48).
    gv = cc * pi
    for c in range(C):
        gv += xi[c] * V[c]
    st.gv = gv
    # (c) i: η_t = η_{t−1} max(½, 1 − μ ⟨g_t, v_t⟩) (eq. 36), adapted before use.
    eta = st.eta * _smd_factor(1.0 - g.mu * gv)
    if eta > g.eta_max:
        eta = g.eta_max
    st.eta = eta
    ec = eta * cc
    if ec >= 1.0:
        st.etac += 1.0  # 1 − ηc ≤ 0: the step flips or cancels f; counted for the report
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
        slot = _ring_slot(&m, &head, cap, &st.evict)
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
        _store_at(R, ix, slot)
        R.sq[slot] = xsq
        row = AB + slot * C2
        for c in range(C2):
            row[c] = fv[c]
    st.pi = pi
    st.N = N
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
        ge = st.eps * sg
        ee_old = st.eta_eps
        ee = ee_old * _smd_factor(1.0 - g.mu * ge * st.v_eps)
        st.eta_eps = ee
        if g.lagged:
            ee = ee_old  # eq. 60's indexing: the new step size is first used next step
        st.v_eps = lam * st.v_eps - ee * ge * (1.0 + lam * st.v_eps)
        st.eps *= _clipped_exp(-ee * ge)
    st.viol += s
    st.m = m
    st.head = head
    st.t += 1.0



def svmd_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
               bint have_row=False, double kxx=0.0, *, OnlineConfig cfg not None,
               SvmdState state not None, Py_ssize_t budget, const double[::1] xi_given=None,
               const double[::1] chi_given=None, int s_given=0,
               const double[::1] kj_given=None):
    """SVMD on rows start, start+1, … of ``rows``, at most ``budget`` = ω stored rows.

    The store holds [α | β] (2C columns); ``cfg`` the task, the loss and SVMD's settings
    (eta0 is not read: the step size is the state's; mu, lam, c, exact, lagged, eta_max,
    use_offset, the ν-trick's). Each example: the scores F + b and the trace V, the
    prediction (the rules of kbench's online learners, NaN once a score is not finite),
    ξ, χ = Λ·V and the violation s at them (``xi_given``, ``chi_given``, ``s_given`` for a
    loss the loop does not compute, or a kernel it cannot: one row a call), then the step.
    The exact eviction correction reads the evicted row's kernel row: computed here, or
    ``kj_given`` (a kernel the loop cannot compute). Calling convention and result as
    :func:`kbench.cython_core._perceptron.perceptron_block`.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A)
    cdef Cfg g = cfg.c
    cdef Py_ssize_t C = g.C, n = rows.n, cap = A.cap, i = start, c
    cdef double[::1] off = state.off
    cdef double[::1] V1 = state.V1
    if A.C != 2 * C or off.shape[0] != 3 * C or V1.shape[0] != C:
        raise ValueError(f"kbench: SVMD's store needs {2 * C} columns, its offsets {3 * C}")
    if cap > budget:
        raise ValueError(f"kbench: SVMD's store holds {cap} rows, above its budget {budget}")
    cdef bint given = xi_given is not None
    if not given and (g.loss < 0 and g.nu_mode == NU_OFF or R.kind < 0):
        raise ValueError("kbench: a loss or kernel the loop cannot compute needs the "
                         "gradient given")
    if given and (xi_given.shape[0] != C or chi_given is None or chi_given.shape[0] != C
                  or n - start > 1):
        raise ValueError(f"kbench: a given gradient is one row's, of {C} values")
    cdef double* AB = A.alpha
    cdef double* krow = A.krow
    cdef const double* Y = A.y
    cdef double* P = A.pred
    cdef long long evals = 0
    cdef Vars v
    v.m, v.head, v.t, v.eta, v.pi, v.N = A.m, state.head, state.t, state.eta, state.pi, state.norm_sq
    v.gv, v.eps, v.eta_eps, v.v_eps = state.gv, state.eps, state.eta_eps, state.v_eps
    v.viol, v.etac, v.evict = state.violations, state.steps_eta_c_ge_1, state.evictions
    cdef double xsq, kself
    cdef bint first, full
    cdef int s
    cdef double* work = _doubles(10 * C + cap)
    cdef double* FV = work
    cdef double* Fb = work + 2 * C
    cdef double* xi = work + 3 * C
    cdef double* chi = work + 4 * C
    cdef double* fv = work + 6 * C
    cdef double* kj = work + 10 * C
    with nogil:
        while i < n:
            first = have_row and i == 0
            evals += _row_at(&R, i, v.m, first, &xsq, krow)
            _expansion(krow, AB, v.m, 2 * C, 1.0, FV)
            for c in range(C):
                Fb[c] = FV[c] + off[c]
            if not given:
                s = _gradient(&g, v.eps, Fb, FV + C, Y[i], xi, chi)
            else:
                for c in range(C):
                    xi[c] = xi_given[c]
                    chi[c] = chi_given[c]
                s = s_given
            full = v.m == cap and _inserts(&g, xi, chi)
            if full and cap < budget and _store_full(v.m, cap, first, &evals, v.m):
                break
            P[i] = _predict(&g, Fb, v.eps if g.nu_mode != NU_OFF else g.margin)
            if g.exact and full:
                # The row of the entry about to be evicted, for the exact correction.
                if kj_given is not None:
                    for c in range(v.m):
                        kj[c] = kj_given[c]
                else:
                    _stored_row_at(&R, v.head, v.m, kj)
                evals += v.m
            kself = kxx if R.kind < 0 else _self_kernel(&g, NULL, 0, xsq)
            _svmd_update(&g, &v, &off[0], &R, AB, cap, krow, kj, xsq, kself, FV, xi, chi, s,
                         &V1[0], fv, i)
            i += 1
    free(work)
    state.head, state.t, state.eta, state.pi, state.norm_sq = v.head, v.t, v.eta, v.pi, v.N
    state.gv, state.eps, state.eta_eps, state.v_eps = v.gv, v.eps, v.eta_eps, v.v_eps
    state.violations, state.steps_eta_c_ge_1, state.evictions = v.viol, v.etac, v.evict
    return i, v.m, evals


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
