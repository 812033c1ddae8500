"""Budgeted stochastic gradient descent (BSGD) with removal, projection or merging."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from kbench import hookimpl
from kbench.core.components import param
from kbench.core.kernel_rows import KIND_RBF
from kbench.core.search_space import LogUniform
from kbench.plugins.algorithms._budget import PegasosFamily
from kbench.plugins.algorithms._sparse_rows import compiled_kernel

MAINTENANCE = {"removal": 1, "projection": 2, "merge": 3}


class BSGD(PegasosFamily):
    """Budgeted SGD for the kernel SVM (Wang, Crammer and Vucetic 2012), binary and multiclass.

    Kernel Pegasos with at most B support vectors. At step t (t = 1, 2, …) with
    ``η_t = 1/(λt)``: ``f ← (1 − 1/t) f``, then, if the hinge loss is positive
    (binary ``y f(x) < 1``; multiclass, Crammer–Singer, ``f_y(x) − f_r(x) < 1`` with r the
    best other class), add x with coefficient ``η_t y`` (multiclass ``+η_t`` on y and
    ``−η_t`` on r; the margin is that of f before the step). If that makes B + 1 support
    vectors, one budget-maintenance step follows:

    * ``removal``: delete the vector with the smallest ``‖α_j‖² k(x_j, x_j)``;
    * ``projection``: delete the vector p whose projection onto the span of the others
      loses least, and add that projection to the others:
      ``α_j ← α_j − α_p (K⁻¹)_{jp}/(K⁻¹)_{pp}``, with weight degradation
      ``‖α_p‖²/(K⁻¹)_{pp}``. The inverse Gram matrix K⁻¹ is maintained incrementally
      (block-inverse extension, rank-one downdate), so every p is scored in O(B) and the
      step costs O(B²); the paper restricts p to the smallest ‖α‖ to avoid O(B³) work,
      which the maintained inverse makes unnecessary. A new vector numerically in the
      span (``δ² ≤ 10⁻¹⁰ k(x, x)``) is projected at once instead of being added;
    * ``merge`` (RBF kernel only): m is the vector with the smallest ``‖α_m‖``; for each
      n of the same class (sign of α, or largest coefficient for multiclass) the merged
      point ``z = h x_m + (1−h) x_n`` maximises ``|α_m k_{mn}^{(1−h)²} + α_n k_{mn}^{h²}|``
      over h ∈ [0, 1] (golden-section search to a bracket of 10⁻⁴; for multiclass on the
      coefficients of that class), ``α_z = α_m k(x_m, z) + α_n k(x_n, z)`` and the weight
      degradation ``‖α_m φ(x_m) + α_n φ(x_n) − α_z φ(z)‖²`` picks n; x_m and x_n are
      replaced by z. With no partner of the same class, m is removed.

    The (1 − 1/t) shrinking is kept in one scale factor. With B larger than the stream
    BSGD is kernel Pegasos without the projection step.

    Parameters
    ----------
    budget
        B ≥ 1, the largest number of support vectors.
    lam
        The regulariser λ > 0 (step size 1/(λt)).
    maintenance
        ``removal``, ``projection`` or ``merge``.
    """

    name = "bsgd"
    paper = "Wang, Crammer and Vucetic (2012). Breaking the curse of kernelization: budgeted stochastic gradient descent for large-scale SVM training. JMLR 13."
    tasks = frozenset({"binary", "multiclass"})
    test_params = {"budget": 12, "lam": 0.01}
    #: Tuned: the regulariser (the budget is a memory choice, the maintenance a method).
    search_space = {"lam": LogUniform(1e-7, 1e-1)}

    budget: int = param(100, low=1)
    lam: float = param(1e-4, low=0.0, low_open=True)
    maintenance: Literal["removal", "projection", "merge"] = param("merge")

    def __post_init__(self) -> None:
        super().__post_init__()
        maintenance = self.maintenance
        if maintenance not in MAINTENANCE:
            raise ValueError(
                f"bsgd: maintenance must be one of {', '.join(MAINTENANCE)}, got {maintenance!r}"
            )
        if maintenance == "merge" and (self._compiled is None or self._compiled[0] != KIND_RBF):
            raise ValueError(
                f"bsgd: maintenance=merge needs a kernel whose merged point has a closed form; "
                f"kernels that support merging: rbf (got {self.kernel.spec()}). "
                "Use maintenance=removal or maintenance=projection with this kernel."
            )
        self._mode = MAINTENANCE[maintenance]
        self._init_state()

    #: CSR rows as they are, with every maintenance: the loop runs on the examples'
    #: one-value stand-in rows and keeps the real rows in a sparse store, into which a merge
    #: writes the merged point ``h x_m + (1−h) x_n`` as a CSR row (the union of the two
    #: rows' indices), O(nnz(x_m) + nnz(x_n)).
    sparse_input = True

    def _learn_predict_sparse(self, X: Any, y: np.ndarray) -> np.ndarray:
        if self._mode != MAINTENANCE["merge"]:
            return super()._learn_predict_sparse(X, y)
        return self._learn_merging(X, y)

    def _learn_merging(self, X: Any, y: np.ndarray) -> np.ndarray:
        """Predict then learn the CSR rows X with merging, one compiled call per block."""
        rows = self._sparse_rows(X)
        store = rows.store
        widest = int(np.diff(X.indptr).max(initial=0))

        def make_room() -> None:
            """Reserve, with each block, room for a merged row: at most the non-zeros of
            two rows, stored or to come. The loop stops before an example when the pool
            lacks that room, and is called again from there on a new block."""
            m = store.size
            stored = int((store.ends[:m] - store.starts[:m]).max(initial=0))
            store.spare = 2 * max(widest, stored)

        make_room()
        try:
            return rows.learn(
                compiled_kernel(self.kernel), X, y, self._buf, self._run_sparse, grow=make_room
            )
        finally:
            store.spare = 0

    def _learn_predict_marked(self, X: Any, y: np.ndarray) -> np.ndarray:
        if self._mode != MAINTENANCE["merge"]:
            return super()._learn_predict_marked(X, y)
        # A merged point is no example: Python's mirroring of the stand-in rows cannot
        # follow it, so each row goes through the compiled loop as a one-row block.
        parts = [self._learn_merging(X[i : i + 1], y[i : i + 1]) for i in range(X.shape[0])]
        return np.concatenate(parts) if parts else np.empty(0)


@hookimpl
def kbench_register_algorithms(register):
    """Register BSGD."""
    register(BSGD)
