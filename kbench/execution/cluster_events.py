"""What kbench says about a Dask cluster while a study runs on it, in its own words.

The scheduler tells every client that subscribes to its ``all`` topic when a worker joins
or leaves, and which tasks were running on a worker it lost (it runs them again
elsewhere) or held finished results there (it computes them again if a client still
wants them). :class:`ClusterEvents` keeps those that concern this study's tasks and turns
them into kbench's lines, on the driver's thread.

``distributed`` also logs to this process's standard error (a result that could not be
gathered from a worker that died, a connection it failed to restore...). While a study
runs, :func:`captured_dask_log` takes those records off kbench's output: the one that
matters (a lost result, computed again) becomes a kbench line; the rest say, in Dask's
words and with its task keys, what kbench reports itself (a lost scheduler ends the
study with one line).
"""

from __future__ import annotations

import collections
import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

#: The loggers whose records ``distributed`` writes to standard error (it gives several of
#: them a handler of their own) and those of the event loop a client runs on.
_LOGGERS = ("distributed", "distributed.client", "distributed.gc", "tornado", "asyncio")
#: The client's log record that a finished result was lost with its worker.
_GATHER_FAILED = "Couldn't gather %s keys, rescheduling %s"


class ClusterEvents:
    """The cluster's events that concern a study, as kbench's lines.

    Parameters
    ----------
    label
        The readable label of one of the study's task keys, None for another key (a
        shared cluster runs other clients' tasks too).
    """

    def __init__(self, label: Callable[[str], str | None]) -> None:
        self.label = label
        # Appended from the client's event-loop thread (and from whichever thread logs),
        # read on the driver's: a deque's append and popleft are atomic.
        self._raw: collections.deque[tuple[str, Any]] = collections.deque()
        self.workers_changed = True
        self.lost_workers = 0
        self.rescheduled = 0
        self.recomputed = 0

    def attach(self, client: Any) -> None:
        """Subscribe to the scheduler's events through ``client``."""
        client.subscribe_topic("all", self._event)

    def _event(self, event: tuple[float, Any]) -> None:
        """On the client's thread: keep what the driver will report."""
        _, msg = event
        if isinstance(msg, dict) and msg.get("action") in ("add-worker", "remove-worker"):
            self._raw.append(("event", msg))

    def log_record(self, record: logging.LogRecord) -> None:
        """A ``distributed`` log record of this process (kept only if kbench reports it)."""
        if record.msg == _GATHER_FAILED and len(record.args or ()) == 2:
            self._raw.append(("gather-failed", record.args[1]))  # type: ignore[index]

    def lines(self) -> list[tuple[str, str]]:
        """(text, level) of everything new to report, oldest first."""
        out = []
        while self._raw:
            kind, data = self._raw.popleft()
            line = self._gather_failed(data) if kind == "gather-failed" else self._worker(data)
            if line:
                out.append(line)
        return out

    def _worker(self, msg: dict[str, Any]) -> tuple[str, str] | None:
        self.workers_changed = True
        address = msg.get("worker", "?")
        if msg["action"] == "add-worker":
            return f"kbench: dask: worker {address} joined", "info"
        running = self._ours(msg.get("processing-tasks", ()))
        finished = self._ours(msg.get("lost-computed-tasks", ()))
        self.lost_workers += not msg.get("expected")
        self.rescheduled += len(running)
        self.recomputed += len(finished)
        what = "left" if msg.get("expected") else "lost"
        text = f"kbench: dask: worker {address} {what}"
        if running:
            text += f"; {_tasks(running)} rescheduled"
        if finished:
            text += f"; {len(finished)} finished result{'s' if len(finished) > 1 else ''} "
            text += "not yet written computed again"
        if not running and not finished:
            text += "; none of this study's tasks was on it"
        return text, "warning"

    def _gather_failed(self, keys: Any) -> tuple[str, str] | None:
        ours = self._ours(keys if isinstance(keys, (list, tuple, set)) else ())
        if not ours:
            return None
        self.recomputed += len(ours)
        return (
            f"kbench: dask: the result of {_tasks(ours)} was lost with its worker before it "
            "reached kbench; computed again",
            "warning",
        )

    def _ours(self, keys: Any) -> list[str]:
        return sorted(label for key in keys if (label := self.label(str(key))) is not None)


def _tasks(labels: list[str]) -> str:
    """``perceptron/rbf on a9a (seed 3)``, or a count with the first labels."""
    if len(labels) == 1:
        return labels[0]
    shown = "; ".join(labels[:2]) + ("; ..." if len(labels) > 2 else "")
    return f"{len(labels)} tasks ({shown})"


class _Capture(logging.Handler):
    def __init__(self, events: ClusterEvents) -> None:
        super().__init__(logging.DEBUG)
        self.events = events

    def emit(self, record: logging.LogRecord) -> None:
        self.events.log_record(record)


@contextlib.contextmanager
def captured_dask_log(events: ClusterEvents) -> Iterator[None]:
    """Send this process's ``distributed`` (and event-loop) log records to ``events``
    instead of standard error during the block; each logger is put back as it was after.

    Records below WARNING are dropped as they come (they would otherwise cost a call each).
    """
    capture = _Capture(events)
    saved = []
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.handlers[:], logger.propagate, logger.level))
        logger.handlers[:] = [capture]
        logger.propagate = False
        # A level of its own only where none was set: a caller's stricter one stays.
        if logger.level == logging.NOTSET or logger.level < logging.WARNING:
            logger.setLevel(logging.WARNING)
    try:
        yield
    except KeyboardInterrupt:
        # Left captured: kbench exits at once, and the threads of the cluster it is leaving
        # behind may still log about the workers it killed.
        raise
    except BaseException:
        _restore(saved)
        raise
    _restore(saved)


def _restore(saved: list[tuple[logging.Logger, list[logging.Handler], bool, int]]) -> None:
    for logger, handlers, propagate, level in saved:
        logger.handlers[:] = handlers
        logger.propagate = propagate
        logger.setLevel(level)
