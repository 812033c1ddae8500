"""Online gradient descent on kernel feature maps: Fourier (FOGD) and Nyström (NOGD)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from kbench.api import Algorithm, check_range, hookimpl, param
from kbench.cython_core import _feature_maps, _kernels, _sparse
from kbench.learners import (
    KernelKind,
    KernelSpec,
    MarkedRows,
    OneRowMethods,
    Rows,
    SupportBuffer,
    csr_parts,
    labels,
    refuse_switch,
)
from kbench.learners.online_loss import L_PYTHON, TASK_CODES
from kbench.learners.rows import compiled_kernel

#: Eigenvalues of the landmark Gram matrix below this fraction of the largest are dropped.
NYSTROM_TOL = 1e-10
#: The kernel of a loop call whose kernel rows Python computed (the loop computes none).
ROWS_GIVEN = KernelSpec(KernelKind.K_NOT_COMPILED)


class _LinearOGD(Algorithm):
    """Shared parts: task handling, the loss and the linear weights W (p × outputs)."""

    tasks = frozenset({"binary", "multiclass", "regression"})
    uses_loss = True
    default_loss = "hinge"

    def __post_init__(self) -> None:
        self._outputs = self.n_classes if self.task == "multiclass" else 1
        self._task_kind = TASK_CODES[self.task]
        # The loss's codes in the compiled loops; L_PYTHON: the gradient comes from Python
        # (also for a scalar loss on a multiclass task, whose derivative the plugin gives).
        self._loss_id, self._loss_p1 = L_PYTHON, 0.0
        if self.task == "multiclass":
            if (code := self.loss.compiled_multiclass()) is not None:
                self._loss_id = int(code)
        elif (compiled := self.loss.compiled()) is not None:
            self._loss_id, self._loss_p1 = int(compiled[0]), float(compiled[1])
        self._compiled_loss = self._loss_id != L_PYTHON

    def _gradient(self, scores: np.ndarray, y: float) -> np.ndarray:
        """∂ loss/∂ scores from the Python loss (per-example path of a non-compiled loss)."""
        if self.task == "multiclass":
            return np.ascontiguousarray(self.loss.derivative(scores, y), dtype=np.float64)
        return np.array([float(self.loss.derivative(float(scores[0]), float(y)))])

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


class NOGD(OneRowMethods, _LinearOGD):
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
    #: CSR rows are learned with the same step, landmarks kept sparse.
    sparse_input = True
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
        self._spec = KernelSpec.of(self.kernel)
        self._buf: SupportBuffer | None = None
        self._sparse: MarkedRows | None = None  # the landmarks as CSR rows (sparse input)
        self._nystrom = False
        self._M = np.zeros((1, budget))
        self._W = np.zeros((1, self._outputs))
        self._eigenvalues = np.zeros(0)

    def _buffer(self, d: int) -> SupportBuffer:
        if self._buf is None:
            self._buf = SupportBuffer(d, self.budget, n_outputs=self._outputs)
            self._z = np.zeros(self.budget)
            self._scores = np.empty(self._outputs)
            self._g = np.zeros(self._outputs)
        return self._buf

    def _build_map(self) -> None:
        """Turn the B support vectors into Nyström landmarks and α into linear weights."""
        buf = self._buf
        if self._sparse is not None:  # the landmarks are CSR rows
            K = self._sparse.gram(self.kernel)
        else:
            K = np.asarray(self.kernel.matrix(buf.X, buf.X))
        K = 0.5 * (K + K.T)
        lam, V = np.linalg.eigh(K)
        order = np.argsort(lam)[::-1]
        lam, V = lam[order], V[:, order]
        top = max(float(lam[0]), 0.0)
        keep = int(np.sum(lam > NYSTROM_TOL * top)) if top > 0.0 else 0
        keep = max(keep, 1)
        if keep < self._k:
            warnings.warn(
                f"nogd: the {self.budget} Nyström landmarks are rank-deficient (rank {keep}: "
                "repeated or nearly dependent examples); eigenvalues below "
                f"{NYSTROM_TOL:g}·λ_max are dropped (a pseudo-inverse), so the feature map "
                f"has {keep} dimensions instead of {self._k}",
                RuntimeWarning,
                stacklevel=3,
            )
        keep = min(keep, self._k)
        lam = np.maximum(lam[:keep], np.finfo(float).tiny)
        V = V[:, :keep]
        self._M = np.ascontiguousarray(V.T / np.sqrt(lam)[:, None])
        self._W = np.ascontiguousarray((V.T * np.sqrt(lam)[:, None]) @ buf.alpha)
        self._z = np.zeros(keep)
        self._eigenvalues = lam
        self._nystrom = True

    def _row(self, x: np.ndarray) -> np.ndarray:
        return self._buffer(len(x)).row(self.kernel, x, xsq=_kernels.sqnorm(x))

    def _scores_from_row(self) -> np.ndarray:
        buf = self._buf
        if self._nystrom:
            _feature_maps.nystrom_features(self._M, buf.krow, self._z)
            _feature_maps.linear_scores(self._W, self._z, self._scores)
        else:
            _kernels.expansion(buf.krow, buf.alpha, buf.size, self._scores)
        return self._scores

    def _decision_dense(self, x):
        self._row(x)
        s = self._scores_from_row()
        return s.copy() if self.task == "multiclass" else float(s[0])

    def _learn_dense(self, x, y):
        self._row(x)
        if not self._compiled_loss:
            # The loop recomputes the scores itself; only the gradient comes from Python.
            self._g[:] = self._gradient(self._scores_from_row(), y)
        self._run(x[None, :], np.array([float(y)]), np.empty(1), True)
        self._buf.touch()

    def _block(self, kernel, X, y, pred, have_row, start, sparse=None):
        """One call of the compiled NOGD loop over rows X from ``start``, on this learner's
        buffer, map and loss: ``(next row, stored rows, kernel evaluations)``."""
        buf = self._buf
        return _feature_maps.nogd_block(
            kernel,
            buf.X,
            buf.sq,
            buf.alpha,
            buf.size,
            self._M,
            self._W,
            self._nystrom,
            self.eta,
            self._task_kind,
            self._loss_id,
            self._loss_p1,
            X,
            y,
            pred,
            buf.krow,
            self._z,
            self._scores,
            self._g,
            have_row,
            start,
            sparse,
        )

    def _run(self, X, y, pred, have_row, sparse=None):
        buf = self._buf
        start = 0
        while start < len(X):
            start, buf.size, evals = self._block(self._spec, X, y, pred, have_row, start, sparse)
            buf.kernel_evals += evals
            if not self._nystrom and buf.size == self.budget:
                if sparse is not None:  # the landmarks' CSR rows, for their Gram matrix
                    self._sparse.settle(sparse, buf)
                self._build_map()
                buf.touch()
            have_row = False

    def _learn_predict_sparse(self, X, y):
        """Predict then learn the CSR rows: with a compiled loss, the compiled loop on the
        examples' marks and CSR rows (:meth:`MarkedRows.learn`), else one row at a time
        (:meth:`_learn_predict_marked`)."""
        if not self._compiled_loss:
            return self._learn_predict_marked(X, y)
        rows, buf = self._open_rows(X), self._buffer(1)
        return rows.learn(
            compiled_kernel(self.kernel),
            X,
            y,
            buf,
            lambda marks, y, pred, block: self._run(marks, y, pred, False, block),
        )

    def _open_rows(self, X) -> MarkedRows:
        if self._sparse is None:
            if self._buf is not None:
                refuse_switch(self.name, True)
            self._sparse = MarkedRows(X.shape[1], self.budget, self._outputs)
        return self._sparse

    def _learn_predict_marked(self, X, y):
        """Predict then learn each CSR row: its kernel row over the sparse landmarks, then
        the compiled step on the example's mark (see :mod:`kbench.learners.marked_rows`)."""
        kern = compiled_kernel(self.kernel)
        rows, buf = self._open_rows(X), self._buffer(1)
        indptr, indices, data = csr_parts(X)
        pred, one, label = np.empty(X.shape[0]), np.empty(1), np.empty(1)
        for i in range(X.shape[0]):
            x = (indices[indptr[i] : indptr[i + 1]], data[indptr[i] : indptr[i + 1]])
            rows.row(kern, x, float(x[1] @ x[1]), buf)
            if not self._compiled_loss:
                self._g[:] = self._gradient(self._scores_from_row(), y[i])
            mark, label[0] = rows.next_mark(), y[i]
            _, buf.size, _ = self._block(ROWS_GIVEN, mark, label, one, True, 0)
            pred[i] = one[0]
            if not self._nystrom:
                rows.sync(buf, x, rows.count)
                if buf.size == self.budget:
                    self._build_map()
        buf.touch()
        return pred

    def learn_predict_many(self, X, y):
        """Predict then learn the rows of X: CSR rows (or any once CSR rows were learned)
        through :meth:`_learn_predict_sparse`, dense ones through the compiled loop, or
        one at a time when the loop cannot run on its own (a kernel or loss without a
        compiled form)."""
        if (csr := self._csr_block(X)) is not None:
            return self._learn_predict_sparse(csr, np.asarray(y, dtype=np.float64))
        if not (self._spec.compiled and self._compiled_loss):
            return super().learn_predict_many(X, y)
        self._buffer(X.shape[1])
        pred = np.empty(len(X))
        if len(X):
            self._run(X, np.ascontiguousarray(y, dtype=np.float64), pred, False)
            self._buf.touch()
        return pred

    def _decisions(self, X):
        buf = self._buf
        if buf is None or buf.size == 0:
            return self._first(np.zeros((X.shape[0], self._outputs)))
        if self._sparse is not None:
            # K(X, landmarks)·(MᵀW): the Nyström scores; before the map, the expansion
            alpha = self._M.T @ self._W if self._nystrom else buf.alpha
            return self._first(self._sparse.decision_many(self.kernel, X, alpha, 1.0))
        X = np.ascontiguousarray(X, dtype=np.float64)
        if not self._nystrom:
            return self._first(buf.decision_many(self.kernel, X))
        F = np.empty((len(X), self._outputs))
        for a in range(0, len(X), 2048):
            Z = np.asarray(self.kernel.matrix(X[a : a + 2048], buf.X)) @ self._M.T
            F[a : a + 2048] = Z @ self._W
        return self._first(F)

    def stats(self):
        buf = self._buf
        return {
            "n_support": buf.size if buf else 0,
            "kernel_evals": buf.kernel_evals if buf else 0,
            "nystrom_rank": len(self._eigenvalues) if self._nystrom else 0,
            "model_bytes": (
                buf.nbytes()
                + self._M.nbytes
                + self._W.nbytes
                + (self._sparse.nbytes() if self._sparse is not None else 0)
            )
            if buf
            else 0,
        }


@hookimpl
def kbench_register_algorithms(register):
    """Register FOGD and NOGD."""
    register(FOGD)
    register(NOGD)
