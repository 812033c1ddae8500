"""Peak resident memory of reading a LIBSVM text file: in blocks, and whole.

Writes rcv1-shaped LIBSVM files once (47 236 features, 75 non-zeros per line, seeded),
then reads each in a fresh process with :func:`kbench.data.libsvm_format.read_libsvm_csr`, as
the ``libsvm`` data set does: in blocks of ``BLOCK_BYTES`` of text (the default: a file of
several blocks goes to arrays on disk that the result maps), and whole (one block as large
as the file). Prints the file's size, each process's peak resident set (VmHWM) and the
seconds it took. The goal: the block reader's peak stays flat as the file grows.

Run: ``.venv/bin/python scripts/bench_libsvm_parse.py [--root /work/bench-data/libsvm]
[--lines 100000 200000 400000] [--clean]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

D, NNZ = 47_236, 75


def write_file(path: Path, lines: int, seed: int = 0) -> None:
    """``lines`` lines of ``label i:v ...`` (sorted 1-based indices), written in chunks."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as fh:
        for lo in range(0, lines, 10_000):
            n = min(10_000, lines - lo)
            cols = np.sort(rng.integers(1, D + 1, size=(n, NNZ)), axis=1)
            vals = rng.uniform(0.01, 0.3, size=(n, NNZ))
            labels = rng.choice([-1, 1], size=n)
            for y, c, v in zip(labels, cols, vals, strict=True):
                c, keep = np.unique(c, return_index=True)
                feats = " ".join(f"{j}:{x:.4f}" for j, x in zip(c, v[keep], strict=True))
                fh.write(f"{y} {feats}\n")


def child(path: str, mode: str) -> None:
    from kbench.data.libsvm_format import read_libsvm_csr

    size = Path(path).stat().st_size
    t = time.perf_counter()
    X, _ = read_libsvm_csr(path, block_bytes=None if mode == "blocks" else size + 1)
    seconds = time.perf_counter() - t
    with open("/proc/self/status") as fh:
        hwm = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM"))
    print(json.dumps({"n": X.shape[0], "nnz": int(X.nnz), "hwm_kb": hwm, "s": seconds}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, default=Path("/work/bench-data/libsvm"))
    p.add_argument("--lines", nargs="+", type=int, default=[100_000, 200_000, 400_000])
    p.add_argument("--clean", action="store_true", help="delete --root at the end")
    p.add_argument("--child", nargs=2, metavar=("PATH", "MODE"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(*args.child)
        return
    args.root.mkdir(parents=True, exist_ok=True)
    print("| lines | file MB | mode | peak RSS MiB | s |")
    print("|---:|---:|---|---:|---:|")
    for lines in args.lines:
        path = args.root / f"rcv1like-{lines}.svm"
        if not path.exists():
            write_file(path, lines)
        for mode in ("blocks", "whole"):
            cmd = [sys.executable, __file__, "--child", str(path), mode]
            out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
            mb = path.stat().st_size / 1e6
            print(f"| {lines} | {mb:.0f} | {mode} | {out['hwm_kb'] / 1024:.0f} | {out['s']:.1f} |")
    if args.clean:
        shutil.rmtree(args.root)


if __name__ == "__main__":
    main()
