"""The kernel perceptron, binary and multiclass, without a budget."""

from __future__ import annotations

from kbench.api import hookimpl
from kbench.cython_core._perceptron import perceptron_block
from kbench.learners import ExpansionLearner


class KernelPerceptron(ExpansionLearner):
    """Kernel perceptron (Rosenblatt 1958, in the kernel form of Freund and Schapire 1999).

    Binary: predict ``sign f(x)``, ``f = Σ αᵢ k(xᵢ, x)``; when ``y f(x) ≤ 0`` store x with
    ``α = y``. Multiclass (Crammer and Singer's multiclass perceptron with one score per
    class): predict the argmax; on a mistake store x with +1 for the true class and −1
    for the predicted one. Every mistake adds a support vector; there is no budget.
    """

    name = "perceptron"
    paper = "Freund and Schapire (1999). Large margin classification using the perceptron algorithm. Machine Learning 37."
    tasks = frozenset({"binary", "multiclass"})

    def __post_init__(self) -> None:
        super().__post_init__()
        self.learn_with(perceptron_block)


@hookimpl
def kbench_register_algorithms(register):
    """Register the kernel perceptron."""
    register(KernelPerceptron)
