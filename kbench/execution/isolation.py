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
import struct
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from typing import Any

_PR_SET_PDEATHSIG = 1
#: What a child sends first: its resident memory at the start, in bytes.
_HEADER = struct.Struct("<q")
#: Exit status of a child whose task raised MemoryError outside the runner (which records
#: one it sees as a ``memory`` result): how the parent tells it from other failures.
MEMORY_ERROR_EXIT = 113
#: A child that crashed is said to have reached the memory limit when its resident memory
#: grew by at least this share of the limit (the limit bounds address space, of which
#: resident memory is a part: a crash well below it is not the limit's doing).
LIMIT_REACHED_SHARE = 0.8


class ChildDied(Exception):
    """The child exited without a result (killed, crashed, or out of memory).

    Attributes
    ----------
    signal : int or None
        The signal that ended the child, if one did.
    code : int or None
        Its exit status otherwise.
    memory_error : bool
        Whether the child ended on a MemoryError.
    growth : int or None
        Bytes by which its peak resident memory exceeded the parent's at the fork.
    """

    def __init__(
        self,
        message: str,
        *,
        signal: int | None = None,
        code: int | None = None,
        memory_error: bool = False,
        growth: int | None = None,
    ) -> None:
        super().__init__(message)
        self.signal = signal
        self.code = code
        self.memory_error = memory_error
        self.growth = growth

    def reached(self, max_memory: int | None) -> bool:
        """Whether the child ran out of memory under ``max_memory`` (None: no limit set)."""
        if self.memory_error:
            return True
        return (
            max_memory is not None
            and self.growth is not None
            and self.growth >= LIMIT_REACHED_SHARE * max_memory
        )


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


def _status_bytes(key: str) -> int:
    """A size from /proc/self/status (``VmSize:``, ``VmRSS:``), in bytes; 0 if unknown."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _vm_size() -> int:
    return _status_bytes("VmSize:")


def _in_child(max_memory: int | None, parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    # Die with the parent, so a killed driver leaves no orphan learners running (Linux only).
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)
    if max_memory is not None:
        # The address space already mapped (interpreter, libraries, the stream) is not the
        # learner's: the limit is what the task may add on top of it.
        limit = _vm_size() + max_memory
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


#: Children not yet reaped, by pid: whoever is interrupted kills the ones it started, even
#: one whose Child object never reached its caller.
_LIVE: dict[int, Child] = {}


@contextlib.contextmanager
def hold_ctrl_c(*, second_goes_through: bool = False) -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) back during the block, then deliver it.

    ``os.fork`` runs Python callbacks registered with ``os.register_at_fork`` (threading,
    random, logging...); CPython prints and ignores an exception raised in one, so a
    KeyboardInterrupt delivered there would be swallowed and the study would run on. The
    block records the signal instead and raises KeyboardInterrupt once it is over, when
    the new child is registered and will be killed. Only the main thread can set a signal
    handler; elsewhere (a Dask worker's task thread) the block runs as it is.

    ``second_goes_through``: for a block that may take a while (starting a cluster), a
    second Ctrl-C during it is delivered at once.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def held(signum: int, frame: Any) -> None:
        caught.append(signum)
        if second_goes_through and len(caught) > 1:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, held)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        if callable(previous):
            previous(signal.SIGINT, None)
        elif previous == signal.SIG_DFL:
            raise KeyboardInterrupt


def _os_threads() -> int:
    """Threads of this process as the kernel counts them (1 when that cannot be read)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _fork() -> int:
    """``os.fork``, without Python 3.12's warning about forking a multi-threaded process.

    The driver keeps itself single-threaded when it forks (BLAS pools are shut down by
    their own fork handlers, result files are read without Arrow's thread pool), so the
    warning does not arise there. A Dask worker process always has threads (its event loop,
    its executor); the child only runs the task, under a hard timeout, so a lock left held
    by one of those threads can at worst make that task time out.
    """
    if _os_threads() == 1:
        return os.fork()
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=r"This process .* is multi-threaded", category=DeprecationWarning
        )
        return os.fork()


class Child:
    """``fn(*args)`` running in a forked child; poll :meth:`pump` and then :meth:`result`."""

    def __init__(self, fn: Callable[..., Any], *args: Any, max_memory: int | None = None) -> None:
        read, write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        parent = os.getpid()
        with hold_ctrl_c():
            pid = _fork()
            if pid == 0:  # pragma: no cover - runs in the child, which never returns
                _child_main(fn, args, read, write, max_memory, parent)
            os.close(write)
            self.pid = pid
            self.fd = read
            self.started = time.monotonic()
            self.thread = threading.get_ident()
            self._chunks: list[bytes] = []
            self.done = False
            _LIVE[pid] = self

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
        _, status, usage = os.wait4(self.pid, 0)
        _LIVE.pop(self.pid, None)
        data = b"".join(self._chunks)
        # The child first sends its resident memory at the start (it shares the parent's
        # pages, but not all of them count as its own until touched), then the result.
        start = struct.unpack("<q", data[: _HEADER.size])[0] if len(data) >= _HEADER.size else 0
        payload = data[_HEADER.size :]
        growth = max(0, usage.ru_maxrss * 1024 - start) if start else None
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            raise ChildDied(
                f"worker process crashed with {_signal_name(sig)}", signal=sig, growth=growth
            )
        code = os.WEXITSTATUS(status)
        if code == MEMORY_ERROR_EXIT:
            raise ChildDied(
                "worker process ran out of memory (MemoryError)",
                code=code,
                memory_error=True,
                growth=growth,
            )
        if code != 0 or not payload:
            raise ChildDied(f"worker process died (exit code {code})", code=code, growth=growth)
        return pickle.loads(payload)

    def kill(self) -> None:
        """Kill and reap the child."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.close(self.fd)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        _LIVE.pop(self.pid, None)


def kill_children() -> None:
    """Kill every child this thread started and has not reaped (on Ctrl-C, say)."""
    me = threading.get_ident()
    for child in [c for c in _LIVE.values() if c.thread == me]:
        child.kill()


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def _child_main(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    read: int,
    write: int,
    max_memory: int | None,
    parent: int,
) -> None:  # pragma: no cover - runs in the child
    """Run ``fn(*args)`` and send its pickled result to the parent; never returns."""
    code = 0
    try:
        os.close(read)
        _in_child(max_memory, parent)
        with os.fdopen(write, "wb") as fh:
            fh.write(_HEADER.pack(_status_bytes("VmRSS:")))
            fh.flush()  # now: the parent needs it even if the task crashes the process
            fh.write(pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL))
    except MemoryError:
        code = MEMORY_ERROR_EXIT
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


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
