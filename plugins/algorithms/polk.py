"""POLK: Parsimonious Online Learning with Kernels (Koppel, Warnell, Stump, Ribeiro; specs/004).

Functional SGD whose every iterate is compressed by destructive kernel orthogonal
matching pursuit (KOMP) back onto a sparse dictionary, within a controlled RKHS error
ε = K·η^{3/2}; with a constant step the model order stays bounded. The exact O(M²)
bookkeeping (inverse Gram matrix by Schur complements and rank-one downdates, folding
of points already in the span, periodic Cholesky refresh) is in
``cython_core/_polk.pyx``; this module holds the per-example path and the checks.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal

import numpy as np

from kbench.api import Algorithm, hookimpl, param
from kbench.cython_core import _kernels, _polk
from kbench.cython_core._polk_model import (
    Criterion,
    PolkState,
    Reduce,
    Schedule,
    polk_probe,
    polk_probe_index,
    polk_refresh,
    polk_update,
    work_size,
)
from kbench.learners import (
    KernelSpec,
    MarkedRows,
    OneRowMethods,
    SupportBuffer,
    csr_rows,
    make_cfg,
    open_rows,
    python_gradient,
    setup_loss,
    stored_rows,
)
from kbench.learners.online_loss import L_PYTHON
from kbench.learners.rows import compiled_kernel
from kbench.learners.sparse_buffer import SparseRow

SCHEDULES = {"constant": Schedule.SCH_CONSTANT, "diminishing": Schedule.SCH_DIMINISHING}
REDUCES = {"mean": Reduce.RED_MEAN, "sum": Reduce.RED_SUM}
CRITERIA = {"norm": Criterion.CRIT_NORM, "squared": Criterion.CRIT_SQUARED}
#: Consecutive updates with a non-zero gradient that end with an empty dictionary before
#: the zero-trap alarm (specs/004 §8 P3) goes off.
ZERO_ALARM = 10


def _grown(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A zero array of ``shape`` holding a's contents in its leading corner."""
    out = np.zeros(shape)
    out[tuple(slice(0, n) for n in a.shape)] = a
    return out


class POLK(OneRowMethods, Algorithm):
    """POLK (Koppel et al. 2017, Algorithms 1 and 2): functional SGD compressed by KOMP.

    Each mini-batch of B examples is first predicted with the current f (scores
    ``F = Wᵀ κ_D(x)``, one per class for multiclass with one dictionary shared by all
    classes), then ``f̃ = (1 − η_t λ) f − (η_t / B) Σ_b ∇ℓ(F_b, y_b) κ(x_b, ·)`` (``sum``
    drops the 1/B), and destructive KOMP with pre-fitting removes atoms, the one whose
    removal costs least first, while ``‖f − f̃‖_H ≤ ε_t`` (``criterion=squared``: while
    the squared distance is ≤ ε_t, a variant). Examples whose gradient is zero add nothing.

    ``schedule=constant``: η_t = η < 1/λ and ε = K η^{3/2} (Theorem 2: bounded model order,
    convergence to an O(√η) neighbourhood). ``schedule=diminishing``: η_t = η/(1 + t/t0),
    ε_t = K η_t² (Theorem 1 has K = 1); the model order may grow.

    A new point whose squared distance s to the span of the dictionary is below
    ``screen_tau·κ(x, x)`` is folded into the existing weights instead of appended, if its
    residual ‖c‖√s fits the remaining error budget, so that the inverse Gram matrix stays
    well conditioned (specs/004 P1); below min(screen_tau, 1e-10)·κ(x, x) a point is
    always folded, and ``screen_tau=0`` folds only points exactly in the span. Appending
    nearly dependent points and deleting them again costs the inverse digits, and the loss
    compounds until the screening misjudges dependent points; so after each update the
    inverse is probed on its most nearly dependent atom and recomputed by Cholesky when
    the probe exceeds ``refresh_tol`` (and every ``refresh_every`` updates if set).

    An update with a non-zero gradient that ends with an empty dictionary happens when
    ‖f̃‖_H ≤ ε, and from f = 0 it repeats for ever (P3, the zero trap): after
    10 such updates in a row the learner warns once and ``stats()["zero_trap"]`` is 1.
    Examples of an incomplete last mini-batch are predicted but not learned.

    Parameters
    ----------
    eta
        Step size η > 0 (the initial one with ``schedule=diminishing``); η·λ < 1.
    lam
        Regulariser λ ≥ 0 of (λ/2)‖f‖².
    K
        Parsimony constant K ≥ 0 of the budget ε = K η^{3/2}; 0 keeps every atom with a
        non-zero weight (plain functional SGD).
    schedule
        ``constant`` or ``diminishing``.
    t0
        Examples over which a diminishing step halves.
    batch_size
        Mini-batch size B (the paper: 32).
    batch_reduce
        ``mean`` (gradient averaged over the batch) or ``sum``.
    criterion
        ``norm`` (‖f − f̃‖ ≤ ε) or ``squared`` (‖f − f̃‖² ≤ ε).
    screen_tau
        Relative distance² below which a new point is folded, in [0, 1).
    refresh_every
        Updates between Cholesky recomputations of the inverse Gram matrix; 0 never.
    refresh_tol
        After each update the inverse is probed on its most nearly dependent atom j: the
        computed distance² of κ(d_j, ·) to the span of the dictionary, 0 in exact
        arithmetic, relative to κ(d_j, d_j); above ``refresh_tol`` the inverse is
        recomputed (0 turns the probe off).
    """

    name = "polk"
    paper = "Koppel, Warnell, Stump and Ribeiro (2019). Parsimonious online learning with kernels via sparse projections in function space. JMLR 20."
    tasks = frozenset({"binary", "multiclass", "regression"})
    uses_loss = True
    default_loss = "hinge"
    test_params = {"K": 0.05, "eta": 0.5, "batch_size": 4, "refresh_every": 5}
    #: CSR rows are learned with the per-example update, the dictionary kept sparse.
    sparse_input = True

    eta: float = param(1.0, low=0.0, low_open=True)
    lam: float = param(1e-6, low=0.0)
    K: float = param(0.04, low=0.0)
    schedule: Literal["constant", "diminishing"] = param("constant")
    t0: float = param(100.0, low=0.0, low_open=True)
    batch_size: int = param(1, low=1)
    batch_reduce: Literal["mean", "sum"] = param("mean")
    criterion: Literal["norm", "squared"] = param("norm")
    screen_tau: float = param(1e-6, low=0.0, high=1.0, high_open=True)
    refresh_every: int = param(0, low=0)
    refresh_tol: float = param(1e-8, low=0.0)

    def __post_init__(self) -> None:
        eta, lam, K, schedule, t0 = self.eta, self.lam, self.K, self.schedule, self.t0
        batch_size, batch_reduce, criterion = self.batch_size, self.batch_reduce, self.criterion
        screen_tau, refresh_every, refresh_tol = (
            self.screen_tau,
            self.refresh_every,
            self.refresh_tol,
        )
        task, n_classes = self.task, self.n_classes
        if eta * lam >= 1.0:
            raise ValueError(
                f"polk: eta must be below 1/lam (the shrink factor 1 − η λ must "
                f"stay positive), got eta={eta!r} with lam={lam!r}"
            )
        for pname, value, choices in (
            ("schedule", schedule, SCHEDULES),
            ("batch_reduce", batch_reduce, REDUCES),
            ("criterion", criterion, CRITERIA),
        ):
            if value not in choices:
                raise ValueError(
                    f"polk: {pname} must be one of {', '.join(choices)}, got {value!r}"
                )
        assert self.loss is not None and self.kernel is not None
        self._setup = setup_loss("polk", self.loss, task, n_classes, 0.0, 1.0)
        self._C = self._setup.n_out
        self._cfg = make_cfg(self.kernel, self._setup)
        self._spec = KernelSpec.of(self.kernel)
        self._state = PolkState(
            eta=eta,
            lam=lam,
            K=K,
            schedule=SCHEDULES[schedule],
            t0=t0,
            B=batch_size,
            reduce=REDUCES[batch_reduce],
            criterion=CRITERIA[criterion],
            tau=screen_tau,
            refresh=refresh_every,
            rtol=refresh_tol,
        )
        self._buf: SupportBuffer | None = None
        self._warned = False
        C, B = self._C, batch_size
        self._scores = np.zeros(3 * C)
        self._XI = np.zeros((B, C))
        self._xsqb = np.zeros(B)
        self._kdb = np.zeros(B)
        self._idb = np.zeros(B)
        self._Kbb = np.zeros((B, B))
        self._one = np.zeros(1)
        # CSR rows: the dictionary's sparse rows, and the pending batch's rows by mark.
        self._sparse: MarkedRows | None = None
        self._pending: dict[float, SparseRow] = {}

    # -- storage -----------------------------------------------------------------------------

    def _buffer(self, d: int) -> SupportBuffer:
        if self._buf is None:
            cap = 64 + self.batch_size
            self._buf = SupportBuffer(d, cap, n_outputs=self._C, growable=True)
            self._Xb = np.zeros((self.batch_size, d))
            self._alloc(cap)
        return self._buf

    def _alloc(self, cap: int) -> None:
        """(Re)allocate the arrays sized by the capacity, keeping their contents."""
        if not hasattr(self, "_G"):
            self._G, self._ids, self._Kb = np.zeros((0, 0)), np.zeros(0), np.zeros((0, 0))
        self._G = _grown(self._G, (cap, cap))
        self._ids = _grown(self._ids, (cap,))
        self._Kb = _grown(self._Kb, (self.batch_size, cap))
        refresh = self.refresh_every > 0 or self.refresh_tol > 0.0
        self._R = np.zeros((cap, cap) if refresh else (0, 0))
        self._probe_row = np.zeros(cap)
        self._work = np.zeros(work_size(cap, self._C, self.batch_size))
        self._bind(force=True)

    def _bind(self, force: bool = False) -> PolkState:
        """The state, bound to what the compiled update reads and writes: the dictionary
        (rows, ‖x‖², weights, inverse Gram matrix, stream positions), the pending batch (its
        rows, their ‖x‖², k(x, x), gradients and stream positions, their kernel rows over
        the dictionary and their own Gram matrix), the scratch and the refresh scratch.
        Bound again (``force``) whenever the arrays are reallocated, and after unpickling
        (a state unpickles unbound)."""
        buf = self._buf
        assert buf is not None
        st = self._state
        if st.bound and not force:
            return st
        st.bind(
            D=buf.X,
            sq=buf.sq,
            W=buf.alpha,
            G=self._G,
            ids=self._ids,
            Xb=self._Xb,
            xsqb=self._xsqb,
            kdb=self._kdb,
            XI=self._XI,
            idb=self._idb,
            Kb=self._Kb,
            Kbb=self._Kbb,
            work=self._work,
            R=self._R,
        )
        return st

    def _ensure(self, need: int) -> None:
        """Grow every capacity-sized array to hold ``need`` atoms (by half again at least)."""
        buf = self._buf
        assert buf is not None
        if need <= buf.capacity:
            return
        cap = max(need, buf.capacity + buf.capacity // 2)
        buf.grow(cap)
        self._alloc(cap)

    def _xsq(self, x: np.ndarray) -> float:
        """‖x‖² computed by the compiled core, as the block loop computes it."""
        _kernels.sq_norms(x.reshape(1, -1), self._one)
        return float(self._one[0])

    def _self_kernel(self, x: np.ndarray, xsq: float) -> float:
        if self._spec.compiled:
            return float(_polk.polk_self_kernel(self._cfg, x, xsq))
        return float(np.asarray(self.kernel.diag(x.reshape(1, -1)))[0])

    # -- the online protocol ----------------------------------------------------------------

    def _forward(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        """The kernel row against the dictionary (cached for learn_one) and the scores."""
        buf = self._buffer(len(x))
        xsq = self._xsq(x)
        k = buf.row(self.kernel, x, xsq)
        F = self._scores[: self._C]
        _kernels.expansion(k, buf.alpha, buf.size, F)
        return k, xsq

    def _decision_dense(self, x):
        self._forward(x)
        F = self._scores[: self._C]
        return F.copy() if self.task == "multiclass" else float(F[0])

    def _learn_dense(self, x, y):
        k, xsq = self._forward(x)
        self._learn(x, xsq, k, float(y), self._self_kernel)

    def _learn(
        self, x: np.ndarray, xsq: float, k: np.ndarray, y: float, kxx: Any, row: Any = None
    ) -> None:
        """Record x in the pending batch when its gradient at the scores is not zero
        (``kxx(x, xsq)`` gives k(x, x)), then run the update when the batch is full. On CSR
        rows x is the example's mark and ``row`` its sparse row."""
        C = self._C
        F = self._scores[:C]
        if self._setup.loss_id != L_PYTHON:
            xi = self._scores[C : 2 * C]
            _polk.polk_gradient(self._cfg, F, y, xi, self._scores[2 * C :])
        else:
            with np.errstate(all="ignore"):
                xi, _, _ = python_gradient(self._setup, self.loss, 0.0, F, F, y)
        st = self._state
        if np.any(xi != 0.0):
            if row is not None:
                self._pending[float(x[0])] = row
            ns = st.nstored
            self._Xb[ns] = x
            self._xsqb[ns] = xsq
            self._kdb[ns] = kxx(x, xsq)
            self._XI[ns] = xi
            self._idb[ns] = st.t
            self._Kb[ns, : len(k)] = k
            st.nstored = ns + 1
        st.t += 1
        st.nseen += 1
        if st.nseen == self.batch_size:
            self._update()

    def _learn_predict_sparse(self, X, y) -> np.ndarray:
        """Predict then learn each CSR row as ``learn_one`` does a dense one: the kernel row
        from the sparse store, then the same steps on the example's mark; the batch Gram
        block, the probe row and the refresh Gram matrix come from the sparse rows (see
        :mod:`kbench.learners.marked_rows`)."""
        kern = compiled_kernel(self.kernel)
        self._sparse = rows = open_rows(self.name, self._sparse, self._buf, X, self._buffer)
        buf = self._buf
        assert buf is not None
        C = self._C
        F = self._scores[:C]
        pred = np.empty(X.shape[0])
        for i, x, xsq in csr_rows(X):
            k = rows.row(kern, x, xsq, buf)
            _kernels.expansion(k, buf.alpha, buf.size, F)
            pred[i] = self.label_of(F.copy() if self.task == "multiclass" else float(F[0]))
            self._learn(rows.next_mark()[0], xsq, k, float(y[i]), self._self_kernel, x)
        return pred

    def _update(self) -> None:
        """The POLK step on the pending mini-batch (the per-example path)."""
        buf = self._buf
        assert buf is not None
        st = self._state
        ns = st.nstored
        self._ensure(st.m + ns)
        rows = self._sparse
        if rows is not None:  # the pending rows' Gram block from their sparse rows
            K = np.empty((ns, ns))
            rows.gram_into(compiled_kernel(self.kernel), K, list(self._pending.values()))
            low = np.tril_indices(ns, -1)
            self._Kbb[low] = K[low]
        elif self._spec.compiled:
            _polk.polk_batch_gram(self._spec, self._Xb, self._xsqb, ns, self._Kbb)
        else:
            for b in range(1, ns):
                self._Kbb[b, :b] = self.kernel.row(self._Xb[:b], self._Xb[b])
        buf.kernel_evals += ns * (ns - 1) // 2
        polk_update(self._bind())
        M = st.m
        buf.size = M
        buf.touch()
        if rows is not None:
            rows.sync_many(buf, self._pending)
            self._pending.clear()
        if self._R.size == 0 or M == 0:
            self._check_zero_trap()
            return
        compiled = self.kernel.compiled()
        j = 0
        row = self._probe_row
        if self.refresh_tol > 0.0:
            # The probe of the inverse on its most sensitive atom (see _polk._finish).
            j = int(polk_probe_index(self._G, M))
            if rows is not None:
                store = rows.store
                row[:M] = store.row(self.kernel, store.get(j), store.sq[j])
            elif compiled is not None:
                _kernels.kernel_row(compiled, buf.X, buf.sq, buf.X[j], float(buf.sq[j]), row, M)
            else:
                row[:M] = self.kernel.row(buf.X[:M], buf.X[j])
            buf.kernel_evals += M
        if polk_probe(st, row, j):
            if rows is not None:
                rows.gram_into(compiled_kernel(self.kernel), self._R)
            elif compiled is not None:
                _polk.polk_gram(self._spec, buf.X, buf.sq, M, self._R)
            else:
                self._R[:M, :M] = self.kernel.matrix(buf.X[:M], buf.X[:M])
            buf.kernel_evals += M * M
            if polk_refresh(self._G, self._R, M):
                st.refreshes += 1
            else:
                st.refresh_failures += 1
        self._check_zero_trap()

    def learn_predict_many(self, X, y):
        if (csr := self._csr_block(X)) is not None:
            return self._learn_predict_sparse(csr, y)
        if not self._spec.compiled or self._setup.loss_id == L_PYTHON:
            return super().learn_predict_many(X, y)
        buf = self._buffer(X.shape[1])
        st = self._state
        pred = np.empty(len(X))
        i = 0
        while True:
            st.kernel_evals = buf.kernel_evals
            i = _polk.polk_block(
                self._spec, X, y, pred, i, cfg=self._cfg, state=self._bind(), scores=self._scores
            )
            buf.kernel_evals = st.kernel_evals
            buf.size = st.m
            buf.touch()
            self._check_zero_trap()
            if not st.update_due and i == len(X):
                return pred
            self._ensure(st.m + st.nstored)

    def _decisions(self, X):
        buf = self._buf
        if buf is None:
            F = np.zeros((X.shape[0], self._C))
        elif self._sparse is not None:
            F = self._sparse.decision_many(self.kernel, X, buf.alpha, 1.0)
        else:
            F = buf.decision_many(self.kernel, X)
        return F if self.task == "multiclass" else F[:, 0]

    # -- the zero trap ----------------------------------------------------------------------

    def _check_zero_trap(self) -> None:
        st = self._state
        if st.zero_run >= ZERO_ALARM and not self._warned:
            self._warned = True
            warnings.warn(
                f"polk: the dictionary stayed empty through {st.zero_run} updates "
                f"in a row ({st.t} examples seen): every step's ‖f̃‖_H was within "
                f"ε = {st.last_eps:.4g}, so KOMP deleted everything and the learner "
                "cannot leave f = 0 (specs/004 P3). Lower K, raise eta, or use "
                "batch_reduce=sum",
                RuntimeWarning,
                stacklevel=3,
            )

    # -- inspection -------------------------------------------------------------------------

    def dictionary(self) -> dict[str, np.ndarray]:
        """Copies of the model: atoms ``D`` (M × d; CSR once it has learned CSR rows), weights ``W`` (M × C), the inverse
        Gram matrix ``G`` (M × M) and ``ids``, each atom's position in the stream."""
        buf = self._buf
        M = buf.size if buf else 0
        if buf is None:
            return {
                "D": np.zeros((0, 0)),
                "W": np.zeros((0, self._C)),
                "G": np.zeros((0, 0)),
                "ids": np.zeros(0),
            }
        return {
            "D": stored_rows(buf, self._sparse),
            "W": buf.alpha[:M].copy(),
            "G": self._G[:M, :M].copy(),
            "ids": self._ids[:M].copy(),
        }

    def state(self) -> dict[str, float]:
        """The scalar state (STATE_FIELDS of the compiled core)."""
        return self._state.state()

    def stats(self):
        buf = self._buf
        st = self._state
        nbytes = 0
        if buf is not None:
            nbytes = buf.nbytes() + self._G.nbytes + self._R.nbytes + self._Kb.nbytes
            if self._sparse is not None:
                nbytes += self._sparse.nbytes()
        eps = st.last_eps
        return {
            "n_support": buf.size if buf else 0,
            "kernel_evals": buf.kernel_evals if buf else 0,
            "model_bytes": nbytes,
            "eta": float(st.eta_t),
            "eps": float(eps) if st.updates else self._eps0(),
            "last_error": float(st.last_err),
            "max_error_ratio": float(st.max_err_ratio),
            "appends": int(st.appends),
            "folds": int(st.folds),
            "deletions": int(st.deletions),
            "refreshes": int(st.refreshes),
            "refresh_failures": int(st.refresh_failures),
            "probe_residual": float(st.probe_residual),
            "zero_trap": 1.0 if st.zero_run >= ZERO_ALARM else 0.0,
        }

    def _eps0(self) -> float:
        """ε of the first step."""
        if self.schedule == "diminishing":
            return self.K * self.eta**2
        return self.K * self.eta * math.sqrt(self.eta)


@hookimpl
def kbench_register_algorithms(register):
    """Register POLK."""
    register(POLK)
