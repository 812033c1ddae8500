"""What the tests share: the RBF kernel in NumPy and NumPy kernels with no compiled form, the
kernel, loss and learner factories, read-only arrays and a binary stream built from arrays,
small pieces of the algorithm references, checks that several learners' tests make alike
(refusals of bad specs, a study's recorded runs), the command line in a subprocess, and the
scripts of ``scripts/`` as modules.

The NumPy kernels take a learner off its compiled kernel rows onto the per-example Python
path (``kernel.row``), which the tests compare with the compiled path; the sigmoid kernel is
indefinite, for the learners' error paths.
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pytest

from kbench.core.components import Kernel, Loss
from kbench.core.registry import get_registry
from kbench.data.streams import Stream, StreamSpec
from kbench.execution.prequential import run_task
from kbench.execution.tasks import Task

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
#: The command line, run by this Python.
KBENCH = [sys.executable, "-m", "kbench.cli.main"]


def kbench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``kbench ARGS`` in a subprocess, its output as text; the terminal is 250 columns wide,
    so that no message or table line the tests read is wrapped."""
    return subprocess.run(
        [*KBENCH, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, COLUMNS="250"),
    )


def kbench_run(out: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``kbench run ARGS`` without worker processes, its results written to ``out``: it must
    succeed. Its output as text."""
    proc = kbench("run", *args, "--workers", "0", "--out", str(out), timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return proc


def kill_9_after(args: list[str], out: Path, tasks: int) -> set[str]:
    """Start ``kbench ARGS`` writing to ``out``, SIGKILL it once ``out`` holds ``tasks`` task
    files (or after 120 s), and return the names of the task files it left."""
    proc = subprocess.Popen([*KBENCH, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(list((out / "tasks").glob("*.parquet"))) < tasks and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return {p.name for p in (out / "tasks").glob("*.parquet")}


def assert_runs(out: Path, statuses: dict[str, str], reasons: dict[str, str]) -> None:
    """The study in ``out`` recorded each algorithm of ``statuses`` with that status, and
    each of ``reasons`` with a reason that the whole pattern matches."""
    runs = pd.read_parquet(out / "runs.parquet").set_index("algorithm")
    for algorithm, status in statuses.items():
        assert runs.loc[algorithm, "status"] == status, runs.loc[algorithm, "reason"]
    for algorithm, pattern in reasons.items():
        reason = runs.loc[algorithm, "reason"]
        assert re.fullmatch(pattern, reason, re.DOTALL), reason


def read_terminal(master: int) -> bytes:
    """All a child wrote to the pseudo-terminal whose master end is ``master``, read until the
    child closes it; closes ``master``."""
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return b"".join(chunks)


def script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as a module (a script's main runs only as ``__main__``); it
    imports ``_bench_common`` as it does when run, from the folder of scripts."""
    if str(SCRIPTS) not in sys.path:
        sys.path.append(str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rbf(A: np.ndarray, B: np.ndarray, gamma: float) -> np.ndarray:
    """exp(−γ‖a − b‖²) for every pair of rows of A and B."""
    A, B = np.atleast_2d(A), np.atleast_2d(B)
    return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


def linear_gram(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """aᵀb for every pair of rows of A and B: the linear kernel's Gram matrix."""
    return A @ B.T


def rbf_of(gamma: float) -> Callable[[np.ndarray, np.ndarray], float]:
    """The RBF kernel of this ``gamma`` on two vectors: exp(−γ‖a − b‖²) as a float."""

    def k(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.exp(-gamma * np.sum((a - b) ** 2)))

    return k


def readonly(a: Any) -> np.ndarray:
    """A read-only C-contiguous float64 copy, as the runner hands a stream's arrays over."""
    a = np.array(a, dtype=np.float64, order="C", copy=True)
    a.setflags(write=False)
    return a


def binary_stream(
    X: np.ndarray, y: np.ndarray, Xt: np.ndarray, yt: np.ndarray, *, dataset: str, seed: int = 0
) -> Stream:
    """A binary stream of these training and test arrays (read-only copies), id hashed."""
    arrays = [readonly(a) for a in (X, y, Xt, yt)]
    return Stream.of(StreamSpec(dataset=dataset, seed=seed), (*arrays, "binary", 2))


def checkerboard(n: int, seed: int = 0, noise: float = 0.15) -> tuple[np.ndarray, np.ndarray]:
    """The ramp spec's NCheckerboard: x ~ U[0, 4)², 4×4 board, a fraction ``noise`` of labels
    flipped."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2)) * 4
    y = np.where((np.floor(X[:, 0]) + np.floor(X[:, 1])) % 2 == 0, 1.0, -1.0)
    y[rng.random(n) < noise] *= -1
    return X, y


def task_data(task: str, n: int, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n Gaussian examples in d dimensions labelled for ``task``.

    binary: the XOR of the first two signs; multiclass: three classes around random centres;
    regression: a smooth function of the first two coordinates; novelty: all ones.
    """
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if task == "binary":
        y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    elif task == "multiclass":
        y = rng.integers(0, 3, n).astype(float)
        X = X + 1.5 * rng.standard_normal((3, d))[y.astype(int)]
    elif task == "regression":
        y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1]
    else:
        y = np.ones(n)
    return np.ascontiguousarray(X), y


def spec_options(
    spec: str, words: tuple[str, ...] = ("schedule", "nu_rule", "incremental")
) -> dict[str, Any]:
    """The options of ``name[key=value,...]`` as a reference's keyword arguments: true and
    false as booleans, the budget as an int, the options named in ``words`` as text, the
    others as floats."""
    out: dict[str, Any] = {}
    for item in spec[spec.index("[") + 1 : -1].split(","):
        key, value = item.split("=")
        if value in ("true", "false"):
            out[key] = value == "true"
        elif key in words:
            out[key] = value
        else:
            out[key] = int(value) if key == "budget" else float(value)
    return out


def norma_reference(
    X,
    y,
    *,
    loss,
    task,
    gamma,
    n_classes=3,
    eta=0.5,
    schedule="constant",
    tau=100.0,
    c=0.01,
    budget=10**9,
    offset=False,
    nu=0.0,
    margin0=1.0,
    eta_eps=1.0,
    nu_rule="log",
):
    """NORMA written out plainly (eqs. 31–35 and the spec's NORMA-ν note) with the RBF
    kernel of this ``gamma``: explicit shrinking of every coefficient, lists as the buffer,
    the loss plugin's derivative or the ν-losses at margin ε. Returns the predictions, the
    stored rows, their coefficients, the offsets and the final margin."""

    k = rbf_of(gamma)
    C = n_classes if task == "multiclass" else 1
    sv, coef, b, eps, preds = [], [], np.zeros(C), margin0, []
    for t, (x, yt) in enumerate(zip(X, y, strict=True)):
        F = sum((a * k(s, x) for s, a in zip(sv, coef, strict=True)), np.zeros(C)) + b
        preds.append(task_label(task, F, eps if nu > 0 else getattr(loss, "rho", 0.0)))
        s = 0
        if nu == 0:
            xi = np.atleast_1d(np.asarray(loss.derivative(F if C > 1 else F[0], yt), dtype=float))
        else:
            xi, s = margin_violation(task, F, yt, eps, C)
        factor = {
            "constant": 1.0,
            "inv_sqrt": 1 / np.sqrt(t + 1),
            "decay_tau": np.sqrt(tau / (tau + t)),
        }[schedule]
        e = eta * factor
        coef = [a * (1 - e * c) for a in coef]
        if np.any(xi != 0):
            sv.append(x)
            coef.append(-e * xi)
            if len(sv) > budget:
                sv.pop(0)
                coef.pop(0)
            if offset:
                b = b - e * xi
        if nu > 0:
            grad = (s - nu) if task != "regression" else (nu - s)
            if nu_rule == "log":
                eps = eps * np.exp(np.clip(-eta_eps * factor * eps * grad, -50, 50))
            else:
                eps = max(0.0, eps - eta_eps * factor * grad)
    return np.array(preds), sv, coef, b, eps


def zero_bias_svm(K: np.ndarray, y: np.ndarray, C: float, *, tol: float) -> np.ndarray:
    """The exact zero-bias hinge SVM: max 1ᵀα − ½αᵀQα, 0 ≤ α ≤ C, Q = yyᵀ ∘ K.

    Greedy exact coordinate steps until the projected gradient is below ``tol`` (its dual
    has no equality constraint, so single coordinates suffice): the reference optimum.
    """
    Q = np.outer(y, y) * K
    a = np.zeros(len(y))
    g = np.ones(len(y))  # ∂D/∂α = 1 − Qα
    for _ in range(2_000_000):
        pg = np.where(a <= 0.0, np.maximum(g, 0.0), np.where(a >= C, np.minimum(g, 0.0), g))
        i = int(np.argmax(np.abs(pg)))
        if abs(pg[i]) < tol:
            return a
        if Q[i, i] <= 0.0:  # k(x, x) = 0 (a zero vector, linear kernel): α enters linearly
            new = C if g[i] > 0.0 else 0.0
        else:
            new = min(C, max(0.0, a[i] + g[i] / Q[i, i]))
        g -= Q[:, i] * (new - a[i])
        a[i] = new
    raise AssertionError("the reference SVM did not converge")


def make_kernel(spec: str) -> Kernel:
    """The kernel ``spec`` from the registry."""
    return get_registry().create("kernel", spec)


def make_loss(spec: str) -> Loss:
    """The loss ``spec`` from the registry."""
    return get_registry().create("loss", spec)


def create(
    spec: str,
    *,
    kernel: str | Kernel,
    loss: str | Loss | None,
    task: str = "binary",
    n_classes: int = 2,
    seed: int = 0,
) -> Any:
    """The learner ``spec`` from the registry; kernel and loss by spec or as objects."""
    return get_registry().create(
        "algorithm",
        spec,
        kernel=make_kernel(kernel) if isinstance(kernel, str) else kernel,
        loss=make_loss(loss) if isinstance(loss, str) else loss,
        task=task,
        n_classes=n_classes,
        seed=seed,
    )


def run_stream(
    stream: Stream, algorithm: str, *, kernel: str | None, loss: str | None = None, **task: Any
) -> Any:
    """``algorithm`` run over ``stream`` by kbench's prequential runner (no memory tracing),
    with ``task``'s other settings (epochs, checkpoints, seed, options); the result, which
    must be ok."""
    spec = Task(algorithm=algorithm, kernel=kernel, loss=loss, stream=stream.spec, **task)
    result = run_task(spec, stream, get_registry(), trace_memory=False)
    assert result.status == "ok", result.run["reason"]
    return result


def same_with_a_tiny_cache(
    big: Any, tiny: Any, X: np.ndarray, y: np.ndarray, *, passes: int
) -> tuple[dict, dict]:
    """``passes`` passes over X, y through ``big``, a learner with a kernel-row cache, and
    ``tiny``, the same learner with a cache smaller than one row: the same predictions on
    every pass; ``tiny`` keeps no row and hits nothing, ``big`` hits. Both learners' stats."""
    for _ in range(passes):
        assert np.array_equal(big.learn_predict_many(X, y), tiny.learn_predict_many(X, y))
    sb, st = big.stats(), tiny.stats()
    assert st["cache_rows"] == 0 and st["cache_hits"] == 0 and st["cache_misses"] > 0
    assert sb["cache_hits"] > 0
    return sb, st


def ovr_error(base: str) -> float:
    """The online error, over the second half, of ``ovr[base=<base>]`` (RBF γ = 0.5) on 240
    examples of three well-separated Gaussian blobs in a seeded order."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 2)) + np.repeat([[0, 3], [3, 0], [-3, -3]], 80, axis=0)
    y = np.repeat([0.0, 1.0, 2.0], 80)
    order = rng.permutation(240)
    X, y = np.ascontiguousarray(X[order]), y[order]
    model = create(
        f"ovr[base={base}]", kernel="rbf[gamma=0.5]", loss=None, task="multiclass", n_classes=3
    )
    pred = model.learn_predict_many(X, y)
    return float(np.mean(pred[120:] != y[120:]))


def assert_block_labels(
    fast: Any, X: np.ndarray, y: np.ndarray, split: int, want: np.ndarray, C: int, task: str,
    *, rtol: float, atol: float,
) -> None:  # fmt: skip
    """The block path (``learn_predict_many`` over X split in two at ``split``) gives the labels
    of the reference decision values ``want``: exactly, or within rtol/atol for regression
    (a label is then the value, computed in another order)."""
    labels = np.concatenate(
        [
            fast.learn_predict_many(X[:split], y[:split]),
            fast.learn_predict_many(X[split:], y[split:]),
        ]
    )
    expect = np.array([fast.label_of(w if C > 1 else float(w[0])) for w in want])
    if task == "regression":
        np.testing.assert_allclose(labels, expect, rtol=rtol, atol=atol)
    else:
        assert np.array_equal(labels, expect)


def assert_one_line_error(spec: str, pattern: str, **context: Any) -> None:
    """``create(spec)`` (an RBF kernel and no loss unless ``context`` gives others) raises a
    ValueError matching ``pattern``, in one line."""
    with pytest.raises(ValueError, match=pattern) as err:
        create(spec, **({"kernel": "rbf", "loss": None} | context))
    assert "\n" not in str(err.value)


def assert_refused(make: Callable[[str], Any], refusals: dict[str, str]) -> None:
    """``make(spec)`` raises a ValueError (a SpecError is one) whose message matches the
    pattern, for every spec and pattern of ``refusals``."""
    for spec, pattern in refusals.items():
        with pytest.raises(ValueError, match=pattern):
            make(spec)


def range_refusals(name: str, ranges: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """(spec, loss, task, message) of the learner ``name`` (hinge loss, binary task) given
    out-of-range options: ``name[options]`` must fail with ``name: message``, for every
    options and message of ``ranges``."""
    return [
        (f"{name}[{options}]", "hinge", "binary", f"{name}: {m}") for options, m in ranges.items()
    ]


def online_kernel_refusals(name: str) -> list[tuple[str, str, str, str]]:
    """(spec, loss, task, message) of bad input that the learner ``name`` (NORMA or SVMD)
    refuses through their shared base: parameter ranges and losses that do not fit."""
    return [
        *range_refusals(
            name,
            {
                "eta=0.0": "eta must be in (0",
                "budget=0": "budget must be in [1",
                "nu=1.0": "nu must be in [0.0, 1.0), got",
            },
        ),
        (name, "hinge", "multiclass", f"{name}: loss 'hinge' cannot be used for multiclass tasks"),
        (
            f"{name}[nu=0.1]",
            "logistic",
            "binary",
            f"{name}: the ν-trick (nu > 0) adapts the margin of loss 'hinge'",
        ),
    ]


class NumpyRBF(Kernel):
    """A third-party RBF kernel in plain NumPy (no compiled form): the per-example path."""

    name = "numpy_rbf"
    constant_diagonal = True

    def __init__(self, *, gamma: float = 1.0) -> None:
        self.gamma = gamma

    def row(self, S, x, *, out=None, sq=None, xsq=None):
        return np.exp(-self.gamma * ((np.asarray(S) - x) ** 2).sum(-1))

    def matrix(self, A, B):
        return rbf(np.asarray(A), np.asarray(B), self.gamma)

    def diag(self, A):
        return np.ones(len(A))


class Sigmoid(Kernel):
    """tanh(a xᵀx' + c): not positive semi-definite in general (a test kernel)."""

    name = "sigmoid_test"

    def __init__(self, *, a: float = 0.5, c: float = 1.0) -> None:
        self.a, self.c = a, c

    def row(self, S, x, *, out=None, sq=None, xsq=None):
        return np.tanh(self.a * np.asarray(S) @ x + self.c)

    def matrix(self, A, B):
        return np.tanh(self.a * np.asarray(A) @ np.asarray(B).T + self.c)

    def diag(self, A):
        return np.tanh(self.a * (np.asarray(A) ** 2).sum(1) + self.c)


def python_loss(cls: type[Loss], name: str) -> type[Loss]:
    """``cls`` under another name and without its compiled form: the Python gradient path."""
    return type(
        f"Python{cls.__name__}",
        (cls,),
        {
            "__doc__": f"{cls.__name__} without its compiled form.",
            "name": name,
            "compiled": lambda self: None,
        },
    )


def loss_gradient(loss: Loss, F: np.ndarray, y: float, task: str) -> np.ndarray:
    """The loss derivative at the scores F, one entry per output (one unless multiclass)."""
    if task == "multiclass":
        return np.asarray(loss.derivative(F, y), dtype=float)
    return np.array([float(loss.derivative(float(F[0]), y))])


def task_label(task: str, F: np.ndarray, margin: float) -> float:
    """The prediction of each task from the scores F (one per output): the best class, the
    value, +1 at or above the novelty ``margin`` (else −1), or the sign with 0 as +1."""
    if task == "multiclass":
        return float(np.argmax(F))
    if task == "regression":
        return float(F[0])
    if task == "novelty":
        return 1.0 if F[0] - margin >= 0 else -1.0
    return 1.0 if F[0] >= 0 else -1.0


def margin_violation(task: str, F: np.ndarray, yt: float, eps: float, C: int) -> tuple:
    """The ε-insensitive hinge of each task at the scores F: (ξ, 1) if violated, else (0, 0).

    ξ is the gradient direction of the margin loss in the C outputs: multiclass pushes the
    true class up and the best other class down, regression pulls F towards y, novelty and
    binary push the margin up.
    """
    xi, s = np.zeros(C), 0
    if task == "multiclass":
        others = [j for j in range(C) if j != int(yt)]
        r = others[int(np.argmax(F[others]))]
        if eps + F[r] - F[int(yt)] > 0:
            xi[int(yt)], xi[r], s = -1.0, 1.0, 1
    elif task == "regression":
        if abs(F[0] - yt) > eps:
            xi[0], s = np.sign(F[0] - yt), 1
    elif task == "novelty":
        if F[0] < eps:
            xi[0], s = -1.0, 1
    elif yt * F[0] < eps:
        xi[0], s = -yt, 1
    return xi, s


def prequential(model: Any, X: np.ndarray, y: np.ndarray, path: str) -> np.ndarray:
    """A learner's predictions on X (learned as it goes) along one of its input paths:
    ``dense`` or ``csr`` rows in one ``learn_predict_many`` block, or ``one`` row at a time
    (``predict_one`` then ``learn_one``, the runner's per-example calls)."""
    if path == "one":
        got = []
        for x, t in zip(X, y, strict=True):
            got.append(model.predict_one(x))
            model.learn_one(x, t)
        return np.array(got)
    import scipy.sparse as sp

    return np.asarray(model.learn_predict_many(sp.csr_matrix(X) if path == "csr" else X, y))
