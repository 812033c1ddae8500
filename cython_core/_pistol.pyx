"""Compiled PiSTOL (Orabona 2014, Alg. 3) and kernel SGD with its averaged solution, over the
learner toolkit's kernel expansion.

Both keep ``g = Σ_i c_i k(x_i, ·)`` (one column per output) and, per stored vector, the
second column ``u_i = c_i · W_(i)`` with ``W_t = Σ_{τ≤t} w_τ`` the running sum of the
multipliers and ``W_(i)`` its value right after round i. Then

* the iterate of round t is ``f_t = w_t · g_{t−1}``;
* the average ``f̄_T = (1/T) Σ_{t≤T} f_t = (W_T · g − u) / T`` (specs/002 §1.1), so one kernel
  row and one two-column expansion give the online, the last and the averaged predictions.

PiSTOL: ``w_t = (b / α_{t−1}) exp(‖g_{t−1}‖² / (2 α_{t−1}))``, computed in log space, and the
new coefficient is ``−s_t`` (the loss gradient at the online prediction). SGD: ``w_t = 1``
and the new coefficient is ``−η_t s_t``, so ``W_(i) = i``. ``‖g‖²`` is updated exactly from
the kernel row already computed: ``‖g + c k(x,·)‖² = ‖g‖² + 2 c·g(x) + ‖c‖² k(x, x)``.
"""
cimport numpy as cnp
from libc.math cimport exp, log, sqrt
from libc.stdlib cimport free

from kbench.cython_core._loop cimport *
from kbench.cython_core._online_ops cimport (
    Cfg, OnlineConfig, _check_given, _predict, _row_gradient, _self_kernel,
)

cnp.import_array()

# Largest log w_t kept: exp(700) is near the top of float64 (exp(709.8) overflows).
cdef double _LOG_W_MAX = 700.0
LOG_W_MAX = _LOG_W_MAX


class MultiplierOverflow(FloatingPointError):
    """PiSTOL's multiplier exp(‖g‖²/(2α)) would exceed the range of float64."""


cdef class PistolState:
    """The settings and running state of PiSTOL or kernel SGD; picklable.

    Settings: ``sgd`` (kernel SGD: w = 1 and steps η, or η/√t with ``inv_sqrt``, else
    PiSTOL with ``log_b`` = log b and ``a``), ``last`` (predict with the last iterate, else
    the average). State: the rounds ``t``, ``norm2`` = ‖g‖², PiSTOL's ``acc_alpha`` = α,
    ``W`` the sum of the multipliers, the largest exponent ‖g‖²/(2α) used and the largest
    k(x, x) met, and ``overflow``, the log w at which the multiplier overflowed (0: none).
    """

    cdef public bint sgd, last, inv_sqrt
    cdef public double log_b, a, eta
    cdef public double t, norm2, acc_alpha, W, max_exponent, sup_kxx, overflow

    def __init__(self, *, bint sgd=False, bint last=False, bint inv_sqrt=False,
                 double log_b=0.0, double a=1.0, double eta=1.0, double acc_alpha=1.0,
                 double t=0.0, double norm2=0.0, double W=0.0, double max_exponent=0.0,
                 double sup_kxx=0.0, double overflow=0.0):
        self.sgd, self.last, self.inv_sqrt = sgd, last, inv_sqrt
        self.log_b, self.a, self.eta = log_b, a, eta
        self.t, self.norm2, self.acc_alpha, self.W = t, norm2, acc_alpha, W
        self.max_exponent, self.sup_kxx, self.overflow = max_exponent, sup_kxx, overflow

    def fields(self) -> dict:
        """Every field by the name ``__init__`` takes."""
        return {name: getattr(self, name) for name in (
            "sgd", "last", "inv_sqrt", "log_b", "a", "eta", "acc_alpha", "t", "norm2", "W",
            "max_exponent", "sup_kxx", "overflow")}

    def __reduce__(self):
        return _rebuild, (self.fields(),)

    def log_w(self):
        """log of the next round's multiplier (0 for SGD); raises the largest exponent used,
        and raises :class:`MultiplierOverflow` (the state marked) once it would overflow."""
        cdef double logw = _log_w(self)
        if logw > _LOG_W_MAX:
            self.overflow = logw
            raise self.overflow_error()
        return logw

    def outputs(self, const double[:, ::1] raw not None, double[:, ::1] out not None):
        """The decisions (n × C) into ``out`` from the raw outputs ``[g(x) | u(x)]`` (n × 2C):
        the last iterate w·g, or the average (W·g − u)/t, zeros before any round; one call
        for one row or a block, with the block loop's arithmetic."""
        cdef Py_ssize_t n = raw.shape[0], C = out.shape[1], i, c
        cdef double w = 0.0, W = self.W, t = self.t
        cdef bint last = self.last
        if raw.shape[1] != 2 * C or out.shape[0] != n:
            raise ValueError(f"kbench: {n} × {raw.shape[1]} raw outputs for {out.shape[0]} × "
                             f"{C} decisions (2 raw values a decision)")
        if last:
            w = exp(self.log_w())
        with nogil:
            for i in range(n):
                for c in range(C):
                    if last:
                        out[i, c] = w * raw[i, c]
                    elif t > 0.0:
                        out[i, c] = (W * raw[i, c] - raw[i, C + c]) / t
                    else:
                        out[i, c] = 0.0

    def overflow_error(self):
        """The :class:`MultiplierOverflow` of this state, whose ``overflow`` is set."""
        return MultiplierOverflow(
            f"pistol: the multiplier exp(‖g‖²/(2α)) overflows float64 after {int(self.t)} "
            f"rounds (log w = {self.overflow:.1f}, ‖g‖² = {self.norm2:.4g}, α = "
            f"{self.acc_alpha:.4g}); the stream drives the exponent up linearly, which "
            "happens when |ℓ'| stays near L on aligned examples: check that the loss's "
            "Lipschitz constant and the kernel's k(x, x) ≤ 1 hold"
        )


def _rebuild(dict fields):
    return PistolState(**fields)


cdef inline double _log_w(PistolState s) noexcept:
    """log w_t from the state after round t − 1: log b − log α + ‖g‖²/(2α) (SGD: 0); the
    exponent is kept as the largest used."""
    cdef double expo
    if s.sgd:
        return 0.0
    expo = s.norm2 / (2.0 * s.acc_alpha)
    if expo > s.max_exponent:
        s.max_exponent = expo
    return s.log_b - log(s.acc_alpha) + expo


def pistol_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
                 bint have_row=False, double kxx=0.0, *, OnlineConfig cfg not None,
                 PistolState state not None, const double[::1] xi_given=None):
    """PiSTOL or kernel SGD (``state.sgd``) on rows start, start+1, … of ``rows``.

    The store holds 2C columns, [c | u]; ``cfg`` gives the task, the loss and its C outputs.
    Each round: the multiplier w (raising :class:`MultiplierOverflow` once log w > 700),
    the online scores w·g(x) and the prediction (the last iterate, or the average
    (W·g(x) − u(x))/T), the loss gradient ξ at the online scores (``xi_given`` for a loss
    without a compiled form: one row a call), then W += w and, when ξ ≠ 0, x is stored
    with coefficient −ξ (SGD: −η_t ξ). Calling convention and result as
    :func:`kbench.cython_core._perceptron.perceptron_block`.
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A)
    cdef Cfg g = cfg.c
    cdef Py_ssize_t C = g.C, C2 = A.C, m = A.m, n = rows.n, cap = A.cap, i = start, c
    if C2 != 2 * C:
        raise ValueError(f"kbench: PiSTOL's store needs {2 * C} columns, got {C2}")
    _check_given(xi_given, C, n - start, g.loss < 0)
    cdef const double* given = &xi_given[0] if xi_given is not None else NULL
    cdef double* coef = A.alpha
    cdef double* krow = A.krow
    cdef const double* Y = A.y
    cdef double* P = A.pred
    cdef long long evals = 0
    cdef double xsq, kself, logw, w, T, scale, dot, nx2, norm2, value
    cdef bint first, nonzero
    cdef double* work = _doubles(7 * C)
    cdef double* GU = work
    cdef double* Fon = work + 2 * C
    cdef double* Fout = work + 3 * C
    cdef double* xi = work + 4 * C
    cdef double* chi = work + 5 * C
    try:
        while i < n:
            first = have_row and i == 0
            logw = _log_w(state)
            if logw > _LOG_W_MAX:
                state.overflow = logw
                raise state.overflow_error()
            w = exp(logw)
            with nogil:
                evals += _row_at(&R, i, m, first, &xsq, krow)
                _expansion(krow, coef, m, C2, 1.0, GU)
            # The online scores and the decision returned: the last iterate's, or the
            # average of the T rounds learned (0 before any).
            T = state.t
            for c in range(C):
                Fon[c] = w * GU[c]
                if state.last:
                    Fout[c] = Fon[c]
                elif T > 0.0:
                    Fout[c] = (state.W * GU[c] - GU[C + c]) / T
                else:
                    Fout[c] = 0.0
            nonzero = _row_gradient(&g, Fon, Y[i], given, xi, chi)
            if nonzero and _store_full(m, cap, first, &evals, m):
                break
            P[i] = _predict(&g, Fout, g.margin)
            state.W += w
            if nonzero:
                # k(x, x): the given one of a kernel the loop cannot compute (read only
                # from xsq for the built-in ones, so never from the row itself).
                kself = kxx if R.kind < 0 else _self_kernel(&g, NULL, 0, xsq)
                if not state.sgd:
                    scale = 1.0
                elif state.inv_sqrt:
                    scale = state.eta / sqrt(state.t + 1.0)  # η/√t at round t = T + 1
                else:
                    scale = state.eta
                dot = 0.0
                nx2 = 0.0
                for c in range(C):
                    dot += xi[c] * GU[c]
                    nx2 += xi[c] * xi[c]
                # ‖g − scale·ξ k(x,·)‖²; cancellation can take it a hair below 0 (P4).
                norm2 = state.norm2 - 2.0 * scale * dot + scale * scale * nx2 * kself
                state.norm2 = norm2 if norm2 > 0.0 else 0.0
                if not state.sgd:
                    # The increment is a·|s_t|·‖k(x_t,·)‖: the RKHS norm, sqrt(k(x, x)) (P6).
                    state.acc_alpha += state.a * sqrt(nx2) * sqrt(kself)
                _store_at(&R, i, m)
                R.sq[m] = xsq
                for c in range(C):
                    value = -scale * xi[c]
                    coef[m * C2 + c] = value
                    coef[m * C2 + C + c] = value * state.W
                m += 1
                if kself > state.sup_kxx:
                    state.sup_kxx = kself
            state.t += 1.0
            i += 1
    finally:
        free(work)
    return i, m, evals
