"""Online gradient descent on kernel feature maps: Fourier (FOGD) and Nyström (NOGD)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from kbench.api import Algorithm, check_range, hookimpl, param
from kbench.cython_core import _feature_maps, _kernels, _sparse
from kbench.cython_core._feature_maps import NogdState, nogd_block
from kbench.learners import (
    ExpansionLearner,
    KernelKind,
    KernelSpec,
    Rows,
    SparseSupportBuffer,
    SupportBuffer,
    labels,
)
from kbench.learners.online_loss import L_PYTHON, TASK_CODES

#: Eigenvalues of the landmark Gram matrix below this fraction of the largest are dropped.
NYSTROM_TOL = 1e-10


def loss_codes(loss: Any, task: str) -> tuple[int, int, float]:
    """The task's code and the loss's codes in the compiled loops: ``(task, loss id, its
    parameter)``, the id L_PYTHON when the gradient comes from Python (also for a scalar
    loss on a multiclass task, whose derivative the plugin gives)."""
    if task == "multiclass":
        code = loss.compiled_multiclass()
        return TASK_CODES[task], L_PYTHON if code is None else int(code), 0.0
    compiled = loss.compiled()
    if compiled is None:
        return TASK_CODES[task], L_PYTHON, 0.0
    return TASK_CODES[task], int(compiled[0]), float(compiled[1])


def loss_gradient(loss: Any, task: str, scores: np.ndarray, y: float) -> np.ndarray:
    """∂ loss/∂ scores from the Python loss (the path of a loss without a compiled form)."""
    if task == "multiclass":
        return np.ascontiguousarray(loss.derivative(scores, y), dtype=np.float64)
    return np.array([float(loss.derivative(float(scores[0]), float(y)))])


def nystrom_map(
    K: np.ndarray, alpha: np.ndarray, k: int, budget: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Nyström map of B landmarks with Gram matrix K, keeping the k largest eigenvalues
    (those below ``NYSTROM_TOL``·λ_max dropped, with a warning when fewer than k are
    left): ``(M, W, λ)``, with M = Λ^{-1/2} Vᵀ the map and W = Λ^{1/2} Vᵀ α the linear
    weights of the expansion's coefficients α."""
    K = 0.5 * (K + K.T)
    lam, V = np.linalg.eigh(K)
    order = np.argsort(lam)[::-1]
    lam, V = lam[order], V[:, order]
    top = max(float(lam[0]), 0.0)
    keep = int(np.sum(lam > NYSTROM_TOL * top)) if top > 0.0 else 0
    keep = max(keep, 1)
    if keep < k:
        warnings.warn(
            f"nogd: the {budget} Nyström landmarks are rank-deficient (rank {keep}: "
            "repeated or nearly dependent examples); eigenvalues below "
            f"{NYSTROM_TOL:g}·λ_max are dropped (a pseudo-inverse), so the feature map "
            f"has {keep} dimensions instead of {k}",
            RuntimeWarning,
            stacklevel=2,
        )
    keep = min(keep, k)
    lam = np.maximum(lam[:keep], np.finfo(float).tiny)
    V = V[:, :keep]
    M = np.ascontiguousarray(V.T / np.sqrt(lam)[:, None])
    W = np.ascontiguousarray((V.T * np.sqrt(lam)[:, None]) @ alpha)
    return M, W, lam


class _LinearOGD(Algorithm):
    """FOGD's base: task handling, the loss and the linear weights W (p × outputs)."""

    tasks = frozenset({"binary", "multiclass", "regression"})
    uses_loss = True
    default_loss = "hinge"

    def __post_init__(self) -> None:
        self._outputs = self.n_classes if self.task == "multiclass" else 1
        self._task_kind, self._loss_id, self._loss_p1 = loss_codes(self.loss, self.task)
        self._compiled_loss = self._loss_id != L_PYTHON

    def _gradient(self, scores: np.ndarray, y: float) -> np.ndarray:
        """∂ loss/∂ scores from the Python loss (per-example path of a non-compiled loss)."""
        return loss_gradient(self.loss, self.task, scores, y)

    def _first(self, F: np.ndarray) -> np.ndarray:
        """The decision values of scores F (n × outputs): F, or its column on one output."""
        return F if self.task == "multiclass" else F[:, 0]


class FOGD(_LinearOGD):
    """Fourier online gradient descent (Lu, Hoi, Wang, Zhao and Liu 2016).

    Random Fourier features of a shift-invariant kernel (Rahimi and Recht 2007): D
    frequencies ``ω_i`` drawn once from the kernel's spectral density — ``N(0, 2γ I)``
    for ``rbf`` ``exp(−γ‖x−x'‖²)``, independent Cauchy(0, γ) coordinates for
    ``laplacian`` ``exp(−γ‖x−x'‖₁)`` — give ``z(x) = [cos(ω_iᵀx), sin(ω_iᵀx)]_{i≤D}/√D``,
    2D features with ``z(x)ᵀz(x') → k(x, x')`` as D grows. Then online gradient descent
    on the linear model ``f = Wᵀ z(x)`` with a constant step: ``W ← W − η z(x) gᵀ``,
    ``g = ∂ℓ(f(x), y)/∂f``, the loss's derivative (the paper uses the hinge loss;
    multiclass uses the Crammer–Singer hinge or softmax). The frequencies come from the
    learner's seed. There are no support vectors; the model has 2D·outputs weights. An
    example is mapped by summing the frequency rows of its non-zeros in vector registers
    (a sparse example reads few of them); cos and sin of the D phases come
    from one vectorised pass (AVX-512, AVX2 or SSE2, chosen at run time; within 4·10⁻¹⁶
    of the true values) instead of D calls to the C library.

    Parameters
    ----------
    D
        Number of random frequencies, ≥ 1 (2D features).
    eta
        Step size η > 0. The features have unit norm (``‖z(x)‖ = 1``), so η plays the
        role of kernel OGD's step with ``k(x, x) = 1``; the default 0.1 suits it.
    """

    name = "fogd"
    paper = "Lu, Hoi, Wang, Zhao and Liu (2016). Large scale online kernel learning. JMLR 17."
    test_params = {"D": 32}
    #: CSR rows go through the compiled loop as they are (their non-zeros' frequency rows).
    sparse_input = True

    D: int = param(400, low=1)
    eta: float = param(0.1, low=0.0, low_open=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        kernel = self.kernel
        spec = KernelSpec.of(kernel)
        if spec.kind not in (KernelKind.K_RBF, KernelKind.K_LAPLACIAN):
            raise ValueError(
                f"fogd: random Fourier features need a kernel with a known spectral density; "
                f"supported kernels: rbf, laplacian (got {kernel.spec()})"
            )
        self._kind, self._gamma = spec.kind, spec.gamma
        self._Omega: np.ndarray | None = None
        self._label, self._pred1 = np.empty(1), np.empty(1)

    def _setup(self, d: int) -> None:
        if self._Omega is not None:
            return
        if d < 1:
            raise ValueError(
                f"fogd: the examples have {d} features; random Fourier features "
                "(D frequencies in the input space) need at least one"
            )
        rng = np.random.default_rng(self.seed)
        if self._kind == KernelKind.K_RBF:
            self._Omega = rng.normal(0.0, np.sqrt(2.0 * self._gamma), size=(d, self.D))
        else:
            self._Omega = self._gamma * rng.standard_cauchy(size=(d, self.D))
        self._W = np.zeros((2 * self.D, self._outputs))
        self._u = np.empty(self.D)
        self._z = np.empty(2 * self.D)
        self._scores = np.empty(self._outputs)
        self._g = np.zeros(self._outputs)

    def features(self, x: np.ndarray) -> np.ndarray:
        """The random Fourier features z(x) (a copy)."""
        self._setup(len(x))
        _feature_maps.fourier_features(self._Omega, x, self._u, self._z)
        return self._z.copy()

    def _loop_rows(self, rows: Rows) -> Any:
        """The rows as the compiled loops take them: the dense block, or the CSR arrays
        (int64 row pointers, int32 features, float64 values), of this map's dimension (the
        loops read a frequency row per feature)."""
        self._setup(rows.d)
        if rows.d != self._Omega.shape[0]:
            raise ValueError(
                f"fogd: the examples have {rows.d} features, the map {self._Omega.shape[0]}"
            )
        if not rows.sparse:
            return rows.X
        indptr, indices, data = rows.parts
        _sparse.check_rows(indptr[:-1], indptr[1:], indices, rows.d)
        return indptr, indices, data

    def learn_predict_many(self, X, y):
        """Predict then learn the rows of X (dense, CSR or one row): the compiled loop, or
        one row at a time through the loss plugin when the loss has no compiled form."""
        rows = Rows.of(X)
        block, y = self._loop_rows(rows), labels(y, rows.n)
        pred = np.empty(rows.n)
        if not rows.n:
            return pred
        if self._compiled_loss:
            self._fogd(block, y, pred)
            return pred
        for i in range(rows.n):
            if rows.sparse:
                indptr, indices, data = block
                a, b = indptr[i], indptr[i + 1]
                x, cols = data[a:b], indices[a:b]
            else:
                x, cols = block[i], None
            _feature_maps.fourier_features(self._Omega, x, self._u, self._z, cols)
            _feature_maps.linear_scores(self._W, self._z, self._scores)
            s = self._scores
            pred[i] = self.label_of(s.copy() if self.task == "multiclass" else float(s[0]))
            _feature_maps.linear_step(self._W, self._z, self._gradient(s, y[i]), self.eta)
        return pred

    def _fogd(self, block: Any, y: np.ndarray, pred: np.ndarray) -> None:
        """The compiled FOGD loop over ``block`` (dense rows or CSR parts) with a compiled
        loss: predictions into ``pred``, the weights learned in place."""
        _feature_maps.fogd_block(
            self._Omega,
            self._W,
            self.eta,
            self._task_kind,
            self._loss_id,
            self._loss_p1,
            block,
            y,
            pred,
            self._u,
            self._z,
            self._scores,
            self._g,
        )

    def _runner_row(self, x: Any) -> bool:
        """Whether x is the runner's row (1-D C-contiguous float64) of the map's dimension:
        the one-row methods then call the compiled loop on it directly (the same arithmetic
        as on a block, without building Rows once per example)."""
        return (
            type(x) is np.ndarray
            and x.dtype == np.float64
            and x.ndim == 1
            and x.flags.c_contiguous
            and self._Omega is not None
            and x.shape[0] == self._Omega.shape[0]
        )

    def learn_one(self, x, y):
        self._label[0] = y
        if self._compiled_loss and self._runner_row(x):
            self._fogd(x[None, :], self._label, self._pred1)
            return
        self.learn_predict_many(Rows.one(x), self._label)

    def decision_many(self, X):
        """Decision values of the rows of X (dense or CSR), without learning: shape (n,),
        or (n, C) class scores on multiclass tasks."""
        rows = Rows.of(X)
        block = self._loop_rows(rows)
        F = np.empty((rows.n, self._outputs))
        if F.size:
            _feature_maps.fogd_decision_many(self._Omega, self._W, block, F, self._u, self._z)
        return self._first(F)

    def decision_one(self, x):
        if self._runner_row(x):
            _feature_maps.fourier_features(self._Omega, x, self._u, self._z)
            _feature_maps.linear_scores(self._W, self._z, self._scores)
            s = self._scores
            return s.copy() if self.task == "multiclass" else float(s[0])
        F = self.decision_many(Rows.one(x))
        return F[0].copy() if F.ndim == 2 else float(F[0])

    def predict_many(self, X):
        return self.labels_of(self.decision_many(X))

    def stats(self):
        nbytes = 0 if self._Omega is None else self._Omega.nbytes + self._W.nbytes
        return {"n_support": 0, "kernel_evals": 0, "n_features": 2 * self.D, "model_bytes": nbytes}


class NOGD(ExpansionLearner):
    """Nyström online gradient descent (Lu, Hoi, Wang, Zhao and Liu 2016).

    Two phases. First kernel online gradient descent, ``f ← f − η g k(x, ·)`` with
    ``g = ∂ℓ(f(x), y)/∂f`` (a support vector for each non-zero gradient), until B support
    vectors are stored. They become the Nyström landmarks: with ``K = V Λ Vᵀ`` the
    eigen-decomposition of their Gram matrix, keeping the ``r`` largest eigenvalues,
    the feature map is ``z(x) = Λ_r^{-1/2} V_rᵀ k_B(x)`` (``z(x)ᵀz(x')`` is the Nyström
    approximation of ``k(x, x')``), and the kernel expansion ``f = Σ α_j k(x_j, ·)``
    becomes the weights ``W = Λ_r^{1/2} V_rᵀ α`` (the same function when r = B). Then
    linear online gradient descent ``W ← W − η z(x) gᵀ``, one kernel row over the B
    landmarks per example. With B larger than the number of updates NOGD is exactly
    kernel online gradient descent. Multiclass uses the Crammer–Singer hinge or softmax
    on one score per class.

    The map has rank ``k`` (the k largest eigenvalues), by default ``k = ⌈0.2·B⌉`` as in
    the paper's experiments and its authors' code: after the switch an example costs one
    kernel row over the B landmarks, O(B·d), and O(B·k) for its features, instead of
    O(B²) at full rank. ``rank_fraction=1`` (or ``rank=B``) keeps every direction.

    A rank-deficient landmark set (repeated or nearly dependent examples, common on
    binary data such as a9a) is regularised by dropping the eigenvalues below
    ``10⁻¹⁰ λ_max`` (the pseudo-inverse of K); kbench warns when that leaves fewer than
    k directions and reports the rank kept as ``nystrom_rank`` in ``stats()``.

    Parameters
    ----------
    budget
        B ≥ 1, the number of landmarks (support vectors of the first phase).
    eta
        Step size η > 0 of both phases.
    rank
        Number k of eigen-directions kept, 1 ≤ k ≤ B; None takes ``rank_fraction``·B.
    rank_fraction
        k as a fraction of B when ``rank`` is None: ``k = ⌈rank_fraction·B⌉``, in (0, 1].
    """

    name = "nogd"
    paper = "Lu, Hoi, Wang, Zhao and Liu (2016). Large scale online kernel learning. JMLR 17."
    tasks = _LinearOGD.tasks
    uses_loss = True
    default_loss = "hinge"
    test_params = {"budget": 12}

    budget: int = param(100, low=1)
    eta: float = param(0.1, low=0.0, low_open=True)
    rank: int | None = param(None)
    rank_fraction: float = param(0.2, low=0.0, high=1.0, low_open=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        budget, rank, rank_fraction = self.budget, self.rank, self.rank_fraction
        if rank is not None:
            if rank > budget:
                raise ValueError(
                    f"nogd: rank must be at most budget ({budget}): B landmarks "
                    f"give a Nyström map of rank at most B, got rank={rank}"
                )
            check_range("nogd", "rank", rank, low=1, high=budget)
        # The rank k of the map; the small slack keeps ⌈0.2·100⌉ at 20 despite rounding.
        self._k = rank if rank is not None else max(1, math.ceil(rank_fraction * budget - 1e-9))
        outputs = self.model.n_outputs
        self._task_kind, self._loss_id, self._loss_p1 = loss_codes(self.loss, self.task)
        self._state = NogdState(
            np.zeros((1, budget)),
            np.zeros((1, outputs)),
            np.zeros(budget),
            np.empty(outputs),
            np.zeros(outputs),
        )
        self.model.limit = budget
        self.model.at_limit = self._build_map
        self.learn_with(
            nogd_block,
            state=self._state,
            budget=int(budget),
            eta=float(self.eta),
            task=self._task_kind,
            loss_kind=self._loss_id,
            loss_p1=self._loss_p1,
        )
        # Its own learn_predict_many only adds the Python loss's gradient: with a compiled
        # loss learn_one may take the runner's row straight to the loop.
        self._direct = self._loss_id != L_PYTHON

    def _build_map(self, store: Any) -> None:
        """Turn the B support vectors into Nyström landmarks and α into linear weights
        (once: the store stays at B rows, and ``at_limit`` is cleared)."""
        st = self._state
        m = store.size
        if isinstance(store, SparseSupportBuffer):
            # Row by row, as the loops compute a CSR row; not counted in kernel_evals, as
            # kernel.matrix of dense landmarks is not.
            evals, K = store.kernel_evals, np.empty((m, m))
            for i in range(m):
                K[i] = store.row(self.kernel, store.get(i))
            store.kernel_evals = evals
        else:
            K = np.asarray(self.kernel.matrix(store.X[:m], store.X[:m]))
        st.M, st.W, lam = nystrom_map(K, store.alpha[:m], self._k, self.budget)
        st.z, st.nystrom = np.zeros(len(lam)), True
        store.touch()
        self.model.at_limit = None  # the loop no longer stops at the limit

    def _scores(self, k: np.ndarray) -> np.ndarray:
        """The scores of a row given its kernel row k over the store, as the loop makes
        them."""
        st, store = self._state, self.model.store
        if st.nystrom:
            _feature_maps.nystrom_features(st.M, k, st.z)
            _feature_maps.linear_scores(st.W, st.z, st.scores)
        else:
            _kernels.expansion(k, store.alpha, store.size, st.scores)
        return st.scores

    def learn_predict_many(self, X, y):
        """Predict then learn the rows of X (dense, CSR or one row): the compiled loop, or
        one row at a time with the gradient of a loss without a compiled form."""
        if self._loss_id != L_PYTHON:
            return super().learn_predict_many(X, y)
        rows = Rows.of(X)
        y = labels(y, rows.n)
        pred, g = np.empty(rows.n), self._state.g
        for i in range(rows.n):
            x = rows.row0 if rows.row0 is not None else rows.csr[i] if rows.sparse else rows.X[i]
            F = self.decision_one(x)  # a dense row's kernel row stays for the learning step
            g[:] = loss_gradient(self.loss, self.task, np.atleast_1d(F), y[i])
            pred[i] = self.learn_rows(Rows.one(x), y[i : i + 1])[0]
        return pred

    def decision_one(self, x):
        store = self.model.store
        if type(x) is np.ndarray and type(store) is SupportBuffer and store.size:
            if x.ndim != 1 or x.dtype != np.float64 or not x.flags.c_contiguous:
                x = Rows.one(x).row0  # checked and converted; the runner's row as it is
            s = self._scores(store.row(self.model.row_kernel, x))
            return s.copy() if self.task == "multiclass" else float(s[0])
        F = self.decision_many(Rows.one(x))
        return F[0].copy() if F.ndim == 2 else float(F[0])

    def decision_many(self, X):
        """Decision values of the rows of X (dense or CSR), without learning: the expansion
        before the map, K(X, landmarks) Mᵀ W after."""
        rows, st, store = Rows.of(X), self._state, self.model.store
        if not st.nystrom:
            return super().decision_many(rows)
        if isinstance(store, SparseSupportBuffer):
            F = store.decision_many(self.kernel, rows.as_sparse().csr, coef=st.M.T @ st.W)
        else:
            X, landmarks = rows.dense(), store.X[: store.size]
            F = np.empty((rows.n, st.W.shape[1]))
            for a in range(0, rows.n, 2048):
                Z = np.asarray(self.kernel.matrix(X[a : a + 2048], landmarks)) @ st.M.T
                F[a : a + 2048] = Z @ st.W
        return F if self.task == "multiclass" else F[:, 0]

    def stats(self):
        st, out = self._state, self.model.stats()
        maps = st.M.nbytes + st.W.nbytes if self.model.store is not None else 0
        return {
            "n_support": out["n_support"],
            "kernel_evals": out["kernel_evals"],
            "nystrom_rank": st.W.shape[0] if st.nystrom else 0,
            "model_bytes": out["model_bytes"] + maps,
        }


@hookimpl
def kbench_register_algorithms(register):
    """Register FOGD and NOGD."""
    register(FOGD)
    register(NOGD)
