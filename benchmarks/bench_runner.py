"""What kbench's prequential runner itself costs, with learners that do no work.

``idle`` predicts +1 and learns nothing through ``predict_one`` and ``learn_one``;
``idle_block`` also has the block fast path. Timing kbench's ``run_task`` over the
``binary-d2`` stream with them measures the protocol (checkpoints, scoring, traces,
held-out evaluation), not any learner.
"""

from __future__ import annotations

import functools
import types

import numpy as np

from kbench import Algorithm, hookimpl
from kbench.core.registry import Registry
from kbench.execution.prequential import run_task
from kbench.execution.tasks import Task

from . import common


class Idle(Algorithm):
    """Learns nothing, predicts +1: what the protocol costs by itself."""

    name = "asv-idle"
    uses_kernel = False

    def __init__(self, *, kernel=None, loss=None, task="binary", n_classes=2, seed=0) -> None:
        super().__init__(kernel=kernel, loss=loss, task=task, n_classes=n_classes, seed=seed)

    def decision_one(self, x):
        return 1.0

    def learn_one(self, x, y):
        return None

    def stats(self):
        return {"n_support": 0, "kernel_evals": 0}


class IdleBlock(Idle):
    """The same, with a block fast path and a block prediction."""

    name = "asv-idle-block"

    def learn_predict_many(self, X, y):
        return np.ones(len(X))

    def predict_many(self, X):
        return np.ones(len(X))


@hookimpl
def _register(register):
    register(Idle)
    register(IdleBlock)


_plugin = types.ModuleType("kbench_asv_idle")
_plugin.kbench_register_algorithms = _register


@functools.cache
def _registry() -> Registry:
    return Registry(extra_plugins=[("kbench-asv-idle", _plugin)])


class Runner:
    """``run_task`` over the ``binary-d2`` stream with a learner that does no work."""

    params = (["asv-idle", "asv-idle-block"], [False, True])
    param_names = ["learner", "trace_memory"]

    def setup(self, learner: str, trace_memory: bool) -> None:
        self._stream = common.stream("binary-d2")
        self._task = Task(
            algorithm=learner,
            kernel=None,
            loss=None,
            stream=self._stream.spec,
            seed=common.ALGORITHM_SEED,
            checkpoints=32,
        )
        self._registry = _registry()

    def time_run_task(self, learner: str, trace_memory: bool) -> None:
        """One whole task: every example of the stream through the protocol."""
        result = run_task(self._task, self._stream, self._registry, trace_memory=trace_memory)
        if result.status != "ok":
            raise RuntimeError(f"kbench runner benchmark failed: {result.run['reason']}")


class BareLoop:
    """The reference: a bare Python loop making the runner's learner calls, no protocol."""

    def setup(self) -> None:
        self._stream = common.stream("binary-d2")
        self._algo = _registry().create("algorithm", "asv-idle")

    def time_bare_loop(self) -> None:
        """predict_one then learn_one on every example of ``binary-d2``."""
        algo, X, y = self._algo, self._stream.X, self._stream.y
        for i in range(len(X)):
            x = X[i]
            algo.predict_one(x)
            algo.learn_one(x, y[i])
