"""A stream's spec: its data set, its options and its seed (:class:`StreamSpec`).

Stream options are written inside the data-set spec, beside its own parameters:
``digits[positive=5-9,scale=minmax,n=1000]``. Their names (:data:`STREAM_OPTIONS`) are
reserved: a data set may not declare a parameter of the same name, because the option
would take its value before the data set saw it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from kbench._version import __version__
from kbench.core.errors import SpecError
from kbench.core.specs import coerce, format_spec, parse_spec
from kbench.data.counting import COUNTING_ORDER, counting_shape

ORDERS = ("shuffle", "file", "counting")
SCALES = ("none", "standard", "minmax")
#: Options every stream accepts, with their types; data sets may not use these names.
STREAM_OPTIONS: dict[str, Any] = {
    "order": str,
    "n": int | None,
    "test_size": float,
    "positive": str | None,
    "scale": str,
    "dense": bool,
}


@dataclass(frozen=True)
class StreamSpec:
    """Everything that defines a stream: the data set, its options and the seed.

    Parameters
    ----------
    dataset
        Canonical spec of the data set (its own parameters only).
    seed
        Seed of the generator and of the shuffle.
    order
        ``shuffle`` (seeded permutation), ``file`` (the order the data set gives) or
        ``counting`` (digit data sets: the counting sequence of the SVMD paper, see
        :func:`~kbench.data.counting.counting_sequence`; ``counting-D`` and
        ``counting-DxR`` fix the number of digits D and of runs R). Time-ordered data
        sets (drifting streams, whose class sets ``time_ordered = True``) keep their
        order under ``shuffle``: the order is part of their definition and their
        generator already draws each concept's examples at random.
    n
        Keep at most this many training examples (after ordering).
    test_size
        Fraction held out as a test split when the data set has none (0 for none).
    positive
        Make a binary task: these classes (``5-9``, ``1|3|5`` or class names) are +1.
    scale
        ``none``, ``standard`` (zero mean, unit variance) or ``minmax`` (to [−1, 1]),
        fitted on the training stream.
    dense
        Densify a sparse data set's features (a dense data set is unchanged). Without
        it a sparse stream stays CSR, and learners that take only dense rows get its rows
        densified a block at a time.
    """

    dataset: str
    seed: int = 0
    order: str = "shuffle"
    n: int | None = None
    test_size: float = 0.0
    positive: str | None = None
    scale: str = "none"
    dense: bool = False

    def __post_init__(self) -> None:
        if self.order not in ORDERS and not COUNTING_ORDER.match(self.order):
            raise SpecError(
                f"stream option order={self.order!r}: expected one of {', '.join(ORDERS)} "
                f"(or counting-D, counting-DxR)"
            )
        if self.order != "counting" and self.order.startswith("counting"):
            digits, runs = counting_shape(self.order)
            if digits is None or not 1 <= digits <= 6 or (runs is not None and runs < 1):
                raise SpecError(
                    f"stream option order={self.order!r}: needs 1 to 6 digits and at least one run"
                )
        if self.scale not in SCALES:
            raise SpecError(
                f"stream option scale={self.scale!r}: expected one of {', '.join(SCALES)}"
            )
        if self.n is not None and self.n < 1:
            raise SpecError(f"stream option n must be at least 1, got {self.n}")
        if not 0.0 <= self.test_size < 1.0:
            raise SpecError(f"stream option test_size must be in [0, 1), got {self.test_size}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the spec (``dense`` only when set: the specs, keys and
        stream ids of streams without it are those of kbench before the option existed)."""
        out = dataclasses.asdict(self)
        if not self.dense:
            del out["dense"]
        return out

    @property
    def label(self) -> str:
        """The data set with its non-default stream options, without the seed."""
        name, params = parse_spec(self.dataset)
        opts = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in ("dataset", "seed") and getattr(self, f.name) != f.default
        }
        return format_spec(name, [*params.items(), *((k, str(v)) for k, v in opts.items())])

    def key(self) -> str:
        """A hash of the spec (and kbench's version), naming the cache file."""
        text = json.dumps({"spec": self.to_dict(), "kbench": __version__}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:24]


def reserved_parameters(cls: Any) -> list[str]:
    """The parameters of a data-set class that clash with a stream option (should be none)."""
    return sorted(set(cls.parameters()) & set(STREAM_OPTIONS))


def split_stream_options(spec: str) -> tuple[str, dict[str, Any]]:
    """Separate the stream options from a data-set spec; return (dataset spec, options)."""
    name, params = parse_spec(spec)
    options = {}
    for key in list(params):
        if key in STREAM_OPTIONS:
            options[key] = coerce(params.pop(key), STREAM_OPTIONS[key], f"stream option {key!r}")
    return format_spec(name, params), options
