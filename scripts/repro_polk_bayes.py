"""POLK on multidist: the Bayes error of each drawn mixture, and POLK's excess error over it.

The reproduction of POLK (specs/004, claim C10) measured 26.2 % test error where the paper
reports 3.98 % (BSGD 21.8 %). This script isolates the cause:

1. The exact Bayes error (``Multidist.bayes_error``: the integral of max_c p(c) p(x|c) on a
   fine grid, the means being known) of the realisation of each seed of the study, with the
   recipe as printed (component variance 0.2, mean variance 1, unit circle), with 0.2 read as
   a standard deviation (``std=true``) and with a circle of radius 3.
2. POLK (η = 6, λ = 1e-6, K = 0.04, B = 32, multiclass hinge, σ̃² = 0.6) and BSGD with
   budget 16 on each realisation: held-out error, Bayes error and the excess.
3. A search over ``means_seed`` for fixed mixtures whose Bayes error lies below the paper's
   POLK and LIBSVM errors (3.98 % / 3.92 %): the paper's figure is reachable only there.

Run: ``.venv/bin/python scripts/repro_polk_bayes.py [--quick] [--seeds N] [--search N]``.
Prints tables; nothing is written. ``--quick`` runs two seeds on 600 examples.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from kbench.api import derive_seed, get_registry
from kbench.data.streams import StreamSpec, build_stream

KERNEL = "rbf[gamma=0.8333333333]"  # exp(−d²/(2σ̃²)), σ̃² = 0.6 (specs/004 §2.1)
POLK = "polk[eta=6.0,lam=1e-06,K=0.04,batch_size=32]"
BSGD = "bsgd[budget=16]"
VARIANTS = {
    "as printed": {},
    "0.2 as sd": {"std": True},
    "radius 3": {"radius": 3.0},
}


def dataset_spec(params: dict, n_train: int, n_test: int) -> str:
    """Canonical multidist spec string with the given parameters."""
    extra = {"n_train": n_train, "n_test": n_test} | params
    inner = ",".join(
        f"{k}={'true' if v is True else v}" for k, v in sorted(extra.items()) if v is not None
    )
    return f"multidist[{inner}]"


def run_arm(reg, algo: str, stream) -> tuple[float, int]:
    """Held-out error and final model order of one learner after one pass."""
    a = reg.create(
        "algorithm",
        algo,
        kernel=reg.create("kernel", KERNEL),
        loss=reg.create("loss", "multiclass_hinge"),
        task=stream.task,
        n_classes=stream.n_classes,
        seed=stream.spec.seed,
    )
    a.learn_predict_many(stream.X, stream.y)
    err = float(np.mean(a.predict_many(stream.X_test) != stream.y_test))
    return err, int(a.stats().get("n_support", -1))


def bayes_table(reg, seeds: list[int]) -> dict[str, list[float]]:
    """Bayes error of each seed's realisation under each reading of the recipe."""
    print("\n1. Bayes error of each drawn mixture (exact integral on a grid, %)")
    print("| seed | " + " | ".join(VARIANTS) + " |")
    print("|---|" + "---|" * len(VARIANTS))
    out: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for s in seeds:
        cells = []
        for name, params in VARIANTS.items():
            b = reg.create("dataset", dataset_spec(params, 10, 10)).bayes_error(
                derive_seed(s, "data")
            )
            out[name].append(b)
            cells.append(f"{100 * b:.1f}")
        print(f"| {s} | " + " | ".join(cells) + " |")
    print(
        "| median (range) | "
        + " | ".join(
            f"{100 * np.median(v):.1f} ({100 * min(v):.1f}–{100 * max(v):.1f})"
            for v in out.values()
        )
        + " |"
    )
    return out


def excess_table(reg, seeds: list[int], params: dict, n: int, n_test: int, label: str) -> None:
    """POLK and BSGD on each realisation: held-out error against the Bayes error."""
    print(f"\n2. POLK and BSGD(16) against the Bayes error, multidist {label} (n = {n}, %)")
    print("| seed | Bayes | POLK | POLK − Bayes | M | BSGD | BSGD − Bayes |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for s in seeds:
        spec = dataset_spec(params, n, n_test)
        stream = build_stream(StreamSpec(dataset=spec, seed=s), reg)
        bayes = reg.create("dataset", spec).bayes_error(derive_seed(s, "data"))
        e_p, m = run_arm(reg, POLK, stream)
        e_b, _ = run_arm(reg, BSGD, stream)
        rows.append((bayes, e_p, e_b, m))
        print(
            f"| {s} | {100 * bayes:.1f} | {100 * e_p:.1f} | {100 * (e_p - bayes):+.1f} | {m} "
            f"| {100 * e_b:.1f} | {100 * (e_b - bayes):+.1f} |"
        )
    r = np.array(rows)
    print(
        f"| mean | {100 * r[:, 0].mean():.1f} | {100 * r[:, 1].mean():.1f} "
        f"| {100 * (r[:, 1] - r[:, 0]).mean():+.1f} | {r[:, 3].mean():.1f} "
        f"| {100 * r[:, 2].mean():.1f} | {100 * (r[:, 2] - r[:, 0]).mean():+.1f} |"
    )
    if np.ptp(r[:, 0]) > 0:  # one fixed mixture has one Bayes error: no correlation
        print(f"corr(POLK error, Bayes error) = {np.corrcoef(r[:, 0], r[:, 1])[0, 1]:.2f}")


def search(reg, count: int) -> list[tuple[str, int, float]]:
    """Fixed mixtures (means_seed) whose Bayes error is at most the paper's 3.92 %."""
    print(f"\n3. Realisations with Bayes error ≤ 3.92 % among means_seed 0–{count - 1}")
    found = []
    for name, params in VARIANTS.items():
        ds = reg.create("dataset", dataset_spec(params, 10, 10))
        b = np.array([ds.bayes_error(s) for s in range(count)])
        ok = np.flatnonzero(b <= 0.0392)
        best = int(np.argmin(b))
        print(
            f"- {name}: {len(ok)} of {count} (lowest: means_seed={best}, {100 * b[best]:.2f} %)"
            + (
                f"; e.g. {', '.join(f'{s} ({100 * b[s]:.2f} %)' for s in ok[:5])}"
                if len(ok)
                else ""
            )
        )
        found += [(name, int(s), float(b[s])) for s in ok]
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="two seeds, 600 examples")
    ap.add_argument("--seeds", type=int, default=10, help="realisations (study seeds 0..N-1)")
    ap.add_argument("--search", type=int, default=200, help="means_seed values searched")
    ap.add_argument(
        "--paper-like", type=int, default=None, help="means_seed of a std=true mixture to run"
    )
    ap.add_argument(
        "--only-paper-like", action="store_true", help="run only the --paper-like mixture"
    )
    args = ap.parse_args()
    seeds = list(range(2 if args.quick else args.seeds))
    n, n_test = (600, 500) if args.quick else (5000, 2500)
    reg = get_registry()
    t0 = time.perf_counter()
    with threadpool_limits(1):
        if args.paper_like is None or not args.only_paper_like:
            bayes_table(reg, seeds)
            excess_table(reg, seeds, {}, n, n_test, "as printed")
            search(reg, 10 if args.quick else args.search)
        if args.paper_like is not None:
            params = {"std": True, "means_seed": args.paper_like}
            excess_table(reg, seeds, params, n, n_test, f"std=true, means_seed={args.paper_like}")
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
