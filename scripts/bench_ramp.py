"""Speed and cost of the ramp-paper learners as the stream grows (kbench spec 001, Fig. 4).

For Haykin's two Gaussians ("Gauss") and the noisy checkerboard (15 % flipped labels, clean
test set) at n = 2 000, 5 000 and 10 000 training examples:

* OnlineSVM^R, OnlineASVM^R, IDSVM (zero bias), PA-I: one pass, read at each n (cumulative
  cost, as an online learner pays it);
* offline CCCP ramp SVM: one fit on the first n examples ("offline trained on demand");
* naive online ramp SVM: retraining offline CCCP after every example costs
  Σ_{u ≤ n} cost(u); the sum is integrated from a power law fitted to offline fits at
  u = 500 … 10 000 (retraining 10 000 times is not run);

with CPU seconds of learner calls, wall seconds, microseconds per example, kernel values
computed (``kernel_evals``: cache misses) and requested (``kernel_requests``: what an
implementation without a cache computes, the paper's count), support vectors, stored
examples, labels queried and clean test accuracy. For OnlineSVM^R it also reports the time
per coordinate step against the floor of one pass over the stored examples (a NumPy axpy of
the same length), and the drift of its incremental gradients at the end.

Usage: ``python scripts/bench_ramp.py [--sizes 2000,5000,10000] [--idsvm-cap 1800]
[--learners online_svm_r,online_asvm_r,idsvm,pa,offline] [--out bench_ramp.json]``. The machine is shared: CPU seconds are the figures to compare.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from kbench.core.registry import get_registry

DATASETS = {
    # name: (data set spec, kernel, C); δ² = 1 on the 2-D Gaussians (γ = 1/(2δ²)), and
    # cells of 1/4 on the unit checkerboard (δ² = 1/64, the spec prototype's 0.25 on [0, 4)²)
    "gauss": ("haykin[n_train=10000,n_test=10000]", "rbf[gamma=0.5]", 1.0),
    "ncheckerboard": ("checkerboard[n_train=10000,n_test=10000,noise=0.15]", "rbf[gamma=32]", 10.0),
}
ONLINE = ("online_svm_r", "online_asvm_r", "idsvm", "pa")


def _accuracy(algo, Xt: np.ndarray, yt: np.ndarray) -> float:
    return float(np.mean(algo.predict_many(Xt) == yt))


def online_run(name: str, X, y, Xt, yt, kernel, C: float, sizes, cap: float) -> list[dict]:
    reg = get_registry()
    spec = f"{name}[C={C}]" if name != "idsvm" else f"idsvm[C={C},max_seconds={cap}]"
    algo = reg.create("algorithm", spec, kernel=reg.create("kernel", kernel))
    rows, done, cpu, wall = [], 0, 0.0, 0.0
    for n in sizes:
        t0, c0 = time.perf_counter(), time.process_time()
        algo.learn_predict_many(X[done:n], y[done:n])
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
        done = n
        st = algo.stats()
        row = {
            "algorithm": name,
            "n": n,
            "cpu_s": cpu,
            "wall_s": wall,
            "us_per_example": 1e6 * cpu / n,
            "kernel_evals": int(st["kernel_evals"]),
            "kernel_requests": int(st.get("kernel_requests", st["kernel_evals"])),
            "n_support": int(st["n_support"]),
            "n_stored": int(st.get("n_stored", n)),
            "labels": int(st.get("labels_queried", n)),
            "accuracy": _accuracy(algo, Xt, yt),
        }
        if name == "idsvm":
            row["learned"] = int(st["learned"])
            row["capped"] = bool(st["frozen"])
        if name == "online_svm_r":
            row["coordinate_steps"] = int(st["coordinate_steps"])
            row["us_per_step"] = 1e6 * cpu / max(1, st["coordinate_steps"])
            g = algo.core.g_[: algo.core.n].copy()
            row["drift"] = float(np.abs(algo.core.exact_gradients() - g).max())
        rows.append(row)
        print(json.dumps(row), flush=True)
        if name == "idsvm" and st["frozen"]:
            break
    return rows


def offline_fit(X, y, Xt, yt, kernel, C: float, n: int) -> dict:
    reg = get_registry()
    algo = reg.create("algorithm", f"ramp_cccp[C={C}]", kernel=reg.create("kernel", kernel))
    t0, c0 = time.perf_counter(), time.process_time()
    algo.fit(X[:n], y[:n])
    row = {
        "algorithm": "ramp_cccp",
        "n": n,
        "cpu_s": time.process_time() - c0,
        "wall_s": time.perf_counter() - t0,
        "kernel_evals": int(algo.stats()["kernel_evals"]),
        "kernel_requests": int(algo.stats()["kernel_requests"]),
        "n_support": int(algo.stats()["n_support"]),
        "accuracy": _accuracy(algo, Xt, yt),
    }
    row["us_per_example"] = 1e6 * row["cpu_s"] / n
    print(json.dumps(row), flush=True)
    return row


def naive_cost(fits: list[dict], key: str, n: int) -> float:
    """Σ_{u=1..n} cost(u) for cost(u) = a·u^b fitted (log–log) to the offline fits."""
    u = np.array([f["n"] for f in fits], dtype=float)
    c = np.array([f[key] for f in fits], dtype=float)
    b, loga = np.polyfit(np.log(u), np.log(c), 1)
    grid = np.arange(1, n + 1, dtype=float)
    return float(np.exp(loga) * np.sum(grid**b))


def step_floor(n: int, reps: int = 2000) -> float:
    """Microseconds of one pass ``g += c·y·row`` over n stored examples (NumPy, in place)."""
    rng = np.random.default_rng(0)
    g, y, row, tmp = rng.random(n), rng.random(n), rng.random(n), np.empty(n)
    c0 = time.process_time()
    for _ in range(reps):
        np.multiply(y, row, out=tmp)
        tmp *= 0.5
        g += tmp
    return 1e6 * (time.process_time() - c0) / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,5000,10000")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument(
        "--idsvm-cap",
        type=float,
        default=1800.0,
        help="CPU-independent wall-clock cap of IDSVM's learning, seconds",
    )
    parser.add_argument(
        "--learners",
        default=",".join((*ONLINE, "offline")),
        help="Which learners to run (offline: the CCCP fits and the naive-retraining estimate)",
    )
    parser.add_argument("--out", default="bench_ramp.json")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    reg = get_registry()
    report = {}
    for ds in args.datasets.split(","):
        spec, kernel, C = DATASETS[ds]
        data = reg.create("dataset", spec).load(0)
        X, y = np.ascontiguousarray(data.X), np.ascontiguousarray(data.y)
        Xt, yt = data.X_test, data.y_test
        rows = []
        learners = args.learners.split(",")
        for name in ONLINE:
            if name in learners:
                rows += online_run(name, X, y, Xt, yt, kernel, C, sizes, args.idsvm_cap)
        naive = {}
        if "offline" in learners:
            fits = [offline_fit(X, y, Xt, yt, kernel, C, u) for u in sorted({500, 1000, *sizes})]
            rows += [f for f in fits if f["n"] in sizes]
            naive = {
                n: {key: naive_cost(fits, key, n) for key in ("kernel_requests", "cpu_s")}
                for n in sizes
            }
        floor = {n: step_floor(n) for n in sizes}
        report[ds] = {
            "data": spec,
            "kernel": kernel,
            "C": C,
            "rows": rows,
            "naive": naive,
            "step_floor_us": floor,
        }
        print(json.dumps({"dataset": ds, "naive": naive, "step_floor_us": floor}), flush=True)
    with open(args.out, "w") as fh:
        json.dump(report, fh, indent=1)
    for ds, rep in report.items():
        print(f"\n{ds}: {rep['data']}, {rep['kernel']}, C = {rep['C']}")
        print(
            "| algorithm | n | CPU s | µs/example | kernel evals | requested | #SV | stored "
            "| labels | accuracy |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in rep["rows"]:
            print(
                f"| {r['algorithm']} | {r['n']} | {r['cpu_s']:.2f} | {r['us_per_example']:.0f} "
                f"| {r['kernel_evals']:.3g} | {r['kernel_requests']:.3g} | {r['n_support']} "
                f"| {r.get('n_stored', r['n'])} | {r.get('labels', r['n'])} "
                f"| {100 * r['accuracy']:.1f} % |"
            )
        for n, v in rep["naive"].items():
            print(
                f"naive retraining up to n = {n}: ≈ {v['kernel_requests']:.3g} kernel values, "
                f"≈ {v['cpu_s']:.0f} CPU s; one NumPy pass over {n} gradients ≈ "
                f"{rep['step_floor_us'][n]:.1f} µs"
            )
        for r in rep["rows"]:
            if "us_per_step" in r:
                print(
                    f"online_svm_r at n = {r['n']}: {r['coordinate_steps']} coordinate steps, "
                    f"{r['us_per_step']:.1f} µs each; gradient drift {r['drift']:.1e}"
                )


if __name__ == "__main__":
    main()
