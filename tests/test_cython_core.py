"""The compiled core against plain NumPy references, and the learners against reference loops."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse

from helpers import make_kernel, norma_reference
from kbench.core.registry import get_registry
from kbench.cython_core import _kernels
from kbench.learners.support_buffer import SupportBuffer

RNG = np.random.default_rng(42)


#: The textbook formula of each kernel tested, from the inner products, the squared and the
#: L1 distances of every pair of rows.
FORMULAS = {
    "linear": lambda dots, sq, l1: dots,
    "rbf[gamma=0.3]": lambda dots, sq, l1: np.exp(-0.3 * sq),
    "rbf[sigma=2.0]": lambda dots, sq, l1: np.exp(-sq / 8.0),
    "poly[degree=3,scale=0.5,offset=1.0]": lambda dots, sq, l1: (0.5 * dots + 1.0) ** 3,
    "laplacian[gamma=0.2]": lambda dots, sq, l1: np.exp(-0.2 * l1),
}
KERNELS = list(FORMULAS)


def _ref_kernel(spec: str, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    diff = A[:, None, :] - B[None, :, :]
    return FORMULAS[spec](A @ B.T, (diff**2).sum(-1), np.abs(diff).sum(-1))


@pytest.mark.parametrize("spec", KERNELS)
def test_rows_and_matrices_match_numpy(spec: str) -> None:
    """Compiled rows, Gram blocks and diagonals equal the textbook formulas."""
    k = make_kernel(spec)
    S, B, x = RNG.standard_normal((300, 20)), RNG.standard_normal((7, 20)), RNG.standard_normal(20)
    assert np.allclose(k.row(S, x), _ref_kernel(spec, S, x[None, :])[:, 0], rtol=1e-12, atol=1e-12)
    assert np.allclose(k.matrix(S, B), _ref_kernel(spec, S, B), rtol=1e-12, atol=1e-12)
    assert np.allclose(k.diag(B), np.diag(_ref_kernel(spec, B, B)), rtol=1e-12)


@pytest.mark.parametrize("spec", KERNELS)
def test_buffer_rows_and_decisions(spec: str) -> None:
    """The buffer computes rows over its first `size` rows only, and block decisions match."""
    k = make_kernel(spec)
    buf = SupportBuffer(20, 64, n_outputs=3)
    S = RNG.standard_normal((40, 20))
    for i, s in enumerate(S):
        buf.add(s, np.array([1.0, -0.5, i / 10]))
    x = RNG.standard_normal(20)
    K = _ref_kernel(spec, S, x[None, :])[:, 0]
    assert np.allclose(buf.row(k, x), K)
    assert np.allclose(buf.scores(buf.row(k, x)), K @ buf.alpha[:40])
    # A lazy factor on the coefficients (BSGD's, Pegasos's): the same sums, scaled.
    assert np.allclose(buf.scores(buf.row(k, x), 0.25), 0.25 * (K @ buf.alpha[:40]))
    X = RNG.standard_normal((25, 20))
    assert np.allclose(buf.decision_many(k, X, block=7), _ref_kernel(spec, X, S) @ buf.alpha[:40])


def test_circular_buffer_evicts_oldest() -> None:
    """A full fixed-capacity buffer overwrites its oldest row."""
    buf = SupportBuffer(2, 3)
    for i in range(5):
        buf.add(np.array([i, 0.0]), float(i))
    assert buf.size == 3 and sorted(buf.X[:, 0]) == [2.0, 3.0, 4.0] and buf.head == 2


def test_buffer_put_replaces_a_stored_row_and_its_cached_kernel_row() -> None:
    """put(slot, ...) overwrites a stored row (a budget's removal): the next kernel row of
    the same x is recomputed, and a slot that holds no row is an IndexError."""
    k = make_kernel("rbf[gamma=0.5]")
    buf = SupportBuffer(2, 3)
    for i in range(3):
        buf.add(np.array([float(i), 0.0]), 1.0)
    x = np.array([2.0, 0.0])
    assert buf.row(k, x)[1] < 1.0
    assert buf.put(1, x, -2.0) == 1
    # the row was recomputed: x against itself is k = 1 (up to the compiled exp's rounding)
    assert buf.row(k, x)[1] == pytest.approx(1.0, rel=1e-14)
    assert buf.alpha[1, 0] == -2.0 and buf.sq[1] == 4.0
    assert buf.size == 3 and buf.head == 0
    with pytest.raises(IndexError, match=r"^slot 3 is not a stored row \(size 3\)$"):
        buf.put(3, x, 1.0)
    with pytest.raises(IndexError, match="slot 0 is not a stored row"):
        SupportBuffer(2, 3).put(0, x, 1.0)


def test_buffer_refuses_rows_of_the_wrong_shape_and_keeps_its_contents() -> None:
    """A plugin's bad row is a one-line error naming x, before the buffer changes; CSR or
    2-D rows in the dense buffer's row() too."""
    k = make_kernel("rbf[gamma=0.5]")
    buf = SupportBuffer(3, 2)
    buf.add(np.ones(3), 1.0)
    before = (buf.size, buf.head, buf.X.copy(), buf.alpha.copy())
    for bad in (np.ones(5), np.ones((1, 3)), [1.0, 2.0]):
        with pytest.raises(ValueError, match=r"^x must be a row of 3 values, got shape \("):
            buf.add(bad, 1.0)
        with pytest.raises(ValueError, match=r"^x must be a row of 3 values"):
            buf.put(0, bad, 1.0)
    assert (buf.size, buf.head) == before[:2]
    assert np.array_equal(buf.X, before[2]) and np.array_equal(buf.alpha, before[3])
    for bad in (np.ones((1, 3)), scipy.sparse.csr_matrix(np.ones((1, 3)))):
        with pytest.raises(ValueError, match=r"^x must be one dense row \(a 1-D float64 array\)"):
            buf.row(k, bad)
    with pytest.raises(ValueError, match=r"^kbench: kernel_row needs x .* float64"):
        buf.row(k, np.ones(3, dtype=np.float32))


@pytest.mark.parametrize("spec", ["linear", "rbf[gamma=0.5]", "poly[degree=2]"])
def test_compiled_gram_blocks_check_every_length(spec: str) -> None:
    """decision_block and kernel_matrix trust their loops to the lengths they are given: a
    block of rows wider than the stored ones, a short scratch or output block, or missing
    squared norms is a one-line error, never a read past the arrays."""
    compiled = make_kernel(spec).compiled()
    S, alpha, sq = np.ones((4, 3)), np.ones((4, 1)), np.full(4, 3.0)
    X, xsq = np.ones((2, 3)), np.full(2, 3.0)
    K, out = np.empty((2, 4)), np.empty((2, 1))
    _kernels.decision_block(compiled, S, sq, alpha, 4, X, xsq, K, out)
    bad = {
        "columns": dict(X=np.ones((2, 4))),
        "rows": dict(m=5),
        "scratch": dict(K=np.empty((1, 4))),
        "out": dict(out=np.empty((2, 2))),
    }
    for change in bad.values():
        args = dict(S=S, sq=sq, alpha=alpha, m=4, X=X, xsq=xsq, K=K, out=out) | change
        with pytest.raises(ValueError, match=r"^kbench: decision_block"):
            _kernels.decision_block(compiled, *args.values())
    norms = pytest.raises(ValueError, match=r"needs the squared norms of both blocks")
    if spec == "linear":  # the linear kernel reads no norms
        _kernels.decision_block(compiled, S, np.empty(0), alpha, 4, X, np.empty(0), K, out)
    else:
        with norms:
            _kernels.decision_block(compiled, S, sq, alpha, 4, X, np.empty(0), K, out)
    with pytest.raises(ValueError, match=r"^kbench: kernel_matrix: A has 3 columns but B has 4"):
        _kernels.kernel_matrix(compiled, X, xsq, np.ones((2, 4)), xsq, np.empty((2, 2)))
    with pytest.raises(ValueError, match=r"^kbench: kernel_matrix of 2×4 needs out"):
        _kernels.kernel_matrix(compiled, X, xsq, S, sq, np.empty((2, 3)))


@pytest.mark.parametrize(
    ("schedule", "loss", "offset"),
    [("constant", "hinge", False), ("inv_sqrt", "logistic", True), ("decay_tau", "hinge", True)],
)
def test_norma_matches_plain_reference(schedule: str, loss: str, offset: bool) -> None:
    """Compiled NORMA (lazy scaling, circular buffer) equals the plain algorithm."""
    reg = get_registry()
    X = RNG.standard_normal((300, 3))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    kw = {"eta": 0.7, "c": 0.05, "budget": 25, "schedule": schedule, "tau": 10.0, "offset": offset}
    algo = reg.create(
        "algorithm",
        "norma[" + ",".join(f"{k}={v}" for k, v in kw.items()) + "]",
        kernel=reg.create("kernel", "rbf[gamma=0.5]"),
        loss=reg.create("loss", loss),
    )
    pred = algo.learn_predict_many(np.ascontiguousarray(X), y)
    ref_pred, sv, coef, b, _ = norma_reference(
        X, y, loss=reg.create("loss", loss), task="binary", gamma=0.5, **kw
    )
    assert np.array_equal(pred, ref_pred)
    probe = RNG.standard_normal(3)
    f_ref = sum(a * np.exp(-0.5 * np.sum((s - probe) ** 2)) for s, a in zip(sv, coef, strict=True))
    assert algo.decision_one(probe) == pytest.approx(float((f_ref + b)[0]), rel=1e-9, abs=1e-12)
    assert algo.stats()["n_support"] == 25


def test_perceptron_matches_plain_reference() -> None:
    """The compiled kernel perceptron equals the textbook loop, through buffer growth."""
    reg = get_registry()
    X = RNG.standard_normal((400, 4))
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] > 0, 1.0, -1.0)
    algo = reg.create("algorithm", "perceptron", kernel=reg.create("kernel", "rbf[gamma=1.0]"))
    pred = algo.learn_predict_many(X, y)
    sv, coef, ref, evals = [], [], [], 0
    for x, yt in zip(X, y, strict=True):
        evals += len(sv)
        f = sum(a * np.exp(-np.sum((s - x) ** 2)) for s, a in zip(sv, coef, strict=True))
        ref.append(1.0 if f >= 0 else -1.0)
        if yt * f <= 0:
            sv.append(x)
            coef.append(yt)
    assert np.array_equal(pred, ref)
    assert algo.stats()["n_support"] == len(sv) > 64  # grew past its first allocation
    assert algo.stats()["kernel_evals"] == evals  # one row over the support set per example


def test_compiled_core_missing_fails_at_import() -> None:
    """Without the compiled core, import kbench fails at once and says how to build it."""
    code = "import sys; sys.modules['kbench.cython_core._kernels'] = None; import kbench"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode != 0
    assert (
        "kbench's compiled core (kbench.cython_core._kernels) could not be imported" in proc.stderr
    )
    assert "pip install -e ." in proc.stderr


def test_a_scaled_expansion_of_one_output_is_the_sum_times_the_factor() -> None:
    """One output is one dot product, then one multiplication, both in kbench's code: the
    scaled sum equals the unscaled one times the factor exactly, as a learner that kept
    ``scale`` apart found it before."""
    k, alpha = RNG.standard_normal(50), RNG.standard_normal((64, 1))
    plain, scaled = np.empty(1), np.empty(1)
    _kernels.expansion(k, alpha, 50, plain)
    _kernels.expansion(k, alpha, 50, scaled, 0.3)
    assert scaled[0] == plain[0] * 0.3


def test_kernel_row_sums_a_negative_xsq_as_sqnorm_does() -> None:
    """A negative ‖x‖² (float64 rows) is computed inside kernel_row with sqnorm's sum, so
    the row is the one given sqnorm(x): bit for bit, both sums being kbench's own."""
    from kbench.cython_core._kernels import KernelKind, KernelSpec

    rng = np.random.default_rng(7)
    S = rng.standard_normal((40, 13))
    sq, x = np.einsum("ij,ij->i", S, S), rng.standard_normal(13)
    given, summed = np.empty(40), np.empty(40)
    spec = KernelSpec(KernelKind.K_RBF, gamma=0.2)
    _kernels.kernel_row(spec, S, sq, x, _kernels.sqnorm(x), given, 40)
    _kernels.kernel_row(spec, S, sq, x, -1.0, summed, 40)
    np.testing.assert_array_equal(summed, given)
    S32, sq32, x32 = S.astype(np.float32), sq.astype(np.float32), x.astype(np.float32)
    with pytest.raises(ValueError, match=r"^kbench: kernel_row on float32 rows needs"):
        _kernels.kernel_row(spec, S32, sq32, x32, -1.0, np.empty(40, np.float32), 40)
