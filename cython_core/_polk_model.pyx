"""Compiled POLK, the model (Koppel, Warnell, Stump and Ribeiro, JMLR 2017; kbench specs/004).

Functional SGD in the RKHS, ``f̃ = (1 − η_t λ) f − (η_t / B) Σ_b ℓ'(f(x_b), y_b) k(x_b, ·)``,
followed by destructive kernel orthogonal matching pursuit (KOMP) with pre-fitting, which
deletes dictionary atoms while ``‖f − f̃‖_H ≤ ε_t``. The model is a dictionary D (M × d),
weights W (M × C) and G = K_DD⁻¹ kept exactly (specs/004 §1.6):

* append x (Schur complement): k = κ_D(x), a = G k, s = κ(x, x) − kᵀa (the squared distance
  of κ(x, ·) to the span of D), ``G ← [[G + a aᵀ/s, −a/s], [−aᵀ/s, 1/s]]``;
* a point with ``s ≤ τ κ(x, x)`` (numerically in the span) is folded instead, ``W += a cᵀ``,
  when its residual ‖c‖√s still fits the error budget (always below a floor of
  min(τ, 1e-10)·κ(x, x), where appending would make G singular); folds are charged to
  the budget through the triangle inequality (§1.7);
* deleting atom j raises the squared error by exactly ‖W_j‖²/G_jj, and the pre-fitted
  weights and the inverse follow from rank-one downdates: ``W ← W − G_{:,j} W_j / G_jj``,
  ``G ← G − G_{:,j} G_{j,:} / G_jj``; the atom is removed by moving the last one into its
  slot.

Every step costs O(M·d) for the kernel row and O(M²) for the inverse. Appending nearly
dependent points and deleting them again loses digits of the inverse, and the loss
compounds (the screening then misjudges dependent points); so after each update the
inverse is probed on its most nearly dependent atom, whose computed distance² to the
span must be 0, and recomputed from a Cholesky factorisation of K_DD when that residual
exceeds ``refresh_tol`` (and every ``refresh_every`` updates).

This module holds the model (:class:`PolkState`), the step and KOMP, the probe and the
refresh; :mod:`kbench.cython_core._polk` the prequential block loop over the learner
toolkit's store, which holds the atoms and, after them, the pending points. The rows move
through the loop's :c:type:`LoopRows` (dense or CSR alike).
"""
cimport numpy as cnp
from libc.math cimport INFINITY, fabs, sqrt
from scipy.linalg.cython_blas cimport dger, dsymv
from scipy.linalg.cython_lapack cimport dpotrf, dpotri

from kbench.cython_core._expansion cimport _grown
from kbench.cython_core._sparse cimport LoopRows, _move_at

import numpy as np

cnp.import_array()

#: The state's fields in the order of ``PolkState.state()``.
STATE_FIELDS = ("m", "t", "nseen", "nstored", "updates", "kernel_evals", "appends", "folds",
                "deletions", "last_err", "last_eps", "max_err_ratio", "zero_run", "refreshes",
                "refresh_failures", "update_due", "eta", "probe_residual")

# Below this fraction of κ(x, x) a point is folded whatever the budget: appending it would
# make K_DD numerically singular (its inverse's entries grow like 1/s).
cdef double _S_FLOOR = 1e-10
S_FLOOR = _S_FLOOR


cdef class PolkState:
    """POLK's settings, its running state and the arrays of its model.

    Settings (``eta``, ``lam``, ``K``, ``schedule``, ``t0``, ``B`` the batch size,
    ``reduce``, ``criterion``, ``tau`` the screening threshold, ``refresh`` every so many
    updates, ``rtol`` the probe's tolerance) are keyword-only arguments. The running state:
    the dictionary size ``m``, examples ``t`` seen, ``nseen`` and ``nstored`` of the
    pending batch, and the counters and last values :meth:`state` lists. The arrays (the
    inverse Gram matrix ``G``, the atoms' stream positions ``ids``, the pending points'
    kernel rows ``Kb``, gradients ``XI``, κ(x, x) ``kdb`` and positions ``idb``, the
    scratch ``work`` and the refresh scratch ``R``) grow with the store, in the loop.
    ``probe_due``: an update ran with a kernel the loop cannot compute, whose probe and
    refresh the caller makes (:func:`polk_probe`, :func:`polk_refresh`).
    """

    def __init__(self, *, double eta, double lam, double K, Schedule schedule, double t0,
                 Py_ssize_t B, Reduce reduce, Criterion criterion, double tau,
                 Py_ssize_t refresh, double rtol):
        self.eta, self.lam, self.K, self.schedule, self.t0 = eta, lam, K, schedule, t0
        self.B, self.reduce, self.criterion, self.tau = B, reduce, criterion, tau
        self.refresh, self.rtol = refresh, rtol
        self.eta_t = eta
        self.G, self.ids, self.Kb, self.R = (np.zeros((0, 0)), np.zeros(0), np.zeros((B, 0)),
                                             np.zeros((0, 0)))
        self.XI, self.kdb, self.idb, self.work = (np.zeros((B, 0)), np.zeros(B), np.zeros(B),
                                                  np.zeros(B))

    def state(self):
        """The running state by the names of STATE_FIELDS, as floats (``eta`` is η_t)."""
        return {
            "m": float(self.m), "t": float(self.t), "nseen": float(self.nseen),
            "nstored": float(self.nstored), "updates": float(self.updates),
            "kernel_evals": float(self.kernel_evals), "appends": float(self.appends),
            "folds": float(self.folds), "deletions": float(self.deletions),
            "last_err": self.last_err, "last_eps": self.last_eps,
            "max_err_ratio": self.max_err_ratio, "zero_run": float(self.zero_run),
            "refreshes": float(self.refreshes),
            "refresh_failures": float(self.refresh_failures),
            "update_due": float(self.update_due), "eta": self.eta_t,
            "probe_residual": self.probe_residual,
        }

    def fields(self):
        """The settings, the running state and the arrays by the names ``__init__`` and
        the attributes take."""
        return {name: getattr(self, name) for name in (
            "eta", "lam", "K", "schedule", "t0", "B", "reduce", "criterion", "tau", "refresh",
            "rtol", "m", "t", "nseen", "nstored", "updates", "kernel_evals", "appends",
            "folds", "deletions", "zero_run", "refreshes", "refresh_failures", "update_due",
            "probe_due", "last_err", "last_eps", "max_err_ratio", "eta_t", "probe_residual",
            "G", "ids", "Kb", "R", "XI", "kdb", "idb", "work")}

    def __reduce__(self):
        return _rebuild, (self.fields(),)


def _rebuild(dict fields):
    cdef PolkState s = PolkState(**{k: fields[k] for k in _SETTINGS})
    for name, value in fields.items():
        if name not in _SETTINGS:
            setattr(s, name, value)
    return s


_SETTINGS = ("eta", "lam", "K", "schedule", "t0", "B", "reduce", "criterion", "tau",
             "refresh", "rtol")


cdef inline double* _data(object a) noexcept:
    return <double*>cnp.PyArray_DATA(<cnp.ndarray>a)


cdef Model* _attach(PolkState s, Py_ssize_t cap, Py_ssize_t C, double* W,
                    double* sq) except NULL:
    """The model over a store of ``cap`` rows and C columns (its coefficients W and squared
    norms sq): the state's arrays, grown to the capacity first if it grew."""
    cdef Model* mo = &s.mo
    cdef Py_ssize_t B = s.B
    cdef bint refresh = s.refresh > 0 or s.rtol > 0.0
    if (cnp.PyArray_DIM(<cnp.ndarray>s.G, 0) != cap
            or cnp.PyArray_DIM(<cnp.ndarray>s.XI, 1) != C):
        s.G = _grown(s.G, (cap, cap))
        s.ids = _grown(s.ids, (cap,))
        s.Kb = _grown(s.Kb, (B, cap))
        s.XI = _grown(s.XI, (B, C))
        s.R = np.zeros((cap if refresh else 0, cap if refresh else 0))
        s.work = np.zeros(work_size(cap, C, B))
    mo.cap, mo.C = cap, C
    mo.W, mo.sq = W, sq
    mo.G, mo.ids, mo.Kb = _data(s.G), _data(s.ids), _data(s.Kb)
    mo.XI, mo.kdb, mo.idb = _data(s.XI), _data(s.kdb), _data(s.idb)
    mo.work = _data(s.work)
    mo.R = _data(s.R) if refresh and cap > 0 else NULL
    return mo


def work_size(Py_ssize_t cap, Py_ssize_t C, Py_ssize_t B):
    """Entries of the scratch array for capacity cap, C outputs and batch size B."""
    return 3 * cap + 2 * C + B


cdef inline double _eta_t(PolkState s, double t) noexcept nogil:
    """η_t at the first sample of the batch (t samples seen before it)."""
    if s.schedule == SCH_DIMINISHING:
        return s.eta / (1.0 + t / s.t0)
    return s.eta


cdef inline double _eps_t(PolkState s, double eta) noexcept nogil:
    """ε = K η^{3/2} (constant steps, Theorem 2) or K η_t² (diminishing, Theorem 1 with K = 1)."""
    if s.schedule == SCH_DIMINISHING:
        return s.K * eta * eta
    return s.K * eta * sqrt(eta)


cdef inline void _gemv_sym(const double* G, Py_ssize_t M, Py_ssize_t cap, const double* k,
                           double* out) noexcept nogil:
    """out = G[:M, :M] k for the symmetric top-left block of the row-major cap × cap G.

    Both triangles of G are kept, but the product reads one (BLAS dsymv): at large M the
    step is bound by reading G from memory, so this halves its cost."""
    cdef int n = <int>M, lda = <int>cap, one = 1
    cdef double a1 = 1.0, b0 = 0.0
    cdef char uplo = b'L'
    if M <= 0:
        return
    dsymv(&uplo, &n, &a1, <double*>G, &lda, <double*>k, &one, &b0, out, &one)


cdef inline void _rank1(double* G, Py_ssize_t M, Py_ssize_t cap, double alpha,
                        const double* v) noexcept nogil:
    """G[:M, :M] += alpha v vᵀ (symmetric, so the storage order does not matter)."""
    cdef int n = <int>M, lda = <int>cap, one = 1
    if M <= 0:
        return
    dger(&n, &n, &alpha, <double*>v, &one, <double*>v, &one, G, &lda)
cdef inline void _delete(Model* mo, const LoopRows* rows, Py_ssize_t* Mp, Py_ssize_t j,
                         double* gcol, double* wj) noexcept nogil:
    """Remove atom j with pre-fitting: the downdates of W and G, then move the last atom
    into slot j (its row too, when ``rows`` is not NULL)."""
    cdef Py_ssize_t M = Mp[0], C = mo.C, cap = mo.cap, i, c, last = M - 1
    cdef double gjj, f
    cdef double* G = mo.G
    cdef double* W = mo.W
    for i in range(M):
        gcol[i] = G[i * cap + j]
    gjj = gcol[j]
    for c in range(C):
        wj[c] = W[j * C + c]
    for i in range(M):
        f = gcol[i] / gjj
        for c in range(C):
            W[i * C + c] -= f * wj[c]
    _rank1(G, M, cap, -1.0 / gjj, gcol)
    if j != last:
        for i in range(M):
            G[j * cap + i] = G[last * cap + i]
        for i in range(M):
            G[i * cap + j] = G[i * cap + last]
        mo.sq[j] = mo.sq[last]
        mo.ids[j] = mo.ids[last]
        for c in range(C):
            W[j * C + c] = W[last * C + c]
    if rows != NULL:
        _move_at(rows, j, last)
    Mp[0] = last


cdef inline double _komp(Model* mo, const LoopRows* rows, Py_ssize_t* Mp, double eps,
                         double fold_err, int criterion, double err2, double* order,
                         Py_ssize_t* n_order) noexcept nogil:
    """Destructive KOMP with pre-fitting on the current (W, G): delete the atom of least
    error increase ‖W_j‖²/G_jj (lowest slot on ties) while the bound fold_err + √(err²)
    stays within eps (its square, with the squared criterion), starting from the squared
    error err2 already spent. Returns err²; the deleted atoms' ids go to order (when not
    NULL)."""
    cdef Py_ssize_t M, C = mo.C, cap = mo.cap, j, c, best
    cdef double score, best_score, nw, gjj, bound
    cdef double* gcol = _w_gcol(mo)
    cdef double* wj = _w_wj(mo)
    while Mp[0] > 0:
        M = Mp[0]
        best = -1
        best_score = INFINITY
        for j in range(M):
            gjj = mo.G[j * cap + j]
            if gjj <= 0.0:
                continue  # a numerically broken pivot: never chosen (the refresh repairs G)
            nw = 0.0
            for c in range(C):
                nw += mo.W[j * C + c] * mo.W[j * C + c]
            score = nw / gjj
            if score < best_score:
                best_score = score
                best = j
        if best < 0:
            break
        bound = fold_err + sqrt(err2 + best_score)
        if criterion == CRIT_SQUARED:
            bound = bound * bound
        if bound > eps:
            break
        err2 += best_score
        if order != NULL:
            order[n_order[0]] = mo.ids[best]
            n_order[0] += 1
        _delete(mo, rows, Mp, best, gcol, wj)
    return err2


cdef inline bint _newest_goes_first(Model* mo, Py_ssize_t M, const double* a, double s,
                                     double score_new, double eps, int criterion) noexcept nogil:
    """Whether KOMP, run right after appending a point with a = G k and distance² s (the
    only point of its step, no folds), would delete that point first: its score
    ‖c‖² s is below every old atom's ‖W_j‖² / (G_jj + a_j²/s) (ties go to the old atoms,
    whose slots are lower) and fits the budget."""
    cdef Py_ssize_t j, c, C = mo.C, cap = mo.cap
    cdef double nw, gjj
    if (score_new if criterion == CRIT_SQUARED else sqrt(score_new)) > eps:
        return False
    for j in range(M):
        gjj = mo.G[j * cap + j] + (1.0 / s) * a[j] * a[j]
        if gjj <= 0.0:
            continue
        nw = 0.0
        for c in range(C):
            nw += mo.W[j * C + c] * mo.W[j * C + c]
        if nw / gjj <= score_new:
            return False
    return True




cdef void _update(PolkState st, const LoopRows* rows) noexcept nogil:
    """One POLK step on the pending mini-batch, stored in the slots after the M atoms:
    shrink, append (move into the next slot) or fold each point with a non-zero gradient,
    free the slots of the points not appended, then compress with KOMP."""
    cdef Model* mo = &st.mo
    cdef Py_ssize_t M = st.m, M_old, C = mo.C, cap = mo.cap, slot
    cdef Py_ssize_t nstored = st.nstored, nseen = st.nseen
    cdef Py_ssize_t b, j, c
    cdef double ratio, eta, eps, budget, scale, shrink, cn, s, kd, fold_err = 0.0, err, dot
    cdef double err2 = 0.0, floor
    cdef Py_ssize_t n_app = 0
    cdef double* a = _w_a(mo)
    cdef double* k = _w_k(mo)
    cdef double* coef = _w_coef(mo)
    cdef double* batch_of = _w_map(mo)
    cdef bint fold
    eta = _eta_t(st, <double>(st.t - nseen))
    eps = _eps_t(st, eta)
    # The budget in RKHS norm that folds may use: ε, or √ε when ε bounds the squared error.
    budget = sqrt(eps) if st.criterion == CRIT_SQUARED else eps
    # Points this close to the span are folded whatever the budget (unless screen_tau = 0
    # turns folding off: then only points exactly in the span are).
    floor = _S_FLOOR if st.tau > _S_FLOOR else st.tau
    scale = eta / (<double>nseen if st.reduce == RED_MEAN else 1.0)
    shrink = 1.0 - eta * st.lam
    for j in range(M * C):
        mo.W[j] *= shrink
    M_old = M
    for b in range(nstored):
        cn = 0.0
        for c in range(C):
            coef[c] = -scale * mo.XI[b * C + c]
            cn += coef[c] * coef[c]
        cn = sqrt(cn)
        # k = κ_D(x_b): the row computed at prediction time, over the old atoms and the
        # pending points before b (batch_of maps the atoms appended in this step to theirs).
        for j in range(M_old):
            k[j] = mo.Kb[b * cap + j]
        for j in range(M_old, M):
            k[j] = mo.Kb[b * cap + M_old + <Py_ssize_t>batch_of[j - M_old]]
        _gemv_sym(mo.G, M, cap, k, a)
        dot = 0.0
        for j in range(M):
            dot += k[j] * a[j]
        kd = mo.kdb[b]
        s = kd - dot
        fold = M > 0 and (s <= floor * kd or (
            s <= st.tau * kd and fold_err + cn * sqrt(s if s > 0.0 else 0.0) <= budget))
        if fold:
            for j in range(M):
                for c in range(C):
                    mo.W[j * C + c] += a[j] * coef[c]
            fold_err += cn * sqrt(s if s > 0.0 else 0.0)
            st.folds += 1
            continue
        if s <= 0.0:
            # Only reachable with an empty dictionary and κ(x, x) = 0 (a zero feature
            # vector): nothing to fold into, nothing to add.
            continue
        if nstored == 1 and _newest_goes_first(mo, M, a, s, cn * cn * s, eps, st.criterion):
            # KOMP's first deletion would be this atom: appending and deleting it again
            # is exactly the projection of its term onto the span, W += a cᵀ, at squared
            # error ‖c‖² s, and leaves G as it was. Skip the two O(M²) passes over G.
            for j in range(M):
                for c in range(C):
                    mo.W[j * C + c] += a[j] * coef[c]
            err2 = cn * cn * s
            st.appends += 1
            st.deletions += 1
            continue
        _rank1(mo.G, M, cap, 1.0 / s, a)
        for j in range(M):
            mo.G[j * cap + M] = -a[j] / s
            mo.G[M * cap + j] = -a[j] / s
        mo.G[M * cap + M] = 1.0 / s
        slot = M_old + b
        if slot != M:  # earlier points were folded: move it down, freeing slot M's
            mo.sq[M] = mo.sq[slot]
            _move_at(rows, M, slot)
        mo.ids[M] = mo.idb[b]
        for c in range(C):
            mo.W[M * C + c] = coef[c]
        batch_of[M - M_old] = <double>b
        M += 1
        n_app += 1
        st.appends += 1
    for slot in range(M, M_old + nstored):  # the points folded or not kept
        _move_at(rows, slot, slot)
        mo.sq[slot] = 0.0
        for c in range(C):
            mo.W[slot * C + c] = 0.0
    err2 = _komp(mo, rows, &M, eps, fold_err, st.criterion, err2, NULL, NULL)
    st.deletions += M_old + n_app - M
    err = fold_err + sqrt(err2)
    st.last_err = err
    st.last_eps = eps
    st.eta_t = eta
    # The bound against its budget: (fold error + √err²) / ε, squared for criterion=squared.
    if eps > 0.0:
        ratio = (err * err if st.criterion == CRIT_SQUARED else err) / eps
        if ratio > st.max_err_ratio:
            st.max_err_ratio = ratio
    if M == 0 and nstored > 0:
        st.zero_run += 1
    elif M > 0:
        st.zero_run = 0
    st.m = M
    st.nseen = 0
    st.nstored = 0
    st.updates += 1


cdef bint _refresh(double* G, double* R, Py_ssize_t M, Py_ssize_t cap) noexcept nogil:
    """G[:M, :M] = R[:M, :M]⁻¹ by Cholesky, in place in R (which holds K_DD); False, with G
    untouched, when the factorisation fails (K_DD not numerically positive definite)."""
    cdef char uplo = b'L'
    cdef int n = <int>M, lda = <int>cap, info = 0
    cdef Py_ssize_t i, j
    cdef double v
    if M <= 0:
        return True
    dpotrf(&uplo, &n, R, &lda, &info)
    if info != 0:
        return False
    dpotri(&uplo, &n, R, &lda, &info)
    if info != 0:
        return False
    # LAPACK's column-major lower triangle is the row-major upper one: R[j, i] for i ≥ j.
    for j in range(M):
        for i in range(j, M):
            v = R[j * cap + i]
            G[j * cap + i] = v
            G[i * cap + j] = v
    return True


cdef Py_ssize_t _probe_index(const double* G, Py_ssize_t M, Py_ssize_t cap) noexcept nogil:
    """The atom with the largest (K⁻¹)_jj: the one nearest the span of the others, whose
    row of the inverse rounding errors hit hardest."""
    cdef Py_ssize_t j, best = 0
    for j in range(1, M):
        if G[j * cap + j] > G[best * cap + best]:
            best = j
    return best


cdef double _probe_residual(const double* G, Py_ssize_t M, Py_ssize_t cap,
                            const double* krow, Py_ssize_t j, double* a) noexcept nogil:
    """|κ(d_j, d_j) − k_jᵀ G k_j| / κ(d_j, d_j) for the atom j with kernel row krow: the
    distance² of an atom to the span of the dictionary, which is 0 exactly; its computed
    value is the error the inverse makes in the screening quantity s."""
    cdef Py_ssize_t i
    cdef double dot = 0.0, kjj = krow[j]
    _gemv_sym(G, M, cap, krow, a)
    for i in range(M):
        dot += krow[i] * a[i]
    if kjj <= 0.0:
        return INFINITY
    return fabs(kjj - dot) / kjj


cdef bint _refresh_due(PolkState st, double probe) noexcept nogil:
    """Whether to recompute the inverse after this update: periodically, or when the probe
    shows the inverse has drifted by more than refresh_tol."""
    if st.refresh > 0 and st.updates % st.refresh == 0:
        return True
    return st.rtol > 0.0 and probe > st.rtol


def polk_refresh(double[:, ::1] G, double[:, ::1] R, Py_ssize_t M):
    """G[:M, :M] = inverse of the Gram matrix held in R[:M, :M] (overwritten); False if the
    Cholesky factorisation fails (G is then left as it was)."""
    if G.shape[0] != G.shape[1] or R.shape[0] != G.shape[0] or R.shape[1] != G.shape[1]:
        raise ValueError("kbench: polk_refresh needs square G and R of the same size")
    if M < 0 or M > G.shape[0]:
        raise ValueError("kbench: polk_refresh got M outside the capacity")
    if M == 0:
        return True
    cdef bint ok
    with nogil:
        ok = _refresh(&G[0, 0], &R[0, 0], M, G.shape[0])
    return bool(ok)


def polk_probe_index(const double[:, ::1] G, Py_ssize_t M):
    """The atom the inverse is probed on (largest diagonal entry of G[:M, :M])."""
    if M <= 0 or M > G.shape[0] or G.shape[1] != G.shape[0]:
        raise ValueError("kbench: polk_probe_index needs 0 < M ≤ capacity and a square G")
    return _probe_index(&G[0, 0], M, G.shape[0])


def polk_probe(PolkState state not None, const double[::1] krow, Py_ssize_t j):
    """Record the probe residual of atom j (kernel row krow against the M atoms) and
    return whether the inverse is due for a refresh after this update: the probe of a
    kernel the loop cannot compute (``state.probe_due``), made by the caller."""
    cdef Py_ssize_t M = state.m, cap = state.G.shape[0]
    cdef double probe = 0.0
    if M <= 0 or M > cap or krow.shape[0] < M:
        raise ValueError("kbench: polk_probe array shapes do not match")
    if j < 0 or j >= M:
        raise ValueError("kbench: polk_probe got a bad atom index")
    if state.rtol > 0.0:
        probe = _probe_residual(_data(state.G), M, cap, &krow[0], j, _data(state.work) + cap)
        state.probe_residual = probe
    return bool(_refresh_due(state, probe))


def komp(double[:, ::1] G, double[:, ::1] W, double[::1] ids, Py_ssize_t M, double eps,
         double fold_err=0.0, str criterion="norm"):
    """Destructive KOMP with pre-fitting on weights W (M × C) with G = K⁻¹ (for tests and
    analysis): returns (M after, err², ids of the deleted atoms in deletion order). G, W
    and ids are updated in place (swap-deletes); no atom vectors are moved."""
    cdef Model mo
    cdef Py_ssize_t cap = G.shape[0], n_order = 0, Mv = M, C = W.shape[1]
    cdef double err2
    cdef int crit
    if G.shape[1] != cap or W.shape[0] != cap or ids.shape[0] != cap or M < 1 or M > cap:
        raise ValueError("kbench: komp needs 1 ≤ M ≤ capacity and matching G, W and ids")
    if criterion not in ("norm", "squared"):
        raise ValueError(f"kbench: komp criterion must be 'norm' or 'squared', got {criterion!r}")
    crit = CRIT_SQUARED if criterion == "squared" else CRIT_NORM
    order = np.zeros(M)
    work = np.zeros(3 * cap + 2 * C + 1)
    sq = np.zeros(cap)
    cdef double[::1] ov = order
    cdef double[::1] wv = work
    cdef double[::1] sqv = sq
    mo.cap, mo.C = cap, C
    mo.sq = &sqv[0]
    mo.W = &W[0, 0]
    mo.G = &G[0, 0]
    mo.ids = &ids[0]
    mo.work = &wv[0]
    with nogil:
        err2 = _komp(&mo, NULL, &Mv, eps, fold_err, crit, 0.0, &ov[0], &n_order)
    return Mv, err2, order[:n_order].copy()
