"""What an executor is: the protocol every executor plugin implements, and its settings.

An executor runs a study's tasks somewhere (child processes on this machine, a Dask
cluster, a thread pool, a batch queue...) and hands each task's result back to the
driver, which writes it. Executors are registered through the
:func:`~kbench.core.hookspecs.kbench_register_executors` hook, the built-in ``local`` and
``dask`` ones included, and selected by name (``kbench run --executor NAME``,
``kbench.run(executor=NAME)``).

The protocol lives in the core, below the layer that defines tasks and results, so that
the hook specification can name it; tasks and results are therefore typed here as
``Any``. They are :class:`kbench.execution.tasks.Task` and
:class:`kbench.execution.prequential.TaskResult`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol


@dataclass(frozen=True)
class ExecutorSettings:
    """What the user asked of the executor (``kbench run``'s options), for any executor.

    An executor uses the settings that apply to it and raises
    :class:`~kbench.core.errors.KbenchError` (one line) from
    :meth:`Executor.from_settings` for one it cannot honour.

    Parameters
    ----------
    workers
        Tasks run at once (None: the executor's default, usually the number of cores).
    timeout
        Seconds after which a task is stopped and recorded as ``timeout``.
    max_memory
        Bytes a task may allocate beyond what its process holds at the start.
    trace_memory
        Trace the learners' peak memory (``peak_memory`` in the results).
    scheduler
        Address of a scheduler to submit to (``--scheduler``), for executors that have one.
    say
        Where the executor's lines for the user go, as ``say(text, level)`` with ``level``
        ``"info"``, ``"warning"`` or ``"error"`` (None: nowhere).
    """

    workers: int | None = None
    timeout: float | None = None
    max_memory: int | None = None
    trace_memory: bool = True
    scheduler: str | None = None
    say: Callable[[str, str], None] | None = None


class Executor(Protocol):
    """Runs tasks and hands each result to the driver.

    A class implementing it has a class attribute ``name`` (how users select it) and a
    docstring (its first line is what ``kbench run --help`` and ``kbench plugins`` show),
    and is registered, the class itself, through ``kbench_register_executors``.

    The contract of :meth:`run`: call ``on_done`` once with the result of each task, from
    the thread that called :meth:`run`, as results arrive; a task whose learner fails is
    a result like any other (the task function records it), so ``run`` raises only when
    the executor itself fails. The driver records every task that got no result, because
    ``run`` raised or returned without it, as failed with the executor's message; running
    the study again runs those tasks again. A :class:`~kbench.core.errors.KbenchError`
    (one line for the user: a scheduler that cannot be reached, say) instead stops the
    study with its message, keeping what was written; ``KeyboardInterrupt`` must go
    through.
    """

    name: ClassVar[str]

    @classmethod
    def from_settings(cls, settings: ExecutorSettings) -> Executor:
        """An executor configured from the user's settings.

        Raises
        ------
        KbenchError
            A setting this executor cannot honour (e.g. a scheduler address given to an
            executor that has none), with a one-line message.
        """
        ...

    def describe(self) -> str:
        """One line saying where tasks run (e.g. ``2 local workers``)."""
        ...

    def run(
        self,
        tasks: Sequence[Any],
        on_done: Callable[[Any], None],
        on_start: Callable[[Any], None] | None = None,
        tick: Callable[[], None] | None = None,
    ) -> None:
        """Run every task, calling ``on_done(result)`` with each result as it arrives.

        Parameters
        ----------
        tasks
            The :class:`kbench.execution.tasks.Task` objects to run, in order.
        on_done
            Called with each :class:`kbench.execution.prequential.TaskResult`.
        on_start
            Called with a task when it is handed to a worker, if given.
        tick
            Called now and then while waiting (at least every second or so), if given:
            the progress display redraws in it.
        """
        ...
