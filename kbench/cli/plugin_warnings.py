"""The registry as the command line uses it: a plugin that fails to load is a warning."""

from __future__ import annotations

from typing import Any

from kbench.cli.consoles import error_console


def watched_registry() -> Any:
    """The registry, every plugin that fails to load reported as a warning, once."""
    from kbench.core.registry import get_registry

    reg = get_registry()
    # Plugins load when first needed: each failure is reported when it happens, once.
    reg.watch_failures(_warn_broken_plugin)
    return reg


def _warn_broken_plugin(info: Any) -> None:
    """One plugin that failed to load, as a warning on standard error."""
    error_console().print(
        f"[yellow]kbench: warning: plugin {info.name!r} skipped: {info.error}[/yellow]",
        highlight=False,
    )
