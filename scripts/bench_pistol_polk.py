"""Per-example time of PiSTOL, kernel SGD and POLK in kbench's compiled loops (a9a, RBF).

1. PiSTOL against NORMA (and averaged SGD) at the same number of support vectors m: each
   learner is brought to m stored vectors (logistic loss, so every example is stored),
   then the next examples are timed. PiSTOL and ASGD grow from m to m + n meanwhile;
   NORMA's circular buffer stays at m. All compute one kernel row per example; PiSTOL
   and ASGD read two coefficient columns instead of one (f and its running average).
   The floor is NumPy's ``S @ x`` over an m × d matrix (reading m·d numbers).
2. POLK's time per example against its model order M: per-sample steps (B = 1), logistic
   loss, the parsimony constant K swept to give M from tens to about two thousand; after
   a warm-up the next examples are timed, and ``t ≈ c0 + c1·M·d + c2·M²`` is fitted
   (specs/004 §1.8 predicts O(M·d + M²)).

Timings are thread CPU time, best of three repeats on fresh copies, learners interleaved,
BLAS on one thread. Run: ``.venv/bin/python scripts/bench_pistol_polk.py [--quick]``.
Prints tables; nothing is written.
"""

from __future__ import annotations

import argparse
import copy
import platform
import time

import numpy as np
from _bench_common import best_seconds, matvec_floor_us
from threadpoolctl import threadpool_limits

from kbench.core.registry import get_registry
from kbench.data.streams import StreamSpec, build_stream

KERNEL = "rbf[gamma=0.05]"


def timed(algo, X, y, repeats: int = 3) -> tuple[float, object]:
    """Best µs per example of learn_predict_many over X on fresh copies; the last copy."""
    best, last = np.inf, None
    for _ in range(repeats):
        a = copy.deepcopy(algo)
        t0 = time.thread_time()
        a.learn_predict_many(X, y)
        best = min(best, 1e6 * (time.thread_time() - t0) / len(X))
        last = a
    return best, last


def floor_us(m: int, d: int, reps: int = 50) -> float:
    """µs of one dense m × d matrix–vector product, best of five batches."""
    return matvec_floor_us(m, d, reps)


def symv_floor_us(M: int, reps: int = 20) -> float:
    """µs of one M × M symmetric matrix–vector product (BLAS dsymv, one triangle read):
    the memory floor of POLK's O(M²) part, which reads the inverse Gram matrix."""
    from scipy.linalg.blas import dsymv

    rng = np.random.default_rng(0)
    A = rng.standard_normal((M, M))
    G, k = np.asfortranarray(A + A.T), rng.standard_normal(M)
    return 1e6 * best_seconds(lambda: dsymv(1.0, G, k), reps=reps)


def pistol_vs_norma(reg, X, y, sizes, n) -> None:
    kernel, loss = reg.create("kernel", KERNEL), reg.create("loss", "logistic")
    print(
        f"\n1. PiSTOL, ASGD and NORMA at m support vectors (a9a, d = {X.shape[1]}, {KERNEL}, "
        f"logistic; {n} timed examples)"
    )
    print(
        f"{'m':>6} {'pistol µs':>10} {'asgd µs':>9} {'norma µs':>9} {'pistol/norma':>12} "
        f"{'floor µs':>9}"
    )
    for m in sizes:
        specs = {
            "pistol": "pistol",
            "asgd": "asgd[eta=1.0]",
            "norma": f"norma[eta=1.0,c=0.0,budget={m}]",
        }
        times = {}
        for name, spec in specs.items():
            a = reg.create("algorithm", spec, kernel=kernel, loss=loss)
            for i in range(0, m, 4000):  # warm up to m stored vectors
                a.learn_predict_many(X[i : min(i + 4000, m)], y[i : min(i + 4000, m)])
            assert a.stats()["n_support"] == m, (name, a.stats())
            times[name], _ = timed(a, X[m : m + n], y[m : m + n])
        print(
            f"{m:6d} {times['pistol']:10.1f} {times['asgd']:9.1f} {times['norma']:9.1f} "
            f"{times['pistol'] / times['norma']:12.2f} {floor_us(m + n // 2, X.shape[1]):9.1f}"
        )


def polk_scaling(reg, X, y, Ks, warm, n) -> None:
    kernel, loss = reg.create("kernel", KERNEL), reg.create("loss", "logistic")
    d = X.shape[1]
    print(
        f"\n2. POLK time per example against its model order M (a9a, d = {d}, {KERNEL}, "
        f"logistic, B = 1, η = 1; {warm} warm-up and {n} timed examples)"
    )
    print(
        f"{'K':>7} {'M':>6} {'µs/example':>11} {'deletions/ex':>12} {'folds/ex':>9} "
        f"{'row floor':>9} {'G·k floor':>9}"
    )
    rows = []
    for K in Ks:
        a = reg.create("algorithm", f"polk[eta=1.0,K={K}]", kernel=kernel, loss=loss)
        for i in range(0, warm, 2000):
            a.learn_predict_many(X[i : i + 2000], y[i : i + 2000])
        before = a.stats()
        us, after = timed(a, X[warm : warm + n], y[warm : warm + n])
        st = after.stats()
        M = 0.5 * (before["n_support"] + st["n_support"])
        rows.append((M, us))
        print(
            f"{K:7.3g} {M:6.0f} {us:11.1f} "
            f"{(st['deletions'] - before['deletions']) / n:12.2f} "
            f"{(st['folds'] - before['folds']) / n:9.3f} {floor_us(int(M), d):9.1f} "
            f"{symv_floor_us(int(M)):9.1f}"
        )
    # Fit t = c0 + c1·M·d + c2·M² by non-negative least squares on relative errors (the
    # rows span two orders of magnitude); rows with an empty model say nothing about it.
    from scipy.optimize import nnls

    M = np.array([r[0] for r in rows if r[0] >= 10])
    t = np.array([r[1] for r in rows if r[0] >= 10])
    A = np.column_stack([np.ones_like(M), M * d, M * M])
    coef, _ = nnls(A / t[:, None], np.ones_like(t))
    fit = A @ coef
    print(
        f"fit: t ≈ {coef[0]:.2f} µs + {1e3 * coef[1]:.3f} ns·M·d + {1e3 * coef[2]:.3f} ns·M²  "
        f"(largest relative misfit {np.max(np.abs(fit - t) / t):.0%})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer examples")
    args = parser.parse_args()
    reg = get_registry()
    stream = build_stream(StreamSpec("a9a"), reg)
    X, y = stream.X, stream.y
    print(
        f"kbench PiSTOL/POLK speed on {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, BLAS on 1 thread"
    )
    with threadpool_limits(1):
        if args.quick:
            pistol_vs_norma(reg, X, y, (500, 2000), 300)
            polk_scaling(reg, X, y, (0.3, 0.1, 0.05), 3000, 300)
        else:
            pistol_vs_norma(reg, X, y, (1000, 4000, 16000), 500)
            polk_scaling(reg, X, y, (0.3, 0.1, 0.05, 0.03, 0.02), 6000, 1000)


if __name__ == "__main__":
    main()
