"""Storage of the ramp-loss SVM core (``_ramp``): the stored examples, their kernel rows
and the support vectors, with the LRU cache of kernel rows over the stored examples.

:class:`RampStore` holds every stored example (``I``), its α, g and V flag; a compact copy
of the support vectors (α > 0) for predictions; and an LRU cache of kernel rows over I
with a byte budget. A cached row is valid on a prefix of I and is extended lazily when I
grows; the kernel values a prediction computes against the support vectors are appended
to the support vectors' cached rows for free. ``kernel_evals`` counts values computed,
``kernel_requests`` the values an implementation without a cache would compute. The
kernel comes as a :class:`~kbench.cython_core._kernels.KernelSpec` (or its tuple).

With ``sparse`` set, the examples are CSR rows: each stored example is a span
``[st[k], en[k])`` of a pool of indices and values, the support vectors' copy holds the
spans of their examples' rows (not copies), and every kernel row is ``_sparse_row``'s
(``_sparse.pxd``), O(nnz) per value. A removed example leaves a hole in the pool; the pool
is repacked (live rows in example order, at twice their size) when a new row does not fit.
The dense arrays ``X`` and ``SVX`` then hold one unused column.
"""
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy

from kbench.cython_core._kernels cimport (
    K_LAPLACIAN, K_NOT_COMPILED, K_RBF, KernelSpec, _dot, _kernel_one, _kernel_row, _transform,
    as_spec,
)
from kbench.cython_core._sparse cimport _sparse_row
from kbench.cython_core._sparse_checks cimport S_MERGE, S_SCATTER

import numpy as np

from kbench.cython_core._sparse import check_indices, check_rows

#: Largest dimension scattered into a dense work vector (128 MB), as SparseSupportBuffer.
SCATTER_MAX = 1 << 24


cdef class RampStore:
    """The stored examples, kernel rows and support vectors of the ramp-loss SVM (see the
    module docstring); :class:`~kbench.cython_core._ramp.RampCore` adds the solver."""

    def __init__(self, kernel, pykernel, bint const_diag, Py_ssize_t d, double C,
                 double s, double tau, double eps_gain, long long max_outer,
                 long long max_steps, long long refresh, long long m_keep,
                 double cache_bytes, bint sparse=False):
        cdef KernelSpec spec = as_spec(kernel)  # a KernelSpec, or its tuple
        self.kind = spec.kind
        self.gamma, self.kscale, self.koffset, self.degree = (
            spec.gamma, spec.scale, spec.offset, spec.degree)
        self.pykernel = pykernel if self.kind == K_NOT_COMPILED else None
        self.const_diag = const_diag
        self.d = d
        self.C, self.s, self.tau, self.eps_gain = C, s, tau, eps_gain
        self.grad_sign = -1.0
        self.max_outer, self.max_steps, self.refresh, self.m_keep = (
            max_outer, max_steps, refresh, m_keep)
        self.cache_bytes = cache_bytes
        self.sparse = sparse
        if sparse:
            if self.kind == K_NOT_COMPILED:
                raise TypeError("kbench ramp SVM: CSR rows need a built-in kernel")
            self.strategy = S_SCATTER if d <= SCATTER_MAX else S_MERGE
            self.work_ = np.zeros(max(d, 1) if self.strategy == S_SCATTER else 1)
            self.work = self.work_
        self.last_x = None
        self.last_version = -1
        self.trace = False
        self.history = []
        self.reset()

    def __reduce__(self):
        # A core does not pickle (as before it had CSR rows: Cython's generated pickling,
        # which refused it then, would now read the memoryviews of the mode not in use).
        raise TypeError("no default __reduce__ due to non-trivial __cinit__")

    def reset(self):
        """Forget every example and counter."""
        self.n = 0
        self.nsv = 0
        self.cap = 0
        self.svcap = 0
        self.nslots = 0
        self.kernel_evals = self.kernel_requests = self.steps = self.outer_total = 0
        self.outer_max = self.outer_caps = self.step_caps = self.removed = 0
        self.updates = self.seen = self.refresh_evals = 0
        self.ex_steps = self.since_refresh = self.clock = 0
        self.version += 1
        self.drift_max = 0.0
        self.last_update = -1
        self._grow(16)
        self._grow_sv(16)
        if self.sparse:
            self.pool_end = 0
            self._set_pool(np.zeros(64, dtype=np.int32), np.zeros(64))

    # -- storage --------------------------------------------------------------------------

    cdef void _bind(self):
        self.X = self.X_
        self.sq = self.sq_
        self.y = self.y_
        self.alpha = self.alpha_
        self.g = self.g_
        self.kd = self.kd_
        self.inV = self.inV_
        self.age = self.age_
        self.svpos = self.svpos_
        self.cslot = self.cslot_
        self.tmp = self.tmp_
        self.scratch = self.scratch_
        self.KC = self.KC_
        self.cown = self.cown_
        self.clen = self.clen_
        self.cstamp = self.cstamp_
        if self.sparse:
            self.st = self.st_
            self.en = self.en_

    cdef Py_ssize_t _width(self):
        """Columns of the dense arrays X and SVX: d, or one unused column for CSR rows."""
        return 1 if self.sparse or self.d < 1 else self.d

    cdef void _grow(self, Py_ssize_t new_cap):
        """Enlarge the per-example arrays to new_cap rows, and re-plan the row cache."""
        cdef Py_ssize_t n = self.n, old_slots = self.nslots, new_slots, sl, own
        X_ = np.zeros((new_cap, self._width()))
        if n and not self.sparse:
            X_[:n, : self.d] = self.X_[:n, : self.d]
        self.X_ = X_
        fields = (("sq_", np.float64, 0.0), ("y_", np.float64, 0.0),
                  ("alpha_", np.float64, 0.0), ("g_", np.float64, 0.0),
                  ("kd_", np.float64, 0.0), ("inV_", np.uint8, 0),
                  ("age_", np.int64, 0), ("svpos_", np.intp, -1), ("cslot_", np.intp, -1))
        if self.sparse:
            fields += (("st_", np.int64, 0), ("en_", np.int64, 0))
        for name, dtype, fill in fields:
            arr = np.full(new_cap, fill, dtype=dtype)
            if n:
                arr[:n] = getattr(self, name)[:n]
            setattr(self, name, arr)
        self.tmp_ = np.zeros(new_cap, dtype=np.intp)
        self.scratch_ = np.zeros(new_cap)
        # As many cached rows of new_cap values as the byte budget holds (never more rows
        # than examples). The first slots keep their rows; the others are dropped.
        new_slots = <Py_ssize_t>(self.cache_bytes // (8.0 * new_cap))
        if new_slots > new_cap:
            new_slots = new_cap
        KC_ = np.empty((max(new_slots, 1), new_cap))
        cown_ = np.full(max(new_slots, 1), -1, dtype=np.intp)
        clen_ = np.zeros(max(new_slots, 1), dtype=np.intp)
        cstamp_ = np.zeros(max(new_slots, 1), dtype=np.int64)
        for sl in range(old_slots):
            own = self.cown_[sl]
            if own < 0:
                continue
            if sl < new_slots:
                KC_[sl, : self.clen_[sl]] = self.KC_[sl, : self.clen_[sl]]
                cown_[sl] = own
                clen_[sl] = self.clen_[sl]
                cstamp_[sl] = self.cstamp_[sl]
            else:
                self.cslot_[own] = -1
        self.KC_, self.cown_, self.clen_, self.cstamp_ = KC_, cown_, clen_, cstamp_
        self.nslots = new_slots
        self.cap = new_cap
        self._bind()

    cdef void _bind_sv(self):
        self.SVX = self.SVX_
        self.SVsq = self.SVsq_
        self.SVc = self.SVc_
        self.SVown = self.SVown_
        self.krow = self.krow_
        if self.sparse:
            self.SVst = self.SVst_
            self.SVen = self.SVen_

    cdef void _grow_sv(self, Py_ssize_t new_cap):
        cdef Py_ssize_t m = self.nsv
        if self.sparse:
            SVst_ = np.zeros(new_cap, dtype=np.int64)
            SVen_ = np.zeros(new_cap, dtype=np.int64)
            if m:
                SVst_[:m] = self.SVst_[:m]
                SVen_[:m] = self.SVen_[:m]
            self.SVst_, self.SVen_ = SVst_, SVen_
        SVX_ = np.zeros((new_cap, self._width()))
        SVsq_ = np.zeros(new_cap)
        SVc_ = np.zeros((new_cap, 1))
        SVown_ = np.full(new_cap, -1, dtype=np.intp)
        krow_ = np.zeros(new_cap)
        if m:
            if not self.sparse:
                SVX_[:m] = self.SVX_[:m]
            SVsq_[:m] = self.SVsq_[:m]
            SVc_[:m] = self.SVc_[:m]
            SVown_[:m] = self.SVown_[:m]
            krow_[:m] = self.krow_[:m]
        self.SVX_, self.SVsq_, self.SVc_, self.SVown_, self.krow_ = SVX_, SVsq_, SVc_, SVown_, krow_
        self.svcap = new_cap
        self._bind_sv()

    cdef void _sv_update(self, Py_ssize_t i):
        """Bring example i's entry of the support-vector copy in line with α_i."""
        cdef Py_ssize_t p = self.svpos[i], last, j
        if self.alpha[i] > 0.0:
            if p < 0:
                if self.nsv == self.svcap:
                    self._grow_sv(2 * self.svcap)
                p = self.nsv
                self.nsv += 1
                if self.sparse:
                    self.SVst[p] = self.st[i]
                    self.SVen[p] = self.en[i]
                else:
                    memcpy(&self.SVX[p, 0], &self.X[i, 0], self.d * sizeof(double))
                self.SVsq[p] = self.sq[i]
                self.SVown[p] = i
                self.svpos[i] = p
            self.SVc[p, 0] = self.alpha[i] * self.y[i]
        elif p >= 0:
            last = self.nsv - 1
            if p != last:
                if self.sparse:
                    self.SVst[p] = self.SVst[last]
                    self.SVen[p] = self.SVen[last]
                else:
                    memcpy(&self.SVX[p, 0], &self.SVX[last, 0], self.d * sizeof(double))
                self.SVsq[p] = self.SVsq[last]
                self.SVc[p, 0] = self.SVc[last, 0]
                j = self.SVown[last]
                self.SVown[p] = j
                self.svpos[j] = p
                self.krow[p] = self.krow[last]
            self.nsv -= 1
            self.svpos[i] = -1
        self.version += 1

    # -- the pool of CSR rows -----------------------------------------------------------------

    cdef void _set_pool(self, object pidx_, object pdat_):
        self.pidx_, self.pdat_ = pidx_, pdat_
        self.pidx, self.pdat = pidx_, pdat_
        self.pool_len = len(pidx_)

    cdef void _repack(self, Py_ssize_t extra):
        """Copy the stored rows, in example order, into a new pool of twice their size plus
        ``extra`` entries (the holes of removed examples are dropped); the support vectors'
        spans follow."""
        cdef Py_ssize_t k, p, n = self.n, end = 0, ln
        cdef int64_t live = 0
        for k in range(n):
            live += self.en[k] - self.st[k]
        ln = max(2 * (live + extra), 64)
        pidx_ = np.empty(ln, dtype=np.int32)
        pdat_ = np.empty(ln)
        cdef int32_t[::1] ni = pidx_
        cdef double[::1] nd = pdat_
        for k in range(n):
            ln = self.en[k] - self.st[k]
            if ln:
                memcpy(&ni[end], &self.pidx[self.st[k]], ln * sizeof(int32_t))
                memcpy(&nd[end], &self.pdat[self.st[k]], ln * sizeof(double))
            self.st[k] = end
            end += ln
            self.en[k] = end
        for p in range(self.nsv):
            k = self.SVown[p]
            self.SVst[p] = self.st[k]
            self.SVen[p] = self.en[k]
        self._set_pool(pidx_, pdat_)
        self.pool_end = end

    cdef void _put_sparse(self, Py_ssize_t k, const int32_t* xi, const double* xd,
                          Py_ssize_t nx):
        """Append x to the pool as example k's row."""
        if self.pool_end + nx > self.pool_len:
            self._repack(nx)
        if nx:
            memcpy(&self.pidx[self.pool_end], xi, nx * sizeof(int32_t))
            memcpy(&self.pdat[self.pool_end], xd, nx * sizeof(double))
        self.st[k] = self.pool_end
        self.pool_end += nx
        self.en[k] = self.pool_end

    # -- kernel values --------------------------------------------------------------------

    cdef void _rows_of(self, Py_ssize_t a, Py_ssize_t b, Py_ssize_t i, double* out):
        """out[k − a] = K(x_k, x_i) for a ≤ k < b (stored examples against stored example i)."""
        cdef int64_t s0
        if b <= a:
            return
        if self.sparse:
            s0 = self.st[i]
            _sparse_row(self.kind, self.gamma, self.kscale, self.koffset, self.degree,
                        &self.pidx[0] + s0, &self.pdat[0] + s0, self.en[i] - s0, self.sq[i],
                        &self.st[a], &self.en[a], &self.pidx[0], &self.pdat[0], &self.sq[a],
                        b - a, self.strategy, &self.work[0], out)
        elif self.kind == K_NOT_COMPILED:
            vals = np.asarray(self.pykernel.row(self.X_[a:b, : self.d], self.X_[i, : self.d]),
                              dtype=np.float64)
            for k in range(b - a):
                out[k] = vals[k]
        else:
            _kernel_row(self.kind, self.gamma, self.kscale, self.koffset, self.degree,
                        &self.X[a, 0], b - a, self.d, &self.sq[a], &self.X[i, 0],
                        self.sq[i], out)
        self.kernel_evals += b - a

    cdef double* _ensure_row(self, Py_ssize_t i):
        """The row K(x_i, x_I) over every stored example, from the cache when possible."""
        cdef Py_ssize_t sl, n = self.n, k, best
        cdef long long oldest
        self.kernel_requests += n
        if self.nslots == 0:
            self._rows_of(0, n, i, &self.scratch[0])
            return &self.scratch[0]
        self.clock += 1
        sl = self.cslot[i]
        if sl < 0:
            # a free slot, else the least recently used one
            best = -1
            oldest = 0
            for k in range(self.nslots):
                if self.cown[k] < 0:
                    best = k
                    break
                if best < 0 or self.cstamp[k] < oldest:
                    best = k
                    oldest = self.cstamp[k]
            sl = best
            if self.cown[sl] >= 0:
                self.cslot[self.cown[sl]] = -1
            self.cown[sl] = i
            self.cslot[i] = sl
            self.clen[sl] = 0
        if self.clen[sl] < n:
            self._rows_of(self.clen[sl], n, i, &self.KC[sl, self.clen[sl]])
            self.clen[sl] = n
        self.cstamp[sl] = self.clock
        return &self.KC[sl, 0]

    cdef double _predict_ptr(self, const double* x, double xsq, object xobj):
        """f(x) over the support vectors; leaves the kernel row in krow."""
        cdef Py_ssize_t m = self.nsv, p
        if m == 0:
            return 0.0
        if self.kind == K_NOT_COMPILED:
            vals = np.asarray(self.pykernel.row(self.SVX_[:m, : self.d], xobj,
                                                sq=self.SVsq_[:m], xsq=xsq), dtype=np.float64)
            for p in range(m):
                self.krow[p] = vals[p]
        else:
            _kernel_row(self.kind, self.gamma, self.kscale, self.koffset, self.degree,
                        &self.SVX[0, 0], m, self.d, &self.SVsq[0], x, xsq, &self.krow[0])
        self.kernel_evals += m
        self.kernel_requests += m
        return _dot(&self.krow[0], &self.SVc[0, 0], <int>m)

    cdef double _predict_sparse(self, const CsrRow* x):
        """``_predict_ptr`` of a CSR row."""
        cdef Py_ssize_t m = self.nsv
        if m == 0:
            return 0.0
        _sparse_row(self.kind, self.gamma, self.kscale, self.koffset, self.degree, x.xi, x.xd,
                    x.nx, x.xsq, &self.SVst[0], &self.SVen[0], &self.pidx[0], &self.pdat[0],
                    &self.SVsq[0], m, self.strategy, &self.work[0], &self.krow[0])
        self.kernel_evals += m
        self.kernel_requests += m
        return _dot(&self.krow[0], &self.SVc[0, 0], <int>m)

    cdef double _predict_stored(self, Py_ssize_t k):
        """f(x_k) of stored example k (leaves the kernel row in krow)."""
        cdef CsrRow x
        if self.sparse:
            x = _csr_row(&self.pidx[0], &self.pdat[0], self.st[k], self.en[k])
            x.xsq = self.sq[k]  # as stored
            return self._predict_sparse(&x)
        xobj = self.X_[k, : self.d] if self.kind == K_NOT_COMPILED else None
        return self._predict_ptr(&self.X[k, 0], self.sq[k], xobj)

    cdef double _self_kernel(self, const double* x, double xsq, object xobj):
        """k(x, x): 1 for RBF and Laplacian kernels, else one (counted) evaluation."""
        if self.kind == K_RBF or self.kind == K_LAPLACIAN:
            return 1.0
        if self.kind == K_NOT_COMPILED and self.const_diag and self.n > 0:
            return self.kd[0]
        self.kernel_evals += 1
        self.kernel_requests += 1
        if self.sparse:  # x is not read: k(x, x) from ‖x‖²
            return _transform(self.kind, xsq, xsq, xsq, self.gamma, self.kscale,
                              self.koffset, self.degree)
        if self.kind == K_NOT_COMPILED:
            return float(np.asarray(self.pykernel.diag(np.asarray(xobj)[None, :]))[0])
        return _kernel_one(self.kind, self.gamma, self.kscale, self.koffset, self.degree,
                           x, x, self.d, xsq, xsq)


    # -- examples ---------------------------------------------------------------------------

    cdef int _append(self, const double* x, double xsq, object xobj, double yv,
                     double f) except -1:
        """Store (x, y) with α = 0 and g = 1 − y f; f's kernel row (in krow) fills the
        support vectors' cached rows."""
        cdef double kxx = self._self_kernel(x, xsq, xobj)
        self._room(kxx)
        memcpy(&self.X[self.n, 0], x, self.d * sizeof(double))
        return self._append_state(xsq, kxx, yv, f)

    cdef int _append_sparse(self, const CsrRow* x, double yv, double f) except -1:
        """``_append`` of a CSR row."""
        cdef double kxx = self._self_kernel(NULL, x.xsq, None)
        self._room(kxx)
        self._put_sparse(self.n, x.xi, x.xd, x.nx)
        return self._append_state(x.xsq, kxx, yv, f)

    cdef int _room(self, double kxx) except -1:
        """Check k(x, x) of a new example and make room for it."""
        if not kxx >= 0.0:
            raise ValueError(f"kbench ramp SVM: k(x, x) = {kxx!r} < 0 for example {self.seen}: "
                             "the kernel is not positive semi-definite")
        if self.n == self.cap:
            self._grow(2 * self.cap)
        return 0

    cdef int _append_state(self, double xsq, double kxx, double yv, double f) except -1:
        """The state of the example just stored as row n (its row written by the caller)."""
        cdef Py_ssize_t n = self.n, p, i, sl
        self.sq[n] = xsq
        self.y[n] = yv
        self.alpha[n] = 0.0
        self.g[n] = 1.0 - yv * f
        self.kd[n] = kxx
        self.inV[n] = 0
        self.age[n] = self.seen
        self.svpos[n] = -1
        self.cslot[n] = -1
        if self.nslots:
            for p in range(self.nsv):
                i = self.SVown[p]
                sl = self.cslot[i]
                if sl >= 0 and self.clen[sl] == n:
                    self.KC[sl, n] = self.krow[p]
                    self.clen[sl] = n + 1
        self.n = n + 1
        self.seen += 1
        self.version += 1
        return 0


    cdef void _remove(self, Py_ssize_t i):
        """Delete stored example i (α_i = 0): the last example takes its place."""
        cdef Py_ssize_t last = self.n - 1, sl, k, n = self.n, p
        sl = self.cslot[i]
        if sl >= 0:
            self.cown[sl] = -1
            self.cslot[i] = -1
        if i != last:
            if self.sparse:  # the row stays where it is in the pool
                self.st[i] = self.st[last]
                self.en[i] = self.en[last]
            else:
                memcpy(&self.X[i, 0], &self.X[last, 0], self.d * sizeof(double))
            self.sq[i] = self.sq[last]
            self.y[i] = self.y[last]
            self.alpha[i] = self.alpha[last]
            self.g[i] = self.g[last]
            self.kd[i] = self.kd[last]
            self.inV[i] = self.inV[last]
            self.age[i] = self.age[last]
            p = self.svpos[last]
            self.svpos[i] = p
            if p >= 0:
                self.SVown[p] = i
            sl = self.cslot[last]
            self.cslot[i] = sl
            if sl >= 0:
                self.cown[sl] = i
            # Column `last` moves to column i in every cached row.
            for k in range(self.nslots):
                if self.cown[k] < 0:
                    continue
                if self.clen[k] == n:
                    self.KC[k, i] = self.KC[k, last]
                    self.clen[k] = n - 1
                elif self.clen[k] > i:
                    self.clen[k] = i
        else:
            for k in range(self.nslots):
                if self.cown[k] >= 0 and self.clen[k] > last:
                    self.clen[k] = last
        self.svpos[last] = -1
        self.cslot[last] = -1
        self.n = last
        self.version += 1


    # -- CSR rows (a core made with sparse=True) -------------------------------------------

    cdef int _need_sparse(self, str what) except -1:
        if not self.sparse:
            raise TypeError(f"kbench ramp SVM: {what} of CSR rows needs a core made for them "
                            "(sparse=True)")
        return 0

    cdef int _need_dense(self) except -1:
        if self.sparse:
            raise TypeError("kbench ramp SVM: a core of CSR rows takes them through the *_csr "
                            "methods, not dense rows")
        return 0

    cdef int _check_block(self, xp, xi, xd, Py_ssize_t n, str what) except -1:
        """The CSR rows xp, xi, xd (int64, int32, float64) of n examples are valid (sorted
        indices below d, spans within the arrays)."""
        self._need_sparse(what)
        if xp.shape[0] < 1 or xp.shape[0] - 1 != n:
            raise ValueError(f"kbench ramp SVM: {what}: {xp.shape[0]} row pointers for {n} "
                             "examples")
        if xi.shape[0] != xd.shape[0]:
            raise ValueError(f"kbench ramp SVM: {what}: {xi.shape[0]} indices but "
                             f"{xd.shape[0]} values")
        check_rows(xp[:n], xp[1:], xi, self.d)
        return 0

    cdef int _check_row(self, xi, xd) except -1:
        self._need_sparse("a row")
        if xi.shape[0] != xd.shape[0]:
            raise ValueError(f"kbench ramp SVM: a sparse row of {xi.shape[0]} indices and "
                             f"{xd.shape[0]} values")
        check_indices(xi, self.d)
        return 0


    def exact_gradients(self):
        """g recomputed from α, one kernel row per stored example (counted)."""
        cdef Py_ssize_t k, n = self.n
        out = np.empty(n)
        for k in range(n):
            out[k] = 1.0 - self.y[k] * self._predict_stored(k)
        self.version += 1  # krow no longer holds the last prediction's row
        return out

    def objective(self):
        """(ramp primal, hinge primal, ‖w‖²) over the stored examples, from α and g."""
        n = self.n
        a = self.alpha_[:n]
        g = self.g_[:n]
        w2 = float(np.dot(a, 1.0 - g))
        ramp = 0.5 * w2 + self.C * float(np.minimum(1.0 - self.s, np.maximum(0.0, g)).sum())
        hinge = 0.5 * w2 + self.C * float(np.maximum(0.0, g).sum())
        return ramp, hinge, w2
