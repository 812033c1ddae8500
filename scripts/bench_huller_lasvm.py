"""Speed and accuracy of the Huller, LASVM and the averaged perceptron beside LIBSVM (scikit-learn's SVC).

Every configuration runs as a kbench task (``kbench.execution.executors.execute``: the prequential
runner, one BLAS thread, wall time of learner calls only; for the offline ``libsvm``
reference, the time of ``SVC.fit``). Tables:

- ``a9a``: LASVM, one pass over a9a in file order with ``rbf[gamma=0.005]`` and C = 1,
  beside ``../shared/TARGETS.md`` (LASVM 1.1: 147 s, 12 029 SVs, 84.78 %; SVC: 123.5 s,
  84.79 %) and SVC fitted here on the same data.
- ``sizes``: one epoch (and two) of the Huller and LASVM against ``SVC.fit`` on the same
  training set, at several sizes: the time ratio and the test-error difference. The
  data are the paper's kind: digit (or garment) against the rest, 784 pixels in [0, 1],
  ``rbf[gamma=0.005]``, hard margin (the Huller; LIBSVM with C = 1000, specs/003 §3.5).
- ``cache``: the Huller and LASVM for one epoch with kernel caches of 256, 16, 1 and 0 MB
  (time and kernel evaluations), beside SVC with 256 and 16 MB (specs/003 claim 14: the
  Huller's time hardly depends on the cache, LIBSVM's does).
- ``faststart``: how many examples the Huller has learned when its kernel evaluations
  reach those of one and of five LIBSVM working pairs (2n and 10n; specs/003 claim 15,
  the paper: at least 500 and 1 500 of MNIST's 60 000).
- ``sparse``: µs per example of ``learn_predict_many`` (LASVM's finishing step included)
  on dense rows and on the same rows as CSR (the learners' native CSR path, support
  vectors kept sparse): the first 4 000 examples of a9a (``A9A_FILE``, 123 features, 11 %
  non-zero) and an rcv1-shaped synthetic stream (``bench_sparse.rcv1_like``: 47 236
  features, 75 non-zeros), densified only for 300 examples. Each CSR run is checked
  against the dense one (predictions and support vectors).

    .venv/bin/python scripts/bench_huller_lasvm.py [--part a9a|sizes|cache|faststart|sparse|all]
    .venv/bin/python scripts/bench_huller_lasvm.py --study huller-results

``--study RESULTS`` prints, instead, the tables of docs/huller.md from the results folder
of ``kbench/studies/huller.toml``: per problem the test error (mean over seeds), support
vectors and training time of each configuration, the held-out error after each pass, and
the paper's claims checked over the problems (a Wilcoxon signed-rank test pairs the
problems, as the paper's "standard paired significance tests" do).

The machine is shared: timings are the best of ``--repeat`` runs, and the CPU time of the
whole script is printed at the end to show how much waiting the wall times include.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
from _bench_common import fastest_run

from kbench.core.registry import get_registry
from kbench.data.streams import StreamSpec
from kbench.execution.tasks import Task

A9A = StreamSpec("a9a", order="file")
A9A_KERNEL = "rbf[gamma=0.005]"
PIXEL_KERNEL = "rbf[gamma=0.005]"

#: (label, stream) of the one-vs-rest image problems, smallest first.
SIZES = [
    ("MNIST-5k, 3 vs rest, n = 4 000", StreamSpec("mnist5k", positive="3", test_size=0.2)),
    (
        "Fashion-MNIST, T-shirt vs rest, n = 5 000",
        StreamSpec("fashion_mnist", positive="0", n=5000),
    ),
    (
        "Fashion-MNIST, T-shirt vs rest, n = 20 000",
        StreamSpec("fashion_mnist", positive="0", n=20000),
    ),
]


def run(spec: str, stream: StreamSpec, kernel: str, repeat: int, epochs: int = 1) -> dict:
    """Best-of-``repeat`` timing of one task: the run row of the fastest run, with its last
    trace row (the learner's final statistics) under ``"last"``."""
    task = Task(algorithm=spec, kernel=kernel, loss=None, stream=stream, epochs=epochs,
                checkpoints=4)  # fmt: skip
    result = fastest_run(task, repeat, trace_memory=False)[0]
    return dict(result.run, last=result.traces.iloc[-1])


def a9a_table(repeat: int) -> None:
    print(f"a9a, file order, {A9A_KERNEL}, C = 1, one pass (32 561 examples), best of {repeat}\n")
    print("| system | time | test acc. | SVs | kernel evaluations |")
    print("|---|---|---|---|---|")
    print("| LASVM 1.1 (C), TARGETS.md | 147 s | 84.78 % | 12 029 | – |")
    print("| SVC, TARGETS.md | 123.5 s | 84.79 % | – | – |")
    for label, spec in (
        ("kbench lasvm", "lasvm[C=1.0]"),
        ("kbench libsvm (SVC here)", "libsvm[C=1.0]"),
    ):
        r = run(spec, A9A, A9A_KERNEL, repeat)
        evals = f"{int(r['kernel_evals']):,}" if r["kernel_evals"] else "not counted"
        print(f"| {label} | {r['time_s']:.1f} s | {100 * (1 - r['test_error']):.2f} % "
              f"| {int(r['n_support'])} | {evals} |")  # fmt: skip
        sys.stdout.flush()


def sizes_table(repeat: int) -> None:
    print(
        f"\nOne-vs-rest images, {PIXEL_KERNEL}, pixels in [0, 1]; time ratio = learner / SVC.fit; "
        f"Δerr = learner − SVC test error (percentage points); best of {repeat}\n"
    )
    print("| data | SVC (C = 1000) | learner | epochs | time | ratio | test err. | Δerr | SVs |")
    print("|---|---|---|---|---|---|---|---|---|")
    learners = [
        ("huller", "huller", 1),
        ("huller", "huller", 2),
        ("lasvm", "lasvm[C=1000.0]", 1),
        ("lasvm", "lasvm[C=1000.0]", 2),
        ("averaged perceptron", "averaged_perceptron", 1),
    ]
    for label, stream in SIZES:
        ref = run("libsvm[C=1000.0]", stream, PIXEL_KERNEL, repeat)
        ref_err = 100 * ref["test_error"]
        head = f"{ref['time_s']:.1f} s, {ref_err:.2f} %, {int(ref['n_support'])} SVs"
        for name, spec, epochs in learners:
            r = run(spec, stream, PIXEL_KERNEL, repeat, epochs)
            err = 100 * r["test_error"]
            print(f"| {label} | {head} | {name} | {epochs} | {r['time_s']:.1f} s "
                  f"| {r['time_s'] / ref['time_s']:.2f} | {err:.2f} % | {err - ref_err:+.2f} "
                  f"| {int(r['n_support'])} |")  # fmt: skip
            head = ""
            sys.stdout.flush()


def cache_table(repeat: int) -> None:
    label, stream = SIZES[-1]
    print(f"\nKernel cache: {label}, {PIXEL_KERNEL}, one epoch, best of {repeat}\n")
    print("| learner | cache | time | kernel evaluations | cache hits / partial / misses |")
    print("|---|---|---|---|---|")
    for name, spec in (
        ("huller", "huller[cache_mb={mb}]"),
        ("lasvm", "lasvm[C=1000.0,cache_mb={mb}]"),
    ):
        for mb in (256.0, 16.0, 1.0, 0.0):
            r = run(spec.format(mb=mb), stream, PIXEL_KERNEL, repeat)
            t = r["last"]
            print(f"| {name} | {mb:g} MB | {r['time_s']:.1f} s | {int(r['kernel_evals']):,} "
                  f"| {int(t['cache_hits'])} / {int(t['cache_partial'])} / {int(t['cache_misses'])} |")  # fmt: skip
            sys.stdout.flush()
    for mb in (256.0, 16.0):
        r = run(f"libsvm[C=1000.0,cache_mb={mb}]", stream, PIXEL_KERNEL, repeat)
        print(f"| SVC | {mb:g} MB | {r['time_s']:.1f} s | not counted | – |")


def faststart_table() -> None:
    from kbench.data.streams import get_stream

    print("\nFast start: examples the Huller has learned (and its SVs) when its kernel "
          "evaluations reach those of LIBSVM's first working pair (2n) and of its fifth (10n)\n")  # fmt: skip
    print("| data | n | learned by 2n evaluations | learned by 10n evaluations |")
    print("|---|---|---|---|")
    reg = get_registry()
    for label, spec in SIZES:
        stream = get_stream(spec, reg)
        h = reg.create("algorithm", "huller", kernel=reg.create("kernel", PIXEL_KERNEL))
        n, marks, out = stream.n, [2 * stream.n, 10 * stream.n], []
        for a in range(0, n, 10):
            h.learn_predict_many(stream.X[a : a + 10], stream.y[a : a + 10])
            st = h.stats()
            while marks and st["kernel_evals"] >= marks[0]:
                out.append(f"{min(a + 10, n)} ({int(st['n_support'])} SVs)")
                marks.pop(0)
            if not marks:
                break
        out += ["the whole pass took fewer"] * (2 - len(out))
        print(f"| {label} | {n} | {out[0]} | {out[1]} |")
        sys.stdout.flush()


#: Configurations of the study, in table order: (label, algorithm name, epochs).
STUDY_CONFIGS = [
    ("LIBSVM", "libsvm", 1),
    ("HULLER×1", "huller", 1),
    ("HULLER×2", "huller", 2),
    ("LASVM×1", "lasvm", 1),
    ("LASVM×2", "lasvm", 2),
    ("AvgPerc×1", "averaged_perceptron", 1),
    ("AvgPerc×10", "averaged_perceptron", 10),
]


def study_tables(folder: str) -> None:
    """Per data set: test error %, SVs and training time of each configuration; then the claims."""
    import numpy as np
    import pandas as pd
    from scipy.stats import wilcoxon

    from kbench.results.store import load_results

    res = load_results(folder)
    runs = res.runs[res.runs["status"] == "ok"].copy()
    runs["cfg"] = [
        next((lab for lab, name, ep in STUDY_CONFIGS if name == a and ep == int(e)), None)
        for a, e in zip(runs["algorithm"], runs["epochs"], strict=True)
    ]
    # One problem per positive class (the stream label also names the folder and pixels).
    runs["problem"] = runs["stream"].str.extract(r"positive=([^,\]]+)")[0] + " vs rest"
    agg = runs.groupby(["dataset", "problem", "cfg"]).agg(
        err=("test_error", "mean"), sd=("test_error", "std"), sv=("n_support", "mean"),
        t=("time_s", "mean"), seeds=("seed", "nunique")).reset_index()  # fmt: skip
    for dataset, g in agg.groupby("dataset", sort=False):
        labels = [lab for lab, _, _ in STUDY_CONFIGS if lab in set(g["cfg"])]
        seeds = int(g["seeds"].max())
        print(f"\n### {dataset}: test error % (mean of {seeds} shuffles) / SVs / seconds\n")
        print("| problem | " + " | ".join(labels) + " |")
        print("|---" * (len(labels) + 1) + "|")
        for problem, p in g.groupby("problem", sort=False):
            p = p.set_index("cfg")
            cells = [
                f"{100 * p.loc[c, 'err']:.2f} / {p.loc[c, 'sv']:.0f} / {p.loc[c, 't']:.1f}"
                if c in p.index else "–"
                for c in labels
            ]  # fmt: skip
            print(f"| {problem} | " + " | ".join(cells) + " |")
        wide = {c: g[g["cfg"] == c].set_index("problem") for c in labels}
        ref = wide.get("LIBSVM")
        if ref is None:
            continue
        print(f"\nClaims over the {len(ref)} problems of {dataset} (specs/003 §6):\n")
        for c in ("HULLER×1", "HULLER×2", "LASVM×1", "LASVM×2", "AvgPerc×1", "AvgPerc×10"):
            if c not in wide or wide[c].empty:
                continue
            both = ref.merge(wide[c], left_index=True, right_index=True, suffixes=("_ref", ""))
            d_err = 100 * (both["err"] - both["err_ref"])
            p_val = wilcoxon(both["err"], both["err_ref"]).pvalue if (d_err != 0).any() else 1.0
            ratio = both["t"] / both["t_ref"]
            fewer = int((both["sv"] < both["sv_ref"]).sum())
            sv_rel = np.abs(both["sv"] - both["sv_ref"]) / both["sv_ref"]
            print(f"- {c}: test error − LIBSVM's {d_err.mean():+.2f} points on average "
                  f"(range {d_err.min():+.2f} to {d_err.max():+.2f}; Wilcoxon p = {p_val:.2f}); "
                  f"time / LIBSVM's: median {ratio.median():.2f}, below 0.5 on "
                  f"{int((ratio < 0.5).sum())} of {len(both)}; fewer SVs than LIBSVM on "
                  f"{fewer} of {len(both)} (|ΔSV| / SV ≤ 5 % on {int((sv_rel <= 0.05).sum())})")  # fmt: skip
    ends = res.traces.merge(runs[["task_id", "cfg", "dataset", "n"]], on="task_id")
    ends = ends[
        (ends["seen"] == ends["n"]) & ends["cfg"].isin(["HULLER×2", "LASVM×2", "AvgPerc×10"])
    ]
    if len(ends):
        print("\nHeld-out error (%) after each pass, mean over problems and shuffles:\n")
        table = ends.groupby(["dataset", "cfg", "epoch"])["test_error"].mean().unstack("epoch")
        print(pd.DataFrame(100 * table).round(2).astype(object).fillna("–").to_markdown())


#: The LIBSVM training file of a9a used by the ``sparse`` table.
A9A_FILE = "/work/shared/data/a9a/a9a_train.txt"


def _timed(name: str, kernel: str, X, y, repeat: int) -> tuple[float, np.ndarray, int]:
    """Best-of-``repeat`` µs per example of one pass (fresh learners), its predictions and
    support vectors."""
    reg = get_registry()
    best, pred, n_sv = np.inf, np.zeros(0), 0
    for _ in range(repeat):
        algo = reg.create("algorithm", name, kernel=reg.create("kernel", kernel), task="binary")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the hard-margin Huller on non-separable data
            t0 = time.perf_counter()
            pred = algo.learn_predict_many(X, y)
            if callable(getattr(algo, "end_pass", None)):
                algo.end_pass()
            best = min(best, time.perf_counter() - t0)
        n_sv = int(algo.stats()["n_support"])
    return 1e6 * best / X.shape[0], pred, n_sv


def sparse_table(repeat: int) -> None:
    import scipy.sparse as sp
    from bench_sparse import rcv1_like
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(A9A_FILE, n_features=123)
    X, y = sp.csr_matrix(X[:4000], dtype=np.float64), np.asarray(y[:4000], dtype=np.float64)
    R, yr = rcv1_like(np.random.default_rng(0), 2000, 75)
    print(f"\nsparse: µs per example, dense rows against CSR rows (best of {repeat})\n")
    print(f"{'data':24} {'learner':8} {'n':>5} {'dense':>9} {'CSR':>9} {'CSR/dense':>9} SVs")
    for label, kernel, Xs, ys, n_dense in (
        ("a9a (4 000)", A9A_KERNEL, X, y, 4000),
        ("rcv1 shape", "rbf[gamma=1]", R, yr, 300),
    ):
        for name in ("huller", "lasvm"):
            Xd = Xs[:n_dense].toarray()
            t_d, p_d, m_d = _timed(name, kernel, Xd, ys[:n_dense], repeat)
            t_c, p_c, m_c = _timed(name, kernel, Xs[:n_dense], ys[:n_dense], repeat)
            same = "same" if m_c == m_d and np.array_equal(p_c, p_d) else "DIFFERENT"
            print(f"{label:24} {name:8} {n_dense:5} {t_d:9.1f} {t_c:9.1f} "
                  f"{t_c / t_d:8.3g}x {m_d} / {m_c} ({same})")  # fmt: skip
            if Xs.shape[0] > n_dense:
                t_c, _, m_c = _timed(name, kernel, Xs, ys, repeat)
                print(f"{label:24} {name:8} {Xs.shape[0]:5} {'-':>9} {t_c:9.1f} {'-':>9} {m_c}")
    print(f"\nload: {os.getloadavg()}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part", choices=["a9a", "sizes", "cache", "faststart", "sparse", "all"], default="all"
    )
    parser.add_argument("--repeat", type=int, default=1, help="timing runs per configuration")
    parser.add_argument("--study", metavar="RESULTS", help="print the study's tables")
    args = parser.parse_args(argv)
    if args.study:
        study_tables(args.study)
        return
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if args.part in ("a9a", "all"):
        a9a_table(max(1, args.repeat))
    if args.part in ("sizes", "all"):
        sizes_table(max(1, args.repeat))
    if args.part in ("cache", "all"):
        cache_table(max(1, args.repeat))
    if args.part in ("faststart", "all"):
        faststart_table()
    if args.part in ("sparse", "all"):
        sparse_table(max(1, args.repeat))
    print(
        f"\nscript: {time.perf_counter() - wall0:.0f} s wall, "
        f"{time.process_time() - cpu0:.0f} s CPU"
    )


if __name__ == "__main__":
    main()
