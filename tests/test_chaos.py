"""Studies under kills: Dask workers lost as preempted machines are, a driver killed and run
again, task processes killed from outside, a scheduler that goes away; and what kbench says
of its cluster, in its own words.

The soaks run ``scripts/bench_chaos.py`` (which starts ``dask scheduler`` and ``dask
worker`` with the command line, as a cluster manager does) in a session of its own, with
every wait bounded; the script kills what it started, and this test checks that nothing
is left.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from helpers import SCRIPTS, script

#: The soak script, whose processes and Dask cluster the tests below use too.
CHAOS = script("bench_chaos")
#: A line of Dask's own log (time - logger - level - message), or a traceback.
DASK_LOG = re.compile(r" - (distributed|tornado|asyncio)[.\w]* - [A-Z]+ - |Traceback")


def _soak(folder: Path, *args: str, budget: float) -> dict:
    """``bench_chaos.py ARGS`` in a session of its own; its JSON report. On ``budget``
    seconds it is stopped (SIGTERM: it kills what it started), then its group killed."""
    report = folder / "report.json"
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPTS / "bench_chaos.py"), *args, "--json", str(report),
         "--keep", str(folder / "soak"), "--deadline", str(budget / 2)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        output, _ = proc.communicate(timeout=budget)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=60)
        pytest.fail(f"the soak took over {budget:.0f} s:\n{output[-3000:]}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, output[-3000:]
    return {**json.loads(report.read_text()), "output": output}


@pytest.mark.slow
def test_chaos_soaks_end_with_the_tables_of_an_undisturbed_run(tmp_path: Path) -> None:
    """600 short tasks on a Dask cluster started with the ``dask`` command (a scheduler and
    two single-threaded workers on 127.0.0.1), a worker killed with SIGKILL about every
    fifth of the undisturbed run's time (a few seconds) and a new one started, the driver
    killed once and run again; and on the local executor, with task processes killed and
    the driver's process group killed once (the crashed tasks rerun by --retry-failed).
    Both end with runs, outcomes and traces equal to an undisturbed run's (timing, memory
    and timestamps left out), every task once, within twice its wall time; the workers
    never hold more than the results on their way to the driver, and no line of Dask's own
    log reaches kbench's output."""
    report = _soak(tmp_path, "--tasks", "600", "--kills", "5", budget=1200)
    assert report["left_running"] == [], report["output"]
    for executor in ("dask", "local"):
        entry = report["executors"][executor]
        quiet, loud = entry["undisturbed"], entry["chaos"]
        assert not quiet["failure"] and not loud["failure"], (executor, report["output"])
        assert loud["driver_kills"] == 1 and loud["runs"] >= 2, executor
        assert entry["ratio"] <= 2.0, (executor, report["output"])
        assert loud["dask_log_lines"] == [] and quiet["dask_log_lines"] == [], executor
    dask = report["executors"]["dask"]
    loud = dask["chaos"]
    assert loud["worker_kills"] >= 3, report["output"]
    # Released once written: the workers hold the results on their way to the driver, a
    # handful (the tasks in flight are twice the cluster's threads and 8 more), never the
    # study's (600 before).
    assert dask["undisturbed"]["max_held"] <= 16 and loud["max_held"] <= 16, report["output"]
    # A lost worker costs its tasks in flight: at most the results not yet gathered from
    # it are computed again, never the results it had finished before.
    assert loud["recomputed"] <= 2 * loud["worker_kills"], report["output"]
    lost = [ln for ln in loud["kbench_lines"] if re.match(r"kbench: dask: worker \S+ lost", ln)]
    assert lost, loud["kbench_lines"]
    local = report["executors"]["local"]["chaos"]
    assert local["task_kills"] >= 3 and local["retried"] >= 1, report["output"]


@pytest.mark.slow
def test_a_lost_scheduler_stops_the_study_and_a_new_one_resumes_it(tmp_path: Path) -> None:
    """The scheduler killed mid-study: kbench exits 2 with one line, the tasks not finished
    have no result (not a failed one), every finished one is kept; the same command against
    a new scheduler resumes them."""
    chaos = CHAOS
    procs = chaos.Processes(tmp_path)
    out = tmp_path / "r"
    try:
        first = chaos.DaskCluster(procs, "first")
        for _ in range(2):
            first.add_worker()
        command = ["run", *chaos.study(120), "--no-report", "--out", str(out), "--executor", "dask"]
        driver = procs.start_kbench([*command, "--scheduler", first.address], "driver-0")
        deadline = time.monotonic() + 300
        while chaos._count_files(out / "tasks") < 20 and time.monotonic() < deadline:
            assert driver.poll() is None, (tmp_path / "driver-0.err").read_text()
            time.sleep(0.05)
        procs.kill_group(first.scheduler)
        assert driver.wait(timeout=120) == 2
        stderr = (tmp_path / "driver-0.err").read_text()
        assert not DASK_LOG.search(stderr), stderr
        errors = [ln for ln in stderr.splitlines() if ln.startswith("kbench: error:")]
        kept = chaos._count_files(out / "tasks")
        assert errors == [
            f"kbench: error: lost the Dask scheduler at {first.address}; the {120 - kept} tasks "
            f"not finished were not run; the {kept} finished tasks are kept in {out}; run the "
            "same command against a running scheduler to resume"
        ], stderr
        for worker in first.workers:
            procs.kill_group(worker)
        from kbench.results.store import load_results

        assert (load_results(out).runs["status"] == "ok").all()  # none recorded as failed

        second = chaos.DaskCluster(procs, "second")
        for _ in range(2):
            second.add_worker()
        again = procs.start_kbench([*command, "--scheduler", second.address], "driver-1")
        assert again.wait(timeout=600) == 0, (tmp_path / "driver-1.err").read_text()
        stderr = (tmp_path / "driver-1.err").read_text()
        assert f"{kept} of 120 tasks already have results" in stderr, stderr
        runs = pd.read_parquet(out / "runs.parquet")
        assert len(runs) == 120 and (runs["status"] == "ok").all()
    finally:
        procs.note_descendants()
        procs.close()
    assert procs.left_running() == []


def test_dask_log_records_become_kbench_lines_and_stay_off_stderr(capfd) -> None:
    """While a study runs on Dask, the client's log record of a result lost with its worker
    becomes a kbench line naming the task, other records of Dask's are dropped, nothing
    reaches standard error, and every logger is as it was afterwards."""
    from kbench.execution.cluster_events import ClusterEvents, captured_dask_log

    labels = {"kbench-abc": "perceptron/rbf on a9a (seed 3)"}
    events = ClusterEvents(labels.get)
    client_log = logging.getLogger("distributed.client")
    before = (client_log.handlers[:], client_log.propagate, client_log.level)
    with captured_dask_log(events):
        client_log.warning("Couldn't gather %s keys, rescheduling %s", 1, ["kbench-abc"])
        client_log.warning("Couldn't gather %s keys, rescheduling %s", 1, ["other-client-key"])
        logging.getLogger("distributed.core").error("Connection to %s lost", "tcp://x")
        logging.getLogger("asyncio").error("Task exception was never retrieved")
    assert events.lines() == [
        (
            "kbench: dask: the result of perceptron/rbf on a9a (seed 3) was lost with its "
            "worker before it reached kbench; computed again",
            "warning",
        )
    ]
    assert events.recomputed == 1
    assert capfd.readouterr().err == ""
    assert (client_log.handlers, client_log.propagate, client_log.level) == before


def test_worker_events_of_the_study_become_kbench_lines() -> None:
    """The scheduler's events of a lost worker (its tasks rescheduled, its finished results
    computed again), of one that left and of one that joined, as kbench says them; another
    client's tasks are not this study's."""
    from kbench.execution.cluster_events import ClusterEvents

    labels = {f"kbench-{i}": f"task {i}" for i in range(4)}
    events = ClusterEvents(labels.get)
    events.workers_changed = False
    for msg in (
        {"action": "add-worker", "worker": "tcp://w1"},
        {"action": "remove-worker", "worker": "tcp://w1", "expected": False,
         "processing-tasks": {"kbench-0", "other-1"}, "lost-computed-tasks": set()},
        {"action": "remove-worker", "worker": "tcp://w2", "expected": False,
         "processing-tasks": {"kbench-1", "kbench-2"}, "lost-computed-tasks": {"kbench-3"}},
        {"action": "remove-worker", "worker": "tcp://w3", "expected": True,
         "processing-tasks": {"other-2"}, "lost-computed-tasks": set()},
        {"action": "gather", "count": 3},
    ):  # fmt: skip
        events._event((0.0, msg))
    assert events.lines() == [
        ("kbench: dask: worker tcp://w1 joined", "info"),
        ("kbench: dask: worker tcp://w1 lost; task 0 rescheduled", "warning"),
        (
            "kbench: dask: worker tcp://w2 lost; 2 tasks (task 1; task 2) rescheduled; "
            "1 finished result not yet written computed again",
            "warning",
        ),
        ("kbench: dask: worker tcp://w3 left; none of this study's tasks was on it", "warning"),
    ]
    assert events.workers_changed and events.lost_workers == 2
    assert (events.rescheduled, events.recomputed) == (3, 1)
