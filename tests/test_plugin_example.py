"""Third-party plugins: the example distribution installed with pip, load controls, bad input.

The example plugin (``examples/kbench-plugin-example``) is installed with a real
``pip install`` into a throwaway virtual environment that sees this environment's
packages (kbench included) through a ``.pth`` file, so nothing is installed where other
tests run; uninstalling it is a real ``pip uninstall``. ``--system-site-packages`` would
not do: it exposes the base interpreter's packages, not those of the environment kbench
is installed in.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import numpy as np
import pytest

import kbench.api
from conftest import CUBIC_PLUGIN, KBENCH, REPO
from kbench.core.components import Kernel
from kbench.core.errors import RegistryError
from kbench.core.registry import Registry
from kbench.results.store import load_results
from kbench.testing import check_component, component_cases, parametrize_components

EXAMPLE = REPO / "examples" / "kbench-plugin-example"
EXAMPLE_COMPONENTS = {
    ("algorithm", "budget_perceptron"),
    ("algorithm", "plain_rbp"),
    ("kernel", "cauchy"),
    ("loss", "modified_huber"),
    ("dataset", "spirals"),
}


def _other_kernel(name: str) -> str:
    """A second valid kernel plugin, registering Cubic under another name."""
    return CUBIC_PLUGIN.replace('name = "cubic"', f"name = {name!r}")


# --------------------------------------------------------------------------------------------
# The example distribution, installed with pip
# --------------------------------------------------------------------------------------------


def _make_venv(root: Path) -> Path:
    """A virtual environment whose Python also imports this environment's packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # addsitedir (not a bare path) so that the editable install's own .pth files run too.
    ours = sysconfig.get_paths()["purelib"]
    Path(purelib, "_kbench_test_base.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return python


def _run(cmd: list[str], env: dict[str, str], cwd: Path | None = None, timeout: float = 300):
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


STUDY = """
[study]
seeds = [0]

[[experiment]]
name = "plugin algorithm and kernel beside built-ins"
datasets = ["spirals[n_train=300,n_test=100]", "checkerboard[n_train=300,n_test=100]"]
algorithms = ["budget_perceptron[budget=1000]", "budget_perceptron[budget=10]", "perceptron"]
kernels = ["cauchy[sigma=0.3]"]

[[experiment]]
name = "plugin loss in a built-in algorithm"
datasets = ["spirals[n_train=300,n_test=100]"]
algorithms = ["norma[budget=100]"]
kernels = ["rbf[gamma=10]"]
losses = ["modified_huber", "hinge"]
"""


@pytest.mark.slow
def test_example_plugin_installs_runs_beside_builtins_and_uninstalls(tmp_path: Path) -> None:
    """pip install the example; kbench lists and runs it on the built-ins' streams; uninstall."""
    source = tmp_path / "kbench-plugin-example"
    # A copy, so that the build's egg-info and build/ folders stay out of the repository.
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    python = _make_venv(tmp_path / "venv")
    env = {k: v for k, v in os.environ.items() if k != "KBENCH_LOAD_PLUGINS"}
    env["COLUMNS"] = "200"
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input"]
    kbench = [str(python), str(KBENCH)]

    installed = _run(
        [*pip, "install", "--no-deps", "--no-build-isolation", "--no-index", str(source)], env
    )
    assert installed.returncode == 0, installed.stderr

    # kbench list and kbench plugins show the components under the plugin's name.
    listing = _run([*kbench, "list", "--json"], env)
    assert listing.returncode == 0, listing.stderr
    rows = json.loads(listing.stdout)
    assert {(r["kind"], r["name"]) for r in rows if r["plugin"] == "example"} == EXAMPLE_COMPONENTS
    assert {r["version"] for r in rows if r["plugin"] == "example"} == {"0.1.0"}
    assert "example" in _run([*kbench, "list", "kernels"], env).stdout
    plugins = {p["name"]: p for p in json.loads(_run([*kbench, "plugins", "--json"], env).stdout)}
    assert plugins["example"]["distribution"] == "kbench-plugin-example"
    assert plugins["example"]["components"] == {
        "algorithms": ["budget_perceptron", "plain_rbp"],
        "kernels": ["cauchy"],
        "losses": ["modified_huber"],
        "datasets": ["spirals"],
    }

    # KBENCH_LOAD_PLUGINS selects it by distribution name, or leaves it out.
    only = _run(
        [*kbench, "list", "--json"], {**env, "KBENCH_LOAD_PLUGINS": "kbench-plugin-example"}
    )
    assert "spirals" in {r["name"] for r in json.loads(only.stdout)}
    none = _run([*kbench, "list", "--json"], {**env, "KBENCH_LOAD_PLUGINS": ""})
    names = {r["name"] for r in json.loads(none.stdout)}
    assert "spirals" not in names and "perceptron" in names

    # kbench run: its components beside the built-ins, every algorithm on the same streams.
    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    out = tmp_path / "results"
    options = ["--workers", "1", "--no-memory", "--no-report", "--out", str(out)]
    ran = _run([*kbench, "run", str(study), *options], env)
    assert ran.returncode == 0, ran.stderr
    assert "budget_perceptron" in ran.stdout
    results = load_results(out)
    runs = results.runs
    assert len(runs) == 8 and (runs["status"] == "ok").all(), runs[["algorithm", "reason"]]
    plugin_of = dict(zip(runs["algorithm"], runs["plugin"], strict=True))
    assert plugin_of == {
        "budget_perceptron": "example",
        "perceptron": "kbench.algorithms.perceptron",
        "norma": "kbench.algorithms.norma",
    }
    assert set(runs["loss"].dropna()) == {"modified_huber", "hinge"}
    for _, group in runs.groupby("dataset"):
        assert group["stream_id"].nunique() == 1, group[["algorithm", "stream_id"]]
    assert runs.groupby("dataset")["stream_id"].first().nunique() == 2
    # Never over budget, the budget perceptron is the kernel perceptron: same outcomes.
    outcomes = results.outcomes.set_index("task_id")["outcome"]
    for dataset in ("spirals", "checkerboard"):
        on = runs[runs["dataset"] == dataset].set_index("algorithm_spec")["task_id"]
        unbounded = outcomes[on["budget_perceptron[beta=0.0,budget=1000]"]]
        assert np.array_equal(unbounded, outcomes[on["perceptron"]])
        assert not np.array_equal(unbounded, outcomes[on["budget_perceptron[beta=0.0,budget=10]"]])

    # The example's own tests, which use kbench.testing, pass against the installed plugin.
    tested = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"], env, cwd=source)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert " passed" in tested.stdout

    # Uninstalled, its components are gone and asking for one is an error naming it.
    removed = _run([*pip, "uninstall", "--yes", "kbench-plugin-example"], env)
    assert removed.returncode == 0, removed.stderr
    rows = json.loads(_run([*kbench, "list", "--json"], env).stdout)
    assert not {(r["kind"], r["name"]) for r in rows} & EXAMPLE_COMPONENTS
    again = ["run", "-a", "budget_perceptron", "-d", "checkerboard", "--out", str(tmp_path / "r")]
    gone = _run([*kbench, *again], env)
    assert gone.returncode == 2 and "unknown algorithm 'budget_perceptron'" in gone.stderr
    assert not list(python.parents[1].glob("lib/*/site-packages/kbench_plugin_example*"))


# --------------------------------------------------------------------------------------------
# Load controls
# --------------------------------------------------------------------------------------------


def test_suite_loads_no_installed_plugin_unless_asked(tmp_path: Path, monkeypatch) -> None:
    """An installed plugin is neither imported nor registered in kbench's own tests by default."""
    site = tmp_path / "site"
    info = site / "kb_installed-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "kb_installed.py").write_text(textwrap.dedent(CUBIC_PLUGIN))
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kb_installed\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[kbench]\nkb_installed = kb_installed\n")
    monkeypatch.syspath_prepend(str(site))
    assert os.environ["KBENCH_LOAD_PLUGINS"] == ""
    reg = Registry()
    assert reg.plugins["kb_installed"].disabled and "cubic" not in reg.names("kernel")
    assert "kb_installed" not in sys.modules
    monkeypatch.delenv("KBENCH_LOAD_PLUGINS")
    assert "cubic" in Registry().names("kernel")


def test_load_plugins_selects_by_plugin_or_distribution_name(plugin_dist, monkeypatch) -> None:
    """KBENCH_LOAD_PLUGINS loads only the named third-party plugins; built-ins always load."""
    plugin_dist("kb_one", CUBIC_PLUGIN)
    plugin_dist("kb_two_dist", _other_kernel("cubic2"), entry_name="two")
    monkeypatch.setenv("KBENCH_LOAD_PLUGINS", "kb_one")
    reg = Registry()
    assert "cubic" in reg.names("kernel") and "cubic2" not in reg.names("kernel")
    assert reg.plugins["two"].disabled and not reg.failures()
    assert "rbf" in reg.names("kernel") and "perceptron" in reg.names("algorithm")
    monkeypatch.setenv("KBENCH_LOAD_PLUGINS", " kb-two-dist ")  # a distribution, PEP 503 spelling
    reg = Registry()
    assert "cubic2" in reg.names("kernel") and "cubic" not in reg.names("kernel")
    monkeypatch.setenv("KBENCH_LOAD_PLUGINS", "")
    reg = Registry()
    assert not {"cubic", "cubic2"} & set(reg.names("kernel")) and "rbf" in reg.names("kernel")


def test_load_plugins_reports_a_name_nothing_answers_to(plugin_dist, monkeypatch) -> None:
    """A name in KBENCH_LOAD_PLUGINS that no installed plugin has is reported, with a hint."""
    plugin_dist("kb_cubic", CUBIC_PLUGIN)
    monkeypatch.setenv("KBENCH_LOAD_PLUGINS", "kb_cubik,kb_cubic")
    reg = Registry()
    failed = {p.name: p.error for p in reg.failures()}
    assert set(failed) == {"kb_cubik"}
    assert failed["kb_cubik"] == (
        "KBENCH_LOAD_PLUGINS names it, but no installed distribution declares a kbench plugin "
        "of that name (did you mean 'kb_cubic'?)"
    )
    assert "cubic" in reg.names("kernel")


def test_disable_plugins_by_distribution_name(plugin_dist, monkeypatch) -> None:
    """KBENCH_DISABLE_PLUGINS also accepts the distribution's name."""
    plugin_dist("kb_dist", CUBIC_PLUGIN, entry_name="cubes")
    monkeypatch.setenv("KBENCH_DISABLE_PLUGINS", "kb-dist")
    reg = Registry()
    assert reg.plugins["cubes"].disabled and "cubic" not in reg.names("kernel")


def test_trace_plugins_logs_each_hook_call(plugin_dist, monkeypatch, capfd) -> None:
    """KBENCH_TRACE_PLUGINS=1 logs every hook call to stderr: plugin, module, what it did."""
    plugin_dist("kb_cubic", CUBIC_PLUGIN)
    plugin_dist(
        "kb_raises",
        """
        from kbench import hookimpl

        @hookimpl
        def kbench_register_losses(register):
            raise RuntimeError("no losses today")
    """,
    )
    monkeypatch.setenv("KBENCH_TRACE_PLUGINS", "1")
    Registry()
    err = capfd.readouterr().err
    assert "kbench: trace: kbench_register_kernels -> plugin 'kb_cubic' (kb_cubic)" in err
    assert "kbench: trace: kbench_register_kernels <- plugin 'kb_cubic': registered cubic" in err
    assert (
        "kbench: trace: kbench_register_algorithms <- plugin 'kbench.algorithms.perceptron': "
        "registered perceptron" in err
    )
    assert (
        "kbench: trace: kbench_register_losses <- plugin 'kb_raises': "
        "raised RuntimeError: no losses today" in err
    )
    monkeypatch.setenv("KBENCH_TRACE_PLUGINS", "0")
    Registry()
    assert "trace" not in capfd.readouterr().err


# --------------------------------------------------------------------------------------------
# Bad input at load time names the plugin and its distribution
# --------------------------------------------------------------------------------------------


def test_misspelled_hook_is_reported_and_the_plugin_skipped(plugin_dist) -> None:
    """A hook implementation with no kbench hook of that name fails check_pending, by plugin."""
    plugin_dist(
        "kb_typo",
        """
        from kbench import hookimpl
        from kb_fine import Cubic

        @hookimpl
        def kbench_register_kernel(register):
            register(Cubic)

        @hookimpl
        def kbench_register_datasets(register):
            pass
    """,
    )
    plugin_dist("kb_fine", CUBIC_PLUGIN)
    reg = Registry()
    failed = {p.name: p.error for p in reg.failures()}
    assert set(failed) == {"kb_typo"}
    assert failed["kb_typo"].startswith(
        "plugin 'kb_typo' implements 'kbench_register_kernel', which is not a kbench hook "
        "(did you mean 'kbench_register_kernels'?) (kbench hooks: kbench_register_algorithms, "
    )
    assert reg.entry("kernel", "cubic").plugin == "kb_fine"
    assert not reg.plugins["kb_typo"].components


def test_hook_with_wrong_arguments_is_one_clear_line(plugin_dist) -> None:
    """An implementation asking for arguments the hook does not pass is named, on one line."""
    plugin_dist(
        "kb_args",
        """
        from kbench import hookimpl

        @hookimpl
        def kbench_register_kernels(registry):
            pass
    """,
        entry_name="args",
        version="3.2",
    )
    error = Registry().plugins["args"].error
    assert error is not None and "\n" not in error
    assert error.startswith("plugin 'args' (distribution kb_args 3.2): Plugin 'args' for hook")
    assert "{'registry'}" in error and "can not be found in the hookspec" in error


BAD_KERNELS = {
    "no-docstring": (
        "class Bad(Kernel):\n    name = 'bad'\n    def __init__(self) -> None:\n        pass\n",
        "kernel 'bad' has no docstring",
    ),
    "untyped-parameter": (
        "class Bad(Kernel):\n    '''Doc.'''\n    name = 'bad'\n"
        "    def __init__(self, *, width=1.0) -> None:\n        pass\n",
        "parameter 'width' of Bad has no type annotation",
    ),
    "parameter-without-default": (
        "class Bad(Kernel):\n    '''Doc.'''\n    name = 'bad'\n"
        "    def __init__(self, *, width: float) -> None:\n        pass\n",
        "parameter 'width' of Bad must be keyword-only with a default",
    ),
    "clash-with-builtin": (
        "class Bad(Kernel):\n    '''Doc.'''\n    name = 'rbf'\n    def __init__(self) -> None:\n"
        "        pass\n",
        "registered kernel 'rbf', which plugin 'kbench.kernels.radial' already registered",
    ),
}


@pytest.mark.parametrize(("body", "message"), BAD_KERNELS.values(), ids=BAD_KERNELS.keys())
def test_bad_component_names_plugin_and_distribution(plugin_dist, body: str, message: str) -> None:
    """Each bad registration is one message naming the plugin and its distribution."""
    source = (
        f"from kbench import hookimpl, Kernel\n{body}\n"
        "@hookimpl\ndef kbench_register_kernels(register):\n    register(Bad)\n"
    )
    plugin_dist("kb_bad_dist", source, entry_name="bad", version="0.3")
    plugin_dist("kb_cubic", CUBIC_PLUGIN)
    reg = Registry()
    failed = {p.name: p.error for p in reg.failures()}
    assert set(failed) == {"bad"}
    assert failed["bad"].startswith("plugin 'bad' (distribution kb_bad_dist 0.3)")
    assert message in failed["bad"]
    assert "cubic" in reg.names("kernel") and reg.entry("kernel", "rbf").plugin != "bad"


def test_import_failure_names_the_distribution(plugin_dist) -> None:
    """A plugin that cannot be imported is reported with its distribution and skipped."""
    plugin_dist("kb_heavy", "import a_module_that_is_not_installed\n", entry_name="heavy")
    error = Registry().plugins["heavy"].error
    assert error == (
        "failed to load (distribution kb_heavy 1.0): ModuleNotFoundError: "
        "No module named 'a_module_that_is_not_installed'"
    )


# --------------------------------------------------------------------------------------------
# kbench.testing and kbench.api for plugin authors
# --------------------------------------------------------------------------------------------


def _cubic_class() -> type[Kernel]:
    namespace: dict[str, object] = {}
    exec(textwrap.dedent(CUBIC_PLUGIN), namespace)
    return namespace["Cubic"]  # type: ignore[return-value]


def test_check_component_takes_a_class_or_an_instance() -> None:
    """Unregistered classes and configured instances are checked like registered components."""
    cubic = _cubic_class()
    check_component(cubic)
    check_component(cubic(scale=0.5))
    check_component("kernel", "rbf")  # the registered form keeps working
    check_component("kernel", "rbf", Registry(entry_points=False))


def test_check_component_reports_broken_classes() -> None:
    """A class that the registry would refuse, or that breaks a rule, fails with the reason."""
    cubic = _cubic_class()
    undocumented = type("Undocumented", (cubic,), {"name": "undocumented", "__doc__": None})
    with pytest.raises(AssertionError, match="kernel 'undocumented' has no docstring"):
        check_component(undocumented)

    class Skewed(cubic):  # type: ignore[misc, valid-type]
        """A 'kernel' whose rows disagree with its Gram matrix."""

        name = "skewed"

        def row(self, S, x, *, out=None, sq=None, xsq=None):
            return super().row(S, x) + 1.0

    with pytest.raises(AssertionError, match="kernel 'skewed': row != matrix column"):
        check_component(Skewed)
    with pytest.raises(TypeError, match="not a kbench Algorithm, Kernel, Loss or Dataset"):
        check_component(object())
    with pytest.raises(TypeError, match="give the component's registered name"):
        check_component("kernel")


def test_component_cases_for_one_plugin(plugin_dist, monkeypatch) -> None:
    """Cases cover exactly one plugin's components; a missing plugin is an error, not zero tests."""
    plugin_dist("kb_cubic", CUBIC_PLUGIN)
    plugin_dist("kb_broken", "raise RuntimeError('boom')\n")
    cases = component_cases(plugin="kb_cubic")
    assert [(c.values, c.id) for c in cases] == [(("kernel", "cubic"), "kernel-cubic")]
    mark = parametrize_components(plugin="kb-cubic")
    assert mark.args[0] == ("kind", "name") and len(mark.args[1]) == 1
    with pytest.raises(RegistryError, match=r"plugin 'kb_nothing' is not installed .*kb_cubic"):
        component_cases(plugin="kb_nothing")
    with pytest.raises(RegistryError, match=r"plugin 'kb_broken' is installed but broken: .*boom"):
        component_cases(plugin="kb_broken")
    monkeypatch.setenv("KBENCH_LOAD_PLUGINS", "kb_broken")
    with pytest.raises(RegistryError, match="plugin 'kb_cubic' is installed but was not loaded"):
        component_cases(Registry(), plugin="kb_cubic")


def test_api_names_are_the_defining_modules_objects() -> None:
    """kbench.api re-exports the objects of their own modules, so both import paths work."""
    import kbench
    import kbench.core.components
    import kbench.core.kernel_rows
    import kbench.learners.support_buffer

    for name in kbench.api.__all__:
        assert hasattr(kbench.api, name), name
    assert kbench.api.hookimpl is kbench.hookimpl
    assert kbench.api.Algorithm is kbench.core.components.Algorithm is kbench.Algorithm
    assert kbench.api.SupportBuffer is kbench.learners.support_buffer.SupportBuffer
    assert kbench.api.kernel_row is kbench.core.kernel_rows.kernel_row


def test_kernel_expansion_equals_the_gram_product() -> None:
    """kernel_expansion is Σ αᵢ k(sᵢ, x) for built-in and plain-NumPy kernels, one x or many."""
    rng = np.random.default_rng(0)
    S, X = rng.standard_normal((30, 4)), rng.standard_normal((9, 4))
    alpha = rng.standard_normal((30, 2))
    for kernel in (
        Registry(entry_points=False).create("kernel", "rbf[gamma=0.3]"),
        _cubic_class()(scale=0.5),
    ):
        expected = kernel.matrix(X, S) @ alpha
        assert np.allclose(kbench.api.kernel_expansion(kernel, S, alpha, X, block=4), expected)
        assert np.allclose(
            kbench.api.kernel_expansion(kernel, S, alpha[:, 0], X[2]), expected[2, :1]
        )
    with pytest.raises(ValueError, match="30 support vectors but alpha has shape"):
        kbench.api.kernel_expansion(kernel, S, alpha[:5], X)
