"""Speed of kbench's core, measured as the figures its documentation quotes.

1. Runner overhead: a do-nothing learner driven by the prequential runner, against a bare
   Python loop making the same learner calls over the same stream (µs per example).
2. Kernel rows: the compiled row against NumPy's ``S @ x`` (BLAS dgemv) on the same
   M × d matrix, the memory-bandwidth floor of a kernel row.

Run: ``.venv/bin/python scripts/bench_core.py``. Prints a table; nothing is written.
"""

from __future__ import annotations

import platform
import sys
import time
import timeit

import numpy as np
from _bench_common import idle_learners
from threadpoolctl import threadpool_limits

from kbench import hookimpl
from kbench.core.registry import Registry
from kbench.cython_core import _kernels
from kbench.data.streams import StreamSpec, build_stream
from kbench.execution.prequential import run_task
from kbench.execution.tasks import Task

# Learners that do no work (the asv suite's): what the protocol itself costs.
Idle, IdleBlock = idle_learners()


@hookimpl
def kbench_register_algorithms(register):
    register(Idle)
    register(IdleBlock)


# This module is the plugin (registry plugins must be hashable objects such as modules).
plugin = sys.modules[__name__]


def runner_overhead(reg: Registry) -> list[tuple[str, float]]:
    import dataclasses

    # No test split: held-out evaluation is not protocol overhead.
    stream = dataclasses.replace(build_stream(StreamSpec("a9a"), reg), X_test=None, y_test=None)
    X, y, n = stream.X, stream.y, stream.n
    rows = []
    algo = Idle()
    t0 = time.perf_counter()
    for i in range(n):
        x = X[i]
        algo.predict_one(x)
        algo.learn_one(x, y[i])
    bare = (time.perf_counter() - t0) / n * 1e6
    rows.append(("bare Python loop, predict_one + learn_one", bare))
    for name in (Idle.name, IdleBlock.name):
        for memory in (False, True):
            best = np.inf
            for _ in range(3):
                task = Task(
                    algorithm=name, kernel=None, loss=None, stream=stream.spec, checkpoints=32
                )
                t0 = time.perf_counter()
                res = run_task(task, stream, reg, trace_memory=memory)
                best = min(best, time.perf_counter() - t0)
                assert res.status == "ok", res.run["reason"]
            how = "with" if memory else "without"
            rows.append((f"runner, {name}, whole task, {how} memory tracing", best / n * 1e6))
    return rows


def kernel_rows(reg: Registry, M: int = 4096, d: int = 784) -> list[tuple[str, float, float]]:
    from kbench.learners.support_buffer import SupportBuffer

    rng = np.random.default_rng(0)
    buf = SupportBuffer(d, M)
    for s in rng.standard_normal((M, d)):
        buf.add(s, 1.0)
    S, x = buf.X, rng.standard_normal(d)
    xsq = float(x @ x)
    row = np.empty(M)
    out = []
    with threadpool_limits(1):
        blas = min(timeit.repeat(lambda: S @ x, number=50, repeat=7)) / 50
        out.append(("numpy S @ x (BLAS dgemv)", blas * 1e3, 1.0))
        for spec in ("linear", "rbf[gamma=0.01]", "poly[degree=3]", "laplacian[gamma=0.01]"):
            k = reg.create("kernel", spec)
            c = k.compiled()
            t = (
                min(
                    timeit.repeat(
                        lambda c=c: _kernels.kernel_row(c, S, buf.sq, x, xsq, row, M),
                        number=50,
                        repeat=7,
                    )
                )
                / 50
            )
            out.append((f"compiled row, {spec}", t * 1e3, t / blas))
            t = (
                min(
                    timeit.repeat(
                        lambda k=k: k.row(S, x, out=row, sq=buf.sq, xsq=xsq), number=50, repeat=7
                    )
                )
                / 50
            )
            out.append((f"Kernel.row API, {spec}", t * 1e3, t / blas))
    gbps = S.nbytes / blas / 1e9
    out.append(
        (
            f"(S is {S.nbytes / 1e6:.1f} MB: BLAS reads it at {gbps:.1f} GB/s)",
            float("nan"),
            float("nan"),
        )
    )
    return out


def main() -> None:
    reg = Registry(extra_plugins=[("bench", plugin)])
    print(
        f"machine: {platform.processor() or platform.machine()}, {platform.python_version()}, numpy {np.__version__}"
    )
    print("\nRunner overhead on a9a (32 561 examples), µs per example:")
    for label, us in runner_overhead(reg):
        print(f"  {label:<70} {us:8.3f}")
    print("\nKernel row, M = 4096, d = 784, one thread (ms per row; ratio to BLAS S @ x):")
    for label, ms, ratio in kernel_rows(reg):
        print(f"  {label:<45} {ms:8.3f} ms  {ratio:6.2f}×" if ms == ms else f"  {label}")


if __name__ == "__main__":
    main()
