"""Every registered component passes kbench's conformance suite."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from kbench.testing import check_component, make_test_algorithm, parametrize_with_checks, toy_stream


@parametrize_with_checks()
def test_component_conforms(kind: str, name: str, check: str) -> None:
    """Registered components follow the contracts of their kind: one test per check."""
    check_component(kind, name, check=check)


# --------------------------------------------------------------------------------------------
# Sparse input: dense and CSR rows of the same data give the same predictions
# --------------------------------------------------------------------------------------------


def _algorithm_names() -> list[str]:
    from kbench.core.registry import get_registry

    return get_registry().names("algorithm")


def _sparse_toy(task: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A toy stream's features with about 70 % of the values set to zero (dense arrays)."""
    stream = toy_stream(task, n=160, d=12)
    rng = np.random.default_rng(7)
    X = stream.X * (rng.random(stream.X.shape) < 0.3)
    Xt = stream.X_test * (rng.random(stream.X_test.shape) < 0.3)
    return X, np.asarray(stream.y), Xt


@pytest.mark.parametrize("name", _algorithm_names())
def test_dense_and_csr_rows_give_the_same_predictions(name: str) -> None:
    """Every algorithm makes the same online and held-out predictions on CSR rows as on the
    dense rows of the same data, the way the runner hands it a sparse stream: as they are
    to a learner that declares ``sparse_input`` (to 1e-10: the sparse kernel row sums the
    same products in another order), densified a block at a time to any other (exactly:
    it sees the same dense rows)."""
    from kbench.core.dense_rows import DenseRows, for_sparse_rows
    from kbench.core.registry import get_registry

    reg = get_registry()
    cls = reg.entry("algorithm", name).cls
    for task in sorted(set(cls.tasks) & {"binary", "multiclass", "regression"}):
        X, y, Xt = _sparse_toy(task)
        got = []
        for A, At in ((X, Xt), (sp.csr_matrix(X), sp.csr_matrix(Xt))):
            algo = make_test_algorithm(cls, task, reg, seed=3)
            if sp.issparse(A):
                algo = for_sparse_rows(algo)
            if cls.offline:  # a batch reference: one fit, then held-out predictions only
                algo.fit(A, y)
                online = np.zeros(0)
            else:
                online = np.concatenate(
                    [
                        algo.learn_predict_many(A[:70], y[:70]),
                        algo.learn_predict_many(A[70:], y[70:]),
                    ]
                )
            got.append((online, np.asarray(algo.predict_many(At)), algo.stats()))
        (dense, dense_test, s_dense), (csr, csr_test, s_csr) = got
        assert s_dense["n_support"] == s_csr["n_support"], (task, s_dense, s_csr)
        # It learned: support vectors, or (a feature map has none) predictions that vary.
        assert s_dense["n_support"] > 0 or np.ptp(np.concatenate([dense, dense_test])) > 0
        if isinstance(algo, DenseRows):
            assert s_csr["densified_rows"] == X.shape[0] + Xt.shape[0], s_csr
            np.testing.assert_array_equal(csr, dense, err_msg=f"{name} {task}")
            np.testing.assert_array_equal(csr_test, dense_test)
        else:
            # A learner whose recursion amplifies rounding (KRLS's updated inverse) says by
            # how much in ``rounding_atol``.
            atol = getattr(cls, "rounding_atol", 1e-10)
            np.testing.assert_allclose(csr, dense, rtol=0, atol=atol, err_msg=f"{name} {task}")
            np.testing.assert_allclose(csr_test, dense_test, rtol=0, atol=atol)


@pytest.mark.parametrize("name", _algorithm_names())
def test_every_algorithm_takes_csr_rows_with_its_test_parameters(name: str) -> None:
    """No registered algorithm runs behind DenseRows with its test parameters (BSGD's merge,
    its default, included), so the test above checks each on its CSR path, to 1e-10; only a
    kernel written in Python, river's RBFSampler or a dense-only base makes a learner take
    dense rows."""
    from kbench.core.dense_rows import for_sparse_rows
    from kbench.core.registry import get_registry

    reg = get_registry()
    cls = reg.entry("algorithm", name).cls
    for task in sorted(set(cls.tasks) & {"binary", "multiclass", "regression"}):
        algo = make_test_algorithm(cls, task, reg, seed=3)
        assert for_sparse_rows(algo) is algo, (name, task)


@pytest.mark.parametrize(
    ("spec", "inspect"),
    [
        ("norma[budget=30]", lambda a: a.snapshot()["X"]),
        ("svmd[budget=30]", lambda a: a.snapshot()["X"]),
        ("pa", lambda a: a.snapshot()["X"]),
        ("pistol", lambda a: a.coefficients()[0]),
        ("polk", lambda a: a.dictionary()["D"]),
        ("idsvm", lambda a: a.snapshot()["X"]),
    ],
)
def test_inspection_on_csr_rows_returns_the_stored_rows(spec: str, inspect) -> None:
    """A learner that learned CSR rows shows its real stored rows (CSR, in slot order), the
    rows it stores on the dense rows of the same data, not the one-value stand-ins its
    compiled update keeps."""
    from kbench.core.registry import get_registry

    reg = get_registry()
    X, y, _ = _sparse_toy("binary")
    got = []
    for A in (X, sp.csr_matrix(X)):
        algo = reg.create(
            "algorithm", spec, kernel=reg.create("kernel", "rbf[gamma=0.3]"),
            loss=reg.create("loss", "hinge") if reg.entry("algorithm", spec.split("[")[0]).cls.uses_loss else None,
            task="binary", n_classes=2, seed=3,
        )  # fmt: skip
        algo.learn_predict_many(A, y)
        got.append(inspect(algo))
    dense, csr = got
    assert sp.issparse(csr) and csr.shape == dense.shape and dense.shape[0] > 5
    np.testing.assert_array_equal(csr.toarray(), dense)
