"""Per-example time and mistake rate of DUOL, ALMA₂, OISVM, the Stoptron, the remove-oldest
budget perceptron, the kernel second-order perceptron and the label-efficient perceptron
(selective sampling over the perceptron) on a9a, beside the closest kbench learners (the
kernel perceptron, PA-I, LASVM and the random budget perceptron).

Each learner predicts then learns the first ``--n`` examples of a9a (Adult) in one seeded
order with ``rbf[gamma=0.05]`` through ``learn_predict_many`` (dense rows, one BLAS
thread). The table gives µs per example (best of ``--repeat`` fresh learners, CPU time),
the support vectors at the end and the online mistake rate.

    .venv/bin/python scripts/bench_online_classifiers.py [--n 3000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
from functools import partial

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from _bench_common import fastest_learner

from kbench.api import get_registry

LEARNERS = [
    "duol[C=1.0]",
    "duol[C=10.0]",
    "alma2",
    "oisvm[C=1.0,eta=0.3]",
    "oisvm[C=1.0,eta=0.1]",
    "lasvm",
    "stoptron[budget=200]",
    "remove_oldest_perceptron[budget=200]",
    "rbp[budget=200]",
    "pa[C=1.0]",
    "second_order_perceptron",
    "active_selective[base=perceptron]",
    "perceptron",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    reg = get_registry()
    data = reg.create("dataset", "a9a").load(0)
    order = np.random.default_rng(0).permutation(len(data.y))[: args.n]
    X, y = np.ascontiguousarray(data.X[order]), data.y[order]
    kernel = reg.create("kernel", "rbf[gamma=0.05]")
    print(f"a9a, first {args.n} examples of seed 0's order, rbf gamma 0.05, best of {args.repeat}")
    print(f"{'learner':38} {'µs/example':>10} {'SVs':>6} {'mistakes':>9}")
    for spec in LEARNERS:
        make = partial(reg.create, "algorithm", spec, kernel=kernel, task="binary")
        best, model, pred = fastest_learner(make, X, y, args.repeat)
        rate = float(np.mean(pred != y))
        us = 1e6 * best / args.n
        print(f"{spec:38} {us:10.2f} {model.stats()['n_support']:6d} {rate:9.4f}")


if __name__ == "__main__":
    main()
