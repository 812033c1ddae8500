"""Run a function in a forked child process, with a hard timeout and a memory limit.

A task runs in a child of its own so that whatever its learner does (raise, hang inside
compiled code, exhaust memory, crash the interpreter) stops at that child. The result
comes back pickled through a pipe; the parent decides what a silent death means.
``os.fork`` is used directly rather than ``multiprocessing`` because Dask worker
processes are daemonic and ``multiprocessing`` refuses to start children from those.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import resource
import select
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

_PR_SET_PDEATHSIG = 1


class ChildDied(Exception):
    """The child exited without a result (killed, crashed, or out of memory)."""


def parse_memory(text: str | int | None) -> int | None:
    """Bytes from ``2G``, ``512M``, ``100K`` or a plain number; None stays None."""
    if text is None or isinstance(text, int):
        return text
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    try:
        value = float(t[:-1]) * units[t[-1]] if t and t[-1] in units else float(t)
    except ValueError:
        raise ValueError(
            f"--max-memory {text!r}: expected a size such as 2G, 500M or 1000000"
        ) from None
    if value <= 0:
        raise ValueError(f"--max-memory {text!r}: must be positive")
    return int(value)


def _vm_size() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _in_child(max_memory: int | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    # Die with the parent, so a killed driver leaves no orphan learners running (Linux only).
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if max_memory is not None:
        # The address space already mapped (interpreter, libraries, the stream) is not the
        # learner's: the limit is what the task may add on top of it.
        limit = _vm_size() + max_memory
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


class Child:
    """``fn(*args)`` running in a forked child; poll :meth:`pump` and then :meth:`result`."""

    def __init__(self, fn: Callable[..., Any], *args: Any, max_memory: int | None = None) -> None:
        read, write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child, which never returns
            code = 0
            try:
                os.close(read)
                _in_child(max_memory)
                payload = pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write, "wb") as fh:
                    fh.write(payload)
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        os.close(write)
        self.pid = pid
        self.fd = read
        self.started = time.monotonic()
        self._chunks: list[bytes] = []
        self.done = False

    def fileno(self) -> int:
        """The read end of the pipe, for select."""
        return self.fd

    def pump(self) -> bool:
        """Read what the pipe holds; True once the child has closed it."""
        data = os.read(self.fd, 1 << 20)
        if data:
            self._chunks.append(data)
            return False
        self.done = True
        return True

    def result(self) -> Any:
        """Reap the child; its return value, or ChildDied saying how it ended."""
        os.close(self.fd)
        _, status = os.waitpid(self.pid, 0)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            raise ChildDied(f"worker process died (signal {sig}, {signal.Signals(sig).name})")
        code = os.WEXITSTATUS(status)
        if code != 0 or not self._chunks:
            raise ChildDied(f"worker process died (exit code {code})")
        return pickle.loads(b"".join(self._chunks))

    def kill(self) -> None:
        """Kill and reap the child."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.close(self.fd)
        os.waitpid(self.pid, 0)


def run_isolated(
    fn: Callable[..., Any], *args: Any, timeout: float | None = None, max_memory: int | None = None
) -> Any:
    """Run ``fn(*args)`` in a child and wait; TimeoutError after ``timeout`` seconds."""
    child = Child(fn, *args, max_memory=max_memory)
    try:
        while not child.done:
            left = None if timeout is None else timeout - (time.monotonic() - child.started)
            if left is not None and left <= 0:
                raise TimeoutError(f"killed after the {timeout:g} s timeout")
            ready, _, _ = select.select([child], [], [], left)
            if ready:
                child.pump()
    except BaseException:
        child.kill()
        raise
    return child.result()
