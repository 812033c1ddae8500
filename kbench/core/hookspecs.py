"""The hooks a kbench plugin can implement.

Each hook receives a ``register`` callback; a plugin calls it once per component
class it provides. The registry validates every registration and names the
plugin in its error. Built-in components are registered through these same
hooks, by the modules under ``kbench.plugins``.

A third-party distribution declares its plugin module in ``pyproject.toml``::

    [project.entry-points.kbench]
    my_plugin = "my_package.kbench_plugin"
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from kbench.core.components import Algorithm, Dataset, Kernel, Loss
    from kbench.core.executors import Executor

hookspec = pluggy.HookspecMarker("kbench")


@hookspec
def kbench_register_algorithms(register: Callable[[type[Algorithm]], None]) -> None:
    """Register online learning algorithms.

    Parameters
    ----------
    register
        Call ``register(cls)`` with each :class:`kbench.Algorithm` subclass.
    """


@hookspec
def kbench_register_kernels(register: Callable[[type[Kernel]], None]) -> None:
    """Register kernels.

    Parameters
    ----------
    register
        Call ``register(cls)`` with each :class:`kbench.Kernel` subclass.
    """


@hookspec
def kbench_register_losses(register: Callable[[type[Loss]], None]) -> None:
    """Register losses.

    Parameters
    ----------
    register
        Call ``register(cls)`` with each :class:`kbench.Loss` subclass.
    """


@hookspec
def kbench_register_datasets(register: Callable[[type[Dataset]], None]) -> None:
    """Register data sets.

    Parameters
    ----------
    register
        Call ``register(cls)`` with each :class:`kbench.Dataset` subclass.
    """


@hookspec
def kbench_register_executors(register: Callable[[type[Executor]], None]) -> None:
    """Register executors: where a study's tasks run.

    Parameters
    ----------
    register
        Call ``register(cls)`` with each class implementing
        :class:`kbench.core.executors.Executor` (a class attribute ``name``, a docstring,
        ``from_settings``, ``describe`` and ``run``).
    """
