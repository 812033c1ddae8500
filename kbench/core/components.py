"""Base classes of the four component kinds: Algorithm, Kernel, Loss, Dataset.

A component is a class with a ``name``, a numpydoc docstring and typed
keyword-only constructor parameters with defaults. It stores each parameter
under an attribute of the same name, so ``get_params`` and ``repr`` can read them
back, and ``repr`` is the canonical spec string ``name[p=v,...]``.

Parameters are declared once, as annotated class attributes set to :func:`param`::

    eta: float = param(0.5, low=0.0, low_open=True)

from which the class gets its keyword-only ``__init__`` (range checks included, then
``__post_init__``), its ``repr`` and its ``kbench list`` entry. A class may instead write
its own ``__init__``; kbench then reads the parameters from that signature.
"""

from __future__ import annotations

import inspect
import math
import re
import sys
import typing
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from kbench.core.specs import quote_value

TASKS = ("binary", "multiclass", "regression", "novelty")


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


class _Declared:
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
    return _Declared(default, low, high, low_open, high_open, doc)


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return "{" + ",".join(map(str, typing.get_args(tp))) + "}"
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " | ".join(_type_name(a) for a in typing.get_args(tp))
    if tp is type(None):
        return "None"
    return getattr(tp, "__name__", str(tp))


class Component:
    """Common behaviour of every component: declared parameters and a canonical spec."""

    name: ClassVar[str] = ""
    kind: ClassVar[str] = ""
    #: Constructor arguments supplied by the framework rather than by the user.
    context_params: ClassVar[frozenset[str]] = frozenset()
    #: Small parameter values that make the component fast in the conformance suite.
    test_params: ClassVar[dict[str, Any]] = {}
    #: Parameters whose value is the spec of another component, by kind (``{"base":
    #: "algorithm"}``): the registry canonicalises them too, so that equivalent nested
    #: specs give one canonical spec and one task id.
    spec_params: ClassVar[dict[str, str]] = {}
    #: Parameters that name a file or folder: a relative one in a study file is taken
    #: relative to the study file's folder.
    path_params: ClassVar[tuple[str, ...]] = ()
    #: Parameters added after the component's first release: the canonical spec leaves
    #: them out while they hold their default, so existing specs keep their task ids.
    added_params: ClassVar[tuple[str, ...]] = ()

    #: The parameters declared with :func:`param`, by name, bases' first (set per class).
    _declared: ClassVar[dict[str, _Declared]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = {k: v for k, v in cls.__dict__.items() if isinstance(v, _Declared)}
        # A plain class attribute named like an inherited parameter changes its default
        # (``n_train = 10000``); its range, type and doc stay those declared.
        for pname, d in cls._declared.items():
            if pname in cls.__dict__ and pname not in own:
                own[pname] = _Declared(
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
                    raise TypeError(
                        f"parameter {pname!r} of {cls.__qualname__} has no type annotation"
                    )
                marker.annotation, marker.module = annotations[pname], cls.__module__
            declared[pname] = marker
            setattr(cls, pname, marker.default)  # the class attribute reads as the default
        cls._declared = declared
        _generate_init(cls)

    def __post_init__(self) -> None:
        """Finish construction once every declared parameter is set and checked.

        Classes that declare their parameters with :func:`param` put their setup (checks
        that involve several parameters, state) here, and call ``super().__post_init__()``.
        """

    @classmethod
    def parameters(cls) -> dict[str, Parameter]:
        """Return the declared parameters (name → :class:`Parameter`), in signature order."""
        cached = cls.__dict__.get("_parameters_cache")
        if cached is not None:
            return cached
        sig = inspect.signature(cls.__init__)
        hints = typing.get_type_hints(cls.__init__) if cls.__init__ is not object.__init__ else {}
        generated = getattr(cls.__init__, "__kbench_declared__", None) is not None
        docs = _docstring_params(cls)
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
                raise TypeError(
                    f"parameter {p.name!r} of {cls.__qualname__} has no type annotation"
                )
            d = cls._declared.get(p.name) if generated else None
            if d is None:  # a hand-written __init__: its range is in its own code
                params[p.name] = Parameter(
                    p.name, hints[p.name], p.default, doc=docs.get(p.name, "")
                )
                continue
            params[p.name] = Parameter(
                p.name,
                hints[p.name],
                d.default,
                low=d.low,
                high=d.high,
                low_open=d.low_open,
                high_open=d.high_open,
                doc=d.doc or docs.get(p.name, ""),
            )
        cls._parameters_cache = params  # type: ignore[attr-defined]
        return params

    def get_params(self) -> dict[str, Any]:
        """Return the current value of every declared parameter."""
        return {name: getattr(self, name) for name in self.parameters()}

    def spec(self, *, defaults: bool = True) -> str:
        """The spec string ``name[p=v,...]``, parameters sorted; ``defaults=False`` drops defaults."""
        items = []
        values = self.get_params()  # a component may keep a parameter under another attribute
        for pname, param in sorted(self.parameters().items()):
            value = values[pname]
            if not defaults and _same(value, param.default):
                continue
            items.append(f"{pname}={format_value(value)}")
        return f"{type(self).name}[{','.join(items)}]" if items else type(self).name

    def __repr__(self) -> str:
        return self.spec()


def _generate_init(cls: type[Component]) -> None:
    """Give ``cls`` a keyword-only ``__init__`` built from its declared parameters.

    The function is compiled from source, as :mod:`dataclasses` does, so that
    ``inspect.signature`` and ``typing.get_type_hints`` see an ordinary signature: the
    context parameters of the nearest hand-written ``__init__`` (``kernel``, ``loss``,
    ``task``, ``n_classes``, ``seed`` for an algorithm) then the declared ones, in order.
    """
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
    cls.__init__ = init  # type: ignore[misc]


def _assign(obj: Component, values: dict[str, Any]) -> None:
    """Check every declared parameter's range, store it under its name, then __post_init__."""
    cls = type(obj)
    for pname, value in values.items():
        cls._declared[pname].check(cls.name, pname, value)
        setattr(obj, pname, value)
    obj.__post_init__()


_SECTION = re.compile(r"^Parameters\n-+\n", re.MULTILINE)


def _docstring_params(cls: type) -> dict[str, str]:
    """Parameter descriptions from the numpydoc ``Parameters`` sections of cls and its bases.

    An entry is a line naming one or more parameters (``a, b`` or ``a : type``) and the
    more indented lines below it; the description is their text joined on one line.
    """
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        doc = inspect.cleandoc(klass.__dict__.get("__doc__") or "")
        m = _SECTION.search(doc)
        if m is None:
            continue
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


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (np.isnan(a) and np.isnan(b))
    return bool(a == b)


def format_value(value: Any) -> str:
    """Format a parameter value so that parsing it back gives the same value."""
    if isinstance(value, Component):
        return value.spec()
    if isinstance(value, float):
        return repr(value)
    return quote_value(str(value))  # quoted only when it holds commas, brackets or quotes


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


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------


class Kernel(Component):
    """A positive-definite kernel on feature vectors.

    Subclasses implement :meth:`row`, :meth:`matrix` and :meth:`diag`. Built-in
    kernels also return their compiled form from :meth:`compiled`, which lets the
    compiled learners compute rows without a Python call per example.
    """

    kind = "kernel"
    #: True when k(x, x) is the same for every x (RBF, Laplacian).
    constant_diagonal: ClassVar[bool] = False

    def row(
        self,
        S: np.ndarray,
        x: np.ndarray,
        *,
        out: np.ndarray | None = None,
        sq: np.ndarray | None = None,
        xsq: float | None = None,
    ) -> np.ndarray:
        """Kernel values between each row of ``S`` and ``x``.

        ``sq`` (squared norms of the rows of S) and ``xsq`` (of x) are optional caches.
        """
        raise NotImplementedError

    def matrix(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """Gram block ``K[i, j] = k(A[i], B[j])``."""
        raise NotImplementedError

    def diag(self, A: np.ndarray) -> np.ndarray:
        """``k(A[i], A[i])`` for each row."""
        raise NotImplementedError

    def compiled(self) -> tuple[int, float, float, float, float] | None:
        """``(kind, gamma, scale, offset, degree)`` for the compiled core, or None."""
        return None


# --------------------------------------------------------------------------------------------
# Losses
# --------------------------------------------------------------------------------------------


class Loss(Component):
    """A loss of a score (scalar, or a vector of class scores for multiclass) and a label.

    ``value``, ``derivative`` and ``second_derivative`` work elementwise on arrays of
    scalar scores; multiclass losses take scores of shape ``(C,)`` or ``(n, C)``.
    """

    kind = "loss"
    tasks: ClassVar[frozenset[str]] = frozenset({"binary"})
    #: Whether the derivative is continuous (the loss is smooth).
    smooth: ClassVar[bool] = False
    #: Whether ``second_derivative`` exists.
    has_second_derivative: ClassVar[bool] = False

    @property
    def lipschitz(self) -> float:
        """Lipschitz constant in the score (``inf`` if unbounded)."""
        raise NotImplementedError

    def value(self, f: Any, y: Any) -> Any:
        """Loss of score(s) ``f`` for label(s) ``y``."""
        raise NotImplementedError

    def derivative(self, f: Any, y: Any) -> Any:
        """Derivative of the loss with respect to the score."""
        raise NotImplementedError

    def second_derivative(self, f: Any, y: Any) -> Any:
        """Second derivative with respect to the score (only if ``has_second_derivative``)."""
        raise NotImplementedError(f"loss {self.name!r} has no second derivative")

    def compiled(self) -> tuple[int, float] | None:
        """``(loss kind, parameter)`` for the compiled learners, or None."""
        return None


# --------------------------------------------------------------------------------------------
# Data sets
# --------------------------------------------------------------------------------------------


@dataclass
class Data:
    """The arrays a data set produces.

    Labels are in {−1, +1} for ``binary``, 0..C−1 for ``multiclass``, real for
    ``regression``; ``novelty`` labels are ignored by learners.
    """

    X: np.ndarray
    y: np.ndarray
    task: str
    n_classes: int
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    #: Original class names, index = encoded label (multiclass) or [neg, pos] (binary).
    class_names: tuple[str, ...] | None = None


class Dataset(Component):
    """A source of examples: a generator, a bundled table or a file format.

    Subclasses implement :meth:`load`; optional sources implement :meth:`unavailable`.
    """

    kind = "dataset"
    #: Task of the data as loaded (stream options may turn multiclass into binary).
    task: ClassVar[str] = "binary"
    #: Where the data come from: generator, bundled, package, debian, file, url.
    source: ClassVar[str] = "generator"

    def load(self, seed: int) -> Data:
        """Build the arrays. Generators use ``seed``; fixed tables ignore it."""
        raise NotImplementedError

    def unavailable(self) -> str | None:
        """None when the data can be loaded here, else what to install, as one line."""
        return None

    def info(self) -> dict[str, Any]:
        """Size and shape for listings: n, d, classes (when known without loading)."""
        return {}

    @classmethod
    def variants(cls) -> list[dict[str, Any]]:
        """Named instances worth listing on their own (a catalogue's entries).

        Each is a listing row: ``name`` (the spec, e.g. ``libsvm[name=a9a]``), ``task`` and
        any of n, n_test, d, classes, size, cached, unavailable.
        """
        return []


# --------------------------------------------------------------------------------------------
# Algorithms
# --------------------------------------------------------------------------------------------


class Algorithm(Component):
    """An online learner.

    The framework constructs it with ``kernel`` (when ``uses_kernel``), ``loss`` (when
    ``uses_loss``), ``task``, ``n_classes`` and ``seed``, plus its hyper-parameters.
    ``x`` is always a 1-D C-contiguous float64 row; the learner must not write into it.

    Labels follow :class:`Data`; binary predictions are ±1, multiclass predictions class
    indices, regression predictions real numbers.
    """

    kind = "algorithm"
    context_params = frozenset({"kernel", "loss", "task", "n_classes", "seed"})
    tasks: ClassVar[frozenset[str]] = frozenset({"binary"})
    uses_kernel: ClassVar[bool] = True
    uses_loss: ClassVar[bool] = False
    #: Loss used when a study names none (only for ``uses_loss`` algorithms).
    default_loss: ClassVar[str | None] = None
    #: Batch learners trained once on the whole stream (by :meth:`fit`) have no online
    #: curve: the runner records their held-out error only, and reports draw it as a line.
    offline: ClassVar[bool] = False

    def __init__(
        self,
        *,
        kernel: Kernel | None = None,
        loss: Loss | None = None,
        task: str = "binary",
        n_classes: int = 2,
        seed: int = 0,
    ) -> None:
        if task not in self.tasks:
            raise ValueError(
                f"{self.name}: task {task!r} is not supported (supports {sorted(self.tasks)})"
            )
        if self.uses_kernel and kernel is None:
            raise ValueError(f"{self.name}: needs a kernel")
        if self.uses_loss and loss is None:
            raise ValueError(f"{self.name}: needs a loss")
        self.kernel = kernel
        self.loss = loss
        self.task = task
        self.n_classes = n_classes
        self.seed = seed

    @classmethod
    def supports(cls, task: str, loss: Loss | None = None) -> str | None:
        """None if the algorithm can run this task (with this loss), else the reason it cannot."""
        if task not in cls.tasks:
            return f"{cls.name} does not support {task} tasks (supports {', '.join(sorted(cls.tasks))})"
        if loss is not None and cls.uses_loss and task not in loss.tasks:
            return f"loss {loss.name} does not support {task} tasks"
        return None

    # -- the online protocol ------------------------------------------------------------------

    def decision_one(self, x: np.ndarray) -> Any:
        """Score(s) of x: a float, or a vector of class scores for multiclass."""
        raise NotImplementedError

    def predict_one(self, x: np.ndarray) -> float:
        """Predicted label of x, from :meth:`decision_one`."""
        return self.label_of(self.decision_one(x))

    def label_of(self, f: Any) -> float:
        """Turn a decision value into a label for this task.

        A non-finite decision value (NaN or ±inf, in any class score) gives a NaN label,
        which the runner records as divergence: mapping it to a class would score a
        learner that has broken down as if it had guessed.
        """
        if self.task == "multiclass":
            return float(np.argmax(f)) if np.isfinite(f).all() else math.nan
        f = float(f)
        if not math.isfinite(f):
            return math.nan
        if self.task == "regression":
            return f
        return 1.0 if f >= 0.0 else -1.0

    def labels_of(self, F: np.ndarray) -> np.ndarray:
        """:meth:`label_of` for a block: labels of the rows of ``F`` (decision values of
        shape ``(n,)``, or ``(n, C)`` class scores for multiclass); NaN for a row with a
        non-finite value, as :meth:`label_of` gives."""
        F = np.asarray(F, dtype=np.float64)
        if self.task == "multiclass":
            finite = np.isfinite(F).all(axis=1)
            out = np.argmax(np.where(finite[:, None], F, 0.0), axis=1).astype(np.float64)
        else:
            finite = np.isfinite(F)
            out = F.copy() if self.task == "regression" else np.where(F >= 0.0, 1.0, -1.0)
        out[~finite] = np.nan
        return out

    def learn_one(self, x: np.ndarray, y: float) -> None:
        """Update the model with one labelled example."""
        if self.offline:
            raise NotImplementedError(
                f"{self.name} is a batch reference: the runner calls fit on the whole stream"
            )
        raise NotImplementedError

    def learn_predict_many(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Predict then learn each row in turn; return the predictions made before each update.

        The default is the one-by-one loop; learners with a compiled block loop override it.
        """
        pred = np.empty(len(X))
        for i in range(len(X)):
            x = X[i]
            pred[i] = self.predict_one(x)
            self.learn_one(x, y[i])
        return pred

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        """Predictions for a block of examples without learning (held-out evaluation)."""
        return np.array([self.predict_one(x) for x in X], dtype=float)

    def stats(self) -> dict[str, float]:
        """Model statistics; at least ``n_support`` and ``kernel_evals``."""
        raise NotImplementedError

    def fit(self, X: np.ndarray, y: np.ndarray) -> None:
        """Train on the whole stream at once (only ``offline`` algorithms implement it)."""
        raise NotImplementedError(f"{self.name} is an online learner; it has no batch fit")

    # Optional: def wants_label(self, x) -> bool, for active learning.
    wants_label: Any = None
    # Optional: def end_pass(self) -> None. The runner calls it after the last example of
    # every pass (and when a label budget ends a pass early), inside the timed learner
    # calls, before the pass's last checkpoint is recorded: for learners that finish their
    # model at the end of a pass (LASVM's finishing step) whatever the rows' layout.
    end_pass: Any = None

    @classmethod
    def has_fast_path(cls) -> bool:
        """Whether the class overrides :meth:`learn_predict_many`."""
        return cls.learn_predict_many is not Algorithm.learn_predict_many


KINDS: dict[str, type[Component]] = {
    "algorithm": Algorithm,
    "kernel": Kernel,
    "loss": Loss,
    "dataset": Dataset,
}
