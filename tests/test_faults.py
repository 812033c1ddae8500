"""Scale-out and fault tolerance: Dask, determinism across executors, kills, crashes, limits, full disks."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import MISBEHAVING, stub_plugin
from helpers import KBENCH, assert_runs, kbench, kill_9_after, script
from kbench.results.store import load_results

# The processes below a process, and whether one still runs: scripts/bench_interrupt.py's.
_processes = script("_bench_common")
descendants, running = _processes.descendants, _processes.running
#: The learners of the studies below: the perceptron with two kernels.
PERCEPTRON_TWO_KERNELS = ["-a", "perceptron", "-k", "rbf[gamma=0.05]", "-k", "poly[degree=2]"]
STUDY = [
    *PERCEPTRON_TWO_KERNELS,
    "-d", "digits[positive=5-9,scale=minmax,test_size=0.3,n=300]", "-d", "a9a[n=400]",
    "--seeds", "0-1",
]  # fmt: skip


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
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
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
    assert_runs(
        tmp_path / "r",
        {"sleeper": "timeout", "segfaulter": "error", "perceptron": "ok"},
        {"segfaulter": ".*SIGSEGV.*"},
    )
    _same_stream_columns(tmp_path / "r")


def _same_stream_columns(out: Path) -> None:
    """Every run row of a study on one stream, crashed, killed or timed out as well as
    finished, carries that stream's id, task and shape (those of the rows that finished)."""
    runs = pd.read_parquet(out / "runs.parquet")
    columns = ["stream_id", "task", "n", "d"]
    assert runs[columns].notna().all().all(), runs[["algorithm", *columns]]
    assert len(runs[columns].drop_duplicates()) == 1, runs[["algorithm", *columns]]


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


KILL_STUDY = [*PERCEPTRON_TWO_KERNELS, "-d", "a9a[n=2500]", "--seeds", "0-3", "--no-report"]


def test_kill_9_of_the_driver_then_resume(tmp_path: Path) -> None:
    """After kill -9 mid-study, rerunning keeps every finished task and ends as an uninterrupted run."""
    out = tmp_path / "killed"
    args = ["run", *KILL_STUDY, "--workers", "1", "--out", str(out)]
    finished = kill_9_after(args, out, 3)
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


MALLOC_CRASHER = stub_plugin('''
import ctypes


class MallocCrasher(Stub):
    """Compiled code that does not check malloc: it takes and touches 8 MiB blocks until
    malloc returns NULL, then writes through it (a segfault at the memory limit)."""
    name = "malloc_crasher"
    def learn_one(self, x, y):
        libc = ctypes.CDLL(None)
        libc.malloc.restype = ctypes.c_void_p
        libc.malloc.argtypes = [ctypes.c_size_t]
        for _ in range(256):  # 2 GiB at most: never run without a limit
            block = libc.malloc(8 << 20)
            if not block:
                ctypes.memset(0, 1, 1)
            ctypes.memset(block, 1, 8 << 20)
        raise RuntimeError("no memory limit was set")


@hookimpl
def kbench_register_algorithms(register):
    register(MallocCrasher)
''')


def test_segfault_and_memory_limit_affect_only_their_tasks(tmp_path: Path, plugin_dist) -> None:
    """A segfault in compiled code and a task over --max-memory are recorded; the rest run.
    The segfault is named as such, not blamed on the memory limit it did not reach; a crash
    when the limit is reached (malloc returning NULL in compiled code) is a memory result."""
    plugin_dist("kb_misbehaving", MISBEHAVING)
    plugin_dist("kb_malloc_crasher", MALLOC_CRASHER)
    proc = kbench(
        "run", "-a", "segfaulter", "-a", "hog", "-a", "malloc_crasher", "-a", "perceptron",
        "-d", "digits[positive=5-9,n=200]", "--max-memory", "300M", "--workers", "2",
        "--out", str(tmp_path / "r"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert_runs(
        tmp_path / "r",
        {"segfaulter": "error", "hog": "memory", "malloc_crasher": "memory", "perceptron": "ok"},
        {
            "segfaulter": "worker process crashed with SIGSEGV",
            "malloc_crasher": "worker process crashed with SIGSEGV after growing by .*"
            "it reached the --max-memory limit of 300 MiB",
        },
    )
    _same_stream_columns(tmp_path / "r")


def _raise_memory_error() -> None:
    raise MemoryError


def _kill_self(sig: int) -> None:
    import faulthandler
    import resource

    faulthandler.disable()  # pytest's crash dumps would only clutter the output
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # and no core file
    os.kill(os.getpid(), sig)


@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGKILL])
def test_a_child_killed_by_a_signal_is_named(sig: signal.Signals) -> None:
    """Whatever signal ends a task's process is named; with no memory growth it is an error,
    not a memory result, even under a memory limit; a MemoryError is a memory result."""
    from kbench.core.registry import get_registry
    from kbench.execution.executors import _died
    from kbench.execution.isolation import ChildDied, run_isolated
    from kbench.execution.study import Experiment, plan

    task = plan([Experiment(algorithms=["perceptron"], datasets=["digits"])], get_registry()).tasks[
        0
    ]
    with pytest.raises(ChildDied) as info:
        run_isolated(_kill_self, sig, max_memory=1 << 30)
    assert str(info.value) == f"worker process crashed with {sig.name}"
    assert info.value.signal == sig
    result = _died(task, info.value, 1 << 30)
    assert result.status == "error" and result.run["reason"] == str(info.value)
    with pytest.raises(ChildDied) as mem:
        run_isolated(_raise_memory_error)
    assert str(mem.value) == "worker process ran out of memory (MemoryError)"
    assert _died(task, mem.value, None).status == "memory"


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
    kept = {p.name for p in (out / "tasks").glob("*.parquet")}
    assert "No space left on device" in errors[0]
    assert f"the {len(kept)} tasks finished before are kept" in errors[0], errors[0]
    assert kept and not _temp_files(out)
    assert len(load_results(out).runs) == len(kept)
    # Again on the full disk: the tasks kept from the first run are counted as kept.
    full = kbench(*args)
    assert full.returncode == 2, full.stderr
    now = {p.name for p in (out / "tasks").glob("*.parquet")}
    assert f"the {len(now)} tasks finished before are kept" in full.stderr, full.stderr
    assert kept <= now
    kept = now
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
    ("victim", "report"),
    [
        ("runs.parquet", False),  # the task files fit under the limit, the summary tables not
        ("report.html", True),  # every table fits, the report does not
    ],
)
def test_file_size_limit_at_the_end_of_a_study(tmp_path: Path, victim: str, report: bool) -> None:
    """A write that fails at the end of a study (here: past RLIMIT_FSIZE, as on a full disk)
    is one line and exit 2; the previous file is intact, no temporary file is left, every
    finished task is kept, and the same command without the limit resumes and completes."""
    out = tmp_path / "r"
    no_report = ["--report"] if report else ["--no-report"]
    first = kbench(*FSIZE_STUDY, "--seeds", "0-1", "--out", str(out), *no_report)
    assert first.returncode == 0, first.stderr
    before = (out / victim).read_bytes()
    # A limit between what must still be written and the file that must fail, from the
    # sizes of this first run (the second has three times the tasks, so larger tables).
    tables = max(p.stat().st_size for p in out.glob("*.parquet"))
    task_files = max(p.stat().st_size for p in (out / "tasks").glob("*.parquet"))
    limit = int(1.3 * task_files) if victim == "runs.parquet" else 3 * tables
    assert limit < len(before), (limit, len(before))
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


BLAS_PROBE = stub_plugin('''
from threadpoolctl import threadpool_info


class BlasProbe(Stub):
    """Reports how many BLAS threads the task runs with."""
    name = "blas_probe"
    def learn_one(self, x, y):
        np.ones((64, 64)) @ np.ones(64)
    def stats(self):
        blas = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
        return {"n_support": 0, "kernel_evals": 0, "blas_threads": max(blas)}


@hookimpl
def kbench_register_algorithms(register):
    register(BlasProbe)
''')


def test_tasks_run_on_one_blas_thread_in_process_and_isolated(tmp_path: Path, plugin_dist) -> None:
    """Every task runs with one BLAS thread, whether it runs in this process or in a forked
    child (where the limit is inherited from the parent, set before forking), on the local
    executor and on Dask."""
    from kbench.core.registry import get_registry
    from kbench.execution.executors import execute, execute_isolated
    from kbench.execution.study import Experiment, plan

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


def _blas_threads() -> int:
    from threadpoolctl import threadpool_info

    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


def test_blas_limit_of_the_caller_is_restored_after_tasks(plugin_dist) -> None:
    """Running tasks sets BLAS to one thread for them only: the caller's own limit is the
    same before and after a task in process, a forked task and the local executor."""
    from threadpoolctl import threadpool_limits

    from kbench.core.registry import get_registry
    from kbench.execution.executors import LocalExecutor, execute, execute_isolated
    from kbench.execution.study import Experiment, plan

    plugin_dist("kb_blas_probe", BLAS_PROBE)
    tasks = plan(
        [Experiment(algorithms=["blas_probe"], datasets=["digits[n=20,positive=5-9]"])],
        get_registry(),
    ).tasks
    # Two threads where the BLAS allows it (OPENBLAS_NUM_THREADS=1 caps it at one: then the
    # check is that one stays one).
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        results = [execute(tasks[0]), execute_isolated(tasks[0])]
        assert _blas_threads() == before
        LocalExecutor(1).run(tasks, results.append)
        assert _blas_threads() == before
    assert [r.status for r in results] == ["ok"] * 3
    assert all(r.traces["blas_threads"].iloc[-1] == 1 for r in results)


FORK_THREADS = """
import os, sys
import numpy, scipy.linalg

def threads():
    return len(os.listdir("/proc/self/task"))

# What the BLAS libraries alone leave running across a fork (none for OpenBLAS, whose fork
# handler stops its pool; an OpenMP BLAS keeps its threads): kbench must add nothing to it.
numpy.ones((300, 300)) @ numpy.ones((300, 300))
scipy.linalg.blas.dgemm(1.0, numpy.ones((300, 300)), numpy.ones((300, 300)))
pid = os.fork()
if pid == 0:
    os._exit(0)
baseline = threads()
os.waitpid(pid, 0)

from pathlib import Path
import kbench.execution.isolation as iso
from kbench.execution.executors import LocalExecutor
from kbench.core.registry import get_registry
from kbench.results.store import ResultsStore, load_results
from kbench.execution.study import Experiment, plan

seen = []
fork = os.fork
def counting_fork():
    pid = fork()
    if pid:  # where Python 3.12 counts the threads to decide whether to warn
        seen.append(threads())
    return pid
iso.os.fork = counting_fork

out = Path(sys.argv[1])
store = ResultsStore(out)
store.prepare()
reg = get_registry()
for seeds in ([0, 1], [2, 3]):  # the second study forks after the first one's results were read
    tasks = plan([Experiment(algorithms=["perceptron"], kernels=["rbf"],
                             datasets=["digits[n=300,positive=5-9]"], seeds=seeds)], reg).tasks
    LocalExecutor(2).run(tasks, store.write)
    load_results(out).save(out)
print(baseline, seen)
"""


def test_the_driver_forks_single_threaded(tmp_path: Path) -> None:
    """When the driver forks a task, it has no thread of its own besides the forking one
    (Arrow's jemalloc and thread pools were): Python 3.12 warns about forking a
    multi-threaded process, and such a fork can deadlock. Here (OpenBLAS, whose fork handler
    stops its pool) that is one thread in all."""
    proc = subprocess.run(
        [sys.executable, "-c", FORK_THREADS, str(tmp_path / "r")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    baseline, counts = proc.stdout.strip().splitlines()[-1].split(" ", 1)
    assert eval(counts) == [int(baseline)] * 4, (baseline, counts)


def _left_running(pids: set[int], grace: float = 5.0) -> set[int]:
    deadline = time.monotonic() + grace
    while (alive := {p for p in pids if running(p)}) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def test_ctrl_c_during_fork_is_not_swallowed() -> None:
    """Ctrl-C that arrives while os.fork runs Python's at-fork callbacks is not lost: CPython
    ignores exceptions raised in those callbacks, so it used to be swallowed and the study
    ran on. It now surfaces once the child is registered, and that child is killed."""
    from kbench.execution.isolation import _LIVE, Child, kill_children

    armed = [True]

    def interrupt_now() -> None:  # the user's Ctrl-C, landing inside fork
        if armed:
            armed.clear()
            signal.raise_signal(signal.SIGINT)

    os.register_at_fork(after_in_parent=interrupt_now)
    before = set(_LIVE)
    with pytest.raises(KeyboardInterrupt):
        Child(time.sleep, 30)
    assert not armed
    started = set(_LIVE) - before
    assert len(started) == 1
    kill_children()
    assert not set(_LIVE) & started and not running(started.pop())


TRACKED_WORKER = """
import multiprocessing as mp, os, sys, time

def hold(lock):
    time.sleep(60)

if __name__ == "__main__":
    from kbench.execution.dask_shutdown import tracker_warnings_off

    ctx = mp.get_context("spawn")  # as Dask starts its workers
    if sys.argv[1] == "quiet":
        with tracker_warnings_off():
            lock = ctx.Lock()  # starts the resource tracker
    else:
        lock = ctx.Lock()
    worker = ctx.Process(target=hold, args=(lock,))
    worker.start()
    worker.kill()  # as kbench kills its cluster's workers on Ctrl-C
    worker.join()
    os._exit(0)
"""


@pytest.mark.parametrize("mode", ["loud", "quiet"])
def test_the_resource_tracker_of_a_cluster_kbench_starts_is_quiet(tmp_path: Path, mode) -> None:
    """A worker killed on Ctrl-C leaves its semaphore to Python's resource tracker, which
    unlinks it after kbench has exited and warns about it on kbench's stderr; started as
    kbench starts its local cluster, the tracker is quiet (the same program without it is
    the control: it warns)."""
    program = tmp_path / "tracked.py"
    program.write_text(TRACKED_WORKER)
    # communicate() returns once every holder of stderr has closed it: the tracker too.
    done = subprocess.run(
        [sys.executable, str(program), mode], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0
    assert ("leaked semaphore" in done.stderr) == (mode == "loud"), done.stderr


CTRL_C_IN_A_CALLBACK = """
import signal, sys, time, weakref

from kbench.cli.main import _ctrl_c_again

if sys.argv[1] == "kbench":
    sys.unraisablehook = _ctrl_c_again(sys.unraisablehook)


class Figure:  # an object with a weakref callback, as matplotlib's transforms have
    __slots__ = ("__weakref__",)


figure = Figure()
# Ctrl-C landing inside a weakref callback, as one did in matplotlib's during a report
ref = weakref.ref(figure, lambda _: signal.raise_signal(signal.SIGINT))
try:
    del figure
    time.sleep(4)
    print("ran on")
except KeyboardInterrupt:
    print("interrupted")
"""


def run_program(
    program: Path, text: str, hook: str, times: int
) -> list[subprocess.CompletedProcess]:
    """``text`` written to ``program`` and run ``times`` times with ``hook`` (``kbench`` or
    ``python``) as its argument: each run's result."""
    program.write_text(text)
    return [
        subprocess.run(
            [sys.executable, str(program), hook], capture_output=True, text=True, timeout=60
        )
        for _ in range(times)
    ]


@pytest.mark.parametrize("hook", ["kbench", "python"])
def test_ctrl_c_inside_a_weakref_callback_is_delivered_again(tmp_path: Path, hook) -> None:
    """Python prints and drops a KeyboardInterrupt raised inside a weakref callback (the
    control, ``python``: "Exception ignored" and the program runs on); kbench's hook
    delivers it again once the callback is over, and prints nothing. Five times: whether
    the main thread is already asleep when the Ctrl-C comes again is a race, and a Ctrl-C
    that only sets Python's flag (``_thread.interrupt_main``) leaves a sleeping thread
    asleep in about one run in three."""
    runs = run_program(
        tmp_path / "callback.py", CTRL_C_IN_A_CALLBACK, hook, 5 if hook == "kbench" else 1
    )
    for done in runs:
        if hook == "kbench":
            assert (done.stdout, done.stderr) == ("interrupted\n", "")
    if hook == "python":
        assert done.stdout == "ran on\n" and "Exception ignored" in done.stderr


ERROR_AFTER_A_DROPPED_CTRL_C = """
import signal, sys, weakref

import kbench.cli.main as kbench_main


class Figure:  # an object with a weakref callback, as matplotlib's transforms have
    __slots__ = ("__weakref__",)


class Command:  # stands for the click group: its command draws, and fails on what it drew
    def main(self, standalone_mode):
        figure = Figure()
        ref = weakref.ref(figure, lambda _: signal.raise_signal(signal.SIGINT))
        del figure  # the Ctrl-C lands in the callback, which it cuts short
        raise ValueError("Invalid affine transformation matrix")  # before it comes again


kbench_main.cli = Command()
if sys.argv[1] == "kbench":
    kbench_main.program()
else:
    kbench_main.main()
"""


@pytest.mark.parametrize("hook", ["kbench", "python"])
def test_an_error_after_a_dropped_ctrl_c_is_the_interruption(tmp_path: Path, hook) -> None:
    """A Ctrl-C dropped inside a callback (matplotlib's, during the report) can leave the
    callback's object half-updated, and the code it interrupted fail on it before the
    Ctrl-C is delivered again (as a report did: "Invalid affine transformation matrix").
    kbench takes that error for the interruption: exit 130, one line, no traceback. The
    control, without kbench's hook (``main`` alone), shows the traceback."""
    runs = run_program(
        tmp_path / "dropped.py", ERROR_AFTER_A_DROPPED_CTRL_C, hook, 3 if hook == "kbench" else 1
    )
    for done in runs:
        if hook == "kbench":
            assert (done.returncode, done.stderr) == (130, "kbench: interrupted\n")
    if hook == "python":
        assert done.returncode == 1 and "Invalid affine" in done.stderr, done.stderr
        assert "Exception ignored" in done.stderr


SLOW_TO_INITIALISE = """
import os, time
from pathlib import Path

Path(os.environ["KB_MARKER"]).write_text("importing")
try:
    time.sleep(60)
except KeyboardInterrupt as exc:
    # As a compiled module's initialisation (pybind11's, matplotlib's font module) reports it.
    raise ImportError("initialization failed") from exc
"""


def test_ctrl_c_that_surfaces_as_an_import_error_is_an_interruption(
    tmp_path: Path, plugin_dist
) -> None:
    """Ctrl-C while a compiled module initialises comes out of the import as an ImportError
    raised from the KeyboardInterrupt. kbench takes it for what it is: exit 130, one line,
    no traceback, and the plugin whose import was cut short is not reported as broken."""
    plugin_dist("kb_slow_import", SLOW_TO_INITIALISE)
    marker = tmp_path / "marker"
    proc = subprocess.Popen(
        [*KBENCH, "plugins"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, KB_MARKER=str(marker)),
    )
    deadline = time.monotonic() + 60
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert marker.exists() and proc.poll() is None
    time.sleep(0.2)  # inside time.sleep by now
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert stderr.strip() == "kbench: interrupted"
    assert "broken" not in stdout


def test_interrupted_follows_the_chain_of_causes() -> None:
    from kbench.core.errors import interrupted

    def raised(make):  # the exception as Python leaves it, with its cause and context set
        try:
            make()
        except BaseException as exc:
            return exc
        raise AssertionError("nothing raised")

    def from_ctrl_c():
        raise ImportError("initialization failed") from KeyboardInterrupt()

    def while_handling_ctrl_c():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ValueError("cleanup failed") from None

    def during_ctrl_c_handling():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ValueError("cleanup failed")  # noqa: B904

    def twice_removed():
        try:
            from_ctrl_c()
        except ImportError as exc:
            raise RuntimeError("plugin failed") from exc

    assert interrupted(KeyboardInterrupt())
    assert interrupted(raised(from_ctrl_c))
    assert interrupted(raised(during_ctrl_c_handling))
    assert interrupted(raised(twice_removed))
    # ``from None`` hides the context from tracebacks but keeps it: still Ctrl-C's doing.
    assert interrupted(raised(while_handling_ctrl_c))
    assert not interrupted(ImportError("no module named x"))
    assert not interrupted(None)
    a, b = ValueError("a"), ValueError("b")
    a.__context__, b.__context__ = b, a  # a cycle ends the walk
    assert not interrupted(a)


SIGINT_STUDY = [
    "run", "-a", "perceptron", "-k", "rbf[gamma=0.05]", "-k", "linear",
    "-d", "digits[positive=5-9,n=1500]", "--seeds", "0-3", "--report",
]  # fmt: skip


def _interrupt(args: list[str], out: Path, delay: float, *, when_tasks: int = 0) -> tuple:
    """Start kbench, wait until the results folder exists (and holds ``when_tasks`` task
    files), then ``delay`` seconds more, and send SIGINT. Returns (returncode, stderr,
    processes below kbench when interrupted, whether it was still running then)."""
    proc = subprocess.Popen(
        [*KBENCH, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, COLUMNS="200"),
    )
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        if out.exists() and len(list((out / "tasks").glob("*.parquet"))) >= when_tasks:
            break
        time.sleep(0.01)
    time.sleep(delay)
    below = descendants(proc.pid)
    # Between two tasks a worker may have no process below it: when the signal is meant to
    # come while tasks run, wait (briefly) for the next one. Only then: the other callers
    # spread their signals over phases with no task process (streams, tables, the report).
    settle = time.monotonic() + (2.0 if when_tasks else 0.0)
    while not below and proc.poll() is None and time.monotonic() < settle:
        time.sleep(0.005)
        below = descendants(proc.pid)
    alive = proc.poll() is None
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    return proc.returncode, stderr, below, alive


def test_ctrl_c_stops_the_study_kills_its_tasks_and_resumes(tmp_path: Path) -> None:
    """Ctrl-C while tasks run: exit 130 with one line saying what was kept, every task
    process gone, every file whole, and the same command resumes."""
    out = tmp_path / "r"
    # 24 tasks, so that a loaded machine cannot finish the study before the signal.
    args = [*PERCEPTRON_TWO_KERNELS, "-d", "a9a[n=2500]", "--seeds", "0-11", "--no-report"]
    args += ["--workers", "2", "--out", str(out)]
    code, stderr, below, alive = _interrupt(["run", *args], out, 0.0, when_tasks=1)
    assert alive and below, "the study ended before it could be interrupted"
    assert code == 130, stderr
    assert "Traceback" not in stderr
    assert "kbench: interrupted; " in stderr and "run the same command to resume" in stderr
    assert not _left_running(below)
    kept = {p.name for p in (out / "tasks").glob("*.parquet")}
    assert 1 <= len(kept) < 24 and not _temp_files(out)
    assert len(load_results(out).runs) == len(kept)
    again = kbench("run", *args)
    assert again.returncode == 0, again.stderr
    assert f"{len(kept)} of 24 tasks already have results" in again.stderr
    assert len(pd.read_parquet(out / "runs.parquet")) == 24


@pytest.mark.slow
def test_ctrl_c_twenty_times_at_varied_moments(tmp_path: Path) -> None:
    """Ctrl-C at 20 moments spread over a whole study (building streams, starting Dask,
    running tasks, writing results and tables, the leaderboard and the report), on the
    local executor and on Dask: each time exit 130 and no process left behind (or, when
    the signal came after the study had finished, exit 0 with everything written); then
    the same command resumes and completes the study."""
    timings = {}
    # How long each takes, from its results folder on; the second of two runs, whose data
    # cache is warm as the tries' is (the first also builds the streams, and a delay
    # scaled on it let most tries finish before their signal).
    for executor, attempt in itertools.product(("local", "dask"), (1, 2)):
        out = tmp_path / f"calibrate-{executor}-{attempt}"
        proc = subprocess.Popen(
            [*KBENCH, *SIGINT_STUDY, "--workers", "2", "--executor", executor, "--out", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while not out.exists() and proc.poll() is None:
            time.sleep(0.01)
        start = time.monotonic()
        assert proc.wait(timeout=300) == 0
        timings[executor] = time.monotonic() - start
    interrupted = 0
    for i in range(20):
        executor = "dask" if i % 4 == 3 else "local"
        out = tmp_path / f"try-{i}"
        args = [*SIGINT_STUDY, "--workers", "2", "--executor", executor, "--out", str(out)]
        delay = timings[executor] * ((i * 7) % 20 + 0.5) / 21  # spread, in shuffled order
        code, stderr, below, alive = _interrupt(args, out, delay)
        assert "Traceback" not in stderr, (i, stderr)
        if alive:
            assert code in (130, 0), (i, code, stderr)
            interrupted += code == 130
        assert not _left_running(below), (i, executor, delay)
        if out.exists():
            assert not _temp_files(out), i
        again = kbench(*args)
        assert again.returncode == 0, (i, again.stderr)
        runs = pd.read_parquet(out / "runs.parquet")
        assert len(runs) == 8 and (runs["status"] == "ok").all(), i
        assert (out / "report.html").exists()
    assert interrupted >= 10, f"only {interrupted} of 20 tries were interrupted mid-study"


def test_a_local_cluster_stopped_on_ctrl_c_starts_no_worker_again(tmp_path: Path) -> None:
    """kbench kills its local cluster's workers on Ctrl-C; their nannies must not start
    them again (a worker being started as kbench exits waits for its start-up data and
    prints a traceback): seconds later no process is left below kbench but the resource
    tracker."""
    code = (
        "import multiprocessing.resource_tracker as rt, time\n"
        "from kbench.execution.dask_executor import DaskExecutor\n"
        "from kbench.execution.dask_shutdown import descendants, stop_local_cluster_now\n"
        "if __name__ == '__main__':\n"
        "    client, cluster = DaskExecutor(workers=2)._client()\n"
        "    print(len(descendants() - {rt._resource_tracker._pid}))\n"
        "    stop_local_cluster_now(set(), set(), set())\n"
        "    time.sleep(4)\n"  # a nanny restarts its worker within a second or so
        "    print(len(descendants() - {rt._resource_tracker._pid}), flush=True)\n"
        "    import os; os._exit(0)\n"
    )
    script = tmp_path / "no_restart.py"
    script.write_text(code)
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["2", "0"], (proc.stdout, proc.stderr)


def test_a_local_cluster_stopping_under_its_workers_writes_nothing(tmp_path: Path) -> None:
    """When kbench's local Dask cluster loses its scheduler while workers still run (as when
    Ctrl-C comes while the cluster stops), neither the workers nor the scheduler's side put
    Dask's log and tracebacks on kbench's stderr (a CI run once printed a worker's heartbeat
    traceback there)."""
    code = (
        "import sys, time\n"
        "from kbench.execution.dask_executor import DaskExecutor\n"
        "from kbench.execution.dask_shutdown import stop_local_cluster_now\n"
        "if __name__ == '__main__':\n"
        "    client, cluster = DaskExecutor(workers=1)._client()\n"
        "    cluster.sync(cluster.scheduler.close)\n"
        "    time.sleep(4)\n"  # a worker heartbeat is due every second or so
        "    stop_local_cluster_now(set(), set(), set())\n"  # then kbench stops it, as on Ctrl-C
        "    print('after', file=sys.stderr)\n"
    )
    script = tmp_path / "stop_under_workers.py"
    script.write_text(code)
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert proc.stderr.strip().splitlines()[-1:] == ["after"], proc.stderr
    assert proc.stderr.strip() == "after", proc.stderr


def test_linux_only_is_declared_and_said(tmp_path: Path) -> None:
    """kbench declares that it runs on Linux, and kbench run elsewhere says so in one line
    (exit 2) before doing anything."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib

    meta = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert "Operating System :: POSIX :: Linux" in meta["project"]["classifiers"]
    out = tmp_path / "r"
    code = (
        # Imported first: the libraries read sys.platform as they load.
        "import sys, pandas, kbench.cli.main, kbench.execution.driver, kbench.execution.study, kbench.core.registry; "
        "kbench.core.registry.get_registry(); sys.platform = 'darwin'; "
        f"sys.argv = ['kbench', 'run', '-a', 'perceptron', '-d', 'digits', '--out', {str(out)!r}]; "
        "kbench.cli.main.main()"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "kbench: error: running tasks needs Linux (kbench forks a process per task and uses "
        "Linux's prctl and /proc); this system is darwin"
    ]
    assert not out.exists()


def test_forking_from_a_threaded_process_does_not_warn(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Dask worker always has threads besides the one that forks a task. Python 3.12 warns
    (a DeprecationWarning, an error under this suite's filters) when such a process forks;
    kbench forks there without it. The warning is emulated here, so that this holds on
    every Python."""
    import threading
    import warnings

    from kbench.execution.isolation import _os_threads, run_isolated

    real_fork = os.fork

    def fork_as_in_python_3_12() -> int:
        pid = real_fork()
        if pid and _os_threads() > 1:
            warnings.warn(
                f"This process (pid={os.getpid()}) is multi-threaded, use of fork() may lead "
                "to deadlocks in the child.",
                DeprecationWarning,
                stacklevel=2,
            )
        return pid

    monkeypatch.setattr(os, "fork", fork_as_in_python_3_12)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert _os_threads() > 1
        assert run_isolated(int, "7") == 7
    finally:
        stop.set()
        other.join()
