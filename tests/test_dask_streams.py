"""Studies on Dask: every stream is built once, by the driver, and read by the workers from
the shared cache; tasks carry stream specs, never stream arrays; outcomes are bitwise those
of the local executor."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pandas as pd

from conftest import stub_plugin
from helpers import kbench
from kbench.core.registry import get_registry
from kbench.data.streams import get_stream
from kbench.execution.study import Experiment, plan
from kbench.results.store import load_results

#: A data set that writes one line (its process id) to $KB_BUILD_LOG each time it is loaded:
#: the number of lines is the number of times its stream was built.
COUNTED = stub_plugin('''

class Counted(Dataset):
    """Two Gaussian classes; every load is logged."""
    name = "counted"
    size: int = param(3000)
    d: int = param(40)
    def load(self, seed):
        with open(os.environ["KB_BUILD_LOG"], "a") as fh:
            fh.write(f"{os.getpid()}\\n")
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((self.size, self.d))
        y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1.0, -1.0)
        return Data(X=X, y=y, task="binary", n_classes=2)


@hookimpl
def kbench_register_datasets(register):
    register(Counted)
''')

DATASET = "counted[size=3000,d=40,test_size=0.2]"
ALGORITHMS = ["perceptron", "norma[budget=100]", "rbp[budget=100]", "nogd[budget=100]"]
KERNELS = ["rbf[gamma=0.05]", "poly[degree=2]"]


def _study(out: Path, *executor: str) -> list[str]:
    args = ["run", "-d", DATASET, "--seeds", "0", "--no-report", "--out", str(out)]
    for a in ALGORITHMS:
        args += ["-a", a]
    for k in KERNELS:
        args += ["-k", k]
    proc = kbench(*args, *executor)
    assert proc.returncode == 0, proc.stderr
    assert f"{len(ALGORITHMS) * len(KERNELS)} ok" in proc.stderr, proc.stderr
    return Path(os.environ["KB_BUILD_LOG"]).read_text().split()


def test_dask_builds_each_stream_once_and_matches_local(tmp_path: Path, plugin_dist, monkeypatch):
    """Eight tasks over one stream on a 2-worker LocalCluster: one build (in the driver), the
    workers map the cached arrays; then the same study on the local executor, with a cache
    of its own, gives bitwise the same outcomes and errors."""
    from dask.distributed import Client, LocalCluster

    plugin_dist("kb_counted", COUNTED)
    log = tmp_path / "builds.log"
    monkeypatch.setenv("KB_BUILD_LOG", str(log))
    cache = Path(os.environ["KBENCH_CACHE"])
    # The workers start with this environment: the plugin on their path, the shared cache.
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
    ) as cluster:
        builds = _study(
            tmp_path / "dask", "--executor", "dask", "--scheduler", cluster.scheduler_address
        )
        with Client(cluster) as client:
            worker_pids = set(client.run(os.getpid).values())
    assert len(builds) == 1, f"the stream was built {len(builds)} times, by processes {builds}"
    assert int(builds[0]) not in worker_pids  # by the driver, before any task was submitted
    data_files = list((cache / "data" / "counted").glob("*.data"))
    assert len(data_files) == 1

    # Tasks name their stream; none carries its arrays to a worker.
    registry = get_registry()
    tasks = plan(
        [Experiment(algorithms=ALGORITHMS, datasets=[DATASET], kernels=KERNELS)], registry
    ).tasks
    stream = get_stream(tasks[0].stream, registry)
    assert stream.X.nbytes > 500_000
    assert len(tasks) == 8 and max(len(pickle.dumps(t)) for t in tasks) < 2_000
    assert len(Path(log).read_text().split()) == 1  # get_stream above read the cache

    monkeypatch.setenv("KBENCH_CACHE", str(tmp_path / "local-cache"))
    builds = _study(tmp_path / "local", "--workers", "2")
    assert len(builds) == 2  # the local run's own cache: one more build

    dask, local = load_results(tmp_path / "dask"), load_results(tmp_path / "local")
    pd.testing.assert_frame_equal(
        *(
            r.runs.set_index("task_id").sort_index()[
                ["stream_id", "online_error", "test_error", "mistakes", "n_support"]
            ]
            for r in (dask, local)
        ),
        check_exact=True,
    )
    outcomes = {r.task_id: r.outcome for r in local.outcomes.itertuples()}
    assert len(outcomes) == 8
    for r in dask.outcomes.itertuples():
        assert np.array_equal(r.outcome, outcomes[r.task_id]), r.task_id
