"""The one learning path of the revisiting learners (LASVM, the Huller) in kbench.learners.

``learn_one`` and ``learn_predict_many`` share ``RevisitingLearner._learn``: rows one at a
time and in blocks must give the same model, with a built-in kernel (compiled loop) and a
third-party one (rows from ``kernel.row``), and bad rows get a one-line error naming them.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import NumpyRBF, readonly
from kbench.core.registry import get_registry
from kbench.learners import ExampleIds, KernelCache, PassIds, RevisitingLearner

NAMES = ("lasvm", "huller")


def stream(n: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.standard_normal(n) > 0.4, 1.0, -1.0)
    return readonly(X), readonly(y)


def make(name: str, third_party: bool) -> RevisitingLearner:
    reg = get_registry()
    kernel = NumpyRBF(gamma=0.5) if third_party else reg.create("kernel", "rbf[gamma=0.5]")
    algo = reg.create("algorithm", name, kernel=kernel)
    assert isinstance(algo, RevisitingLearner)
    return algo


@pytest.mark.parametrize("third_party", [False, True], ids=["compiled", "kernel.row"])
@pytest.mark.parametrize("name", NAMES)
def test_one_row_and_block_paths_learn_the_same_model(name: str, third_party: bool) -> None:
    X, y = stream()
    by_row, by_block = make(name, third_party), make(name, third_party)
    for _ in range(2):  # the second pass revisits the examples by their ids
        one = np.empty(len(X))
        for i in range(len(X)):
            one[i] = by_row.predict_one(X[i])
            by_row.learn_one(X[i], y[i])
        by_row.end_pass()
        block = by_block.learn_predict_many(X, y)
        by_block.end_pass()
        # Both predict before each update with the same arithmetic: equal bit for bit.
        assert np.array_equal(one, block)
    Xt = stream(50, seed=1)[0]
    assert np.array_equal(by_row.decision_many(Xt), by_block.decision_many(Xt))
    assert by_row.stats()["active_set" if name == "lasvm" else "n_support"] > 0


@pytest.mark.parametrize("name", NAMES)
def test_bad_rows_get_a_one_line_error(name: str) -> None:
    algo = make(name, False)
    X, y = stream(10)
    with pytest.raises(ValueError, match=r"^X: rows must hold real numbers, got dtype <U1$"):
        algo.learn_predict_many(np.full((3, 2), "a"), y[:3])
    with pytest.raises(ValueError, match=r"^X must be a 2-D block of rows \(n, d\)"):
        algo.learn_predict_many(np.zeros((2, 2, 2)), y[:2])
    with pytest.raises(ValueError, match=r"^x must be one 1-D row, got shape \(2, 3\)$"):
        algo.learn_one(np.zeros((2, 3)), 1.0)
    with pytest.raises(ValueError, match=r"^y must hold one label per row: 10 rows"):
        algo.learn_predict_many(X, y[:4])
    algo.learn_predict_many(X, y)  # nothing learned by the refused calls: still usable
    with pytest.raises(ValueError, match=r"examples have 5 features, earlier ones had 3$"):
        algo.learn_predict_many(np.zeros((2, 5)), y[:2])


def test_the_shared_parts_are_public() -> None:
    cache = KernelCache(1 << 16, 8)
    assert cache.capacity == 8 and cache.n_slots == 8
    with pytest.raises(ValueError, match="at least 0 bytes"):
        KernelCache(-1, 8)
    X = readonly(np.arange(12.0).reshape(4, 3))
    ids = ExampleIds()
    assert ids.block(X[1:3]).tolist() == [1, 2]
    assert ids.one(X[3]) == 3
    assert ids.one(X[3].copy()) == -1  # a copy is a new example
    assert PassIds().block(np.array([0, 1]), np.array([0], np.int32), np.ones(1)).tolist() == [0]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize(
    "spec", ["lasvm", "lasvm[cache_mb=0.001]", "huller", "huller[cache_mb=0.001]"]
)
def test_a_pickled_learner_goes_on_as_the_original(spec: str, sparse: bool) -> None:
    """Pickled halfway (its compiled core, arrays and kernel-row cache), a learner then
    learns and predicts exactly as the one that was not: the core's arrays are the
    learner's own, one object each after unpickling, so growing the arrays rebinds them."""
    import pickle

    import scipy.sparse

    rng = np.random.default_rng(3)
    X = rng.standard_normal((500, 3))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    rows = scipy.sparse.csr_matrix(X) if sparse else X
    kernel = get_registry().create("kernel", "rbf[gamma=0.5]")
    a = get_registry().create("algorithm", spec, kernel=kernel, task="binary", seed=1)
    a.learn_predict_many(rows[:100], y[:100])
    b = pickle.loads(pickle.dumps(a))
    capacity = b._core.cap
    assert np.array_equal(
        a.learn_predict_many(rows[100:], y[100:]), b.learn_predict_many(rows[100:], y[100:])
    )
    assert np.array_equal(a.predict_many(rows), b.predict_many(rows))
    assert a.stats() == b.stats()
    assert b._core.cap > capacity  # the unpickled learner grew its arrays, and rebound them
