"""Streams: the identical, read-only example sequences every algorithm of a study sees.

A stream is built once per (dataset spec, stream options, seed) and cached on disk,
so worker processes load it rather than rebuild it. Its ``stream_id`` hashes its
spec and contents; results carry it, and comparisons refuse to pair different ids.

Stream options are written inside the data-set spec, beside its own parameters:
``digits[positive=5-9,scale=minmax,n=1000]``. Their names (:data:`STREAM_OPTIONS`) are
reserved: a data set may not declare a parameter of the same name, because the option
would take its value before the data set saw it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import mmap
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from kbench import __version__
from kbench.core.components import Data
from kbench.core.errors import DataError, SpecError
from kbench.core.fileio import atomic_write, atomic_write_bytes
from kbench.core.specs import coerce, format_spec, parse_spec
from kbench.data.readers import recording_sources, sha256_of

ORDERS = ("shuffle", "file", "counting")
_COUNTING = re.compile(r"^counting(?:-(\d+)(?:x(\d+))?)?$")
#: The SVMD paper's counting sequence: a D-digit counter run R times (000→999 twice).
COUNTING_DIGITS, COUNTING_RUNS = 3, 2
#: Bare ``counting`` on a pool too small for the paper's sequence keeps it about this long.
COUNTING_LENGTH = COUNTING_RUNS * COUNTING_DIGITS * 10**COUNTING_DIGITS
SCALES = ("none", "standard", "minmax")
#: Options every stream accepts, with their types; data sets may not use these names.
STREAM_OPTIONS: dict[str, Any] = {
    "order": str,
    "n": int | None,
    "test_size": float,
    "positive": str | None,
    "scale": str,
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
        :func:`counting_sequence`; ``counting-D`` and ``counting-DxR`` fix the number of
        digits D and of runs R). Time-ordered data sets (drifting streams, whose class
        sets ``time_ordered = True``) keep their order under ``shuffle``: the order is
        part of their definition and their generator already draws each concept's
        examples at random.
    n
        Keep at most this many training examples (after ordering).
    test_size
        Fraction held out as a test split when the data set has none (0 for none).
    positive
        Make a binary task: these classes (``5-9``, ``1|3|5`` or class names) are +1.
    scale
        ``none``, ``standard`` (zero mean, unit variance) or ``minmax`` (to [−1, 1]),
        fitted on the training stream.
    """

    dataset: str
    seed: int = 0
    order: str = "shuffle"
    n: int | None = None
    test_size: float = 0.0
    positive: str | None = None
    scale: str = "none"

    def __post_init__(self) -> None:
        if self.order not in ORDERS and not _COUNTING.match(self.order):
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
        """A JSON-ready dict of the spec."""
        return dataclasses.asdict(self)

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


def counting_shape(order: str) -> tuple[int | None, int | None]:
    """Digits and runs of a ``counting[-D[xR]]`` order; None where the order leaves them to the data."""
    m = _COUNTING.match(order)
    if not m:
        raise SpecError(f"order={order!r} is not a counting order")
    digits = int(m.group(1)) if m.group(1) else None
    return digits, (int(m.group(2)) if m.group(2) else None)


def counting_sequence(
    y: np.ndarray,
    rng: np.random.Generator,
    digits: int | None = None,
    runs: int | None = None,
    *,
    name: str = "data",
) -> np.ndarray:
    """Row indices that put digit examples in the SVMD paper's counting-sequence order.

    A ``digits``-digit decimal counter runs from 0 to 10^digits − 1, ``runs`` times; each
    number contributes its digits (with leading zeros) in order, so ``000 001 002 ...``
    gives the labels 0 0 0 0 0 1 0 0 2 ... Every run uses each class digits·10^(digits−1)
    times. The examples of each class are drawn at random without replacement (seeded by
    ``rng``), so no example appears twice. ``y`` holds class indices 0..9.

    ``digits`` None (the bare ``order=counting``) asks for the paper's sequence, 000→999
    twice, when every class has the 600 examples it needs; on a smaller pool it takes the
    most digits (at most 3) for which one run fits and as many runs as fit, up to about
    the paper's length of 6000 (scikit-learn's digits: 2 digits, 8 runs). ``runs`` None
    with given ``digits`` takes as many runs as fit.
    """
    counts = np.bincount(y.astype(np.intp), minlength=10)
    fewest = int(counts.min())
    if digits is None:
        fits = [d for d in range(COUNTING_DIGITS, 0, -1) if fewest >= d * 10 ** (d - 1)]
        if not fits:
            raise DataError(
                f"order=counting on {name!r}: class {int(counts.argmin())} has no examples"
            )
        digits = fits[0]
        if runs is None:
            runs = max(
                1,
                min(
                    fewest // (digits * 10 ** (digits - 1)),
                    COUNTING_LENGTH // (digits * 10**digits),
                ),
            )
    elif runs is None:
        runs = max(1, fewest // (digits * 10 ** (digits - 1)))
    need = runs * digits * 10 ** (digits - 1)
    if fewest < need:
        short = int(counts.argmin())
        raise DataError(
            f"order=counting-{digits}x{runs} on {name!r} needs {need} examples of each digit, "
            f"but class {short} has {fewest}; use fewer digits or runs"
        )
    pools = [rng.permutation(np.flatnonzero(y == c))[:need] for c in range(10)]
    numbers = np.arange(10**digits)
    # digit k (most significant first) of every number of one run
    seq = np.stack(
        [(numbers // 10 ** (digits - 1 - k)) % 10 for k in range(digits)], axis=1
    ).ravel()
    seq = np.tile(seq, runs)
    out = np.empty(len(seq), dtype=np.intp)
    for c in range(10):
        at = np.flatnonzero(seq == c)
        out[at] = pools[c][: len(at)]
    return out


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
    """Read-only C-contiguous float64 arrays of one stream, and its id."""

    spec: StreamSpec
    X: np.ndarray
    y: np.ndarray
    task: str
    n_classes: int
    stream_id: str
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None

    @classmethod
    def of(cls, spec: StreamSpec, arrays: _Arrays) -> Stream:
        """The stream of ``spec`` with these arrays, its id hashed from spec and contents."""
        X, y, Xt, yt, task, n_classes = arrays
        return cls(
            spec=spec,
            X=X,
            y=y,
            X_test=Xt,
            y_test=yt,
            task=task,
            n_classes=n_classes,
            stream_id=_stream_id(spec, X, y, Xt, yt),
        )

    @property
    def n(self) -> int:
        """Number of training examples."""
        return len(self.X)

    @property
    def d(self) -> int:
        """Dimension."""
        return self.X.shape[1]


def _check_finite(name: str, part: str, X: np.ndarray, y: np.ndarray) -> None:
    bad = ~np.isfinite(X).all(axis=1) | ~np.isfinite(y)
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(
            f"data set {name!r}: {part} row {row} has a NaN or infinite value "
            f"({int(bad.sum())} such rows); clean the data or drop those rows"
        )


def _parse_classes(text: str, data: Data, name: str) -> set[int]:
    names = list(data.class_names or [])
    chosen: set[int] = set()
    for part in text.replace("|", " ").replace(";", " ").split():
        lo, dash, hi = part.partition("-")
        if dash and lo.isdigit() and hi.isdigit():
            chosen.update(range(int(lo), int(hi) + 1))
        elif part.lstrip("-").isdigit():
            chosen.add(int(part))
        elif part in names:
            chosen.add(names.index(part))
        else:
            raise DataError(
                f"data set {name!r} has no class {part!r} (classes: {', '.join(names) or f'0..{data.n_classes - 1}'})"
            )
    missing = sorted(c for c in chosen if not 0 <= c < data.n_classes)
    if missing:
        raise DataError(
            f"data set {name!r} has no class {missing[0]} (it has classes 0..{data.n_classes - 1})"
        )
    if not chosen or len(chosen) == data.n_classes:
        raise DataError(f"positive={text!r} on {name!r} must name some but not all classes")
    return chosen


def _label_text(label: float, data: Data, grouped: bool) -> str:
    """A label as the user knows it: the class name if the data set gives names."""
    names = list(data.class_names or [])
    if grouped:
        return f"{label:+g}"
    if data.task == "binary" and len(names) == 2:
        return repr(names[int(label > 0)])
    if data.task == "multiclass" and 0 <= int(label) < len(names):
        return repr(names[int(label)])
    return f"{label:g}"


def _check_digits(data: Data, name: str) -> None:
    digits = tuple(str(i) for i in range(10))
    if data.task != "multiclass" or data.n_classes != 10 or (data.class_names or digits) != digits:
        classes = (
            ", ".join(data.class_names[:4]) + ", ..."
            if data.class_names
            else f"{data.n_classes} classes"
        )
        raise DataError(
            f"order=counting orders the digits 0-9 of a digit data set; {name!r} is "
            f"{data.task} with {classes}"
        )


def _readonly(a: np.ndarray | None) -> np.ndarray | None:
    if a is None:
        return None
    a = np.array(a, dtype=np.float64, order="C", copy=True)  # owned, so no view can write to it
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class _Base:
    """A data set's arrays as loaded and checked, before any stream option.

    ``data`` holds float64 arrays. ``frozen`` arrays are read-only maps of a cache file,
    which streams may serve as they are; other arrays are copied before being served.
    """

    data: Data
    name: str
    label: str
    time_ordered: bool
    frozen: bool = False


def _load_base(spec: StreamSpec, registry: Any) -> tuple[_Base, dict[str, os.stat_result]]:
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
        data = dataset.load(spec.seed)
    name = dataset.name
    # C order here, as in the cache file: a scaled stream's column means must be summed in
    # the same order whether it is built from the data set or from the cache
    X = np.ascontiguousarray(data.X, dtype=np.float64)
    y = np.asarray(data.y, dtype=np.float64).ravel()
    if X.ndim != 2 or len(X) == 0:
        raise DataError(
            f"data set {name!r} is empty (shape {X.shape}); check its parameters or files"
        )
    if len(y) != len(X):
        raise DataError(f"data set {name!r}: {len(X)} rows but {len(y)} labels")
    _check_finite(name, "training", X, y)
    Xt = None if data.X_test is None else np.ascontiguousarray(data.X_test, dtype=np.float64)
    yt = None if data.y_test is None else np.asarray(data.y_test, dtype=np.float64).ravel()
    if Xt is not None:
        if Xt.ndim != 2 or Xt.shape[1] != X.shape[1] or len(yt) != len(Xt):
            raise DataError(
                f"data set {name!r}: test split shape {Xt.shape} does not match training {X.shape}"
            )
        _check_finite(name, "test", Xt, yt)
    names = None if data.class_names is None else tuple(str(c) for c in data.class_names)
    base = _Base(
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
    X, y, Xt, yt, task, n_classes = _derive(spec, base)
    return Stream.of(spec, (X, y, Xt, yt, task, n_classes))


_Arrays = tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, str, int]


def _derive(spec: StreamSpec, base: _Base) -> _Arrays:
    """Apply the stream options to a data set's arrays: (X, y, X_test, y_test, task, classes).

    The orders (test split, shuffle, counting, ``n``) are composed as row indices into
    the data set's arrays and applied in one gather, so the data set is stored once for
    every seed; a gather of a gather picks the same values as the composed gather, so
    the arrays are those of ordering step by step.
    """
    data, name = base.data, base.name
    X, y, Xt, yt = data.X, data.y, data.X_test, data.y_test
    task, n_classes = data.task, data.n_classes
    counting = spec.order.startswith("counting")
    if counting:
        _check_digits(data, name)
    if spec.positive is not None:
        if task != "multiclass":
            raise DataError(
                f"positive= groups classes of a multiclass data set; {name!r} is {task}"
            )
        pos = np.array(sorted(_parse_classes(spec.positive, data, name)), dtype=float)
        y_class = y  # the counting order needs the digits, not the grouped labels
        y = np.where(np.isin(y, pos), 1.0, -1.0)
        yt = None if yt is None else np.where(np.isin(yt, pos), 1.0, -1.0)
        task, n_classes = "binary", 2
    else:
        y_class = y
    if task in ("binary", "multiclass") and len(np.unique(y)) < 2:
        grouped = f" after positive={spec.positive}" if spec.positive is not None else ""
        raise DataError(
            f"data set {base.label!r}: every training example has the label "
            f"{_label_text(y[0], data, bool(grouped))}{grouped}; a {task} task needs at least "
            f"two classes"
        )
    rng = np.random.default_rng(spec.seed)
    rows: np.ndarray | None = None  # the training stream's rows of X in order; None: all, as given
    if spec.test_size > 0.0 and Xt is None:
        perm = rng.permutation(len(X))
        n_test = max(1, round(spec.test_size * len(X)))
        if n_test >= len(X):
            raise DataError(
                f"data set {name!r}: test_size={spec.test_size} leaves no training examples"
            )
        Xt, yt = X[perm[:n_test]], y[perm[:n_test]]
        rows = perm[n_test:]
    if spec.order == "shuffle" and not base.time_ordered:
        perm = rng.permutation(len(X) if rows is None else len(rows))
        rows = perm if rows is None else rows[perm]
    elif counting:
        digits, runs = counting_shape(spec.order)
        classes = y_class if rows is None else y_class[rows]
        perm = counting_sequence(classes, rng, digits, runs, name=name)
        rows = perm if rows is None else rows[perm]
    if rows is not None:
        rows = rows if spec.n is None else rows[: spec.n]
        X, y = X[rows], y[rows]
    elif spec.n is not None:
        X, y = X[: spec.n], y[: spec.n]
    if spec.scale != "none":
        if spec.scale == "standard":
            center, width = X.mean(axis=0), X.std(axis=0)
        else:
            lo, hi = X.min(axis=0), X.max(axis=0)
            center, width = (hi + lo) / 2.0, (hi - lo) / 2.0
        width = np.where(width > 0, width, 1.0)
        X = (X - center) / width
        Xt = None if Xt is None else (Xt - center) / width
    X, y, Xt, yt = (_freeze(a, base) for a in (X, y, Xt, yt))
    return X, y, Xt, yt, task, n_classes  # type: ignore[return-value]


def _freeze(a: np.ndarray | None, base: _Base) -> np.ndarray | None:
    """Make ``a`` read-only C-contiguous float64, copying only when something else holds it."""
    if a is None:
        return None
    plain = a.dtype == np.float64 and a.flags.c_contiguous
    if plain and base.frozen and not a.flags.writeable:
        return a  # the read-only map of a cache file, or a slice of it
    given = any(a is b for b in (base.data.X, base.data.y, base.data.X_test, base.data.y_test))
    if plain and not given and a.flags.owndata:
        a.setflags(write=False)  # made by _derive: nothing else refers to it
        return a
    return _readonly(a)


def _stream_id(spec: StreamSpec, *arrays: np.ndarray | None) -> str:
    h = hashlib.sha256(json.dumps(spec.to_dict(), sort_keys=True).encode())
    for a in arrays:
        h.update(b"-" if a is None else a.tobytes())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    """Where streams are cached: ``$KBENCH_CACHE``, else the user's cache folder."""
    env = os.environ.get("KBENCH_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kbench"


# ---------------------------------------------------------------------------------------------
# The data cache
#
# <cache>/data/<data set>/<key>.data          the data set's arrays, once (per seed for
#                                             generators, whose data depend on it)
# <cache>/data/<data set>/<key>.json          its record: content id, file size, and the
#                                             local files it was read from
# <cache>/data/<data set>/<key>.stream.json   one per stream (spec and seed): its id and
#                                             the content id it was derived from
#
# A stream is re-derived from the data set's arrays on every load (the seeded orders are
# recomputed: a few milliseconds), so 200 seeds cost 200 small records, not 200 copies.
# ---------------------------------------------------------------------------------------------

#: Version of the cache layout; part of every cache key.
CACHE_FORMAT = 2
_MAGIC = b"KBENCH-DATA\x00"
_ALIGN = 64
_ARRAY_NAMES = ("X", "y", "X_test", "y_test")
#: A source file whose mtime is this close to when it was last checked may have changed
#: again within the file system's timestamp resolution: it is re-hashed, not trusted.
_RACY_NS = 2_000_000_000


def _padded(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _folder_name(spec: StreamSpec) -> str:
    """The cache folder of a stream's data set: its name."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", parse_spec(spec.dataset)[0]) or "_"


def _data_key(spec: StreamSpec, seeded: bool) -> str:
    """Names a data set's cached arrays: its spec, and the seed when its data depend on it."""
    text = json.dumps(
        {
            "dataset": spec.dataset,
            "seed": spec.seed if seeded else None,
            "kbench": __version__,
            "format": CACHE_FORMAT,
        },
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _stream_key(spec: StreamSpec) -> str:
    """Names a stream's record. NumPy's version is part of it: the seeded orders are
    recomputed with NumPy's generator on every load, and the record's id vouches for them."""
    text = json.dumps(
        {
            "spec": spec.to_dict(),
            "kbench": __version__,
            "numpy": np.__version__,
            "format": CACHE_FORMAT,
        },
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _source_records(sources: dict[str, os.stat_result]) -> list[dict[str, Any]] | None:
    """Size, mtime and SHA-256 of the files a data set was read from; None if one changed
    while it was read (its data are then not cached)."""
    out = []
    for path, before in sorted(sources.items()):
        try:
            digest = sha256_of(path)
            after = os.stat(path)
        except OSError:
            return None
        if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
            return None
        out.append(
            {
                "path": path,
                "abspath": os.path.abspath(path),
                "size": after.st_size,
                "mtime_ns": after.st_mtime_ns,
                "sha256": digest,
                "checked_ns": time.time_ns(),
            }
        )
    return out


def _sources_unchanged(record: dict[str, Any], record_path: Path) -> bool:
    """True when every file the cached data were read from still has the same content.

    Same size and mtime (and path) is trusted; otherwise the file is re-hashed, and the
    record is updated when the content is the same (a ``touch`` costs one hash).
    """
    refreshed = False
    for src in record["sources"]:
        path = src["path"]
        try:
            st = os.stat(path)
        except OSError:
            return False
        if st.st_size != src["size"]:
            return False
        abspath = os.path.abspath(path)
        if (
            abspath == src["abspath"]
            and st.st_mtime_ns == src["mtime_ns"]
            and st.st_mtime_ns < src["checked_ns"] - _RACY_NS
        ):
            continue
        try:
            if sha256_of(path) != src["sha256"]:
                return False
        except OSError:
            return False
        src.update(abspath=abspath, mtime_ns=st.st_mtime_ns, checked_ns=time.time_ns())
        refreshed = True
    if refreshed:
        with contextlib.suppress(OSError):  # only saves a hash next time
            atomic_write_bytes(record_path, json.dumps(record).encode())
    return True


def _write_base(folder: Path, key: str, base: _Base, sources: list[dict[str, Any]]) -> str:
    """Cache a data set's arrays and their record; return their content id.

    The record is written last and removed first: a data file without its record is
    never used. On failure neither is left, and the error (OSError) is raised.
    """
    arrays = {
        k: np.ascontiguousarray(getattr(base.data, k), dtype=np.float64)
        for k in _ARRAY_NAMES
        if getattr(base.data, k) is not None
    }
    meta = {
        "name": base.name,
        "label": base.label,
        "task": base.data.task,
        "n_classes": base.data.n_classes,
        "class_names": None if base.data.class_names is None else list(base.data.class_names),
        "time_ordered": base.time_ordered,
    }
    h = hashlib.sha256(json.dumps(meta, sort_keys=True).encode())
    layout, offset = {}, 0
    for k, a in arrays.items():
        h.update(f"{k}{a.shape}".encode())
        h.update(a.data)
        layout[k] = [list(a.shape), offset]
        offset += _padded(a.nbytes)
    data_id = h.hexdigest()[:32]
    head = json.dumps({**meta, "data_id": data_id, "arrays": layout}).encode()
    prefix = _MAGIC + len(head).to_bytes(8, "little") + head

    def write(fh: BinaryIO) -> None:
        fh.write(prefix + bytes(_padded(len(prefix)) - len(prefix)))
        for a in arrays.values():
            fh.write(a.data.cast("B"))
            fh.write(bytes(_padded(a.nbytes) - a.nbytes))

    record_path, data_path = folder / f"{key}.json", folder / f"{key}.data"
    folder.mkdir(parents=True, exist_ok=True)
    record_path.unlink(missing_ok=True)
    try:
        atomic_write(data_path, write)
        record = {"data_id": data_id, "size": data_path.stat().st_size, "sources": sources}
        atomic_write_bytes(record_path, json.dumps(record).encode())
    except BaseException:
        for path in (record_path, data_path):
            with contextlib.suppress(OSError):
                path.unlink()
        raise
    return data_id


def _read_base(path: Path) -> tuple[_Base, str]:
    """Map a cached data file read-only; return its arrays and content id."""
    with open(path, "rb") as fh:
        if fh.read(len(_MAGIC)) != _MAGIC:
            raise ValueError(f"{path} is not a kbench data file")
        n = int.from_bytes(fh.read(8), "little")
        head = json.loads(fh.read(n))
        buffer = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    start = _padded(len(_MAGIC) + 8 + n)
    arrays = {
        k: np.ndarray(tuple(shape), dtype=np.float64, buffer=buffer, offset=start + offset)
        for k, (shape, offset) in head["arrays"].items()
    }
    names = head["class_names"]
    data = Data(
        X=arrays["X"],
        y=arrays["y"],
        X_test=arrays.get("X_test"),
        y_test=arrays.get("y_test"),
        task=head["task"],
        n_classes=head["n_classes"],
        class_names=None if names is None else tuple(names),
    )
    base = _Base(data, head["name"], head["label"], bool(head["time_ordered"]), frozen=True)
    return base, head["data_id"]


def _cached_base(folder: Path, key: str, data_id: str | None) -> tuple[_Base, str] | None:
    """A data set's cached arrays, if their entry is whole (size and record agree), their
    source files are unchanged, and (given ``data_id``) they are that content."""
    record_path = folder / f"{key}.json"
    record = _read_json(record_path)
    if record is None or (data_id is not None and record.get("data_id") != data_id):
        return None
    data_path = folder / f"{key}.data"
    try:
        if data_path.stat().st_size != record["size"]:
            return None
        if not _sources_unchanged(record, record_path):
            return None
        base, found = _read_base(data_path)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a damaged entry is rebuilt, never trusted
    return (base, found) if found == record["data_id"] else None


def get_stream(spec: StreamSpec, registry: Any, *, cache: Path | None = None) -> Stream:
    """Load a stream from the cache, building and caching it on first use.

    A cached stream is used only while the local files its data set was read from keep
    their content (checked by size and mtime, then by SHA-256 when those changed); an
    edited file gives a rebuilt stream, with a new ``stream_id``. A cache that cannot be
    written (read-only, full) only costs a rebuild next time.
    """
    folder = (cache or cache_dir()) / "data" / _folder_name(spec)
    entry = folder / f"{_stream_key(spec)}.stream.json"
    meta = _read_json(entry)
    if meta is not None:
        try:
            found = _cached_base(folder, meta["data_key"], meta["data_id"])
            if found is not None:
                X, y, Xt, yt, task, n_classes = _derive(spec, found[0])
                return Stream(
                    spec=spec,
                    X=X,
                    y=y,
                    X_test=Xt,
                    y_test=yt,
                    task=task,
                    n_classes=n_classes,
                    stream_id=str(meta["stream_id"]),
                )
        except (KeyError, TypeError):
            pass  # a damaged record is rebuilt
    cls, _ = registry.resolve("dataset", spec.dataset)
    key = _data_key(spec, seeded=getattr(cls, "source", "generator") == "generator")
    found = _cached_base(folder, key, None)
    if found is not None:
        base, data_id = found
    else:
        base, sources = _load_base(spec, registry)
        records = _source_records(sources)
        data_id = None
        if records is not None:
            with contextlib.suppress(OSError):
                data_id = _write_base(folder, key, base, records)
    X, y, Xt, yt, task, n_classes = _derive(spec, base)
    stream = Stream.of(spec, (X, y, Xt, yt, task, n_classes))
    if data_id is not None:
        record = {
            "data_key": key,
            "data_id": data_id,
            "stream_id": stream.stream_id,
            "spec": spec.to_dict(),
        }
        with contextlib.suppress(OSError):
            atomic_write_bytes(entry, json.dumps(record).encode())
    return stream


@dataclass(frozen=True)
class CacheUsage:
    """What the cache holds for one data set (or one other kind of cached file)."""

    name: str
    data_files: int
    streams: int
    nbytes: int


def cache_usage(cache: Path | None = None) -> list[CacheUsage]:
    """The cache's size per data set, then its other folders (downloads, older layouts)."""
    root = cache or cache_dir()
    out = []
    data = root / "data"
    for folder in sorted(p for p in _children(data) if p.is_dir()):
        files = [f for f in folder.iterdir() if f.is_file()]
        out.append(
            CacheUsage(
                name=folder.name,
                data_files=sum(f.name.endswith(".data") for f in files),
                streams=sum(f.name.endswith(".stream.json") for f in files),
                nbytes=sum(f.stat().st_size for f in files),
            )
        )
    for other in sorted(p for p in _children(root) if p.name != "data"):
        size = (
            sum(f.stat().st_size for f in other.rglob("*") if f.is_file())
            if other.is_dir()
            else other.stat().st_size
        )
        label = "streams (old format)" if other.name == "streams" else other.name
        out.append(CacheUsage(name=label, data_files=0, streams=0, nbytes=size))
    return out


def _children(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def clear_cache(dataset: str | None = None, cache: Path | None = None) -> int:
    """Delete the cache (or one data set's cached streams); return the bytes freed.

    Raises
    ------
    KeyError
        If nothing is cached for ``dataset``.
    """
    import shutil

    root = cache or cache_dir()
    if dataset is None:
        targets = _children(root)
    else:
        folder = root / "data" / dataset
        if dataset in ("", ".", "..") or "/" in dataset or not folder.is_dir():
            raise KeyError(dataset)
        targets = [folder]
    freed = 0
    for target in targets:
        if target.is_dir():
            freed += sum(f.stat().st_size for f in target.rglob("*") if f.is_file())
            shutil.rmtree(target)
        else:
            freed += target.stat().st_size
            target.unlink()
    return freed
