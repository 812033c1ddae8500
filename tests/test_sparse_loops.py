"""The compiled loops over CSR rows (``SparseBlock``).

A learner that declares a sparse loop learns a CSR block in one compiled call per block of
rows: the kernel rows come from the sparse store, and the rows it stores are written into
the store's pool, reserved beforehand. These tests hold the loops to the per-example path
(one compiled call per row, the store kept in step from Python), through blocks that fill
and overflow the budget, and check the store's pool between blocks.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from helpers import create
from kbench.cython_core import _sparse
from kbench.learners import expansion
from kbench.learners.sparse_buffer import SparseSupportBuffer

RBF = (1, 0.5, 1.0, 0.0, 1.0)  # Kernel.compiled() of rbf[gamma=0.5]


def stream(
    n: int, d: int = 60, seed: int = 0, classes: int = 2
) -> tuple[sp.csr_matrix, np.ndarray]:
    """n CSR rows of about 8 non-zeros (some empty), labels from a random hyperplane."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=8 / d, format="lil", random_state=rng, dtype=np.float64)
    X[::17] = 0.0  # empty rows
    X = X.tocsr()
    X.data = rng.uniform(-1.0, 1.0, X.nnz)
    score = X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n)
    if classes == 2:
        return X, np.where(score > 0.0, 1.0, -1.0)
    return X, np.digitize(score, np.quantile(score, [1 / 3, 2 / 3])).astype(float)


@pytest.mark.parametrize(
    "spec, kernel, classes, loss",
    [
        ("perceptron", "rbf[gamma=0.5]", 2, None),
        ("pa", "rbf[gamma=0.5]", 2, None),
        ("pa[variant=PA-II]", "poly[degree=2,offset=1.0]", 2, None),
        ("bpa_s[budget=8]", "rbf[gamma=0.5]", 2, None),
        ("bpa_s[budget=8]", "poly[degree=2,offset=1.0]", 2, None),
        ("rbp[budget=8]", "rbf[gamma=0.5]", 2, None),
        ("rbp[budget=8]", "rbf[gamma=0.5]", 3, None),
        ("projectron[budget=8,eta=0.05]", "rbf[gamma=0.5]", 2, None),
        ("projectronpp[budget=8]", "linear", 3, None),
        ("forgetron[budget=8]", "rbf[gamma=0.5]", 2, None),
        ("bogd[budget=8]", "rbf[gamma=0.5]", 2, "hinge"),
        ("bogd[budget=8,sampling=weighted]", "linear", 2, "logistic"),
        ("averaged_perceptron", "rbf[gamma=0.5]", 2, None),
        ("averaged_perceptron", "poly[degree=2,offset=1.0]", 3, None),
        ("pistol", "rbf[gamma=0.5]", 2, "logistic"),
        ("pistol", "rbf[gamma=0.5]", 3, "softmax"),
        ("sgd[eta=0.5]", "poly[degree=2,offset=1.0]", 2, "hinge"),
        ("asgd", "rbf[gamma=0.5]", 2, "logistic"),
        ("norma[budget=8]", "rbf[gamma=0.5]", 2, "hinge"),
        ("norma[budget=8,offset=true,nu=0.2]", "linear", 3, "multiclass_hinge"),
        ("svmd[budget=8]", "rbf[gamma=0.5]", 2, "hinge"),
        ("svmd[budget=8,incremental=exact]", "linear", 3, "softmax"),
        # No budget: the store doubles within a block.
        ("pegasos[lam=0.01]", "rbf[gamma=0.5]", 2, None),
        ("pegasos[lam=0.01,project=false]", "linear", 3, None),
        # Removal and projection move the last stored row into the freed slot.
        ("bsgd[budget=8,maintenance=removal]", "rbf[gamma=0.5]", 2, None),
        ("bsgd[budget=8,maintenance=projection]", "rbf[gamma=0.5]", 3, None),
        ("bsgd[budget=8]", "rbf[gamma=0.5]", 2, None),
        # A phase change at the budget: the loop stops for the Nyström map, within a block
        # (of 50 rows, the budget full within the first).
        ("nogd[budget=8]", "rbf[gamma=0.5]", 2, "hinge"),
        ("nogd[budget=8,eta=0.5]", "linear", 3, "softmax"),
    ],
)
def test_expansion_learns_csr_blocks_one_rows_and_dense_rows_alike(
    spec: str, kernel: str, classes: int, loss: str | None, monkeypatch
) -> None:
    """A toolkit learner (one block loop) on CSR blocks that fill the store within a block,
    on one CSR row at a time (``learn_one``) and on the rows densified: the same predictions,
    stored rows, coefficients and kernel evaluations. A budgeted learner's store stops at
    its budget, whose rows are then replaced within blocks."""
    monkeypatch.setattr(expansion, "BLOCK_ROWS", 50)
    X, y = stream(400, seed=1, classes=classes)
    if classes == 2:
        y[::3] *= -1.0  # noise: more mistakes than the 64 rows allocated at first
    task = "binary" if classes == 2 else "multiclass"
    got, one, dense = (
        create(spec, kernel=kernel, loss=loss, task=task, n_classes=classes, seed=3)
        for _ in range(3)
    )
    pred = np.concatenate(
        [got.learn_predict_many(X[:130], y[:130]), got.learn_predict_many(X[130:], y[130:])]
    )
    one_by_one = [(one.predict_one(X[i]), one.learn_one(X[i], y[i]))[0] for i in range(400)]
    np.testing.assert_array_equal(pred, dense.learn_predict_many(X.toarray(), y))
    np.testing.assert_array_equal(pred, one_by_one)
    want = dense.model.store
    m = want.size
    for store in (got.model.store, one.model.store):
        assert isinstance(store, SparseSupportBuffer)
        assert store.capacity == want.capacity and store.size == m
        # Grown, or capped at the budget (BSGD: one more, for the vector maintenance removes).
        assert want.capacity > 64 or want.capacity in (8, 9)
        np.testing.assert_array_equal(store.to_dense(), want.X[:m])
        # PA's τ divides by a loss whose inner products CSR rows sum in another order.
        np.testing.assert_allclose(store.alpha[:m], want.alpha[:m], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(store.sq[:m], want.sq[:m], rtol=1e-14)
    np.testing.assert_array_equal(got.model.store.alpha[:m], one.model.store.alpha[:m])
    assert got.model.store.kernel_evals == one.model.store.kernel_evals == want.kernel_evals
    # Counts equal; a float statistic (the Forgetron's scale) within the rounding of CSR rows.
    sizeless = {"model_bytes": 0}
    assert got.stats() | sizeless == pytest.approx(dense.stats() | sizeless, rel=1e-12)
    # NOGD stopped at the row that filled its budget, inside a block, and built its map.
    assert got.stats().get("nystrom_rank", 1) > 0
    np.testing.assert_array_equal(got.predict_many(X[:60]), dense.predict_many(X[:60]))


def test_the_pool_stays_bounded_over_many_blocks(monkeypatch) -> None:
    monkeypatch.setattr(expansion, "BLOCK_ROWS", 10)
    X, y = stream(2000, seed=2)
    y[::2] *= -1.0  # many mistakes: rows replaced all the time
    algo = create("rbp[budget=8]", kernel="rbf[gamma=0.5]", loss=None)
    algo.learn_predict_many(X, y)
    store = algo.model.store
    assert store.nnz == int(np.count_nonzero(store.to_dense()))
    # Freed regions are reclaimed between blocks: far below the 16 000 non-zeros learned.
    block_nnz = max(X.indptr[a + 10] - X.indptr[a] for a in range(0, 1990, 10))
    assert len(store.indices) <= 2 * (2 * store.nnz + 16 * 8 + block_nnz)


def test_block_reserves_and_compacts_the_pool() -> None:
    store = SparseSupportBuffer(30, 4, nnz_capacity=100)
    for _ in range(4):
        store.add((np.arange(0, 20, 4, dtype=np.int32), np.ones(5)), 1.0)
    for n in (20, 21, 22):  # longer rows into slot 0: each frees the region before it
        store.replace(0, (np.arange(n, dtype=np.int32), np.ones(n)), 1.0)
    live = store.nnz
    assert live == 37 and store.pool_end == 83
    X = sp.random(6, 30, density=0.5, format="csr", random_state=0)
    assert store.pool_end + X.nnz > len(store.indices)  # the block's rows do not fit
    before = store.to_dense()
    block = store.block(RBF, X.indptr.astype(np.int64), X.indices, X.data)
    # Compacted (at least half of the pool was free) and reserved for the block's rows.
    assert store.pool_end == live and len(store.indices) >= live + X.nnz
    assert block.n == 6 and block.pool_end == live and block.owned == live
    np.testing.assert_array_equal(store.to_dense(), before)
    store.absorb(block, 4)
    assert store.size == 4 and store.nnz == live
    np.testing.assert_array_equal(store.to_dense(), before)


def test_sparse_block_refusals() -> None:
    store = SparseSupportBuffer(10, 2, nnz_capacity=4)
    X = sp.csr_matrix(np.array([[1.0, 0, 2.0, 0, 0, 0, 0, 0, 0, 0]] * 3))
    xp = X.indptr.astype(np.int64)
    args = (RBF, _sparse.STRATEGY_SCATTER, store.work, store.starts, store.ends, store.room)
    pool = (store.indices, store.data, store.sq)
    with pytest.raises(ValueError, match="reserve them first"):
        _sparse.SparseBlock(*args, *pool, 0, 0, xp, X.indices, X.data)
    store._reserve(6)
    unsorted = np.array([2, 0] * 3, dtype=np.int32)
    with pytest.raises(ValueError, match="not sorted"):
        _sparse.SparseBlock(*args, store.indices, store.data, store.sq, 0, 0, xp, unsorted, X.data)
    assert store.block(RBF, xp, X.indices, X.data).n == 3  # sorted and reserved: accepted
