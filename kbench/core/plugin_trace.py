"""``KBENCH_TRACE_PLUGINS=1``: every hook call, with the plugin called and what it
registered, logged to stderr (pluggy's hook-call monitoring calls these)."""

from __future__ import annotations

import sys
from typing import Any

from kbench.core.errors import one_line


def trace_before(hook_name: str, hook_impls: Any, kwargs: Any) -> None:
    """Log a hook call about to be made, with each plugin it calls."""
    for impl in hook_impls:
        where = getattr(impl.function, "__module__", "?")
        print(
            f"kbench: trace: {hook_name} -> plugin {impl.plugin_name!r} ({where})",
            file=sys.stderr,
            flush=True,
        )


def trace_after(outcome: Any, hook_name: str, hook_impls: Any, kwargs: Any) -> None:
    """Log what a hook call registered, or what it raised."""
    register = kwargs.get("register")
    plugins = ", ".join(repr(impl.plugin_name) for impl in hook_impls)
    if outcome.exception is not None:
        text = f"raised {one_line(outcome.exception)}"
    else:
        names = [getattr(c, "name", repr(c)) for c in getattr(register, "classes", [])]
        text = f"registered {', '.join(map(str, names)) or 'nothing'}"
    print(f"kbench: trace: {hook_name} <- plugin {plugins}: {text}", file=sys.stderr, flush=True)
