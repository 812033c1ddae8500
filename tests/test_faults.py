"""Scale-out and fault tolerance: Dask, determinism across executors, kills, crashes, limits, full disks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import MISBEHAVING

from kbench.results import load_results

KBENCH = [sys.executable, "-m", "kbench.cli"]
STUDY = [
    "-a",
    "perceptron",
    "-k",
    "rbf[gamma=0.05]",
    "-k",
    "poly[degree=2]",
    "-d",
    "digits[positive=5-9,scale=minmax,test_size=0.3,n=300]",
    "-d",
    "a9a[n=400]",
    "--seeds",
    "0-1",
]


def kbench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*KBENCH, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, COLUMNS="200"),
    )


def _outcomes(folder: Path) -> dict[str, tuple[np.ndarray, float, float]]:
    res = load_results(folder)
    runs = res.runs.set_index("task_id")
    return {
        r.task_id: (
            r.outcome,
            runs.loc[r.task_id, "online_error"],
            runs.loc[r.task_id, "test_error"],
        )
        for r in res.outcomes.itertuples()
    }


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys() and len(a) == 8
    for key in a:
        assert np.array_equal(a[key][0], b[key][0]), key
        assert a[key][1:] == b[key][1:], key


def test_identical_outcomes_locally_with_1_or_2_workers_and_on_dask(tmp_path: Path) -> None:
    """The same study gives the same per-example outcomes on every executor."""
    runs = {}
    for name, extra in (
        ("one", ["--workers", "1"]),
        ("two", ["--workers", "2"]),
        ("dask", ["--executor", "dask", "--workers", "2"]),
    ):
        proc = kbench("run", *STUDY, *extra, "--out", str(tmp_path / name))
        assert proc.returncode == 0, proc.stderr
        assert "8 ok" in proc.stderr
        runs[name] = _outcomes(tmp_path / name)
    _same(runs["one"], runs["two"])
    _same(runs["one"], runs["dask"])


def test_dask_scheduler_address_and_isolation_on_workers(tmp_path: Path, plugin_dist) -> None:
    """--scheduler connects to a running cluster; timeouts and crashes are contained on its workers."""
    from dask.distributed import LocalCluster

    plugin_dist("kb_misbehaving", MISBEHAVING)  # before the workers start, so they see it
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        proc = kbench(
            "run",
            "-a",
            "sleeper",
            "-a",
            "segfaulter",
            "-a",
            "perceptron",
            "-d",
            "digits[positive=5-9,n=200]",
            "--executor",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
            "--timeout",
            "3",
            "--out",
            str(tmp_path / "r"),
        )
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(tmp_path / "r" / "runs.parquet").set_index("algorithm")
    assert runs.loc["sleeper", "status"] == "timeout"
    assert (
        runs.loc["segfaulter", "status"] == "error"
        and "SIGSEGV" in runs.loc["segfaulter", "reason"]
    )
    assert runs.loc["perceptron", "status"] == "ok"


def test_unreachable_scheduler(tmp_path: Path) -> None:
    """A scheduler that does not answer is a one-line error."""
    proc = kbench(
        "run",
        *STUDY,
        "--executor",
        "dask",
        "--scheduler",
        "tcp://127.0.0.1:9",
        "--out",
        str(tmp_path / "r"),
    )
    assert (
        proc.returncode == 2
        and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in proc.stderr
    )


KILL_STUDY = [
    "-a",
    "perceptron",
    "-k",
    "rbf[gamma=0.05]",
    "-k",
    "poly[degree=2]",
    "-d",
    "a9a[n=2500]",
    "--seeds",
    "0-3",
    "--no-report",
]


def test_kill_9_of_the_driver_then_resume(tmp_path: Path) -> None:
    """After kill -9 mid-study, rerunning keeps every finished task and ends as an uninterrupted run."""
    out = tmp_path / "killed"
    args = ["run", *KILL_STUDY, "--workers", "1", "--out", str(out)]
    proc = subprocess.Popen([*KBENCH, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(list((out / "tasks").glob("*.parquet"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {p.name for p in (out / "tasks").glob("*.parquet")}
    assert 3 <= len(finished) < 8
    load_results(out)  # every file left behind is whole
    time.sleep(1.0)
    stray = subprocess.run(["pgrep", "-f", str(out)], capture_output=True, text=True).stdout.split()
    assert stray == [], "children of the killed driver kept running"
    again = kbench(*args)
    assert (
        again.returncode == 0 and f"{len(finished)} of 8 tasks already have results" in again.stderr
    )
    assert finished <= {p.name for p in (out / "tasks").glob("*.parquet")}
    clean = kbench("run", *KILL_STUDY, "--workers", "2", "--out", str(tmp_path / "clean"))
    assert clean.returncode == 0
    _same(_outcomes(out), _outcomes(tmp_path / "clean"))


def test_segfault_and_memory_limit_affect_only_their_tasks(tmp_path: Path, plugin_dist) -> None:
    """A segfault in compiled code and a task over --max-memory are recorded; the rest run."""
    plugin_dist("kb_misbehaving", MISBEHAVING)
    proc = kbench(
        "run",
        "-a",
        "segfaulter",
        "-a",
        "hog",
        "-a",
        "perceptron",
        "-d",
        "digits[positive=5-9,n=200]",
        "--max-memory",
        "300M",
        "--workers",
        "2",
        "--out",
        str(tmp_path / "r"),
    )
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(tmp_path / "r" / "runs.parquet").set_index("algorithm")
    assert (
        runs.loc["segfaulter", "status"] == "error"
        and "signal 11, SIGSEGV" in runs.loc["segfaulter", "reason"]
    )
    assert runs.loc["hog", "status"] == "memory"
    assert runs.loc["perceptron", "status"] == "ok"


def test_bad_memory_limit(tmp_path: Path) -> None:
    """A malformed --max-memory is a one-line error."""
    proc = kbench("run", *STUDY, "--max-memory", "lots", "--out", str(tmp_path / "r"))
    assert proc.returncode == 2 and "--max-memory 'lots': expected a size such as 2G" in proc.stderr


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A real 96 KiB file system (tmpfs), mounted for the test and removed after it."""
    if os.geteuid() != 0:
        pytest.skip(
            "mounting a tmpfs needs root; the RLIMIT_FSIZE tests cover full disks without it"
        )
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def _temp_files(out: Path) -> list[Path]:
    """Temporary files of interrupted writes, in the results folder or its tasks folder."""
    return [*out.glob(".tmp-*"), *(out / "tasks").glob(".tmp-*")]


def test_full_disk_stops_the_study_and_keeps_what_is_written(tiny_disk: Path) -> None:
    """Running out of space stops with a clear message; the files already written stay
    readable; once there is room, the same command resumes and finishes the study."""
    out = tiny_disk / "res"
    args = [
        "run", "-a", "perceptron", "-k", "rbf[gamma=0.05]", "-k", "linear", "-d", "a9a[n=3000]",
        "--seeds", "0-9", "--workers", "2", "--out", str(out), "--no-report",
    ]  # fmt: skip
    proc = kbench(*args)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("kbench: error:")]
    assert len(errors) == 1, proc.stderr
    assert "No space left on device" in errors[0] and "finished before are kept" in errors[0]
    kept = {p.name for p in (out / "tasks").glob("*.parquet")}
    assert kept and not _temp_files(out)
    assert len(load_results(out).runs) == len(kept)
    subprocess.run(["mount", "-o", "remount,size=16m", str(tiny_disk)], check=True)
    again = kbench(*args)
    assert again.returncode == 0, again.stderr
    assert f"{len(kept)} of 20 tasks already have results" in again.stderr
    assert kept <= {p.name for p in (out / "tasks").glob("*.parquet")}
    assert len(pd.read_parquet(out / "runs.parquet")) == 20 and not _temp_files(out)


def _file_size_limit(limit: int):
    """A preexec_fn: files the child writes may not grow past ``limit`` bytes (RLIMIT_FSIZE).

    SIGXFSZ is ignored, as Python does anyway, so that a write past the limit fails with
    EFBIG ("File too large") instead of killing the process: a full disk, without root."""
    import resource

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


FSIZE_STUDY = [
    "run", "-a", "perceptron", "-k", "rbf[gamma=0.05]", "-k", "linear",
    "-d", "digits[positive=5-9,n=400]", "--workers", "2",
]  # fmt: skip


@pytest.mark.parametrize(
    ("limit", "victim", "report"),
    [
        (20_000, "runs.parquet", False),  # task files (~13 kB) fit, the summary tables do not
        (120_000, "report.html", True),  # every table fits, the report (~240 kB) does not
    ],
)
def test_file_size_limit_at_the_end_of_a_study(
    tmp_path: Path, limit: int, victim: str, report: bool
) -> None:
    """A write that fails at the end of a study (here: past RLIMIT_FSIZE, as on a full disk)
    is one line and exit 2; the previous file is intact, no temporary file is left, every
    finished task is kept, and the same command without the limit resumes and completes."""
    out = tmp_path / "r"
    no_report = [] if report else ["--no-report"]
    first = kbench(*FSIZE_STUDY, "--seeds", "0-1", "--out", str(out), *no_report)
    assert first.returncode == 0, first.stderr
    before = (out / victim).read_bytes()
    proc = subprocess.run(
        [*KBENCH, *FSIZE_STUDY, "--seeds", "0-5", "--out", str(out), *no_report],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, COLUMNS="200"),
        preexec_fn=_file_size_limit(limit),
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("kbench: error:")]
    assert len(errors) == 1 and "File too large" in errors[0], proc.stderr
    assert victim in errors[0]
    assert (out / victim).read_bytes() == before  # the previous file, whole
    assert not _temp_files(out)
    assert len(list((out / "tasks").glob("*.parquet"))) == 12
    assert len(load_results(out).runs) == 12
    again = kbench(*FSIZE_STUDY, "--seeds", "0-5", "--out", str(out), *no_report)
    assert again.returncode == 0, again.stderr
    assert "12 of 12 tasks already have results" in again.stderr
    assert len(pd.read_parquet(out / "runs.parquet")) == 12
    assert (out / victim).read_bytes() != before and not _temp_files(out)


BLAS_PROBE = '''
import numpy as np
from threadpoolctl import threadpool_info
from kbench import hookimpl, Algorithm


class BlasProbe(Algorithm):
    """Reports how many BLAS threads the task runs with."""
    name = "blas_probe"
    uses_kernel = False
    def __init__(self, *, kernel=None, loss=None, task="binary", n_classes=2, seed=0):
        super().__init__(kernel=kernel, loss=loss, task=task, n_classes=n_classes, seed=seed)
    def decision_one(self, x):
        return 1.0
    def learn_one(self, x, y):
        np.ones((64, 64)) @ np.ones(64)
    def stats(self):
        blas = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
        return {"n_support": 0, "kernel_evals": 0, "blas_threads": max(blas)}


@hookimpl
def kbench_register_algorithms(register):
    register(BlasProbe)
'''


def test_tasks_run_on_one_blas_thread_in_process_and_isolated(tmp_path: Path, plugin_dist) -> None:
    """Every task runs with one BLAS thread, whether it runs in this process or in a forked
    child (where the limit is inherited from the parent, set before forking), on the local
    executor and on Dask."""
    from kbench.executors import execute, execute_isolated
    from kbench.registry import get_registry
    from kbench.study import Experiment, plan

    plugin_dist("kb_blas_probe", BLAS_PROBE)
    p = plan(
        [
            Experiment(
                algorithms=["blas_probe"], datasets=["digits[n=20,positive=5-9]"], seeds=[0, 1]
            )
        ],
        get_registry(),
    )
    here = execute(p.tasks[0])
    forked = execute_isolated(p.tasks[1])
    assert here.status == "ok" and forked.status == "ok", (here.run, forked.run)
    assert here.traces["blas_threads"].iloc[-1] == 1
    assert forked.traces["blas_threads"].iloc[-1] == 1
    for executor in ("local", "dask"):
        out = tmp_path / executor
        proc = kbench(
            "run", "-a", "blas_probe", "-d", "digits[n=20,positive=5-9]", "--seeds", "0-1",
            "--workers", "2", "--executor", executor, "--out", str(out), "--no-report",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        traces = load_results(out).traces
        assert len(traces) and (traces["blas_threads"] == 1).all(), executor
