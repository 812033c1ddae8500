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

import dataclasses
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kbench import __version__
from kbench.components import Data
from kbench.errors import DataError, SpecError
from kbench.specs import coerce, format_spec, parse_spec

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


def build_stream(spec: StreamSpec, registry: Any) -> Stream:
    """Load the data set and apply the stream options (no cache)."""
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
    data = dataset.load(spec.seed)
    name = dataset.name
    X, y = np.asarray(data.X, dtype=np.float64), np.asarray(data.y, dtype=np.float64).ravel()
    if X.ndim != 2 or len(X) == 0:
        raise DataError(
            f"data set {name!r} is empty (shape {X.shape}); check its parameters or files"
        )
    if len(y) != len(X):
        raise DataError(f"data set {name!r}: {len(X)} rows but {len(y)} labels")
    _check_finite(name, "training", X, y)
    Xt = None if data.X_test is None else np.asarray(data.X_test, dtype=np.float64)
    yt = None if data.y_test is None else np.asarray(data.y_test, dtype=np.float64).ravel()
    if Xt is not None:
        if Xt.ndim != 2 or Xt.shape[1] != X.shape[1] or len(yt) != len(Xt):
            raise DataError(
                f"data set {name!r}: test split shape {Xt.shape} does not match training {X.shape}"
            )
        _check_finite(name, "test", Xt, yt)
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
            f"data set {dataset.spec(defaults=False)!r}: every training example has the label "
            f"{_label_text(y[0], data, bool(grouped))}{grouped}; a {task} task needs at least "
            f"two classes"
        )
    rng = np.random.default_rng(spec.seed)
    if spec.test_size > 0.0 and Xt is None:
        perm = rng.permutation(len(X))
        n_test = max(1, round(spec.test_size * len(X)))
        if n_test >= len(X):
            raise DataError(
                f"data set {name!r}: test_size={spec.test_size} leaves no training examples"
            )
        Xt, yt = X[perm[:n_test]], y[perm[:n_test]]
        X, y, y_class = X[perm[n_test:]], y[perm[n_test:]], y_class[perm[n_test:]]
    if spec.order == "shuffle" and not getattr(type(dataset), "time_ordered", False):
        perm = rng.permutation(len(X))
        X, y = X[perm], y[perm]
    elif counting:
        digits, runs = counting_shape(spec.order)
        perm = counting_sequence(y_class, rng, digits, runs, name=name)
        X, y = X[perm], y[perm]
    if spec.n is not None:
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
    X, y, Xt, yt = (_readonly(a) for a in (X, y, Xt, yt))
    return Stream(
        spec=spec,
        X=X,
        y=y,
        X_test=Xt,
        y_test=yt,
        task=task,
        n_classes=n_classes,
        stream_id=_stream_id(spec, X, y, Xt, yt),
    )


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


def get_stream(spec: StreamSpec, registry: Any, *, cache: Path | None = None) -> Stream:
    """Load a stream from the cache, building and caching it on first use."""
    folder = (cache or cache_dir()) / "streams"
    path = folder / f"{spec.key()}.npz"
    if path.exists():
        try:
            return _load(path, spec)
        except Exception:  # an unreadable cache entry is rebuilt, never trusted
            path.unlink(missing_ok=True)
    stream = build_stream(spec, registry)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".npz")
        with os.fdopen(fd, "wb") as fh:
            arrays = {
                k: getattr(stream, k)
                for k in ("X", "y", "X_test", "y_test")
                if getattr(stream, k) is not None
            }
            meta = json.dumps(
                {"task": stream.task, "n_classes": stream.n_classes, "stream_id": stream.stream_id}
            )
            np.savez(fh, meta=np.array(meta), **arrays)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs a rebuild next time
    return stream


def _load(path: Path, spec: StreamSpec) -> Stream:
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        arrays = {
            k: _readonly(z[k]) if k in z.files else None for k in ("X", "y", "X_test", "y_test")
        }
    stream = Stream(
        spec=spec,
        task=meta["task"],
        n_classes=meta["n_classes"],
        stream_id=meta["stream_id"],
        **arrays,
    )
    if _stream_id(spec, stream.X, stream.y, stream.X_test, stream.y_test) != stream.stream_id:
        raise DataError(f"cached stream {path} does not match its id")
    return stream
