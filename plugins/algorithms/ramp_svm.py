"""Ramp-loss SVMs (Wang and Vucetic 2009): OnlineSVM^R, OnlineASVM^R and offline CCCP.

All three share the compiled core ``cython_core/_ramp.pyx`` (over ``_ramp_store.pyx``):
a zero-bias kernel SVM with the ramp loss ``R_s(z) = min(1 − s, max(0, 1 − z))``, trained
by the concave–convex procedure (CCCP) as "a hinge SVM on the active set
V = {i : y_i f(x_i) ≥ s}, α = 0 outside V", each hinge SVM solved by one-coordinate SMO
steps. The paper's misprints are fixed as the kbench spec (specs/001 §0.1) describes: the
gradient update (eq. 15) subtracts, and the inner loop runs while a violator exists *and*
the best step gains at least ε_gain.

With a built-in kernel they take CSR rows as they are (``sparse_input``): the core then
keeps every stored example as a CSR row of a pool and computes its kernel rows in O(nnz)
per value (``RampCore(sparse=True)``); a model of CSR rows learns a dense row on that path,
a model of dense rows refuses CSR ones in one line, and either answers about both.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kbench.api import Algorithm, as_matrix, dense, dense_blocks, hookimpl, is_sparse, param
from kbench.cython_core import _kernels, _ramp, _sparse
from kbench.learners import KernelSpec, as_csr, csr_parts, refuse_switch
from kbench.learners.rows import compiled_kernel, one_row


def _check_label(owner: str, y: float) -> None:
    if y != 1.0 and y != -1.0:
        raise ValueError(f"{owner}: labels must be −1 or +1, got {y!r}")


def _check_labels(owner: str, y: Any) -> None:
    y = np.asarray(y, dtype=float)
    if not np.all((y == 1.0) | (y == -1.0)):
        _check_label(owner, float(y[(y != 1.0) & (y != -1.0)][0]))


def _csr_block(X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row pointers (int64), indices (int32) and values of the rows of X (dense or CSR)."""
    indptr, indices, data = csr_parts(as_csr(X))
    return indptr.astype(np.int64, copy=False), indices, data


def _csr_row(x: Any) -> tuple[np.ndarray, np.ndarray]:
    """Indices (int32) and values of x, a dense 1-D row or one CSR row; the CSR matrix's own
    arrays when they are exactly the row's (so that asking about the same row object again
    is recognised)."""
    if type(x) is np.ndarray and x.ndim == 1:  # what one_row does, without a CSR matrix
        indices = np.flatnonzero(x).astype(np.int32)
        return indices, np.ascontiguousarray(x[indices], dtype=np.float64)
    indptr, indices, data = csr_parts(one_row(x))
    a, b = int(indptr[0]), int(indptr[1])
    if a or b != len(data):
        indices, data = indices[a:b], data[a:b]
    return indices, data


def _is_csr(x: Any) -> bool:
    return type(x) is not np.ndarray and is_sparse(x)


def _stored_csr(core: Any) -> Any:
    """The stored examples of a core of CSR rows, in storage order, as a CSR matrix."""
    import scipy.sparse as sp  # only here: dense streams never import scipy.sparse

    n = core.n
    lengths = core.en_[:n] - core.st_[:n]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    pos = np.repeat(core.st_[:n] - indptr[:-1], lengths) + np.arange(int(indptr[-1]))
    return sp.csr_matrix((core.pdat_[pos], core.pidx_[pos], indptr), shape=(n, core.d))


class _RampSVM(Algorithm):
    """Common part of the ramp-loss SVMs: the compiled core, predictions and statistics.

    Its parameters are every ramp SVM's (subclasses document only their own).

    Parameters
    ----------
    C
        Weight of the ramp losses, > 0.
    s
        Ramp parameter s < 1: examples with ``y f(x) < s`` have a flat loss 1 − s and no
        influence (the paper fixes s = −1).
    tau
        KKT violation tolerance τ (paper 1e-3).
    eps_gain
        Smallest dual gain of a coordinate step (paper 1e-5); with k(x, x) = 1 the loop
        stops once every violation is below √(2·eps_gain).
    max_outer
        Bound on CCCP iterations per example (hits are counted in ``outer_caps``).
    max_steps
        Bound on coordinate steps per example (hits are counted in ``step_caps``).
    cache_mb
        Byte budget of the kernel-row cache in MiB; 0 computes every row (the paper's
        count of kernel computations).
    """

    tasks = frozenset({"binary"})

    C: float = param(1.0, low=0.0, low_open=True)
    s: float = param(-1.0, high=1.0, high_open=True)
    tau: float = param(1e-3, low=0.0)
    eps_gain: float = param(1e-5, low=0.0)
    max_outer: int = param(100, low=1)
    max_steps: int = param(1_000_000, low=1)
    cache_mb: float = param(200.0, low=0.0)

    def __post_init__(self) -> None:
        self.core: Any = None
        assert self.kernel is not None  # uses_kernel: Algorithm refuses a missing kernel
        # Made once: predict_one's decision_many would make it per row.
        self._spec = KernelSpec.of(self.kernel)

    @property
    def sparse_input(self) -> bool:
        """CSR rows as they are with a built-in kernel (the core computes their kernel rows)."""
        return self.kernel is not None and self.kernel.compiled() is not None

    def _new_core(self, d: int, *, m_keep: int = -1, refresh: int = 0, sparse: bool = False) -> Any:
        assert self.kernel is not None
        if sparse:
            compiled_kernel(self.kernel)  # a one-line TypeError for other kernels
        spec = self._spec
        return _ramp.RampCore(
            spec,
            None if spec.compiled else self.kernel,
            bool(self.kernel.constant_diagonal),
            d,
            float(self.C),
            float(self.s),
            float(self.tau),
            float(self.eps_gain),
            int(self.max_outer),
            int(self.max_steps),
            int(refresh),
            int(m_keep),
            float(self.cache_mb) * 2.0**20,
            sparse,
        )

    def _make_core(self, d: int, sparse: bool) -> Any:
        return self._new_core(d, sparse=sparse)

    def _ensure(self, d: int, sparse: bool = False) -> Any:
        """The core for examples of d features, dense or CSR rows (``sparse``): made on the
        first example; a model of dense rows refuses CSR ones."""
        if self.core is None:
            self.core = self._make_core(d, sparse)
        else:
            self._check_width(d)
            if sparse != self.core.sparse:
                refuse_switch(self.name, sparse)
        return self.core

    def _check_width(self, d: int) -> None:
        if d != self.core.d:
            raise ValueError(
                f"{self.name}: examples have {d} features, the model was built for {self.core.d}"
            )

    def _learn(self, x: Any, y: float) -> None:
        """Store the row x (dense or CSR) with label y and restore a CCCP fixed point; once
        the model holds CSR rows, a dense row is learned as a CSR one."""
        if type(x) is np.ndarray and (self.core is None or not self.core.sparse):
            self._ensure(len(x)).learn(x, y)
        else:
            xi, xd = _csr_row(x)
            self._ensure(x.shape[-1], True).learn_csr(xi, xd, y)

    def _block(self, X: Any, y: Any, width: float) -> tuple[np.ndarray, int]:
        """Predict then learn the rows of X (dense or CSR, as ``_learn``): the predictions
        and the number of examples learned (all for ``width < 0``, else those with
        |f(x)| ≤ width)."""
        n = X.shape[0]
        pred = np.empty(n)
        if n == 0:
            return pred, 0
        y = np.ascontiguousarray(y, dtype=np.float64)
        if _is_csr(X) or (self.core is not None and self.core.sparse):
            core = self._ensure(X.shape[1], True)
            return pred, int(core.block_csr(*_csr_block(X), y, pred, width))
        return pred, int(self._ensure(X.shape[1]).block(X, y, pred, width))

    # -- predictions ------------------------------------------------------------------------

    def decision_one(self, x):
        core = self.core
        if core is None:
            return 0.0
        if core.sparse:
            self._check_width(x.shape[-1])
            return float(core.decide_csr(*_csr_row(x)))
        if _is_csr(x):
            x = dense(x).reshape(-1)
        return float(self._ensure(len(x)).decide(x))

    def decision_many(self, X: Any) -> np.ndarray:
        """f for every row of X (dense or CSR), from the support vectors (held-out
        evaluation)."""
        core = self.core
        if core is not None and core.sparse:
            return self._csr_decisions(X)
        if _is_csr(X):
            parts = [self.decision_many(rows) for _, _, rows in dense_blocks(X)]
            return np.concatenate(parts) if parts else np.zeros(0)
        X = as_matrix(X, "X")
        if core is None or core.nsv == 0:
            return np.zeros(len(X))
        m = core.nsv
        S, sq, coef = core.SVX_[:m, : core.d], core.SVsq_, core.SVc_
        spec = self._spec
        if not spec.compiled:
            return (self.kernel.matrix(X, S) @ coef[:m])[:, 0]
        out = np.zeros(len(X))
        block = max(1, min(2048, 4_000_000 // m))  # a Gram scratch block of at most 32 MB
        K = np.empty((min(block, len(X)), m))
        res = np.empty((min(block, len(X)), 1))
        xsq = np.einsum("ij,ij->i", X, X)
        Sc = np.ascontiguousarray(S)
        for a in range(0, len(X), block):
            b = min(a + block, len(X))
            _kernels.decision_block(spec, Sc, sq, coef, m, X[a:b], xsq[a:b], K, res[: b - a])
            out[a:b] = res[: b - a, 0]
        return out

    def _csr_decisions(self, X: Any) -> np.ndarray:
        """decision_many of a model of CSR rows: Gram blocks of X's CSR rows against the
        support vectors' rows in the core's pool."""
        core = self.core
        self._check_width(X.shape[1])
        indptr, xi, xd = _csr_block(X)
        n, m = X.shape[0], core.nsv
        out = np.zeros(n)
        if m == 0 or n == 0:
            return out
        xs, xe = indptr[:-1], indptr[1:]
        xsq = np.empty(n)
        _sparse.row_sq_norms(xs, xe, xd, xsq)
        spec = self._spec
        block = max(1, min(2048, 4_000_000 // m))  # a Gram scratch block of at most 32 MB
        K = np.empty((min(block, n), m))
        coef = core.SVc_[:m, 0]
        for a in range(0, n, block):
            b = min(a + block, n)
            _sparse.kernel_block(
                spec,
                xs[a:b],
                xe[a:b],
                xi,
                xd,
                xsq[a:b],
                core.SVst_,
                core.SVen_,
                core.pidx_,
                core.pdat_,
                core.SVsq_,
                K,
                m,
                core.strategy,
                core.work_,
            )
            out[a:b] = K[: b - a] @ coef
        return out

    def predict_many(self, X):
        return self.labels_of(self.decision_many(X))

    # -- inspection -------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Copies of the stored examples and their state: X (a CSR matrix for a model of
        CSR rows), y, alpha, g (= 1 − y f) and the active-set flags in_V."""
        core = self.core
        if core is None:
            z = np.zeros(0)
            return {"X": np.zeros((0, 0)), "y": z, "alpha": z, "g": z, "in_V": z.astype(bool)}
        n = core.n
        return {
            "X": _stored_csr(core) if core.sparse else core.X_[:n, : core.d].copy(),
            "y": core.y_[:n].copy(),
            "alpha": core.alpha_[:n].copy(),
            "g": core.g_[:n].copy(),
            "in_V": core.inV_[:n].astype(bool),
        }

    def stats(self):
        core = self.core
        if core is None:
            return {"n_support": 0, "kernel_evals": 0, "kernel_requests": 0, "n_stored": 0}
        ramp, hinge, _ = core.objective()
        return {
            "n_support": core.nsv,
            "kernel_evals": core.kernel_evals,
            "kernel_requests": core.kernel_requests,
            "n_stored": core.n,
            "n_active": int(core.inV_[: core.n].sum()),
            "coordinate_steps": core.steps,
            "cccp_iterations": core.outer_total,
            "cccp_max": core.outer_max,
            "outer_caps": core.outer_caps,
            "step_caps": core.step_caps,
            "ramp_objective": ramp,
            "hinge_objective": hinge,
            "model_bytes": self._model_bytes(),
        }

    def _model_bytes(self) -> int:
        """Bytes of the support vectors: dense rows (d values, ‖x‖², coefficient), or CSR
        rows (12 bytes a non-zero, their span, ‖x‖² and coefficient)."""
        core = self.core
        m = core.nsv
        if not core.sparse:
            return int(m * (core.d + 2) * 8)
        return int(m * 32 + 12 * int((core.SVen_[:m] - core.SVst_[:m]).sum()))

    def store_bytes(self) -> int:
        """Bytes held by the core's copies of the examples and support vectors (the dense
        arrays, or the pool and its spans for CSR rows), capacity included; 0 before any."""
        core = self.core
        if core is None:
            return 0
        arrays = [core.X_, core.SVX_, core.sq_, core.SVsq_]
        if core.sparse:
            arrays += [core.pidx_, core.pdat_, core.st_, core.en_, core.SVst_, core.SVen_]
        return int(sum(a.nbytes for a in arrays))


class OnlineSVMR(_RampSVM):
    """OnlineSVM^R: the online ramp-loss SVM of Wang and Vucetic (2009), Algorithms 1 and 2.

    After each labelled example it restores a CCCP fixed point of the zero-bias ramp SVM
    over every example stored so far. A new example with ``y f(x) > 1`` or ``y f(x) < s``
    is only stored; one inside the ramp region gets a coordinate step and starts the
    online CCCP: SMO on V until no violator gains ``eps_gain``, then V is reassigned from
    the gradients (examples with ``y f < s`` leave V and are unlearned, α ← 0; stored
    examples with ``y f ≥ s`` enter), until V stops changing. Every stored example keeps its
    gradient, so without removal memory grows with the stream. With ``m`` set, only the
    ``m`` non-support vectors closest to the boundary are kept (Algorithm 2): memory is
    bounded but the solution is exact only for the retained examples. ``C``, ``s``,
    ``tau``, ``eps_gain``, ``max_outer``, ``max_steps`` and ``cache_mb`` are every ramp
    SVM's (``kbench list algorithms online_svm_r`` describes them).

    Parameters
    ----------
    m
        Number of non-support vectors kept (Algorithm 2); None keeps every example.
    refresh
        Every this many examples, recompute every gradient from α (|I|·|SV| kernel values,
        counted) and record the drift of the incremental updates in ``drift``; 0 never.
        The drift stays near 1e-13 over 10 000 examples (scripts/bench_ramp.py), so it is
        off by default.
    """

    name = "online_svm_r"
    paper = (
        "Wang and Vucetic (2009). Fast online training of ramp loss support vector machines. ICDM."
    )
    test_params = {"C": 1.0}

    m: int | None = param(None, low=0)
    refresh: int = param(0, low=0)

    def _make_core(self, d, sparse):
        return self._new_core(
            d,
            m_keep=-1 if self.m is None else int(self.m),
            refresh=int(self.refresh),
            sparse=sparse,
        )

    def learn_one(self, x, y):
        _check_label(self.name, y)
        self._learn(x, float(y))

    def learn_predict_many(self, X, y):
        _check_labels(self.name, y)
        return self._block(X, y, -1.0)[0]

    def stats(self):
        out = super().stats()
        core = self.core
        if core is not None:
            out |= {
                "removed": core.removed,
                "updates": core.updates,
                "drift": core.drift_max,
                "refresh_evals": core.refresh_evals,
            }
        return out


class OnlineASVMR(OnlineSVMR):
    """OnlineASVM^R: the active-learning ramp SVM of Wang and Vucetic (2009), Algorithm 3.

    It asks for the label of x only when ``|f(x)| ≤ width`` (the ramp region for either
    label when width = 1 and s = −1) and then proceeds as OnlineSVM^R; any other example is
    discarded unlabelled and never stored, so it cannot re-enter the active set later: a
    greedy, approximately optimal optimiser of the ramp objective. ``wants_label`` states
    the rule, so the runner reveals and counts only the labels it asks for;
    ``learn_one`` applies the same rule, so a learner shown every label uses the same ones.

    Parameters
    ----------
    width
        Half-width of the query band |f(x)| ≤ width, ≥ 0.
    max_queries
        Stop asking for labels after this many (0: no limit).
    """

    name = "online_asvm_r"
    paper = (
        "Wang and Vucetic (2009). Fast online training of ramp loss support vector machines. ICDM."
    )
    test_params = {"C": 1.0}

    width: float = param(1.0, low=0.0)
    max_queries: int = param(0, low=0)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.queries = 0

    def _budget_left(self) -> bool:
        return self.max_queries == 0 or self.queries < self.max_queries

    def wants_label(self, x) -> bool:
        """Whether x falls in the query band |f(x)| ≤ width (and the query budget lasts)."""
        return self._budget_left() and abs(self.decision_one(x)) <= self.width

    def learn_one(self, x, y):
        if self.wants_label(x):
            _check_label(self.name, y)
            self._learn(x, float(y))
            self.queries += 1

    def learn_predict_many(self, X, y):
        if self.max_queries:
            return Algorithm.learn_predict_many(self, X, y)  # the budget is checked per example
        _check_labels(self.name, y)
        pred, learned = self._block(X, y, float(self.width))
        self.queries += learned
        return pred

    def stats(self):
        return super().stats() | {"labels_queried": self.queries}


class RampCCCP(_RampSVM):
    """Offline ramp-loss SVM by CCCP (Collobert, Sinz, Weston and Bottou 2006), zero bias.

    A batch reference trained once on the whole stream: a hinge SVM on an initial subset
    (the first ``init_fraction`` of the stream, at least 500 examples), then CCCP over all
    examples: train a hinge SVM on V = {i : y_i f(x_i) ≥ s} with α = 0 outside V, recompute
    V, repeat until V stops changing. The hinge SVMs are solved by the same one-coordinate
    SMO as ``online_svm_r`` with the same tolerances, so kernel evaluations compare.

    Parameters
    ----------
    init_fraction
        Fraction of the stream for the initial hinge SVM, in [0, 1]; 0 starts from α = 0 on
        every example (the first CCCP step is then the hinge SVM on all of them).
    max_outer
        Bound on CCCP iterations (hits are counted in ``outer_caps``).
    max_steps
        Bound on coordinate steps of the whole fit (hits are counted in ``step_caps``).
    """

    name = "ramp_cccp"
    paper = "Collobert, Sinz, Weston and Bottou (2006). Trading convexity for scalability. ICML."
    offline = True
    test_params = {"C": 1.0}

    init_fraction: float = param(0.1, low=0.0, high=1.0)
    max_steps = 100_000_000

    def n_init(self, n: int) -> int:
        """Size of the initial subset for a stream of n examples (0: none)."""
        if self.init_fraction == 0.0:
            return 0
        return min(n, max(500, math.ceil(self.init_fraction * n)))

    def fit(self, X, y):
        sparse = _is_csr(X)
        if not sparse:
            X = as_matrix(X, "X")
        _check_labels(self.name, y)
        n = X.shape[0]
        self.core = self._make_core(X.shape[1], sparse)
        y = np.ascontiguousarray(y, dtype=np.float64)
        if sparse:
            self.core.fit_csr(*_csr_block(X), y, self.n_init(n))
        else:
            self.core.fit(X, y, self.n_init(n))

    def predict_one(self, x):
        return float(self.predict_many(one_row(x) if _is_csr(x) else x[None, :])[0])


@hookimpl
def kbench_register_algorithms(register):
    """Register the ramp-loss SVMs."""
    for cls in (OnlineSVMR, OnlineASVMR, RampCCCP):
        register(cls)
