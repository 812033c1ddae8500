"""The conformance checks as named values, and the parameters the checks construct with.

A check is a function ``(cls, registry) -> None`` that raises AssertionError naming the
component and the rule. :func:`conformance_check` registers one under its function's
name for the kinds it covers; :data:`CHECKS` keeps them in registration order, which is
the order :func:`~kbench.testing.check_component` runs them and the order of the cases of
:func:`~kbench.testing.parametrize_with_checks`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from kbench.core.components import KINDS, Component

ALL_KINDS = ("algorithm", "kernel", "loss", "dataset")

CheckFunction = Callable[[Any, Any], None]


def _always(cls: type[Component]) -> bool:
    return True


@dataclass(frozen=True)
class Check:
    """One conformance rule: its name, the kinds it covers and to which classes it applies.

    Parameters
    ----------
    name
        The check's function name (``check_…``): the last part of a case's pytest id and
        the key of :attr:`~kbench.api.Component.checks_not_applicable`.
    kinds
        Component kinds the check covers.
    run
        ``run(cls, registry)``: raises AssertionError when the rule is broken.
    applies
        ``applies(cls)``: False where the rule has nothing to check (an offline algorithm
        has no online protocol; a class with no declared range has no range to refuse).
    """

    name: str
    kinds: tuple[str, ...]
    run: CheckFunction
    applies: Callable[[type[Component]], bool] = _always

    @property
    def summary(self) -> str:
        """The first line of the check's docstring."""
        return (self.run.__doc__ or "").strip().splitlines()[0]


#: Every check, by kind, in the order they were registered.
CHECKS: dict[str, list[Check]] = {kind: [] for kind in ALL_KINDS}


def conformance_check(
    *kinds: str, applies: Callable[[type[Component]], bool] = _always
) -> Callable[[CheckFunction], CheckFunction]:
    """Register the decorated function as a check of ``kinds`` (all kinds when none)."""

    def deco(fn: CheckFunction) -> CheckFunction:
        check = Check(fn.__name__, kinds or ALL_KINDS, fn, applies)
        for kind in check.kinds:
            CHECKS[kind].append(check)
        return fn

    return deco


def kind_of(cls: Any) -> str:
    """The kind of a component class, by its base (not its ``kind`` attribute, which a data
    set's parameter named ``kind`` shadows); empty for anything else."""
    for kind, base in KINDS.items():
        if isinstance(cls, type) and issubclass(cls, base):
            return kind
    return ""


def checks_for(cls: type[Component]) -> list[Check]:
    """The checks that apply to a component class, in the order they run: those of every
    kind first (the cheap ones: docstring, annotations, ranges), then the kind's own."""
    mine = [c for c in CHECKS[kind_of(cls)] if c.applies(cls)]
    return sorted(mine, key=lambda c: len(c.kinds) < len(ALL_KINDS))


def not_applicable(cls: type[Component]) -> dict[str, str]:
    """The class's ``checks_not_applicable``, validated against the checks of its kind.

    Raises
    ------
    ValueError
        In one line, when an entry names no check of the kind or gives no one-line reason.
    """
    declared = dict(getattr(cls, "checks_not_applicable", {}) or {})
    names = [c.name for c in CHECKS[kind_of(cls)]]
    who = f"{kind_of(cls)} {getattr(cls, 'name', cls.__name__)!r}"
    for check, why in declared.items():
        if check not in names:
            raise ValueError(
                f"{who}: checks_not_applicable names {check!r}, which is not a check of a "
                f"{kind_of(cls)} (its checks: {', '.join(names)})"
            )
        if not isinstance(why, str) or not why.strip() or "\n" in why:
            raise ValueError(
                f"{who}: checks_not_applicable[{check!r}] needs the reason, in one line"
            )
    return declared


#: Parameters (and, for algorithms, a kernel) of the instance being checked, by class.
CONFIGURED: ContextVar[dict[type, dict[str, Any]] | None] = ContextVar(
    "kbench_checked", default=None
)


def params_of(cls: type[Component]) -> dict[str, Any]:
    """The parameters checks construct ``cls`` with: an instance's, else its test_params."""
    config = (CONFIGURED.get() or {}).get(cls)
    return dict(config["params"]) if config else dict(cls.test_params)


def make(cls: type[Component], **context: Any) -> Any:
    """``cls`` constructed with :func:`params_of` and the given context arguments."""
    return cls(**params_of(cls), **context)
