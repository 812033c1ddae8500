"""SVMD on 10-class USPS (specs/000, claim R2): can step-size adaptation halve NORMA's errors here?

The paper's Fig. 4 has SVMD(λ = 0.99) ending with about half of NORMA(τ = 100)'s errors on
USPS, because SVMD "raised η well above η₀ = 0.1", which a decaying schedule cannot do. The
reproduction on ``usps_like`` (kbench's MNIST-derived 16×16 stand-in; real USPS is not on this
machine) found the ratio 0.97. This script isolates why, on the same streams:

1. SVMD(λ = 0.99, η₀ = μ = 0.1, c = 4e-7, buffer 512, the study's settings): its η_t every
   250 examples (largest value and final value) — the spec's check is max η_t ≥ 0.2;
2. NORMA with a **constant** step η ∈ {0.05, 0.1, 0.2, 0.5, 1} and with the paper's
   η₀·sqrt(τ/(τ+t)), τ = 100: if no fixed step does much better than the decaying one, no
   adaptation of the step can halve NORMA's errors on these data.

Average online (prequential) error over one pass of 5 000 examples, mean ± sd over seeds.
Run: ``.venv/bin/python scripts/repro_svmd_usps10.py [--quick] [--seeds N]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _bench_common import digit_learner
from threadpoolctl import threadpool_limits

from kbench.api import get_registry
from kbench.data.streams import StreamSpec, build_stream

SVMD = "svmd[eta=0.1,mu=0.1,lam=0.99,c=4e-7,budget=512]"
NORMAS = {
    "NORMA τ=100 (paper)": "norma[eta=0.1,schedule=decay_tau,tau=100.0,c=4e-7,budget=512]",
    **{
        f"NORMA constant η={e:g}": f"norma[eta={e},schedule=constant,c=4e-7,budget=512]"
        for e in (0.05, 0.1, 0.2, 0.5, 1.0)
    },
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="500 examples, one seed")
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args()
    n = 500 if args.quick else None
    seeds = list(range(1 if args.quick else args.seeds))
    reg = get_registry()
    errs: dict[str, list[float]] = {}
    etas_max, etas_end = [], []
    t0 = time.perf_counter()
    with threadpool_limits(1):
        for s in seeds:
            stream = build_stream(StreamSpec(dataset="usps_like", seed=s, n=n), reg)
            X, y = stream.X, stream.y
            algo = digit_learner(reg, SVMD, s)
            wrong, trace = 0, []
            for i in range(0, len(X), 250):
                wrong += int(
                    np.sum(
                        algo.learn_predict_many(X[i : i + 250], y[i : i + 250]) != y[i : i + 250]
                    )
                )
                trace.append(algo.stats()["eta"])
            errs.setdefault("SVMD λ=0.99", []).append(wrong / len(X))
            etas_max.append(max(trace))
            etas_end.append(trace[-1])
            for label, spec in NORMAS.items():
                pred = digit_learner(reg, spec, s).learn_predict_many(X, y)
                errs.setdefault(label, []).append(float(np.mean(pred != y)))
    print(
        f"usps_like 10-class, {len(y)} examples, RBF σ = 8, buffer 512, c = 4e-7; {len(seeds)} seeds"
    )
    print(
        f"SVMD's η every 250 examples: largest {np.mean(etas_max):.3f} (max over seeds "
        f"{np.max(etas_max):.3f}), final {np.mean(etas_end):.3f}; η₀ = 0.1 (the spec's check: max η ≥ 0.2)"
    )
    print("\n| learner | average online error | ratio to NORMA τ=100 |\n|---|---|---|")
    ref = np.array(errs["NORMA τ=100 (paper)"])
    for label, v in errs.items():
        a = np.array(v)
        sd = a.std(ddof=1) if len(a) > 1 else 0.0
        print(f"| {label} | {a.mean():.3f} ± {sd:.3f} | {np.mean(a / ref):.2f} |")
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
