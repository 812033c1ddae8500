# Shared inline pieces of the compiled online kernel learners (NORMA and SVMD): their
# configuration record, the loss gradient ξ and Hessian-vector product χ = Λ·V of a score
# vector, the ν-trick's margin losses, and the prediction rule.
#
# Included (after _kernel_ops.pxi and _loss_ops.pxi) rather than cimported, so that each
# compiled module stands alone. The Python side builds the configuration array with the
# CFG_* indices below (exported as CFG_FIELDS by each module that includes this file)
# and mirrors every formula here in plugins/algorithms/_online_kernel.py; the per-example
# Python path and the compiled block loop must agree.
from libc.math cimport NAN, exp, fabs, isfinite

# Tasks. Keep in sync with TASK_CODES in plugins/algorithms/_online_kernel.py.
cdef enum:
    T_BINARY = 0
    T_MULTICLASS = 1
    T_REGRESSION = 2
    T_NOVELTY = 3

# Multiclass losses, numbered after the scalar L_* ids of _loss_ops.pxi. The loss
# plugins have no compiled id for them; the learners recognise the two built-in classes.
cdef enum:
    L_MC_HINGE = 64
    L_SOFTMAX = 65
    # The loss has no compiled form: only the Python path can run it.
    L_PYTHON = -1

# ν-trick modes: off, an adapted hinge margin ε (binary, multiclass, novelty), or an
# adapted ε-insensitive tube (regression, where the ν-gradient has the opposite sign).
cdef enum:
    NU_OFF = 0
    NU_MARGIN = 1
    NU_TUBE = 2

# Indices of the configuration array. Keep CFG_FIELDS (below) in the same order.
cdef enum:
    CF_KIND = 0
    CF_GAMMA = 1
    CF_SCALE = 2
    CF_OFFSET = 3
    CF_DEGREE = 4
    CF_TASK = 5
    CF_NOUT = 6
    CF_LOSS = 7
    CF_LOSS_P1 = 8
    CF_NU_MODE = 9
    CF_NU = 10
    CF_MARGIN = 11
    CF_ETA0 = 12
    CF_C = 13
    CF_USE_OFFSET = 14
    CF_SCHEDULE = 15
    CF_TAU = 16
    CF_ETA_EPS0 = 17
    CF_NU_ADDITIVE = 18
    CF_MU = 19
    CF_LAM = 20
    CF_EXACT = 21
    CF_LAGGED = 22
    CF_ETA_MAX = 23
    CF_SIZE = 24

CFG_FIELDS = ("kind", "gamma", "scale", "offset", "degree", "task", "n_out", "loss",
               "loss_p1", "nu_mode", "nu", "margin", "eta0", "c", "use_offset", "schedule",
               "tau", "eta_eps0", "nu_additive", "mu", "lam", "exact", "lagged", "eta_max")


cdef struct Cfg:
    int kind
    double gamma, scale, offset, degree
    int task
    Py_ssize_t C
    int loss
    double loss_p1
    int nu_mode
    double nu, margin, eta0, c
    bint use_offset
    int schedule
    double tau, eta_eps0
    bint nu_additive
    double mu, lam
    bint exact, lagged
    double eta_max


cdef inline Cfg _read_cfg(const double[::1] p):
    cdef Cfg g
    if p.shape[0] != CF_SIZE:
        raise ValueError(f"kbench: configuration array has {p.shape[0]} entries, expected {CF_SIZE}")
    g.kind = <int>p[CF_KIND]
    g.gamma = p[CF_GAMMA]
    g.scale = p[CF_SCALE]
    g.offset = p[CF_OFFSET]
    g.degree = p[CF_DEGREE]
    g.task = <int>p[CF_TASK]
    g.C = <Py_ssize_t>p[CF_NOUT]
    g.loss = <int>p[CF_LOSS]
    g.loss_p1 = p[CF_LOSS_P1]
    g.nu_mode = <int>p[CF_NU_MODE]
    g.nu = p[CF_NU]
    g.margin = p[CF_MARGIN]
    g.eta0 = p[CF_ETA0]
    g.c = p[CF_C]
    g.use_offset = p[CF_USE_OFFSET] != 0.0
    g.schedule = <int>p[CF_SCHEDULE]
    g.tau = p[CF_TAU]
    g.eta_eps0 = p[CF_ETA_EPS0]
    g.nu_additive = p[CF_NU_ADDITIVE] != 0.0
    g.mu = p[CF_MU]
    g.lam = p[CF_LAM]
    g.exact = p[CF_EXACT] != 0.0
    g.lagged = p[CF_LAGGED] != 0.0
    g.eta_max = p[CF_ETA_MAX]
    return g


cdef inline double _loss_hess(int kind, double f, double y, double p1) noexcept nogil:
    """Second derivative in f of a compiled scalar loss; 0 where the plugin has none.

    Written operation for operation as the plugins' ``second_derivative`` so that the
    compiled loop and the Python path compute the same bits.
    """
    cdef double z, e, s
    if kind == L_LOGISTIC:
        z = y * f
        e = exp(-fabs(z))
        s = 1.0 / (1.0 + e) if z >= 0.0 else e / (1.0 + e)
        return y * y * s * (1.0 - s)
    elif kind == L_SQUARED:
        return 1.0
    elif kind == L_SMOOTH_HINGE:
        z = y * f
        return 0.5 * y * y if (z > -1.0 and z < 1.0) else 0.0
    elif kind == L_SQUARED_HINGE:
        return 2.0 * y * y if y * f < 1.0 else 0.0
    elif kind == L_HUBER:
        return 1.0 if fabs(f - y) <= p1 else 0.0
    return 0.0


cdef inline Py_ssize_t _rival(const double* F, Py_ssize_t C, Py_ssize_t y) noexcept nogil:
    """The highest-scoring class other than y, the lowest index on ties."""
    cdef Py_ssize_t c, best = -1
    for c in range(C):
        if c != y and (best < 0 or F[c] > F[best]):
            best = c
    return best


cdef inline int _gradient(const Cfg* g, double eps, const double* Fb, const double* V,
                          double y, double* xi, double* chi) noexcept nogil:
    """ξ = ∂loss/∂F at the scores Fb (offset included) and χ = Λ·V; returns the margin
    violation indicator s (1 when the hinge or tube is active), which the ν-trick needs.
    Without the ν-trick s is 1 exactly when ξ ≠ 0.

    With the ν-trick the margin is the adapted ε instead of the loss's own, and the
    ν-losses are piecewise linear, so χ = 0.
    """
    cdef Py_ssize_t c, C = g.C, yi, r
    cdef double top, tot, pv, f
    cdef int s = 0
    for c in range(C):
        chi[c] = 0.0
    if g.task == T_MULTICLASS:
        yi = <Py_ssize_t>y
        for c in range(C):
            xi[c] = 0.0
        if g.loss == L_SOFTMAX and g.nu_mode == NU_OFF:
            # p = softmax(F), ξ = p − e_y, Λ = diag(p) − p pᵀ so χ = p ⊙ V − p (pᵀV).
            top = Fb[0]
            for c in range(1, C):
                if Fb[c] > top:
                    top = Fb[c]
            tot = 0.0
            for c in range(C):
                xi[c] = exp(Fb[c] - top)
                tot += xi[c]
            pv = 0.0
            for c in range(C):
                xi[c] = xi[c] / tot
                pv += xi[c] * V[c]
            for c in range(C):
                chi[c] = xi[c] * V[c] - xi[c] * pv
            xi[yi] -= 1.0
            for c in range(C):
                if xi[c] != 0.0:
                    return 1
            return 0
        # Crammer–Singer hinge with margin 1 (or ε): −1 on the label, +1 on the rival.
        r = _rival(Fb, C, yi)
        if (eps if g.nu_mode != NU_OFF else 1.0) + Fb[r] - Fb[yi] > 0.0:
            xi[yi] = -1.0
            xi[r] = 1.0
            s = 1
        return s
    f = Fb[0]
    if g.nu_mode == NU_OFF:
        xi[0] = _loss_deriv(g.loss, f, y, g.loss_p1)
        chi[0] = _loss_hess(g.loss, f, y, g.loss_p1) * V[0]
        return 1 if xi[0] != 0.0 else 0
    xi[0] = 0.0
    if g.nu_mode == NU_TUBE:
        if fabs(f - y) > eps:
            xi[0] = 1.0 if f - y > 0.0 else -1.0
            s = 1
    elif g.task == T_NOVELTY:
        if f < eps:
            xi[0] = -1.0
            s = 1
    elif y * f < eps:
        xi[0] = -y
        s = 1
    return s


cdef inline double _predict(const Cfg* g, const double* Fb, double margin) noexcept nogil:
    """The label predicted from the scores (offset included): NaN once they are not finite,
    so that the runner stops a diverged learner at the example where it happened."""
    cdef Py_ssize_t c, best = 0
    if g.task == T_MULTICLASS:
        for c in range(g.C):
            if not isfinite(Fb[c]):
                return NAN
            if Fb[c] > Fb[best]:
                best = c
        return <double>best
    if not isfinite(Fb[0]):
        return NAN
    if g.task == T_REGRESSION:
        return Fb[0]
    if g.task == T_NOVELTY:
        return 1.0 if Fb[0] - margin >= 0.0 else -1.0
    return 1.0 if Fb[0] >= 0.0 else -1.0


cdef inline void _expansion(const double* k, const double* A, Py_ssize_t m, Py_ssize_t nc,
                            double* out) noexcept nogil:
    """out = A[:m]ᵀ k for the row-major m×nc block A: the same BLAS call as
    kbench.cython_core._kernels.expansion, so both paths sum in the same order."""
    cdef int n = <int>m, ncc = <int>nc, one = 1
    cdef double a = 1.0, b = 0.0
    cdef char nt = b'N'
    cdef Py_ssize_t c
    if m <= 0:
        for c in range(nc):
            out[c] = 0.0
        return
    if nc == 1:
        out[0] = ddot(&n, <double*>k, &one, <double*>A, &one)
    else:
        dgemv(&nt, &ncc, &n, &a, <double*>A, &ncc, <double*>k, &one, &b, out, &one)


cdef inline double _self_kernel(const Cfg* g, const double* x, Py_ssize_t d,
                                double xsq) noexcept nogil:
    """k(x, x), computed as kbench.cython_core._kernels.kernel_diag computes it."""
    if g.kind == K_RBF or g.kind == K_LAPLACIAN:
        return 1.0
    return _transform(g.kind, xsq, xsq, xsq, g.gamma, g.scale, g.offset, g.degree)
