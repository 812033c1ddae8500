"""A plugin learner in plain Python on the learner toolkit, beside kbench's compiled one.

The example plugin's ``plain_rbp`` (``examples/kbench-plugin-example``) is the random
budget perceptron written as a plugin author writes it: a Python loop over the examples,
each kernel row computed by a :class:`kbench.api.SupportBuffer` in the compiled core. It
runs here beside the built-in compiled ``rbp`` (the same algorithm and random draws: the
predictions must be equal) and beside the same class with its kernel row and weighted sum
written in NumPy alone. a9a in file order (32 561 examples, 123 features, dense rows),
``rbf[gamma=0.01]``, B = 100, one pass; thread CPU time, best of ``--repeat``.

The last table says where the plain-Python learner's time goes: the compiled kernel rows
and weighted sums it calls, timed alone over the same examples, and the rest (the loop,
the calls, the comparisons) by difference.

    .venv/bin/python scripts/bench_plugin_toolkit.py [--repeat 3] [--n 32561]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from _bench_common import REPO, best_seconds

sys.path.insert(0, str(REPO / "examples" / "kbench-plugin-example"))

from kbench_plugin_example.random_budget import RandomBudgetPerceptron

from kbench.api import StreamSpec, SupportBuffer, get_registry, get_stream

GAMMA = 0.01
BUDGET = 100


class NumpyRandomBudgetPerceptron(RandomBudgetPerceptron):
    """``plain_rbp`` with its kernel row and weighted sum in NumPy instead of the toolkit's
    compiled calls (the same arrays, the same draws)."""

    def decision_one(self, x: np.ndarray) -> float:
        if self._buf is None:
            self._buf = SupportBuffer(len(x), self.budget)
        buf, m = self._buf, self._buf.size
        if m == 0:
            return 0.0
        k = np.exp(-GAMMA * (buf.sq[:m] + x @ x - 2.0 * (buf.X[:m] @ x)))
        return float(buf.alpha[:m, 0] @ k)


def a9a(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first n examples of a9a's training split in file order, as dense float rows."""
    stream = get_stream(StreamSpec("a9a", order="file"), get_registry())
    X = stream.X[:n]
    X = X.toarray() if hasattr(X, "toarray") else X
    return np.ascontiguousarray(X, dtype=float), np.asarray(stream.y[:n], dtype=float)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timing runs per learner")
    parser.add_argument("--n", type=int, default=32561, help="examples of a9a to learn")
    args = parser.parse_args(argv)
    reg = get_registry()
    kernel = reg.create("kernel", f"rbf[gamma={GAMMA}]")
    X, y = a9a(args.n)
    n = len(y)
    learners = {
        "rbp (built-in, compiled block)": lambda: reg.create(
            "algorithm", f"rbp[budget={BUDGET}]", kernel=kernel, task="binary", seed=0
        ),
        "plain_rbp (plugin, toolkit)": lambda: RandomBudgetPerceptron(
            kernel=kernel, budget=BUDGET, seed=0
        ),
        "plain_rbp on NumPy alone": lambda: NumpyRandomBudgetPerceptron(
            kernel=kernel, budget=BUDGET, seed=0
        ),
    }
    print(
        f"a9a, file order, {n} examples, rbf[gamma={GAMMA}], B = {BUDGET}, best of {args.repeat}\n"
    )
    print("| learner | µs per example | × rbp | online error | predictions as rbp's |")
    print("|---|---|---|---|---|")
    base = preds = None
    for label, make in learners.items():
        out: dict[str, np.ndarray] = {}

        def run(make=make, out=out) -> None:
            out["pred"] = make().learn_predict_many(X, y)

        us = 1e6 * best_seconds(run, repeat=args.repeat) / n
        base = base or us
        preds = out["pred"] if preds is None else preds
        same = "yes" if np.array_equal(out["pred"], preds) else "no"
        err = float(np.mean(out["pred"] != y))
        print(f"| {label} | {us:.2f} | {us / base:.2f} | {err:.4f} | {same} |")
        sys.stdout.flush()

    # Where plain_rbp's time goes: its compiled calls alone, on a full buffer.
    buf = SupportBuffer(X.shape[1], BUDGET)
    for i in range(BUDGET):
        buf.add(X[i], y[i])
    rows = [X[i] for i in range(n)]
    row_us = 1e6 * best_seconds(lambda: [buf.row(kernel, x) for x in rows], repeat=args.repeat) / n
    k = buf.row(kernel, rows[0]).copy()
    sum_us = 1e6 * best_seconds(lambda: [buf.scores(k) for _ in rows], repeat=args.repeat) / n
    print(f"\nplain_rbp, per example: kernel row (SupportBuffer.row, compiled) {row_us:.2f} µs, ")
    print(f"weighted sum (SupportBuffer.scores, compiled) {sum_us:.2f} µs; the rest is Python.")


if __name__ == "__main__":
    main()
