"""Peak resident memory of a task as its stream grows: 10^6, 3·10^6 and 10^7 examples.

Two streams, each written to disk once by a seeded generator, then converted once into
kbench's data cache (a memory-mapped file) by the data set ``ondisk`` of a small plugin
this script writes beside the data:

- dense: 10^7 examples × 100 features, float64 (8 GB), labels the sign of a random linear
  function;
- sparse: 10^7 examples × 10^5 features, 50 non-zeros per example (CSR: 6 GB), values in
  [0.01, 0.3], labels the sign of a random linear function.

Each measurement runs in a fresh process that loads the stream from the cache (``order=file``,
``n=N``; or, for the kinds ``dense-shuffle`` and ``sparse-shuffle``, the seeded permutation:
its row indices and labels mapped from the stream's order file in the cache, its rows
gathered from the mapped data a chunk at a time) and runs one task on it the way a worker
does (``kbench.execution.executors.execute``): the random budget perceptron, budget 200,
RBF kernel. It prints the process's resident memory after loading the stream (imports and
the mapped stream's header), its peak resident set while loading (VmHWM: imports and
whatever the load draws), the task's ``peak_memory`` as kbench records it (the largest
growth over the loaded process, measured while the learner runs), the peak resident set of
the run's end (VmHWM after the task's last reset of it: the last chunk, the result), and
the learner's µs per example. The goal: under 500 MB, and flat within 10 % from 10^6 to
10^7 examples.

Run: ``.venv/bin/python scripts/bench_memory.py [--root /work/bench-data] [--sizes ...]
[--kinds dense sparse dense-shuffle sparse-shuffle] [--options test_size=0.1 ...] [--clean]``.
``--options`` adds stream options to every stream measured (``test_size=0.1``,
``scale=standard``, ``dense=true``). The data (14 GB) and the cache (another 14 GB, and the
order files of shuffled streams: 12 bytes an example) go under ``--root``; ``--clean``
deletes that folder at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

N = 10_000_000
DENSE_D = 100
SPARSE_D, SPARSE_NNZ = 100_000, 50
CHUNK = 250_000
LEARNER = {
    "dense": ("rbp[budget=200]", "rbf[gamma=0.005]"),
    "sparse": ("rbp[budget=200]", "rbf[gamma=0.5]"),
}
#: What is measured: a data folder, and the stream's order (``-shuffle``: the seeded
#: permutation, gathered from the mapped cache a chunk at a time; otherwise ``order=file``).
KINDS = ("dense", "sparse", "dense-shuffle", "sparse-shuffle")

#: The data set of the plugin: the arrays of a folder, mapped read-only (never read whole).
PLUGIN = '''
"""Arrays of a folder as a data set: X.npy (dense) or data/indices/indptr.npy (CSR), y.npy."""
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from kbench import hookimpl
from kbench.core.components import Data, Dataset, param
from kbench.data.readers import note_source


class OnDisk(Dataset):
    """Memory-mapped .npy arrays of a folder (dense X, or CSR data/indices/indptr), y."""
    name = "ondisk"
    source = "file"
    path: str = param("")
    d: int = param(0)

    def _map(self, name):
        f = Path(self.path) / f"{name}.npy"
        note_source(f)
        return np.load(f, mmap_mode="r")

    def load(self, seed):
        y = self._map("y")
        if (Path(self.path) / "X.npy").exists():
            X = self._map("X")
        else:
            parts = (self._map("data"), self._map("indices"), self._map("indptr"))
            X = sp.csr_matrix(parts, shape=(len(y), self.d), copy=False)
        return Data(X=X, y=y, task="binary", n_classes=2)


@hookimpl
def kbench_register_datasets(register):
    register(OnDisk)
'''


def write_plugin(root: Path) -> Path:
    site = root / "site"
    (site / "kb_ondisk-1.0.dist-info").mkdir(parents=True, exist_ok=True)
    (site / "kb_ondisk.py").write_text(textwrap.dedent(PLUGIN))
    info = site / "kb_ondisk-1.0.dist-info"
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kb_ondisk\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[kbench]\nkb_ondisk = kb_ondisk\n")
    return site


def make_dense(folder: Path) -> None:
    from numpy.lib.format import open_memmap

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    w = rng.standard_normal(DENSE_D)
    X = open_memmap(folder / "X.tmp.npy", mode="w+", dtype=np.float64, shape=(N, DENSE_D))
    y = open_memmap(folder / "y.tmp.npy", mode="w+", dtype=np.float64, shape=(N,))
    for lo in range(0, N, CHUNK):
        block = rng.standard_normal((min(CHUNK, N - lo), DENSE_D))
        X[lo : lo + len(block)] = block
        y[lo : lo + len(block)] = np.where(block @ w > 0, 1.0, -1.0)
    X.flush(), y.flush()
    del X, y
    os.replace(folder / "X.tmp.npy", folder / "X.npy")
    os.replace(folder / "y.tmp.npy", folder / "y.npy")


def make_sparse(folder: Path) -> None:
    from numpy.lib.format import open_memmap

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    w = rng.standard_normal(SPARSE_D)
    nnz = N * SPARSE_NNZ
    data = open_memmap(folder / "data.tmp.npy", mode="w+", dtype=np.float64, shape=(nnz,))
    indices = open_memmap(folder / "indices.tmp.npy", mode="w+", dtype=np.int32, shape=(nnz,))
    y = open_memmap(folder / "y.tmp.npy", mode="w+", dtype=np.float64, shape=(N,))
    np.save(folder / "indptr.npy", np.arange(0, nnz + 1, SPARSE_NNZ, dtype=np.int32))
    for lo in range(0, N, CHUNK):
        m = min(CHUNK, N - lo)
        # SPARSE_NNZ distinct sorted columns per row: sorted draws from d − nnz + 1 values,
        # each shifted by its rank
        cols = np.sort(rng.integers(0, SPARSE_D - SPARSE_NNZ + 1, size=(m, SPARSE_NNZ)), axis=1)
        cols += np.arange(SPARSE_NNZ)
        vals = rng.uniform(0.01, 0.3, size=(m, SPARSE_NNZ))
        a, b = lo * SPARSE_NNZ, (lo + m) * SPARSE_NNZ
        indices[a:b] = cols.ravel()
        data[a:b] = vals.ravel()
        y[lo : lo + m] = np.where((vals * (w[cols] - w.mean())).sum(axis=1) > 0, 1.0, -1.0)
    for a in (data, indices, y):
        a.flush()
    del data, indices, y
    for name in ("data", "indices", "y"):
        os.replace(folder / f"{name}.tmp.npy", folder / f"{name}.npy")


def dataset(root: Path, kind: str) -> str:
    folder = root / kind
    return f'ondisk[path="{folder}"' + (f",d={SPARSE_D}]" if kind == "sparse" else "]")


def status_kb(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1])
    raise KeyError(key)


def child(kind: str, n: int | None, root: Path, what: str, options: list[str]) -> dict:
    """In a fresh process: build (``what="build"``) or run one task (``"run"``)."""
    from kbench.core.registry import get_registry
    from kbench.data.streams import StreamSpec, get_stream

    data, _, order = kind.partition("-")
    spec = StreamSpec(dataset=dataset(root, data), order=order or "file", n=n, **_options(options))
    t0 = time.perf_counter()
    stream = get_stream(spec, get_registry())
    loaded = time.perf_counter() - t0
    out = {
        "kind": kind,
        "n": stream.n,
        "load_s": loaded,
        "rss_loaded": status_kb("VmRSS:"),
        # the peak while the stream loaded: the task's memory measurement resets VmHWM
        "hwm_loaded": status_kb("VmHWM:"),
    }
    if what == "build":
        out["hwm"] = status_kb("VmHWM:")
        return out
    from kbench.execution.executors import execute
    from kbench.execution.tasks import Task

    algorithm, kernel = LEARNER[data]
    task = Task(algorithm=algorithm, kernel=kernel, loss=None, stream=spec)
    t0 = time.perf_counter()
    result = execute(task)
    run = result.run
    out |= {
        "status": run["status"],
        "reason": run.get("reason", ""),
        "wall_s": time.perf_counter() - t0,
        "peak_memory": run.get("peak_memory"),
        "us_per_example": run.get("us_per_example"),
        "online_error": run.get("online_error"),
        "n_support": run.get("n_support"),
        "hwm": status_kb("VmHWM:"),
    }
    return out


def _options(options: list[str]) -> dict:
    """Stream options given as key=value (``test_size=0.1 scale=standard dense=true``)."""
    from kbench.core.specs import coerce
    from kbench.data.streams import STREAM_OPTIONS

    pairs = (o.split("=", 1) for o in options)
    return {k: coerce(v, STREAM_OPTIONS[k], f"stream option {k!r}") for k, v in pairs}


def spawn(root: Path, site: Path, options: list[str], *args: str) -> dict:
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        KBENCH_LOAD_PLUGINS="kb_ondisk",
        KBENCH_CACHE=str(root / "cache"),
    )
    proc = subprocess.run(
        [sys.executable, __file__, "--root", str(root), "--options", *options, "--child", *args],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def mib(kb: float) -> str:
    return f"{kb / 1024:.0f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, default=Path("/work/bench-data"))
    p.add_argument("--kinds", nargs="+", choices=KINDS, default=["dense", "sparse"])
    p.add_argument("--sizes", nargs="+", type=int, default=[1_000_000, 3_000_000, N])
    p.add_argument("--clean", action="store_true", help="delete --root at the end")
    p.add_argument(
        "--options", nargs="*", default=[], help="stream options, e.g. test_size=0.1 scale=standard"
    )
    p.add_argument("--child", nargs=3, metavar=("WHAT", "KIND", "N"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        what, kind, n = args.child
        n_ = None if n == "all" else int(n)
        print(json.dumps(child(kind, n_, args.root, what, args.options)))
        return

    root = args.root
    root.mkdir(parents=True, exist_ok=True)
    site = write_plugin(root)
    for kind in args.kinds:
        data = kind.partition("-")[0]
        if not (root / data / "y.npy").exists():
            t0 = time.perf_counter()
            (make_dense if data == "dense" else make_sparse)(root / data)
            print(f"{data}: data written in {time.perf_counter() - t0:.0f} s", flush=True)
        # The one-time conversion into the cache, then each stream's record (its id hashes
        # its arrays once), so that the measured processes only map the cache file.
        # (a shuffled stream reuses its data folder's conversion)
        for n in (["all"] if kind == data else []) + [str(n) for n in args.sizes]:
            r = spawn(root, site, args.options if n != "all" else [], "build", kind, n)
            print(
                f"{kind} n={r['n']}: stream ready in {r['load_s']:.0f} s "
                f"(process peak {mib(r['hwm'])} MiB)",
                flush=True,
            )
    print(
        "\nkind             examples   RSS loaded  load peak  task peak_memory  run peak  "
        "µs/example  online error  wall s",
        flush=True,
    )
    rows = []
    for kind in args.kinds:
        for n in args.sizes:
            r = spawn(root, site, args.options, "run", kind, str(n))
            rows.append(r)
            if r["status"] != "ok":
                print(f"{kind} {n}: {r['status']}: {r['reason']}", flush=True)
                continue
            print(
                f"{kind:14} {r['n']:>11,}  {mib(r['rss_loaded']):>7} MiB  "
                f"{mib(r['hwm_loaded']):>5} MiB  {r['peak_memory'] / 2**20:>12.1f} MiB  "
                f"{mib(r['hwm']):>4} MiB  "
                f"{r['us_per_example']:>10.2f}  {r['online_error']:>12.4f}  {r['wall_s']:>6.0f}",
                flush=True,
            )
    (root / "bench_memory.json").write_text(json.dumps(rows, indent=1))
    print(f"\nload: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min); 2 cores")
    if args.clean:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
