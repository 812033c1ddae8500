"""Shared fixtures: isolated caches, a local HTTP server, and real plugin distributions made
on the fly."""

from __future__ import annotations

import functools
import http.server
import os
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kbench.core.registry import reset_registry

REPO = Path(__file__).resolve().parents[1]
KBENCH = Path(sys.executable).with_name("kbench")

#: Set (to 1) by .ci/installed.sh, which runs this suite against kbench installed from its
#: wheel or sdist: every import of kbench, here and in the subprocesses the tests start, must
#: then come from site-packages, never from this checkout.
INSTALLED = os.environ.get("KBENCH_TEST_INSTALLED", "0") not in ("", "0")
if INSTALLED:
    import kbench

    if Path(kbench.__file__).resolve().is_relative_to(REPO):
        raise pytest.UsageError(
            f"KBENCH_TEST_INSTALLED is set but kbench was imported from the checkout "
            f"({kbench.__file__}): run pytest from a folder outside it (see .ci/installed.sh)"
        )

# Whatever third-party plugins happen to be installed must not change kbench's own tests:
# set but empty, KBENCH_LOAD_PLUGINS loads none. A test that wants plugins asks for them
# (plugin_dist names its own; tests/test_plugin_example.py unsets it for the example).
os.environ["KBENCH_LOAD_PLUGINS"] = ""


@pytest.fixture(autouse=True)
def _isolated(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Each test gets its own stream cache and a fresh process-wide registry."""
    monkeypatch.setenv("KBENCH_CACHE", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("KBENCH_DISABLE_PLUGINS", raising=False)
    monkeypatch.delenv("KBENCH_TRACE_PLUGINS", raising=False)
    monkeypatch.setenv("KBENCH_LOAD_PLUGINS", "")
    reset_registry()
    yield
    reset_registry()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # keep the test output clean
        pass


@pytest.fixture
def http_root(tmp_path):
    """An HTTP server on 127.0.0.1 serving a temporary folder: yields (folder, base URL, stop).

    ``stop()`` shuts the server down before the test ends (a download that must not need
    it); otherwise it stops when the test does.
    """
    root = tmp_path / "www"
    root.mkdir()
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    stopped = []

    def stop():
        if not stopped:
            server.shutdown()
            server.server_close()
            thread.join()
            stopped.append(True)

    yield root, f"http://127.0.0.1:{server.server_address[1]}", stop
    stop()


PluginFactory = Callable[..., Path]


@pytest.fixture
def plugin_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PluginFactory:
    """Install a plugin distribution into a folder on sys.path (and PYTHONPATH for subprocesses).

    ``plugin_dist("name", source)`` writes ``name.py`` with ``source`` and a
    ``name-1.0.dist-info`` declaring it in the ``kbench`` entry-point group, exactly as
    pip would, so importlib.metadata finds it. ``KBENCH_LOAD_PLUGINS`` names the plugins
    made here, so they load, and no other installed plugin does.
    """
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    made: list[str] = []

    def make(
        name: str, source: str, *, entry_name: str | None = None, version: str = "1.0"
    ) -> Path:
        (site / f"{name}.py").write_text(textwrap.dedent(source))
        info = site / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(f"[kbench]\n{entry_name or name} = {name}\n")
        made.append(entry_name or name)
        monkeypatch.setenv("KBENCH_LOAD_PLUGINS", ",".join(made))
        sys.modules.pop(name, None)
        reset_registry()
        return site

    return make


#: A valid third-party kernel plugin: Cubic, (x·x')³ in plain NumPy.
CUBIC_PLUGIN = '''
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


#: Start of a test plugin's source: its imports and ``Stub``, a learner that needs no kernel,
#: predicts +1 and learns nothing; a test learner derives from it and changes one thing.
STUB_PLUGIN = '''
import os, time
import numpy as np
from kbench import hookimpl, Algorithm, Dataset
from kbench.core.components import Data, param


class Stub(Algorithm):
    """Needs no kernel, predicts +1, learns nothing."""
    uses_kernel = False
    def decision_one(self, x):
        return 1.0
    def learn_one(self, x, y):
        pass
    def stats(self):
        return {"n_support": 0, "kernel_evals": 0}
'''


def stub_plugin(source: str) -> str:
    """The source of a test plugin: ``source`` after the imports and ``Stub``."""
    return STUB_PLUGIN + source


#: Source of a plugin with learners that misbehave on purpose, used by runner and CLI tests.
MISBEHAVING = stub_plugin('''

class Sleeper(Stub):
    """Sleeps on every example: a learner that hangs."""
    name = "sleeper"
    seconds: float = param(60.0)
    def learn_one(self, x, y):
        time.sleep(self.seconds)


class Exploder(Stub):
    """Raises after a number of examples."""
    name = "exploder"
    after: int = param(5)
    def __post_init__(self):
        super().__post_init__()
        self.seen = 0
    def learn_one(self, x, y):
        self.seen += 1
        if self.seen > self.after:
            raise RuntimeError("exploded on purpose")


class Diverger(Stub):
    """Its decision value becomes NaN after some examples."""
    name = "diverger"
    tasks = frozenset({"regression"})
    def __init__(self, *, kernel=None, loss=None, task="regression", n_classes=2, seed=0, after: int = 10):
        super().__init__(kernel=kernel, loss=loss, task=task, n_classes=n_classes, seed=seed)
        self.after = after
        self.seen = 0
    def decision_one(self, x):
        return float("nan") if self.seen > self.after else 0.0
    def learn_one(self, x, y):
        self.seen += 1


class Crasher(Stub):
    """Kills its own process (as a segfault in compiled code would)."""
    name = "crasher"
    def learn_one(self, x, y):
        os._exit(3)


class Segfaulter(Stub):
    """Dereferences a null pointer in compiled code."""
    name = "segfaulter"
    def learn_one(self, x, y):
        import ctypes
        ctypes.string_at(0)


class Hog(Stub):
    """Allocates 4 GiB on its first example."""
    name = "hog"
    def learn_one(self, x, y):
        self.block = np.ones(2**29)


class NaNData(Dataset):
    """A data set with a NaN in row 7."""
    name = "nandata"
    def __init__(self):
        pass
    def load(self, seed):
        X = np.ones((20, 3)); X[7, 1] = np.nan
        return Data(X=X, y=np.ones(20), task="binary", n_classes=2)


class EmptyData(Dataset):
    """A data set with no rows."""
    name = "emptydata"
    def __init__(self):
        pass
    def load(self, seed):
        return Data(X=np.zeros((0, 3)), y=np.zeros(0), task="binary", n_classes=2)


@hookimpl
def kbench_register_algorithms(register):
    for cls in (Sleeper, Exploder, Diverger, Crasher, Segfaulter, Hog):
        register(cls)


@hookimpl
def kbench_register_datasets(register):
    register(NaNData)
    register(EmptyData)
''')


#: ``kbench run`` arguments of a small real study: three configurations (the perceptron and
#: two NORMAs), three data sets, three seeds, in this process.
SMALL_STUDY = [
    "-a",
    "perceptron",
    "-a",
    "norma[eta=0.5,c=0.001,budget=40]",
    "-a",
    "norma[eta=1.0,schedule=inv_sqrt,c=0.0001,budget=40]",
    "-k",
    "rbf[gamma=0.5]",
    "-d",
    "twonorm[n=250,n_test=150]",
    "-d",
    "checkerboard[n=250,n_test=150,noise=0.1]",
    "-d",
    "digits[positive=5-9,scale=minmax,test_size=0.3,n=250]",
    "--seeds",
    "0-2",
    "--workers",
    "0",
]


@pytest.fixture
def small_study(tmp_path: Path) -> Path:
    """The results folder of ``kbench run`` on SMALL_STUDY (a test of what reads results)."""
    from click.testing import CliRunner

    from kbench.cli.main import cli

    out = tmp_path / "results"
    res = CliRunner().invoke(cli, ["run", *SMALL_STUDY, "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out
