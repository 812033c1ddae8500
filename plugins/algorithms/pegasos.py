"""Kernel Pegasos: primal estimated sub-gradient SVM solver in its kernel form."""

from __future__ import annotations

from kbench.api import hookimpl, param
from kbench.cython_core._bsgd import Maintenance
from kbench.plugins.algorithms._pegasos_family import PegasosFamily


class KernelPegasos(PegasosFamily):
    """Kernel Pegasos (Shalev-Shwartz, Singer, Srebro and Cotter 2011), binary and multiclass.

    Stochastic sub-gradient descent on ``λ/2 ‖f‖² + hinge loss``, one pass over the stream
    in order. At step t (t = 1, 2, …) with ``η_t = 1/(λt)``:
    ``f ← (1 − 1/t) f + η_t y k(x, ·)`` if ``y f(x) < 1`` (margin of f before the step),
    else ``f ← (1 − 1/t) f``; then, if ``project``, ``f ← min(1, 1/(√λ ‖f‖)) f`` (the
    optional projection onto the ball that contains the optimum). Unrolled, f is
    ``(1/(λt)) Σ y_j k(x_j, ·)`` over the margin violations, times the projection factors.
    Multiclass uses the Crammer–Singer hinge: on ``f_y(x) − f_r(x) < 1`` (r the best
    other class) add ``+η_t`` on y and ``−η_t`` on r. ``‖f‖²`` is kept up to date in O(1)
    per step from the kernel row (``‖f'‖² = (1−1/t)²‖f‖² + 2(1−1/t) η_t y f(x) + η_t² ‖u‖²
    k(x, x)``). There is no budget: every violation adds a support vector (``bsgd`` is the
    budgeted variant).

    Parameters
    ----------
    lam
        The regulariser λ > 0.
    project
        Apply the projection step.
    """

    name = "pegasos"
    paper = "Shalev-Shwartz, Singer, Srebro and Cotter (2011). Pegasos: primal estimated sub-gradient solver for SVM. Mathematical Programming 127."
    test_params = {"lam": 0.01}

    lam: float = param(1e-4, low=0.0, low_open=True)
    project: bool = param(True)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._setup_family(Maintenance.M_NONE, project=self.project)


@hookimpl
def kbench_register_algorithms(register):
    """Register kernel Pegasos."""
    register(KernelPegasos)
