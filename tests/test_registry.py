"""The registry: built-in and entry-point plugins, validation, isolation of broken plugins."""

from __future__ import annotations

import pytest

from conftest import CUBIC_PLUGIN
from kbench.core.errors import SpecError
from kbench.core.registry import Registry


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
    plugin_dist("kb_cubic", CUBIC_PLUGIN, version="2.5")
    reg = Registry()
    entry = reg.entry("kernel", "cubic")
    assert entry.plugin == "kb_cubic" and entry.version == "2.5"
    assert reg.plugins["kb_cubic"].components == {"kernels": ["cubic"]}
    k = reg.create("kernel", "cubic[scale=2]")
    assert k.scale == 2.0


def test_plugin_raising_on_import_is_skipped(plugin_dist) -> None:
    """A plugin that fails to import is reported and the others still load."""
    plugin_dist("kb_broken", "raise RuntimeError('boom at import')\n")
    plugin_dist("kb_cubic", CUBIC_PLUGIN)
    reg = Registry()
    assert "cubic" in reg.names("kernel")
    failed = {p.name: p.error for p in reg.failures()}
    assert "kb_broken" in failed and "boom at import" in failed["kb_broken"]
    assert "perceptron" in reg.names("algorithm")


def test_disable_plugins_env(plugin_dist, monkeypatch) -> None:
    """KBENCH_DISABLE_PLUGINS blocks plugins by name, built-in or not."""
    plugin_dist("kb_cubic", CUBIC_PLUGIN)
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


@pytest.mark.parametrize(
    "kind, spec, match",
    [
        # An unknown name lists the valid ones and suggests the closest.
        (
            "algorithm",
            "percepton",
            r"unknown algorithm 'percepton' \(did you mean 'perceptron'\?\); available: .*norma",
        ),
        # An unknown parameter names the valid ones and suggests the closest.
        (
            "kernel",
            "rbf[gama=1]",
            r"has no parameter 'gama' \(did you mean 'gamma'\?\); parameters: gamma, sigma",
        ),
        # Constructor range checks surface as SpecError naming the parameter.
        ("kernel", "rbf[gamma=-1]", r"rbf: gamma must be in \(0"),
        ("kernel", "rbf[gamma=abc]", "expected a number, got 'abc'"),
    ],
)
def test_bad_spec_is_a_spec_error_that_says_why(kind: str, spec: str, match: str) -> None:
    """An unknown component or parameter, or a value that cannot be used, is a SpecError
    that names it, with the valid choices where there is a list of them."""
    with pytest.raises(SpecError, match=match):
        Registry(entry_points=False).create(kind, spec)


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


#: A plugin whose kernel hook is valid but whose loss hook raises.
HALF_BROKEN = '''
from kbench import hookimpl, Kernel, Loss
import numpy as np

class Quartic(Kernel):
    """(x·x')⁴ in plain NumPy."""
    name = "quartic"
    def __init__(self) -> None:
        pass
    def row(self, S, x, *, out=None, sq=None, xsq=None):
        return (np.asarray(S) @ x) ** 4
    def matrix(self, A, B):
        return (np.asarray(A) @ np.asarray(B).T) ** 4
    def diag(self, A):
        return np.einsum("ij,ij->i", A, A) ** 4

@hookimpl
def kbench_register_kernels(register):
    register(Quartic)

@hookimpl
def kbench_register_losses(register):
    raise RuntimeError("no losses today")
'''

#: A plugin with one valid kernel hook and one hook registering something that is no loss.
HALF_INVALID = '''
from kbench import hookimpl
from kb_half import Quartic

class Quintic(Quartic):
    """(x·x')⁵ in plain NumPy."""
    name = "quintic"

@hookimpl
def kbench_register_kernels(register):
    register(Quintic)

@hookimpl
def kbench_register_losses(register):
    register(dict)
'''


def test_plugin_raising_in_one_hook_contributes_nothing(plugin_dist) -> None:
    """A plugin whose one hook raises keeps none of its other hooks' components: it is
    listed as broken with the hook and the reason, and the other plugins still load."""
    plugin_dist("kb_half", HALF_BROKEN)
    plugin_dist("kb_cubic", CUBIC_PLUGIN)
    reg = Registry()
    assert "quartic" not in reg.names("kernel")
    with pytest.raises(SpecError, match="unknown kernel 'quartic'"):
        reg.entry("kernel", "quartic")
    info = reg.plugins["kb_half"]
    assert info.components == {} and info.status == "broken"
    assert info.error == (
        "plugin 'kb_half': kbench_register_losses raised RuntimeError: no losses today"
    )
    assert {p.name for p in reg.failures()} == {"kb_half"}
    # Nothing of it stays in the plugin manager either: no later hook call reaches it.
    assert reg.pm.get_plugin("kb_half") is None
    assert reg.entry("kernel", "cubic").plugin == "kb_cubic"
    assert reg.plugins["kb_cubic"].status == "ok"


def test_plugin_registering_anything_invalid_contributes_nothing(plugin_dist) -> None:
    """One invalid registration in any hook withdraws the plugin's valid ones too."""
    plugin_dist("kb_half", HALF_BROKEN)
    plugin_dist("kb_fifth", HALF_INVALID)
    reg = Registry()
    assert not {"quartic", "quintic"} & set(reg.names("kernel"))
    error = reg.plugins["kb_fifth"].error
    assert error is not None and error.startswith("plugin 'kb_fifth' registered <class 'dict'>")
    assert "not a subclass of kbench.Loss" in error
    assert reg.plugins["kb_fifth"].components == {}


def test_plugin_registering_one_name_twice_is_broken(plugin_dist) -> None:
    """Two classes under one name from one plugin would silently shadow each other."""
    plugin_dist(
        "kb_twice",
        CUBIC_PLUGIN + "\n@hookimpl(specname='kbench_register_kernels')\n"
        "def again(register):\n    register(Cubic)\n",
    )
    reg = Registry()
    assert "cubic" not in reg.names("kernel")
    assert "registered kernel 'cubic' twice" in reg.plugins["kb_twice"].error


def test_kbench_plugins_lists_a_half_broken_plugin_as_broken(plugin_dist) -> None:
    """`kbench plugins` (table and --json) shows the plugin as broken, with its reason."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    plugin_dist("kb_half", HALF_BROKEN)
    kbench = [str(Path(sys.executable).with_name("kbench")), "plugins"]
    env = {**os.environ, "COLUMNS": "250"}
    proc = subprocess.run([*kbench, "--json"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    rows = {row["name"]: row for row in json.loads(proc.stdout)}
    assert rows["kb_half"]["status"] == "broken" and rows["kb_half"]["components"] == {}
    assert "kbench_register_losses raised RuntimeError: no losses today" in rows["kb_half"]["error"]
    assert rows["kbench.kernels.radial"]["status"] == "ok"
    table = subprocess.run(kbench, capture_output=True, text=True, env=env)
    assert table.returncode == 0, table.stderr
    line = next(ln for ln in table.stdout.splitlines() if "kb_half" in ln)
    assert "broken: plugin 'kb_half': kbench_register_losses raised RuntimeError" in line
    assert "quartic" not in table.stdout


def test_builtin_index_matches_what_the_modules_register() -> None:
    """The static index the registry finds built-in components by is up to date."""
    from kbench.core._plugin_index import BUILTIN_INDEX
    from kbench.core.registry import builtin_index

    assert builtin_index() == BUILTIN_INDEX, (
        "kbench/core/_plugin_index.py is out of date: run python scripts/update_plugin_index.py"
    )


def test_a_component_imports_only_its_own_plugin(plugin_dist) -> None:
    """Looking a built-in component up imports its module alone (in a fresh interpreter, so
    nothing is imported already), and its compiled core not scipy.linalg's package; a name no
    built-in has loads every plugin, and none imports scipy.stats."""
    import subprocess
    import sys

    plugin_dist("kb_cubic", CUBIC_PLUGIN)
    code = """
import sys
from kbench.core.registry import Registry
reg = Registry()
assert reg.entry("algorithm", "rbp").plugin == "kbench.algorithms.budget_perceptrons"
assert reg.create("kernel", "rbf").name == "rbf"
assert reg.has("loss", "hinge")
loaded = sorted(
    m for m in sys.modules
    if m.startswith("kbench.plugins.") and m.count(".") == 3 and "._" not in m
)
assert loaded == ["kbench.plugins.algorithms.budget_perceptrons",
                  "kbench.plugins.kernels.radial", "kbench.plugins.losses.margin"], loaded
assert "kb_cubic" not in sys.modules and "scipy.stats" not in sys.modules
# The compiled core found SciPy's BLAS table without importing scipy.linalg's package, which
# still imports and works afterwards, with that same table.
assert "scipy.linalg" not in sys.modules
import numpy as np
import scipy.linalg
from scipy.linalg import cython_blas
assert cython_blas is sys.modules["scipy.linalg.cython_blas"]
assert np.allclose(scipy.linalg.solve(2 * np.eye(3), np.ones(3)), 0.5)
assert reg.entry("kernel", "cubic").plugin == "kb_cubic"
assert not reg.has("loss", "no_such_loss")
assert "kbench.plugins.datasets.synthetic" in sys.modules
# No plugin imports scipy.stats (0.3 s) just by being loaded.
assert "scipy.stats" not in sys.modules
assert all(info.status == "ok" for info in reg.plugins.values())
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_failures_are_reported_as_plugins_load(plugin_dist) -> None:
    """watch_failures hears of each failure once: those so far, and those of later loads."""
    plugin_dist("kb_half", HALF_BROKEN)
    reg = Registry()
    heard: list[str] = []
    reg.watch_failures(lambda info: heard.append(info.name))
    reg.watch_failures(lambda info: heard.append("again:" + info.name))
    assert heard == [] and reg.plugins["kb_half"].status == "broken"
    assert heard == ["kb_half", "again:kb_half"]
    reg.failures()
    assert heard == ["kb_half", "again:kb_half"]
