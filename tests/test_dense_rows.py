"""Learners that take only dense rows run on sparse streams, densified a block at a time."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import kbench
from helpers import create
from kbench.core.dense_rows import DenseRows, dense_blocks, for_sparse_rows

#: A kernel written in Python: a learner that takes CSR rows with a built-in kernel takes
#: only dense rows with it (every registered algorithm takes CSR rows with its defaults).
DENSE_ONLY_KERNEL = "cosine"


def _sparse(n: int, d: int, seed: int) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.2)
    return sp.csr_matrix(X)


def test_blocks_are_bounded_and_hold_the_rows() -> None:
    """Each block is the densified rows, C-contiguous float64, at most max_bytes (one row
    at least), and the blocks cover the rows once, in order."""
    X = _sparse(50, 30, 1)
    blocks = list(dense_blocks(X, max_bytes=8 * 30 * 7))  # 7 rows a block
    assert [(a, b) for a, b, _ in blocks] == [(a, min(50, a + 7)) for a in range(0, 50, 7)]
    for a, b, rows in blocks:
        assert rows.flags.c_contiguous and rows.dtype == np.float64
        np.testing.assert_array_equal(rows, X[a:b].toarray())
    wide = list(dense_blocks(X, max_bytes=10))  # less than a row: one row a block
    assert len(wide) == 50 and all(r.shape == (1, 30) for _, _, r in wide)


def test_a_learner_that_takes_csr_is_not_wrapped() -> None:
    for spec in ("rbp[budget=10]", "idsvm", "bsgd", "bsgd[maintenance=removal]"):
        learner = create(spec, kernel="rbf[gamma=0.3]", loss=None)
        assert for_sparse_rows(learner) is learner, spec
    # A kernel written in Python (cosine) has no sparse kernel rows: dense rows only.
    ramp = create("online_svm_r", kernel=DENSE_ONLY_KERNEL, loss=None)
    wrapped = for_sparse_rows(ramp)
    assert isinstance(wrapped, DenseRows) and wrapped.learner is ramp
    assert wrapped.name == "online_svm_r" and wrapped.offline is False  # the learner's own


def test_one_row_methods_get_the_row_dense_and_the_wrapper_pickles() -> None:
    """predict_one / learn_one / decision_one take a one-row CSR matrix densified; the
    wrapper pickles with its learner."""
    X = _sparse(40, 8, 2)
    y = np.where(np.asarray(X.sum(axis=1)).ravel() > 0, 1.0, -1.0)
    a, b = (
        DenseRows(create("huller", kernel="rbf[gamma=0.3]", loss=None)),
        create("huller", kernel="rbf[gamma=0.3]", loss=None),
    )
    for i in range(40):
        assert a.predict_one(X[i]) == b.predict_one(X[i].toarray().ravel())
        a.learn_one(X[i], y[i])
        b.learn_one(X[i].toarray().ravel(), y[i])
    assert a.decision_one(X[3]) == b.decision_one(X[3].toarray().ravel())
    assert a.stats()["densified_rows"] == 81
    # DenseRows pickles with its learner (the wrapper's attribute lookup must not recurse
    # while it is being rebuilt).
    d = DenseRows(create("bsgd[budget=10]", kernel="rbf[gamma=0.3]", loss=None))
    d.learn_predict_many(X, y)
    e = pickle.loads(pickle.dumps(d))
    np.testing.assert_array_equal(e.predict_many(X), d.predict_many(X))
    assert e.densified_rows == d.densified_rows == 80  # 40 learned, then 40 predicted


def _write(path: Path, X: sp.csr_matrix, y: np.ndarray) -> None:
    lines = []
    for i in range(X.shape[0]):
        row = X[i]
        feats = " ".join(f"{j + 1}:{v:.6g}" for j, v in zip(row.indices, row.data, strict=True))
        lines.append(f"{int(y[i]):+d} {feats}")
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("algorithm", "kernel", "densified"),
    [
        # A ramp-loss learner with a kernel written in Python takes only dense rows.
        ("online_svm_r", DENSE_ONLY_KERNEL, True),
        # BSGD (merging), IDSVM and the ramp-loss learners keep their examples as CSR rows
        # (the sparse kernel row sums in another order, ~1e-16: the labels, the merges, the
        # band test and the ramp's active set on these random rows are far from such ties).
        ("bsgd[budget=20]", "rbf", False),
        ("idsvm", "rbf", False),
        ("online_svm_r", "rbf", False),
        ("online_asvm_r", "rbf", False),
        ("ramp_cccp", "rbf", False),
        # One row at a time through the runner's active loop: densified around a dense-only
        # base, CSR rows as they are around one that takes them.
        ("active_margin[base=online_svm_r]", DENSE_ONLY_KERNEL, True),
        ("active_margin[base=online_svm_r]", "rbf", False),
        ("active_margin[base=bsgd[budget=20]]", "rbf", False),
        ("active_margin[base=rbp[budget=20]]", "rbf", False),
        ("active_greedy[base=pa]", "rbf", False),
    ],
)
def test_a_study_on_a_sparse_file_equals_the_one_with_dense_true(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    algorithm: str,
    kernel: str,
    densified: bool,
) -> None:
    """A learner runs on a sparse LIBSVM stream (one that takes only dense rows used to be
    skipped) with the same errors and support vectors as on ``dense=true``; the
    checkpoints of one behind DenseRows say how many rows it had densified."""
    monkeypatch.setenv("KBENCH_CACHE", str(tmp_path / "cache"))
    X = _sparse(300, 40, 3)
    w = np.random.default_rng(4).normal(size=40)
    y = np.where(X @ w >= 0, 1.0, -1.0)
    _write(tmp_path / "train.svm", X[:200], y[:200])
    _write(tmp_path / "test.svm", X[200:], y[200:])
    files = f"path={tmp_path / 'train.svm'},test_path={tmp_path / 'test.svm'}"
    got = {}
    for dense in (False, True):
        study = kbench.Experiment(
            algorithms=[algorithm],
            kernels=[kernel],
            datasets=[f"libsvm[{files}{',dense=true' if dense else ''}]"],
            seeds=[0],
        )
        got[dense] = kbench.run(study, out=str(tmp_path / f"out{dense}"), workers=0)
    sparse_run, dense_run = (got[d].runs.iloc[0] for d in (False, True))
    assert sparse_run["status"] == dense_run["status"] == "ok", sparse_run["reason"]
    for column in ("online_error", "test_error", "n_support"):
        assert sparse_run[column] == dense_run[column], column
    traces = got[False].traces
    if densified:
        assert traces["densified_rows"].iloc[-1] >= 200
    else:
        assert "densified_rows" not in traces.columns
    assert "densified_rows" not in got[True].traces.columns
