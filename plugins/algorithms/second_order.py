"""The kernel second-order perceptron (Cesa-Bianchi, Conconi and Gentile 2005), binary."""

from __future__ import annotations

from kbench.api import LogUniform, hookimpl, param
from kbench.cython_core._sop import SopState, sop_block
from kbench.learners import ExpansionLearner


class SecondOrderPerceptron(ExpansionLearner):
    """Kernel second-order perceptron (Cesa-Bianchi, Conconi and Gentile 2005).

    Predicts ``sign f(x)``, ``f(x) = (y_S, 0)ᵀ (aI + G)⁻¹ k``, with S the examples kept on
    mistakes, G the Gram matrix of S and x, and k the kernel column of x: the perceptron
    whose update is whitened by the stored examples' correlation. A mistake stores x.
    ``decision`` values are f·s/a for the positive s = a + k(x, x) − k_Sᵀ(aI + G_S)⁻¹k_S
    (the same sign as f), which the compiled loop keeps to O(m) per correct prediction.

    Parameters
    ----------
    a
        The regularization a > 0 of the correlation matrix (small: close to the inverse
        correlation; large: close to the first-order perceptron).
    """

    name = "second_order_perceptron"
    paper = "Cesa-Bianchi, Conconi and Gentile (2005). A second-order perceptron algorithm. SIAM Journal on Computing 34(3)."
    tasks = frozenset({"binary"})
    reads_self_kernel = True
    search_space = {"a": LogUniform(0.01, 100.0)}
    a: float = param(1.0, low=0.0, low_open=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._state = SopState()
        self.learn_with(sop_block, signs=True, state=self._state, a=float(self.a))


@hookimpl
def kbench_register_algorithms(register):
    """Register the second-order perceptron."""
    register(SecondOrderPerceptron)
