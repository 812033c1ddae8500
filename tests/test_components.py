"""Declared component parameters (``param``): the generated constructor, its checks (the
built-in kernels' and losses' among them), ``repr``, the signature the spec grammar reads,
``kbench list``, and hand-written constructors beside them; and ``grown``, the one helper
that enlarges preallocated arrays."""

from __future__ import annotations

import inspect
import json
import re
import typing
from typing import Literal

import numpy as np
import pytest

from kbench.core.arrays import grown, one_rows
from kbench.core.components import Algorithm, Dataset, Kernel, param
from kbench.core.errors import SpecError
from kbench.core.registry import Registry, get_registry


class Bumpy(Kernel):
    """A kernel declared with param() (never registered: its methods are not needed here).

    Parameters
    ----------
    width
        Width of the bumps,
        strictly positive.
    mode
        How bumps add up.
    """

    name = "bumpy"
    width: float = param(1.0, low=0.0, low_open=True)
    mode: Literal["sum", "max"] = param("sum", doc="sum or max")
    cap: float | None = param(None, low=0.0, high=10.0, high_open=True)

    def __post_init__(self) -> None:
        self.ready = self.width * 2


class Stepper(Algorithm):
    """An algorithm declared with param()."""

    name = "stepper"
    eta: float = param(0.5, low=0.0, low_open=True)
    budget: int = param(100, low=1)

    def __post_init__(self) -> None:
        self.state = np.zeros(self.budget)


class SmallStepper(Stepper):
    """A subclass: a new default for an inherited parameter, and one parameter more."""

    name = "small_stepper"
    budget = 10
    decay: float = param(0.0, low=0.0, high=1.0)


def test_generated_constructor_is_keyword_only_with_the_declared_defaults() -> None:
    k = Bumpy()
    assert (k.width, k.mode, k.cap, k.ready) == (1.0, "sum", None, 2.0)
    k = Bumpy(width=3.0, mode="max", cap=2.5)
    assert (k.width, k.mode, k.cap, k.ready) == (3.0, "max", 2.5, 6.0)
    with pytest.raises(TypeError, match="positional"):
        Bumpy(3.0)  # type: ignore[misc]
    with pytest.raises(TypeError, match="unexpected keyword argument 'widht'"):
        Bumpy(widht=3.0)  # type: ignore[call-arg]
    # The class attribute reads as the default; the instance holds its own value.
    assert Bumpy.width == 1.0 and Bumpy(width=5.0).width == 5.0


def test_signature_and_type_hints_are_those_of_a_written_constructor() -> None:
    sig = inspect.signature(Bumpy.__init__)
    params = list(sig.parameters.values())[1:]
    assert [p.name for p in params] == ["width", "mode", "cap"]
    assert all(p.kind is p.KEYWORD_ONLY for p in params)
    assert [p.default for p in params] == [1.0, "sum", None]
    assert typing.get_type_hints(Bumpy.__init__) == {
        "width": float,
        "mode": Literal["sum", "max"],
        "cap": float | None,
        "return": type(None),
    }
    # An algorithm's generated constructor takes the context parameters first.
    names = list(inspect.signature(SmallStepper.__init__).parameters)[1:]
    assert names == ["kernel", "loss", "task", "n_classes", "seed", "eta", "budget", "decay"]


def test_out_of_range_values_give_check_range_messages() -> None:
    with pytest.raises(ValueError) as exc:
        Bumpy(width=0.0)
    assert str(exc.value) == "bumpy: width must be in (0.0, inf], got 0.0"
    with pytest.raises(ValueError) as exc:
        Bumpy(cap=10.0)
    assert str(exc.value) == "bumpy: cap must be in [0.0, 10.0), got 10.0"
    with pytest.raises(ValueError, match=r"bumpy: width must be in \(0.0, inf\], got nan"):
        Bumpy(width=float("nan"))
    Bumpy(cap=None)  # None, the "not set" value, is never out of range
    # A subclass's messages name the subclass; its new default keeps the declared range.
    with pytest.raises(ValueError) as exc:
        SmallStepper(kernel=Bumpy(), budget=0)
    assert str(exc.value) == "small_stepper: budget must be in [1, inf], got 0"


def test_built_in_messages_are_unchanged_through_the_registry() -> None:
    """The messages of converted built-ins, as kbench shows them (one line, SpecError)."""
    reg = get_registry()
    cases = {
        ("kernel", "laplacian[gamma=0]"): "laplacian: gamma must be in (0.0, inf], got 0.0",
        ("loss", "ramp[s=1]"): "ramp: s must be in [-inf, 1.0), got 1.0",
        (
            "dataset",
            "checkerboard[noise=0.7]",
        ): "checkerboard: noise must be in [0.0, 0.5], got 0.7",
        ("dataset", "haykin[n_train=0]"): "haykin: n_train must be in [1, inf], got 0",
        ("kernel", "rbf[gamma=1,sigma=1]"): "rbf: give gamma or sigma, not both",
    }
    for (kind, spec), message in cases.items():
        with pytest.raises(SpecError) as exc:
            reg.create(kind, spec)
        assert str(exc.value) == message
    kernel = reg.create("kernel", "rbf")
    loss = reg.create("loss", "hinge")
    with pytest.raises(SpecError) as exc:
        reg.create("algorithm", "norma[budget=0]", kernel=kernel, loss=loss)
    assert str(exc.value) == "norma: budget must be in [1, inf], got 0"
    with pytest.raises(SpecError) as exc:
        reg.create("algorithm", "norma[eta=2,c=1]", kernel=kernel, loss=loss)
    assert str(exc.value).startswith("norma: eta·c must be ≤ 1")


#: Out-of-range values of built-in kernels and losses; the error must name the last parameter
#: each spec sets.
OUT_OF_RANGE = {
    "kernel": [
        "rbf[gamma=-1]",
        "rbf[gamma=0]",
        "rbf[sigma=-2]",
        "rbf[gamma=inf]",
        "poly[degree=0]",
        "poly[degree=-2]",
        "poly[scale=0]",
        "poly[offset=-1]",
        "laplacian[gamma=0]",
        "laplacian[gamma=-0.5]",
        "cosine[base=rbf[gamma=-1]]",
    ],
    "loss": [
        "ramp[s=1]",
        "ramp[s=2]",
        "ramp[s=nan]",
        "eps_insensitive[epsilon=-0.1]",
        "huber[delta=0]",
        "huber[delta=-1]",
        "novelty_hinge[rho=-1]",
        "novelty_hinge[nu=1.5]",
        "novelty_hinge[nu=-0.1]",
    ],
}


@pytest.mark.parametrize(
    "kind, spec", [(kind, spec) for kind, specs in OUT_OF_RANGE.items() for spec in specs]
)
def test_bad_parameters_of_built_ins_raise_naming_the_parameter(kind: str, spec: str) -> None:
    """A built-in kernel's or loss's out-of-range value is a ValueError naming the parameter."""
    pname = re.findall(r"(\w+)=", spec)[-1]
    with pytest.raises(ValueError, match=rf"\b{pname} must be"):
        get_registry().create(kind, spec)


def test_repr_is_the_sorted_spec_and_round_trips() -> None:
    k = Bumpy(width=2.0, mode="max")
    assert repr(k) == "bumpy[cap=None,mode=max,width=2.0]" == repr(Bumpy(mode="max", width=2.0))
    assert k.spec(defaults=False) == "bumpy[mode=max,width=2.0]"
    reg = get_registry()
    for kind, spec in [
        ("kernel", "poly[degree=2,offset=0.5,scale=2.0]"),
        ("loss", "huber[delta=0.5]"),
        ("dataset", "twonorm[d=5,n_test=10,n_train=20]"),
    ]:
        obj = reg.create(kind, spec)
        assert repr(obj) == spec and repr(reg.create(kind, repr(obj))) == spec


def test_parameters_carry_range_and_doc() -> None:
    p = Bumpy.parameters()
    assert list(p) == ["width", "mode", "cap"]
    assert (p["width"].range_text, p["mode"].range_text, p["cap"].range_text) == (
        "(0.0, inf]",
        "",
        "[0.0, 10.0)",
    )
    # doc= wins; otherwise the numpydoc entry, joined on one line
    assert p["width"].doc == "Width of the bumps, strictly positive."
    assert p["mode"].doc == "sum or max"
    assert p["mode"].type_name == "{sum,max}"
    sp = SmallStepper.parameters()
    assert [(n, q.default) for n, q in sp.items()] == [("eta", 0.5), ("budget", 10), ("decay", 0.0)]
    assert Stepper.parameters()["budget"].default == 100  # the base keeps its own default
    # A parameter declared by a base class in another module resolves there.
    svmd = get_registry().entry("algorithm", "svmd").cls
    assert svmd.parameters()["eta"].default == 0.1 and svmd.parameters()["eta"].annotation is float
    assert svmd.parameters()["budget"].doc.startswith("ω")


class Sibling(Kernel, params_of=Bumpy):
    """A class that takes Bumpy's parameters without deriving from it (no Parameters
    section: the docs are Bumpy's), with one default changed and one parameter more."""

    name = "sibling"
    mode = "max"
    depth: int = param(2, low=0)


def test_params_of_lends_another_class_its_parameters() -> None:
    """``params_of=Other`` declares Other's parameters (range, type, doc) before the
    class's own; the constructor checks them and the lender is unchanged."""
    p = Sibling.parameters()
    assert [(n, q.default) for n, q in p.items()] == [
        ("width", 1.0),
        ("mode", "max"),
        ("cap", None),
        ("depth", 2),
    ]
    assert p["width"].doc == "Width of the bumps, strictly positive."
    assert p["mode"].doc == "sum or max" and p["mode"].type_name == "{sum,max}"
    assert p["cap"].range_text == "[0.0, 10.0)" and not issubclass(Sibling, Bumpy)
    s = Sibling(width=2.0, depth=0)
    assert (s.width, s.mode, s.cap, s.depth) == (2.0, "max", None, 0)
    assert repr(s) == "sibling[cap=None,depth=0,mode=max,width=2.0]"
    with pytest.raises(ValueError, match=r"sibling: width must be in \(0.0, inf\], got 0.0"):
        Sibling(width=0.0)
    assert Bumpy.parameters()["mode"].default == "sum" and "depth" not in Bumpy.parameters()
    # The built-in asgd takes those of sgd.
    reg = get_registry()
    asgd, sgd = (reg.entry("algorithm", n).cls for n in ("asgd", "sgd"))
    assert asgd.parameters() == sgd.parameters()
    context = {"kernel": reg.create("kernel", "rbf"), "loss": reg.create("loss", "hinge")}
    made = reg.create("algorithm", "asgd[eta=0.5,schedule=inv_sqrt]", **context)
    assert (made.eta, made.schedule) == (0.5, "inv_sqrt")
    with pytest.raises(TypeError, match=r"params_of of .*Child must be a component class"):

        class Child(Bumpy, params_of=Bumpy):
            """A base is no lender."""

            name = "child"


def test_a_hand_written_constructor_still_works_beside_declared_ones() -> None:
    """Third-party style: __init__ written out, check_range called, attributes set."""

    class Written(Dataset):
        """A data set with its own constructor.

        Parameters
        ----------
        size
            How many.
        """

        name = "written"

        def __init__(self, *, size: int = 5) -> None:
            if size < 1:
                raise ValueError(f"written: size must be at least 1, got {size}")
            self.size = size

    p = Written.parameters()
    assert list(p) == ["size"] and p["size"].default == 5 and p["size"].annotation is int
    assert p["size"].range_text == "" and p["size"].doc == "How many."
    assert repr(Written(size=3)) == "written[size=3]"

    class WrittenStepper(Stepper):
        """A hand-written subclass of a declared class: its own signature is read."""

        name = "written_stepper"

        def __init__(self, *, kernel=None, loss=None, task="binary", n_classes=2, seed=0,
                     eta: float = 0.25) -> None:  # fmt: skip
            super().__init__(
                kernel=kernel, loss=loss, task=task, n_classes=n_classes, seed=seed, eta=eta
            )

    w = WrittenStepper(kernel=Bumpy())
    assert (w.eta, w.budget, len(w.state)) == (0.25, 100, 100)
    assert list(WrittenStepper.parameters()) == ["eta"]
    with pytest.raises(ValueError, match="written_stepper: eta must be in"):
        WrittenStepper(kernel=Bumpy(), eta=-1.0)


def test_declaring_and_writing_init_is_refused() -> None:
    with pytest.raises(TypeError, match="defines __init__ and declares its parameters"):

        class Both(Kernel):
            """Both."""

            name = "both"
            a: float = param(1.0)

            def __init__(self, *, a: float = 1.0) -> None:
                self.a = a

    with pytest.raises(TypeError, match=r"parameter .b. of .*Bare has no type annotation"):

        class Bare(Kernel):
            """Bare."""

            name = "bare"
            b = param(1.0)


def test_the_plugin_example_and_a_declared_plugin_load_together(plugin_dist) -> None:
    """A plugin may declare parameters with param(): the registry validates and lists them."""
    plugin_dist(
        "kb_declared",
        '''
from kbench import hookimpl, Kernel
from kbench.api import param
import numpy as np

class Scaled(Kernel):
    """s·⟨x, x'⟩ in NumPy.

    Parameters
    ----------
    s
        The factor.
    """
    name = "scaled"
    s: float = param(1.0, low=0.0, low_open=True)
    def row(self, S, x, *, out=None, sq=None, xsq=None):
        return self.s * (np.asarray(S) @ x)
    def matrix(self, A, B):
        return self.s * (np.asarray(A) @ np.asarray(B).T)
    def diag(self, A):
        return self.s * np.einsum("ij,ij->i", A, A)

@hookimpl
def kbench_register_kernels(register):
    register(Scaled)
''',
    )
    reg = Registry()
    assert not reg.failures()
    assert reg.create("kernel", "scaled[s=2]").s == 2.0
    with pytest.raises(SpecError, match=r"^scaled: s must be in \(0.0, inf\], got -1.0$"):
        reg.create("kernel", "scaled[s=-1]")


def test_kbench_list_documents_parameters() -> None:
    from click.testing import CliRunner

    from kbench.cli.main import cli

    runner = CliRunner()
    rows = json.loads(runner.invoke(cli, ["list", "kernels", "--json"]).output)
    lap = next(r for r in rows if r["name"] == "laplacian")
    assert lap["parameters"]["gamma"] == {
        "type": "float",
        "default": 1.0,
        "range": "(0.0, inf]",
        "doc": "Inverse width, > 0.",
    }
    one = runner.invoke(cli, ["list", "algorithms", "norma", "--json"])
    assert one.exit_code == 0, one.output
    eta = next(p for p in json.loads(one.output) if p["name"] == "eta")
    assert eta["range"] == "(0.0, inf]" and eta["doc"].startswith("Initial step size")
    table = runner.invoke(cli, ["list", "kernels", "laplacian"], terminal_width=200)
    assert table.exit_code == 0
    assert "gamma" in table.output and "(0.0, inf]" in table.output
    assert "Inverse width" in table.output


def test_grown_keeps_the_leading_block() -> None:
    a = np.arange(6, dtype=np.int64).reshape(3, 2)
    g = grown(a, 5)
    assert g.shape == (5, 2) and g.dtype == np.int64
    assert g[:3].tolist() == a.tolist() and not g[3:].any()
    assert grown(np.array([1.0, 2.0, 3.0]), 5, keep=2, fill=-1).tolist() == [1, 2, -1, -1, -1]
    K = np.arange(9.0).reshape(3, 3)
    G = grown(K, (4, 6), keep=(2, 3))
    assert G[:2, :3].tolist() == K[:2].tolist() and G.sum() == K[:2].sum()
    assert a.tolist() == [[0, 1], [2, 3], [4, 5]]  # the old array is left as it was
    with pytest.raises(ValueError, match="cannot grow a 2-d array"):
        grown(K, (4,))


def test_one_rows_gives_the_rows_of_a_csr_matrix_as_scipy_does() -> None:
    """Every row, empty ones too, equal to scipy's X[i] (values, indices, shape, type,
    sorted-index flag even for a matrix whose indices are not sorted), and a copy."""
    import scipy.sparse as sp

    dense_rows = sp.random(30, 12, density=0.2, random_state=0).toarray()
    dense_rows[3] = 0.0  # an empty row
    X = sp.csr_matrix(dense_rows)
    unsorted = X.copy()
    for i in range(unsorted.shape[0]):  # reverse each row's entries
        a, b = unsorted.indptr[i], unsorted.indptr[i + 1]
        unsorted.indices[a:b] = unsorted.indices[a:b][::-1].copy()
        unsorted.data[a:b] = unsorted.data[a:b][::-1].copy()
    unsorted.__dict__.pop("_has_sorted_indices", None)
    for M in (X, unsorted):
        rows = list(one_rows(M))
        assert len(rows) == 30
        for i, row in enumerate(rows):
            ref = M[i]
            assert type(row) is type(ref) and row.shape == ref.shape == (1, 12)
            assert row.nnz == ref.nnz
            np.testing.assert_array_equal(row.toarray(), ref.toarray())
            assert row.has_sorted_indices == ref.has_sorted_indices
    assert not all(r.has_sorted_indices for r in one_rows(unsorted) if r.nnz > 1)
    first = next(one_rows(X))
    kept = first.toarray().copy()
    X.data[:] = -1.0  # the matrix changes after the row was handed out: the row does not
    np.testing.assert_array_equal(first.toarray(), kept)
    dense = np.arange(12.0).reshape(3, 4)
    assert [r.tolist() for r in one_rows(dense)] == dense.tolist()
