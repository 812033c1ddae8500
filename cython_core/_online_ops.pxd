# Shared pieces of the compiled online kernel learners (NORMA, SVMD, PiSTOL, POLK): their
# configuration, the loss gradient ξ and Hessian-vector product χ = Λ·V of a score vector,
# the ν-trick's margin losses, and the prediction rule.
#
# The configuration is an OnlineConfig object (a typed record built once by the Python
# side, kbench.learners.make_cfg); the codes it holds are the
# cpdef enums below, which Python reads from kbench.cython_core._online_ops. The inline
# functions are mirrored formula for formula in kbench/learners/online_loss.py: a loss
# run from Python and the compiled block loop must agree.
from libc.math cimport NAN, exp, fabs, isfinite

from kbench.cython_core._kernels cimport K_LAPLACIAN, K_RBF, _expansion, _sq_row, _transform
from kbench.cython_core._labels cimport _rival
from kbench.cython_core._losses cimport _loss_deriv, _loss_hess
from kbench.cython_core._sparse cimport SparseRows, _block_row


# Tasks (the keys of the learners' ``tasks``).
cpdef enum Task:
    T_BINARY = 0
    T_MULTICLASS = 1
    T_REGRESSION = 2
    T_NOVELTY = 3


# Multiclass losses, numbered after the scalar ids of _losses.LossKind. The loss plugins
# have no compiled id for them; the learners recognise the two built-in classes.
cpdef enum MulticlassLoss:
    L_MC_HINGE = 64
    L_SOFTMAX = 65
    # The loss has no compiled form: only the Python path can run it.
    L_PYTHON = -1


# ν-trick modes: off, an adapted hinge margin ε (binary, multiclass, novelty), or an
# adapted ε-insensitive tube (regression, where the ν-gradient has the opposite sign).
cpdef enum NuMode:
    NU_OFF = 0
    NU_MARGIN = 1
    NU_TUBE = 2


# The fields, by the names OnlineConfig takes them: the kernel (kind, gamma, scale, offset,
# degree: Kernel.compiled()), the task and its number of scores (C, ``n_out``), the loss
# and its parameter, the ν-trick (mode, ν, the novelty margin), and each learner's own
# settings (NORMA: eta0, c, schedule, tau, eta_eps0, nu_additive; SVMD: mu, lam, exact,
# lagged, eta_max; both: use_offset). Fields a learner does not use stay at their defaults.
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


# A Cfg owned by a Python object: the learners build one per configuration and pass it to
# every compiled call.
cdef class OnlineConfig:
    cdef Cfg c


cdef inline int _check_given(const double[::1] xi_given, Py_ssize_t C, Py_ssize_t rows,
                             bint needed) except -1:
    """The loss gradient handed to a block loop, ``xi_given``: there when the loop cannot
    compute it (``needed``), and then one row's (``rows`` = 1), of C values."""
    if xi_given is None and needed:
        raise ValueError("kbench: a loss without a compiled form needs its gradient given")
    if xi_given is not None and (xi_given.shape[0] != C or rows > 1):
        raise ValueError(f"kbench: a given gradient is one row's, of {C} values")
    return 0


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


cdef inline bint _row_gradient(const Cfg* g, const double* F, double y, const double* given,
                               double* xi, double* chi) noexcept nogil:
    """One row's gradient ξ (C values) at its scores F without the ν-trick's margin: the
    compiled loss's, or ``given`` from Python (NULL: none given); whether any of it is
    non-zero, that is, whether the row updates the model."""
    cdef Py_ssize_t c
    cdef bint nonzero = False
    if given == NULL:
        _gradient(g, 0.0, F, F, y, xi, chi)
    else:
        for c in range(g.C):
            xi[c] = given[c]
    for c in range(g.C):
        if xi[c] != 0.0:
            nonzero = True
    return nonzero


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


cdef inline double _self_kernel(const Cfg* g, const double* x, Py_ssize_t d,
                                double xsq) noexcept nogil:
    """k(x, x), computed as kbench.cython_core._kernels.kernel_diag computes it."""
    if g.kind == K_RBF or g.kind == K_LAPLACIAN:
        return 1.0
    return _transform(g.kind, xsq, xsq, xsq, g.gamma, g.scale, g.offset, g.degree)


cdef inline Py_ssize_t _row_scores(const Cfg* g, const double* SV, const double* sq,
                                   Py_ssize_t m, Py_ssize_t d, const double* x, double* xsq,
                                   double* krow, const double* coef, Py_ssize_t ncoef,
                                   double* F, SparseRows* sp=NULL, Py_ssize_t i=0) noexcept nogil:
    """The first steps of every online learner's block loop: ‖x‖² into xsq, the kernel row
    of x against the first m stored rows into krow, and the expansion F = Σᵢ krowᵢ coefᵢ
    over the m × ncoef coefficient block (the calls of the per-example path). Returns the
    number of kernel values computed (m). With CSR rows ``sp`` the row is example i's,
    against the store (x is its mark)."""
    cdef Py_ssize_t evals
    if sp == NULL:
        evals = _sq_row(g.kind, g.gamma, g.scale, g.offset, g.degree, SV, m, d, sq, x, False,
                        xsq, krow)
    else:
        evals = _block_row(sp, i, m, xsq, krow)
    _expansion(krow, coef, m, ncoef, 1.0, F)
    return evals


cdef inline double _clipped_exp(double z) noexcept nogil:
    """exp(z) with z clipped to [−50, 50]: the factor of the ν-trick's log-space step of ε,
    ε ← ε exp(z), kept from overflowing."""
    if z > 50.0:
        z = 50.0
    elif z < -50.0:
        z = -50.0
    return exp(z)


cdef inline Py_ssize_t _ring_slot(Py_ssize_t* m, Py_ssize_t* head, Py_ssize_t cap,
                                  double* evictions) noexcept nogil:
    """The slot of a new entry in NORMA's and SVMD's ring buffer of cap rows, m of them
    used: the next free one (m grows), else the oldest, ``head``, which is evicted (head
    moves on, evictions counts it)."""
    cdef Py_ssize_t slot
    if m[0] < cap:
        slot = m[0]
        m[0] += 1
    else:
        slot = head[0]
        head[0] = (head[0] + 1) % cap
        evictions[0] += 1.0
    return slot
