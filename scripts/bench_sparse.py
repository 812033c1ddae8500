"""Speed of sparse kernel rows against dense ones (first version: kernel rows only).

1. µs per kernel row of a sparse example against M sparse stored rows (the merge and the
   scatter of ``kbench.cython_core._sparse``, and ``SparseSupportBuffer.row`` with its
   Python overhead) against the dense compiled row (``_kernels.kernel_row``, what
   ``SupportBuffer.row`` calls) on the same data densified, for
   - the a9a shape: 123 features, 14 non-zeros (11 % dense), values 1 (one-hot);
     goal: sparse ≤ 1.0× dense;
   - the rcv1 shape: 47 236 features, 75 non-zeros on average, positive values;
     goal: sparse ≥ 20× faster than dense;
   - the url shape: 3 231 961 features, 115 non-zeros (sparse only; dense does not fit),
     to see where the scatter's work vector stops fitting in cache.
2. Time per row as the non-zeros per row double (rcv1 dimension, M = 1600): the goal is
   within 1.2× of linear, i.e. time / nnz at the largest nnz within 1.2× of the smallest
   nnz's, once the fixed cost per row is paid.
3. The learners (``--part 3``): µs per example of ``learn_predict_many`` (predict, then
   learn) for rbp, bpa_s, nogd, norma (budget 500) and the perceptron, after a warm-up
   that fills the budget, on
   (a) a9a (the bundled data set, 11 % dense) as dense rows and as CSR rows (best of 5),
       and as CSR rows through the per-row path (one compiled call per row, the path before
       the compiled loops over CSR blocks), also for pa, pegasos, bsgd (removal, projection),
       bogd, pistol, sgd, asgd, svmd and the averaged perceptron: goal CSR ≤ 1.0× dense
       (``--part 3a``: this table alone);
   (b) an rcv1-shaped synthetic stream (47 236 features, 75 non-zeros on average) as CSR
       and densified (fewer timed examples: the dense rows and store take 0.4 GB): goal
       sparse ≥ 20× faster;
   (c) the rcv1 shape as the non-zeros per example double (CSR): goal within 1.2× of
       linear (time / nnz).
4. IDSVM (``--part idsvm``), the exact SVM that stores every example: µs per example of
   ``learn_predict_many`` after a warm-up, (a) on a9a, dense rows against CSR rows (best of
   3, the same predictions and support vectors checked), (b) on the rcv1 shape, CSR against
   densified rows (timed on the same examples, one run each), with the bytes of the stored
   rows (every example and the support vectors: dense rows against the sparse pools).
5. The ramp-loss learners (``--part ramp``): online_svm_r, online_asvm_r, the active
   wrapper around online_svm_r (active_margin) and ramp_cccp (one fit, per example), which
   keep every example (C = 10; the wrapper's base is online_svm_r, C = 1): µs per example
   on a9a (RBF γ = 0.05), dense rows against CSR rows (best of 3; the same support vectors
   checked, and whether the predictions are the same printed); on the rcv1 shape (RBF
   γ = 1), CSR against the rows densified (the same predictions checked), with the bytes
   of the store of examples (``store_bytes``) on both.
6. BSGD merging, its default (``--part bsgd``), and removal for comparison (budget 500, RBF
   γ = 0.5): µs per example after a warm-up that fills the budget, (a) on a9a, dense rows
   against CSR rows (best of 5; whether the predictions are the same printed), (b) on the
   rcv1 shape, CSR against densified rows (200 at a time) on the same examples (one run
   each; the same predictions checked), and CSR on more examples, with the bytes of the
   stored rows
   (dense rows against the sparse store), the non-zeros of the stored rows (merged rows
   hold the union of their rows' features) and the maintenance steps (merges or removals).

Every figure but those of 3b (one run each) is the best of several repeats (the least
disturbed by other processes); ratios are measured in the same run. Run: ``.venv/bin/python scripts/bench_sparse.py
[--quick]``. Prints tables and the load (``uptime``); nothing is written.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kbench.core.kernel_rows import KIND_LINEAR, KIND_RBF
from kbench.core.registry import get_registry
from kbench.cython_core import _kernels, _sparse
from kbench.learners.sparse_buffer import SparseSupportBuffer
from kbench.learners.support_buffer import SupportBuffer

SHAPES = {
    "a9a": (123, 14, "onehot"),
    "rcv1": (47_236, 75, "tfidf"),
    "url": (3_231_961, 115, "tfidf"),
}
DENSE_LIMIT = 200e6  # bytes of densified store this script is willing to allocate


def random_rows(rng: np.random.Generator, n: int, d: int, nnz: int, values: str):
    """n sparse rows of about nnz non-zeros each (between nnz/2 and 3·nnz/2)."""
    rows = []
    for _ in range(n):
        k = int(rng.integers(max(1, nnz // 2), nnz + nnz // 2 + 1))
        cols = np.sort(rng.choice(d, size=k, replace=False)).astype(np.int32)
        vals = np.ones(k) if values == "onehot" else rng.uniform(0.01, 0.3, k)
        rows.append((cols, vals))
    return rows


def best(fn, number: int, repeat: int = 7) -> float:
    """Best µs per call over repeat runs of number calls."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def row_timings(
    d: int, nnz: int, values: str, M: int, kind: int, rng: np.random.Generator
) -> dict[str, float]:
    rows = random_rows(rng, M, d, nnz, values)
    xs = random_rows(rng, 16, d, nnz, values)
    kern = get_registry().create("kernel", "rbf[gamma=0.5]" if kind == KIND_RBF else "linear")
    buf = SparseSupportBuffer(d, M)
    for r in rows:
        buf.add(r, 1.0)
    compiled = kern.compiled()
    out = np.empty(M)
    work = np.zeros(d)
    # One call per example: cycle through 16 examples so no single x stays in registers.
    it = iter(range(1 << 62))

    def sparse(strategy):
        def call():
            xi, xd = xs[next(it) & 15]
            _sparse.kernel_row(
                compiled,
                xi,
                xd,
                1.0,
                buf.starts,
                buf.ends,
                buf.indices,
                buf.data,
                buf.sq,
                out,
                M,
                strategy,
                work,
            )

        return call

    def buffer_row():
        buf._last_x = None  # measure the computation, not the cache of the last row
        buf.row(kern, xs[next(it) & 15])

    budget = 2e5 / max(1, M * nnz)  # about 0.2 s of calls per repeat at 1 ns per entry
    number = max(20, int(budget * 1000))
    res = {
        "merge": best(sparse(_sparse.STRATEGY_MERGE), number),
        "scatter": best(sparse(_sparse.STRATEGY_SCATTER), number),
        "store.row": best(buffer_row, number),
    }
    if M * d * 8 <= DENSE_LIMIT:
        S = buf.to_dense()
        sq = np.einsum("ij,ij->i", S, S)
        X = [np.zeros(d) for _ in xs]
        for x, (xi, xd) in zip(X, xs, strict=True):
            x[xi] = xd

        def dense():
            _kernels.kernel_row(compiled, S, sq, X[next(it) & 15], 1.0, out, M)

        res["dense"] = best(dense, max(5, number // max(1, d // (4 * nnz))))
        dbuf = SupportBuffer(d, M)
        for row in S:
            dbuf.add(row, 1.0)

        def dense_buffer_row():
            dbuf._last_x = None
            dbuf.row(kern, X[next(it) & 15])

        res["dense store.row"] = best(dense_buffer_row, max(5, number // max(1, d // (4 * nnz))))
        del dbuf
        del S
    return res


LEARNERS = (
    "rbp[budget=500]",
    "bpa_s[budget=500]",
    "nogd[budget=500]",
    "norma[budget=500]",
    "perceptron",
)
#: Table (a) also times the learners whose loops took CSR blocks later (no budget for pa,
#: pegasos, pistol, sgd, asgd and the averaged perceptron: their models grow).
LEARNERS_A9A = (
    *LEARNERS,
    "pa",
    "pegasos",
    "bsgd[budget=500]",
    "bsgd[budget=500,maintenance=removal]",
    "bsgd[budget=500,maintenance=projection]",
    "bogd[budget=500]",
    "pistol",
    "sgd",
    "asgd",
    "svmd[budget=500]",
    "averaged_perceptron",
)


def row_by_row(learn: Callable[[Any, np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
    """``learn`` (a CSR block path) called on one-row blocks: one compiled call per row, for
    a learner without a per-row path of its own (the perceptron)."""

    def per_row(X, y: np.ndarray) -> np.ndarray:
        parts = [learn(X[i : i + 1], y[i : i + 1]) for i in range(X.shape[0])]
        return np.concatenate(parts) if parts else np.empty(0)

    return per_row


def learner_us(spec: str, X, y: np.ndarray, warm: int, per_row: bool = False) -> float:
    """µs per example of learn_predict_many on X[warm:] after learning X[:warm]; with
    ``per_row``, CSR rows go through the per-row path (one compiled call per row), the path
    before the compiled loops over CSR blocks."""
    reg = get_registry()
    cls = reg.entry("algorithm", spec.split("[")[0]).cls
    loss = reg.create("loss", "hinge") if cls.uses_loss else None
    algo = reg.create(
        "algorithm", spec, kernel=reg.create("kernel", "rbf[gamma=0.5]"), loss=loss, seed=0
    )
    if per_row:
        marked = getattr(algo, "_learn_predict_marked", None)
        block = getattr(algo, "_learn_predict_sparse", None)
        if block is None:  # a learner on kbench.learners: one path, one-row CSR blocks
            algo.learn_predict_many = row_by_row(algo.learn_predict_many)
        else:
            algo._learn_predict_sparse = marked or row_by_row(block)
    algo.learn_predict_many(X[:warm], y[:warm])
    t0 = time.perf_counter()
    algo.learn_predict_many(X[warm:], y[warm:])
    return (time.perf_counter() - t0) / (X.shape[0] - warm) * 1e6


def rcv1_like(rng: np.random.Generator, n: int, nnz: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """n rows of the rcv1 shape with about nnz non-zeros, labels from a sparse hyperplane."""
    d = SHAPES["rcv1"][0]
    rows = random_rows(rng, n, d, nnz, "tfidf")
    indptr = np.cumsum([0] + [len(r[0]) for r in rows])
    X = sp.csr_matrix(
        (np.concatenate([r[1] for r in rows]), np.concatenate([r[0] for r in rows]), indptr),
        shape=(n, d),
    )
    w = rng.standard_normal(d)
    score = X @ w
    return X, np.where(score > np.median(score), 1.0, -1.0)


def rcv1_table(
    rng: np.random.Generator, n: int, title: str, columns: str
) -> tuple[sp.csr_matrix, np.ndarray]:
    """n rcv1-shaped rows (75 non-zeros on average) for a table; prints its title and
    column heads."""
    X, y = rcv1_like(rng, n, 75)
    print(f"\n{title}\n")
    print(columns)
    return X, y


def a9a_rows(n: int) -> tuple[np.ndarray, np.ndarray, sp.csr_matrix]:
    """The first n examples of the bundled a9a: dense rows, labels and CSR rows."""
    from kbench.data.streams import StreamSpec, build_stream

    a9a = build_stream(StreamSpec("a9a", n=n), get_registry())
    Xd = np.ascontiguousarray(a9a.X)
    return Xd, np.asarray(a9a.y), sp.csr_matrix(Xd)


def learners(quick: bool, rng: np.random.Generator, a9a_only: bool = False) -> None:
    n_a9a, warm = (1500, 700) if quick else (4000, 1000)
    Xd, y, Xs = a9a_rows(n_a9a)
    print(
        f"\n3a. a9a, {n_a9a - warm} timed examples after {warm}: µs per example (RBF, best of 5)\n"
    )
    print("CSR per row: one compiled call per row (the path before the block loops)\n")
    print(f"{'learner':40} {'dense':>9} {'CSR':>9} {'CSR/dense':>10} {'per row':>9} {'/dense':>7}")
    for spec in LEARNERS_A9A:
        # Best of 5 (a fresh learner each): the cells take a fraction of a second.
        td, ts, tr = (
            min(learner_us(spec, X, y, warm, per_row) for _ in range(5))
            for X, per_row in ((Xd, False), (Xs, False), (Xs, True))
        )
        print(
            f"{spec:40} {td:9.1f} {ts:9.1f} {ts / td:9.2f}x {tr:9.1f} {tr / td:6.2f}x",
            flush=True,
        )
    if a9a_only:
        return

    n_s, n_d, warm = (1200, 600, 550) if quick else (3000, 650, 550)
    X, y = rcv1_table(
        rng,
        n_s,
        f"3b. rcv1 shape (47 236 features, 75 nnz): µs per example after {warm}; CSR timed on "
        f"{n_s - warm}, dense on {n_d - warm} examples",
        f"{'learner':20} {'dense':>10} {'CSR':>9} {'dense/CSR':>10}",
    )
    for spec in LEARNERS:
        ts = learner_us(spec, X, y, warm)
        td = learner_us(spec, X[:n_d].toarray(), y[:n_d], warm)
        print(f"{spec:20} {td:10.1f} {ts:9.1f} {td / ts:9.1f}x", flush=True)

    print(
        "\n3c. rcv1 shape as nnz doubles (CSR): µs per example (best of 5); "
        "scaled = (t/nnz)/(t₀/nnz₀)\n"
    )
    sizes = (25, 50, 100) if quick else (25, 50, 100, 200, 400)
    print(f"{'learner':20} " + " ".join(f"{f'nnz={k}':>16}" for k in sizes))
    data = {k: rcv1_like(rng, 1500 if quick else 2000, k) for k in sizes}
    for spec in LEARNERS:
        cells, base = [], None
        for k in sizes:
            X, y = data[k]
            t = min(learner_us(spec, X, y, 550) for _ in range(5))
            base = base or t / k
            cells.append(f"{t:8.1f} ({t / k / base:4.2f})")
        print(f"{spec:20} " + " ".join(f"{c:>16}" for c in cells), flush=True)


def idsvm_part(quick: bool, rng: np.random.Generator) -> None:
    """Table 4: IDSVM on dense and CSR rows (a9a, rcv1 shape), and its stored rows' bytes."""
    reg = get_registry()

    def run(X, y: np.ndarray, warm: int) -> tuple[float, np.ndarray, Any]:
        algo = reg.create(
            "algorithm", "idsvm[C=1.0]", kernel=reg.create("kernel", "rbf[gamma=0.5]")
        )
        algo.learn_predict_many(X[:warm], y[:warm])
        t0 = time.perf_counter()
        pred = algo.learn_predict_many(X[warm:], y[warm:])
        return (time.perf_counter() - t0) / (X.shape[0] - warm) * 1e6, pred, algo

    def stored_bytes(algo: Any) -> int:
        if algo._pool is None:
            return algo.X.nbytes + algo.store.X.nbytes
        return algo._pool.nbytes() + algo.store.buf.nbytes()

    n, warm = (1200, 800) if quick else (2000, 1000)
    Xd, y, Xs = a9a_rows(n)
    print(f"\n4a. IDSVM[C=1], rbf[gamma=0.5], a9a: µs per example on {n - warm} after {warm}\n")
    print(f"{'rows':6} {'µs':>9} {'best of 3':>22} {'SVs':>6}")
    runs = {kind: [run(X, y, warm) for _ in range(3)] for kind, X in (("dense", Xd), ("CSR", Xs))}
    for kind, cells in runs.items():
        times = ", ".join(f"{t:.0f}" for t, _, _ in cells)
        print(f"{kind:6} {min(t for t, _, _ in cells):9.1f} {times:>22} "
              f"{cells[0][2].stats()['n_support']:6d}")  # fmt: skip
    td, ts = (min(t for t, _, _ in runs[k]) for k in ("dense", "CSR"))
    same = np.array_equal(runs["dense"][0][1], runs["CSR"][0][1])
    print(f"CSR / dense {ts / td:.2f}x; the same predictions: {same}")

    n_s, n_d, warm = (700, 400, 300) if quick else (1500, 500, 300)
    X, y = rcv1_table(
        rng,
        n_s,
        f"4b. IDSVM on the rcv1 shape (47 236 features, 75 nnz): µs per example after {warm}"
        " (one run each)",
        f"{'rows':10} {'examples':>9} {'µs':>9} {'stored rows (bytes)':>20} {'SVs':>6}",
    )
    got = {}
    for kind, A, m in (
        ("densified", X[:n_d].toarray(), n_d),
        ("CSR", X[:n_d], n_d),
        ("CSR", X, n_s),
    ):
        t, pred, algo = run(A, y[:m], warm)
        print(f"{kind:10} {m:9d} {t:9.1f} {stored_bytes(algo):20d} "
              f"{algo.stats()['n_support']:6d}", flush=True)  # fmt: skip
        got[kind, m] = t, pred
        del algo, A  # the densified rows: 0.4 GB
    (td, pd), (ts, ps) = got["densified", n_d], got["CSR", n_d]
    print(f"densified / CSR {td / ts:.0f}x; the same predictions: {np.array_equal(pd, ps)}")


RAMP = ("online_svm_r[C=10]", "online_asvm_r[C=10]", "active_margin", "ramp_cccp[C=10]")


def ramp_run(spec: str, X, y: np.ndarray, gamma: float) -> tuple[float, np.ndarray, Any]:
    """µs per example of one pass of learn_predict_many (a fit for ramp_cccp), its
    predictions and the learner (RBF of this γ)."""
    reg = get_registry()
    kernel = reg.create("kernel", f"rbf[gamma={gamma}]")
    algo = reg.create("algorithm", spec, kernel=kernel, seed=0)
    t0 = time.perf_counter()
    if algo.offline:
        algo.fit(X, y)
    else:
        pred = algo.learn_predict_many(X, y)
    t = (time.perf_counter() - t0) / X.shape[0] * 1e6
    if algo.offline:
        pred = algo.predict_many(X)
    return t, np.asarray(pred), algo


def ramp_bytes(algo: Any) -> int:
    """The store's bytes of a ramp learner, or of the one inside an active wrapper."""
    return getattr(algo, "learner", algo).store_bytes()


def ramp_learners(quick: bool, rng: np.random.Generator) -> None:
    n = 1500 if quick else 4000
    Xd, y, Xs = a9a_rows(n)
    print(f"\n5a. a9a, {n} examples: µs per example (RBF γ = 0.05, best of 3)\n")
    print(f"{'learner':20} {'dense':>9} {'CSR':>9} {'CSR/dense':>10} {'SVs':>6} {'same':>5}")
    for spec in RAMP:
        runs = {}
        for name, X in (("dense", Xd), ("csr", Xs)):
            runs[name] = min((ramp_run(spec, X, y, 0.05) for _ in range(3)), key=lambda r: r[0])
        (td, pd, ad), (ts, ps, as_) = runs["dense"], runs["csr"]
        same = bool(np.array_equal(pd, ps))
        sv = ad.stats()["n_support"]
        assert sv == as_.stats()["n_support"], spec
        print(f"{spec:20} {td:9.1f} {ts:9.1f} {ts / td:9.2f}x {sv:6d} {same!s:>5}", flush=True)

    n_s, n_d = (600, 150) if quick else (2000, 250)
    X, y = rcv1_like(rng, n_s, 75)
    print(
        f"\n5b. rcv1 shape (47 236 features, 75 nnz): µs per example over the first {n_d} "
        f"examples, dense and CSR; CSR over {n_s}; bytes of the store of examples\n"
    )
    print(
        f"{'learner':20} {'dense':>10} {'CSR':>9} {'dense/CSR':>10} {'dense MB':>9} "
        f"{'CSR MB':>8} {f'CSR {n_s}':>9} {f'MB at {n_s}':>9}"
    )
    for spec in RAMP:
        td, pd, ad = ramp_run(spec, X[:n_d].toarray(), y[:n_d], 1.0)
        ts, ps, as_ = ramp_run(spec, X[:n_d], y[:n_d], 1.0)
        assert np.array_equal(pd, ps), spec
        tl, _, al = ramp_run(spec, X, y, 1.0)
        mb = [ramp_bytes(a) / 2**20 for a in (ad, as_, al)]
        print(
            f"{spec:20} {td:10.1f} {ts:9.1f} {td / ts:9.1f}x {mb[0]:9.1f} {mb[1]:8.2f} "
            f"{tl:9.1f} {mb[2]:9.2f}",
            flush=True,
        )


BSGD = ("bsgd[budget=500]", "bsgd[budget=500,maintenance=removal]")


def bsgd_run(
    spec: str, X, y: np.ndarray, warm: int, densify: bool = False
) -> tuple[float, np.ndarray, Any]:
    """µs per example of learn_predict_many on X[warm:] after X[:warm] (RBF γ = 0.5), the
    predictions of those examples and the learner; with ``densify``, the CSR rows X are
    handed over densified, 200 rows at a time (the densifying is timed too)."""
    reg = get_registry()
    algo = reg.create("algorithm", spec, kernel=reg.create("kernel", "rbf[gamma=0.5]"), seed=0)

    def learn(a: int, b: int) -> np.ndarray:
        if not densify:
            return algo.learn_predict_many(X[a:b], y[a:b])
        parts = [
            algo.learn_predict_many(X[i : min(i + 200, b)].toarray(), y[i : min(i + 200, b)])
            for i in range(a, b, 200)
        ]
        return np.concatenate(parts)

    learn(0, warm)
    t0 = time.perf_counter()
    pred = learn(warm, X.shape[0])
    return (time.perf_counter() - t0) / (X.shape[0] - warm) * 1e6, pred, algo


def bsgd_rows(algo: Any) -> tuple[int, float, int]:
    """Bytes of BSGD's stored rows (the dense rows, or the sparse store with the one-value
    stand-ins), and the mean and largest non-zeros of a stored row."""
    buf = algo._buf
    if algo._sparse is None:
        nnz = (buf.X[: buf.size] != 0).sum(axis=1)
        return buf.X.nbytes, float(nnz.mean()), int(nnz.max())
    store = algo._sparse.store
    nnz = store.ends[: store.size] - store.starts[: store.size]
    return algo._sparse.nbytes() + buf.X.nbytes, float(nnz.mean()), int(nnz.max())


def bsgd_part(quick: bool, rng: np.random.Generator) -> None:
    """Table 6: BSGD (merging, and removal) on dense and CSR rows (a9a, rcv1 shape)."""
    n, warm = (1500, 700) if quick else (4000, 1000)
    Xd, y, Xs = a9a_rows(n)
    print(
        f"\n6a. BSGD on a9a: µs per example on {n - warm} after {warm} (RBF γ = 0.5, best of 5)\n"
    )
    print(f"{'learner':38} {'dense':>9} {'CSR':>9} {'CSR/dense':>10} {'same':>5}")
    for spec in BSGD:
        runs = {
            kind: min((bsgd_run(spec, X, y, warm) for _ in range(5)), key=lambda r: r[0])
            for kind, X in (("dense", Xd), ("csr", Xs))
        }
        (td, pd, _), (ts, ps, _) = runs["dense"], runs["csr"]
        same = bool(np.array_equal(pd, ps))
        print(f"{spec:38} {td:9.1f} {ts:9.1f} {ts / td:9.2f}x {same!s:>5}", flush=True)

    n_s, n_d, warm = (1200, 900, 550) if quick else (3000, 1500, 550)
    X, y = rcv1_table(
        rng,
        n_s,
        f"6b. BSGD on the rcv1 shape (47 236 features, 75 nnz): µs per example after {warm} "
        f"(one run each), on {n_d - warm} examples (densified and CSR) and on {n_s - warm} (CSR);"
        "\n    bytes of the stored rows, non-zeros of a stored row (mean, largest)",
        f"{'learner':38} {'rows':>9} {'examples':>8} {'µs':>9} {'rows MB':>8} "
        f"{'nnz mean':>9} {'max':>6} {'maint.':>7}",
    )
    for spec in BSGD:
        got = {}
        for kind, m in (("densified", n_d), ("CSR", n_d), ("CSR", n_s)):
            t, pred, algo = bsgd_run(spec, X[:m], y[:m], warm, densify=kind == "densified")
            nbytes, mean, largest = bsgd_rows(algo)
            print(
                f"{spec:38} {kind:>9} {m:8d} {t:9.1f} {nbytes / 2**20:8.2f} {mean:9.1f} "
                f"{largest:6d} {algo.stats()['maintenance_steps']:7.0f}",
                flush=True,
            )
            got[kind, m] = t, pred
            del algo  # its dense rows: 0.2 GB
        (td, pd), (ts, ps) = got["densified", n_d], got["CSR", n_d]
        print(f"{'':38} densified / CSR {td / ts:.1f}x; the same predictions: "
              f"{np.array_equal(pd, ps)}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer cases (a smoke run)")
    parser.add_argument(
        "--part",
        choices=("1", "2", "3", "3a", "idsvm", "ramp", "bsgd", "all"),
        default="all",
        help="which table (3a: only table 3a; idsvm: table 4, not in all; ramp: the ramp-loss "
        "learners, table 5; bsgd: BSGD, table 6, not in all)",
    )
    args = parser.parse_args()
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"load before: {uptime}  (cores: {os.cpu_count()})")
    rng = np.random.default_rng(0)
    with threadpool_limits(1):
        if args.part in ("1", "all"):
            print(
                "\n1. µs per kernel row (best of 7). Compiled calls: merge, scatter, dense; "
                "ratio = the faster sparse / dense.\n   Through the stores (Python included): "
                "store.row (SparseSupportBuffer), dense.row (SupportBuffer); ratio = store/dense.\n"
            )
            print(
                f"{'shape':6} {'kernel':6} {'M':>5} {'merge':>9} {'scatter':>9} {'dense':>9} "
                f"{'ratio':>7} {'store.row':>10} {'dense.row':>10} {'ratio':>7}"
            )
            shapes = ["a9a", "rcv1"] if args.quick else ["a9a", "rcv1", "url"]
            for shape in shapes:
                for kind, kname in ((KIND_RBF, "rbf"), (KIND_LINEAR, "linear")):
                    for M in (100, 1600):
                        t = row_timings(*SHAPES[shape], M, kind, rng)
                        nan = float("nan")
                        dense, drow = t.get("dense", nan), t.get("dense store.row", nan)
                        r1 = min(t["merge"], t["scatter"]) / dense
                        r2 = t["store.row"] / drow
                        print(
                            f"{shape:6} {kname:6} {M:5d} {t['merge']:9.2f} {t['scatter']:9.2f} "
                            f"{dense:9.2f} {r1:6.3f}x {t['store.row']:10.2f} {drow:10.2f} "
                            f"{r2:6.3f}x",
                            flush=True,
                        )
        if args.part in ("2", "all"):
            print(
                "\n2. RBF row as nnz doubles (rcv1 dimension, M = 1600); "
                "scaled = (t / nnz) / (t₀ / nnz₀)\n"
            )
            print(f"{'nnz':>5} {'merge':>9} {'scaled':>7} {'scatter':>9} {'scaled':>7}")
            base: dict[str, float] = {}
            d = SHAPES["rcv1"][0]
            for nnz in (10, 20, 40, 80, 160, 320) if not args.quick else (20, 40, 80):
                t = row_timings(d, nnz, "tfidf", 1600, KIND_RBF, rng)
                cells = []
                for s in ("merge", "scatter"):
                    base.setdefault(s, t[s] / nnz)
                    cells.append(f"{t[s]:9.2f} {t[s] / nnz / base[s]:7.2f}")
                print(f"{nnz:5d} {' '.join(cells)}", flush=True)
        if args.part in ("3", "3a", "all"):
            learners(args.quick, rng, a9a_only=args.part == "3a")
        if args.part == "idsvm":
            idsvm_part(args.quick, rng)
        if args.part in ("ramp", "all"):
            ramp_learners(args.quick, rng)
        if args.part == "bsgd":
            bsgd_part(args.quick, rng)
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"\nload after: {uptime}")


if __name__ == "__main__":
    main()
