"""The configuration record of the compiled online kernel learners and their codes.

``OnlineConfig`` holds, typed, what NORMA, SVMD, PiSTOL and POLK's compiled loops need to
know about the kernel, the task, the loss and the learner's settings; the enums ``Task``,
``MulticlassLoss`` and ``NuMode`` are the codes it holds, exported for the Python side
(kbench.learners.online_loss), which therefore keeps no copy of them.
"""


def _rebuild(dict fields):
    return OnlineConfig(**fields)


cdef class OnlineConfig:
    """The configuration of a compiled online learner, fixed when it is built.

    Every field is keyword-only with a default (0, off, or ``eta_max`` = ∞); see
    ``_online_ops.pxd`` for what each means. ``kind`` is -1 when the kernel has no
    compiled form (the block loop then does not run), ``loss`` one of ``LossKind``,
    ``MulticlassLoss.L_MC_HINGE``/``L_SOFTMAX``, or ``L_PYTHON``.
    """

    def __init__(self, *, int kind=-1, double gamma=0.0, double scale=0.0, double offset=0.0,
                 double degree=0.0, int task=T_BINARY, Py_ssize_t n_out=1, int loss=L_PYTHON,
                 double loss_p1=0.0, int nu_mode=NU_OFF, double nu=0.0, double margin=0.0,
                 double eta0=0.0, double c=0.0, bint use_offset=False, int schedule=0,
                 double tau=0.0, double eta_eps0=0.0, bint nu_additive=False, double mu=0.0,
                 double lam=0.0, bint exact=False, bint lagged=False,
                 double eta_max=float("inf")):
        if n_out < 1:
            raise ValueError(f"kbench: a configuration needs n_out >= 1, got {n_out}")
        self.c.kind, self.c.gamma, self.c.scale = kind, gamma, scale
        self.c.offset, self.c.degree = offset, degree
        self.c.task, self.c.C, self.c.loss, self.c.loss_p1 = task, n_out, loss, loss_p1
        self.c.nu_mode, self.c.nu, self.c.margin = nu_mode, nu, margin
        self.c.eta0, self.c.c, self.c.use_offset = eta0, c, use_offset
        self.c.schedule, self.c.tau, self.c.eta_eps0 = schedule, tau, eta_eps0
        self.c.nu_additive, self.c.mu, self.c.lam = nu_additive, mu, lam
        self.c.exact, self.c.lagged, self.c.eta_max = exact, lagged, eta_max

    def fields(self) -> dict:
        """The fields by the names ``__init__`` takes (a copy)."""
        cdef dict d = self.c  # Cython converts the struct to a dict
        d["n_out"] = d.pop("C")
        for name in ("use_offset", "nu_additive", "exact", "lagged"):
            d[name] = bool(d[name])
        return d

    def __reduce__(self):
        return _rebuild, (self.fields(),)

    def __eq__(self, other):
        if not isinstance(other, OnlineConfig):
            return NotImplemented
        return self.fields() == other.fields()

    def __hash__(self):
        return hash(tuple(self.fields().items()))

    def __repr__(self) -> str:
        return "OnlineConfig(" + ", ".join(f"{k}={v!r}" for k, v in self.fields().items()) + ")"


def compiled_gradient(OnlineConfig cfg not None, const double[::1] F, double y, double[::1] xi,
                      double[::1] chi):
    """ξ = ∂loss/∂F at the scores F for a compiled (or built-in multiclass) loss, as the
    block loops of PiSTOL and POLK compute it; chi is scratch of C entries (the Hessian
    product the shared gradient also computes)."""
    cdef Cfg g = cfg.c
    if F.shape[0] != g.C or xi.shape[0] != g.C or chi.shape[0] != g.C:
        raise ValueError("kbench: compiled_gradient array shapes do not match the configuration")
    if g.loss < 0:
        raise ValueError("kbench: compiled_gradient needs a compiled loss")
    _gradient(&g, 0.0, &F[0], &F[0], y, &xi[0], &chi[0])


def compiled_self_kernel(OnlineConfig cfg not None, const double[::1] x, double xsq):
    """k(x, x) for a compiled kernel, as the block loops compute it."""
    cdef Cfg g = cfg.c
    return _self_kernel(&g, &x[0] if x.shape[0] else NULL, x.shape[0], xsq)
