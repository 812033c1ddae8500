"""kbench's compiled core against its floor: kernel rows, weighted sums and whole learners.

Run from the repository root (a script, not an asv benchmark; asv collects only
``time_``/``peakmem_``/``track_`` names)::

    .venv/bin/python benchmarks/bench_floor.py              # every table
    .venv/bin/python benchmarks/bench_floor.py rows --quick # one table, fewer shapes

Tables (all in one process, one BLAS thread, best of several interleaved rounds):

``rows``
    ``Kernel.row(S, x)`` of each compiled kernel over M stored vectors of dimension d, in
    float64 and float32, against (a) the best NumPy composition of the same computation
    (``S @ x`` with cached squared norms, then the elementwise function, into preallocated
    buffers) and (b) the bare BLAS matrix-vector product ``S @ x`` of the same shape, the
    memory-bandwidth floor. Targets: ratio (a) ≤ 1 everywhere, ratio (b) ≤ 1.3 for d ≥ 128.
``sums``
    The weighted sum ``alphaᵀ k`` (``SupportBuffer.scores`` and the raw compiled call)
    against NumPy's ``k @ alpha`` (itself one BLAS call).
``algorithms``
    Examples per second of every registered algorithm with a ``budget`` parameter, at
    budgets 100 and 1000, on a 784-dimensional binary stream, through the block fast path.
``profile``
    The share of NORMA's and BSGD's per-example time spent in the kernel row at M = 1024,
    d = 784: the compiled block loop and the learner's time are measured against the
    kernel rows alone for the same examples and the same stored vectors. For a sampling
    profile of the same steady state, attach ``perf record -F 1999 -p PID`` after the
    warm-up and read ``perf report --no-children --sort dso,symbol``: the row is BLAS's
    ``dgemv_kernel_4x4`` plus ``kb_rbf_d_avx512`` (the vectorised exp).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

# Imported before threadpool_limits(1) is entered: threadpoolctl only limits the BLAS
# libraries already loaded, and this loads SciPy's OpenBLAS, which the compiled core uses.
from kbench.cython_core import _kernels

KERNELS = {
    "linear": "linear",
    "rbf": "rbf[gamma=0.5]",
    "poly": "poly[degree=3,scale=0.5,offset=1.0]",
    "laplacian": "laplacian[gamma=0.5]",
}
SIZES = (256, 1024, 4096, 8192)
DIMS = (2, 8, 16, 128, 784)


def _registry():
    from kbench.core.registry import get_registry

    return get_registry()


def best_times(
    fns: dict[str, Callable[[], object]], *, rounds: int = 7, target: float = 2e-3
) -> dict[str, float]:
    """Seconds per call of each function: the best of ``rounds`` interleaved rounds."""
    numbers = {}
    for name, fn in fns.items():
        fn()
        t0 = time.perf_counter()
        fn()
        once = max(time.perf_counter() - t0, 1e-8)
        numbers[name] = int(min(100_000, max(1, target / once)))
    best = dict.fromkeys(fns, np.inf)
    for _ in range(rounds):
        for name, fn in fns.items():
            n = numbers[name]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            best[name] = min(best[name], (time.perf_counter() - t0) / n)
    return best


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.2f} µs"
    return f"{seconds * 1e3:8.3f} ms"


# -------------------------------------------------------------------------------------------
# Kernel rows
# -------------------------------------------------------------------------------------------


def numpy_row(
    kernel: str,
    S: np.ndarray,
    sq: np.ndarray,
    x: np.ndarray,
    out: np.ndarray,
    tmp: np.ndarray,
    Tmp: np.ndarray | None,
    params: dict[str, float],
) -> Callable[[], object]:
    """The best NumPy composition of a kernel row, into preallocated buffers.

    Everything that does not depend on x is computed once (as a learner would cache it):
    ``gamma·‖s‖²`` for RBF. The RBF composition leaves out the clamp of negative squared
    distances that kbench applies, in NumPy's favour.
    """
    dt = S.dtype.type
    if kernel == "linear":
        return lambda: np.matmul(S, x, out=out)
    if kernel == "rbf":
        g = dt(params["gamma"])
        gsq = (g * sq).astype(S.dtype)
        two_g = dt(2.0 * g)

        def rbf():
            np.matmul(S, x, out=out)
            np.multiply(out, two_g, out=out)
            np.subtract(out, gsq, out=out)
            np.subtract(out, dt(g * float(x @ x)), out=out)
            return np.exp(out, out=out)

        return rbf
    if kernel == "poly":
        scale, offset = dt(params["scale"]), dt(params["offset"])

        def poly():  # degree 3 by multiplication, faster than np.power
            np.matmul(S, x, out=out)
            np.multiply(out, scale, out=out)
            np.add(out, offset, out=out)
            np.multiply(out, out, out=tmp)
            return np.multiply(out, tmp, out=out)

        return poly
    g = dt(-params["gamma"])

    def laplacian():
        np.subtract(S, x, out=Tmp)
        np.abs(Tmp, out=Tmp)
        np.sum(Tmp, axis=1, out=out)
        np.multiply(out, g, out=out)
        return np.exp(out, out=out)

    return laplacian


def _inputs(
    m: int, d: int, dtype: type, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    S = (rng.standard_normal((m, d)) / np.sqrt(d)).astype(dtype)
    x = (rng.standard_normal(d) / np.sqrt(d)).astype(dtype)
    sq = np.einsum("ij,ij->i", S.astype(np.float64), S.astype(np.float64)).astype(dtype)
    return S, sq, x


def rows_table(
    sizes: tuple[int, ...],
    dims: tuple[int, ...],
    dtypes: tuple[type, ...] = (np.float64, np.float32),
) -> list[dict]:
    """One row per kernel, M, d and dtype."""
    reg = _registry()
    out_rows = []
    for dtype in dtypes:
        for kname, spec in KERNELS.items():
            kernel = reg.create("kernel", spec)
            params = {
                "gamma": getattr(kernel, "gamma", None) or 0.0,
                "scale": getattr(kernel, "scale", 1.0),
                "offset": getattr(kernel, "offset", 0.0),
            }
            for d in dims:
                for m in sizes:
                    S, sq, x = _inputs(m, d, dtype)
                    xsq = float(x.astype(np.float64) @ x.astype(np.float64))
                    out, ref, tmp = (np.empty(m, dtype=dtype) for _ in range(3))
                    Tmp = np.empty((m, d), dtype=dtype) if kname == "laplacian" else None
                    fns = {
                        "kbench": lambda k=kernel, S=S, x=x, out=out, sq=sq, xsq=xsq: k.row(
                            S, x, out=out, sq=sq, xsq=xsq
                        ),
                        "numpy": numpy_row(kname, S, sq, x, ref, tmp, Tmp, params),
                        "blas": lambda S=S, x=x, tmp=tmp: np.matmul(S, x, out=tmp),
                    }
                    fns["kbench"]()
                    fns["numpy"]()
                    got = np.asarray(kernel.row(S, x, sq=sq, xsq=xsq))
                    tol = 1e-10 if dtype == np.float64 else 2e-4
                    if got.dtype != dtype or not np.allclose(got, ref, rtol=tol, atol=tol):
                        raise AssertionError(
                            f"kbench: {kname} row M={m} d={d} {dtype.__name__} disagrees with NumPy "
                            f"(dtype {got.dtype}, max error {np.max(np.abs(got - ref)):.3g})"
                        )
                    t = best_times(fns)
                    out_rows.append(
                        {
                            "kernel": kname,
                            "M": m,
                            "d": d,
                            "dtype": np.dtype(dtype).name,
                            "kbench": t["kbench"],
                            "numpy": t["numpy"],
                            "blas": t["blas"],
                            "vs_numpy": t["kbench"] / t["numpy"],
                            "vs_blas": t["kbench"] / t["blas"],
                        }
                    )
    return out_rows


def print_rows(rows: list[dict]) -> None:
    """The rows table, with the targets checked."""
    print("\nKernel rows: Kernel.row(S, x) against the best NumPy composition and bare BLAS S @ x")
    print(
        f"{'kernel':<10}{'M':>6}{'d':>5} {'dtype':<8}{'kbench':>12}{'NumPy':>12}{'BLAS S@x':>12}"
        f"{'/NumPy':>8}{'/BLAS':>7}  target"
    )
    misses = 0
    for r in rows:
        ok_np = r["vs_numpy"] <= 1.0
        ok_blas = r["d"] < 128 or r["vs_blas"] <= 1.3
        flag = (
            "ok"
            if ok_np and ok_blas
            else "MISS " + ("(a)" if not ok_np else "") + ("(b)" if not ok_blas else "")
        )
        misses += flag != "ok"
        print(
            f"{r['kernel']:<10}{r['M']:>6}{r['d']:>5} {r['dtype']:<8}{_fmt(r['kbench'])}{_fmt(r['numpy'])}"
            f"{_fmt(r['blas'])}{r['vs_numpy']:>8.2f}{r['vs_blas']:>7.2f}  {flag}"
        )
    print(
        f"{len(rows) - misses} of {len(rows)} rows meet both targets "
        "((a) ≤ 1× NumPy everywhere, (b) ≤ 1.3× BLAS for d ≥ 128)"
    )


# -------------------------------------------------------------------------------------------
# Weighted sums
# -------------------------------------------------------------------------------------------


def sums_table(sizes: tuple[int, ...]) -> list[dict]:
    """SupportBuffer.scores and the raw compiled expansion against NumPy's k @ alpha."""
    from kbench.learners.support_buffer import SupportBuffer

    rows = []
    for dtype in (np.float64, np.float32):
        for outputs in (1, 10):
            for m in sizes:
                rng = np.random.default_rng(1)
                k = rng.uniform(0.0, 1.0, m).astype(dtype)
                alpha = rng.standard_normal((m, outputs)).astype(dtype)
                res = np.empty(outputs, dtype=dtype)
                fns: dict[str, Callable[[], object]] = {
                    "numpy": lambda k=k, a=alpha, r=res: np.matmul(k, a, out=r)
                }
                if dtype == np.float64:
                    buf = SupportBuffer(2, m, n_outputs=outputs)
                    buf.alpha[:] = alpha
                    buf.size = m
                    fns["scores"] = lambda buf=buf, k=k: buf.scores(k)
                    fns["compiled"] = lambda k=k, a=alpha, r=res, m=m: _kernels.expansion(
                        k, a, m, r
                    )
                else:
                    fns["compiled"] = lambda k=k, a=alpha, r=res, m=m: _kernels.expansion(
                        k, a, m, r
                    )
                got = np.empty(outputs, dtype=dtype)
                _kernels.expansion(k, alpha, m, got)
                if not np.allclose(got, k @ alpha, rtol=1e-4 if dtype == np.float32 else 1e-10):
                    raise AssertionError(
                        f"kbench: weighted sum M={m} C={outputs} disagrees with NumPy"
                    )
                t = best_times(fns)
                rows.append({"M": m, "outputs": outputs, "dtype": np.dtype(dtype).name, **t})
    return rows


def print_sums(rows: list[dict]) -> None:
    """The weighted-sum table."""
    print("\nWeighted sums alphaᵀ k: kbench against NumPy k @ alpha (one BLAS gemv)")
    print(
        f"{'M':>6}{'C':>4} {'dtype':<8}{'scores()':>12}{'compiled':>12}{'NumPy':>12}{'/NumPy':>8}"
    )
    for r in rows:
        scores = _fmt(r["scores"]) if "scores" in r else f"{'-':>11}"
        print(
            f"{r['M']:>6}{r['outputs']:>4} {r['dtype']:<8}{scores}{_fmt(r['compiled'])}{_fmt(r['numpy'])}"
            f"{r['compiled'] / r['numpy']:>8.2f}"
        )


# -------------------------------------------------------------------------------------------
# Learners
# -------------------------------------------------------------------------------------------


def _pixels(n: int, d: int = 784, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """A 784-dimensional binary stream in [0, 1] (two noisy prototype classes)."""
    rng = np.random.default_rng(seed)
    protos = rng.uniform(0.0, 1.0, (2, d))
    y = rng.integers(0, 2, n)
    X = np.clip(protos[y] + 0.6 * rng.standard_normal((n, d)), 0.0, 1.0)
    return X, np.where(y == 1, 1.0, -1.0)


def _build(name: str, budget: int | None):
    reg = _registry()
    cls = reg.entry("algorithm", name).cls
    kernel = reg.create("kernel", "rbf[gamma=0.005]") if cls.uses_kernel else None
    loss = reg.create("loss", cls.default_loss or "hinge") if cls.uses_loss else None
    extra = {} if budget is None else {"budget": budget}
    return reg.create(
        "algorithm", name, kernel=kernel, loss=loss, task="binary", n_classes=2, seed=0, **extra
    )


def _noise_labels(n: int) -> np.ndarray:
    """Random ±1 labels: every learner keeps making mistakes, so every budget fills."""
    return np.where(np.random.default_rng(7).random(n) < 0.5, 1.0, -1.0)


def algorithms_table(budgets: tuple[int, ...] = (100, 1000), n: int = 1000) -> list[dict]:
    """Examples per second through learn_predict_many once the budget is full.

    Labels are random so that every learner keeps updating: 3 × budget examples fill the
    budget, then ``n`` more are timed (best of three copies of the warm state).
    """
    import copy

    reg = _registry()
    rows = []
    for name in reg.names("algorithm"):
        cls = reg.entry("algorithm", name).cls
        if "budget" not in cls.parameters() or "binary" not in cls.tasks:
            continue
        for budget in budgets:
            X, _ = _pixels(3 * budget + n)
            y = _noise_labels(len(X))
            algo = _build(name, budget)
            warm = 3 * budget
            algo.learn_predict_many(X[:warm], y[:warm])
            dt = np.inf
            for _ in range(3):
                a = copy.deepcopy(algo)
                t0 = time.perf_counter()
                a.learn_predict_many(X[warm:], y[warm:])
                dt = min(dt, time.perf_counter() - t0)
            rows.append(
                {
                    "algorithm": name,
                    "budget": budget,
                    "n_support": algo.stats()["n_support"],
                    "per_s": (len(X) - warm) / dt,
                }
            )
    return rows


def print_algorithms(rows: list[dict]) -> None:
    """The examples-per-second table."""
    print(
        "\nExamples per second, d = 784, RBF kernel, block fast path, budget full (random labels)"
    )
    print(f"{'algorithm':<22}{'budget':>8}{'SVs held':>10}{'examples/s':>12}")
    for r in rows:
        print(f"{r['algorithm']:<22}{r['budget']:>8}{r['n_support']:>10}{r['per_s']:>12.0f}")


def profile(name: str, m: int = 1024, d: int = 784, n: int = 200) -> dict[str, float]:
    """Share of one learner's per-example time spent in the kernel row, at M = m, d = d.

    Labels are random, so that the learner keeps updating and fills its budget of m
    support vectors during a warm-up of 3m examples. Then ``n`` further examples go
    through (1) its compiled block loop ``learn_predict_many`` and (2) its Python
    one-by-one path (``predict_one`` then ``learn_one`` on the same row object, as the
    runner calls them), each from a copy of the warm state; and (3) the kernel rows alone,
    ``_kernels.kernel_row`` over M stored vectors of the same shape, for the same n
    examples. The shares are (3) / (1) and (3) / (2); best of nine interleaved rounds each.
    On a busy machine the timings scatter by several per cent; ``perf record`` of the block
    loop (see the module docstring) measures the same share without that noise.
    """
    import copy

    X, _ = _pixels(3 * m + n, d)
    y = _noise_labels(len(X))
    algo = _build(name, m)
    warm = 3 * m
    algo.learn_predict_many(X[:warm], y[:warm])
    held = int(algo.stats()["n_support"])
    SV = X[:held].copy()
    sq = np.einsum("ij,ij->i", SV, SV)
    Xn, yn = X[warm:], y[warm:]
    compiled = algo.kernel.compiled()
    krow = np.empty(max(held, 1))
    xsqs = np.einsum("ij,ij->i", Xn, Xn)

    def rows_only():
        t0 = time.perf_counter()
        for i in range(len(Xn)):
            _kernels.kernel_row(compiled, SV, sq, Xn[i], xsqs[i], krow, held)
        return time.perf_counter() - t0

    def block():
        a = copy.deepcopy(algo)
        t0 = time.perf_counter()
        a.learn_predict_many(Xn, yn)
        return time.perf_counter() - t0

    def one_by_one():
        a = copy.deepcopy(algo)
        t0 = time.perf_counter()
        for i in range(len(Xn)):
            x = Xn[i]
            a.predict_one(x)
            a.learn_one(x, yn[i])
        return time.perf_counter() - t0

    t_rows = t_block = t_one = np.inf
    for _ in range(9):
        t_rows = min(t_rows, rows_only())
        t_block = min(t_block, block())
        t_one = min(t_one, one_by_one())
    return {
        "algorithm": name,
        "M": held,
        "d": d,
        "row_us": t_rows / n * 1e6,
        "block_us": t_block / n * 1e6,
        "one_us": t_one / n * 1e6,
        "share_block": t_rows / t_block,
        "share_one": t_rows / t_one,
    }


def print_profile(rows: list[dict]) -> None:
    """The kernel-row share table."""
    print(
        "\nShare of per-example time in the kernel row (rows alone vs the learner, same examples)"
    )
    print(
        f"{'algorithm':<12}{'M':>6}{'d':>5}{'row µs':>9}{'block µs':>10}{'share':>7}{'one-by-one µs':>15}{'share':>7}"
    )
    for r in rows:
        print(
            f"{r['algorithm']:<12}{r['M']:>6}{r['d']:>5}{r['row_us']:>9.1f}{r['block_us']:>10.1f}"
            f"{r['share_block']:>7.0%}{r['one_us']:>15.1f}{r['share_one']:>7.0%}"
        )


def main(argv: list[str]) -> int:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "tables",
        nargs="*",
        choices=["rows", "sums", "algorithms", "profile", []],
        help="tables to print (default: all)",
    )
    parser.add_argument("--quick", action="store_true", help="fewer shapes")
    args = parser.parse_args(argv)
    tables = args.tables or ["rows", "sums", "algorithms", "profile"]
    sizes = (256, 4096) if args.quick else SIZES
    dims = (2, 784) if args.quick else DIMS
    with threadpool_limits(1):
        blas = {
            i["internal_api"]: i.get("architecture")
            for i in threadpool_info()
            if i["user_api"] == "blas"
        }
        print(
            f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
            f"NumPy {np.__version__}, BLAS {blas}, one thread"
        )
        if "rows" in tables:
            print_rows(rows_table(sizes, dims))
        if "sums" in tables:
            print_sums(sums_table(sizes))
        if "algorithms" in tables:
            print_algorithms(algorithms_table())
        if "profile" in tables:
            print_profile(
                [
                    profile(name)
                    for name in ("norma", "bsgd")
                    if name in _registry().names("algorithm")
                ]
            )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.exit(main(sys.argv[1:]))
