"""What kbench says of its Dask cluster, in its own words."""

from __future__ import annotations

import logging


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
