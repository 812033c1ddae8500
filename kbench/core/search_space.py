"""Search spaces of components: what a tuned study may try for each parameter.

A component class may declare its space beside its defaults, as a class attribute::

    class Norma(Algorithm):
        search_space = {"eta": LogUniform(1e-3, 10.0), "c": LogUniform(1e-5, 1.0)}

A declared space is the whole space of that component (a parameter it leaves out is not
tuned); ``search_space = {}`` says the component has nothing to tune (a parameter-free
learner such as PiSTOL). A component that declares nothing gets the generic space,
:data:`GENERIC_SPACE`, for those of its parameters that carry a common name (``eta``,
``c``, ``C``, ``lam``, ``gamma``, ``budget``), provided the parameter's default lies inside
the generic range: a ``lam`` whose default is 0.99 is a forgetting factor, not a
regularisation weight, and a generic range would be wrong for it.

A parameter the user sets in a spec (``norma[budget=200]``) is fixed: it is not tuned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from kbench.core.errors import SpecError


class Dimension:
    """The values one parameter may take in a search."""

    def empty_reason(self) -> str:
        """Why the dimension holds no value ("" when it holds some)."""
        raise NotImplementedError

    def grid(self, points: int) -> list[Any]:
        """About ``points`` values spread over the dimension, in a fixed order."""
        raise NotImplementedError

    def sample(self, rng: np.random.Generator) -> Any:
        """One value drawn at random."""
        raise NotImplementedError

    def contains(self, value: Any) -> bool:
        """Whether ``value`` lies in the dimension."""
        raise NotImplementedError


@dataclass(frozen=True)
class LogUniform(Dimension):
    """Floats in ``[low, high]``, uniform on a log scale (a learning rate, a regulariser)."""

    low: float
    high: float

    def empty_reason(self) -> str:
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            return f"LogUniform({self.low}, {self.high}) has an infinite bound"
        if self.low <= 0:
            return f"LogUniform({self.low}, {self.high}) needs a positive lower bound"
        if self.high < self.low:
            return f"LogUniform({self.low}, {self.high}) has its upper bound below the lower one"
        return ""

    def grid(self, points: int) -> list[float]:
        if self.low == self.high or points <= 1:
            return [float(math.sqrt(self.low * self.high))]
        # Rounded to 4 significant digits: readable specs, and the same values on every CPU.
        return [float(f"{v:.4g}") for v in np.geomspace(self.low, self.high, points)]

    def sample(self, rng: np.random.Generator) -> float:
        v = math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        return float(f"{v:.4g}")

    def contains(self, value: Any) -> bool:
        return isinstance(value, (int, float)) and self.low <= value <= self.high

    def __str__(self) -> str:
        return f"log[{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class IntLogUniform(Dimension):
    """Integers in ``[low, high]``, spread on a log scale (a budget of support vectors)."""

    low: int
    high: int

    def empty_reason(self) -> str:
        if self.low < 1:
            return f"IntLogUniform({self.low}, {self.high}) needs a lower bound of at least 1"
        if self.high < self.low:
            return f"IntLogUniform({self.low}, {self.high}) has its upper bound below the lower one"
        return ""

    def grid(self, points: int) -> list[int]:
        values = np.geomspace(self.low, self.high, max(points, 1)) if points > 1 else [self.low]
        return list(dict.fromkeys(round(float(v)) for v in values))

    def sample(self, rng: np.random.Generator) -> int:
        v = math.exp(rng.uniform(math.log(self.low), math.log(self.high + 1)))
        return min(int(v), self.high)

    def contains(self, value: Any) -> bool:
        return isinstance(value, int) and self.low <= value <= self.high

    def __str__(self) -> str:
        return f"int-log[{self.low}, {self.high}]"


class Choice(Dimension):
    """A list of values, tried in the order given (a grid takes them all)."""

    def __init__(self, *values: Any) -> None:
        self.values = tuple(values)

    def empty_reason(self) -> str:
        return "" if self.values else "Choice() lists no value"

    def grid(self, points: int) -> list[Any]:
        return list(self.values)

    def sample(self, rng: np.random.Generator) -> Any:
        return self.values[int(rng.integers(len(self.values)))]

    def contains(self, value: Any) -> bool:
        return value in self.values

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Choice) and self.values == other.values

    def __hash__(self) -> int:
        return hash(self.values)

    def __repr__(self) -> str:
        return f"Choice{self.values!r}"

    def __str__(self) -> str:
        return "{" + ", ".join(map(str, self.values)) + "}"


#: The space of a component that declares none, for its parameters with these names (and
#: defaults inside these ranges). The ranges span the values the online kernel literature
#: reports for these parameters on scaled data.
GENERIC_SPACE: dict[str, Dimension] = {
    "eta": LogUniform(1e-3, 10.0),  # a learning rate
    "c": LogUniform(1e-6, 1.0),  # a regularisation weight (NORMA's λ)
    "C": LogUniform(1e-2, 1e3),  # an SVM's cost of a margin error
    "lam": LogUniform(1e-7, 1e-1),  # a regularisation weight (Pegasos, BSGD)
    "gamma": LogUniform(1e-3, 10.0),  # a kernel width
    "budget": IntLogUniform(16, 1024),  # support vectors kept
}


def search_space(cls: Any, fixed: set[str] | frozenset[str] = frozenset()) -> dict[str, Dimension]:
    """The search space of a component class, without the parameters in ``fixed``.

    Parameters
    ----------
    cls
        A component class (algorithm or kernel).
    fixed
        Parameters the user set in the spec: they are not tuned.

    Returns
    -------
    dict
        Parameter → :class:`Dimension`, in the order of the constructor's parameters.

    Raises
    ------
    SpecError
        A declared dimension that holds no value, or that names no parameter of the class.
    """
    params = cls.parameters()
    declared = cls.__dict__.get("search_space", getattr(cls, "search_space", None))
    name = getattr(cls, "name", cls.__name__)
    kind = getattr(cls, "kind", "component")
    if declared is None:
        space = {
            p: dim
            for p, dim in GENERIC_SPACE.items()
            if p in params and dim.contains(params[p].default)
        }
    else:
        if not isinstance(declared, dict) or not all(
            isinstance(d, Dimension) for d in declared.values()
        ):
            raise SpecError(
                f"{kind} {name!r}: search_space must map parameter names to LogUniform, "
                f"IntLogUniform or Choice"
            )
        unknown = [p for p in declared if p not in params]
        if unknown:
            raise SpecError(
                f"{kind} {name!r}: search_space names {unknown[0]!r}, which is not one of its "
                f"parameters ({', '.join(params) or 'none'})"
            )
        space = dict(declared)
    for p, dim in space.items():
        reason = dim.empty_reason()
        if reason:
            raise SpecError(f"{kind} {name!r}: the search space of {p!r} is empty: {reason}")
    order = list(params)
    return {p: space[p] for p in sorted(space, key=order.index) if p not in fixed}


def describe(space: dict[str, Dimension]) -> str:
    """A one-line description of a space (``eta log[0.001, 10], c log[1e-06, 1]``)."""
    return ", ".join(f"{p} {d}" for p, d in space.items()) or "nothing to tune"


__all__ = [
    "GENERIC_SPACE",
    "Choice",
    "Dimension",
    "IntLogUniform",
    "LogUniform",
    "describe",
    "search_space",
]
