"""LASVM (Bordes, Ertekin, Weston and Bottou, JMLR 2005): an online SMO solver of the soft-margin SVM.

Each example is PROCESSed (added to the active set with α = 0 and paired with its most
violating partner for one SMO step; not added when it could only be removed again) and
followed by one REPROCESS (an SMO step on the most violating pair of the active set, then
removal of the examples that can no longer become support vectors). The finishing step
repeats REPROCESS until the largest KKT violation δ is at most τ; it runs at the end of
each pass over the stream, which the runner signals by calling ``end_pass``.

The compiled core is ``cython_core/_lasvm.pyx``; kernels without a compiled form run the
same core with rows computed by ``kernel.row`` (the Python path).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.api import hookimpl, is_sparse, param
from kbench.cython_core import _lasvm
from kbench.learners import RevisitingLearner


class LASVM(RevisitingLearner):
    """LASVM: online soft-margin SVM with a bias by PROCESS/REPROCESS SMO steps.

    Binary only. The decision is ``f(x) = Σ αₛ k(xₛ, x) + b`` in the standard SVM scale
    (α signed, ``yₛαₛ ∈ [0, C]``), ``b = (g_max + g_min)/2`` from the gradients of the most
    violating pair. A pair (i, j) is τ-violating when αᵢ < Bᵢ, αⱼ > Aⱼ and gᵢ − gⱼ > τ.

    The finishing step (REPROCESS until δ ≤ τ) runs at the end of every pass of the
    runner (``epochs``): the runner calls :meth:`end_pass` after the last example of a
    pass, whatever the layout of the rows it passes (views of the stream's array, copies,
    one row at a time), so the held-out error recorded after a pass is that of the
    finished solution, and its time is in the learner's time. Rows that are views of one
    read-only array also trigger it when its last row has been learned (for callers that
    drive the learner without the runner); it never runs twice without learning in
    between. :meth:`finish` runs it on demand. An example already in the active set is
    known again on later passes (its row in the stream, see ``_example_ids``): PROCESS
    skips it, as in the paper.

    The active set stays bounded over passes: every REPROCESS removes the members with
    α = 0 that can no longer violate (``yₛ = −1, gₛ ≥ g_max`` or ``yₛ = +1, gₛ ≤ g_min``),
    whether or not it took a step, and PROCESS does not insert an example that would be
    removed at once (counted as ``discarded``), as LASVM 1.1 does. Otherwise, once δ ≤ τ
    (after a finishing step) no REPROCESS takes a step and every example of the next pass
    would stay in the active set.

    Before both classes have an example the learner predicts the class seen (+1 at
    first) and keeps at most ``n_init_per_class`` examples of that class in the active
    set; further ones wait and are processed when the other class appears.

    Parameters
    ----------
    C
        Soft-margin constant, > 0.
    tau
        Tolerance τ of the τ-violating pairs (LASVM's and LIBSVM's default 0.001).
    n_init_per_class
        Examples of a class kept in the active set while the other class has none, ≥ 1.
    finishing
        Run the finishing step at the end of each pass.
    max_finish_iter
        Cap on the REPROCESS steps of one finishing step, ≥ 1 (reported in
        ``finish_capped`` when reached).
    cache_mb
        Budget of the kernel-row cache over the active set, in MB; 0 caches nothing.
    """

    name = "lasvm"
    paper = "Bordes, Ertekin, Weston and Bottou (2005). Fast kernel classifiers with online and active learning. JMLR 6."
    tasks = frozenset({"binary"})
    test_params = {"cache_mb": 1.0}
    _module = _lasvm

    C: float = param(1.0, low=0.0, low_open=True)
    tau: float = param(1e-3, low=0.0, low_open=True)
    n_init_per_class: int = param(5, low=1)
    finishing: bool = param(True)
    max_finish_iter: int = param(10_000_000, low=1)
    cache_mb: float = param(256.0, low=0.0)

    def __post_init__(self) -> None:
        C, tau, n_init_per_class = self.C, self.tau, self.n_init_per_class
        self._setup(self.cache_mb)
        self._core = _lasvm.LasvmCore(*self._kernel_args, C, tau, n_init_per_class)
        self._finish_capped = 0
        # Whether the model is finished since it last learned (finishing again is a no-op).
        self._finished = False

    def _array_names(self) -> tuple[str, ...]:
        return ("_sq", "_alpha", "_g", "_lab", "_krow", "_scratch", "_ri")

    def _bind_arrays(self) -> None:
        self._core.bind(
            self._SV,
            self._sq,
            self._alpha,
            self._g,
            self._lab,
            self._sv_ids,
            self._krow,
            self._scratch,
            self._ri,
        )

    # -- learning -----------------------------------------------------------------------------

    def _step_python(self, i: int, j: int) -> None:
        Ki = self._row(i).copy()  # the second fetch may evict the first row
        self._core.step_rows(i, j, Ki, self._row(j))

    def _reprocess_python(self) -> None:
        i, j = self._core.pair(False)
        if i >= 0:
            self._step_python(i, j)
        self._core.cleanup()

    def _learn_python(self, x: np.ndarray, y: float, xid: int, *, first_pass: bool) -> None:
        core = self._core
        if core.slot_of(xid) < 0:
            if core.m == core.cap:
                self._grow()
            xsq = float(x @ x)
            _, kap = self._new_row(x, xsq)
            status = core.process_row(x, xsq, y, xid, kap)
            if self._held_back(status, x, y, xid):
                return
            if status == _lasvm.STATUS_DONE:
                i, j = core.pair(True)
                if i >= 0:
                    self._step_python(i, j)
        if first_pass:
            self._reprocess_python()

    def _after(self, last_id: int) -> None:
        self._finished = False
        if self.finishing and last_id >= 0 and last_id == self._ids.n - 1:
            self.finish()

    def end_pass(self) -> None:
        """The runner's end of a pass: the finishing step (when ``finishing``)."""
        super().end_pass()
        if self.finishing and not self._finished:
            self.finish()

    def finish(self) -> int:
        """The finishing step: REPROCESS until δ ≤ τ; returns the steps taken."""
        core = self._core
        self._finished = True
        if self._m == 0:
            return 0
        # A kernel with no compiled form takes each step through Python (rows it computes).
        step = None if self._compiled is not None else self._step_python
        with self._attached_store():  # on CSR rows the steps read the sparse store
            steps = core.finish(self.max_finish_iter, step)
        if steps >= self.max_finish_iter:
            self._finish_capped += 1
        return steps

    # -- prediction ---------------------------------------------------------------------------

    def decision_one(self, x):
        core = self._core
        if self._d < 0:
            return 0.0
        if is_sparse(x) or self._store is not None:
            return float(self.decision_function(x)[0])
        if self._compiled is not None:
            return float(core.decision(x, float(x @ x)))
        m = core.m
        row = np.asarray(self.kernel.row(self._SV[:m], x, sq=self._sq[:m], xsq=float(x @ x)))
        return float(core.decision_row(np.ascontiguousarray(row, dtype=np.float64)))

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """f(x) for each row of X."""
        X = self._features(X)
        c = self._core
        if self._m == 0:
            return np.zeros(X.shape[0])
        if c.n_pos == 0 or c.n_neg == 0:
            return np.full(X.shape[0], -1.0 if c.n_neg > 0 else 1.0)
        return self._gram_block(X, np.ascontiguousarray(self._alpha[: c.m, None]))[:, 0] + c.b

    # -- inspection ---------------------------------------------------------------------------

    def support(self) -> tuple[Any, np.ndarray, np.ndarray]:
        """``(X, y, α)`` of the active set (X a CSR matrix on CSR rows; α signed, zero for
        members that are not SVs)."""
        m = self._m
        if m == 0:
            return self._support_rows(), np.zeros(0), np.zeros(0)
        return self._support_rows(), self._lab[:m].copy(), self._alpha[:m].copy()

    def dual_objective(self) -> float:
        """W(α) = Σ αₛyₛ − ½ αᵀKα from the gradients: ½ Σ αₛ(yₛ + gₛ)."""
        m = self._m
        a = self._alpha[:m]
        return 0.5 * float(a @ (self._lab[:m] + self._g[:m])) if m else 0.0

    @property
    def bias(self) -> float:
        """b."""
        return self._core.b

    def stats(self):
        c = self._core
        m = self._m
        out = {
            "n_support": int(np.count_nonzero(self._alpha[:m])) if m else 0,
            "kernel_evals": self._kernel_evals(),
            "active_set": m,
            "smo_steps": c.smo_steps,
            "removed": c.removed,
            "discarded": c.discarded,
            "finish_steps": c.finish_iters,
            "finish_capped": self._finish_capped,
            "pending": len(self._pending),
            "gap": c.delta,
            "bias": c.b,
        }
        out.update(self._cache_stats())
        return out


@hookimpl
def kbench_register_algorithms(register):
    """Register LASVM."""
    register(LASVM)
