"""Per-example time and error of the kernel adaptive filters on Mackey–Glass, beside NORMA.

Each learner predicts then learns the training stream of ``mackey_glass[tau=30]`` (a
sample every 6 time units, 7 past values per example) with ``rbf[gamma=1.0]`` through
``learn_predict_many`` (dense rows, one BLAS thread), then predicts the 500 test windows.
The table gives µs per example (best of ``--repeat`` fresh learners, CPU time), the
dictionary size at the end, the online MSE over the second half of the stream and the test
MSE, in dB (10 log10 MSE) as the kernel adaptive-filtering papers give them. For KRLS
(O(m²) per example) it also times NumPy doing, per example, the same-size work of the
recursion alone (two m × m matrix-vector products and one rank-one update), the bar the
issue sets for the KRLS family; the same for sliding-window KRLS and KRLS-T at their
window's or budget's size.

    .venv/bin/python scripts/bench_kaf.py [--n 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import time
from functools import partial

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from _bench_common import fastest_learner

from kbench.api import get_registry

LEARNERS = [
    "krls[tolerance=0.001]",
    "swkrls[window=100,c=0.01]",
    "swkrls[window=500,c=0.01]",
    "krlst[forgetting=0.999,budget=100]",
    "krlst[forgetting=0.999,budget=500]",
    "klms[eta=0.2]",
    "qklms[eta=0.2,epsilon=0.3]",
    "knlms[eta=0.1,mu0=0.7]",
    "norma[eta=0.2,budget=500]",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    reg = get_registry()
    data = reg.create("dataset", f"mackey_glass[n_train={args.n},n_test=500]").load(0)
    kernel = reg.create("kernel", "rbf[gamma=1.0]")
    print(f"mackey_glass tau=30, {args.n} examples, rbf gamma 1, best of {args.repeat}")
    print(f"{'learner':32} {'µs/example':>10} {'centres':>8} {'online dB':>10} {'test dB':>8}")
    for spec in LEARNERS:
        extra = {"loss": reg.create("loss", "squared")} if spec.startswith("norma") else {}
        make = partial(reg.create, "algorithm", spec, kernel=kernel, task="regression", **extra)
        best, model, pred = fastest_learner(make, data.X, data.y, args.repeat)
        half = args.n // 2
        online = 10 * np.log10(np.mean((pred[half:] - data.y[half:]) ** 2))
        test = 10 * np.log10(np.mean((model.predict_many(data.X_test) - data.y_test) ** 2))
        us = 1e6 * best / args.n
        print(f"{spec:32} {us:10.2f} {model.stats()['n_support']:8d} {online:10.1f} {test:8.1f}")
        if spec.startswith(("krls", "swkrls")):  # krlst too
            m = model.stats()["n_support"]
            print(f"{'  NumPy rank-one, m = ' + str(m):32} {numpy_rank_one(m, args.n):10.2f}")


def numpy_rank_one(m: int, n: int) -> float:
    """µs per example of a = K @ k, Pa = P @ a, P -= outer(q, Pa) in NumPy at size m."""
    rng = np.random.default_rng(0)
    K, P, k = rng.random((m, m)), rng.random((m, m)), rng.random(m)
    t0 = time.process_time()
    for _ in range(n):
        a = K @ k
        Pa = P @ a
        P -= np.outer(Pa / (1.0 + a @ Pa), Pa)
    return 1e6 * (time.process_time() - t0) / n


if __name__ == "__main__":
    main()
