"""Budgeted stochastic gradient descent (BSGD) with removal, projection or merging."""

from __future__ import annotations

from typing import Literal

from kbench.api import LogUniform, hookimpl, param
from kbench.cython_core._bsgd import Maintenance
from kbench.learners import KernelKind
from kbench.plugins.algorithms._pegasos_family import PegasosFamily

MAINTENANCE = {
    "removal": Maintenance.M_REMOVAL,
    "projection": Maintenance.M_PROJECTION,
    "merge": Maintenance.M_MERGE,
}


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
        if maintenance == "merge" and self.model.spec.kind != KernelKind.K_RBF:
            raise ValueError(
                f"bsgd: maintenance=merge needs a kernel whose merged point has a closed form; "
                f"kernels that support merging: rbf (got {self.kernel.spec()}). "
                "Use maintenance=removal or maintenance=projection with this kernel."
            )
        # CSR rows as they are, with every maintenance: a merge writes the merged point
        # h x_m + (1−h) x_n into the store as a CSR row (the union of the two rows'
        # indices), O(nnz(x_m) + nnz(x_n)).
        self._setup_family(MAINTENANCE[maintenance], self.budget)


@hookimpl
def kbench_register_algorithms(register):
    """Register BSGD."""
    register(BSGD)
