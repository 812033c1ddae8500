"""POLK: Parsimonious Online Learning with Kernels (Koppel, Warnell, Stump, Ribeiro; specs/004).

Functional SGD whose every iterate is compressed by destructive kernel orthogonal
matching pursuit (KOMP) back onto a sparse dictionary, within a controlled RKHS error
ε = K·η^{3/2}; with a constant step the model order stays bounded. The exact O(M²)
bookkeeping (inverse Gram matrix by Schur complements and rank-one downdates, folding
of points already in the span, periodic Cholesky refresh) is in
``cython_core/_polk_model.pyx``, the one block loop over dense and CSR rows in
``cython_core/_polk.pyx`` (the learner toolkit's store holds the atoms, then the pending
points of the mini-batch); this module holds the parameters, the checks, the path of a
loss or kernel without a compiled form and the zero-trap alarm.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal

import numpy as np

from kbench.api import hookimpl, param
from kbench.cython_core import _kernels
from kbench.cython_core._polk import polk_block
from kbench.cython_core._polk_model import (
    Criterion,
    PolkState,
    Reduce,
    Schedule,
    polk_probe,
    polk_probe_index,
    polk_refresh,
)
from kbench.learners import (
    ExpansionLearner,
    Rows,
    SparseSupportBuffer,
    SupportBuffer,
    labels,
    make_cfg,
    python_gradient,
    setup_loss,
)
from kbench.learners.online_loss import L_PYTHON

_F64 = np.dtype(np.float64)
SCHEDULES = {"constant": Schedule.SCH_CONSTANT, "diminishing": Schedule.SCH_DIMINISHING}
REDUCES = {"mean": Reduce.RED_MEAN, "sum": Reduce.RED_SUM}
CRITERIA = {"norm": Criterion.CRIT_NORM, "squared": Criterion.CRIT_SQUARED}
#: Consecutive updates with a non-zero gradient that end with an empty dictionary before
#: the zero-trap alarm (specs/004 §8 P3) goes off.
ZERO_ALARM = 10


class POLK(ExpansionLearner):
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
    #: A third-party kernel's k(x, x) comes with each row (its ``diag``).
    reads_self_kernel = True

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
        super().__post_init__()  # the model: one column per output (n_classes, or 1)
        # The inverse Gram matrix (and its refresh copy) grow with the store: by half
        # again, not double, which would copy and zero four times the matrix.
        self.model.growth = 1.5
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
        self._scores = np.zeros(3 * self._C)
        self._F = np.zeros(self._C)
        self._warned = False
        self.learn_with(
            polk_block,
            cfg=make_cfg(self.kernel, self._setup),
            state=self._state,
            scores=self._scores,
        )
        # The compiled loss and kernel: learn_one goes straight to the loop.
        self._direct = self.model.spec.compiled and self._setup.loss_id != L_PYTHON

    # -- the online protocol ----------------------------------------------------------------

    def learn_predict_many(self, X: Any, y: Any) -> np.ndarray:
        """Predict then learn the rows of X through the one loop: a block a call with the
        compiled loss and kernel, else a row a call (the loss plugin's gradient at the
        scores, given to the loop; a third-party kernel's probe and refresh, made here)."""
        rows = Rows.of(X)
        y = labels(y, rows.n)
        if self._direct:
            pred = self.learn_rows(rows, y)
            self._check_zero_trap()
            return pred
        pred = np.empty(rows.n)
        for i in range(rows.n):
            x = rows.row0 if rows.row0 is not None else rows.csr[i] if rows.sparse else rows.X[i]
            xi = None
            if self._setup.loss_id == L_PYTHON:
                F = self._scores_at(x)  # its kernel row stays for the learning step
                with np.errstate(all="ignore"):
                    g, _, _ = python_gradient(self._setup, self.loss, 0.0, F, F, y[i])
                xi = np.ascontiguousarray(g, dtype=np.float64)
            pred[i] = self.learn_rows(Rows.one(x), y[i : i + 1], xi_given=xi)[0]
            if self._state.probe_due:
                self._probe()
            self._check_zero_trap()
        return pred

    def learn_one(self, x: Any, y: float) -> None:
        super().learn_one(x, y)
        if self._direct:
            self._check_zero_trap()

    def _probe(self) -> None:
        """The probe of the inverse and its refresh after an update, for a kernel the loop
        cannot compute (the loop's ``_finish`` with the kernel's rows from Python)."""
        st, store = self._state, self.model.store
        assert isinstance(store, SupportBuffer)  # a third-party kernel: dense rows only
        st.probe_due = False
        M = st.m
        D = store.X[:M]
        row = np.zeros(M)
        j = 0
        if self.refresh_tol > 0.0:
            j = int(polk_probe_index(st.G, M))
            row[:] = self.kernel.row(D, D[j])
            store.kernel_evals += M
        if polk_probe(st, row, j):
            st.R[:M, :M] = self.kernel.matrix(D, D)
            store.kernel_evals += M * M
            if polk_refresh(st.G, st.R, M):
                st.refreshes += 1
            else:
                st.refresh_failures += 1

    # -- predicting -------------------------------------------------------------------------

    def _scores_at(self, x: Any) -> np.ndarray:
        """The scores of the M atoms at one row; a dense row's kernel row (over the atoms
        and the pending points) stays in the store for learning the same row next."""
        store, M = self.model.store, self._state.m
        if type(x) is np.ndarray and type(store) is SupportBuffer and store.size:
            if x.ndim != 1 or x.dtype is not _F64 or not x.flags.c_contiguous:
                x = Rows.one(x).row0
            k = store.row(self.model.row_kernel, x)
            _kernels.expansion(k, store.alpha, M, self._F)
            return self._F.copy()
        return self._decisions(Rows.one(x))[0]

    def _decisions(self, rows: Rows) -> np.ndarray:
        """The scores (n × C) of the M atoms, without the pending points of the store."""
        store, M = self.model.store, self._state.m
        if store is None or store.size == M:
            return self.model.decisions(rows)
        size, store.size = store.size, M
        try:
            return self.model.decisions(rows)
        finally:
            store.size = size

    def decision_one(self, x: Any) -> Any:
        F = self._scores_at(x)
        return F if self.task == "multiclass" else float(F[0])

    def decision_many(self, X: Any) -> np.ndarray:
        F = self._decisions(Rows.of(X))
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
        """Copies of the model: atoms ``D`` (M × d; CSR once it has learned CSR rows),
        weights ``W`` (M × C), the inverse Gram matrix ``G`` (M × M) and ``ids``, each
        atom's position in the stream."""
        store, st = self.model.store, self._state
        M = st.m
        if store is None:
            return {
                "D": np.zeros((0, 0)),
                "W": np.zeros((0, self._C)),
                "G": np.zeros((0, 0)),
                "ids": np.zeros(0),
            }
        sparse = isinstance(store, SparseSupportBuffer)
        return {
            "D": store.to_csr()[:M] if sparse else store.X[:M].copy(),
            "W": store.alpha[:M].copy(),
            "G": st.G[:M, :M].copy(),
            "ids": st.ids[:M].copy(),
        }

    def state(self) -> dict[str, float]:
        """The scalar state (STATE_FIELDS of the compiled core)."""
        st = self._state.state()
        st["kernel_evals"] = float(self.model.stats()["kernel_evals"])
        return st

    def stats(self) -> dict[str, Any]:
        st = self._state
        out = self.model.stats()
        out["n_support"] = st.m
        if self.model.store is not None:
            out["model_bytes"] += st.G.nbytes + st.R.nbytes + st.Kb.nbytes
        eps = st.last_eps
        return out | {
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
