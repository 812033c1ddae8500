"""Base classes of the four component kinds: Algorithm, Kernel, Loss, Dataset.

A component is a class with a ``name``, a numpydoc docstring and typed
keyword-only constructor parameters with defaults. It stores each parameter
under an attribute of the same name, so ``get_params`` and ``repr`` can read them
back, and ``repr`` is the canonical spec string ``name[p=v,...]``.

Parameters are declared once, as annotated class attributes set to :func:`param`
(:mod:`kbench.core.params`, whose names this module re-exports), from which the class gets
its keyword-only ``__init__``, its ``repr`` and its ``kbench list`` entry. A class may
instead write its own ``__init__``; kbench then reads the parameters from that signature.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

# param, Parameter and check_range are the components' API, imported from here.
from kbench.core.arrays import one_rows
from kbench.core.params import Declared, declare, parameters_of
from kbench.core.params import Parameter as Parameter
from kbench.core.params import check_range as check_range
from kbench.core.params import param as param
from kbench.core.specs import quote_value

TASKS = ("binary", "multiclass", "regression", "novelty")


class Component:
    """Common behaviour of every component: declared parameters and a canonical spec."""

    name: ClassVar[str] = ""
    kind: ClassVar[str] = ""
    #: Constructor arguments supplied by the framework rather than by the user.
    context_params: ClassVar[frozenset[str]] = frozenset()
    #: Small parameter values that make the component fast in the conformance suite.
    test_params: ClassVar[dict[str, Any]] = {}
    #: Conformance checks (:mod:`kbench.testing`) that do not apply to this component, by
    #: check name, each with the reason in one line. The checks still run in
    #: ``parametrize_with_checks`` cases, as strict expected failures: a component that comes
    #: to pass one fails the case, so that the entry is removed.
    checks_not_applicable: ClassVar[dict[str, str]] = {}
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
    _declared: ClassVar[dict[str, Declared]] = {}

    def __init_subclass__(cls, *, params_of: type[Component] | None = None, **kwargs: Any) -> None:
        """Declare the new class's parameters; ``params_of=Other`` also takes those of
        ``Other`` (a component class that is not a base) that it does not inherit."""
        super().__init_subclass__(**kwargs)
        declare(cls, params_of)

    def __post_init__(self) -> None:
        """Finish construction once every declared parameter is set and checked.

        Classes that declare their parameters with :func:`param` put their setup (checks
        that involve several parameters, state) here, and call ``super().__post_init__()``.
        """

    @classmethod
    def parameters(cls) -> dict[str, Parameter]:
        """Return the declared parameters (name → :class:`Parameter`), in signature order."""
        cached = cls.__dict__.get("_parameters_cache")
        if cached is None:
            cached = cls._parameters_cache = parameters_of(cls)  # type: ignore[attr-defined]
        return cached

    def get_params(self) -> dict[str, Any]:
        """Return the current value of every declared parameter."""
        return {name: getattr(self, name) for name in self.parameters()}

    def spec(self, *, defaults: bool = True) -> str:
        """The spec string ``name[p=v,...]``, parameters sorted; ``defaults=False`` drops defaults."""
        items = []
        values = self.get_params()  # a component may keep a parameter under another attribute
        for pname, declared in sorted(self.parameters().items()):
            value = values[pname]
            if not defaults and _same(value, declared.default):
                continue
            items.append(f"{pname}={format_value(value)}")
        return f"{type(self).name}[{','.join(items)}]" if items else type(self).name

    def __repr__(self) -> str:
        return self.spec()


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
    #: Whether the ν-trick of kbench's online learners (NORMA, SVMD) may adapt this loss's
    #: margin (the hinge of a classification or novelty task) or its tube (regression's
    #: ε-insensitive loss). On novelty tasks such a loss's own ``nu`` and ``rho`` are read.
    nu_trick: ClassVar[bool] = False

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

    def compiled_multiclass(self) -> int | None:
        """The code of a multiclass loss in the compiled online learners (a member of
        ``kbench.cython_core._online_ops.MulticlassLoss``), or None."""
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

    def download_needed(self) -> str | None:
        """None when loading reads only this machine, else what it would download, as one
        line (a study's ``cached_datasets`` leave such a data set out)."""
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
    #: Per task, the loss used when a study names none where ``default_loss`` does not
    #: serve that task (PiSTOL: ``{"regression": "huber"}``, a Lipschitz loss).
    default_losses: ClassVar[dict[str, str]] = {}
    #: Batch learners trained once on the whole stream (by :meth:`fit`) have no online
    #: curve: the runner records their held-out error only, and reports draw it as a line.
    offline: ClassVar[bool] = False
    #: The paper the learner implements, as "Authors (year). Title. Venue." ("" for a
    #: wrapper around another learner); the published site's learner page shows it.
    paper: ClassVar[str] = ""

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
        value = float(f)
        if not math.isfinite(value):
            return math.nan
        if self.task == "regression":
            return value
        return 1.0 if value >= 0.0 else -1.0

    def labels_of(self, F: np.ndarray) -> np.ndarray:
        """:meth:`label_of` for a block: labels of the rows of ``F`` (decision values of
        shape ``(n,)``, or ``(n, C)`` class scores for multiclass); NaN for a row with a
        non-finite value, as :meth:`label_of` gives."""
        F = np.asarray(F, dtype=np.float64)
        if self.task == "multiclass":
            finite = np.isfinite(F).all(axis=1)
            out: np.ndarray = np.argmax(np.where(finite[:, None], F, 0.0), axis=1).astype(
                np.float64
            )
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
        pred = np.empty(X.shape[0])  # a CSR block has no len()
        for i, x in enumerate(one_rows(X)):
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
