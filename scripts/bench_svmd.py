"""Per-example time of NORMA and SVMD in kbench's compiled loops, and their ratio.

The SVMD paper measured SVMD 3–4× slower per step than NORMA, because its implementation
evaluates three kernel expansions per step. kbench's SVMD computes ONE kernel row per
example and reads f and the trace v from it with one matrix–vector product, so the spec
(specs/000_svmd.md, claim R8) expects a ratio of at most 1.6.

For each stream and buffer size ω the learners first run until their buffer is full
(with the hinge loss only margin violators are stored, so this takes more than ω
examples), then the next examples are timed through ``learn_predict_many``, the
runner's fast path, best of five repeats on fresh copies, the learners interleaved,
in thread CPU time (so that other processes on a busy machine count less).
BLAS runs on one thread. The floor is NumPy's ``S @ x`` over an ω × d matrix (reading
ω·d numbers), per example.

Run: ``.venv/bin/python scripts/bench_svmd.py [--quick]``. Prints a table; nothing is written.
"""

from __future__ import annotations

import argparse
import copy
import platform
import time

import numpy as np
from _bench_common import matvec_floor_us
from threadpoolctl import threadpool_limits

from kbench.core.registry import get_registry
from kbench.data.streams import StreamSpec, build_stream

LEARNERS = {
    "norma": "norma[eta=0.1,c=0.0001,budget={omega}]",
    "svmd": "svmd[eta=0.1,mu=0.1,lam=0.99,c=0.0001,budget={omega}]",
    "svmd-exact": "svmd[eta=0.1,mu=0.1,lam=0.99,c=0.0001,budget={omega},incremental=exact]",
}
STREAMS = {  # label: (stream, kernel, loss, classes)
    "a9a (d=123)": (StreamSpec("a9a"), "rbf[gamma=0.05]", "hinge", 2),
    "fashion_mnist (d=784)": (
        StreamSpec("fashion_mnist", positive="5-9", scale="minmax"),
        "rbf[gamma=0.01]",
        "hinge",
        2,
    ),
    "fashion_mnist 10-class": (
        StreamSpec("fashion_mnist", scale="minmax", n=20000),
        "rbf[gamma=0.01]",
        "multiclass_hinge",
        10,
    ),
}


def warm(algo, X, y, omega: int, block: int = 500) -> int:
    """Learn until the buffer holds ω terms; return the index of the next example."""
    i = 0
    while algo.stats()["n_support"] < omega and i < len(X):
        algo.learn_predict_many(X[i : i + block], y[i : i + block])
        i += block
    return i


def time_per_example(
    algos: dict, X, y, starts: dict, n: int, repeats: int = 5
) -> tuple[dict[str, float], dict[str, float]]:
    """Best-of-repeats µs per example of each learner over n examples from its start, the
    learners interleaved in every repeat so that a busy machine slows them alike; and
    each one's buffer size at the end."""
    best = dict.fromkeys(algos, np.inf)
    sizes = {}
    for _ in range(repeats):
        for name, algo in algos.items():
            Xb, yb = X[starts[name] : starts[name] + n], y[starts[name] : starts[name] + n]
            a = copy.deepcopy(algo)
            t0 = time.thread_time()
            a.learn_predict_many(Xb, yb)
            best[name] = min(best[name], 1e6 * (time.thread_time() - t0) / len(Xb))
            sizes[name] = float(a.stats()["n_support"])
    return best, sizes


def floor_us(omega: int, d: int, reps: int = 200) -> float:
    """µs of one dense ω × d matrix–vector product (the memory floor of a kernel row),
    best of five batches."""
    return matvec_floor_us(omega, d, reps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="ω = 100 and 512 only, fewer examples")
    args = parser.parse_args()
    omegas = (100, 512) if args.quick else (100, 512, 4096)
    reg = get_registry()
    print(
        f"kbench SVMD/NORMA speed on {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, BLAS on 1 thread"
    )
    print(
        f"{'stream':24} {'ω':>5} {'norma µs':>9} {'svmd µs':>9} {'ratio':>6} "
        f"{'exact µs':>9} {'ratio':>6} {'floor µs':>9} {'m':>6}"
    )
    with threadpool_limits(1):
        for label, (spec, kspec, lspec, classes) in STREAMS.items():
            stream = build_stream(spec, reg)
            X, y = stream.X, stream.y
            kernel, loss = reg.create("kernel", kspec), reg.create("loss", lspec)
            task = "multiclass" if classes > 2 else "binary"
            for omega in omegas:
                n = 1000 if args.quick or omega >= 4096 else 3000
                algos, starts = {}, {}
                for name, tmpl in LEARNERS.items():
                    algos[name] = reg.create(
                        "algorithm",
                        tmpl.format(omega=omega),
                        kernel=kernel,
                        loss=loss,
                        task=task,
                        n_classes=classes,
                    )
                    starts[name] = min(warm(algos[name], X, y, omega), max(0, len(X) - n))
                times, sizes = time_per_example(algos, X, y, starts, n)
                ratio = times["svmd"] / times["norma"]
                ratio_x = times["svmd-exact"] / times["norma"]
                print(
                    f"{label:24} {omega:5d} {times['norma']:9.1f} {times['svmd']:9.1f} "
                    f"{ratio:6.2f} {times['svmd-exact']:9.1f} {ratio_x:6.2f} "
                    f"{floor_us(omega, X.shape[1]):9.1f} {min(sizes.values()):6.0f}"
                )


if __name__ == "__main__":
    main()
