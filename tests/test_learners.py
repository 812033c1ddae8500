"""The learner toolkit (kbench.learners): the typed compiled boundary, Rows and its
one-line errors, and the shape of the learners written on it."""

from __future__ import annotations

import ast
import pickle
import re

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import REPO
from helpers import create
from kbench.api import Algorithm, get_registry
from kbench.cython_core import _pa, _perceptron
from kbench.cython_core._kernels import KernelKind, KernelSpec
from kbench.learners import BlockRows, Rows, SupportBuffer


def test_kernel_spec_is_typed_picklable_and_made_from_kernels() -> None:
    reg = get_registry()
    rbf = KernelSpec.of(reg.create("kernel", "rbf[gamma=0.25]"))
    assert (rbf.kind, rbf.gamma) == (KernelKind.K_RBF, 0.25) and rbf.compiled
    assert pickle.loads(pickle.dumps(rbf)) == rbf
    assert hash(pickle.loads(pickle.dumps(rbf))) == hash(rbf)
    assert KernelSpec.of(rbf.astuple()) == rbf
    poly = KernelSpec.of(reg.create("kernel", "poly[degree=2,offset=1.0]"))
    assert poly.self_kernel(3.0) == (3.0 + 1.0) ** 2
    cosine = KernelSpec.of(reg.create("kernel", "cosine[base=poly[degree=2]]"))
    assert cosine.kind == KernelKind.K_NOT_COMPILED and not cosine.compiled
    with pytest.raises(ValueError, match="unknown kernel kind 7"):
        KernelSpec(7)


def test_block_loops_refuse_what_they_cannot_run() -> None:
    """The loops take a KernelSpec (or the tuple of Kernel.compiled()), typed rows, and a
    label and a prediction for every row; a third-party kernel one row at a time."""
    store = SupportBuffer(3, 4, growable=True)
    X, y, pred = np.ones((5, 3)), np.ones(5), np.empty(5)
    spec = KernelSpec(KernelKind.K_RBF, 0.5)
    with pytest.raises(TypeError, match="kernel must be a KernelSpec"):
        _perceptron.perceptron_block([1, 0.5, 1.0, 0.0, 1.0], BlockRows(X), store, y, pred)
    with pytest.raises(TypeError):
        _perceptron.perceptron_block(spec, X, store, y, pred)  # not BlockRows
    with pytest.raises(ValueError, match="y must be a C-contiguous 1-D float64 array"):
        _perceptron.perceptron_block(spec, BlockRows(X), store, [1.0] * 5, pred)
    with pytest.raises(
        ValueError, match=r"pred must be a C-contiguous 1-D float64 array \(writeable\)"
    ):
        _perceptron.perceptron_block(spec, BlockRows(X), store, y, np.empty(5)[::-1])
    with pytest.raises(ValueError, match="rows of 3 values for stored rows of 4"):
        _perceptron.perceptron_block(spec, BlockRows(X), SupportBuffer(4, 4), y, pred)
    with pytest.raises(ValueError, match="needs y and pred of 5 entries"):
        _perceptron.perceptron_block(spec, BlockRows(X), store, y[:4], pred)
    with pytest.raises(ValueError, match="one row a call"):
        _pa.pa_block(KernelSpec(-1), BlockRows(X), store, y, pred, variant=_pa.Variant.PA, C=1.0)
    with pytest.raises(ValueError, match="unknown PA variant 5"):
        _pa.pa_block(spec, BlockRows(X), store, y, pred, variant=5, C=1.0)
    # The tuple still works (the adapter for callers not migrated yet), the same as a spec.
    a, b = SupportBuffer(3, 8), SupportBuffer(3, 8)
    X = np.random.default_rng(0).standard_normal((5, 3))
    y = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
    got = [
        _perceptron.perceptron_block(k, BlockRows(X), s, y, np.empty(5))
        for k, s in ((spec, a), (spec.astuple(), b))
    ]
    assert got[0] == got[1] and got[0][1] > 0
    np.testing.assert_array_equal(a.alpha, b.alpha)  # exact: one loop, the same operations


def test_a_store_takes_the_kernel_or_its_spec_for_a_row() -> None:
    """SupportBuffer.row takes a built-in kernel's KernelSpec as it takes the kernel (an
    expansion hands its spec, made once): the same values, counted alike; the spec of a
    third-party kernel, which has no compiled row, is refused in one line."""
    reg = get_registry()
    rng = np.random.default_rng(1)
    for name in ("rbf[gamma=0.3]", "poly[degree=3,offset=1.0]", "laplacian[gamma=0.2]"):
        kernel = reg.create("kernel", name)
        a, b = SupportBuffer(4, 8), SupportBuffer(4, 8)
        for row in rng.standard_normal((5, 4)):
            a.add(row, 1.0)
            b.add(row, 1.0)
        x = rng.standard_normal(4)
        got, want = a.row(KernelSpec.of(kernel), x), b.row(kernel, x)
        np.testing.assert_array_equal(got, want)  # exact: the same compiled call
        assert a.kernel_evals == b.kernel_evals == 5
    cosine = KernelSpec.of(reg.create("kernel", "cosine[base=rbf]"))
    with pytest.raises(TypeError, match="third-party kernel's rows need the kernel"):
        SupportBuffer(4, 8).row(cosine, np.zeros(4))


def test_block_rows_hold_dense_rows() -> None:
    X = np.ones((4, 3))
    rows = BlockRows(X)
    assert rows.n == 4 and not rows.sparse and rows.block is None
    with pytest.raises(ValueError):
        BlockRows(np.ones((4, 3), dtype=np.float32))


@pytest.mark.parametrize("name", ["perceptron", "pa"])
def test_rows_of_the_wrong_kind_get_one_line_naming_the_parameter(name: str) -> None:
    def learner():
        return create(name, kernel="rbf[gamma=0.5]", loss=None)

    y = np.array([1.0, -1.0, 1.0])
    cases = [
        (
            lambda a: a.learn_predict_many(np.ones((3, 2), dtype=complex), y),
            ValueError,
            "X: rows must hold real numbers, got dtype complex128",
        ),
        (
            lambda a: a.learn_predict_many(np.array([["a", "b"]] * 3), y),
            ValueError,
            "X: rows must hold real numbers",
        ),
        (
            lambda a: a.learn_predict_many(np.ones(3), y),
            ValueError,
            r"X must be a 2-D block of rows \(n, d\), got shape \(3,\)",
        ),
        (
            lambda a: a.learn_one(np.ones((2, 2)), 1.0),
            ValueError,
            r"x must be one 1-D row, got shape \(2, 2\)",
        ),
        (
            lambda a: a.learn_predict_many(np.ones((3, 2)), y[:2]),
            ValueError,
            "y must hold one label per row: 3 rows",
        ),
        (lambda a: a.predict_many(np.ones((3, 2, 1))), ValueError, "X must be a 2-D block"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message) as got:
            call(learner())
        assert "\n" not in str(got.value)
    # Columns and sparsity against what the learner holds.
    a = learner()
    a.learn_predict_many(np.ones((3, 2)), y)
    with pytest.raises(ValueError, match=f"X has 4 columns but {name} holds rows of 2"):
        a.learn_predict_many(np.ones((3, 4)), y)
    # The runner's block goes to the loop unchecked once a store holds rows: the labels
    # still get their one line.
    with pytest.raises(
        ValueError, match=r"^y must hold one label per row: 3 rows, got shape \(2,\)$"
    ):
        a.learn_predict_many(np.ones((3, 2)), y[:2])
    with pytest.raises(TypeError, match="has learned dense rows; it cannot continue on sparse"):
        a.learn_predict_many(sp.csr_matrix(np.ones((3, 2))), y)
    third_party = create(name, kernel="cosine[base=poly[degree=2]]", loss=None)
    with pytest.raises(TypeError, match="sparse input needs a built-in kernel"):
        third_party.learn_predict_many(sp.csr_matrix(np.ones((3, 2))), y)


def test_compiled_kernel_is_the_typed_spec_or_a_one_line_error() -> None:
    """The check of learners whose CSR rows need a built-in kernel gives the KernelSpec the
    compiled loops take (not the kernel's tuple), or a one-line TypeError naming the kernel."""
    from kbench.learners import KernelSpec
    from kbench.learners.rows import compiled_kernel

    reg = get_registry()
    rbf = reg.create("kernel", "rbf[gamma=0.25]")
    spec = compiled_kernel(rbf)
    assert type(spec) is KernelSpec and spec == KernelSpec.of(rbf) and spec.gamma == 0.25
    with pytest.raises(TypeError, match=r"^sparse input needs a built-in kernel, not \w+$"):
        compiled_kernel(reg.create("kernel", "cosine[base=poly[degree=2]]"))


def test_a_learner_of_signs_refuses_other_labels_on_every_path() -> None:
    """PA takes −1 and +1: a label 2 gets one line naming the learner, from a block and from
    learn_one (whose dense row takes a shorter way to the same loop), and nothing is
    learned."""
    a = create("pa", kernel="rbf[gamma=0.5]", loss=None)
    X = np.eye(3)
    calls = [
        lambda: a.learn_predict_many(X, np.array([1.0, 2.0, -1.0])),
        lambda: a.learn_one(X[0], 2.0),
        lambda: a.learn_one(sp.csr_matrix(X[:1]), 0.0),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"^pa: labels must be −1 or \+1$"):
            call()
    assert a.stats()["n_support"] == 0
    a.learn_one(X[0], -1.0)  # a dense row on the short way, then refused on it
    with pytest.raises(ValueError, match=r"^pa: labels must be −1 or \+1$"):
        a.learn_one(X[1], 0.5)
    with pytest.raises(ValueError, match=r"^pa: labels must be −1 or \+1$"):
        a.learn_predict_many(X, np.array([1.0, 2.0, -1.0]))  # the runner's block, too
    assert a.stats()["n_support"] == 1


@pytest.mark.parametrize("name", ["perceptron", "rbp", "averaged_perceptron", "nogd", "sgd"])
def test_the_runners_block_and_any_other_rows_take_one_path(name: str) -> None:
    """A C-contiguous float64 block goes to the loop as it is (``Expansion.learn_array``),
    other rows through Rows and labels: the same loop on the same values, so the same
    predicted labels and support. The decisions are compared within 1e-12: NOGD's map and
    decisions go through LAPACK and BLAS, whose results may depend on the arrays'
    alignment, which differs between the two learners' stores."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((90, 3))
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1.0, -1.0)
    spec = {"rbp": "rbp[budget=12]", "nogd": "nogd[budget=12]"}.get(name, name)
    loss = {"nogd": "hinge", "sgd": "hinge"}.get(name)
    runner, other = (create(spec, kernel="rbf[gamma=0.5]", loss=loss) for _ in range(2))
    got, want = [], []
    for a in range(0, 90, 30):
        got.append(runner.learn_predict_many(X[a : a + 30], y[a : a + 30]))
        Xf = np.asfortranarray(X[a : a + 30])  # not the runner's block: converted
        want.append(other.learn_predict_many(Xf, list(y[a : a + 30])))
    np.testing.assert_array_equal(np.concatenate(got), np.concatenate(want))
    np.testing.assert_allclose(
        runner.decision_many(X), other.decision_many(X), rtol=1e-12, atol=1e-12
    )
    assert runner.stats()["n_support"] == other.stats()["n_support"] > 0


def test_rows_take_dense_csr_and_one_row_input() -> None:
    X = np.arange(6.0).reshape(3, 2)
    assert Rows.of(X).X is X and not Rows.of(X).sparse
    assert Rows.of(X.astype(np.int32)).X.dtype == np.float64
    coo = sp.coo_matrix(X)
    rows = Rows.of(coo)
    assert rows.sparse and rows.csr.format == "csr" and (rows.n, rows.d) == (3, 2)
    indptr, indices, data = rows.parts
    assert indptr.dtype == np.int64 and indices.dtype == np.int32 and data.dtype == np.float64
    x = X[1]
    one = Rows.one(x)
    assert one.row0 is x and one.X.shape == (1, 2)
    assert Rows.one(sp.csr_matrix(X[1:2])).sparse
    with pytest.raises(ValueError, match="x must be one row, got 3"):
        Rows.one(sp.csr_matrix(X))


MIGRATED = {"perceptron": 40, "passive_aggressive": 60}


@pytest.mark.parametrize("module", sorted(MIGRATED))
def test_migrated_learners_are_short_flat_and_unskipped(module: str) -> None:
    """One path per algorithm: a short module, no formatter opt-outs, no deep class chain."""
    path = REPO / "plugins" / "algorithms" / f"{module}.py"
    text = path.read_text()
    assert len(text.splitlines()) <= MIGRATED[module]
    assert "fmt: skip" not in text and "fmt: off" not in text
    names = [n.name for n in ast.parse(text).body if isinstance(n, ast.ClassDef)]
    assert len(names) == 1
    reg = get_registry()
    cls = {"perceptron": "perceptron", "passive_aggressive": "pa"}[module]
    chain = reg.entry("algorithm", cls).cls.__mro__
    assert chain.index(Algorithm) <= 3, chain


def test_no_algorithm_is_more_than_three_classes_below_algorithm() -> None:
    """Every registered algorithm, built-in or bundled, reaches Algorithm within three
    classes (itself included): its parameters and its path, over at most two shared bases."""
    reg = get_registry()
    deep = {}
    for name in reg.names("algorithm"):
        mro = reg.entry("algorithm", name).cls.__mro__
        if mro.index(Algorithm) > 3:
            deep[name] = [c.__name__ for c in mro[: mro.index(Algorithm)]]
    assert not deep, deep


def test_a_learner_without_its_learning_path_says_so() -> None:
    """A learner's learning path is each subclass's to declare (learn_with) or write
    (learn_predict_many): one that does neither gets a one-line error naming the class, not
    Algorithm's row loop calling back into it."""
    from kbench.learners import ExpansionLearner

    class Forgetful(ExpansionLearner):
        name = "forgetful"

    with pytest.raises(
        NotImplementedError, match=r"^Forgetful must call learn_with or define learn_predict_many"
    ):
        Forgetful.learn_predict_many(object.__new__(Forgetful), np.zeros((1, 2)), np.ones(1))


def test_loops_reading_arrays_through_numpys_c_api_import_it() -> None:
    """A compiled module that reads the store through ``_expansion_arrays`` or ``_f64`` (the
    NumPy C API; a block loop cimports the first with ``_loop``) must call
    ``cnp.import_array()``: without it the first call segfaults."""
    core = REPO / "cython_core"
    users = [
        p
        for p in sorted(core.glob("*.pyx"))
        if re.search(r"from kbench\.cython_core\.(_expansion|_arrays|_loop) cimport", p.read_text())
    ]
    assert len(users) >= 15  # every toolkit loop
    missing = [p.name for p in users if "cnp.import_array()" not in p.read_text()]
    assert not missing, f"no cnp.import_array() in {missing}"


def test_a_loop_that_changes_phase_at_the_limit_resumes_there() -> None:
    """``Expansion.at_limit`` is called when a loop returns the store full at its limit; the
    loop resumes at the row it stopped at, and one that stops there twice without learning a
    row gets a one-line error instead of looping for ever."""
    from kbench.learners import Expansion

    kernel = get_registry().create("kernel", "rbf[gamma=0.5]")
    calls: list[tuple[int, int]] = []

    def fills_then_stops(spec, rows, store, y, pred, start=0, have_row=False, kxx=0.0):
        calls.append((start, store.size))
        pred[start:] = 0.0
        return (2 if start < 2 else rows.n), 2, 0  # stops after the row that fills it

    model = Expansion("phased", kernel, limit=2)
    model.at_limit = lambda store: calls.append((-1, store.size))
    X, y = np.zeros((5, 3)), np.ones(5)
    model.learn(fills_then_stops, Rows.of(X), y)
    assert calls == [(0, 0), (-1, 2), (2, 2), (-1, 2)]

    def stops_at_two(spec, rows, store, y, pred, start=0, have_row=False, kxx=0.0):
        return 2, 2, 0  # never past row 2

    stuck = Expansion("phased", kernel, limit=2)
    stuck.at_limit = lambda store: None
    with pytest.raises(
        RuntimeError, match=r"^kbench: phased's loop stopped at its limit twice on row 2$"
    ):
        stuck.learn(stops_at_two, Rows.of(X), y)


def test_a_full_store_grows_by_the_models_factor_up_to_its_limit() -> None:
    """A full store grows by ``Expansion.growth`` (2 by default; POLK, whose inverse Gram
    matrix grows with it, 1.5), at least by one row, and never past ``limit``; its rows are
    kept in order."""
    from kbench.learners import Expansion, SupportBuffer

    kernel = get_registry().create("kernel", "rbf[gamma=0.5]")
    X = np.arange(12.0).reshape(4, 3)
    for growth, limit, want in ((2.0, None, 8), (1.5, None, 6), (1.01, None, 5), (2.0, 6, 6)):
        model = Expansion("grower", kernel, limit=limit)
        model.growth = growth
        store = SupportBuffer(3, 4, growable=True)
        for x in X:
            store.add(x, 1.0)
        model._grow(store)
        assert (store.capacity, store.size) == (want, 4), growth
        np.testing.assert_array_equal(store.X[:4], X)
    polk = create("polk", kernel="rbf", loss="hinge", task="binary")
    assert polk.model.growth == 1.5
