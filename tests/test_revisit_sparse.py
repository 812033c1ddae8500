"""The Huller and LASVM on CSR rows: support vectors kept sparse, the dense results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import kbench
from kbench.core.registry import get_registry
from kbench.testing import toy_stream

# (algorithm, parameters): a cache of a few rows (0.002 MB: 4 rows of 64 slots, none once
# the slots grow to 512), so that rows between support vectors are computed again.
CASES = [
    ("huller", {"cache_mb": 0.002}),
    ("huller", {"cache_mb": 0.002, "C": 2.0}),
    ("huller", {"cache_mb": 1.0, "removals": 3}),
    ("lasvm", {"cache_mb": 0.002}),
    ("lasvm", {"cache_mb": 1.0, "C": 10.0}),
]


def _toy(
    n: int = 300, d: int = 12, one_class_first: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A binary toy stream with about 70 % of the values zero (dense arrays); with
    ``one_class_first`` its first 40 examples are positive (the learners hold examples
    back until the other class appears, then learn them)."""
    stream = toy_stream("binary", n=n, d=d)
    rng = np.random.default_rng(7)
    X = stream.X * (rng.random(stream.X.shape) < 0.3)
    Xt = stream.X_test * (rng.random(stream.X_test.shape) < 0.3)
    y = np.asarray(stream.y)
    if one_class_first:
        order = np.argsort(-y[:80], kind="stable")
        X[:80], y = X[:80][order], np.concatenate([y[:80][order], y[80:]])
    return X, y, Xt


def _make(name: str, params: dict):
    reg = get_registry()
    cls = reg.entry("algorithm", name).cls
    return cls(**params, kernel=reg.create("kernel", "rbf[gamma=0.3]"), task="binary", seed=3)


def _run(name: str, params: dict, csr: bool, epochs: int, one_class_first: bool = False):
    """Passes of two blocks each, as the runner gives them: views of one read-only array
    (dense rows, known again by their place in it) or slices of a CSR matrix (copies,
    known again by their position in the pass), the end of each pass signalled."""
    X, y, Xt = _toy(one_class_first=one_class_first)
    X.setflags(write=False)
    rows = sp.csr_matrix(X) if csr else X
    algo = _make(name, params)
    online = []
    for _ in range(epochs):
        for a, b in ((0, 130), (130, len(X))):
            online.append(algo.learn_predict_many(rows[a:b], y[a:b]))
        algo.end_pass()
    return algo, np.concatenate(online), algo.predict_many(sp.csr_matrix(Xt) if csr else Xt)


@pytest.mark.parametrize("one_class_first", [False, True])
@pytest.mark.parametrize(("name", "params"), CASES)
def test_csr_rows_give_the_dense_model(name: str, params: dict, one_class_first: bool) -> None:
    """Over several passes (Huller removal attempts, LASVM REPROCESS and finishing on stored
    rows read from the sparse store, SVs removed), CSR rows give the dense learner's
    predictions, support set and coefficients, also when examples are held back."""
    # The kernel rows differ from the dense ones in the last bits (the inner products sum
    # in another order: 1e-15 on the hull scalars after two passes here); the hard-margin
    # Huller's clipped steps can turn such a difference into another step a pass later
    # (9 of 900 predictions in the third pass of the held-back stream), so that stream
    # is compared over two passes.
    epochs = 2 if one_class_first else 3
    dense, d_online, d_test = _run(name, params, False, epochs, one_class_first)
    csr, c_online, c_test = _run(name, params, True, epochs, one_class_first)
    assert csr._store is not None and dense._store is None
    np.testing.assert_allclose(c_online, d_online, rtol=0, atol=1e-10)
    np.testing.assert_allclose(c_test, d_test, rtol=0, atol=1e-10)
    Xt = _toy()[2]
    np.testing.assert_allclose(
        csr.decision_function(sp.csr_matrix(Xt)), dense.decision_function(Xt), atol=1e-10
    )
    S_d, y_d, a_d = dense.support()
    S_c, y_c, a_c = csr.support()
    assert sp.issparse(S_c) and S_c.shape == S_d.shape
    np.testing.assert_array_equal(S_c.toarray(), S_d)
    np.testing.assert_array_equal(y_c, y_d)
    np.testing.assert_allclose(a_c, a_d, rtol=0, atol=1e-10)
    s_d, s_c = dense.stats(), csr.stats()
    for key in ("n_support", "removed", "kernel_evals", "cache_misses"):
        assert s_c[key] == s_d[key], key
    assert s_c["removed"] > 0
    assert (s_c["pending"], s_d["pending"]) == (0, 0)
    if name == "huller":
        np.testing.assert_allclose(csr.exact_scalars(), csr.hull_scalars(), atol=1e-8)


@pytest.mark.parametrize(("name", "params"), CASES[:1] + CASES[3:4])
def test_removals_are_mirrored_in_a_bounded_pool(name: str, params: dict) -> None:
    """The sparse store holds exactly the live support vectors, and its pool of non-zeros
    stays within a small multiple of them over many passes (freed regions are reclaimed)."""
    X, y, _ = _toy()
    algo = _make(name, params)
    stored = 0
    for _ in range(8):
        # No end_pass: the rows are new examples every time (positions keep counting).
        algo.learn_predict_many(sp.csr_matrix(X), y)
        if name == "lasvm":
            algo.finish()
        store, m = algo._store, algo._core.m
        assert store.size == m
        S, _, _ = algo.support()
        assert store.nnz == S.nnz == store._owned
        stored = max(stored, store.nnz)
    assert algo._core.removed > 100
    # Every call stores new copies of the rows, far more non-zeros than the pool holds:
    # without reclaiming the regions of removed rows it would keep growing.
    assert len(store.indices) <= 4 * (stored + X.astype(bool).sum())


def test_one_row_methods_and_no_switching() -> None:
    """learn_one and decision_one take a one-row CSR matrix; a learner that learned CSR
    rows learns a dense block on its CSR path (as every learner that takes CSR rows does);
    one that learned dense rows refuses CSR ones."""
    X, y, Xt = _toy(n=80)
    for name in ("huller", "lasvm"):
        a, b = _make(name, {}), _make(name, {})
        for i in range(len(X)):
            a.learn_one(sp.csr_matrix(X[i : i + 1]), y[i])
        b.learn_predict_many(sp.csr_matrix(X), y)
        got = [a.decision_one(sp.csr_matrix(x[None, :])) for x in Xt[:20]]
        np.testing.assert_allclose(got, b.decision_function(sp.csr_matrix(Xt[:20])), atol=1e-12)
        np.testing.assert_array_equal(
            a.learn_predict_many(X[:10], y[:10]),
            b.learn_predict_many(sp.csr_matrix(X[:10]), y[:10]),
        )
        c = _make(name, {})
        c.learn_predict_many(X, y)
        with pytest.raises(TypeError, match="dense rows"):
            c.learn_predict_many(sp.csr_matrix(X), y)


@pytest.mark.parametrize("algorithm", ["huller", "lasvm[cache_mb=0.01]"])
def test_a_study_on_a_sparse_file_equals_the_one_with_dense_true(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, algorithm: str
) -> None:
    """Through the runner (two passes, LASVM finishing at the end of each), a sparse LIBSVM
    stream gives the errors and support vectors of the same stream with dense=true."""
    monkeypatch.setenv("KBENCH_CACHE", str(tmp_path / "cache"))
    rng = np.random.default_rng(3)
    X = sp.random(300, 40, density=0.1, format="csr", random_state=rng)
    y = np.where(X @ rng.normal(size=40) >= 0, 1.0, -1.0)
    for name, rows in (("train", slice(0, 200)), ("test", slice(200, 300))):
        lines = [
            f"{int(label):+d} "
            + " ".join(f"{j + 1}:{v:.6g}" for j, v in zip(r.indices, r.data, strict=True))
            for r, label in zip(X[rows], y[rows], strict=True)
        ]
        (tmp_path / f"{name}.svm").write_text("\n".join(lines) + "\n")
    files = f"path={tmp_path / 'train.svm'},test_path={tmp_path / 'test.svm'}"
    got = {}
    for dense in (False, True):
        study = kbench.Experiment(
            algorithms=[algorithm],
            kernels=["rbf[gamma=0.5]"],
            datasets=[f"libsvm[{files}{',dense=true' if dense else ''}]"],
            seeds=[0],
            epochs=2,
        )
        got[dense] = kbench.run(study, out=str(tmp_path / f"out{dense}"), workers=0).runs
    sparse_run, dense_run = got[False].iloc[0], got[True].iloc[0]
    assert sparse_run["status"] == dense_run["status"] == "ok", sparse_run["reason"]
    for column in ("online_error", "test_error", "n_support"):
        assert sparse_run[column] == dense_run[column], column


def test_csr_rows_are_known_by_their_place_in_the_pass_and_their_content() -> None:
    """Row k of a pass gets id k when its content is that of row k of the first pass,
    else -1 (a new example); without end_pass positions keep counting."""
    from kbench.learners.example_ids import PassIds

    X = sp.random(12, 30, density=0.2, format="csr", random_state=np.random.default_rng(1))

    def ids(ids_: PassIds, M) -> list[int]:
        return ids_.block(M.indptr.astype(np.int64), M.indices, M.data).tolist()

    p = PassIds()
    assert ids(p, X[:5]) + ids(p, X[5:]) == list(range(12))
    p.end_pass()
    assert ids(p, X[:7]) == list(range(7))
    changed = X[7:].toarray()
    changed[1, 0] += 1.0  # row 8 is not the first pass's row 8
    assert ids(p, sp.csr_matrix(changed)) == [7, -1, 9, 10, 11]
    assert ids(p, X[:2]) == [12, 13]  # no end_pass: new positions, new examples
    p.end_pass()
    assert ids(p, X[1:3]) == [-1, -1]  # other rows at positions 0 and 1
