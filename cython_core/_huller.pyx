"""Compiled core of the Huller (Bordes and Bottou 2005): hull updates, the block loop.

State: support vectors in slots 0..m-1 with hull coefficients split by class (``ap`` for
positives, ``an`` for negatives, each class summing to 1), the three hull dot products
PP = X_P·X_P, NP = X_N·X_P, NN = X_N·X_N, and a kernel-row cache keyed by slot. With
``ridge`` = 1/C > 0 the geometry is that of the kernel K + δᵢⱼ/C, δ the identity of
training examples (a slot, or a training id), never equality of feature vectors.

One UPDATE (paper eqs. 4–8; specs/003 §3.2) moves the hull point of the example's class
along the segment to the example by an exact, clipped line search; λ may be negative
down to −αₖ/(1−αₖ), which shrinks or removes a support vector. Initialisation averages
the first ``n_init`` examples of each class: the same step with λ forced to 1/(n+1).

``block`` runs predict-then-learn over rows of X: per row one insertion attempt
(UPDATE on the example) and ``removals`` removal attempts (UPDATE on a support vector
drawn uniformly by a counter-based generator, so that any sequence of calls draws the
same numbers). The Python path of kernels without a compiled form calls the same
methods with rows it computes itself (``learn_row``, ``pick``, ``update_sv``).
"""
import numpy as np

from scipy.linalg.cython_blas cimport ddot

from kbench.cython_core._labels cimport _sign_label
from kbench.cython_core._kernel_cache cimport CachedStore, KParams, _base, _kc_store
from kbench.cython_core._kernels cimport as_spec
from kbench.cython_core._kernel_cache import check_block as _check_block


# Status of a block (and of learn_row): resume at the returned index after acting.
cdef enum:
    ST_DONE = 0      # every row processed
    ST_GROW = 1      # the buffer is full: grow it, then resume at this row
    ST_PENDING = 2   # this row's class has its initial average and the other class has no
                     # example yet: the caller keeps the row; resume after it
    ST_FLUSH = 3     # the second class just got its first example: the caller now processes
                     # the rows it kept; resume after this row

STATUS_DONE, STATUS_GROW, STATUS_PENDING, STATUS_FLUSH = ST_DONE, ST_GROW, ST_PENDING, ST_FLUSH

# Outcome of one UPDATE, for the counters.
cdef enum:
    U_NOOP = 0
    U_STEP = 1

cdef double DEN_EPS = 1e-12      # relative: skip an update when ‖X_c − xₖ‖² is rounding noise
# Relative to max(‖X_P‖², ‖X_N‖²): hulls closer than this (nearly) touch. When the hulls
# intersect, ‖X_P − X_N‖² only tends to 0 (about as 1/t²), so the test cannot wait for 0.
cdef double SEP_EPS = 1e-6


cdef inline double _u01(unsigned long long seed, unsigned long long t) noexcept nogil:
    """The t-th uniform number in [0, 1) of stream `seed` (splitmix64 of a counter)."""
    cdef unsigned long long z = seed * 0xD1B54A32D192ED03ULL + (t + 1) * 0x9E3779B97F4A7C15ULL
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    z = z ^ (z >> 31)
    return <double>(z >> 11) * (1.0 / 9007199254740992.0)


def uniform(unsigned long long seed, unsigned long long t):
    """The t-th number of the removal-attempt generator (for tests and the Python path)."""
    return _u01(seed, t)


#: HullerCore's public scalar fields, pickled by name.
_HULLER_SCALARS = ("ridge", "allow_negative", "removals", "n_init", "seed", "avg_pos", "avg_neg",
                   "PP", "NP", "NN", "updates", "steps", "noops", "insertions", "draws",
                   "nonseparable")


cdef class HullerCore(CachedStore):
    """Arrays and scalars of one Huller; see the module docstring.

    The store of support vectors, its cache and the slots of training ids are those of
    _kernel_cache.CachedStore; this class adds the hull coefficients and the UPDATE.
    """
    cdef public double ridge
    cdef public bint allow_negative
    cdef public int removals
    cdef public int n_init
    cdef public unsigned long long seed

    cdef double[::1] ap, an

    cdef public long long avg_pos, avg_neg          # examples averaged into each class
    cdef public double PP, NP, NN
    cdef public long long updates, steps, noops, insertions, draws
    cdef public bint nonseparable

    def __init__(self, kernel,
                 bint compiled_kernel, double ridge, bint allow_negative, int removals,
                 int n_init, unsigned long long seed):
        cdef int kind
        cdef double gamma, scale, offset, degree
        kind, gamma, scale, offset, degree = as_spec(kernel).params()  # unpacked once into C locals
        self.kp = KParams(kind, gamma, scale, offset, degree)
        self.compiled_kernel = compiled_kernel
        self.ridge = ridge
        self.allow_negative = allow_negative
        self.removals = removals
        self.n_init = n_init
        self.seed = seed
        self.m = 0
        self.PP = self.NP = self.NN = 0.0

    def bind(self, double[:, ::1] SV, double[::1] sq, double[::1] ap, double[::1] an,
             double[::1] lab, long long[::1] ids, double[::1] krow, double[::1] scratch):
        """Use these arrays (capacity = their length; the first m rows are kept by the caller)."""
        self._bind_store(SV, sq, lab, ids, krow, scratch)
        self.ap, self.an = ap, an

    cpdef dict _state(self):
        state = CachedStore._state(self)
        state.update(ap=_base(self.ap), an=_base(self.an))
        for name in _HULLER_SCALARS:
            state[name] = getattr(self, name)
        return state

    cpdef _set_state(self, dict state):
        CachedStore._set_state(self, state)
        if state["ap"] is not None:
            self.ap, self.an = state["ap"], state["an"]
        for name in _HULLER_SCALARS:
            setattr(self, name, state[name])

    # -- state --------------------------------------------------------------------------

    cdef inline bint _open(self, double y) noexcept nogil:
        """Whether the class of y is still taking its initial average (no UPDATE touches it)."""
        return (self.avg_pos if y > 0 else self.avg_neg) < self.n_init

    cdef inline double _raw(self, double A, double B) noexcept nogil:
        """ŷ = (X_P − X_N)·x + (X_N·X_N − X_P·X_P)/2 given A = X_P·x, B = X_N·x."""
        return A - B + 0.5 * (self.NN - self.PP)

    cdef inline double _predict(self, double A, double B) noexcept nogil:
        if self.n_pos > 0 and self.n_neg > 0:
            return _sign_label(self._raw(A, B))
        return -1.0 if self.n_neg > 0 else 1.0

    cdef void _remove(self, Py_ssize_t i) noexcept nogil:
        """Delete support vector i: the last one moves into its slot (and in the cache)."""
        cdef Py_ssize_t last = self.m - 1
        self.ap[i], self.an[i] = self.ap[last], self.an[last]
        self.ap[last] = self.an[last] = 0.0
        self._drop_slot(i)

    cdef int _update(self, Py_ssize_t k, double yk, double A, double B, double kap,
                     double lam_forced, double* alpha_new) noexcept nogil:
        """One UPDATE of the hull of yk's class towards example k (slot k, or -1: not stored).

        A = X_P·xₖ, B = X_N·xₖ, kap = k(xₖ, xₖ), all in the plain kernel; the ridge is
        added here. lam_forced > 0 imposes λ (initial averaging). For a new example,
        alpha_new receives its coefficient λ (0: not inserted); the caller stores it.
        """
        cdef double ak = 0.0, num, den, lam, lo, one_m, base
        cdef Py_ssize_t i
        cdef double* a = &self.ap[0] if yk > 0 else &self.an[0]
        alpha_new[0] = 0.0
        self.updates += 1
        if k >= 0:
            ak = a[k]
            if yk > 0:
                A += ak * self.ridge
            else:
                B += ak * self.ridge
        kap += self.ridge
        if lam_forced > 0.0:
            lam = lam_forced
            lo = 0.0
        else:
            if yk > 0:
                num = self.PP - self.NP - A + B
                den = self.PP + kap - 2.0 * A
                base = self.PP + kap
            else:
                num = self.NN - self.NP - B + A
                den = self.NN + kap - 2.0 * B
                base = self.NN + kap
            if den <= DEN_EPS * base:
                self.noops += 1
                return U_NOOP           # xₖ is (numerically) the hull point itself
            lo = 0.0
            if self.allow_negative and ak > 0.0:
                lo = -ak / (1.0 - ak) if ak < 1.0 else -1e300
            lam = num / den
            if lam > 1.0:
                lam = 1.0
            if lam < lo:
                lam = lo
            if lam == 0.0:
                self.noops += 1
                return U_NOOP
        one_m = 1.0 - lam
        # The scalar recursions (eqs. 7–8), with the values before the move.
        if yk > 0:
            self.PP = one_m * one_m * self.PP + 2.0 * lam * one_m * A + lam * lam * kap
            self.NP = one_m * self.NP + lam * B
        else:
            self.NN = one_m * one_m * self.NN + 2.0 * lam * one_m * B + lam * lam * kap
            self.NP = one_m * self.NP + lam * A
        for i in range(self.m):
            a[i] *= one_m
        self.steps += 1
        if k < 0:
            alpha_new[0] = lam
            if lam == 1.0:
                self._purge(a, -1)
            return U_STEP
        if lam == lo and lam_forced <= 0.0:
            a[k] = 0.0                  # clipped at the bound: exact removal
        else:
            a[k] = ak * one_m + lam
        if lam == 1.0 or a[k] == 0.0:
            self._purge(a, k)
        return U_STEP

    cdef void _purge(self, double* a, Py_ssize_t keep) noexcept nogil:
        """Remove the support vectors of this class whose coefficient became exactly 0."""
        cdef Py_ssize_t i = self.m - 1
        cdef double c = 1.0 if a == &self.ap[0] else -1.0
        while i >= 0:
            if self.lab[i] == c and a[i] == 0.0:
                self._remove(i)
            i -= 1

    cdef void _append(self, Py_ssize_t i, const double* x, double xsq, double y,
                      long long xid, double alpha, double kap, bint cache_row) noexcept nogil:
        """Store a new support vector (x, or example i of the attached CSR block) in slot m;
        its kernel row (in krow) goes to the cache."""
        cdef Py_ssize_t s = self.m
        self._put(s, i, x, xsq)
        self.lab[s] = y
        if y > 0:
            self.ap[s] = alpha
            self.an[s] = 0.0
            self.n_pos += 1
        else:
            self.an[s] = alpha
            self.ap[s] = 0.0
            self.n_neg += 1
        self.ids[s] = xid
        if xid >= 0 and xid < self.n_ids:
            self.id_slot[xid] = s
        self.m = s + 1
        self.insertions += 1
        if cache_row:
            self.krow[s] = kap
            _kc_store(&self.cache, s, &self.krow[0], s + 1)

    cdef void _check_separable(self) noexcept nogil:
        cdef double d2
        if self.n_pos > 0 and self.n_neg > 0 and not self.nonseparable:
            d2 = self.PP - 2.0 * self.NP + self.NN
            if d2 <= SEP_EPS * max(self.PP, self.NN):
                self.nonseparable = True

    cdef int _learn(self, Py_ssize_t i, const double* x, double xsq, double y, long long xid,
                    const double* row, double kap) noexcept nogil:
        """The insertion attempt for one example (x, or example i of the attached CSR block)
        given its row (ST_* status).

        row: k(x, SV[j]) for j < m; for a new example it must be self.krow (the row is
        cached when the example is stored). kap = k(x, x).
        """
        cdef long long k = self._slot_of(xid)
        cdef double A = 0.0, B = 0.0, alpha = 0.0, lam
        cdef bint first_of_class
        cdef int one = 1, mm = <int>self.m
        if self.m > 0:
            A = ddot(&mm, &self.ap[0], &one, <double*>row, &one)
            B = ddot(&mm, &self.an[0], &one, <double*>row, &one)
        if k >= 0:
            if not self._open(y):
                self._update(k, y, A, B, row[k], 0.0, &alpha)
                self._check_separable()
            return ST_DONE
        if self._open(y):
            # Initial average: λ = 1/(n+1) gives X_c = mean of the class's first examples.
            first_of_class = (self.n_pos if y > 0 else self.n_neg) == 0
            if y > 0:
                self.avg_pos += 1
                lam = 1.0 / self.avg_pos
            else:
                self.avg_neg += 1
                lam = 1.0 / self.avg_neg
            self._update(-1, y, A, B, kap, lam, &alpha)
            self._append(i, x, xsq, y, xid, alpha, kap, self.m + 1 <= self.cap)
            self._check_separable()
            if first_of_class and self.n_pending > 0 and self.n_pos > 0 and self.n_neg > 0:
                return ST_FLUSH
            return ST_DONE
        if (self.n_neg if y > 0 else self.n_pos) == 0:
            return ST_PENDING
        mm = <int>self.m
        if self._update(-1, y, A, B, kap, 0.0, &alpha) == U_STEP:
            # After a collapse (λ = 1) the row no longer matches the slots: not cached.
            self._append(i, x, xsq, y, xid, alpha, kap, self.m == mm)
        self._check_separable()
        return ST_DONE

    cdef Py_ssize_t _pick(self) noexcept nogil:
        """The support vector of the next removal attempt, or -1.

        Drawn uniformly over all support vectors once both classes have one; an SV whose
        class is still taking its initial average is not touched (the draw is spent).
        """
        cdef double u
        cdef Py_ssize_t r
        if self.n_pos == 0 or self.n_neg == 0:
            return -1
        u = _u01(self.seed, self.draws)
        self.draws += 1
        r = <Py_ssize_t>(u * self.m)
        return -1 if self._open(self.lab[r]) else r

    cdef void _update_sv(self, Py_ssize_t r, const double* row) noexcept nogil:
        """UPDATE on support vector r given its row k(SV[r], SV[j]), j < m."""
        cdef int one = 1, mm = <int>self.m
        cdef double A, B, alpha
        A = ddot(&mm, &self.ap[0], &one, <double*>row, &one)
        B = ddot(&mm, &self.an[0], &one, <double*>row, &one)
        self._update(r, self.lab[r], A, B, row[r], 0.0, &alpha)
        self._check_separable()

    # -- the compiled block loop ------------------------------------------------------------

    def block(self, const double[:, ::1] X, const double[::1] y, const long long[::1] xids,
              double[::1] pred, Py_ssize_t start, bint insert_only=False):
        """Predict then learn rows start.. of X (compiled kernels); returns (index, status).

        insert_only: no predictions and no removal attempts (the rows kept before both
        classes had an example). With a CSR block attached, row i is the block's example i
        and X (n × 0) is not read.
        """
        cdef Py_ssize_t n = X.shape[0], i = start, j, r, mm
        cdef const double* x
        cdef const double* row
        cdef double xsq, kap, A, B
        cdef long long k
        cdef int status = ST_DONE, one = 1, im
        _check_block(self, X.shape[0], "huller")
        with nogil:
            while i < n:
                if self.m == self.cap:
                    status = ST_GROW
                    break
                x = &X[i, 0]
                xsq = 0.0
                k = self._slot_of(xids[i])
                if k >= 0:
                    row = self._cached_row(k, &self.scratch[0])
                    kap = row[k]
                else:
                    kap = self._new_row(i, x, &xsq)
                    row = &self.krow[0]
                if not insert_only:
                    A = B = 0.0
                    if self.m > 0:
                        im = <int>self.m
                        A = ddot(&im, &self.ap[0], &one, <double*>row, &one)
                        B = ddot(&im, &self.an[0], &one, <double*>row, &one)
                    pred[i] = self._predict(A, B)
                status = self._learn(i, x, xsq, y[i], xids[i], row, kap)
                i += 1
                if status == ST_PENDING or status == ST_FLUSH:
                    break
                status = ST_DONE
                if not insert_only:
                    for j in range(self.removals):
                        r = self._pick()
                        if r < 0:
                            continue
                        self._update_sv(r, self._cached_row(r, &self.scratch[0]))
        return i, status

    def decision(self, const double[::1] x, double xsq):
        """The raw ŷ(x) and the prediction (compiled kernels): (raw, label)."""
        cdef double A = 0.0, B = 0.0
        cdef int one = 1, im = <int>self.m
        if self.m > 0:
            self._row_into(&x[0], xsq, &self.scratch[0])
            A = ddot(&im, &self.ap[0], &one, &self.scratch[0], &one)
            B = ddot(&im, &self.an[0], &one, &self.scratch[0], &one)
        return self._raw(A, B), self._predict(A, B)

    # -- the Python path: rows computed by the caller -----------------------------------------

    def decision_row(self, const double[::1] row):
        """(raw ŷ, label) given k(x, SV[j]) for j < m."""
        cdef double A = 0.0, B = 0.0
        cdef int one = 1, im = <int>self.m
        if self.m > 0:
            A = ddot(&im, &self.ap[0], &one, <double*>&row[0], &one)
            B = ddot(&im, &self.an[0], &one, <double*>&row[0], &one)
        return self._raw(A, B), self._predict(A, B)

    def learn_row(self, const double[::1] x, double xsq, double y, long long xid,
                  const double[::1] row, double kap):
        """Insertion attempt given the example's row (krow for a new example); a status."""
        if self.m == self.cap:
            return ST_GROW
        if self._slot_of(xid) < 0 and &row[0] != &self.krow[0]:
            raise ValueError("kbench huller: a new example's row must be in krow")
        return self._learn(0, &x[0], xsq, y, xid, &row[0] if row.shape[0] > 0 else NULL, kap)

    def pick(self):
        """Slot of the next removal attempt (advancing the generator), or -1."""
        return self._pick()

    def update_sv(self, Py_ssize_t r, const double[::1] row):
        """UPDATE on support vector r given its row."""
        self._update_sv(r, &row[0])
