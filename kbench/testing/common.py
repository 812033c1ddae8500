"""Checks every kind of component passes: documented, annotated, declared ranges enforced,
and, for kernels, losses and data sets, parameters stored and the spec as ``repr``.

(An algorithm's spec and parameters are checked per task, with its kernel and loss, by
``check_algorithm_spec``.)
"""

from __future__ import annotations

from typing import Any

from kbench.core.components import Algorithm, Component, Parameter
from kbench.core.registry import Registry
from kbench.testing.checks import CONFIGURED, conformance_check, kind_of, make, params_of
from kbench.testing.toys import make_test_algorithm

#: Names a data set's parameters cannot take: the runner's stream options use them.
STREAM_OPTIONS = ("order", "n", "test_size", "positive", "scale")


def _who(cls: type[Component]) -> str:
    return f"{kind_of(cls)} {cls.name!r}"


@conformance_check()
def check_docstring(cls: type[Component], registry: Registry) -> None:
    """The class has a docstring (``kbench list`` and the docs show its first line)."""
    assert (cls.__doc__ or "").strip(), f"{_who(cls)}: needs a docstring"


@conformance_check()
def check_parameters_annotated(cls: type[Component], registry: Registry) -> None:
    """Every parameter has a type annotation (specs are parsed and checked against it)."""
    for pname, param in cls.parameters().items():
        assert param.annotation is not None, f"{_who(cls)}: parameter {pname!r} has no annotation"


@conformance_check("dataset")
def check_dataset_option_names(cls: type[Component], registry: Registry) -> None:
    """No parameter takes the name of a stream option (``n``, ``order``, ``scale``, …)."""
    for pname in cls.parameters():
        assert pname not in STREAM_OPTIONS, (
            f"{_who(cls)}: parameter {pname!r} is a reserved stream option name"
        )


@conformance_check("kernel", "loss", "dataset")
def check_parameters_stored(cls: type[Component], registry: Registry) -> None:
    """Constructing with the test parameters stores each under its own attribute."""
    obj = make(cls)
    for pname, value in obj.get_params().items():
        expected = params_of(cls).get(pname, cls.parameters()[pname].default)
        assert value == expected or (value != value and expected != expected), (
            f"{_who(cls)}: attribute {pname} is {value!r} after constructing with "
            f"{expected!r}; store each parameter under its own name"
        )


@conformance_check("kernel", "loss", "dataset")
def check_repr_is_spec(cls: type[Component], registry: Registry) -> None:
    """``repr`` is the canonical spec, deterministic, and creating from it round-trips."""
    obj = make(cls)
    spec = obj.spec()
    assert repr(obj) == spec and repr(make(cls)) == spec, f"{_who(cls)}: repr must be deterministic"
    assert registry.create(kind_of(cls), spec).spec() == spec, (
        f"{_who(cls)}: spec {spec!r} does not round-trip"
    )


def _has_range(cls: type[Component]) -> bool:
    return any(p.bounded for p in cls.parameters().values())


def _outside(param: Parameter) -> Any:
    """A value just outside a declared range (the open bound itself, else one beyond)."""
    if param.low is not None:
        return param.low if param.low_open else param.low - 1
    assert param.high is not None  # a parameter with no range is not tested outside it
    return param.high if param.high_open else param.high + 1


@conformance_check(applies=_has_range)
def check_declared_ranges(cls: type[Component], registry: Registry) -> None:
    """A value just outside each declared range is refused with check_range's message."""
    for pname, param in cls.parameters().items():
        if not param.bounded:
            continue  # a written __init__ checks in its own code; only declared ranges are known
        bad = _outside(param)
        message = f"{cls.name}: {pname} must be in {param.range_text}, got {bad!r}"
        try:
            if issubclass(cls, Algorithm):
                task = sorted(cls.tasks)[0]
                changed = params_of(cls) | {pname: bad}
                token = CONFIGURED.set(
                    {cls: {**((CONFIGURED.get() or {}).get(cls, {})), "params": changed}}
                )
                try:
                    make_test_algorithm(cls, task, registry)
                finally:
                    CONFIGURED.reset(token)
            else:
                cls(**(params_of(cls) | {pname: bad}))
        except ValueError as exc:
            assert str(exc) == message, (
                f"{_who(cls)}: {pname}={bad!r} gave {str(exc)!r}, not {message!r}"
            )
        else:
            raise AssertionError(
                f"{_who(cls)}: {pname}={bad!r} is outside {param.range_text} but was accepted"
            )
