"""The Stoptron and the remove-oldest budget perceptron (binary): the kernel perceptron with
at most B support vectors, which stops learning, or forgets its oldest, once B are stored."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from kbench.api import IntLogUniform, hookimpl, param
from kbench.cython_core._stoptron import budget_perceptron_block
from kbench.learners import ExpansionLearner


class Stoptron(ExpansionLearner):
    """Stoptron (Orabona, Keshet and Caputo 2009): the kernel perceptron until its budget.

    Predict ``sign f(x)``, ``f = Σ αᵢ k(xᵢ, x)``; on a mistake, ``y f(x) ≤ 0``, store x with
    ``α = y`` while fewer than B are stored; once B are stored the learner stops learning
    (the paper's baseline; Cognitive Foundry's ``Stoptron``).

    Parameters
    ----------
    budget
        B ≥ 1, the largest number of support vectors.
    """

    name = "stoptron"
    paper = "Orabona, Keshet and Caputo (2009). Bounded kernel-based online learning. JMLR 10."
    tasks = frozenset({"binary"})
    test_params = {"budget": 12}
    search_space = {"budget": IntLogUniform(10, 1000)}
    #: Replace the oldest support vector on a mistake once B are stored.
    oldest: ClassVar[bool] = False

    budget: int = param(100, low=1)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._state = np.zeros(1)  # the slot of the oldest support vector once B are stored
        # A full store replaces rows in place; the toolkit marks it changed after each call.
        self.learn_with(
            budget_perceptron_block,
            signs=True,
            state=self._state,
            budget=int(self.budget),
            oldest=self.oldest,
        )


class RemoveOldestPerceptron(Stoptron):
    """Remove-oldest budget perceptron: the kernel perceptron with at most B support vectors,
    each mistake beyond B overwriting the oldest.

    Predict ``sign f(x)``; on a mistake, ``y f(x) ≤ 0``, store x with ``α = y``; when B are
    stored the oldest is discarded first: the Forgetron's removal without its shrinking
    (Dekel, Shalev-Shwartz and Singer 2008), Cognitive Foundry's
    ``RemoveOldestKernelPerceptron``. Its one parameter is the Stoptron's budget B.
    """

    name = "remove_oldest_perceptron"
    paper = "Dekel, Shalev-Shwartz and Singer (2008). The Forgetron: a kernel-based perceptron on a budget. SIAM Journal on Computing 37(5)."
    oldest = True


@hookimpl
def kbench_register_algorithms(register):
    """Register the Stoptron and the remove-oldest perceptron."""
    register(Stoptron)
    register(RemoveOldestPerceptron)
