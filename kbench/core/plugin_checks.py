"""The checks a class passes before the registry accepts it, as a component or an executor."""

from __future__ import annotations

import re
from typing import Any

from kbench.core.components import KINDS
from kbench.core.errors import RegistryError
from kbench.core.plugin_records import Entry, ExecutorEntry, PluginInfo

#: What an executor class must define besides its name and docstring.
EXECUTOR_METHODS = ("from_settings", "describe", "run")
#: A component's or executor's name.
NAME = re.compile(r"^[a-z0-9][a-z0-9_.\-]*$")


def validate_component(
    kind: str, cls: Any, info: PluginInfo, registered: dict[str, Entry]
) -> Entry:
    """The entry of a component class a plugin registers, or a RegistryError saying what is
    wrong with it: not a subclass of its kind's base, a bad name, no docstring, bad
    parameters or tasks, or a name already taken (``registered``: that kind's so far)."""
    base = KINDS[kind]
    where = info.label
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise RegistryError(
            f"{where} registered {cls!r} as a {kind}, but it is not a subclass of kbench.{base.__name__}"
        )
    name = cls.__dict__.get("name", "")
    if not isinstance(name, str) or not NAME.match(name):
        raise RegistryError(
            f"{where}: {cls.__qualname__} needs a class attribute name of lowercase letters, digits, '_', '.', '-' (got {name!r})"
        )
    if not (cls.__doc__ or "").strip():
        raise RegistryError(f"{where}: {kind} {name!r} has no docstring")
    try:
        cls.parameters()
    except TypeError as exc:
        raise RegistryError(f"{where}: {kind} {name!r}: {exc}") from None
    if kind == "algorithm":
        bad = set(getattr(cls, "tasks", ())) - {"binary", "multiclass", "regression", "novelty"}
        if bad:
            raise RegistryError(f"{where}: algorithm {name!r} declares unknown tasks {sorted(bad)}")
    existing = registered.get(name)
    if existing is not None:
        raise RegistryError(
            f"{where} registered {kind} {name!r}, which plugin {existing.plugin!r} already registered"
        )
    return Entry(cls=cls, plugin=info.name, version=info.version)


def validate_executor(
    cls: Any, info: PluginInfo, registered: dict[str, ExecutorEntry]
) -> ExecutorEntry:
    """The entry of an executor class a plugin registers, checked as
    :func:`validate_component` checks a component's (``registered``: the executors so far)."""
    where = info.label
    name = cls.__dict__.get("name", "") if isinstance(cls, type) else ""
    if not isinstance(cls, type):
        raise RegistryError(f"{where} registered {cls!r} as an executor, but it is not a class")
    if not isinstance(name, str) or not NAME.match(name):
        raise RegistryError(
            f"{where}: executor {cls.__qualname__} needs a class attribute name of "
            f"lowercase letters, digits, '_', '.', '-' (got {name!r})"
        )
    if not (cls.__doc__ or "").strip():
        raise RegistryError(f"{where}: executor {name!r} has no docstring")
    missing = [m for m in EXECUTOR_METHODS if not callable(getattr(cls, m, None))]
    if missing:
        raise RegistryError(
            f"{where}: executor {name!r} does not define {', '.join(missing)} "
            "(see kbench.core.executors.Executor)"
        )
    existing = registered.get(name)
    if existing is not None:
        raise RegistryError(
            f"{where} registered executor {name!r}, which plugin {existing.plugin!r} "
            "already registered"
        )
    return ExecutorEntry(cls=cls, plugin=info.name, version=info.version)
