"""Discovers plugins and holds the components they register.

Built-in plugins are the modules under
``kbench.plugins.{algorithms,kernels,losses,datasets,executors}``;
third-party plugins come from the ``kbench`` entry-point group. Both register through the
hooks in :mod:`kbench.core.hookspecs`.

Three environment variables control loading (``docs/packaging.md`` documents them):

``KBENCH_DISABLE_PLUGINS=a,b``
    Block these plugins, built-in or third-party, by plugin or distribution name.
``KBENCH_LOAD_PLUGINS=a,b``
    Load only these third-party plugins (by plugin or distribution name); built-ins
    always load unless disabled. Set but empty, it loads no third-party plugin: kbench's
    own test suite runs that way, so whatever happens to be installed cannot change it.
``KBENCH_TRACE_PLUGINS=1``
    Log every hook call, with the plugin called and what it registered, to stderr.

Every error about a plugin names it, and names its distribution when the two differ.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import os
import pkgutil
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

import pluggy

from kbench.core import hookspecs
from kbench.core.components import KINDS, Component, format_value
from kbench.core.errors import RegistryError, SpecError, interrupted, one_line
from kbench.core.executors import Executor
from kbench.core.plugin_checks import validate_component, validate_executor
from kbench.core.plugin_records import Entry, ExecutorEntry, PluginInfo, normalise_name
from kbench.core.plugin_trace import trace_after, trace_before
from kbench.core.specs import coerce, parse_spec, suggest

BUILTIN_PACKAGES = ("algorithms", "kernels", "losses", "datasets", "executors")
#: The hook of each kind of component.
HOOKS = {
    "algorithm": "kbench_register_algorithms",
    "kernel": "kbench_register_kernels",
    "loss": "kbench_register_losses",
    "dataset": "kbench_register_datasets",
}
#: Executors are registered like components, but are no component: they have no spec
#: and no parameters, and are kept apart (:meth:`Registry.executor`).
EXECUTOR = "executor"
EXECUTOR_HOOK = "kbench_register_executors"
PLURAL = {
    "algorithm": "algorithms",
    "kernel": "kernels",
    "loss": "losses",
    "dataset": "datasets",
    EXECUTOR: "executors",
}
#: Environment variables of the load controls.
ENV_DISABLE, ENV_LOAD, ENV_TRACE = (
    "KBENCH_DISABLE_PLUGINS",
    "KBENCH_LOAD_PLUGINS",
    "KBENCH_TRACE_PLUGINS",
)


class Registry:
    """The components of every plugin, by kind and name.

    Plugins are found when the registry is made (the built-in modules, the metadata of the
    ``kbench`` entry points) but imported only when they are needed, so that a command pays
    only for the components it uses: looking up a built-in component imports the one module
    that :data:`kbench.core._plugin_index.BUILTIN_INDEX` names for it; whatever needs every plugin
    (:meth:`names`, :attr:`plugins`, :meth:`failures`, a name no built-in module has) loads
    them all, built-ins first and then the third-party ones, in the order they were found.
    A plugin registers through its hooks when it is loaded, and all or nothing: if any of
    its hooks raises or registers anything invalid, it contributes no component and is
    listed as broken, with the reason in :attr:`PluginInfo.error`.
    """

    def __init__(
        self,
        *,
        entry_points: bool = True,
        builtins: bool = True,
        disabled: Iterable[str] | None = None,
        extra_plugins: Iterable[tuple[str, ModuleType | object]] = (),
        load: Iterable[str] | None = None,
        trace: bool | None = None,
    ) -> None:
        if disabled is None:
            disabled = _env_names(ENV_DISABLE) or ()
        self.disabled = {d for d in disabled if d}
        # None: every installed third-party plugin; a set: only these (empty: none).
        self.load = _env_names(ENV_LOAD) if load is None else {n for n in load if n}
        self.pm = pluggy.PluginManager("kbench")
        self.pm.add_hookspecs(hookspecs)
        if trace is None:
            trace = os.environ.get(ENV_TRACE, "") not in ("", "0")
        if trace:
            self.pm.add_hookcall_monitoring(trace_before, trace_after)
        self._plugins: dict[str, PluginInfo] = {}
        self._components: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
        self._executors: dict[str, ExecutorEntry] = {}
        # Plugins found but not imported yet, by name, in load order (built-ins first).
        self._pending: dict[str, Callable[[], Any]] = {}
        # kind -> component name -> the not yet loaded built-in plugin that registers it.
        self._index: dict[str, dict[str, str]] = {kind: {} for kind in (*KINDS, EXECUTOR)}
        # The not yet loaded built-in plugins that register executors alone: whatever needs
        # every component need not import them (an executor module imports the execution
        # layer, pandas included, which `kbench list` has no use for).
        self._executors_only: set[str] = set()
        self._watchers: list[Callable[[PluginInfo], None]] = []
        from kbench._version import __version__

        if builtins:
            from kbench.core._plugin_index import BUILTIN_INDEX

            unindexed = []
            for sub in BUILTIN_PACKAGES:
                for module in _builtin_modules(sub):
                    name = f"kbench.{sub}.{module}"
                    self._add(
                        name,
                        "builtin",
                        __version__,
                        functools.partial(_import_builtin, f"kbench.plugins.{sub}.{module}"),
                    )
                    if name not in self._pending:
                        continue  # disabled
                    if name not in BUILTIN_INDEX:
                        unindexed.append(name)
                    for kind, names in BUILTIN_INDEX.get(name, {}).items():
                        for component in names:
                            self._index[kind].setdefault(component, name)
                    if set(BUILTIN_INDEX.get(name, {})) == {EXECUTOR}:
                        self._executors_only.add(name)
            # A module the index does not know yet: only loading it tells what it registers.
            for name in unindexed:
                self._load(name)
        if entry_points:
            wanted = None if self.load is None else {normalise_name(n) for n in self.load}
            for ep in sorted(importlib.metadata.entry_points(group="kbench"), key=lambda e: e.name):
                version = ep.dist.version if ep.dist is not None else "unknown"
                dist = ep.dist.name if ep.dist is not None else None
                selected = wanted is None or bool(
                    {normalise_name(ep.name), normalise_name(dist or ep.name)} & wanted
                )
                self._add(
                    ep.name, "entry-point", version, ep.load, distribution=dist, selected=selected
                )
            self._report_missing()
        for name, obj in extra_plugins:
            self._add(name, "extra", "unknown", functools.partial(_given, obj))
        if trace:
            self._load_all()  # the log is meant to show every plugin's hook calls

    # -- loading ------------------------------------------------------------------------------

    def _add(
        self,
        name: str,
        source: str,
        version: str,
        load: Callable[[], Any],
        *,
        distribution: str | None = None,
        selected: bool = True,
    ) -> None:
        info = PluginInfo(name=name, source=source, version=version, distribution=distribution)
        self._plugins[name] = info
        blocked = {normalise_name(d) for d in self.disabled}
        if not selected or name in self.disabled or normalise_name(distribution or name) in blocked:
            # Never imported: a blocked plugin cannot break start-up or slow it down.
            info.disabled = True
            self.pm.set_blocked(name)
            return
        self._pending[name] = load

    def _load_all(self, *, executors: bool = True) -> None:
        """Load every plugin not loaded yet, in the order they were found; with
        ``executors=False``, the built-in ones that register executors alone are left."""
        for name in list(self._pending):
            if executors or name not in self._executors_only:
                self._load(name)

    def _load(self, name: str) -> None:
        """Import one plugin and register its components, all or nothing."""
        load = self._pending.pop(name, None)
        if load is None:
            return
        info = self._plugins[name]
        info.loaded = True
        try:
            plugin = load()
            self.pm.register(plugin, name=name)
        except Exception as exc:  # a broken plugin must not take the others down
            if interrupted(exc):  # Ctrl-C during the plugin's import, not a broken plugin
                raise
            if isinstance(exc, pluggy.PluginValidationError):
                self._fail(info, f"{info.label}: {_validation_message(exc)}")
            else:
                self._fail(info, f"failed to load{info.distribution_note}: {one_line(exc)}")
            return
        try:
            # Every plugin before this one passed, so a failure here is this plugin's.
            self.pm.check_pending()
        except pluggy.PluginValidationError:
            callers = self.pm.get_hookcallers(plugin) or []
            unknown = sorted(h.name for h in callers if not h.has_spec())
            hooks = sorted([*HOOKS.values(), EXECUTOR_HOOK])
            self._fail(
                info,
                "; ".join(
                    f"{info.label} implements {hook!r}, which is not a kbench hook"
                    f"{suggest(hook, hooks)}"
                    for hook in unknown
                )
                + f" (kbench hooks: {', '.join(hooks)})",
            )
            return
        others = [p for _, p in self.pm.list_name_plugin() if p is not plugin]
        staged: list[tuple[str, Entry | ExecutorEntry]] = []
        for kind, hook in [*HOOKS.items(), (EXECUTOR, EXECUTOR_HOOK)]:
            if not any(
                impl.plugin is plugin for impl in getattr(self.pm.hook, hook).get_hookimpls()
            ):
                continue
            register = _Registration(kind, name)
            try:
                # Through pluggy (so that tracing sees the call), this plugin's hook alone.
                self.pm.subset_hook_caller(hook, others)(register=register)
            except Exception as exc:
                if interrupted(exc):
                    raise
                self._fail(info, f"{info.label}: {hook} raised {one_line(exc)}")
                return
            seen: set[str] = set()
            try:
                for cls in register.classes:
                    entry: Entry | ExecutorEntry = (
                        validate_executor(cls, info, self._executors)
                        if kind == EXECUTOR
                        else validate_component(kind, cls, info, self._components[kind])
                    )
                    if entry.cls.name in seen:
                        raise RegistryError(
                            f"{info.label} registered {kind} {entry.cls.name!r} twice"
                        )
                    seen.add(entry.cls.name)
                    staged.append((kind, entry))
            except Exception as exc:
                self._fail(info, one_line(exc))
                return
        # Every hook ran and every registration is valid: only now does anything count.
        for kind, entry in staged:
            if isinstance(entry, ExecutorEntry):
                self._executors[entry.cls.name] = entry
            else:
                self._components[kind][entry.cls.name] = entry
            info.components.setdefault(PLURAL[kind], []).append(entry.cls.name)

    def _fail(self, info: PluginInfo, error: str) -> None:
        """Record a broken plugin: it keeps no component and no hook of it is called again."""
        info.error = error
        info.components = {}
        if self.pm.get_plugin(info.name) is not None:
            self.pm.unregister(name=info.name)  # pluggy keeps what it registered before failing
        for watch in self._watchers:
            watch(info)

    def watch_failures(self, callback: Callable[[PluginInfo], None]) -> None:
        """Call ``callback(info)`` for each plugin that failed so far and each that fails
        later, once (plugins load when first needed, so a failure may come late)."""
        if callback in self._watchers:
            return
        self._watchers.append(callback)
        for info in list(self._plugins.values()):
            if info.error:
                callback(info)

    def _report_missing(self) -> None:
        """Record each name in KBENCH_LOAD_PLUGINS that no installed plugin answers to."""
        installed = [i for i in self._plugins.values() if i.source == "entry-point"]
        known = {normalise_name(n) for i in installed for n in (i.name, i.distribution or i.name)}
        for name in sorted(self.load or ()):
            if normalise_name(name) not in known:
                hint = suggest(name, [i.name for i in installed])
                self._plugins[name] = PluginInfo(
                    name=name,
                    source="entry-point",
                    version="unknown",
                    error=f"{ENV_LOAD} names it, but no installed distribution declares "
                    f"a kbench plugin of that name{hint}",
                )

    @property
    def plugins(self) -> dict[str, PluginInfo]:
        """Every plugin found, by name, and what became of it (loads them all)."""
        self._load_all()
        return self._plugins

    def loaded_plugin(self, plugin: str) -> PluginInfo:
        """The record of a plugin, named by entry point or distribution, that loaded.

        A plugin that is not installed, is excluded by ``KBENCH_LOAD_PLUGINS`` or
        ``KBENCH_DISABLE_PLUGINS``, or failed to load raises RegistryError saying which:
        a caller that selects one plugin's components gets an error, never none of them.
        """
        wanted = normalise_name(plugin)
        for info in self.plugins.values():
            if plugin == info.name or wanted == normalise_name(info.distribution or info.name):
                if info.error:
                    raise RegistryError(f"{info.label} is installed but broken: {info.error}")
                if info.disabled:
                    raise RegistryError(
                        f"{info.label} is installed but was not loaded: {ENV_LOAD} or "
                        f"{ENV_DISABLE} excludes it"
                    )
                return info
        installed = sorted(i.name for i in self.plugins.values() if i.source != "builtin")
        raise RegistryError(
            f"plugin {plugin!r} is not installed (third-party plugins found: "
            f"{', '.join(installed) or 'none'}); install it first, e.g. with "
            "`pip install -e .` in its folder"
        )

    @property
    def components(self) -> dict[str, dict[str, Entry]]:
        """Every registered component, by kind and name (loads every plugin, except the
        built-in executors')."""
        self._load_all(executors=False)
        return self._components

    @components.setter
    def components(self, value: dict[str, dict[str, Entry]]) -> None:
        self._components = value

    def _lookup(self, kind: str, name: str) -> Entry | None:
        """The entry of a component, loading its built-in module, or else every plugin."""
        found = self._components[kind].get(name)
        if found is None and name in self._index[kind]:
            self._load(self._index[kind][name])
            found = self._components[kind].get(name)
        if found is None and self._pending:
            self._load_all(executors=False)
            found = self._components[kind].get(name)
        return found

    # -- queries ------------------------------------------------------------------------------

    def names(self, kind: str) -> list[str]:
        """Sorted names of the registered components of one kind, or of the executors for
        ``kind="executor"`` (loads every plugin)."""
        if kind == EXECUTOR:
            return sorted(self.executors)
        return sorted(self.components[kind])

    @property
    def executors(self) -> dict[str, ExecutorEntry]:
        """Every registered executor, by name (loads every plugin)."""
        self._load_all()
        return self._executors

    def executor(self, name: str) -> type[Executor]:
        """The executor class registered under ``name``.

        Raises
        ------
        SpecError
            No executor has that name: the message lists the registered ones, with the
            closest as a did-you-mean.
        """
        found = self._executors.get(name)
        if found is None and name in self._index[EXECUTOR]:
            self._load(self._index[EXECUTOR][name])
            found = self._executors.get(name)
        if found is None:  # a plugin's, perhaps: load them all
            found = self.executors.get(name)
        if found is None:
            valid = self.names(EXECUTOR)
            raise SpecError(
                f"unknown executor {name!r}{suggest(name, valid)}; registered executors: "
                f"{', '.join(valid) or 'none'}"
            )
        return found.cls

    def has(self, kind: str, name: str) -> bool:
        """Whether a component of this kind and name is registered (a built-in one is found
        without loading every plugin)."""
        return self._lookup(kind, name) is not None

    def entry(self, kind: str, name: str) -> Entry:
        """The registry entry of a component, or a SpecError listing the valid names."""
        found = self._lookup(kind, name)
        if found is not None:
            return found
        valid = self.names(kind)
        raise SpecError(
            f"unknown {kind} {name!r}{suggest(name, valid)}; available: {', '.join(valid)}"
        )

    def resolve(self, kind: str, spec: str | Component) -> tuple[type[Any], dict[str, Any]]:
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
                raise SpecError(
                    f"{kind} {name!r} has no parameter {key!r}{suggest(key, declared)}; parameters: {valid}"
                )
            params[key] = coerce(
                value, declared[key].annotation, f"{kind} {name!r} parameter {key!r}"
            )
        return cls, params

    def create(self, kind: str, spec: str | Component, **context: Any) -> Any:
        """Construct a component from a spec; out-of-range values raise SpecError."""
        cls, params = self.resolve(kind, spec)
        try:
            return cls(**params, **context)
        except (ValueError, TypeError) as exc:
            # A constructor's ValueError is a range check meant for the user: its text alone.
            text = (
                str(exc).strip().splitlines()[0]
                if isinstance(exc, ValueError) and str(exc).strip()
                else one_line(exc)
            )
            raise SpecError(text) from None

    def canonical(self, kind: str, spec: str | Component) -> str:
        """The canonical spec of a spec string: every parameter, defaults filled in, sorted."""
        cls, params = self.resolve(kind, spec)
        full = {name: p.default for name, p in cls.parameters().items()} | params
        # A parameter added to a component after results were stored is left out at its
        # default, so that the specs (and task ids) of existing studies stay as they were.
        for name in getattr(cls, "added_params", ()):
            if name in full and full[name] == cls.parameters()[name].default:
                del full[name]
        for name, inner in getattr(cls, "spec_params", {}).items():
            if isinstance(full.get(name), str):
                full[name] = self.canonical(inner, full[name])
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
        params = dict(params)
        for name, inner in getattr(cls, "spec_params", {}).items():
            if isinstance(params.get(name), str):
                params[name] = self.short(inner, params[name])
        items = [
            f"{k}={format_value(v)}"
            for k, v in params.items()
            if v != declared[k].default
            and not (
                k in getattr(cls, "spec_params", {})
                and v == self.short(cls.spec_params[k], declared[k].default)
            )
        ]
        return f"{cls.name}[{','.join(items)}]" if items else cls.name

    def failures(self) -> list[PluginInfo]:
        """Plugins that failed to load or register (loads every plugin)."""
        return [p for p in self.plugins.values() if p.error]


class _Registration:
    """The ``register`` callback handed to one plugin's hook: it collects the classes."""

    def __init__(self, kind: str, plugin: str) -> None:
        self.kind = kind
        self.plugin = plugin
        self.classes: list[Any] = []

    def __call__(self, cls: Any) -> None:
        self.classes.append(cls)

    def __repr__(self) -> str:
        return f"<register {self.kind}s of plugin {self.plugin!r}>"


def builtin_index() -> dict[str, dict[str, tuple[str, ...]]]:
    """What each built-in plugin module registers, by kind: the content of
    :data:`kbench.core._plugin_index.BUILTIN_INDEX`, found by loading every built-in module."""
    registry = Registry(entry_points=False, disabled=(), trace=False)
    singular = {plural: kind for kind, plural in PLURAL.items()}
    index = {}
    for name, info in registry.plugins.items():
        if info.error:
            raise RegistryError(f"built-in {info.label} is broken: {info.error}")
        index[name] = {
            singular[plural]: tuple(sorted(names))
            for plural, names in sorted(info.components.items())
        }
    return index


def _given(plugin: object) -> object:
    """A plugin object given to the registry as it is (``extra_plugins``)."""
    return plugin


def _import_builtin(module: str) -> ModuleType:
    """Import a built-in plugin module; if that fails, say first whether the compiled core
    is missing or stale (with how to build it), since that is the usual cause."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if interrupted(exc):
            raise
        from kbench.core.compiled_core import check_build

        check_build(load=True)
        raise


def _builtin_modules(sub: str) -> list[str]:
    """The plugin modules of one built-in package, sorted (``_private`` ones excluded)."""
    package = importlib.import_module(f"kbench.plugins.{sub}")
    return sorted(
        m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_")
    )


def _env_names(var: str) -> set[str] | None:
    """The comma-separated names in an environment variable; None when it is not set."""
    value = os.environ.get(var)
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


def _validation_message(exc: pluggy.PluginValidationError) -> str:
    """pluggy's multi-line explanation of a bad hook implementation, on one line."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return "; ".join(lines) or type(exc).__name__


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
