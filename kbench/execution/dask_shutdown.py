"""Stopping a local Dask cluster at once on Ctrl-C, and keeping its processes quiet.

A local cluster's worker processes inherit kbench's stderr: their own Dask log and the
resource tracker's warnings about the semaphores of killed workers would reach it after
kbench has exited. These helpers keep them quiet, and kill the processes of a cluster this
run started instead of closing it politely (which takes seconds).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def tracker_warnings_off() -> Iterator[None]:
    """Start the local cluster with Python's multiprocessing resource tracker quiet.

    The tracker (a process the cluster's start launches, inheriting kbench's stderr) unlinks
    the semaphores of worker processes that ended without doing it themselves, as those that
    Ctrl-C kills do, and warns about each on stderr, after kbench has exited. The clean-up is
    what matters; the warnings are filtered out through the environment it starts with.
    """
    before = os.environ.get("PYTHONWARNINGS")
    quiet = "ignore:resource_tracker:UserWarning"
    os.environ["PYTHONWARNINGS"] = f"{before},{quiet}" if before else quiet
    yield
    # Put back once the cluster has started: interrupted, the start may still be launching
    # its processes (from its own thread) while kbench stops.
    if before is None:
        os.environ.pop("PYTHONWARNINGS", None)
    else:
        os.environ["PYTHONWARNINGS"] = before


def quiet_dask_log() -> None:
    """Keep a local worker's own Dask log off kbench's stderr, until the worker ends."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL + 10)


def descendants() -> set[int]:
    """The process ids below this process (psutil comes with dask.distributed)."""
    import psutil

    found = set()
    with contextlib.suppress(psutil.Error):
        for proc in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if proc.status() != psutil.STATUS_ZOMBIE:  # killed, not yet waited for
                    found.add(proc.pid)
    return found


def stop_local_cluster_now(
    clusters_before: set[Any], children_before: set[Any], pids_before: set[int]
) -> None:
    """On Ctrl-C, stop the local Dask cluster this run started at once.

    Closing it politely takes seconds (each worker is asked to finish and waited for). Its
    worker processes are killed instead; the cluster is marked closed, so that Dask's exit
    handler does not try to close it again; and the errors Dask's event loop would log about
    the workers it lost are silenced. A remote cluster is left running: the scheduler drops
    this run's tasks once the client is gone.
    """
    import multiprocessing.resource_tracker

    from distributed.core import Status
    from distributed.deploy.spec import SpecCluster

    for name in ("distributed", "asyncio", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 10)
    for cluster in [c for c in list(SpecCluster._instances) if c not in clusters_before]:
        for nanny in list(getattr(cluster, "workers", {}).values()):
            # A killed worker must not be started again: a nanny restarts its worker unless
            # it is closing (a restart being spawned as kbench exits would be left waiting
            # for its start-up data and print a traceback).
            with contextlib.suppress(Exception):
                nanny.status = Status.closing_gracefully
        cluster.status = Status.closed
    for proc in multiprocessing.active_children():
        if proc not in children_before:
            with contextlib.suppress(Exception):
                proc.kill()
    # A worker process the cluster's thread is starting right now is not among
    # active_children yet; left running, it would wait for its start-up data from a
    # kbench that has exited and print a traceback. Every new process below kbench is
    # killed, a few times over until none is left, except the resource tracker, which
    # unlinks what the killed workers leave (see tracker_warnings_off).
    tracker = getattr(multiprocessing.resource_tracker._resource_tracker, "_pid", None)
    for _ in range(10):
        new = descendants() - pids_before - {tracker}
        if not new:
            break
        for pid in new:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)
