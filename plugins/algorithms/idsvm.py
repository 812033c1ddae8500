"""IDSVM: exact incremental and decremental SVM learning (Cauwenberghs and Poggio 2001).

After every example the SVM solution on all examples seen so far is the exact optimum of

    max_α 1ᵀα − ½ αᵀQα,  0 ≤ α ≤ C  (and yᵀα = 0 with a bias b),   Q_ij = y_i y_j k(x_i, x_j),

kept by adiabatic increments: the new example's α_c grows while every other example keeps
its Karush–Kuhn–Tucker conditions, in the convention of the paper ``h_i = y_i f(x_i) − 1``:

* margin vectors S: 0 < α < C, h = 0 (their α move with α_c);
* error vectors E: α = C, h ≤ 0;  reserve vectors R: α = 0, h ≥ 0 (fixed).

With ``R = A⁻¹``, ``A = [[0, y_Sᵀ], [y_S, Q_SS]]`` (bias) or ``A = Q_SS`` (no bias), a step
Δα_c moves ``[Δb; Δα_S] = β Δα_c`` with ``β = −R [y_c; Q_Sc]`` and every other margin by
``Δh_i = γ_i Δα_c``, ``γ_i = Q_ic + Σ_{j∈S} Q_ij β_j + y_i β_b``. The largest step that keeps
every condition is taken; the example that hits its bound changes set, R grows or shrinks by
a rank-one update, and the loop goes on until c itself reaches S (h_c = 0) or E (α_c = C).
Decremental unlearning runs the same loop backwards until α_c = 0.

Numerical care (kbench spec 001 §7.13): ties go to c's own transition first, then the lowest
index; sensitivities below 1e-12 are treated as zero; an example whose Schur complement
κ = Q_kk + vᵀβ^k is below 1e-8·max(Q_kk, 1) (a duplicate, or a low-rank kernel) is refused
entry to S and counted in ``degenerate`` — in exact arithmetic such an example's margin does
not move while S keeps its members, so it stays at h = 0 on its bound until S loses one; every loop has a step bound (hits counted in
``step_caps``); R is re-inverted and the margins h recomputed from α every ``refresh``
examples, their drift recorded.
"""

from __future__ import annotations

import time
from collections import OrderedDict

import numpy as np

from kbench.api import Algorithm, as_matrix, dense, dense_blocks, hookimpl, is_sparse, param
from kbench.cython_core import _kernels
from kbench.learners import KernelSpec, as_csr, csr_parts, refuse_switch
from kbench.learners.rows import compiled_kernel, one_row
from kbench.learners.sparse_buffer import SparseSupportBuffer
from kbench.plugins.algorithms._idsvm_solver import Solver
from kbench.plugins.algorithms._idsvm_store import ERROR, MARGIN, MOVING, RESERVE


def _check_label(owner: str, y: float) -> None:
    if y != 1.0 and y != -1.0:
        raise ValueError(f"{owner}: labels must be −1 or +1, got {y!r}")


class IDSVM(Solver, Algorithm):
    """IDSVM, the exact online SVM of Cauwenberghs and Poggio (2001), with or without a bias.

    The SVM with hinge loss and box constraint C on every example seen so far, kept at its
    optimum after each example by incremental learning; :meth:`unlearn` removes an example
    by decremental unlearning. Every example is stored (reserve vectors may become support
    vectors again), with the kernel values between all stored examples and the margin
    vectors. The optimum is the batch SVM's: with ``bias=True`` LIBSVM's C-SVC, with
    ``bias=False`` the zero-bias SVM that ``online_svm_r`` trains on its active set.

    CSR rows (``sparse_input``, built-in kernels) are stored as they come: the examples in a
    sparse pool whose slots follow their positions, the support vectors in a
    :class:`SparseSupportBuffer`, and every kernel row is one compiled sparse call, O(nnz)
    per value; the bookkeeping is the dense rows' own.

    Parameters
    ----------
    C
        Box constraint, > 0.
    bias
        Learn an offset b (the dual then has the equality constraint yᵀα = 0).
    max_steps
        Bound on bookkeeping steps per example; 0 uses 10·(examples stored) + 1000. Hits
        are counted in ``step_caps``.
    refresh
        Every this many examples, re-invert the margin-vector matrix and recompute every
        margin from α, recording the drift of the rank-one updates (0 never).
    max_kernel_evals
        Stop learning (keep predicting with the model reached) once this many kernel values
        have been requested (``kernel_requests``: those computed plus those the row cache
        served, so the stopping point does not depend on ``cache_mb``); 0 never. The paper
        stops IDSVM after 5 000 s; a kernel budget gives the same effect reproducibly.
    max_seconds
        Stop learning after this much time spent learning; 0 never.
    cache_mb
        Byte budget (MiB) of the kernel rows kept for examples that left the margin set, most
        recently used first: margin vectors often return, and a returning one then costs
        only the values for examples that arrived since. 0 keeps none.
    """

    name = "idsvm"
    paper = "Cauwenberghs and Poggio (2001). Incremental and decremental support vector machine learning. NIPS."
    tasks = frozenset({"binary"})
    test_params = {"C": 1.0}

    C: float = param(1.0, low=0.0, low_open=True)
    bias: bool = param(False)
    max_steps: int = param(0, low=0)
    refresh: int = param(1000, low=0)
    max_kernel_evals: int = param(0, low=0)
    max_seconds: float = param(0.0, low=0.0)
    cache_mb: float = param(100.0, low=0.0)

    @property
    def sparse_input(self) -> bool:
        """CSR rows as they are with a built-in kernel (its kernel rows are compiled sparse
        calls); a kernel written in Python gets dense rows (the runner's DenseRows)."""
        return self.kernel is not None and self.kernel.compiled() is not None

    def __post_init__(self) -> None:
        # Rows K(x_k, x_T[:L]) of examples that left S, by example id (LRU order), with the
        # number of examples L they cover; the bytes they hold.
        self._rows: OrderedDict[int, np.ndarray] = OrderedDict()
        self._row_bytes = 0
        self.cache_hits = 0
        self.cached_values = 0
        assert self.kernel is not None
        self._spec = KernelSpec.of(self.kernel)
        self._builtin = self._spec.compiled
        self._o = 1 if self.bias else 0
        self._d: int | None = None
        # The examples' CSR rows, slot i holding example i of T, once CSR rows are learned
        # (then there is no dense X); None on dense rows.
        self._pool: SparseSupportBuffer | None = None
        self.b = 0.0
        self.n = 0
        self.ns = 0
        self.kernel_evals = 0
        self.steps = 0
        self.degenerate = 0
        self.step_caps = 0
        self.learned = 0
        self.frozen = False
        self.learn_time = 0.0
        self.drift_R = 0.0
        self.drift_h = 0.0
        self._next_id = 0
        self._last: tuple[object, float] | None = None

    def _decide(self, x: np.ndarray, xsq: float | None = None) -> float:
        last = self._last
        if last is not None and last[0] is x:
            return last[1]
        if self._d is None:
            return self.b
        f = self._f(x, float(x @ x) if xsq is None else xsq)
        self._last = (x, f)
        return f

    # -- the one-row methods and blocks: dense rows, or CSR rows ---------------------------

    def decision_one(self, x):
        # A dense row to a learner of dense rows first: the runner's per-example path. A
        # CSR row is densified for a learner of dense rows; a learner of CSR rows, or one
        # that has learned nothing, scores a CSR row as a one-row CSR block.
        if type(x) is np.ndarray and self._pool is None:
            return float(self._decide(x))
        sparse = type(x) is not np.ndarray and is_sparse(x)
        if self._pool is None and (self._d is not None or not sparse):
            return float(self._decide(dense(x).reshape(-1) if sparse else x))
        return float(self._decisions(one_row(x))[0])

    def learn_one(self, x, y):
        if type(x) is np.ndarray and self._pool is None:
            return self._learn_dense(x, y)
        sparse = type(x) is not np.ndarray and is_sparse(x)
        if self._pool is not None or (sparse and self.sparse_input):
            self.learn_predict_many(one_row(x), np.array([float(y)]))
        else:
            self._learn_dense(dense(x).reshape(-1) if sparse else x, y)

    def decision_many(self, X):
        """Decision values of the rows of X (dense or CSR), without learning, computed on
        the rows the model holds (CSR rows densified 8 MB at a time for a model of dense rows)."""
        if self._pool is not None and not is_sparse(X):
            X = as_csr(X)
        elif self._d is not None and self._pool is None and is_sparse(X):
            parts = [self._decisions(rows) for _, _, rows in dense_blocks(X)]
            return np.concatenate(parts) if parts else self._decisions(np.zeros((0, X.shape[1])))
        return self._decisions(X)

    def predict_many(self, X):
        return self.labels_of(self.decision_many(X))

    def _learn_dense(self, x: np.ndarray, y: float) -> None:
        _check_label(self.name, y)
        if self._d is None:
            self._init(len(x))
        if self.frozen:
            return
        t0 = time.perf_counter()
        xsq = float(x @ x)
        self._increment(x, float(y), xsq, self._decide(x, xsq))
        self._learned(t0)

    def _learned(self, t0: float) -> None:
        """After an example learned from time t0: counts, refresh, the budgets."""
        self._last = None
        self.learned += 1
        if self.refresh and self.learned % self.refresh == 0:
            self.refresh_now()
        self.learn_time += time.perf_counter() - t0
        if (self.max_kernel_evals and self.kernel_requests >= self.max_kernel_evals) or (
            self.max_seconds and self.learn_time >= self.max_seconds
        ):
            self.frozen = True

    def learn_predict_many(self, X, y):
        if self._pool is None and not is_sparse(X):
            return super().learn_predict_many(X, y)  # one dense row at a time
        if self._pool is None and self._d is not None:
            refuse_switch(self.name, True)
        return self._learn_csr(as_csr(X), np.asarray(y, dtype=np.float64))

    def _learn_csr(self, X, y: np.ndarray) -> np.ndarray:
        """Predict then learn each CSR row of X: its kernel rows from the sparse pool."""
        compiled_kernel(self.kernel)  # a one-line TypeError for other kernels
        if self._d is None:
            self._init(X.shape[1], sparse=True)
        elif X.shape[1] != self._d:
            raise ValueError(f"{self.name}: X has {X.shape[1]} columns but the model has {self._d}")
        indptr, indices, data = csr_parts(X)
        pred = np.empty(X.shape[0])
        for i in range(X.shape[0]):
            a, b = indptr[i], indptr[i + 1]
            x = (indices[a:b], data[a:b])
            xsq = float(x[1] @ x[1])
            f = self._f(x, xsq)
            pred[i] = self.label_of(f)
            _check_label(self.name, y[i])
            if not self.frozen:
                t0 = time.perf_counter()
                self._increment(x, float(y[i]), xsq, f)
                self._learned(t0)
        return pred

    def _decisions(self, X) -> np.ndarray:
        """f for every row of X, dense or CSR as the rows learned (held-out evaluation)."""
        st = getattr(self, "store", None)
        if is_sparse(X):
            if st is None or st.m == 0:
                return np.full(X.shape[0], self.b)
            return st.buf.decision_many(self.kernel, X)[:, 0] + self.b
        X = as_matrix(X, "X")
        if st is None or st.m == 0:
            return np.full(len(X), self.b)
        m = st.m
        if not self._builtin:
            return (self.kernel.matrix(X, st.X[:m]) @ st.coef[:m])[:, 0] + self.b
        out = np.empty(len(X))
        block = max(1, min(2048, 4_000_000 // m))
        K = np.empty((min(block, len(X)), m))
        res = np.empty((min(block, len(X)), 1))
        xsq = np.einsum("ij,ij->i", X, X)
        for a in range(0, len(X), block):
            b = min(a + block, len(X))
            _kernels.decision_block(
                self._spec, st.X, st.sq, st.coef, m, X[a:b], xsq[a:b], K, res[: b - a]
            )
            out[a:b] = res[: b - a, 0]
        return out + self.b

    # -- decremental unlearning -------------------------------------------------------------

    def unlearn(self, example_id: int) -> None:
        """Remove the example that arrived as number ``example_id`` (0-based) exactly: the
        solution becomes the optimum over the remaining examples."""
        hits = np.flatnonzero(self.ids[: self.n] == example_id) if self._d is not None else []
        if len(hits) == 0:
            raise KeyError(f"{self.name}: no stored example number {example_id}")
        c = int(hits[0])
        if self.alpha[c] > 0.0:
            if self.kind[c] == MARGIN:
                kc = self.KsT[self.spos[c], : self.n].copy()
                self._contract(c)
            else:
                kc = self._row_T(self._row_of(c), self.sq[c])
            kc[c] = self.kd[c]
            self.kind[c] = MOVING
            self._run(c, kc, -1.0)
            self.alpha[c] = 0.0
            self._sync(np.array([c]))
        self._delete(c)
        self._last = None

    def snapshot(self) -> dict[str, np.ndarray | float]:
        """Copies of the stored examples in arrival order: X (a CSR matrix once CSR rows are
        learned), y, alpha, h (= y f − 1), set (0 reserve, 1 margin, 2 error), ids, and the
        offset b."""
        if self._d is None:
            z = np.zeros(0)
            return {
                "X": np.zeros((0, 0)),
                "y": z,
                "alpha": z,
                "h": z,
                "set": z,
                "ids": z,
                "b": self.b,
            }
        n = self.n
        order = np.argsort(self.ids[:n], kind="stable")
        return {
            "X": self.X[order].copy() if self._pool is None else self._pool.to_csr()[order],
            "y": self.y[order].copy(),
            "alpha": self.alpha[order].copy(),
            "h": self.h[order].copy(),
            "set": self.kind[order].copy(),
            "ids": self.ids[order].copy(),
            "b": self.b,
        }

    def stats(self):
        kind = self.kind[: self.n] if self._d is not None else np.zeros(0)
        return {
            "n_support": self.store.m if self._d is not None else 0,
            "kernel_evals": self.kernel_evals,
            "kernel_requests": self.kernel_requests,
            "n_margin": int(np.sum(kind == MARGIN)),
            "n_error": int(np.sum(kind == ERROR)),
            "n_reserve": int(np.sum(kind == RESERVE)),
            "bookkeeping_steps": self.steps,
            "degenerate": self.degenerate,
            "cache_hits": self.cache_hits,
            "step_caps": self.step_caps,
            "drift_R": self.drift_R,
            "drift_h": self.drift_h,
            "learned": self.learned,
            "frozen": int(self.frozen),
            "b": self.b,
        }


@hookimpl
def kbench_register_algorithms(register):
    """Register IDSVM."""
    register(IDSVM)
