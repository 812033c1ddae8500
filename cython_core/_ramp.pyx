"""Compiled core of the ramp-loss SVM: OnlineSVM^R, OnlineASVM^R and offline CCCP.

Wang and Vucetic (2009) train a zero-bias kernel SVM with the ramp loss
``R_s(z) = min(1 − s, max(0, 1 − z))`` by the concave–convex procedure: a hinge SVM is
trained on the active set ``V = {i : g_i ≤ 1 − s}`` (``g_i = 1 − y_i f(x_i)``), examples
outside V get α = 0, and V is recomputed until it stops changing. Without a bias the dual
has no equality constraint, so the hinge SVM is solved by one-coordinate SMO steps

    α_i ← clip(α_i + g_i / Q_ii, 0, C),   gain = g_i δ − ½ Q_ii δ²,

choosing the violator of largest gain, and every stored gradient follows the step with

    g_k ← g_k − y_k y_i δ K(x_i, x_k)            (the paper's eq. 15 prints "+": erratum E1).
:class:`RampCore` extends :class:`~kbench.cython_core._ramp_store.RampStore` (the stored
examples, the support vectors and the cache of kernel rows over them, with or without CSR
rows: see ``_ramp_store``) with the solver and the learning methods.

Every loop has a bound (``max_outer`` CCCP iterations and ``max_steps`` coordinate steps
per example or per fit); hitting one is counted in ``outer_caps`` / ``step_caps``.
"""
from libc.stdint cimport int32_t, int64_t

from kbench.cython_core._kernels cimport K_NOT_COMPILED, _dot
from kbench.cython_core._labels cimport _sign_label
from kbench.cython_core._ramp_store cimport CsrRow, RampStore, _csr_row, _doubles, _ints

import numpy as np

from kbench.cython_core._ramp_store import SCATTER_MAX  # noqa: F401 (re-exported)


cdef class RampCore(RampStore):
    """State and loops of the ramp-loss SVM (see the module docstring)."""

    # -- the solver -------------------------------------------------------------------------

    cdef void _step(self, Py_ssize_t i, double anew):
        """α_i ← anew; every stored gradient follows (eq. 15 with the sign fixed)."""
        cdef double delta = anew - self.alpha[i], c
        cdef Py_ssize_t k, n = self.n
        cdef double* row
        if delta == 0.0:
            return
        row = self._ensure_row(i)
        c = self.grad_sign * self.y[i] * delta
        for k in range(n):
            self.g[k] += c * self.y[k] * row[k]
        self.alpha[i] = anew
        self._sv_update(i)
        self.steps += 1
        self.ex_steps += 1

    cdef Py_ssize_t _step_select(self, Py_ssize_t i, double anew, double* bnew,
                                 double* bgain):
        """``_step(i, anew)`` fused with the scan for the next largest-gain violator in V
        (one pass over the stored examples instead of two). Returns it, or −1."""
        cdef double delta = anew - self.alpha[i], c, gk, ak, Q, an, dd, gain, bg = 0.0
        cdef Py_ssize_t k, n = self.n, best = -1
        cdef double* row = self._ensure_row(i)
        cdef double C = self.C, tau = self.tau
        c = self.grad_sign * self.y[i] * delta
        self.alpha[i] = anew
        for k in range(n):
            gk = self.g[k] + c * self.y[k] * row[k]
            self.g[k] = gk
            if not self.inV[k]:
                continue
            ak = self.alpha[k]
            if (ak < C and gk > tau) or (ak > 0.0 and gk < -tau):
                Q = self.kd[k]
                if Q <= 0.0:
                    continue
                an = ak + gk / Q
                if an <= 0.0:
                    an = 0.0
                elif an >= C:
                    an = C
                dd = an - ak
                gain = gk * dd - 0.5 * Q * dd * dd
                if gain > bg:
                    bg = gain
                    best = k
                    bnew[0] = an
        self._sv_update(i)
        self.steps += 1
        self.ex_steps += 1
        bgain[0] = bg
        return best

    cdef double _solve1(self, Py_ssize_t i):
        """The α_i that maximises the dual with the other coefficients fixed (eq. 14)."""
        cdef double a = self.alpha[i] + self.g[i] / self.kd[i]
        if a <= 0.0:
            return 0.0
        if a >= self.C:
            return self.C
        return a

    cdef bint _smo(self):
        """Coordinate steps on the largest-gain violator in V until none gains ≥ eps_gain.

        Returns False when the step bound stopped it.
        """
        cdef Py_ssize_t k, best = -1, n = self.n
        cdef double gk, ak, Q, an, dd, gain, bg = 0.0, bnew = 0.0
        for k in range(n):
            if not self.inV[k]:
                continue
            gk = self.g[k]
            ak = self.alpha[k]
            if (ak < self.C and gk > self.tau) or (ak > 0.0 and gk < -self.tau):
                Q = self.kd[k]
                if Q <= 0.0:
                    continue  # k(x, x) = 0: no direction to move in
                an = ak + gk / Q
                if an <= 0.0:
                    an = 0.0
                elif an >= self.C:
                    an = self.C
                dd = an - ak
                gain = gk * dd - 0.5 * Q * dd * dd
                if gain > bg:
                    bg = gain
                    best = k
                    bnew = an
        while best >= 0 and bg >= self.eps_gain:
            if self.ex_steps >= self.max_steps:
                self.step_caps += 1
                return False
            if bnew == self.alpha[best]:
                return True  # rounding: the best step does not move α
            best = self._step_select(best, bnew, &bnew, &bg)
        return True

    cdef long long _reassign(self):
        """V ← {g ≤ 1 − s}; leavers are unlearned (α ← 0). Returns the number of changes."""
        cdef Py_ssize_t k, j, nleave = 0, n = self.n
        cdef long long changes = 0
        cdef double lim = 1.0 - self.s
        for k in range(n):
            if self.inV[k]:
                if self.g[k] > lim:
                    self.inV[k] = 0
                    self.tmp[nleave] = k
                    nleave += 1
                    changes += 1
            elif self.g[k] <= lim:
                self.inV[k] = 1
                changes += 1
        for j in range(nleave):
            k = self.tmp[j]
            if self.alpha[k] > 0.0:
                self._step(k, 0.0)
        return changes

    cdef long long _cccp(self):
        """The CCCP loop: SMO on V, then reassign V, until V stops changing."""
        cdef long long it
        for it in range(self.max_outer):
            self.outer_total += 1
            if not self._smo():
                return it + 1
            if self.trace:
                self.history.append((self.seen, self.objective()[0]))
            if self._reassign() == 0:
                return it + 1
        self.outer_caps += 1
        return self.max_outer


    cdef void _process_new(self):
        """Algorithm 1 for the example just stored (the last one)."""
        cdef Py_ssize_t c = self.n - 1
        cdef double gc = self.g[c]
        cdef long long outer
        self.ex_steps = 0
        if 0.0 <= gc <= 1.0 - self.s:
            self.updates += 1
            self.last_update = self.seen - 1
            self.inV[c] = 1
            if self.kd[c] > 0.0:
                self._step(c, self._solve1(c))
            outer = self._cccp()
            if outer > self.outer_max:
                self.outer_max = outer
        if self.m_keep >= 0:
            self._remove_far()
        self.since_refresh += 1
        if self.refresh > 0 and self.since_refresh >= self.refresh:
            self._refresh()

    cdef void _remove_far(self):
        """Algorithm 2: keep at most m_keep non-support vectors, the closest to the boundary
        (|1 − g| = |y f| smallest; ties keep the newest)."""
        cdef Py_ssize_t excess = (self.n - self.nsv) - self.m_keep, j
        if excess <= 0:
            return
        n = self.n
        idx = np.flatnonzero(self.alpha_[:n] == 0.0)
        key = np.abs(1.0 - self.g_[idx])
        order = np.lexsort((self.age_[idx], -key))
        drop = np.sort(idx[order[:excess]])[::-1]
        for j in range(len(drop)):
            self._remove(drop[j])
        self.removed += excess


    cdef void _refresh(self):
        """Recompute every gradient from α and record the drift of the incremental ones."""
        cdef long long before = self.kernel_evals
        exact = self.exact_gradients()
        n = self.n
        if n:
            drift = float(np.max(np.abs(exact - self.g_[:n])))
            if drift > self.drift_max:
                self.drift_max = drift
            self.g_[:n] = exact
        self.refresh_evals += self.kernel_evals - before
        self.since_refresh = 0

    # -- public API -------------------------------------------------------------------------

    def decide(self, x):
        """f(x) = Σ α_i y_i k(x_i, x); the row is kept for a following ``learn`` of x."""
        cdef const double[::1] xv = x
        cdef double xsq
        self._need_dense()
        if x is self.last_x and self.version == self.last_version:
            return self.last_f
        xsq = _dot(&xv[0], &xv[0], <int>self.d) if self.d > 0 else 0.0
        self.last_f = self._predict_ptr(&xv[0], xsq, x)
        self.last_x = x
        self.last_version = self.version
        return self.last_f

    def learn(self, x, double yv):
        """Store (x, y) and restore a CCCP fixed point (Algorithm 1)."""
        cdef const double[::1] xv = x
        cdef double f = self.decide(x)
        cdef double xsq = _dot(&xv[0], &xv[0], <int>self.d) if self.d > 0 else 0.0
        self._append(&xv[0], xsq, x, yv, f)
        self._process_new()

    def block(self, const double[:, ::1] X, const double[::1] y, double[::1] pred,
              double width):
        """Predict then learn each row of X. ``width < 0``: learn every example
        (OnlineSVM^R); else learn only those with |f(x)| ≤ width (OnlineASVM^R) and
        discard the others. Returns the number of examples learned."""
        cdef Py_ssize_t i, n = X.shape[0]
        cdef double f, xsq
        cdef long long learned = 0
        self._need_dense()
        for i in range(n):
            xsq = _dot(&X[i, 0], &X[i, 0], <int>self.d) if self.d > 0 else 0.0
            xobj = np.asarray(X[i]) if self.kind == K_NOT_COMPILED else None
            f = self._predict_ptr(&X[i, 0], xsq, xobj)
            pred[i] = _sign_label(f)
            if width >= 0.0 and not (-width <= f <= width):
                continue
            self._append(&X[i, 0], xsq, xobj, y[i], f)
            self._process_new()
            learned += 1
        self.last_x = None
        return learned

    def fit(self, const double[:, ::1] X, const double[::1] y, Py_ssize_t n_init):
        """Offline CCCP (Collobert et al. 2006) on all rows: a hinge SVM on the first
        n_init rows (all rows when n_init ≤ 0), then CCCP over every row."""
        cdef Py_ssize_t i, N = X.shape[0], first
        cdef double f, xsq
        self._need_dense()
        self.reset()
        self.ex_steps = 0
        first = N if n_init <= 0 or n_init >= N else n_init
        for i in range(first):
            xsq = _dot(&X[i, 0], &X[i, 0], <int>self.d) if self.d > 0 else 0.0
            xobj = np.asarray(X[i]) if self.kind == K_NOT_COMPILED else None
            self._append(&X[i, 0], xsq, xobj, y[i], 0.0)
            self.inV[i] = 1
        self._smo()
        for i in range(first, N):
            xsq = _dot(&X[i, 0], &X[i, 0], <int>self.d) if self.d > 0 else 0.0
            xobj = np.asarray(X[i]) if self.kind == K_NOT_COMPILED else None
            f = self._predict_ptr(&X[i, 0], xsq, xobj)
            self._append(&X[i, 0], xsq, xobj, y[i], f)
        self._reassign()
        self.outer_max = self._cccp()
        self.last_x = None


    def decide_csr(self, xi, xd):
        """``decide`` of a CSR row: indices xi (int32, increasing, below d) and values xd
        (float64); the row is kept for a following ``learn_csr`` of the same xd object."""
        self._check_row(xi, xd)
        if xd is self.last_x and self.version == self.last_version:
            return self.last_f
        cdef CsrRow x = _csr_row(_ints(xi), _doubles(xd), 0, len(xi))
        self.last_f = self._predict_sparse(&x)
        self.last_x = xd
        self.last_version = self.version
        return self.last_f

    def learn_csr(self, xi, xd, double yv):
        """``learn`` of a CSR row (as ``decide_csr`` takes it)."""
        cdef double f = self.decide_csr(xi, xd)
        cdef CsrRow x = _csr_row(_ints(xi), _doubles(xd), 0, len(xi))
        self._append_sparse(&x, yv, f)
        self._process_new()

    def block_csr(self, xp_, xi_, xd_, const double[::1] y, double[::1] pred, double width):
        """``block`` of the CSR rows xp, xi, xd (int64, int32, float64; row i is
        ``xi[xp[i]:xp[i + 1]]``)."""
        cdef Py_ssize_t i, n = y.shape[0]
        cdef double f
        cdef long long learned = 0
        cdef CsrRow x
        self._check_block(xp_, xi_, xd_, n, "block")
        if pred.shape[0] < n:
            raise ValueError(f"kbench ramp SVM: block: pred has {pred.shape[0]} entries for {n}")
        cdef const int64_t[::1] xp = xp_
        cdef const int32_t* xi = _ints(xi_)
        cdef const double* xd = _doubles(xd_)
        for i in range(n):
            x = _csr_row(xi, xd, xp[i], xp[i + 1])
            f = self._predict_sparse(&x)
            pred[i] = _sign_label(f)
            if width >= 0.0 and not (-width <= f <= width):
                continue
            self._append_sparse(&x, y[i], f)
            self._process_new()
            learned += 1
        self.last_x = None
        return learned

    def fit_csr(self, xp_, xi_, xd_, const double[::1] y, Py_ssize_t n_init):
        """``fit`` on the CSR rows xp, xi, xd (as ``block_csr`` takes them): the steps of
        ``fit`` on dense rows."""
        cdef Py_ssize_t i, N = y.shape[0], first
        cdef CsrRow x
        self._check_block(xp_, xi_, xd_, N, "fit")
        cdef const int64_t[::1] xp = xp_
        cdef const int32_t* xi = _ints(xi_)
        cdef const double* xd = _doubles(xd_)
        self.reset()
        self.ex_steps = 0
        first = N if n_init <= 0 or n_init >= N else n_init
        for i in range(first):
            x = _csr_row(xi, xd, xp[i], xp[i + 1])
            self._append_sparse(&x, y[i], 0.0)
            self.inV[i] = 1
        self._smo()
        for i in range(first, N):
            x = _csr_row(xi, xd, xp[i], xp[i + 1])
            self._append_sparse(&x, y[i], self._predict_sparse(&x))
        self._reassign()
        self.outer_max = self._cccp()
        self.last_x = None
