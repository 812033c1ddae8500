"""The data cache on a9a: its size for many seeds against the data set's own size, and the
time to load a cached stream.

    OPENBLAS_NUM_THREADS=1 python scripts/bench_cache.py [--seeds 200] [--repeat 7]

Builds ``--seeds`` shuffled a9a streams (seeds 0..N-1) into a fresh cache folder, then
prints the folder's size (every file, in bytes) against the nbytes of a9a's arrays
(X, y, X_test, y_test as float64), and the median time of loading one cached stream next
to what hashing the stream's arrays costs (the check every cached load used to make) and a
1000×1000 matrix product in the same process, so the figures can be read on a busy machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path


def _median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="kbench-cache-bench-") as tmp:
        os.environ["KBENCH_CACHE"] = tmp
        import numpy as np

        from kbench.core.registry import get_registry
        from kbench.data.streams import StreamSpec, build_stream, get_stream
        from kbench.data.streams.stream import hash_stream

        reg = get_registry()
        t = time.perf_counter()
        first = get_stream(StreamSpec("a9a", seed=0), reg)
        cold = time.perf_counter() - t
        t = time.perf_counter()
        for seed in range(1, args.seeds):
            get_stream(StreamSpec("a9a", seed=seed), reg)
        per_seed = (time.perf_counter() - t) / max(1, args.seeds - 1)

        data = build_stream(StreamSpec("a9a", order="file"), reg)
        own = sum(a.nbytes for a in (data.X, data.y, data.X_test, data.y_test))
        size = sum(p.stat().st_size for p in Path(tmp).rglob("*") if p.is_file())
        files = sum(1 for p in Path(tmp).rglob("*") if p.is_file())
        print(f"a9a arrays (X, y, X_test, y_test): {own:,} bytes")
        print(
            f"cache after {args.seeds} seeds: {size:,} bytes in {files} files "
            f"= {size / own:.3f} x the data set"
        )

        spec = StreamSpec("a9a", seed=0)
        load = _median_time(lambda: get_stream(spec, reg), args.repeat)
        rehash = _median_time(
            lambda: hash_stream(spec, first.X, first.y, first.X_test, first.y_test), args.repeat
        )
        a = np.random.default_rng(0).random((1000, 1000))
        blas = _median_time(lambda: a @ a, args.repeat)
        print(f"first build (parse a9a, write the cache): {cold:.3f} s")
        print(f"each further seed (derive, hash, write a record): {per_seed:.3f} s")
        print(
            f"cached load: {load:.4f} s (median of {args.repeat}); hashing the stream, which "
            f"a cached load no longer does: {rehash:.4f} s; 1000x1000 matmul: {blas:.4f} s"
        )


if __name__ == "__main__":
    main()
