"""Compiled core of LASVM (Bordes, Ertekin, Weston and Bottou, JMLR 2005).

The dual of the soft-margin SVM with a bias, max W(α) = Σ αₛyₛ − ½ Σ αₛαₜK(xₛ, xₜ) with
Σ αₛ = 0 and Aₛ ≤ αₛ ≤ Bₛ (Aₛ = min(0, Cyₛ), Bₛ = max(0, Cyₛ)), kept on an active set S
(slots 0..m-1) with the gradients gₛ = yₛ − Σₜ αₜK(xₜ, xₛ). Decision f(x) = Σ αₛK(xₛ, x) + b.

- PROCESS(k): add a new example to S with α = 0 and its gradient, pair it with the most
  violating partner of the right direction, and take one SMO step if the pair is
  τ-violating (gᵢ − gⱼ > τ, αᵢ < Bᵢ, αⱼ > Aⱼ). An example that would be a blatant
  non-support vector at once (yₖ = +1 and gₖ ≤ g_min, or yₖ = −1 and gₖ ≥ g_max) is not
  inserted, as in LASVM 1.1: it could only be removed again.
- REPROCESS: one SMO step on the most violating pair of S if it is τ-violating; then,
  step or not, remove the examples with α = 0 that can no longer form a violating pair
  (yₛ = −1 and gₛ ≥ g_max, or yₛ = +1 and gₛ ≤ g_min); b = (g_max + g_min)/2,
  δ = g_max − g_min. Removing without a step too (LASVM 1.1 evicts on every REPROCESS)
  is what bounds S over several passes: once δ ≤ τ no step is taken, and examples
  inserted then would otherwise stay in S with α = 0 for good.
- Finishing: REPROCESS until δ ≤ τ.

An SMO step on (i, j) reads the kernel rows of i and j over S, from an LRU cache keyed by
slot (``_kernel_cache.pxd``); the row of a new example is computed once and cached when
it joins S. The Python path of kernels without a compiled form runs the same steps with
rows computed by the caller (``process_row``, ``pair``, ``step_rows``, ``cleanup``).
"""
import numpy as np

from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport daxpy, ddot

from kbench.cython_core._labels cimport _sign_label
from kbench.cython_core._kernel_cache cimport CachedStore, KParams, _base, _kc_store
from kbench.cython_core._kernels cimport as_spec
from kbench.cython_core._kernel_cache import check_block as _check_block


cdef enum:
    ST_DONE = 0      # every row processed
    ST_GROW = 1      # the active set is full: grow it, then resume at this row
    ST_PENDING = 2   # the row's class already has n_init examples and the other class none:
                     # the caller keeps the row; resume after it
    ST_FLUSH = 3     # the second class just got its first example: the caller processes
                     # the kept rows; resume after this row
    ST_DISCARD = 4   # PROCESS did not insert the row (a blatant non-support vector)

STATUS_DONE, STATUS_GROW, STATUS_PENDING, STATUS_FLUSH, STATUS_DISCARD = (
    ST_DONE, ST_GROW, ST_PENDING, ST_FLUSH, ST_DISCARD)

cdef double ETA_MIN = 1e-12      # curvature floor for duplicated points (η = 0)
# Gradients closer than this count as equal: the first slot wins. An unclipped SMO step
# makes gᵢ = gⱼ exactly in exact arithmetic, so which of the two is the next "most
# violating" one would otherwise be decided by rounding (and by the BLAS build).
cdef double TIE = 1e-12
# Relative to C: a step that ends this close to a box bound ends on it.
cdef double SNAP = 1e-12


cdef class LasvmCore(CachedStore):
    """Arrays and scalars of one LASVM learner; see the module docstring.

    The active set S (vectors, labels, ids, the cache of rows) is a
    _kernel_cache.CachedStore; this class adds the coefficients, the gradients and SMO.
    """
    cdef public double C, tau
    cdef public int n_init

    cdef double[::1] alpha, g, ri

    cdef public double b, delta
    cdef public long long processed, smo_steps, finish_iters, discarded
    # PROCESS's partner found by _add's insertion test (-2: not searched); the new slot
    # cannot be that extreme itself (α = 0 sits on its bound in that direction).
    cdef Py_ssize_t partner

    def __init__(self, kernel,
                 bint compiled_kernel, double C, double tau, int n_init):
        cdef int kind
        cdef double gamma, scale, offset, degree
        kind, gamma, scale, offset, degree = as_spec(kernel).params()  # unpacked once into C locals
        self.kp = KParams(kind, gamma, scale, offset, degree)
        self.compiled_kernel = compiled_kernel
        self.C, self.tau, self.n_init = C, tau, n_init
        self.m = 0
        self.b = 0.0
        self.delta = 0.0
        self.partner = -2

    def bind(self, double[:, ::1] SV, double[::1] sq, double[::1] alpha, double[::1] g,
             double[::1] lab, long long[::1] ids, double[::1] krow, double[::1] scratch,
             double[::1] ri):
        """Use these arrays (capacity = their length; the first m rows are kept by the caller)."""
        self._bind_store(SV, sq, lab, ids, krow, scratch)
        self.alpha, self.g, self.ri = alpha, g, ri

    cpdef dict _state(self):
        state = CachedStore._state(self)
        state.update(C=self.C, tau=self.tau, n_init=self.n_init, alpha=_base(self.alpha),
                     g=_base(self.g), ri=_base(self.ri), b=self.b, delta=self.delta,
                     processed=self.processed, smo_steps=self.smo_steps,
                     finish_iters=self.finish_iters, discarded=self.discarded)
        return state

    cpdef _set_state(self, dict state):
        CachedStore._set_state(self, state)
        if state["alpha"] is not None:
            self.alpha, self.g, self.ri = state["alpha"], state["g"], state["ri"]
        for name in ("C", "tau", "n_init", "b", "delta", "processed", "smo_steps",
                     "finish_iters", "discarded"):
            setattr(self, name, state[name])
        self.partner = -2  # found and used within one step: never kept between calls

    # -- pieces -----------------------------------------------------------------------------

    cdef inline double _upper(self, Py_ssize_t s) noexcept nogil:
        return self.C if self.lab[s] > 0 else 0.0

    cdef inline double _lower(self, Py_ssize_t s) noexcept nogil:
        return 0.0 if self.lab[s] > 0 else -self.C

    cdef inline double _f_dot(self, double kdot) noexcept nogil:
        """f(x) given Σ αₛ k(xₛ, x); before both classes are in S, the class seen."""
        if self.n_pos == 0 or self.n_neg == 0:
            return -1.0 if self.n_neg > 0 else (1.0 if self.n_pos > 0 else 0.0)
        return kdot + self.b

    cdef inline double _f(self, const double* row) noexcept nogil:
        """f(x) = Σ αₛ k(xₛ, x) + b given the row; before both classes are in S, the class seen."""
        cdef int one = 1, mm = <int>self.m
        if self.n_pos == 0 or self.n_neg == 0:
            return -1.0 if self.n_neg > 0 else (1.0 if self.n_pos > 0 else 0.0)
        return ddot(&mm, &self.alpha[0], &one, <double*>row, &one) + self.b

    cdef Py_ssize_t _argmax_up(self) noexcept nogil:
        """argmax of gₛ over αₛ < Bₛ (-1 if none)."""
        cdef Py_ssize_t s, best = -1
        cdef double v = -1e300
        for s in range(self.m):
            if self.alpha[s] < self._upper(s) and self.g[s] > v + TIE:
                v = self.g[s]
                best = s
        return best

    cdef Py_ssize_t _argmin_down(self) noexcept nogil:
        """argmin of gₛ over αₛ > Aₛ (-1 if none)."""
        cdef Py_ssize_t s, best = -1
        cdef double v = 1e300
        for s in range(self.m):
            if self.alpha[s] > self._lower(s) and self.g[s] < v - TIE:
                v = self.g[s]
                best = s
        return best

    cdef void _minmax(self, Py_ssize_t* i, Py_ssize_t* j) noexcept nogil:
        """Both extremes in one pass over S: i = argmax of gₛ over αₛ < Bₛ, j = argmin of
        gₛ over αₛ > Aₛ (-1 if none), with the comparisons of _argmax_up/_argmin_down."""
        cdef Py_ssize_t s, bi = -1, bj = -1
        cdef double vi = -1e300, vj = 1e300, a, gs
        for s in range(self.m):
            a = self.alpha[s]
            gs = self.g[s]
            if self.lab[s] > 0:
                # Aₛ = 0, Bₛ = C
                if a < self.C and gs > vi + TIE:
                    vi = gs
                    bi = s
                if a > 0.0 and gs < vj - TIE:
                    vj = gs
                    bj = s
            else:
                # Aₛ = −C, Bₛ = 0
                if a < 0.0 and gs > vi + TIE:
                    vi = gs
                    bi = s
                if a > -self.C and gs < vj - TIE:
                    vj = gs
                    bj = s
        i[0] = bi
        j[0] = bj

    cdef void _remove(self, Py_ssize_t i) noexcept nogil:
        """Delete slot i from S: the last one moves into its place (and in the cache)."""
        cdef Py_ssize_t last = self.m - 1
        self.alpha[i], self.g[i] = self.alpha[last], self.g[last]
        self.alpha[last] = 0.0
        self._drop_slot(i)

    cdef void _step(self, Py_ssize_t i, Py_ssize_t j, const double* Ki,
                    const double* Kj) noexcept nogil:
        """SMO direction search on (i, j): αᵢ += λ, αⱼ −= λ, gₛ −= λ(Kᵢₛ − Kⱼₛ)."""
        cdef double eta = Ki[i] + Kj[j] - 2.0 * Ki[j]
        cdef double up = self._upper(i) - self.alpha[i]
        cdef double down = self.alpha[j] - self._lower(j)
        cdef double lam, neg, eps
        cdef int one = 1, mm = <int>self.m
        if eta < ETA_MIN:
            eta = ETA_MIN
        lam = (self.g[i] - self.g[j]) / eta
        eps = SNAP * self.C
        if lam >= up - eps or lam >= down - eps:
            # Clipped at a box bound (or within rounding of it): land exactly on it, so that
            # α = 0 and α = ±C are exact and no 1e-17 residue keeps an example in play.
            if up <= down:
                lam = up
                self.alpha[i] = self._upper(i)
                self.alpha[j] = self._lower(j) if down - up <= eps else self.alpha[j] - lam
            else:
                lam = down
                self.alpha[j] = self._lower(j)
                self.alpha[i] = self._upper(i) if up - down <= eps else self.alpha[i] + lam
        else:
            self.alpha[i] = self.alpha[i] + lam
            self.alpha[j] = self.alpha[j] - lam
        neg = -lam
        daxpy(&mm, &neg, <double*>Ki, &one, &self.g[0], &one)
        daxpy(&mm, &lam, <double*>Kj, &one, &self.g[0], &one)
        self.smo_steps += 1

    cdef void _cleanup(self) noexcept nogil:
        """End of REPROCESS: drop α = 0 examples that cannot violate; set b and δ."""
        cdef Py_ssize_t i, j, s
        cdef double gmax, gmin
        self._minmax(&i, &j)
        if i < 0 or j < 0:
            self.delta = 0.0
            return
        gmax, gmin = self.g[i], self.g[j]
        s = self.m - 1
        while s >= 0:
            if self.alpha[s] == 0.0 and ((self.lab[s] < 0 and self.g[s] >= gmax - TIE) or
                                         (self.lab[s] > 0 and self.g[s] <= gmin + TIE)):
                self._remove(s)
            s -= 1
        self.b = 0.5 * (gmax + gmin)
        self.delta = gmax - gmin

    cdef void _gap(self) noexcept nogil:
        """b and δ from the current most violating pair (when S has one)."""
        cdef Py_ssize_t i, j
        self._minmax(&i, &j)
        if i >= 0 and j >= 0:
            self.b = 0.5 * (self.g[i] + self.g[j])
            self.delta = self.g[i] - self.g[j]
        else:
            self.delta = 0.0

    cdef void _pair_process(self, Py_ssize_t k, Py_ssize_t* i, Py_ssize_t* j) noexcept nogil:
        """The PROCESS pair of the new slot k (i = j = -1 when it is not τ-violating)."""
        if self.lab[k] > 0:
            i[0] = k
            j[0] = self.partner if self.partner != -2 else self._argmin_down()
        else:
            j[0] = k
            i[0] = self.partner if self.partner != -2 else self._argmax_up()
        self.partner = -2
        if i[0] < 0 or j[0] < 0 or self.g[i[0]] - self.g[j[0]] <= self.tau:
            i[0] = -1
            j[0] = -1

    cdef void _pair_reprocess(self, Py_ssize_t* i, Py_ssize_t* j) noexcept nogil:
        self._minmax(i, j)
        if i[0] < 0 or j[0] < 0 or self.g[i[0]] - self.g[j[0]] <= self.tau:
            i[0] = -1
            j[0] = -1

    cdef int _add(self, Py_ssize_t i, const double* x, double xsq, double y, long long xid,
                  double kap, double kdot) noexcept nogil:
        """PROCESS's insertion of a new example (x, or example i of the attached CSR block)
        whose row is in krow, given kdot = Σ αₛ krowₛ (a status; slot m-1)."""
        cdef Py_ssize_t s = self.m
        cdef long long mine = self.n_pos if y > 0 else self.n_neg
        cdef long long other = self.n_neg if y > 0 else self.n_pos
        cdef bint first_of_class = mine == 0
        cdef Py_ssize_t bi, bj
        cdef double gk
        if other == 0 and mine >= self.n_init:
            return ST_PENDING
        self.partner = -2
        gk = y - kdot
        if mine > 0 and other > 0:
            # A blatant non-support vector (the removal test of REPROCESS) is not inserted.
            if y > 0:
                bj = self._argmin_down()
                self.partner = bj
                if bj >= 0 and gk <= self.g[bj] + TIE:
                    self.partner = -2
                    self.discarded += 1
                    return ST_DISCARD
            else:
                bi = self._argmax_up()
                self.partner = bi
                if bi >= 0 and gk >= self.g[bi] - TIE:
                    self.partner = -2
                    self.discarded += 1
                    return ST_DISCARD
        self._put(s, i, x, xsq)
        self.lab[s] = y
        self.alpha[s] = 0.0
        self.g[s] = gk
        self.ids[s] = xid
        if xid >= 0 and xid < self.n_ids:
            self.id_slot[xid] = s
        if y > 0:
            self.n_pos += 1
        else:
            self.n_neg += 1
        self.m = s + 1
        self.krow[s] = kap
        _kc_store(&self.cache, s, &self.krow[0], s + 1)
        self.processed += 1
        if first_of_class and self.n_pending > 0 and other > 0:
            return ST_FLUSH
        return ST_DONE

    cdef void _step_cached(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
        """An SMO step reading both rows through the cache (row i copied: j may evict it)."""
        cdef const double* Ki = self._cached_row(i, &self.scratch[0])
        memcpy(&self.ri[0], Ki, self.m * sizeof(double))
        cdef const double* Kj = self._cached_row(j, &self.scratch[0])
        self._step(i, j, &self.ri[0], Kj)

    cdef void _reprocess_cached(self) noexcept nogil:
        cdef Py_ssize_t i, j
        self._pair_reprocess(&i, &j)
        if i >= 0:
            self._step_cached(i, j)
        self._cleanup()

    # -- compiled block loop ------------------------------------------------------------------

    def block(self, const double[:, ::1] X, const double[::1] y, const long long[::1] xids,
              double[::1] pred, Py_ssize_t start, bint process_only=False):
        """Predict, PROCESS and REPROCESS rows start.. of X; returns (index, status).

        process_only: no predictions and no REPROCESS (rows kept before both classes had an
        example). With a CSR block attached, row i is the block's example i and X (n × 0) is
        not read.
        """
        cdef Py_ssize_t n = X.shape[0], i = start, k, pi, pj
        cdef const double* x
        cdef const double* row
        cdef double xsq, kap, kdot
        cdef int one = 1, mm
        cdef int status = ST_DONE
        _check_block(self, X.shape[0], "lasvm")
        with nogil:
            while i < n:
                if self.m == self.cap:
                    status = ST_GROW
                    break
                x = &X[i, 0]
                k = self._slot_of(xids[i])
                if k >= 0:
                    # Already in S: PROCESS bails out; the prediction reads its cached row.
                    if not process_only:
                        row = self._cached_row(k, &self.scratch[0])
                        pred[i] = _sign_label(self._f(row))
                    status = ST_DONE
                else:
                    kap = self._new_row(i, x, &xsq)
                    # Σ αₛ k(xₛ, x), once for the prediction and PROCESS's gradient.
                    mm = <int>self.m
                    kdot = ddot(&mm, &self.alpha[0], &one, &self.krow[0], &one) if mm > 0 else 0.0
                    if not process_only:
                        pred[i] = _sign_label(self._f_dot(kdot))
                    status = self._add(i, x, xsq, y[i], xids[i], kap, kdot)
                    if status == ST_DONE:
                        self._pair_process(self.m - 1, &pi, &pj)
                        if pi >= 0:
                            self._step_cached(pi, pj)
                    elif status == ST_DISCARD:
                        status = ST_DONE
                i += 1
                if status == ST_PENDING or status == ST_FLUSH:
                    break
                if not process_only:
                    self._reprocess_cached()
        return i, status

    def finish(self, long long max_iter, step=None):
        """The finishing step: REPROCESS until δ ≤ τ (at most max_iter times); iterations run.

        step: None, each SMO step reads its rows through the cache (compiled kernels); else
        ``step(i, j)`` takes it (a kernel with no compiled form: the caller computes the rows).
        """
        cdef long long it = 0
        cdef Py_ssize_t i, j
        cdef bint cached = step is None
        if self.m == 0:
            return 0
        with nogil:
            while it < max_iter:
                self._pair_reprocess(&i, &j)
                if i < 0:
                    break
                if cached:
                    self._step_cached(i, j)
                else:
                    with gil:
                        step(i, j)
                self._cleanup()
                it += 1
            self._cleanup()
        self.finish_iters += it
        return it

    def decision(self, const double[::1] x, double xsq):
        """f(x) (compiled kernels)."""
        if self.m > 0 and self.n_pos > 0 and self.n_neg > 0:
            self._row_into(&x[0], xsq, &self.scratch[0])
        return self._f(&self.scratch[0])

    # -- the Python path: rows computed by the caller -------------------------------------------

    def decision_row(self, const double[::1] row):
        """f(x) given k(x, SV[j]) for j < m."""
        return self._f(&row[0] if row.shape[0] > 0 else &self.scratch[0])

    def process_row(self, const double[::1] x, double xsq, double y, long long xid, double kap):
        """PROCESS's insertion given the new example's row in krow; a status."""
        cdef int one = 1, mm = <int>self.m
        cdef double kdot
        if self.m == self.cap:
            return ST_GROW
        kdot = ddot(&mm, &self.alpha[0], &one, &self.krow[0], &one) if mm > 0 else 0.0
        return self._add(0, &x[0], xsq, y, xid, kap, kdot)

    def pair(self, bint process):
        """The τ-violating pair of PROCESS (for the last slot) or REPROCESS; (-1, -1): none."""
        cdef Py_ssize_t i, j
        if process:
            self._pair_process(self.m - 1, &i, &j)
        else:
            self._pair_reprocess(&i, &j)
        return i, j

    def step_rows(self, Py_ssize_t i, Py_ssize_t j, const double[::1] Ki, const double[::1] Kj):
        """SMO step on (i, j) given their rows."""
        self._step(i, j, &Ki[0], &Kj[0])

    def cleanup(self):
        """REPROCESS's removals and the new b and δ (after a step or none)."""
        self._cleanup()

    def gap(self):
        """Set b and δ from the current most violating pair."""
        self._gap()
