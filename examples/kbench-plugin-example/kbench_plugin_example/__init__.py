"""kbench-plugin-example: an algorithm, a kernel, a loss and a data set for kbench.

kbench finds this module through the entry point declared in ``pyproject.toml`` and
calls the hooks below, one per component kind, each with a ``register`` callback.
"""

from __future__ import annotations

from collections.abc import Callable

from kbench import hookimpl
from kbench_plugin_example.algorithm import BudgetPerceptron
from kbench_plugin_example.dataset import Spirals
from kbench_plugin_example.kernel import CauchyKernel
from kbench_plugin_example.loss import ModifiedHuber
from kbench_plugin_example.random_budget import RandomBudgetPerceptron

__all__ = [
    "BudgetPerceptron",
    "CauchyKernel",
    "ModifiedHuber",
    "RandomBudgetPerceptron",
    "Spirals",
]


@hookimpl
def kbench_register_algorithms(register: Callable[[type], None]) -> None:
    """Register the budget perceptrons."""
    register(BudgetPerceptron)
    register(RandomBudgetPerceptron)


@hookimpl
def kbench_register_kernels(register: Callable[[type], None]) -> None:
    """Register the Cauchy kernel."""
    register(CauchyKernel)


@hookimpl
def kbench_register_losses(register: Callable[[type], None]) -> None:
    """Register the modified Huber loss."""
    register(ModifiedHuber)


@hookimpl
def kbench_register_datasets(register: Callable[[type], None]) -> None:
    """Register the two spirals."""
    register(Spirals)
