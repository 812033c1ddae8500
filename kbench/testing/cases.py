"""Running the checks: on one component, or as pytest cases, one per component or one per
(component, check)."""

from __future__ import annotations

import copy
from typing import Any

from kbench.core.components import Algorithm, Component
from kbench.core.errors import RegistryError
from kbench.core.plugin_checks import validate_component
from kbench.core.plugin_records import PluginInfo
from kbench.core.registry import Registry, get_registry
from kbench.testing.checks import (
    ALL_KINDS,
    CONFIGURED,
    Check,
    checks_for,
    kind_of,
    not_applicable,
)


def check_component(
    component: str | type[Component] | Component,
    name: str | None = None,
    registry: Registry | None = None,
    *,
    check: str | None = None,
) -> None:
    """Run the conformance checks of one component, or one of them.

    Parameters
    ----------
    component
        The kind (``"algorithm"``, ``"kernel"``, ``"loss"``, ``"dataset"``) of a
        registered component named by ``name``; or a component class, checked with its
        ``test_params``; or an instance, checked with its parameter values (and, for an
        algorithm, its kernel). A class or instance need not be registered: it is
        validated as the registry would validate it, then checked.
    name
        Registered name, when ``component`` is a kind.
    registry
        Registry that supplies the other components the checks need (kernels and losses
        for algorithms) and, for a kind and name, the component itself.
    check
        Run this check only (its name, as in :func:`check_cases`), even one the component
        declares not applicable. None runs every check that applies, less those the
        component declares not applicable (``checks_not_applicable``).

    Raises
    ------
    AssertionError
        On the first broken rule, naming the component and the rule.
    ValueError
        ``check`` is not a check of the component's kind, or the component's
        ``checks_not_applicable`` names one that is not.
    """
    registry = registry or get_registry()
    if isinstance(component, str):
        if name is None:
            raise TypeError("check_component(kind, name): give the component's registered name")
        _run(registry.entry(component, name).cls, registry, check)
        return
    if name is not None:
        raise TypeError("check_component: give a kind and a name, or a class or instance alone")
    cls = component if isinstance(component, type) else type(component)
    if not kind_of(cls):
        raise TypeError(
            f"check_component: {component!r} is not a kbench Algorithm, Kernel, "
            "Loss or Dataset (class or instance)"
        )
    checked = _registry_with(registry, cls)
    if isinstance(component, type):
        _run(cls, checked, check)
        return
    config: dict[str, Any] = {"params": component.get_params()}
    if isinstance(component, Algorithm) and component.kernel is not None:
        config["kernel"] = component.kernel
    token = CONFIGURED.set({cls: config})
    try:
        _run(cls, checked, check)
    finally:
        CONFIGURED.reset(token)


def _run(cls: type[Component], registry: Registry, only: str | None) -> None:
    skip = not_applicable(cls)
    if only is None:
        for c in checks_for(cls):
            if c.name not in skip:
                c.run(cls, registry)
        return
    _named(cls, only).run(cls, registry)


def _named(cls: type[Component], name: str) -> Check:
    for c in checks_for(cls):
        if c.name == name:
            return c
    names = ", ".join(c.name for c in checks_for(cls))
    raise ValueError(
        f"{name!r} is not a check of {kind_of(cls)} {cls.name!r} (its checks: {names})"
    )


def _registry_with(registry: Registry, cls: type[Component]) -> Registry:
    """A copy of the registry in which ``cls`` is registered under its name, after validation."""
    kind = kind_of(cls)
    entry = registry.components[kind].get(getattr(cls, "name", ""))
    if entry is not None and entry.cls is cls:
        return registry
    checked = copy.copy(registry)
    checked.components = {k: dict(v) for k, v in registry.components.items()}
    checked.components[kind].pop(getattr(cls, "name", ""), None)
    owner = PluginInfo(name=cls.__module__.split(".")[0], source="extra", version="unknown")
    try:
        new = validate_component(kind, cls, owner, checked.components[kind])
    except RegistryError as exc:
        raise AssertionError(str(exc)) from None
    checked.components[kind][cls.name] = new
    return checked


def _components(
    registry: Registry | None, plugin: str | None, kinds: tuple[str, ...]
) -> list[tuple[str, str, type[Component]]]:
    """(kind, name, class) of every registered component, or of one plugin's."""
    registry = registry or get_registry()
    owner = None if plugin is None else registry.loaded_plugin(plugin).name
    found = []
    for kind in kinds:
        for name in registry.names(kind):
            entry = registry.entry(kind, name)
            if owner is None or entry.plugin == owner:
                found.append((kind, name, entry.cls))
    return found


def component_cases(
    registry: Registry | None = None,
    *,
    plugin: str | None = None,
    kinds: tuple[str, ...] = ALL_KINDS,
) -> list[Any]:
    """``pytest.param(kind, name)`` for every registered component, or one plugin's.

    Parameters
    ----------
    registry
        Where to look (default: the process-wide registry, which loads installed plugins).
    plugin
        Only this plugin's components: its entry-point name (what ``kbench plugins``
        shows) or its distribution name. A plugin that is not installed, is excluded by
        ``KBENCH_LOAD_PLUGINS`` or ``KBENCH_DISABLE_PLUGINS``, or failed to load raises
        RegistryError saying which, rather than giving an empty, silently passing test.
    kinds
        Component kinds to include.

    Returns
    -------
    list
        One ``pytest.param(kind, name, id="kind-name")`` per component.
    """
    import pytest

    return [
        pytest.param(kind, name, id=f"{kind}-{name}")
        for kind, name, _ in _components(registry, plugin, kinds)
    ]


def check_cases(
    registry: Registry | None = None,
    *,
    plugin: str | None = None,
    kinds: tuple[str, ...] = ALL_KINDS,
) -> list[Any]:
    """``pytest.param(kind, name, check)`` for every check of every component, or of one
    plugin's; the arguments are those of :func:`component_cases`.

    A check the component declares not applicable (``checks_not_applicable``) is a strict
    expected failure with the declared reason: it runs, must fail, and its case fails when
    the component passes it, so that a stale entry is removed.

    Returns
    -------
    list
        One ``pytest.param(kind, name, check, id="kind-name-check")`` per check that
        applies to each component.

    Raises
    ------
    RegistryError
        As :func:`component_cases`.
    ValueError
        A component's ``checks_not_applicable`` names no check of its kind or gives no
        reason.
    """
    import pytest

    cases = []
    for kind, name, cls in _components(registry, plugin, kinds):
        skip = not_applicable(cls)
        for c in checks_for(cls):
            marks = (
                [pytest.mark.xfail(strict=True, raises=AssertionError, reason=skip[c.name])]
                if c.name in skip
                else []
            )
            cases.append(
                pytest.param(kind, name, c.name, id=f"{kind}-{name}-{c.name}", marks=marks)
            )
    return cases


def parametrize_components(
    plugin: str | None = None,
    *,
    registry: Registry | None = None,
    kinds: tuple[str, ...] = ALL_KINDS,
) -> Any:
    """A ``pytest.mark.parametrize("kind, name", ...)`` over :func:`component_cases`.

    Decorate a test that takes ``kind`` and ``name`` arguments; see :func:`component_cases`
    for the parameters.
    """
    import pytest

    cases = component_cases(registry, plugin=plugin, kinds=kinds)
    return pytest.mark.parametrize(("kind", "name"), cases)


def parametrize_with_checks(
    plugin: str | None = None,
    *,
    registry: Registry | None = None,
    kinds: tuple[str, ...] = ALL_KINDS,
) -> Any:
    """A ``pytest.mark.parametrize("kind, name, check", ...)`` over :func:`check_cases`:
    one test id per (component, check).

    Decorate a test that takes ``kind``, ``name`` and ``check`` and calls
    ``check_component(kind, name, check=check)``; see :func:`component_cases` for the
    parameters.
    """
    import pytest

    cases = check_cases(registry, plugin=plugin, kinds=kinds)
    return pytest.mark.parametrize(("kind", "name", "check"), cases)
