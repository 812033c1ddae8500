"""The Huller's claim 10 (fewer support vectors than LIBSVM): against LIBSVM at every C.

The Huller (specs/003) solves the hard-margin SVM; the paper compares it with LIBSVM at a C it
does not state (specs/003 §3.5 recommends C = 1000 and checking afterwards that no α reaches
C). The reproduction found HULLER×1 keeping 416 ± 150 support vectors against LIBSVM's
401 ± 127 at C = 1000, not fewer. This script runs, on the same digit-against-the-rest
streams of ``mnist5k`` (kbench's real 5 000-digit MNIST sample, 4 000 training digits, RBF
γ = 0.005 on pixels in [0, 1]):

- HULLER×1 and HULLER×2 (kbench), their #SV and held-out error;
- scikit-learn's SVC (LIBSVM) at C ∈ {1, 10, 100, 1000, 10⁶}: ``n_support_``, the number of
  bound support vectors (α = C) and the held-out error. At C = 10⁶ no α reaches C: that is the
  exact hard-margin solution the Huller approximates.

Run: ``.venv/bin/python scripts/repro_huller_sv.py [--quick] [--seeds N] [--digits D …]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from kbench.api import get_registry
from kbench.data.streams import StreamSpec, build_stream

GAMMA = 0.005
CS = (1.0, 10.0, 100.0, 1000.0, 1e6)


def huller(reg, stream, epochs: int) -> tuple[int, float]:
    algo = reg.create(
        "algorithm",
        "huller",
        kernel=reg.create("kernel", f"rbf[gamma={GAMMA}]"),
        loss=None,
        task="binary",
        n_classes=2,
        seed=stream.spec.seed,
    )
    for _ in range(epochs):
        algo.learn_predict_many(stream.X, stream.y)
    err = float(np.mean(algo.predict_many(stream.X_test) != stream.y_test))
    return int(algo.stats()["n_support"]), err


def main() -> None:
    from sklearn.svm import SVC

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="one digit, 600 examples, one seed")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--digits", nargs="+", default=["0", "3", "8"])
    args = ap.parse_args()
    n = 600 if args.quick else None
    seeds = range(1 if args.quick else args.seeds)
    digits = ["3"] if args.quick else args.digits
    reg = get_registry()
    res: dict[str, list[tuple[float, float, float]]] = {}
    t0 = time.perf_counter()
    with threadpool_limits(1):
        for d in digits:
            for s in seeds:
                spec = StreamSpec(dataset="mnist5k", seed=s, positive=d, test_size=0.2, n=n)
                stream = build_stream(spec, reg)
                for e in (1, 2):
                    sv, err = huller(reg, stream, e)
                    res.setdefault(f"HULLER×{e}", []).append((sv, 0, err))
                for C in CS:
                    m = SVC(C=C, kernel="rbf", gamma=GAMMA, tol=1e-3).fit(stream.X, stream.y)
                    bound = int(np.sum(np.abs(m.dual_coef_) >= C * (1 - 1e-8)))
                    err = float(np.mean(m.predict(stream.X_test) != stream.y_test))
                    res.setdefault(f"LIBSVM C={C:g}", []).append(
                        (int(m.n_support_.sum()), bound, err)
                    )
            print(f"digit {d} done ({time.perf_counter() - t0:.0f} s)", flush=True)
    h1 = np.array([r[0] for r in res["HULLER×1"]], float)
    print(
        f"\nmnist5k digit-vs-rest (digits {', '.join(digits)} × {len(list(seeds))} seeds, "
        f"RBF γ = {GAMMA}); mean ± sd over the streams"
    )
    print(
        "| learner | #SV | bound SVs (α = C) | held-out error % | streams where HULLER×1 has fewer SVs |"
    )
    print("|---|---|---|---|---|")
    for k, v in res.items():
        a = np.array(v, float)
        fewer = "–" if k.startswith("HULLER") else f"{int(np.sum(h1 < a[:, 0]))}/{len(a)}"
        print(
            f"| {k} | {a[:, 0].mean():.0f} ± {a[:, 0].std(ddof=1) if len(a) > 1 else 0:.0f} "
            f"| {a[:, 1].mean():.1f} | {100 * a[:, 2].mean():.2f} | {fewer} |"
        )
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
