"""Kernel rows shared among the binary learners of a one-vs-rest reduction: the saving.

For each base learner and data set, ``ovr[base=...]`` runs one pass prequentially
(``learn_predict_many``, predict then learn each example) with ``share=True`` and with
``share=False``, and the table gives the kernel values computed (``kernel_evals``), the
values the binary learners asked for (``kernel_evals_requested``), their ratio, the
learner time of the pass (best of ``--repeat``, one BLAS thread) and the online accuracy.
The two settings make the same predictions (checked here, and in tests/test_reductions.py
to within rounding). For scale, the same process times one ``numpy`` matrix product of a
fixed size, so figures taken on machines under different load can be compared as ratios.

    .venv/bin/python scripts/bench_reductions.py [--repeat 3] [--n 3000] [--fashion]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from kbench.core.registry import get_registry
from kbench.data.streams import StreamSpec, build_stream

BASES = ["forgetron[budget=100]", "perceptron", "rbp[budget=100]", "pa"]
STREAMS = [("digits", StreamSpec("digits"), "rbf[gamma=0.02]")]
FASHION = ("fashion_mnist", StreamSpec("fashion_mnist", n=3000), "rbf[gamma=0.02]")


def blas_unit() -> float:
    """Seconds of one 256×256 float64 matrix product here (best of 20): the load gauge."""
    a = np.random.default_rng(0).standard_normal((256, 256))
    best = np.inf
    for _ in range(20):
        t = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t)
    return best


def run_once(registry, base: str, kernel: str, X, y, n_classes: int, share: bool):
    algo = registry.create(
        "algorithm",
        f"ovr[base={base},share={share}]",
        kernel=registry.create("kernel", kernel),
        task="multiclass",
        n_classes=n_classes,
        seed=0,
    )
    t = time.perf_counter()
    pred = algo.learn_predict_many(X, y)
    return time.perf_counter() - t, pred, algo.stats()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n", type=int, default=None, help="Use at most this many examples.")
    parser.add_argument("--fashion", action="store_true", help="Add fashion_mnist[n=3000].")
    parser.add_argument("--bases", nargs="*", default=BASES)
    args = parser.parse_args()
    registry = get_registry()
    streams = STREAMS + ([FASHION] if args.fashion else [])
    unit = blas_unit()
    print(f"256x256 matmul: {unit * 1e3:.3f} ms (load gauge)")
    header = (
        f"{'data':14} {'base':24} {'share':5} {'computed':>10} {'requested':>10} "
        f"{'comp/req':>8} {'time s':>8} {'/matmul':>8} {'accuracy':>8}"
    )
    print(header)
    print("-" * len(header))
    for label, spec, kernel in streams:
        s = build_stream(spec, registry)
        X, y = np.ascontiguousarray(s.X), np.ascontiguousarray(s.y)
        if args.n:
            X, y = X[: args.n], y[: args.n]
        for base in args.bases:
            preds = {}
            for share in (True, False):
                best, pred, st = np.inf, None, {}
                for _ in range(args.repeat):
                    dt, pred, st = run_once(registry, base, kernel, X, y, s.n_classes, share)
                    best = min(best, dt)
                preds[share] = pred
                comp, req = st["kernel_evals"], st["kernel_evals_requested"]
                print(
                    f"{label:14} {base:24} {'on' if share else 'off':5} {comp:>10} {req:>10} "
                    f"{comp / max(req, 1):>8.3f} {best:>8.3f} {best / unit:>8.0f} "
                    f"{np.mean(pred == y):>8.4f}"
                )
            same = np.array_equal(preds[True], preds[False])
            print(f"{'':14} {base:24} same predictions with and without sharing: {same}")


if __name__ == "__main__":
    main()
