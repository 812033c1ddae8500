"""Sparse kernel rows (cython_core/_sparse.pyx) and the sparse support-vector store.

Every sparse kernel row is compared with the dense kernel's row on the densified data.
The two sum the inner product (or L1 distance) in different orders: the dense row runs
over all d entries in SIMD lanes or BLAS blocks, the sparse one over the non-zeros in
index order (the scatter's Laplacian as ‖x‖₁ plus corrections). Each order is within a few
ulp per term of the exact sum, so the rows agree to 1e-12 relative, not bitwise; where a
sum cancels (an inner product of mixed signs near zero) the bound is relative to the sum
of the magnitudes of its terms instead.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from helpers import make_kernel
from kbench.cython_core import _sparse
from kbench.learners.sparse_buffer import SparseSupportBuffer, as_sparse_row, sparse_kernel_row

RTOL = 1e-12  # see the module docstring: a different summation order, not a different formula
KERNELS = [
    "linear",
    "poly[degree=3,scale=0.5,offset=1.0]",
    "poly[degree=7]",
    "rbf[gamma=0.5]",
    "laplacian[gamma=0.3]",
]


def random_csr(
    rng: np.random.Generator, n: int, d: int, nnz: int, *, nonnegative: bool = False
) -> sp.csr_matrix:
    """n rows of dimension d with about nnz non-zeros each, and the awkward cases: an empty
    row, single-feature rows, the first and the last feature."""
    rows = []
    for r in range(n):
        if r % 7 == 3:
            cols = np.zeros(0, dtype=np.int64)  # an empty row
        elif r % 7 == 5:
            cols = np.array([rng.integers(d)])  # a single feature
        elif r % 7 == 6:
            cols = np.array([0, d - 1])  # the extreme indices
        else:
            k = int(rng.integers(1, 2 * nnz))
            cols = np.sort(rng.choice(d, size=min(k, d), replace=False))
        vals = rng.uniform(0.05, 1.0, len(cols)) if nonnegative else rng.uniform(-1, 1, len(cols))
        rows.append((cols, vals))
    indptr = np.cumsum([0] + [len(c) for c, _ in rows])
    indices = np.concatenate([c for c, _ in rows]).astype(np.int32)
    data = np.concatenate([v for _, v in rows])
    return sp.csr_matrix((data, indices, indptr), shape=(n, d))


def row_of(X: sp.csr_matrix, r: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = X.indptr[r], X.indptr[r + 1]
    return X.indices[a:b].astype(np.int32), X.data[a:b].astype(np.float64)


def assert_matches_dense(spec: str, got: np.ndarray, S: np.ndarray, x: np.ndarray) -> None:
    want = make_kernel(spec).row(S, x)
    # A linear kernel's inner product can cancel to near zero: bound its error by the sum
    # of the magnitudes of the products instead of by its value.
    atol = RTOL * (np.abs(S) @ np.abs(x)) if spec == "linear" else 0.0
    err = np.abs(got - want)
    bad = err > RTOL * np.abs(want) + atol
    assert not bad.any(), (
        f"{spec}: rows {np.flatnonzero(bad)} differ by {err[bad]} ({got[bad]} vs {want[bad]})"
    )


SHAPES = {"a9a": (123, 14), "rcv1": (47_236, 75), "tiny": (3, 1)}


@pytest.mark.parametrize("strategy", ["merge", "scatter"])
@pytest.mark.parametrize("spec", KERNELS)
@pytest.mark.parametrize("shape", ["a9a", "rcv1", "tiny"])
def test_sparse_rows_equal_the_dense_rows(spec: str, strategy: str, shape: str) -> None:
    d, nnz = SHAPES[shape]
    rng = np.random.default_rng(21)
    # Polynomial kernels of mixed-sign data cancel (scale·⟨x, s⟩ + offset near 0): their
    # data are non-negative, as in the LIBSVM sets (a9a, rcv1 tf-idf).
    nonneg = spec.startswith("poly")
    S = random_csr(rng, 60, d, nnz, nonnegative=nonneg)
    X = random_csr(rng, 8, d, nnz, nonnegative=nonneg)
    Sd = S.toarray()
    for r in range(X.shape[0]):
        x = row_of(X, r)
        got = sparse_kernel_row(make_kernel(spec), S, x, strategy=strategy)
        assert_matches_dense(spec, got, Sd, X[r].toarray().ravel())


@pytest.mark.parametrize("spec", KERNELS)
def test_merge_and_scatter_agree(spec: str) -> None:
    """Both sum the shared products in index order (the scatter adds exact zeros for the
    rest), so the inner-product kernels agree bitwise; the scatter's Laplacian takes ‖x‖₁
    plus corrections, a different order, so it agrees to RTOL."""
    rng = np.random.default_rng(5)
    S = random_csr(rng, 80, 2000, 30)
    X = random_csr(rng, 10, 2000, 30)
    for r in range(X.shape[0]):
        x = row_of(X, r)
        merge = sparse_kernel_row(make_kernel(spec), S, x, strategy="merge")
        scatter = sparse_kernel_row(make_kernel(spec), S, x, strategy="scatter")
        if spec.startswith("laplacian"):
            np.testing.assert_allclose(scatter, merge, rtol=RTOL)
        else:
            np.testing.assert_array_equal(scatter, merge)


def test_rows_at_the_largest_int32_index() -> None:
    """Indices up to 2³¹ − 2 go through the merge (no work vector of that size)."""
    big = 2**31 - 2
    S = sp.csr_matrix(
        (np.array([2.0, 3.0, -1.0]), np.array([5, big, big], dtype=np.int32), np.array([0, 2, 3])),
        shape=(2, big + 1),
    )
    x = (np.array([5, big], dtype=np.int32), np.array([1.5, 0.5]))
    got = sparse_kernel_row(make_kernel("linear"), S, x, strategy="merge")
    np.testing.assert_array_equal(got, [2.0 * 1.5 + 3.0 * 0.5, -0.5])
    got = sparse_kernel_row(make_kernel("rbf[gamma=0.5]"), S, x, strategy="merge")
    want = np.exp(-0.5 * np.array([0.5**2 + 2.5**2, 1.5**2 + 1.5**2]))
    np.testing.assert_allclose(got, want, rtol=RTOL)
    # A store of that dimension chooses the merge rather than allocate a 16 GB work vector.
    buf = SparseSupportBuffer(big + 1, 2)
    assert buf.strategy == "merge" and buf.work is None
    for r in range(2):
        buf.add(
            (
                S.indices[S.indptr[r] : S.indptr[r + 1]].astype(np.int32),
                S.data[S.indptr[r] : S.indptr[r + 1]],
            ),
            1.0,
        )
    np.testing.assert_allclose(buf.row(make_kernel("rbf[gamma=0.5]"), x), want, rtol=RTOL)


def test_the_work_vector_is_left_zero() -> None:
    rng = np.random.default_rng(3)
    S = random_csr(rng, 20, 500, 10)
    starts, ends = S.indptr[:-1].astype(np.int64), S.indptr[1:].astype(np.int64)
    sq = np.asarray(S.multiply(S).sum(axis=1)).ravel()
    work = np.zeros(500)
    out = np.empty(20)
    for kind in range(4):
        xi, xd = row_of(S, 0)
        _sparse.kernel_row(
            (kind, 0.5, 1.0, 1.0, 2.0),
            xi,
            xd,
            float(xd @ xd),
            starts,
            ends,
            S.indices,
            S.data,
            sq,
            out,
            -1,
            _sparse.STRATEGY_SCATTER,
            work,
        )
        assert not work.any()


def test_kernel_block_rows_equal_kernel_rows() -> None:
    rng = np.random.default_rng(8)
    S = random_csr(rng, 30, 300, 12)
    X = random_csr(rng, 9, 300, 12)
    buf = SparseSupportBuffer(300, 30)
    for r in range(S.shape[0]):
        buf.add(row_of(S, r), float(r))
    for spec in KERNELS:
        kern = make_kernel(spec)
        many = buf.decision_many(kern, X)
        for r in range(X.shape[0]):
            k = buf.row(kern, row_of(X, r))
            # The same compiled row code per example, then a BLAS product (block) against a
            # dot (one row): equal up to the weighted sum's order.
            np.testing.assert_allclose(many[r], buf.scores(k), rtol=1e-12, atol=1e-12)


class DenseReference:
    """The store's semantics on dense rows: add (overwriting the oldest when full),
    replace, remove (the last row moves into the hole)."""

    def __init__(self, d: int, capacity: int) -> None:
        self.rows: list[np.ndarray] = []
        self.alpha: list[float] = []
        self.capacity, self.head, self.d = capacity, 0, d

    def add(self, x: np.ndarray, a: float) -> int:
        if len(self.rows) < self.capacity:
            self.rows.append(x)
            self.alpha.append(a)
            return len(self.rows) - 1
        slot = self.head
        self.head = (self.head + 1) % self.capacity
        self.rows[slot], self.alpha[slot] = x, a
        return slot

    def remove(self, slot: int) -> None:
        last = len(self.rows) - 1
        self.rows[slot], self.alpha[slot] = self.rows[last], self.alpha[last]
        self.rows.pop()
        self.alpha.pop()
        if self.head >= max(len(self.rows), 1):
            self.head = 0


@pytest.mark.parametrize("strategy", ["merge", "scatter"])
def test_store_add_replace_remove_keep_rows_equal_to_a_dense_reference(strategy: str) -> None:
    rng = np.random.default_rng(11)
    d, capacity = 400, 12
    pool = random_csr(rng, 200, d, 20)
    X = random_csr(rng, 4, d, 20)
    specs = ("linear", "rbf[gamma=0.5]", "laplacian[gamma=0.3]")
    # A small initial pool so that it grows and compacts during the run.
    buf = SparseSupportBuffer(d, capacity, nnz_capacity=8, strategy=strategy)
    ref = DenseReference(d, capacity)
    written = peak = 0
    for step in range(300):
        r = int(rng.integers(pool.shape[0]))
        row, dense = row_of(pool, r), pool[r].toarray().ravel()
        written += len(row[0])
        op = rng.choice(["add", "add", "replace", "remove"])
        if op == "add" or buf.size == 0:
            assert buf.add(row, float(step)) == ref.add(dense, float(step))
        elif op == "replace":
            slot = int(rng.integers(buf.size))
            buf.replace(slot, row, float(step))
            ref.rows[slot], ref.alpha[slot] = dense, float(step)
        else:
            slot = int(rng.integers(buf.size))
            moved = buf.remove(slot)
            assert moved == (-1 if slot == buf.size else buf.size)
            ref.remove(slot)
        assert buf.size == len(ref.rows)
        peak = max(peak, buf.nnz)
        np.testing.assert_array_equal(buf.to_dense(), np.array(ref.rows).reshape(-1, d))
        np.testing.assert_array_equal(buf.alpha[: buf.size, 0], ref.alpha)
        if buf.size:
            S = np.array(ref.rows)
            np.testing.assert_allclose(buf.sq[: buf.size], np.einsum("ij,ij->i", S, S), rtol=1e-13)
            r = step % X.shape[0]
            for spec in specs:
                assert_matches_dense(
                    spec, buf.row(make_kernel(spec), row_of(X, r)), S, X[r].toarray().ravel()
                )
    # Freed regions were reclaimed: the pool holds far less than everything ever written.
    # The pool doubles only when less than half of it is free, to at least the entries in
    # use plus the row being placed (rows here have fewer than 40 non-zeros): at most twice
    # (twice the live non-zeros plus one row).
    assert buf.nnz == sum(int(np.count_nonzero(r)) for r in ref.rows)
    assert len(buf.indices) < written / 3
    assert len(buf.indices) <= 2 * (2 * peak + 40)


def test_growable_store_keeps_every_row() -> None:
    rng = np.random.default_rng(2)
    S = random_csr(rng, 50, 90, 6)
    buf = SparseSupportBuffer(90, 4, growable=True)
    for r in range(50):
        assert buf.add(row_of(S, r), 1.0) == r
    assert buf.capacity >= 50
    np.testing.assert_array_equal(buf.to_dense(), S.toarray())
    x = row_of(S, 7)
    k = buf.row(make_kernel("rbf[gamma=0.5]"), x)
    assert buf.row(make_kernel("rbf[gamma=0.5]"), x) is not None and buf.kernel_evals == 50
    assert_matches_dense("rbf[gamma=0.5]", k, S.toarray(), S[7].toarray().ravel())


def test_scipy_rows_are_accepted_and_converted() -> None:
    x = sp.csr_matrix(([2.0, 1.0], ([0, 0], [9, 3])), shape=(1, 10))  # unsorted in storage
    indices, data = as_sparse_row(x, 10)
    assert indices.dtype == np.int32 and indices.tolist() == [3, 9]
    assert data.tolist() == [1.0, 2.0]


BAD_ROWS = {
    "unsorted": ((np.array([3, 1], dtype=np.int32), np.ones(2)), "not sorted"),
    "duplicate": ((np.array([1, 1], dtype=np.int32), np.ones(2)), "repeated"),
    "int64": ((np.array([1, 3], dtype=np.int64), np.ones(2)), "int32"),
    "float32": ((np.array([1, 3], dtype=np.int32), np.ones(2, dtype=np.float32)), "float64"),
    "lengths": ((np.array([1, 3], dtype=np.int32), np.ones(3)), "2 indices but 3 values"),
    "negative": ((np.array([-1, 3], dtype=np.int32), np.ones(2)), "negative"),
    "too large": ((np.array([1, 10], dtype=np.int32), np.ones(2)), "dimension 10"),
    "not a pair": ([1, 2], "pair"),
}


@pytest.mark.parametrize("case", list(BAD_ROWS))
def test_bad_rows_give_a_one_line_value_error(case: str) -> None:
    x, words = BAD_ROWS[case]
    buf = SparseSupportBuffer(10, 3)
    buf.add((np.array([2], dtype=np.int32), np.array([1.0])), 1.0)
    calls = [
        lambda: buf.add(x, 1.0),
        lambda: buf.replace(0, x, 1.0),
        lambda: sparse_kernel_row(make_kernel("linear"), sp.csr_matrix((2, 10)), x),
    ]
    if case != "too large":  # the merge has no dimension to check against in a bare row
        calls.append(
            lambda: SparseSupportBuffer(10, 3, strategy="merge").row(make_kernel("rbf"), x)
        )
    else:
        calls.append(lambda: buf.row(make_kernel("rbf"), x))
    for call in calls:
        with pytest.raises(ValueError, match=words) as err:
            call()
        assert "\n" not in str(err.value)
    assert buf.size == 1 and buf.to_dense()[0, 2] == 1.0  # nothing stored was changed


def test_bad_stores_and_arguments_are_refused() -> None:
    one = np.array([0], dtype=np.int64)
    x = (np.array([1], dtype=np.int32), np.array([1.0]))
    indices, data = np.array([1, 2], dtype=np.int32), np.array([1.0, 2.0])
    out = np.empty(1)
    linear = (0, 0.0, 1.0, 0.0, 1.0)  # the compiled kernel's (kind, gamma, scale, offset, degree)
    with pytest.raises(ValueError, match="outside the pool"):
        _sparse.kernel_row(
            linear, *x, 1.0, one, np.array([5], dtype=np.int64), indices, data, None, out
        )
    with pytest.raises(ValueError, match="unknown strategy"):
        _sparse.kernel_row(linear, *x, 1.0, one, one + 1, indices, data, None, out, -1, 7)
    with pytest.raises(ValueError, match="needs a work vector"):
        _sparse.kernel_row(
            linear, *x, 1.0, one, one + 1, indices, data, None, out, -1, _sparse.STRATEGY_SCATTER
        )
    with pytest.raises(ValueError, match="sq"):
        _sparse.kernel_row((1, 1.0, 1.0, 0.0, 1.0), *x, 1.0, one, one + 1, indices, data, None, out)
    with pytest.raises(ValueError, match="sparse row 1: indices are not sorted"):
        sparse_kernel_row(
            make_kernel("linear"),
            sp.csr_matrix((np.ones(3), np.array([0, 4, 2]), [0, 1, 3]), shape=(2, 5)),
            x,
        )
    buf = SparseSupportBuffer(5, 2)
    buf.add(x, 1.0)
    with pytest.raises(ValueError, match="X has 6 columns"):
        buf.decision_many(make_kernel("linear"), sp.csr_matrix((3, 6)))
    unsorted = sp.csr_matrix((np.ones(2), np.array([3, 1]), [0, 2]), shape=(1, 5))
    with pytest.raises(ValueError, match="sparse row 0: indices are not sorted"):
        buf.decision_many(make_kernel("linear"), unsorted)
    with pytest.raises(ValueError, match="unknown sparse strategy"):
        SparseSupportBuffer(5, 2, strategy="fast")
    with pytest.raises(ValueError, match="not a stored row"):
        SparseSupportBuffer(5, 2).remove(0)
