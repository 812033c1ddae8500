"""asv regression tracking in a plugin's own repository: ``kbench.asv``, ``kbench asv init``,
and asv measuring a plugin's commits.

The slow test is the whole story with real parts: the example plugin copied into a new git
repository, its asv files written by ``kbench asv init``, a second commit that makes its
learner slower and less accurate, a third that changes nothing measurable; asv builds
each commit into its ``kbench`` environment (a virtual environment over this one),
``asv continuous`` fails on the regression and passes the harmless commit, and the
published dashboard lists the plugin's benchmarks in headless Chromium.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kbench.asv
from asv_dashboard import check_clean, listed_benchmarks, render, serve
from conftest import CUBIC_PLUGIN, KBENCH, REPO, stub_plugin
from kbench.asv import streams
from kbench.core.errors import RegistryError, SpecError
from kbench.execution.prequential import run_task

EXAMPLE = REPO / "examples" / "kbench-plugin-example"
#: The files ``kbench asv init`` writes into the example, which carries them committed.
ASV_FILES = ["asv.conf.json", "benchmarks/__init__.py", "benchmarks/bench_plugin.py"]


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=kbench", "-c", "user.email=kbench@example.org", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _plugin_copy(folder: Path, *, git: bool = True) -> Path:
    """The example plugin without its asv files, in a new git repository on ``main``."""
    shutil.copytree(
        EXAMPLE,
        folder,
        ignore=shutil.ignore_patterns(
            "asv.conf.json", "benchmarks", "build", "*.egg-info", "__pycache__", ".asv"
        ),
    )
    if git:
        _git(folder, "init", "-q", "-b", "main")
    return folder


def _kbench(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(KBENCH), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under a folder (git's own excepted) and its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(folder).parts
    }


def _config(path: Path) -> dict:
    """asv.conf.json as asv reads it (JSON with ``//`` comment lines)."""
    text = "\n".join(ln for ln in path.read_text().splitlines() if not ln.lstrip().startswith("//"))
    return json.loads(text)


# --------------------------------------------------------------------------------------------
# kbench asv init
# --------------------------------------------------------------------------------------------


def test_init_writes_the_files_the_example_plugin_carries(tmp_path: Path) -> None:
    """In a fresh repository of the example, init writes exactly its committed asv files."""
    repo = _plugin_copy(tmp_path / "plugin")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "plugin")
    done = _kbench("asv", "init", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "kbench: wrote asv.conf.json, benchmarks/bench_plugin.py, benchmarks/__init__.py "
        "for plugin 'example' (kbench-plugin-example)"
    )
    for name in ASV_FILES:
        assert (repo / name).read_text() == (EXAMPLE / name).read_text(), name
    config = _config(repo / "asv.conf.json")
    assert config["repo"] == "." and "repo_subdir" not in config
    assert config["branches"] == ["main"] and config["environment_type"] == "kbench"
    assert config["project"] == "kbench-plugin-example"
    assert 'kbench.asv.suites(plugin="example")' in (repo / ASV_FILES[2]).read_text()


def test_init_in_a_subfolder_tracks_the_checked_out_branch(tmp_path: Path) -> None:
    """A plugin below the repository's top: repo points up, repo_subdir down; the branch is
    the one checked out; two entry points are both selected."""
    top = tmp_path / "monorepo"
    top.mkdir()
    _git(top, "init", "-q", "-b", "develop")
    plugin = _plugin_copy(top / "plugins" / "mine", git=False)
    pyproject = plugin / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            'example = "kbench_plugin_example"',
            'example = "kbench_plugin_example"\nsecond = "kbench_plugin_example"',
        )
    )
    done = _kbench("asv", "init", "plugins/mine", cwd=top)
    assert done.returncode == 0, done.stderr
    config = _config(plugin / "asv.conf.json")
    assert config["repo"] == "../.." and config["repo_subdir"] == "plugins/mine"
    assert config["branches"] == ["develop"]
    bench = (plugin / "benchmarks" / "bench_plugin.py").read_text()
    assert 'kbench.asv.suites(plugin=["example", "second"])' in bench


def _no_git(tmp_path: Path) -> Path:
    return _plugin_copy(tmp_path / "plugin", git=False)


def _no_entry_point(tmp_path: Path) -> Path:
    repo = _plugin_copy(tmp_path / "plugin")
    pyproject = repo / "pyproject.toml"
    text = pyproject.read_text()
    pyproject.write_text(
        text.replace('[project.entry-points.kbench]\nexample = "kbench_plugin_example"\n', "")
    )
    return repo


def _no_pyproject(tmp_path: Path) -> Path:
    repo = tmp_path / "plugin"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "README.md").write_text("not a plugin\n")
    return repo


def _config_exists(tmp_path: Path) -> Path:
    repo = _plugin_copy(tmp_path / "plugin")
    (repo / "asv.conf.json").write_text('{"project": "mine"}\n')
    return repo


def _module_exists(tmp_path: Path) -> Path:
    repo = _plugin_copy(tmp_path / "plugin")
    (repo / "benchmarks").mkdir()
    (repo / "benchmarks" / "bench_plugin.py").write_text("# my own benchmarks\n")
    return repo


def _git_missing(tmp_path: Path) -> Path:
    return _plugin_copy(tmp_path / "plugin")  # a repository; the test hides git from PATH


BAD_FOLDERS = {
    "outside-git": (_no_git, "is not in a git repository"),
    "no-entry-point": (_no_entry_point, "declares no [project.entry-points.kbench]"),
    "no-pyproject": (_no_pyproject, "there is no pyproject.toml declaring"),
    "config-exists": (_config_exists, "asv.conf.json already exists"),
    "module-exists": (_module_exists, "bench_plugin.py already exists"),
    "no-git-program": (_git_missing, "git is not installed (or not on PATH)"),
}


@pytest.mark.parametrize(("make", "message"), BAD_FOLDERS.values(), ids=BAD_FOLDERS.keys())
def test_init_refuses_with_one_line_and_writes_nothing(tmp_path: Path, make, message: str) -> None:
    """Outside git, without a kbench plugin, over existing files, or without git itself:
    exit 2, one line, nothing written or overwritten."""
    folder = make(tmp_path)
    before = _snapshot(folder)
    env = None
    if message.startswith("git is not installed"):
        env = {**os.environ, "PATH": str(tmp_path / "no-programs")}
    done = _kbench("asv", "init", cwd=folder, env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kbench: error: "), done.stderr
    assert message in lines[0]
    assert _snapshot(folder) == before


def test_offline_refuses_a_folder_without_a_dashboard(tmp_path: Path) -> None:
    """kbench asv offline on a folder asv publish did not write: exit 2, one line."""
    done = _kbench("asv", "offline", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"kbench: error: no asv dashboard at {tmp_path / 'index.html'}; run asv publish first"
    )


def test_offline_leaves_a_page_with_an_unknown_library_as_it_was(tmp_path: Path) -> None:
    """A CDN address kbench has no copy of is named, and the page is not rewritten."""
    page = (
        '<html><head><script src="https://code.jquery.com/jquery-3.3.1.min.js"></script>'
        '<script src="https://cdn.example.org/new-library.js"></script></head></html>'
    )
    (tmp_path / "index.html").write_text(page)
    done = _kbench("asv", "offline", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2
    assert "https://cdn.example.org/new-library.js" in done.stderr
    assert (tmp_path / "index.html").read_text() == page


# --------------------------------------------------------------------------------------------
# kbench.asv.suites
# --------------------------------------------------------------------------------------------


@pytest.fixture
def fresh_suite_registry():
    """The suites' registry and everything built from it, rebuilt for this test."""
    caches = (streams.registry, streams.stream, streams.warm_model, streams.stream_run)
    for cache in caches:
        cache.cache_clear()
    yield
    for cache in caches:
        cache.cache_clear()


IDLER = stub_plugin('''

class Idler(Stub):
    """A binary learner that learns nothing."""
    name = "idler"
    tasks = frozenset({"binary"})


@hookimpl
def kbench_register_algorithms(register):
    register(Idler)
''')


def test_suites_of_a_plugin_are_its_algorithms_and_kernels(
    plugin_dist, fresh_suite_registry
) -> None:
    """plugin= selects what that plugin registered, on the streams of the tasks it supports."""
    plugin_dist("kb_idler", IDLER)
    plugin_dist("kb_cubic", CUBIC_PLUGIN)
    found = kbench.asv.suites(plugin="kb_idler", profile="fast")
    assert set(found) == {
        "LearnOne",
        "PredictOne",
        "LearnPredictMany",
        "StreamMemory",
        "StreamQuality",
    }
    for name, cls in found.items():
        assert cls.__name__ == name  # asv names a benchmark by its class
        assert cls.params == (["idler"], ["binary-d2", "binary-d784"])
        assert cls.profile == "fast"
    kernels = kbench.asv.suites(plugin="kb-cubic", profile="fast")  # by distribution name
    assert set(kernels) == {"KernelRow", "MatVec"}
    assert kernels["KernelRow"].params == (["cubic"], [256, 1024], [2, 784], ["float64", "float32"])
    both = kbench.asv.suites(plugin=["kb_idler", "kb_cubic"], algorithms=["perceptron"])
    assert both["LearnOne"].params[0] == ["idler", "perceptron"]
    assert both["KernelRow"].params[0] == ["cubic"] and both["LearnOne"].profile == "regular"


def test_suites_refuse_what_would_benchmark_nothing(plugin_dist, fresh_suite_registry) -> None:
    """A plugin not installed or not loaded, a misspelled spec: errors, never empty suites."""
    plugin_dist("kb_cubic", CUBIC_PLUGIN)
    with pytest.raises(RegistryError, match=r"plugin 'kb_nothing' is not installed"):
        kbench.asv.suites(plugin="kb_nothing")
    with pytest.raises(SpecError, match=r"unknown algorithm 'perceptrn'.*perceptron"):
        kbench.asv.suites(algorithms=["perceptrn"], kernels=[])
    with pytest.raises(ValueError, match="unknown kbench asv stream 'binary-d3'"):
        kbench.asv.suites(algorithms=["perceptron"], kernels=[], streams=["binary-d3"])
    with pytest.raises(ValueError, match="profile 'huge' is not one of fast, regular"):
        kbench.asv.suites(algorithms=["perceptron"], profile="huge")


def test_suites_refuse_a_plugin_excluded_by_the_load_controls(
    plugin_dist, fresh_suite_registry, monkeypatch
) -> None:
    plugin_dist("kb_cubic", CUBIC_PLUGIN)
    monkeypatch.setenv("KBENCH_LOAD_PLUGINS", "")
    with pytest.raises(RegistryError, match="'kb_cubic' is installed but was not loaded"):
        kbench.asv.suites(plugin="kb_cubic")


def test_a_suite_measures_its_spec_on_the_fixed_stream(fresh_suite_registry) -> None:
    """The benchmarks run a spec's own parameters on kbench's stream; unsupported pairs skip."""
    found = kbench.asv.suites(algorithms=["rbp[budget=20]"], kernels=["rbf"], profile="fast")
    assert found["LearnOne"].params[1] == list(streams.STREAMS)[:4]  # binary and multiclass

    learn = found["LearnOne"]()
    learn.setup("rbp[budget=20]", "binary-d2")
    for _ in range(streams.WINDOW):
        learn.setup("rbp[budget=20]", "binary-d2")
        learn.time_learn_one("rbp[budget=20]", "binary-d2")
    assert learn._model.stats()["n_support"] == 20  # the budget of the spec, not the default

    quality = found["StreamQuality"]()
    quality.setup("rbp[budget=20]", "binary-d2")
    case = streams.case("rbp[budget=20]", "binary-d2", "fast")
    assert case.task().algorithm.startswith("rbp[") and "budget=20" in case.task().algorithm
    direct = run_task(
        case.task(), streams.stream("binary-d2", "fast"), streams.registry(), trace_memory=False
    )
    assert quality.track_online_error("rbp[budget=20]", "binary-d2") == direct.run["online_error"]
    assert quality.track_n_support("rbp[budget=20]", "binary-d2") == 20.0
    assert (
        len(streams.stream("binary-d2", "fast").X) == streams.n_train("binary-d2", "fast") == 1000
    )

    with pytest.raises(NotImplementedError):
        found["StreamQuality"]().setup("rbp[budget=20]", "regression-d2")

    row = found["KernelRow"]()
    row.setup("rbf", 256, 2, "float32")
    row.time_row("rbf", 256, 2, "float32")
    expected = streams.registry().create("kernel", "rbf").row(row._S, row._x)
    assert np.allclose(row._out, expected, rtol=1e-5)


def test_kbench_asv_imports_no_asv() -> None:
    """asv is a dev extra: neither import kbench nor the suites nor kbench asv init import it."""
    code = (
        "import sys, kbench; assert 'kbench.asv' not in sys.modules; "
        "import kbench.asv, kbench.asv.benchmarks, kbench.asv.project, kbench.cli.asv; "
        "assert not [m for m in sys.modules if m == 'asv' or m.startswith('asv.')], 'asv'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# --------------------------------------------------------------------------------------------
# asv on a plugin's commits
# --------------------------------------------------------------------------------------------

#: The second commit: an extra pass over the support vectors in every decision (slower),
#: and the removal of the least redundant support vector instead of the most (less accurate).
SLOWER = (
    "        buf = self._buffer(len(x))\n        return float(buf.scores(",
    "        buf = self._buffer(len(x))\n"
    "        for i in range(0, buf.size, 5):  # an extra pass over the support vectors\n"
    "            self.kernel.row(buf.X[i : i + 5], x)\n"
    "        return float(buf.scores(",
)
LESS_ACCURATE = ("j = int(np.argmax(a * self._f", "j = int(np.argmin(a * self._f")


def _asv(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "asv", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _flagged(output: str) -> set[str]:
    """The benchmarks asv's comparison table marks worse (``+``), with their parameters."""
    return set(re.findall(r"^\|\s*\+\s*\|.*\|\s*(bench_plugin\.\S+\(.*\))\s*\|$", output, re.M))


@pytest.mark.slow
def test_asv_continuous_catches_a_plugin_regression(tmp_path: Path) -> None:
    repo = _plugin_copy(tmp_path / "plugin")
    init = _kbench("asv", "init", cwd=repo)
    assert init.returncode == 0, init.stderr
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "The example plugin, with kbench asv init's files")

    algorithm = repo / "kbench_plugin_example" / "algorithm.py"
    source = algorithm.read_text()
    for old, new in (SLOWER, LESS_ACCURATE):
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    algorithm.write_text(source)
    _git(repo, "commit", "-q", "-am", "Slower and less accurate")
    with (repo / "README.md").open("a") as readme:
        readme.write("\nThe budget perceptron needs no tuning.\n")
    _git(repo, "commit", "-q", "-am", "A sentence in the README")

    home = tmp_path / "home"  # asv machine writes ~/.asv-machine.json
    home.mkdir()
    # The plugin must load in the benchmarks: kbench's own tests set KBENCH_LOAD_PLUGINS empty.
    env = {k: v for k, v in os.environ.items() if k != "KBENCH_LOAD_PLUGINS"}
    env.update(HOME=str(home), COLUMNS="250")
    assert _asv(repo, env, "machine", "--yes").returncode == 0

    # Every benchmark once on the last commit: each works, in kbench's layered environment.
    quick = _asv(repo, env, "run", "--quick", "--show-stderr", "main^!")
    assert quick.returncode == 0, quick.stdout[-4000:] + quick.stderr[-4000:]
    assert "kbench-py" in quick.stdout
    assert "failed" not in quick.stdout, quick.stdout[-4000:]

    # The learner on the two-dimensional stream (seven processes per time benchmark and
    # commit), the regression against the commit before it.
    only = ["--bench", "budget_perceptron', 'binary-d2'"]
    worse = _asv(repo, env, "continuous", *only, "main~2", "main~1")
    out = worse.stdout
    assert worse.returncode == 1, out[-4000:] + worse.stderr[-4000:]
    assert "PERFORMANCE DECREASED" in out
    where = "('budget_perceptron', 'binary-d2')"
    assert _flagged(out) >= {
        f"bench_plugin.{bench}{where}"
        for bench in (
            "PredictOne.time_predict_one",  # about 8 times slower
            "LearnPredictMany.time_learn_predict_many",  # about 5 times
            "StreamQuality.track_test_error",  # 0.196 -> 0.36
            "StreamQuality.track_online_error",  # 0.224 -> 0.33
        )
    }, out[-4000:]

    # The README commit against the slow one: nothing measurable changed.
    same = _asv(repo, env, "continuous", *only, "main~1", "main")
    assert same.returncode == 0, same.stdout[-4000:] + same.stderr[-4000:]
    assert "BENCHMARKS NOT SIGNIFICANTLY CHANGED" in same.stdout
    assert not _flagged(same.stdout)

    # The dashboard lists the plugin's benchmarks, in a browser, with no network.
    assert _asv(repo, env, "publish").returncode == 0
    html = repo / ".asv" / "html"
    assert _kbench("asv", "offline", str(html), cwd=repo).returncode == 0
    names = set(json.loads((html / "index.json").read_text())["benchmarks"])
    assert {
        "bench_plugin.LearnOne.time_learn_one",
        "bench_plugin.StreamQuality.track_online_error",
        "bench_plugin.StreamMemory.peakmem_learn_stream",
        "bench_plugin.KernelRow.time_row",
        "bench_plugin.MatVec.time_matvec",
    } <= names
    assert all(n.startswith("bench_plugin.") for n in names)
    with serve(html) as (url, statuses):
        dom, console = render(url + "#/summarylist", tmp_path / "chrome")
        check_clean(dom, console, "the plugin's benchmark list")
        assert listed_benchmarks(dom) == names
        assert "budget_perceptron" in dom and "cauchy" in dom
    failed = [(path, code) for path, code in statuses if code >= 400]
    assert not failed, f"the dashboard requested missing files: {failed}"
