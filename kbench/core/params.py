"""Declared component parameters: :func:`param`, :class:`Parameter` and the generated ``__init__``.

A component declares each constructor parameter once, as an annotated class attribute set
to :func:`param`::

    eta: float = param(0.5, low=0.0, low_open=True)

:func:`declare` (called for every subclass of :class:`~kbench.core.components.Component`)
turns these into a keyword-only ``__init__`` compiled from source, which checks each range
as :func:`check_range` does, stores each value under its name and then calls
``__post_init__``. :func:`parameters_of` reads the parameters back from the constructor's
signature (a generated one, or a hand-written ``__init__``) as :class:`Parameter` objects,
with the descriptions of the class's numpydoc ``Parameters`` section.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

#: A component class. :mod:`kbench.core.components` imports this module, so naming
#: ``Component`` here would be an import cycle; its class attributes (``_declared``,
#: ``context_params``, ``name``) are set by this module's own metaprogramming, so they are
#: read untyped.
ComponentClass = type[Any]


@dataclass(frozen=True)
class Parameter:
    """One declared constructor parameter of a component.

    ``low``, ``high``, ``low_open`` and ``high_open`` are the range the constructor
    enforces (as :func:`check_range` takes them; None when unbounded or not declared),
    ``doc`` the description ``kbench list`` shows: the ``doc`` given to :func:`param`,
    else the parameter's entry in the class's numpydoc ``Parameters`` section.
    """

    name: str
    annotation: Any
    default: Any
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    doc: str = ""

    @property
    def type_name(self) -> str:
        """A short readable name of the parameter's type."""
        return _type_name(self.annotation)

    @property
    def bounded(self) -> bool:
        """Whether the constructor checks a range."""
        return self.low is not None or self.high is not None

    @property
    def range_text(self) -> str:
        """The range in interval notation, ``(0, inf]``; empty when unbounded."""
        if not self.bounded:
            return ""
        return _interval(self.low, self.high, self.low_open, self.high_open)


class Declared:
    """What :func:`param` returns: a parameter's default, range and doc, before the class
    it is declared in turns it into a :class:`Parameter`."""

    __slots__ = ("annotation", "default", "doc", "high", "high_open", "low", "low_open", "module")

    def __init__(
        self,
        default: Any,
        low: float | None,
        high: float | None,
        low_open: bool,
        high_open: bool,
        doc: str,
    ) -> None:
        self.default, self.doc = default, doc
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open
        # Set by the declaring class: the annotation as written, and the module it is in.
        self.annotation: Any = None
        self.module = ""

    def check(self, owner: str, pname: str, value: Any) -> None:
        if (self.low is not None or self.high is not None) and value is not None:
            check_range(
                owner,
                pname,
                value,
                low=self.low,
                high=self.high,
                low_open=self.low_open,
                high_open=self.high_open,
            )

    def hint(self, module: str) -> Any:
        """The annotation for a function compiled in ``module``: as written when declared
        there, else evaluated where it was declared (a base class in another module)."""
        if not isinstance(self.annotation, str) or module == self.module:
            return self.annotation
        return eval(self.annotation, vars(sys.modules[self.module]))  # a type, written by us


def param(
    default: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    doc: str = "",
) -> Any:
    """Declare a component parameter: ``eta: float = param(0.5, low=0.0, low_open=True)``.

    Written as an annotated class attribute of a component. The class's generated
    ``__init__`` takes it as a keyword-only argument with this default, checks it against
    the range as :func:`check_range` does (None is not checked), stores it under its own
    name and, once every parameter is set, calls ``__post_init__``. ``doc`` is shown by
    ``kbench list``; without it the class docstring's ``Parameters`` entry is used.

    Returns
    -------
    Any
        A marker the class replaces by the default value (typed ``Any`` so that
        ``eta: float = param(...)`` type-checks).
    """
    if isinstance(default, (list, dict, set)):
        raise TypeError("a parameter default must be immutable (a spec value)")
    return Declared(default, low, high, low_open, high_open, doc)


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return "{" + ",".join(map(str, typing.get_args(tp))) + "}"
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " | ".join(_type_name(a) for a in typing.get_args(tp))
    if tp is type(None):
        return "None"
    return getattr(tp, "__name__", str(tp))


def declare(cls: ComponentClass, params_of: ComponentClass | None = None) -> None:
    """Turn the :func:`param` markers of a new component class into its parameters.

    Sets ``cls._declared`` (bases' parameters first) and gives the class its generated
    ``__init__``; a class that declares nothing and has no ``__post_init__`` of its own
    keeps the constructor and parameters it inherits. ``params_of``, a component class
    that is not a base, lends the parameters that ``cls`` neither inherits nor declares
    (range, type and doc as declared there), after the bases' and before its own.
    """
    own = _lent(cls, params_of) if params_of is not None else {}
    own |= {k: v for k, v in cls.__dict__.items() if isinstance(v, Declared)}
    # A plain class attribute named like an inherited parameter changes its default
    # (``n_train = 10000``); its range, type and doc stay those declared.
    for pname, d in cls._declared.items():
        if pname in cls.__dict__ and pname not in own:
            own[pname] = Declared(
                cls.__dict__[pname], d.low, d.high, d.low_open, d.high_open, d.doc
            )
            own[pname].annotation, own[pname].module = d.annotation, d.module
    if not own and "__post_init__" not in cls.__dict__:
        return  # it inherits its constructor and its declared parameters
    if "__init__" in cls.__dict__:
        raise TypeError(
            f"{cls.__qualname__} defines __init__ and declares its parameters with "
            "param() or __post_init__: do one or the other (setup goes in __post_init__)"
        )
    annotations = inspect.get_annotations(cls)  # as written: strings under __future__
    declared = dict(cls._declared)
    for pname, marker in own.items():
        if not marker.module:  # declared here (a new default already has its module)
            if pname not in annotations:
                raise TypeError(f"parameter {pname!r} of {cls.__qualname__} has no type annotation")
            marker.annotation, marker.module = annotations[pname], cls.__module__
        declared[pname] = marker
        setattr(cls, pname, marker.default)  # the class attribute reads as the default
    cls._declared = declared
    cls.__init__ = _LazyInit(cls, *_init_base(cls))


def _lent(cls: ComponentClass, params_of: ComponentClass) -> dict[str, Declared]:
    """The declarations ``params_of`` lends ``cls``: each as declared there, its doc that of
    ``params_of``'s docstring where its :func:`param` has none."""
    if not isinstance(getattr(params_of, "_declared", None), dict) or issubclass(cls, params_of):
        raise TypeError(
            f"params_of of {cls.__qualname__} must be a component class that is not a base, "
            f"got {params_of!r}"
        )
    docs = _docstring_params(params_of)
    lent = {}
    for pname, d in params_of._declared.items():
        if pname in cls._declared:
            continue
        # A plain class attribute of that name is a new default, as for an inherited one.
        default = cls.__dict__.get(pname, d.default)
        doc = d.doc or docs.get(pname, "")
        lent[pname] = Declared(default, d.low, d.high, d.low_open, d.high_open, doc)
        lent[pname].annotation, lent[pname].module = d.annotation, d.module
    return lent


def parameters_of(cls: ComponentClass) -> dict[str, Parameter]:
    """The parameters of a component class (name → :class:`Parameter`), in signature order.

    Read from the constructor's signature, the context parameters left out: a generated
    ``__init__`` gives the declared ranges, a hand-written one only types and defaults.
    """
    docs = _docstring_params(cls)
    if _declared_init(cls):  # the declarations are the parameters, in signature order
        return {
            pname: Parameter(
                pname,
                _evaluated(d),
                d.default,
                low=d.low,
                high=d.high,
                low_open=d.low_open,
                high_open=d.high_open,
                doc=d.doc or docs.get(pname, ""),
            )
            for pname, d in cls._declared.items()
        }
    # A hand-written __init__: types and defaults from its signature, its ranges in its code.
    sig = inspect.signature(cls.__init__)
    hints = typing.get_type_hints(cls.__init__) if cls.__init__ is not object.__init__ else {}
    params: dict[str, Parameter] = {}
    for p in list(sig.parameters.values())[1:]:
        # *args/**kwargs (object.__init__ of a class that defines none) declare nothing.
        if p.name in cls.context_params or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        if p.kind is not p.KEYWORD_ONLY or p.default is p.empty:
            raise TypeError(
                f"parameter {p.name!r} of {cls.__qualname__} must be keyword-only with a default"
            )
        if p.name not in hints:
            raise TypeError(f"parameter {p.name!r} of {cls.__qualname__} has no type annotation")
        params[p.name] = Parameter(p.name, hints[p.name], p.default, doc=docs.get(p.name, ""))
    return params


def _init_base(cls: ComponentClass) -> tuple[Any, list[inspect.Parameter]]:
    """The nearest hand-written ``__init__`` above ``cls`` and the context parameters it
    takes (``kernel``, ``loss``, ``task``, ``n_classes``, ``seed`` for an algorithm);
    TypeError, when the class is defined, if it takes any other parameter."""
    base = object.__init__
    for klass in cls.__mro__[1:]:
        init = klass.__dict__.get("__init__")
        if init is not None and getattr(init, "__kbench_declared__", None) is None:
            base = init
            break
    context: list[inspect.Parameter] = []
    if base is not object.__init__:
        for p in list(inspect.signature(base).parameters.values())[1:]:
            if p.name not in cls.context_params or p.kind is not p.KEYWORD_ONLY:
                raise TypeError(
                    f"{cls.__qualname__} declares parameters with param(), but "
                    f"{base.__qualname__} takes {p.name!r}, which is not a context parameter: "
                    "declare the base class's parameters with param() too"
                )
            context.append(p)
    return base, context


class _LazyInit:
    """A declared class's ``__init__`` until it is first looked up on the class or an
    instance: then the real one is compiled (:func:`_generate_init`) and replaces it.

    Registering a plugin's components needs only their declarations
    (:func:`parameters_of` reads them), so the commands that create few components do not
    compile a constructor for every class they load.
    """

    def __init__(self, cls: ComponentClass, base: Any, context: list[inspect.Parameter]):
        self.cls, self.base, self.context = cls, base, context
        self.__kbench_declared__ = tuple(cls._declared)

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        init: Any = self.cls.__dict__.get("__init__")
        if init is self:
            init = _generate_init(self.cls, self.base, self.context)
        return init.__get__(obj, owner)


def _declared_init(cls: type) -> bool:
    """Whether the constructor ``cls`` uses is generated from declarations (compiled or
    not yet), read without compiling it."""
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is not None:
            return getattr(init, "__kbench_declared__", None) is not None
    return False


def _evaluated(d: Declared) -> Any:
    """A declared parameter's type, its annotation evaluated where it was written (as
    ``typing.get_type_hints`` evaluates the generated constructor's)."""
    if not isinstance(d.annotation, str):
        return d.annotation
    return eval(d.annotation, vars(sys.modules[d.module]))  # a type, written by us


def _generate_init(
    cls: ComponentClass, base: Any, context: list[inspect.Parameter]
) -> Callable[..., None]:
    """Give ``cls`` a keyword-only ``__init__`` built from its declared parameters, and
    return it.

    The function is compiled from source, as :mod:`dataclasses` does, so that
    ``inspect.signature`` and ``typing.get_type_hints`` see an ordinary signature: the
    context parameters of the nearest hand-written ``__init__`` (``base``) then the
    declared ones, in order.
    """
    names: dict[str, Any] = {"_base": base, "_assign": _assign}
    args = [f"{p.name}=_c_{p.name}" for p in context]
    names |= {f"_c_{p.name}": p.default for p in context}
    home = sys.modules.get(cls.__module__)
    for pname, d in cls._declared.items():
        names[f"_t_{pname}"], names[f"_d_{pname}"] = d.hint(cls.__module__), d.default
        args.append(f"{pname}: _t_{pname} = _d_{pname}")
    body = [f"_base(self, {', '.join(f'{p.name}={p.name}' for p in context)})"] if context else []
    values = ", ".join(f"{n!r}: {n}" for n in cls._declared)
    body.append(f"_assign(self, {{{values}}})")
    star = "*, " if args else ""
    src = (
        f"def _make({', '.join(names)}):\n"
        f"    def __init__(self, {star}{', '.join(args)}) -> None:\n"
        + "".join(f"        {line}\n" for line in body)
        + "    return __init__\n"
    )
    scope: dict[str, Any] = {}
    # dont_inherit: this module's ``from __future__ import annotations`` would turn the
    # annotations into the names of the local variables that hold them.
    code = compile(src, f"<kbench __init__ of {cls.__qualname__}>", "exec", dont_inherit=True)
    exec(code, home.__dict__ if home is not None else {}, scope)
    init = scope["_make"](**names)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = (
        f"Construct a {cls.name or cls.__qualname__} (parameters in the class docstring)."
    )
    init.__kbench_declared__ = tuple(cls._declared)
    cls.__init__ = init
    generated: Callable[..., None] = init
    return generated


def _assign(obj: Any, values: dict[str, Any]) -> None:
    """Check every declared parameter's range, store it under its name, then __post_init__."""
    cls = type(obj)
    for pname, value in values.items():
        cls._declared[pname].check(cls.name, pname, value)
        setattr(obj, pname, value)
    obj.__post_init__()


_SECTION = re.compile(r"^Parameters\n-+\n", re.MULTILINE)


def _docstring_params(cls: type) -> dict[str, str]:
    """Parameter descriptions from the numpydoc ``Parameters`` sections of cls and its bases
    (a subclass's entry replaces its base's)."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        out |= _own_docstring_params(klass)
    return out


@functools.cache
def _own_docstring_params(klass: type) -> dict[str, str]:
    """The ``Parameters`` section of one class's own docstring, read once per class (every
    subclass's registration reads its bases' again).

    An entry is a line naming one or more parameters (``a, b`` or ``a : type``) and the
    more indented lines below it; the description is their text joined on one line.
    """
    out: dict[str, str] = {}
    doc = klass.__dict__.get("__doc__")
    if not isinstance(doc, str) or "Parameters" not in doc:
        return out
    doc = inspect.cleandoc(doc)
    m = _SECTION.search(doc)
    if m is None:
        return out
    names: list[str] = []
    lines = doc[m.end() :].splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        if not line.startswith(" "):
            if i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
                break  # the next section's title
            names = [n.strip() for n in line.split(":")[0].split(",") if n.strip()]
            for n in names:
                out[n] = ""
            continue
        for n in names:
            out[n] = f"{out[n]} {line.strip()}".strip()
    return out


def check_range(
    owner: str,
    pname: str,
    value: float,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """Raise ValueError naming the component and parameter when value is out of its range."""
    bad = (
        (low is not None and (value < low or (low_open and value == low)))
        or (high is not None and (value > high or (high_open and value == high)))
        or (isinstance(value, float) and not np.isfinite(value))
    )
    if bad:
        rng = _interval(low, high, low_open, high_open)
        raise ValueError(f"{owner}: {pname} must be in {rng}, got {value!r}")


def _interval(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    lo = "(" if low_open else "["
    hi = ")" if high_open else "]"
    return f"{lo}{'-inf' if low is None else low}, {'inf' if high is None else high}{hi}"
