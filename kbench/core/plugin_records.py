"""What the registry records: each plugin and what became of it, and each class it registered."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kbench.core.executors import Executor


@dataclass
class PluginInfo:
    """A plugin and what became of it."""

    name: str
    source: str  # "builtin" or "entry-point"
    version: str
    components: dict[str, list[str]] = field(default_factory=dict)
    error: str | None = None
    disabled: bool = False
    #: Name of the distribution that declares the entry point (None for built-ins).
    distribution: str | None = None
    #: Whether the plugin was imported and its hooks called (plugins load when needed).
    loaded: bool = False

    @property
    def status(self) -> str:
        """``ok``, ``disabled``, ``broken`` (the reason in :attr:`error`) or ``not loaded``."""
        if self.disabled:
            return "disabled"
        if self.error:
            return "broken"
        return "ok" if self.loaded else "not loaded"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, with the status."""
        return {**vars(self), "status": self.status}

    @property
    def label(self) -> str:
        """``plugin 'name'``, with its distribution when that has another name."""
        return f"plugin {self.name!r}{self.distribution_note}"

    @property
    def distribution_note(self) -> str:
        """`` (distribution NAME VERSION)`` when it differs from the plugin's name, else ''."""
        dist = self.distribution
        if dist is None or normalise_name(dist) == normalise_name(self.name):
            return ""
        return f" (distribution {dist} {self.version})"


@dataclass(frozen=True)
class Entry:
    """A registered component class and the plugin it came from."""

    #: A subclass of its kind's base (:data:`kbench.core.components.KINDS`), whose own
    #: class attributes (an algorithm's ``supports``, ``uses_loss``...) its users read.
    cls: type[Any]
    plugin: str
    version: str


@dataclass(frozen=True)
class ExecutorEntry:
    """A registered executor class and the plugin it came from."""

    cls: type[Executor]
    plugin: str
    version: str


def normalise_name(name: str) -> str:
    """A distribution or plugin name compared the way packaging does (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()
