"""Per-example time of learners on a9a in two kbench trees, alternated: before and after.

Each round runs one child process per tree, one after the other, and each child times
every learner on the first ``--n`` examples of the bundled a9a (RBF γ = 0.5):

* ``dense`` and ``csr``: µs per example of ``learn_predict_many`` on the rows after the
  first ``--warm`` (learned first, untimed), as dense rows and as CSR rows;
* ``one``: µs per example of ``predict_one`` then ``learn_one``, dense rows, on the same
  rows (the runner's per-example path), both given the same row object as the runner
  gives them: a learner may keep the kernel row of ``predict_one`` for ``learn_one``.

Each cell is the best over ``--repeat`` fresh learners in a child and over the rounds,
so that a load that comes and goes on the machine hits both trees alike; ``--clock cpu``
(the default) times the process's CPU time, which a loaded machine's other processes
inflate less than the wall-clock time (``--clock wall``). Prints the table of both trees'
figures and after/before ratios.

The "before" tree is a folder on which ``import kbench`` finds the earlier kbench with its
plugins (``kbench/plugins``) and its built compiled core (``kbench/cython_core``), e.g.
``git archive`` of the earlier commit with ``plugins/`` and ``cython_core/`` (and its built
modules) moved into ``kbench/``. The "after" tree is the kbench this Python imports, or
such a folder given as ``--after``: a snapshot keeps a long run safe from edits to the
working tree, which the child processes of later rounds would otherwise import.

Run: ``.venv/bin/python scripts/bench_alternate.py --before FOLDER [--after FOLDER]
[--learners perceptron pa]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

PATHS = ("dense", "csr", "one")


def child(
    learners: list[str], n: int, warm: int, repeat: int, clock: str
) -> dict[str, dict[str, float]]:
    """µs per example of every learner and path in this process's kbench."""
    now = time.process_time if clock == "cpu" else time.perf_counter
    import scipy.sparse as sp
    from threadpoolctl import threadpool_limits

    from kbench.api import StreamSpec, get_registry
    from kbench.data.streams import build_stream

    reg = get_registry()
    a9a = build_stream(StreamSpec("a9a", n=n), reg)
    X = np.ascontiguousarray(a9a.X)
    y = np.asarray(a9a.y, dtype=np.float64)
    inputs = {"dense": X, "csr": sp.csr_matrix(X), "one": X}
    out: dict[str, dict[str, float]] = {}
    with threadpool_limits(1):
        for spec in learners:
            out[spec] = {}
            for path in PATHS:
                best = np.inf
                for _ in range(repeat):
                    cls = reg.entry("algorithm", spec.split("[")[0]).cls
                    loss = reg.create("loss", cls.default_loss) if cls.uses_loss else None
                    algo = reg.create(
                        "algorithm",
                        spec,
                        kernel=reg.create("kernel", "rbf[gamma=0.5]"),
                        loss=loss,
                    )
                    A = inputs[path]
                    algo.learn_predict_many(A[:warm], y[:warm])
                    t0 = now()
                    if path == "one":
                        for i in range(warm, n):
                            x = X[i]  # one row object for both calls, as the runner's
                            algo.predict_one(x)
                            algo.learn_one(x, y[i])
                    else:
                        algo.learn_predict_many(A[warm:], y[warm:])
                    best = min(best, (now() - t0) / (n - warm) * 1e6)
                out[spec][path] = best
    return out


def run_tree(folder: str | None, args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """One child process on the kbench of ``folder``, or on this kbench (None)."""
    env = dict(os.environ)
    if folder:
        env["PYTHONPATH"] = folder + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [
        sys.executable,
        __file__,
        "--child",
        "--n",
        str(args.n),
        "--warm",
        str(args.warm),
        "--repeat",
        str(args.repeat),
        "--clock",
        args.clock,
        "--learners",
        *args.learners,
    ]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, cwd="/")
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", help="folder holding the earlier kbench package")
    ap.add_argument("--after", help="folder holding the later kbench (default: this one)")
    ap.add_argument("--learners", nargs="+", default=["perceptron", "pa"])
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--warm", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.learners, args.n, args.warm, args.repeat, args.clock)))
        return
    if not args.before:
        ap.error("--before FOLDER is required")
    best: dict[str, dict] = {"before": {}, "after": {}}
    for r in range(args.rounds):
        for tree in ("before", "after") if r % 2 == 0 else ("after", "before"):
            got = run_tree(args.before if tree == "before" else args.after, args)
            for spec, cells in got.items():
                for path, us in cells.items():
                    key = (spec, path)
                    best[tree][key] = min(best[tree].get(key, np.inf), us)
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    print(
        f"a9a, {args.n - args.warm} timed examples after {args.warm}, RBF γ = 0.5, one BLAS "
        f"thread; µs per example ({args.clock} time), best of {args.repeat} × {args.rounds} "
        f"alternated rounds\n"
    )
    print(f"{'learner':24} {'path':6} {'before':>9} {'after':>9} {'after/before':>13}")
    for spec, path in best["before"]:
        b, a = best["before"][(spec, path)], best["after"][(spec, path)]
        print(f"{spec:24} {path:6} {b:9.2f} {a:9.2f} {a / b:12.3f}x")


if __name__ == "__main__":
    main()
