"""Building a stream: its data set loaded and checked (:func:`load_dataset`), the rows
and labels its seed and options draw (:class:`RowPlan`, :func:`plan_rows`), and the
arrays they give (:func:`apply_plan`); :func:`build_stream` does all of it, without the
cache (:func:`kbench.data.streams.cache.get_stream` keeps what it can).

The orders (test split, shuffle, counting, ``n``) are composed as row indices into the
data set's arrays and applied in one gather, so the data set is stored once for every
seed. A large stream of a data set mapped from the cache is a
:class:`~kbench.data.gathered.RowGather`, read a chunk at a time.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from kbench.core.arrays import is_sparse
from kbench.core.components import Data
from kbench.core.errors import DataError
from kbench.core.seeds import derive_seed, rng
from kbench.data import gathered
from kbench.data.counting import check_digits, counting_sequence, counting_shape
from kbench.data.gathered import RowGather
from kbench.data.paging import release_all
from kbench.data.readers import recording_sources
from kbench.data.streams.arrays import (
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
from kbench.data.streams.spec import STREAM_OPTIONS, StreamSpec, reserved_parameters
from kbench.data.streams.stream import Stream, StreamArrays


def load_dataset(
    spec: StreamSpec, registry: Any
) -> tuple[DatasetArrays, dict[str, os.stat_result]]:
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
    base, _ = load_dataset(spec, registry)
    return Stream.of(spec, derive_arrays(spec, base))


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


def derive_arrays(
    spec: StreamSpec, base: DatasetArrays, plan: RowPlan | None = None
) -> StreamArrays:
    """Apply the stream options to a data set's arrays: (X, y, X_test, y_test, task, classes).

    ``plan`` is the stream's :class:`RowPlan` when the cache has it; otherwise it is derived.
    """
    return apply_plan(spec, base, plan_rows(spec, base) if plan is None else plan)[0]


def plan_rows(spec: StreamSpec, base: DatasetArrays) -> RowPlan:
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


def apply_plan(
    spec: StreamSpec, base: DatasetArrays, plan: RowPlan
) -> tuple[StreamArrays, RowPlan]:
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
