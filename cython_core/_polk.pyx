"""Compiled POLK (Koppel, Warnell, Stump and Ribeiro, JMLR 2017; kbench specs/004).

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

``polk_block`` runs the prequential loop for compiled kernels and losses; the other
functions are its pieces, which the per-example Python path calls, so both paths do the
same arithmetic.
"""
from libc.math cimport INFINITY, fabs, sqrt
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport dger, dsymv
from scipy.linalg.cython_lapack cimport dpotrf, dpotri

from kbench.cython_core._kernels cimport _kernel_row
from kbench.cython_core._online_ops cimport Cfg, OnlineConfig, _gradient, _predict, _row_scores, _self_kernel
from kbench.cython_core._online_ops import compiled_gradient, compiled_self_kernel

import numpy as np


# Keep in sync with plugins/algorithms/polk.py.
cdef enum:
    SCH_CONSTANT = 0
    SCH_DIMINISHING = 1
    RED_MEAN = 0
    RED_SUM = 1
    CRIT_NORM = 0
    CRIT_SQUARED = 1

# Indices of the parameter array. Keep PARAM_FIELDS in the same order.
cdef enum:
    Q_ETA = 0
    Q_LAM = 1
    Q_K = 2
    Q_SCHEDULE = 3
    Q_T0 = 4
    Q_BATCH = 5
    Q_REDUCE = 6
    Q_CRITERION = 7
    Q_TAU = 8
    Q_REFRESH = 9
    Q_RTOL = 10
    Q_SIZE = 11

PARAM_FIELDS = ("eta", "lam", "K", "schedule", "t0", "batch_size", "reduce", "criterion",
                "tau", "refresh_every", "refresh_tol")

# Indices of the state array. Keep STATE_FIELDS in the same order.
cdef enum:
    S_M = 0
    S_T = 1
    S_NSEEN = 2
    S_NSTORED = 3
    S_UPDATES = 4
    S_EVALS = 5
    S_APPENDS = 6
    S_FOLDS = 7
    S_DELETIONS = 8
    S_LAST_ERR = 9
    S_LAST_EPS = 10
    S_MAX_RATIO = 11
    S_ZERO_RUN = 12
    S_REFRESHES = 13
    S_REFRESH_FAIL = 14
    S_UPDATE_DUE = 15
    S_ETA = 16
    S_PROBE = 17
    S_SIZE = 18

STATE_FIELDS = ("m", "t", "nseen", "nstored", "updates", "kernel_evals", "appends", "folds",
                "deletions", "last_err", "last_eps", "max_err_ratio", "zero_run", "refreshes",
                "refresh_failures", "update_due", "eta", "probe_residual")

# Below this fraction of κ(x, x) a point is folded whatever the budget: appending it would
# make K_DD numerically singular (its inverse's entries grow like 1/s).
cdef double _S_FLOOR = 1e-10
S_FLOOR = _S_FLOOR


cdef struct QCfg:
    double eta, lam, K, t0, tau, rtol
    int schedule, reduce, criterion
    Py_ssize_t B, refresh


cdef inline QCfg _read_q(const double[::1] p) except *:
    cdef QCfg q
    if p.shape[0] != Q_SIZE:
        raise ValueError(f"kbench: POLK parameter array has {p.shape[0]} entries, expected {Q_SIZE}")
    q.eta = p[Q_ETA]
    q.lam = p[Q_LAM]
    q.K = p[Q_K]
    q.schedule = <int>p[Q_SCHEDULE]
    q.t0 = p[Q_T0]
    q.B = <Py_ssize_t>p[Q_BATCH]
    q.reduce = <int>p[Q_REDUCE]
    q.criterion = <int>p[Q_CRITERION]
    q.tau = p[Q_TAU]
    q.refresh = <Py_ssize_t>p[Q_REFRESH]
    q.rtol = p[Q_RTOL]
    return q


cdef struct Model:
    # The dictionary and its pending mini-batch, as raw pointers into the Python arrays.
    double* D       # cap × d atoms
    double* sq      # cap squared norms
    double* W       # cap × C weights
    double* G       # cap × cap inverse Gram matrix (top-left M × M used)
    double* ids     # cap: stream position of each atom
    double* Xb      # B × d pending points with a non-zero gradient
    double* xsqb    # B
    double* kdb     # B: κ(x_b, x_b)
    double* XI      # B × C: loss gradients
    double* idb     # B: stream positions
    double* Kb      # B × cap: κ(x_b, D) at prediction time
    double* Kbb     # B × B: κ(x_b, x_b') for b' < b
    double* work    # scratch of WORK_SIZE(cap, C, B) = 3·cap + 2·C + B entries
    Py_ssize_t cap, d, C


# Layout of the scratch: G's column (cap), a = G k (cap), k (cap), the deleted atom's
# weights (C), the new coefficients (C), the batch index of each atom appended in this
# step (B).
cdef inline double* _w_gcol(Model* mo) noexcept nogil:
    return mo.work


cdef inline double* _w_a(Model* mo) noexcept nogil:
    return mo.work + mo.cap


cdef inline double* _w_k(Model* mo) noexcept nogil:
    return mo.work + 2 * mo.cap


cdef inline double* _w_wj(Model* mo) noexcept nogil:
    return mo.work + 3 * mo.cap


cdef inline double* _w_coef(Model* mo) noexcept nogil:
    return mo.work + 3 * mo.cap + mo.C


cdef inline double* _w_map(Model* mo) noexcept nogil:
    return mo.work + 3 * mo.cap + 2 * mo.C


def work_size(Py_ssize_t cap, Py_ssize_t C, Py_ssize_t B):
    """Entries of the scratch array for capacity cap, C outputs and batch size B."""
    return 3 * cap + 2 * C + B


cdef inline double _eta_t(const QCfg* q, double t) noexcept nogil:
    """η_t at the first sample of the batch (t samples seen before it)."""
    if q.schedule == SCH_DIMINISHING:
        return q.eta / (1.0 + t / q.t0)
    return q.eta


cdef inline double _eps_t(const QCfg* q, double eta) noexcept nogil:
    """ε = K η^{3/2} (constant steps, Theorem 2) or K η_t² (diminishing, Theorem 1 with K = 1)."""
    if q.schedule == SCH_DIMINISHING:
        return q.K * eta * eta
    return q.K * eta * sqrt(eta)


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


cdef inline void _delete(Model* mo, Py_ssize_t* Mp, Py_ssize_t j, double* gcol,
                         double* wj) noexcept nogil:
    """Remove atom j with pre-fitting: the downdates of W and G, then move the last atom
    into slot j."""
    cdef Py_ssize_t M = Mp[0], C = mo.C, cap = mo.cap, d = mo.d, i, c, last = M - 1
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
        memcpy(mo.D + j * d, mo.D + last * d, d * sizeof(double))
        mo.sq[j] = mo.sq[last]
        mo.ids[j] = mo.ids[last]
        for c in range(C):
            W[j * C + c] = W[last * C + c]
    Mp[0] = last


cdef inline double _komp(Model* mo, Py_ssize_t* Mp, double eps, double fold_err, int criterion,
                         double err2, double* order, Py_ssize_t* n_order) noexcept nogil:
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
        _delete(mo, Mp, best, gcol, wj)
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


cdef inline void _update(const QCfg* q, double* st, Model* mo) noexcept nogil:
    """One POLK step on the pending mini-batch: shrink, append or fold each point with a
    non-zero gradient, then compress with KOMP. The caller guarantees M + nstored ≤ cap."""
    cdef Py_ssize_t M = <Py_ssize_t>st[S_M], M_old, C = mo.C, cap = mo.cap, d = mo.d
    cdef Py_ssize_t nstored = <Py_ssize_t>st[S_NSTORED], nseen = <Py_ssize_t>st[S_NSEEN]
    cdef Py_ssize_t b, j, c, B = q.B
    cdef double ratio, eta, eps, budget, scale, shrink, cn, s, kd, fold_err = 0.0, err, dot
    cdef double err2 = 0.0, floor
    cdef Py_ssize_t n_app = 0
    cdef double* a = _w_a(mo)
    cdef double* k = _w_k(mo)
    cdef double* coef = _w_coef(mo)
    cdef double* batch_of = _w_map(mo)
    cdef bint fold
    eta = _eta_t(q, st[S_T] - nseen)
    eps = _eps_t(q, eta)
    # The budget in RKHS norm that folds may use: ε, or √ε when ε bounds the squared error.
    budget = sqrt(eps) if q.criterion == CRIT_SQUARED else eps
    # Points this close to the span are folded whatever the budget (unless screen_tau = 0
    # turns folding off: then only points exactly in the span are).
    floor = _S_FLOOR if q.tau > _S_FLOOR else q.tau
    scale = eta / (<double>nseen if q.reduce == RED_MEAN else 1.0)
    shrink = 1.0 - eta * q.lam
    for j in range(M * C):
        mo.W[j] *= shrink
    M_old = M
    for b in range(nstored):
        cn = 0.0
        for c in range(C):
            coef[c] = -scale * mo.XI[b * C + c]
            cn += coef[c] * coef[c]
        cn = sqrt(cn)
        # k = κ_D(x_b): the row computed at prediction time for the old atoms, the batch
        # Gram block for the atoms appended in this step (batch_of maps them to their row).
        for j in range(M_old):
            k[j] = mo.Kb[b * cap + j]
        for j in range(M_old, M):
            k[j] = mo.Kbb[b * B + <Py_ssize_t>batch_of[j - M_old]]
        _gemv_sym(mo.G, M, cap, k, a)
        dot = 0.0
        for j in range(M):
            dot += k[j] * a[j]
        kd = mo.kdb[b]
        s = kd - dot
        fold = M > 0 and (s <= floor * kd or (
            s <= q.tau * kd and fold_err + cn * sqrt(s if s > 0.0 else 0.0) <= budget))
        if fold:
            for j in range(M):
                for c in range(C):
                    mo.W[j * C + c] += a[j] * coef[c]
            fold_err += cn * sqrt(s if s > 0.0 else 0.0)
            st[S_FOLDS] += 1.0
            continue
        if s <= 0.0:
            # Only reachable with an empty dictionary and κ(x, x) = 0 (a zero feature
            # vector): nothing to fold into, nothing to add.
            continue
        if nstored == 1 and _newest_goes_first(mo, M, a, s, cn * cn * s, eps, q.criterion):
            # KOMP's first deletion would be this atom: appending and deleting it again
            # is exactly the projection of its term onto the span, W += a cᵀ, at squared
            # error ‖c‖² s, and leaves G as it was. Skip the two O(M²) passes over G.
            for j in range(M):
                for c in range(C):
                    mo.W[j * C + c] += a[j] * coef[c]
            err2 = cn * cn * s
            st[S_APPENDS] += 1.0
            st[S_DELETIONS] += 1.0
            continue
        _rank1(mo.G, M, cap, 1.0 / s, a)
        for j in range(M):
            mo.G[j * cap + M] = -a[j] / s
            mo.G[M * cap + j] = -a[j] / s
        mo.G[M * cap + M] = 1.0 / s
        memcpy(mo.D + M * d, mo.Xb + b * d, d * sizeof(double))
        mo.sq[M] = mo.xsqb[b]
        mo.ids[M] = mo.idb[b]
        for c in range(C):
            mo.W[M * C + c] = coef[c]
        batch_of[M - M_old] = <double>b
        M += 1
        n_app += 1
        st[S_APPENDS] += 1.0
    err2 = _komp(mo, &M, eps, fold_err, q.criterion, err2, NULL, NULL)
    st[S_DELETIONS] += <double>(M_old + n_app - M)
    err = fold_err + sqrt(err2)
    st[S_LAST_ERR] = err
    st[S_LAST_EPS] = eps
    st[S_ETA] = eta
    # The bound against its budget: (fold error + √err²) / ε, squared for criterion=squared.
    if eps > 0.0:
        ratio = (err * err if q.criterion == CRIT_SQUARED else err) / eps
        if ratio > st[S_MAX_RATIO]:
            st[S_MAX_RATIO] = ratio
    if M == 0 and nstored > 0:
        st[S_ZERO_RUN] += 1.0
    elif M > 0:
        st[S_ZERO_RUN] = 0.0
    st[S_M] = M
    st[S_NSEEN] = 0.0
    st[S_NSTORED] = 0.0
    st[S_UPDATES] += 1.0


cdef inline void _gram(const Cfg* g, const double* D, const double* sq, Py_ssize_t M,
                       Py_ssize_t d, Py_ssize_t ld, double* R) noexcept nogil:
    """R[i, :M] = κ(D[:M], D[i]) for i < M (row stride ld), one kernel row per atom."""
    cdef Py_ssize_t i
    for i in range(M):
        _kernel_row(g.kind, g.gamma, g.scale, g.offset, g.degree, D, M, d, sq, D + i * d,
                    sq[i], R + i * ld)


cdef inline bint _refresh(double* G, double* R, Py_ssize_t M, Py_ssize_t cap) noexcept nogil:
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


cdef inline void _batch_gram(const Cfg* g, Model* mo, Py_ssize_t ns, Py_ssize_t B) noexcept nogil:
    """Kbb[b, :b] = κ(Xb[:b], x_b): the kernel between the pending points, one row each."""
    cdef Py_ssize_t b
    for b in range(1, ns):
        _kernel_row(g.kind, g.gamma, g.scale, g.offset, g.degree, mo.Xb, b, mo.d, mo.xsqb,
                    mo.Xb + b * mo.d, mo.xsqb[b], mo.Kbb + b * B)


cdef inline Py_ssize_t _probe_index(const double* G, Py_ssize_t M, Py_ssize_t cap) noexcept nogil:
    """The atom with the largest (K⁻¹)_jj: the one nearest the span of the others, whose
    row of the inverse rounding errors hit hardest."""
    cdef Py_ssize_t j, best = 0
    for j in range(1, M):
        if G[j * cap + j] > G[best * cap + best]:
            best = j
    return best


cdef inline double _probe_residual(const double* G, Py_ssize_t M, Py_ssize_t cap,
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


cdef inline bint _refresh_due(const QCfg* q, double* st, double probe) noexcept nogil:
    """Whether to recompute the inverse after this update: periodically, or when the probe
    shows the inverse has drifted by more than refresh_tol."""
    if q.refresh > 0 and (<Py_ssize_t>st[S_UPDATES]) % q.refresh == 0:
        return True
    return q.rtol > 0.0 and probe > q.rtol


cdef inline void _finish(const Cfg* g, const QCfg* q, double* st, Model* mo,
                         double* R) noexcept nogil:
    """The compiled-kernel update of a full mini-batch: batch Gram block, POLK step, the
    probe of the inverse, and its refresh when due."""
    cdef Py_ssize_t ns = <Py_ssize_t>st[S_NSTORED], M, j
    cdef double probe = 0.0
    cdef double* krow = _w_k(mo)
    _batch_gram(g, mo, ns, q.B)
    st[S_EVALS] += <double>(ns * (ns - 1) // 2)
    _update(q, st, mo)
    M = <Py_ssize_t>st[S_M]
    if R == NULL or M == 0:
        return
    if q.rtol > 0.0:
        j = _probe_index(mo.G, M, mo.cap)
        _kernel_row(g.kind, g.gamma, g.scale, g.offset, g.degree, mo.D, M, mo.d, mo.sq,
                    mo.D + j * mo.d, mo.sq[j], krow)
        st[S_EVALS] += <double>M
        probe = _probe_residual(mo.G, M, mo.cap, krow, j, _w_a(mo))
        st[S_PROBE] = probe
    if _refresh_due(q, st, probe):
        _gram(g, mo.D, mo.sq, M, mo.d, mo.cap, R)
        st[S_EVALS] += <double>(M * M)
        if _refresh(mo.G, R, M, mo.cap):
            st[S_REFRESHES] += 1.0
        else:
            st[S_REFRESH_FAIL] += 1.0


cdef inline Model _model(tuple arrays, Py_ssize_t B) except *:
    """The record of the arrays tuple ``(D, sq, W, G, ids, Xb, xsqb, kdb, XI, idb, Kb, Kbb,
    work)``: the dictionary, the pending mini-batch and the scratch (see polk_block)."""
    cdef double[:, ::1] D, W, G, Xb, XI, Kb, Kbb
    cdef double[::1] sq, ids, xsqb, kdb, idb, work
    D, sq, W, G, ids, Xb, xsqb, kdb, XI, idb, Kb, Kbb, work = arrays
    cdef Model mo
    cdef Py_ssize_t cap = D.shape[0], C = W.shape[1]
    if (sq.shape[0] != cap or W.shape[0] != cap or G.shape[0] != cap or G.shape[1] != cap
            or ids.shape[0] != cap or Kb.shape[1] != cap):
        raise ValueError("kbench: POLK dictionary arrays disagree on the capacity")
    if (Xb.shape[0] != B or xsqb.shape[0] != B or kdb.shape[0] != B or XI.shape[0] != B
            or XI.shape[1] != C or idb.shape[0] != B or Kb.shape[0] != B
            or Kbb.shape[0] != B or Kbb.shape[1] != B or Xb.shape[1] != D.shape[1]):
        raise ValueError("kbench: POLK mini-batch arrays do not match the batch size")
    if work.shape[0] < 3 * cap + 2 * C + B:
        raise ValueError("kbench: POLK scratch array is too small")
    mo.cap, mo.d, mo.C = cap, D.shape[1], C
    mo.D = &D[0, 0] if cap and mo.d else NULL
    mo.sq = &sq[0]
    mo.W = &W[0, 0]
    mo.G = &G[0, 0]
    mo.ids = &ids[0]
    mo.Xb = &Xb[0, 0] if mo.d else NULL
    mo.xsqb = &xsqb[0]
    mo.kdb = &kdb[0]
    mo.XI = &XI[0, 0]
    mo.idb = &idb[0]
    mo.Kb = &Kb[0, 0]
    mo.Kbb = &Kbb[0, 0]
    mo.work = &work[0]
    return mo


def polk_block(OnlineConfig cfg not None, const double[::1] params, double[::1] state,
               tuple arrays, double[:, ::1] R, double[::1] scores, const double[:, ::1] X,
               const double[::1] y, double[::1] pred, Py_ssize_t start):
    """Predict then learn rows start, start+1, … of X (compiled kernel and loss).

    ``arrays`` is ``(D, sq, W, G, ids, Xb, xsqb, kdb, XI, idb, Kb, Kbb, work)``: the
    dictionary (D, sq, W, G, ids; capacity rows) and the pending mini-batch (Xb, xsqb, kdb,
    XI, idb, Kb, Kbb; batch_size rows), which persist between calls, and the scratch
    ``work``. ``R`` is the refresh
    scratch (cap × cap; 0 × 0 when refreshes are off), ``scores`` scratch of 3·C entries.
    A batch whose update does not fit the capacity sets ``state["update_due"]`` and
    returns; the caller grows the arrays and calls again from the returned index, and the
    pending update runs first. Returns the index of the first row not processed.
    """
    cdef Cfg g = cfg.c
    cdef QCfg q = _read_q(params)
    cdef Model mo = _model(arrays, q.B)
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], C = mo.C, cap = mo.cap, i, c, M, ns
    cdef double xsq
    cdef double* F = &scores[0]
    cdef double* xi = &scores[C]
    cdef double* chi = &scores[2 * C]
    cdef double* Rp = &R[0, 0] if R.shape[0] == cap and cap > 0 else NULL
    cdef bint nonzero
    if g.kind < 0 or g.loss < 0:
        raise ValueError("kbench: polk_block needs a compiled kernel and loss")
    if state.shape[0] != S_SIZE or scores.shape[0] < 3 * C or C != g.C:
        raise ValueError("kbench: polk_block state or scratch has the wrong size")
    if n and (d != mo.d or y.shape[0] < n or pred.shape[0] < n):
        raise ValueError("kbench: polk_block got arrays of the wrong size")
    if (q.refresh > 0 or q.rtol > 0.0) and Rp == NULL and cap > 0:
        raise ValueError("kbench: polk_block needs the refresh scratch R (cap × cap)")
    i = start
    if state[S_UPDATE_DUE] != 0.0:
        if <Py_ssize_t>state[S_M] + <Py_ssize_t>state[S_NSTORED] > cap:
            return i
        with nogil:
            _finish(&g, &q, &state[0], &mo, Rp)
        state[S_UPDATE_DUE] = 0.0
    with nogil:
        while i < n:
            M = <Py_ssize_t>state[S_M]
            ns = <Py_ssize_t>state[S_NSTORED]
            state[S_EVALS] += _row_scores(&g, mo.D, mo.sq, M, d, &X[i, 0], &xsq, mo.Kb + ns * cap,
                                          mo.W, C, F)
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
                mo.idb[ns] = state[S_T]
                state[S_NSTORED] = ns + 1
            state[S_T] += 1.0
            state[S_NSEEN] += 1.0
            i += 1
            if <Py_ssize_t>state[S_NSEEN] == q.B:
                if M + <Py_ssize_t>state[S_NSTORED] > cap:
                    state[S_UPDATE_DUE] = 1.0
                    break
                _finish(&g, &q, &state[0], &mo, Rp)
    return i


def polk_update(const double[::1] params, double[::1] state, tuple arrays):
    """The POLK step on the pending mini-batch, given its Gram block Kbb (lower part); the
    per-example path's update. ``arrays`` as for :func:`polk_block`; the capacity must
    hold M + (pending points)."""
    cdef QCfg q = _read_q(params)
    cdef Model mo = _model(arrays, q.B)
    if state.shape[0] != S_SIZE:
        raise ValueError("kbench: polk_update got a state of the wrong size")
    if <Py_ssize_t>state[S_M] + <Py_ssize_t>state[S_NSTORED] > mo.cap:
        raise ValueError("kbench: polk_update needs room for the pending points")
    with nogil:
        _update(&q, &state[0], &mo)


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


def polk_probe(const double[::1] params, double[::1] state, const double[:, ::1] G,
               Py_ssize_t M, const double[::1] krow, Py_ssize_t j, double[::1] work):
    """Record the probe residual of atom j (kernel row krow against the M atoms) and
    return whether the inverse is due for a refresh after this update."""
    cdef QCfg q = _read_q(params)
    cdef double probe = 0.0
    if state.shape[0] != S_SIZE or M <= 0 or M > G.shape[0] or krow.shape[0] < M:
        raise ValueError("kbench: polk_probe array shapes do not match")
    if work.shape[0] < M or j < 0 or j >= M:
        raise ValueError("kbench: polk_probe got a bad atom index or scratch")
    if q.rtol > 0.0:
        probe = _probe_residual(&G[0, 0], M, G.shape[0], &krow[0], j, &work[0])
        state[S_PROBE] = probe
    return bool(_refresh_due(&q, &state[0], probe))


def polk_gram(OnlineConfig cfg not None, const double[:, ::1] D, const double[::1] sq, Py_ssize_t M,
              double[:, ::1] R):
    """R[:M, :M] = K_DD for a compiled kernel, computed as the block loop computes it."""
    cdef Cfg g = cfg.c
    if g.kind < 0:
        raise ValueError("kbench: polk_gram needs a compiled kernel")
    if M < 0 or M > D.shape[0] or R.shape[0] < M or R.shape[1] < M or sq.shape[0] < M:
        raise ValueError("kbench: polk_gram got arrays smaller than M")
    if M == 0:
        return
    with nogil:
        _gram(&g, &D[0, 0] if D.shape[1] else NULL, &sq[0], M, D.shape[1], R.shape[1], &R[0, 0])


def polk_batch_gram(OnlineConfig cfg not None, double[:, ::1] Xb, double[::1] xsqb, Py_ssize_t ns,
                    double[:, ::1] Kbb):
    """Kbb[b, :b] = κ(Xb[:b], x_b) for b < ns (compiled kernel), as the block loop does."""
    cdef Cfg g = cfg.c
    cdef Model mo
    if g.kind < 0:
        raise ValueError("kbench: polk_batch_gram needs a compiled kernel")
    if ns < 0 or ns > Xb.shape[0] or Kbb.shape[0] != Xb.shape[0] or Kbb.shape[1] != Xb.shape[0]:
        raise ValueError("kbench: polk_batch_gram array shapes do not match")
    if ns < 2:
        return
    mo.d = Xb.shape[1]
    mo.Xb = &Xb[0, 0] if mo.d else NULL
    mo.xsqb = &xsqb[0]
    mo.Kbb = &Kbb[0, 0]
    with nogil:
        _batch_gram(&g, &mo, ns, Xb.shape[0])


# The per-example path's gradient and κ(x, x), shared with PiSTOL.
polk_gradient = compiled_gradient
polk_self_kernel = compiled_self_kernel


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
    atoms = np.zeros((cap, 1))
    cdef double[::1] ov = order
    cdef double[::1] wv = work
    cdef double[::1] sqv = sq
    cdef double[:, ::1] av = atoms
    mo.cap, mo.d, mo.C = cap, 1, C
    mo.D = &av[0, 0]
    mo.sq = &sqv[0]
    mo.W = &W[0, 0]
    mo.G = &G[0, 0]
    mo.ids = &ids[0]
    mo.work = &wv[0]
    with nogil:
        err2 = _komp(&mo, &Mv, eps, fold_err, crit, 0.0, &ov[0], &n_order)
    return Mv, err2, order[:n_order].copy()
