"""Peak memory of a learner, measured without slowing it down.

On Linux the kernel keeps the peak resident set size of a process (VmHWM) and lets the
process reset it (writing 5 to /proc/self/clear_refs). kbench resets it before each block
of learner calls and reads it after, so the runner's own work between blocks (held-out
evaluation) is not counted, and no allocation is traced. Elsewhere it falls back to
tracemalloc, which sees only Python-managed memory and slows allocation-heavy code.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

_STATUS = Path("/proc/self/status")
_CLEAR = Path("/proc/self/clear_refs")


def _status_kb(key: str) -> int:
    with open(_STATUS) as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1])
    raise OSError(f"{key} not in {_STATUS}")


def _reset_peak_rss() -> bool:
    try:
        _CLEAR.write_text("5")
        return True
    except OSError:
        return False


class PeakMemory:
    """Track the peak memory growth over a baseline across several measured blocks."""

    def __init__(self) -> None:
        self.mode = "rss" if _STATUS.exists() and _reset_peak_rss() else "tracemalloc"
        self.peak = 0
        if self.mode == "tracemalloc":
            tracemalloc.start()
            self.base = tracemalloc.get_traced_memory()[0]
        else:
            self.base = _status_kb("VmRSS:") * 1024

    def begin(self) -> None:
        """Start a measured block."""
        if self.mode == "rss":
            _reset_peak_rss()
        else:
            tracemalloc.reset_peak()

    def end(self) -> None:
        """End a measured block, folding its peak into ``peak`` (bytes over the baseline)."""
        if self.mode == "rss":
            high = _status_kb("VmHWM:") * 1024
        else:
            high = tracemalloc.get_traced_memory()[1]
        self.peak = max(self.peak, high - self.base)

    def close(self) -> None:
        """Stop tracing (tracemalloc mode)."""
        if self.mode == "tracemalloc" and tracemalloc.is_tracing():
            tracemalloc.stop()
