"""Streams: the identical, read-only example sequences every algorithm of a study sees.

A stream is built once per (dataset spec, stream options, seed) and cached on disk
(:mod:`kbench.data.cache`), so worker processes load it rather than rebuild it. Its
``stream_id`` hashes its spec and contents; results carry it, and comparisons refuse to
pair different ids.

A data set whose ``load`` returns a ``scipy.sparse`` matrix gives a sparse stream: its
features stay CSR (float64 values, sorted int32 indices) through ordering, caching and
the runner, and are densified only when the user asks for it with ``dense=true``.

Stream options are written inside the data-set spec, beside its own parameters:
``digits[positive=5-9,scale=minmax,n=1000]``. Their names (:data:`STREAM_OPTIONS`) are
reserved: a data set may not declare a parameter of the same name, because the option
would take its value before the data set saw it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from kbench._version import __version__
from kbench.core.arrays import is_sparse
from kbench.core.components import Data
from kbench.core.errors import DataError, SpecError
from kbench.core.seeds import derive_seed, rng
from kbench.core.specs import coerce, format_spec, parse_spec
from kbench.data import gathered
from kbench.data.counting import COUNTING_ORDER, check_digits, counting_sequence, counting_shape
from kbench.data.gathered import RowGather
from kbench.data.paging import release_all
from kbench.data.readers import recording_sources
from kbench.data.stream_arrays import (
    DatasetArrays,
    canonical_features,
    check_finite,
    densified,
    freeze,
    head_rows,
    label_text,
    one_label,
    parse_classes,
)

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


@dataclass(frozen=True)
class Stream:
    """Read-only arrays of one stream, and its id.

    ``y`` and ``y_test`` are C-contiguous float64 arrays; ``X`` and ``X_test`` are too for
    a dense stream, and read-only ``scipy.sparse.csr_matrix`` (float64 values, sorted
    int32 indices, no stored zeros) for a sparse one. A large seeded order of a cached data
    set makes ``X`` a :class:`~kbench.data.gathered.RowGather` (row indices into the mapped
    data set), whose slices are such arrays: read ``X[a:b]``, not ``X`` itself.
    """

    spec: StreamSpec
    X: np.ndarray
    y: np.ndarray
    task: str
    n_classes: int
    stream_id: str
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None

    @classmethod
    def of(cls, spec: StreamSpec, arrays: _Arrays, stream_id: str | None = None) -> Stream:
        """The stream of ``spec`` with these arrays, its id hashed from spec and contents
        (or ``stream_id``: the id a cache recorded for the same arrays)."""
        X, y, Xt, yt, task, n_classes = arrays
        return cls(
            spec=spec,
            X=X,
            y=y,
            X_test=Xt,
            y_test=yt,
            task=task,
            n_classes=n_classes,
            stream_id=_stream_id(spec, X, y, Xt, yt) if stream_id is None else stream_id,
        )

    @property
    def n(self) -> int:
        """Number of training examples."""
        return self.X.shape[0]

    @property
    def sparse(self) -> bool:
        """Whether the features are CSR."""
        return is_sparse(self.X) or (isinstance(self.X, RowGather) and self.X.sparse)

    @property
    def d(self) -> int:
        """Dimension."""
        return self.X.shape[1]


def _load_base(spec: StreamSpec, registry: Any) -> tuple[DatasetArrays, dict[str, os.stat_result]]:
    """Load and check the data set of ``spec``; also return the local files it read."""
    dataset = registry.create("dataset", spec.dataset)
    clash = reserved_parameters(type(dataset))
    if clash:
        raise DataError(
            f"data set {dataset.name!r} declares parameter {clash[0]!r}, a reserved stream option "
            f"name ({', '.join(STREAM_OPTIONS)}); its plugin must rename it"
        )
    why = dataset.unavailable()
    if why:
        raise DataError(f"data set {dataset.name!r} is not available here: {why}")
    with recording_sources() as sources:
        # the data set's own stream of the seed: never the order's or a learner's
        data = dataset.load(derive_seed(spec.seed, "data"))
    name = dataset.name
    sparse = is_sparse(data.X) or is_sparse(data.X_test)
    X = canonical_features(data.X, sparse)
    y = np.asarray(data.y, dtype=np.float64).ravel()
    if X.ndim != 2 or X.shape[0] == 0:
        raise DataError(
            f"data set {name!r} is empty (shape {X.shape}); check its parameters or files"
        )
    if len(y) != X.shape[0]:
        raise DataError(f"data set {name!r}: {X.shape[0]} rows but {len(y)} labels")
    check_finite(name, "training", X, y)
    Xt = None if data.X_test is None else canonical_features(data.X_test, sparse)
    yt = None if data.y_test is None else np.asarray(data.y_test, dtype=np.float64).ravel()
    if Xt is not None:
        if yt is None:
            raise DataError(f"data set {name!r} has test features but no test labels")
        if Xt.ndim != 2 or Xt.shape[1] != X.shape[1] or len(yt) != Xt.shape[0]:
            raise DataError(
                f"data set {name!r}: test split shape {Xt.shape} does not match training {X.shape}"
            )
        check_finite(name, "test", Xt, yt)
    names = None if data.class_names is None else tuple(str(c) for c in data.class_names)
    base = DatasetArrays(
        data=Data(
            X=X,
            y=y,
            X_test=Xt,
            y_test=yt,
            task=data.task,
            n_classes=int(data.n_classes),
            class_names=names,
        ),
        name=name,
        label=dataset.spec(defaults=False),
        time_ordered=bool(getattr(type(dataset), "time_ordered", False)),
    )
    return base, dict(sources)


def build_stream(spec: StreamSpec, registry: Any) -> Stream:
    """Load the data set and apply the stream options (no cache)."""
    base, _ = _load_base(spec, registry)
    return Stream.of(spec, _derive(spec, base))


_Arrays = tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, str, int]


@dataclass(frozen=True)
class RowPlan:
    """Where a stream's rows and labels come from: what its seed and options derive from a
    data set's arrays before any row of features is read.

    ``rows`` are the training stream's rows of the data set in order (None: its first
    ``len(y)`` rows, as given), ``test_rows`` the rows held out by ``test_size`` (None: the
    data set's own test split, if any); ``y`` and ``y_test`` the labels (views of the data
    set's, or derived: gathered, grouped by ``positive``); ``center`` and ``width`` the
    column scale of ``scale=...`` when it has been computed. A large stream's derived
    arrays are stored in the data cache (its order file) and mapped by every later load.
    """

    y: np.ndarray
    y_test: np.ndarray | None
    rows: np.ndarray | None
    test_rows: np.ndarray | None
    task: str
    n_classes: int
    center: np.ndarray | None = None
    width: np.ndarray | None = None

    #: The arrays an order file holds (each when the plan has it and it is derived).
    STORED = ("rows", "y", "test_rows", "y_test", "center", "width")

    def stored(self, base: DatasetArrays) -> dict[str, np.ndarray]:
        """The arrays of the plan worth storing: those not read from the data set as given."""
        given = (base.data.y, base.data.y_test)
        out = {}
        for name in self.STORED:
            a = getattr(self, name)
            if a is not None and not any(np.may_share_memory(a, g) for g in given if g is not None):
                out[name] = a
        for name in ("rows", "test_rows"):
            if name in out and base.data.X.shape[0] <= np.iinfo(np.int32).max:
                out[name] = out[name].astype(np.int32)  # 4 bytes an example while they fit
        return out


def _derive(spec: StreamSpec, base: DatasetArrays, plan: RowPlan | None = None) -> _Arrays:
    """Apply the stream options to a data set's arrays: (X, y, X_test, y_test, task, classes).

    ``plan`` is the stream's :class:`RowPlan` when the cache has it; otherwise it is derived.
    """
    return _apply(spec, base, _plan(spec, base) if plan is None else plan)[0]


def _plan(spec: StreamSpec, base: DatasetArrays) -> RowPlan:
    """The stream's labels and rows (:class:`RowPlan`), drawn from its seed.

    The orders (test split, shuffle, counting, ``n``) are composed as row indices into
    the data set's arrays and applied in one gather, so the data set is stored once for
    every seed; a gather of a gather picks the same values as the composed gather, so
    the arrays are those of ordering step by step.
    """
    data, name = base.data, base.name
    X, y, yt = data.X, data.y, data.y_test
    task, n_classes = data.task, data.n_classes
    counting = spec.order.startswith("counting")
    if counting:
        check_digits(data, name)
    if spec.positive is not None:
        if task != "multiclass":
            raise DataError(
                f"positive= groups classes of a multiclass data set; {name!r} is {task}"
            )
        pos = np.array(sorted(parse_classes(spec.positive, data, name)), dtype=float)
        y_class = y  # the counting order needs the digits, not the grouped labels
        y = np.where(np.isin(y, pos), 1.0, -1.0)
        yt = None if yt is None else np.where(np.isin(yt, pos), 1.0, -1.0)
        task, n_classes = "binary", 2
    else:
        y_class = y
    if task in ("binary", "multiclass") and one_label(y):
        grouped = f" after positive={spec.positive}" if spec.positive is not None else ""
        raise DataError(
            f"data set {base.label!r}: every training example has the label "
            f"{label_text(y[0], data, bool(grouped))}{grouped}; a {task} task needs at least "
            f"two classes"
        )
    rows: np.ndarray | None = None  # the training stream's rows of X in order; None: all, as given
    test_rows: np.ndarray | None = None
    if spec.test_size > 0.0 and data.X_test is None:
        perm = rng(spec.seed, "split").permutation(X.shape[0])
        n_test = max(1, round(spec.test_size * X.shape[0]))
        if n_test >= X.shape[0]:
            raise DataError(
                f"data set {name!r}: test_size={spec.test_size} leaves no training examples"
            )
        test_rows, rows = perm[:n_test], perm[n_test:]
        yt = y[test_rows]
    order = rng(spec.seed, "order")
    if spec.order == "shuffle" and not base.time_ordered:
        perm = order.permutation(X.shape[0] if rows is None else len(rows))
        rows = perm if rows is None else rows[perm]
    elif counting:
        digits, runs = counting_shape(spec.order)
        classes = y_class if rows is None else y_class[rows]
        perm = counting_sequence(classes, order, digits, runs, name=name)
        rows = perm if rows is None else rows[perm]
    if rows is not None:
        rows = rows if spec.n is None else rows[: spec.n]
        y = y[rows]
    elif spec.n is not None:
        y = y[: spec.n]
    return RowPlan(y, yt, rows, test_rows, task, n_classes)


def lazy_stream(spec: StreamSpec, base: DatasetArrays, n: int) -> bool:
    """Whether a stream of ``n`` examples of ``base`` is read a chunk at a time: a data
    set mapped from the cache, and features and labels of more than ``LAZY_BYTES``."""
    if not base.frozen:
        return False
    X: Any = base.data.X  # dense, or CSR
    # bytes of a row: CSR values, column indices and pointer; or dense values
    sparse = is_sparse(X) and not spec.dense
    row = X.nnz / max(1, X.shape[0]) * 12 + 8 if sparse else X.shape[1] * 8
    return n * (row + 8) > gathered.LAZY_BYTES


def _apply(spec: StreamSpec, base: DatasetArrays, plan: RowPlan) -> tuple[_Arrays, RowPlan]:
    """The stream's arrays: the data set's features in the plan's rows, densified and
    scaled as the options ask; a :class:`RowGather` for a large stream of a mapped data
    set, whose rows are read, densified and scaled a chunk at a time. Also the plan, with
    the column scale it computed."""
    data = base.data
    X: Any  # dense or CSR arrays, or a RowGather of their rows
    Xt: Any
    X, y, Xt, yt = data.X, plan.y, data.X_test, plan.y_test
    lazy = lazy_stream(spec, base, len(y))
    sparse = is_sparse(X)
    if spec.scale != "none" and sparse and not spec.dense:
        raise DataError(
            f"data set {base.label!r} is sparse: scale={spec.scale} would make every value "
            f"non-zero; scale it beforehand, or add dense=true to densify it"
        )
    if plan.test_rows is not None:
        Xt = RowGather(X, plan.test_rows, dense=spec.dense) if lazy else X[plan.test_rows]
    if lazy:
        changed = (spec.dense and sparse) or spec.scale != "none"
        if plan.rows is not None or changed:
            X = RowGather(X, range(len(y)) if plan.rows is None else plan.rows, dense=spec.dense)
        else:
            X = head_rows(X, len(y), base.frozen)
        if Xt is not None and changed and not isinstance(Xt, RowGather):
            Xt = RowGather(Xt, range(Xt.shape[0]), dense=spec.dense)
    elif plan.rows is not None:
        X = X[plan.rows]
    elif spec.n is not None:
        X = head_rows(X, len(y), base.frozen)
    if not lazy and sparse and spec.dense:
        X, Xt = densified(X, Xt, base.label)
    if spec.scale != "none":
        center, width = plan.center, plan.width
        if center is None:
            if isinstance(X, RowGather):
                center, width = gathered.column_scale(X, spec.scale)
            elif spec.scale == "standard":
                center, width = X.mean(axis=0), X.std(axis=0)
            else:
                lo, hi = X.min(axis=0), X.max(axis=0)
                center, width = (hi + lo) / 2.0, (hi - lo) / 2.0
            width = np.where(width > 0, width, 1.0)
        assert center is not None and width is not None  # a plan records both, or neither
        if isinstance(X, RowGather):
            X = X.scaled(center, width)
            Xt = None if Xt is None else Xt.scaled(center, width)
        else:
            X = (X - center) / width
            Xt = None if Xt is None else (Xt - center) / width
        plan = dataclasses.replace(plan, center=center, width=width)
    X, y, Xt, yt = (freeze(a, base) for a in (X, y, Xt, yt))
    if base.frozen and y is not data.y:
        # the mapped labels read above (checked, gathered) leave the resident set
        release_all(data.y)
    return (X, y, Xt, yt, plan.task, plan.n_classes), plan  # type: ignore[return-value]


def _stream_id(spec: StreamSpec, *arrays: Any) -> str:
    h = hashlib.sha256(json.dumps(spec.to_dict(), sort_keys=True).encode())
    for a in arrays:
        if a is None:
            h.update(b"-")
        elif isinstance(a, RowGather):
            a.hash_into(h)  # the bytes of the eager gather, read a chunk at a time
        elif is_sparse(a):
            # The CSR arrays themselves (never densified); index pointers as int64 so that
            # the id does not depend on the index type a gather happened to choose.
            h.update(f"csr{a.shape}{a.indices.dtype}".encode())
            h.update(np.ascontiguousarray(a.indptr, dtype=np.int64))
            h.update(np.ascontiguousarray(a.indices))
            h.update(np.ascontiguousarray(a.data))
        else:
            h.update(np.ascontiguousarray(a))  # the bytes of tobytes(), without a copy
    return h.hexdigest()[:16]
