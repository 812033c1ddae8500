"""The registry: built-in and entry-point plugins, validation, isolation of broken plugins."""

from __future__ import annotations

import pytest

from kbench.errors import SpecError
from kbench.registry import Registry

GOOD = '''
from kbench import hookimpl, Kernel
import numpy as np

class Cubic(Kernel):
    """(x·x')³ in plain NumPy."""
    name = "cubic"
    def __init__(self, *, scale: float = 1.0):
        self.scale = scale
    def row(self, S, x, *, out=None, sq=None, xsq=None):
        return (self.scale * (np.asarray(S) @ x)) ** 3
    def matrix(self, A, B):
        return (self.scale * (np.asarray(A) @ np.asarray(B).T)) ** 3
    def diag(self, A):
        return (self.scale * np.einsum("ij,ij->i", A, A)) ** 3

@hookimpl
def kbench_register_kernels(register):
    register(Cubic)
'''


def test_builtins_are_plugins() -> None:
    """Built-in components come from kbench.* plugins registered through the hooks."""
    reg = Registry(entry_points=False)
    assert {"perceptron", "norma"} <= set(reg.names("algorithm"))
    assert {"rbf", "linear"} <= set(reg.names("kernel"))
    assert {"hinge", "logistic"} <= set(reg.names("loss"))
    assert {"a9a", "digits"} <= set(reg.names("dataset"))
    assert reg.entry("algorithm", "norma").plugin == "kbench.algorithms.norma"
    assert not reg.failures()


def test_entry_point_plugin_loads(plugin_dist) -> None:
    """A distribution declaring the kbench entry-point group contributes its components."""
    plugin_dist("kb_cubic", GOOD, version="2.5")
    reg = Registry()
    entry = reg.entry("kernel", "cubic")
    assert entry.plugin == "kb_cubic" and entry.version == "2.5"
    assert reg.plugins["kb_cubic"].components == {"kernels": ["cubic"]}
    k = reg.create("kernel", "cubic[scale=2]")
    assert k.scale == 2.0


def test_plugin_raising_on_import_is_skipped(plugin_dist) -> None:
    """A plugin that fails to import is reported and the others still load."""
    plugin_dist("kb_broken", "raise RuntimeError('boom at import')\n")
    plugin_dist("kb_cubic", GOOD)
    reg = Registry()
    assert "cubic" in reg.names("kernel")
    failed = {p.name: p.error for p in reg.failures()}
    assert "kb_broken" in failed and "boom at import" in failed["kb_broken"]
    assert "perceptron" in reg.names("algorithm")


def test_disable_plugins_env(plugin_dist, monkeypatch) -> None:
    """KBENCH_DISABLE_PLUGINS blocks plugins by name, built-in or not."""
    plugin_dist("kb_cubic", GOOD)
    monkeypatch.setenv("KBENCH_DISABLE_PLUGINS", "kb_cubic, kbench.algorithms.norma")
    reg = Registry()
    assert "cubic" not in reg.names("kernel")
    assert "norma" not in reg.names("algorithm")
    assert reg.plugins["kb_cubic"].disabled


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "class Bad:\n    '''Not a kernel.'''\n    name = 'bad'\n",
            "not a subclass of kbench.Kernel",
        ),
        (
            "class Bad(Kernel):\n    name = 'bad'\n    def __init__(self):\n        pass\n",
            "has no docstring",
        ),
        (
            "class Bad(Kernel):\n    '''Doc.'''\n    name = 'bad'\n    def __init__(self, width):\n        pass\n",
            "must be keyword-only with a default",
        ),
        (
            "class Bad(Kernel):\n    '''Doc.'''\n    name = 'bad'\n    def __init__(self, *, width=1.0):\n        pass\n",
            "has no type annotation",
        ),
        (
            "class Bad(Kernel):\n    '''Doc.'''\n    name = 'rbf'\n    def __init__(self):\n        pass\n",
            "which plugin 'kbench.kernels.radial' already registered",
        ),
        (
            "class Bad(Kernel):\n    '''Doc.'''\n    name = 'Bad Name'\n    def __init__(self):\n        pass\n",
            "needs a class attribute name",
        ),
    ],
    ids=["wrong-base", "no-docstring", "positional", "unannotated", "duplicate", "bad-name"],
)
def test_invalid_registrations_name_the_plugin(plugin_dist, body: str, message: str) -> None:
    """Each invalid registration is rejected with an error naming the plugin; others load."""
    source = f"from kbench import hookimpl, Kernel\n{body}\n@hookimpl\ndef kbench_register_kernels(register):\n    register(Bad)\n"
    plugin_dist("kb_bad", source)
    reg = Registry()
    failed = {p.name: p.error for p in reg.failures()}
    assert "kb_bad" in failed, failed
    assert "kb_bad" in failed["kb_bad"] and message in failed["kb_bad"]
    assert reg.entry("kernel", "rbf").plugin == "kbench.kernels.radial"


def test_unknown_component_suggests_closest() -> None:
    """An unknown name lists the valid ones and suggests the closest."""
    reg = Registry(entry_points=False)
    with pytest.raises(
        SpecError,
        match=r"unknown algorithm 'percepton' \(did you mean 'perceptron'\?\); available: .*norma",
    ):
        reg.create("algorithm", "percepton")


def test_unknown_parameter_lists_valid_ones() -> None:
    """An unknown parameter names the valid ones and suggests the closest."""
    reg = Registry(entry_points=False)
    with pytest.raises(
        SpecError,
        match=r"has no parameter 'gama' \(did you mean 'gamma'\?\); parameters: gamma, sigma",
    ):
        reg.create("kernel", "rbf[gama=1]")


def test_out_of_range_value_is_spec_error() -> None:
    """Constructor range checks surface as SpecError naming the parameter."""
    reg = Registry(entry_points=False)
    with pytest.raises(SpecError, match=r"rbf: gamma must be in \(0"):
        reg.create("kernel", "rbf[gamma=-1]")
    with pytest.raises(SpecError, match="expected a number, got 'abc'"):
        reg.create("kernel", "rbf[gamma=abc]")


def test_canonical_spec_fills_defaults_and_sorts() -> None:
    """Canonical specs list every parameter, sorted; short specs only the non-defaults."""
    reg = Registry(entry_points=False)
    canon = reg.canonical("algorithm", "norma[budget=50,eta=0.1]")
    assert canon.startswith("norma[budget=50,c=0.01,eta=0.1,")
    assert reg.short("algorithm", canon) == "norma[budget=50,eta=0.1]"


def test_nested_specs_are_canonical_too() -> None:
    """A parameter declared in spec_params holds a spec that is canonicalised in turn, so
    equivalent nested specs give one task id, and a change of the inner defaults another."""
    reg = Registry(entry_points=False)
    a = reg.canonical("algorithm", "active_all[base=pa]")
    b = reg.canonical("algorithm", "active_all[max_queries=0,base=pa[variant=PA-I,C=1.0]]")
    assert a == b == "active_all[base=pa[C=1.0,variant=PA-I],max_queries=0]"
    assert reg.canonical("algorithm", "active_all[base=pa[C=2]]") != a
    assert reg.short("algorithm", a) == "active_all[base=pa]"
    assert reg.short("algorithm", "active_all[base=online_svm_r]") == "active_all"
    assert reg.short("algorithm", "active_all[base=pa[C=2]]") == "active_all[base=pa[C=2.0]]"
    cos = reg.canonical("kernel", "cosine[base=poly]")
    assert (
        cos.startswith("cosine[base=poly[degree=3,")
        and reg.short("kernel", cos) == "cosine[base=poly]"
    )
    # the canonical spec builds the same learner
    kernel = reg.create("kernel", "rbf")
    assert repr(reg.create("algorithm", a, kernel=kernel).learner) == repr(
        reg.create("algorithm", "active_all[base=pa]", kernel=kernel).learner
    )
    with pytest.raises(SpecError, match="unknown algorithm 'nope'"):
        reg.canonical("algorithm", "active_all[base=nope]")
