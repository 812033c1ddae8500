"""Discovers plugins and holds the components they register.

Built-in plugins are the modules under ``kbench.plugins.{algorithms,kernels,losses,datasets}``;
third-party plugins come from the ``kbench`` entry-point group. Both register through the
hooks in :mod:`kbench.hookspecs`. ``KBENCH_DISABLE_PLUGINS=a,b`` blocks plugins by name.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import pkgutil
import re
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import pluggy

from kbench import hookspecs
from kbench.components import KINDS, Component, format_value
from kbench.errors import RegistryError, SpecError
from kbench.specs import coerce, parse_spec, suggest

BUILTIN_PACKAGES = ("algorithms", "kernels", "losses", "datasets")
HOOKS = {
    "algorithm": "kbench_register_algorithms",
    "kernel": "kbench_register_kernels",
    "loss": "kbench_register_losses",
    "dataset": "kbench_register_datasets",
}
PLURAL = {"algorithm": "algorithms", "kernel": "kernels", "loss": "losses", "dataset": "datasets"}
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.\-]*$")


@dataclass
class PluginInfo:
    """A plugin and what became of it."""

    name: str
    source: str  # "builtin" or "entry-point"
    version: str
    components: dict[str, list[str]] = field(default_factory=dict)
    error: str | None = None
    disabled: bool = False


@dataclass(frozen=True)
class Entry:
    """A registered component class and the plugin it came from."""

    cls: type[Component]
    plugin: str
    version: str


class Registry:
    """The components of every loaded plugin, by kind and name."""

    def __init__(self, *, entry_points: bool = True, builtins: bool = True,
                 disabled: Iterable[str] | None = None,
                 extra_plugins: Iterable[tuple[str, ModuleType | object]] = ()) -> None:
        if disabled is None:
            disabled = [p.strip() for p in os.environ.get("KBENCH_DISABLE_PLUGINS", "").split(",")]
        self.disabled = {d for d in disabled if d}
        self.pm = pluggy.PluginManager("kbench")
        self.pm.add_hookspecs(hookspecs)
        self.plugins: dict[str, PluginInfo] = {}
        self.components: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
        from kbench import __version__

        if builtins:
            for sub in BUILTIN_PACKAGES:
                package = importlib.import_module(f"kbench.plugins.{sub}")
                for mod in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
                    if mod.name.startswith("_"):
                        continue
                    name = f"kbench.{sub}.{mod.name}"
                    self._add(name, "builtin", __version__,
                              lambda m=f"kbench.plugins.{sub}.{mod.name}": importlib.import_module(m))
        if entry_points:
            for ep in sorted(importlib.metadata.entry_points(group="kbench"), key=lambda e: e.name):
                version = ep.dist.version if ep.dist is not None else "unknown"
                self._add(ep.name, "entry-point", version, ep.load)
        for name, obj in extra_plugins:
            self._add(name, "extra", "unknown", lambda o=obj: o)
        self._collect()

    # -- loading ------------------------------------------------------------------------------

    def _add(self, name: str, source: str, version: str, load: Callable[[], Any]) -> None:
        info = PluginInfo(name=name, source=source, version=version)
        self.plugins[name] = info
        if name in self.disabled:
            info.disabled = True
            self.pm.set_blocked(name)
            return
        try:
            plugin = load()
            self.pm.register(plugin, name=name)
        except Exception as exc:  # a broken plugin must not take the others down
            info.error = f"failed to load: {_one_line(exc)}"

    def _collect(self) -> None:
        for kind, hook in HOOKS.items():
            for impl in getattr(self.pm.hook, hook).get_hookimpls():
                info = self.plugins[impl.plugin_name]
                if info.error:
                    continue
                staged: list[type[Component]] = []
                try:
                    impl.function(register=staged.append)
                    entries = [self._validate(kind, cls, info) for cls in staged]
                except Exception as exc:  # a broken plugin must not take the others down
                    info.error = _one_line(exc)
                    continue
                for entry in entries:
                    self.components[kind][entry.cls.name] = entry
                    info.components.setdefault(PLURAL[kind], []).append(entry.cls.name)

    def _validate(self, kind: str, cls: Any, info: PluginInfo) -> Entry:
        base = KINDS[kind]
        where = f"plugin {info.name!r}"
        if not (isinstance(cls, type) and issubclass(cls, base)):
            raise RegistryError(f"{where} registered {cls!r} as a {kind}, but it is not a subclass of kbench.{base.__name__}")
        name = cls.__dict__.get("name", "")
        if not isinstance(name, str) or not _NAME.match(name):
            raise RegistryError(f"{where}: {cls.__qualname__} needs a class attribute name of lowercase letters, digits, '_', '.', '-' (got {name!r})")
        if not (cls.__doc__ or "").strip():
            raise RegistryError(f"{where}: {kind} {name!r} has no docstring")
        try:
            cls.parameters()
        except TypeError as exc:
            raise RegistryError(f"{where}: {kind} {name!r}: {exc}") from None
        if kind == "algorithm":
            bad = set(cls.tasks) - {"binary", "multiclass", "regression", "novelty"}
            if bad:
                raise RegistryError(f"{where}: algorithm {name!r} declares unknown tasks {sorted(bad)}")
        existing = self.components[kind].get(name)
        if existing is not None:
            raise RegistryError(f"{where} registered {kind} {name!r}, which plugin {existing.plugin!r} already registered")
        return Entry(cls=cls, plugin=info.name, version=info.version)

    # -- queries ------------------------------------------------------------------------------

    def names(self, kind: str) -> list[str]:
        """Sorted names of the registered components of one kind."""
        return sorted(self.components[kind])

    def entry(self, kind: str, name: str) -> Entry:
        """The registry entry of a component, or a SpecError listing the valid names."""
        try:
            return self.components[kind][name]
        except KeyError:
            valid = self.names(kind)
            raise SpecError(
                f"unknown {kind} {name!r}{suggest(name, valid)}; available: {', '.join(valid)}"
            ) from None

    def resolve(self, kind: str, spec: str | Component) -> tuple[type[Component], dict[str, Any]]:
        """Parse a spec string into its class and coerced parameters (without constructing)."""
        if isinstance(spec, Component):
            return type(spec), spec.get_params()
        name, raw = parse_spec(spec)
        cls = self.entry(kind, name).cls
        declared = cls.parameters()
        params = {}
        for key, value in raw.items():
            if key not in declared:
                valid = ", ".join(declared) or "none"
                raise SpecError(f"{kind} {name!r} has no parameter {key!r}{suggest(key, declared)}; parameters: {valid}")
            params[key] = coerce(value, declared[key].annotation, f"{kind} {name!r} parameter {key!r}")
        return cls, params

    def create(self, kind: str, spec: str | Component, **context: Any) -> Any:
        """Construct a component from a spec; out-of-range values raise SpecError."""
        cls, params = self.resolve(kind, spec)
        try:
            return cls(**params, **context)
        except (ValueError, TypeError) as exc:
            raise SpecError(_one_line(exc)) from None

    def canonical(self, kind: str, spec: str | Component) -> str:
        """The canonical spec of a spec string: every parameter, defaults filled in, sorted."""
        cls, params = self.resolve(kind, spec)
        full = {name: p.default for name, p in cls.parameters().items()} | params
        items = ",".join(f"{k}={format_value(v)}" for k, v in sorted(full.items()))
        return f"{cls.name}[{items}]" if items else cls.name

    def short(self, kind: str, spec: str | None) -> str:
        """A spec with only its non-default parameters, for display (unchanged if unknown)."""
        if not spec:
            return "-"
        try:
            cls, params = self.resolve(kind, spec)
        except SpecError:
            return spec
        declared = cls.parameters()
        items = [f"{k}={format_value(v)}" for k, v in params.items() if v != declared[k].default]
        return f"{cls.name}[{','.join(items)}]" if items else cls.name

    def failures(self) -> list[PluginInfo]:
        """Plugins that failed to load or register."""
        return [p for p in self.plugins.values() if p.error]


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}" if not isinstance(exc, (SpecError, RegistryError)) else str(exc)
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


def format_exception_line(exc: BaseException) -> str:
    """The last line of a traceback: ``Type: message``."""
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


_registry: Registry | None = None


def get_registry() -> Registry:
    """The process-wide registry, loaded on first use."""
    global _registry
    if _registry is None:
        _registry = Registry()
    return _registry


def reset_registry() -> None:
    """Forget the process-wide registry (after installing or disabling plugins)."""
    global _registry
    _registry = None
