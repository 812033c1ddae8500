"""Readers for the file formats data sets come in, label encoding, and cached downloads.

Every reader raises :class:`~kbench.core.errors.DataError` for bad input, naming the file and,
where the format has lines, the line (and column) at fault; no input makes a reader raise
anything else. Readers return float64 arrays. The LIBSVM/svmlight format, read into CSR or
dense arrays, has a module of its own, :mod:`kbench.data.libsvm_format`, built on this one.

- :func:`read_csv`: delimited text with one label column, optionally a header row.
- :func:`read_npz`: NumPy ``.npz`` archives holding ``X``, ``y`` and optionally ``X_test``, ``y_test``.
- :func:`read_idx`: the IDX format of MNIST and Fashion-MNIST, optionally gzipped.
- :func:`encode_labels`: raw labels to kbench's encoding of a task.
- :func:`fetch_url`: download once into a cache folder, verified by its SHA-256 checksum
  (:mod:`kbench.data.downloads`).
- :func:`note_source`: tell the stream cache which local files a data set was read from.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import math
import os
import re
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np

from kbench.core.errors import DataError

# Re-exported: single-file downloads live in their own module.
from kbench.data.downloads import cached_path, fetch_url, sha256_of  # noqa: F401

#: Largest dense array (in elements) a reader builds: 2.5e8 float64 values are 2 GB.
MAX_ELEMENTS = 250_000_000

_GZIP_MAGIC = b"\x1f\x8b"
#: Errors of reading a damaged or non-text file; each becomes a DataError.
_READ_ERRORS = (OSError, EOFError, zlib.error, UnicodeDecodeError, csv.Error)


#: Files read while a stream's data set loads (path as opened -> its stat when opened),
#: or None outside :func:`recording_sources`.
_SOURCES: ContextVar[dict[str, os.stat_result] | None] = ContextVar("kbench_sources", default=None)


def note_source(path: str | Path) -> None:
    """Record that the data set being loaded reads the local file ``path``.

    kbench's readers call this for every file they open. A data-set plugin that reads a
    file by other means calls it too, so that the stream cache notices when the file's
    content changes (see ``docs/streams.md``, "The data cache"). Outside a stream build
    it does nothing.
    """
    seen = _SOURCES.get()
    if seen is None:
        return
    key = os.fspath(path)
    if key not in seen:
        with contextlib.suppress(OSError):  # the reader reports a missing file itself
            seen[key] = os.stat(key)


@contextmanager
def recording_sources() -> Iterator[dict[str, os.stat_result]]:
    """Collect the files :func:`note_source` hears of inside the block (path -> stat)."""
    token = _SOURCES.set({})
    try:
        yield _SOURCES.get()  # type: ignore[misc]
    finally:
        _SOURCES.reset(token)


def existing_file(path: str | Path) -> Path:
    """``path`` as a Path, recorded as a source of the data set being read; a DataError
    when it is missing or a folder."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file")
    if path.is_dir():
        raise DataError(f"{path}: is a folder, not a file")
    note_source(path)
    return path


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == _GZIP_MAGIC


def _open_text(path: str | Path) -> io.TextIOBase:
    path = existing_file(path)
    if _is_gzip(path):
        return io.TextIOWrapper(
            gzip.open(path, "rb"), encoding="utf-8", errors="strict", newline=""
        )
    return open(path, encoding="utf-8", errors="strict", newline="")


def _read_error(path: str | Path, exc: BaseException) -> DataError:
    if isinstance(exc, UnicodeDecodeError):
        return DataError(f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start})")
    return DataError(f"{path}: cannot read ({type(exc).__name__}: {_first_line(exc)})")


def check_dense_size(path: str | Path, n: int, d: int, max_elements: int) -> None:
    """A DataError when ``n × d`` values, read from ``path``, exceed ``max_elements``."""
    if n * d > max_elements:
        gb = n * d * 8 / 1e9
        raise DataError(
            f"{path}: {n} rows × {d} features would need {gb:.1f} GB as a dense float64 array "
            f"(kbench's limit is {max_elements} values); reduce the file or its dimension"
        )


# --------------------------------------------------------------------------------------------
# CSV
# --------------------------------------------------------------------------------------------

DELIMITERS = {"comma": ",", "semicolon": ";", "tab": "\t", "space": None}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _sniff_delimiter(first: str) -> str | None:
    for ch in (",", ";", "\t"):
        if ch in first:
            return ch
    return None  # whitespace-separated


def read_csv(
    path: str | Path,
    label: str | int = -1,
    *,
    header: str = "auto",
    delimiter: str = "auto",
    max_elements: int = MAX_ELEMENTS,
) -> tuple[np.ndarray, list[str], list[str]]:
    """Read delimited text with one label column into ``(X, labels, feature names)``.

    Parameters
    ----------
    path
        The file; gzip-compressed files are recognised by their first bytes.
    label
        The label column: its name in the header row, or its 0-based index (negative
        counts from the end; ``-1`` is the last column).
    header
        ``yes``, ``no`` or ``auto``: the first row is a header when some column holds a
        non-number there and a number in the second row.
    delimiter
        ``comma``, ``semicolon``, ``tab``, ``space`` (runs of whitespace) or ``auto`` (the
        first of ``,`` ``;`` tab found in the first line, else whitespace).
    max_elements
        Refuse files whose dense matrix would hold more values than this.

    Returns
    -------
    X, labels, names
        Float64 features; the label cells as stripped strings (the caller encodes them,
        see :func:`encode_labels`); the feature columns' names (``col<j>`` without header).

    Every feature cell must be a finite number: anything else is an error naming the
    file, line and column. Blank lines and lines starting with ``#`` are skipped.
    """
    if header not in ("auto", "yes", "no"):
        raise DataError(f"{path}: header must be auto, yes or no, got {header!r}")
    if delimiter != "auto" and delimiter not in DELIMITERS:
        raise DataError(
            f"{path}: delimiter must be auto or one of {', '.join(DELIMITERS)}, got {delimiter!r}"
        )
    records: list[tuple[int, list[str]]] = []
    try:
        with _open_text(path) as fh:
            text_lines = fh.read().splitlines()
    except _READ_ERRORS as exc:
        raise _read_error(path, exc) from None
    content = [
        (i, ln)
        for i, ln in enumerate(text_lines, 1)
        if ln.strip() and not ln.lstrip().startswith("#")
    ]
    if not content:
        raise DataError(f"{path}: no rows")
    sep = _sniff_delimiter(content[0][1]) if delimiter == "auto" else DELIMITERS[delimiter]
    try:
        if sep is None:
            records = [(i, ln.split()) for i, ln in content]
        else:
            reader = csv.reader(
                [ln for _, ln in content], delimiter=sep, skipinitialspace=True, strict=True
            )
            records = [(content[k][0], row) for k, row in enumerate(reader)]
    except csv.Error as exc:
        raise DataError(f"{path}: malformed delimited text: {exc}") from None
    records = [(i, [c.strip() for c in row]) for i, row in records]
    width = len(records[0][1])
    if header == "yes":
        has_header = True
    elif header == "no":
        has_header = False
    else:
        has_header = (
            len(records) > 1
            and len(records[1][1]) == width
            and any(
                not _is_number(a) and _is_number(b)
                for a, b in zip(records[0][1], records[1][1], strict=True)
            )
        )
        if not has_header and not _is_int(label):
            has_header = True  # a label given by name implies a header row
    names = records[0][1] if has_header else [f"col{j}" for j in range(width)]
    body = records[1:] if has_header else records
    if not body:
        raise DataError(f"{path}: no data rows after the header")
    if width < 2:
        raise DataError(f"{path}: needs at least two columns (features and a label), found {width}")
    j_label = _label_column(path, label, names, has_header)
    check_dense_size(path, len(body), width - 1, max_elements)
    feat = [j for j in range(width) if j != j_label]
    cells: list[list[str]] = []
    for lineno, row in body:
        if len(row) != width:
            raise DataError(
                f"{path}:{lineno}: has {len(row)} cells, expected {width} (as in line {records[0][0]})"
            )
        cells.append(row)
    labels = [row[j_label] for row in cells]
    for (lineno, _), lab in zip(body, labels, strict=True):
        if not lab:
            raise DataError(
                f"{path}:{lineno}: column {j_label + 1} ({names[j_label]!r}): the label is empty"
            )
    try:  # the fast path; the loop below finds and names the first bad cell
        X = np.array([[row[j] for j in feat] for row in cells], dtype=np.float64).reshape(
            len(cells), len(feat)
        )
        if np.isfinite(X).all():
            return X, labels, [names[j] for j in feat]
    except ValueError:
        pass
    X = np.empty((len(cells), len(feat)))
    for r, (lineno, row) in enumerate(body):
        for c, j in enumerate(feat):
            text = row[j]
            try:
                v = float(text)
            except ValueError:
                what = "empty cell" if not text else f"{text!r} is not a number"
                raise DataError(f"{path}:{lineno}: column {j + 1} ({names[j]!r}): {what}") from None
            if not math.isfinite(v):
                raise DataError(
                    f"{path}:{lineno}: column {j + 1} ({names[j]!r}): {text!r} is not finite"
                )
            X[r, c] = v
    return X, labels, [names[j] for j in feat]


def _is_int(text: str | int) -> bool:
    if isinstance(text, int):
        return True
    return re.fullmatch(r"\s*[+-]?\d+\s*", str(text)) is not None


def _label_column(path: str | Path, label: str | int, names: list[str], has_header: bool) -> int:
    width = len(names)
    if has_header and str(label) in names:
        return names.index(str(label))
    if _is_int(label):
        j = int(label)
        if not -width <= j < width:
            raise DataError(
                f"{path}: label column {j} does not exist (the file has {width} columns, 0..{width - 1})"
            )
        return j % width
    shown = ", ".join(repr(n) for n in names[:12]) + (", ..." if width > 12 else "")
    if not has_header:
        raise DataError(
            f"{path}: label column {label!r} names a column, but the file has no header row"
        )
    raise DataError(f"{path}: no label column {label!r} (columns: {shown})")


# --------------------------------------------------------------------------------------------
# NPZ
# --------------------------------------------------------------------------------------------


def read_npz(path: str | Path) -> dict[str, np.ndarray]:
    """Read ``X``, ``y`` and optionally ``X_test``, ``y_test`` from a NumPy ``.npz`` archive.

    Returns a dict with those keys (the test pair only when both are present), ``X`` arrays
    2-D float64 and ``y`` arrays 1-D, with matching lengths and widths. Object arrays are
    refused (no pickles are loaded).
    """
    path = existing_file(path)
    try:
        # numpy leaves its own file handle open when the archive is damaged: pass ours
        with open(path, "rb") as fh:
            z = np.load(fh, allow_pickle=False)
            if not isinstance(z, np.lib.npyio.NpzFile):
                raise DataError(f"{path}: not an .npz archive (a single .npy array?)")
            with z:
                keys = set(z.files)
                missing = {"X", "y"} - keys
                if missing:
                    raise DataError(
                        f"{path}: no array {sorted(missing)[0]!r} "
                        f"(it holds: {', '.join(sorted(keys)) or 'nothing'})"
                    )
                if ("X_test" in keys) != ("y_test" in keys):
                    raise DataError(
                        f"{path}: has {'X_test' if 'X_test' in keys else 'y_test'} without "
                        f"{'y_test' if 'X_test' in keys else 'X_test'}"
                    )
                raw = {k: z[k] for k in ("X", "y", "X_test", "y_test") if k in keys}
    except DataError:
        raise
    except Exception as exc:  # numpy's npz/zip/npy readers raise many kinds on damaged input
        raise DataError(
            f"{path}: not a readable .npz archive ({type(exc).__name__}: {_first_line(exc)})"
        ) from None
    out: dict[str, np.ndarray] = {}
    for key, a in raw.items():
        if not isinstance(a, np.ndarray):  # a member stored without the .npy format
            raise DataError(f"{path}: member {key!r} is not a NumPy array")
        if a.dtype.kind not in "biuf":
            raise DataError(f"{path}: array {key!r} has dtype {a.dtype}; kbench needs numbers")
        if key.startswith("X"):
            if a.ndim != 2:
                raise DataError(
                    f"{path}: array {key!r} must be 2-D (examples × features), got shape {a.shape}"
                )
            a = a.astype(np.float64)
            bad = ~np.isfinite(a).all(axis=1)
        else:
            if a.ndim != 1 and not (a.ndim == 2 and a.shape[1] == 1):
                raise DataError(f"{path}: array {key!r} must be 1-D, got shape {a.shape}")
            a = a.astype(np.float64).ravel()
            bad = ~np.isfinite(a)
        if bad.any():
            raise DataError(
                f"{path}: array {key!r} has a NaN or infinite value in row {int(np.argmax(bad))}"
            )
        out[key] = a
    for xk, yk in (("X", "y"), ("X_test", "y_test")):
        if xk in out and len(out[xk]) != len(out[yk]):
            raise DataError(f"{path}: {xk} has {len(out[xk])} rows but {yk} has {len(out[yk])}")
    if len(out["X"]) == 0:
        raise DataError(f"{path}: X has no rows")
    if "X_test" in out and out["X_test"].shape[1] != out["X"].shape[1]:
        raise DataError(
            f"{path}: X_test has {out['X_test'].shape[1]} columns but X has {out['X'].shape[1]}"
        )
    return out


def npz_shapes(path: str | Path) -> dict[str, tuple[int, ...]]:
    """Shapes of the arrays of an ``.npz`` archive, read from their headers only (cheap)."""
    path = existing_file(path)
    shapes: dict[str, tuple[int, ...]] = {}
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if not info.filename.endswith(".npy"):
                    continue
                with zf.open(info) as fh:
                    version = np.lib.format.read_magic(fh)
                    read = (
                        np.lib.format.read_array_header_1_0
                        if version == (1, 0)
                        else np.lib.format.read_array_header_2_0
                    )
                    shape, _, _ = read(fh)
                shapes[info.filename[:-4]] = tuple(shape)
    except Exception as exc:  # any damage: the caller falls back to not knowing
        raise DataError(f"{path}: not a readable .npz archive ({type(exc).__name__})") from None
    return shapes


# --------------------------------------------------------------------------------------------
# IDX (MNIST)
# --------------------------------------------------------------------------------------------

#: IDX type codes → big-endian NumPy dtypes.
IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def _idx_stream(path: Path) -> io.BufferedIOBase:
    return gzip.open(path, "rb") if _is_gzip(path) else open(path, "rb")  # type: ignore[return-value]


def _parse_idx_header(path: Path, head: bytes) -> tuple[np.dtype, tuple[int, ...], int]:
    if len(head) < 4:
        raise DataError(f"{path}: too short for an IDX header ({len(head)} bytes)")
    if head[0] != 0 or head[1] != 0:
        raise DataError(f"{path}: not an IDX file (its first two bytes must be zero)")
    if head[2] not in IDX_TYPES:
        raise DataError(f"{path}: unknown IDX data type code 0x{head[2]:02x}")
    nd = head[3]
    if nd == 0:
        raise DataError(f"{path}: IDX header declares 0 dimensions")
    offset = 4 + 4 * nd
    if len(head) < offset:
        raise DataError(
            f"{path}: IDX header declares {nd} dimensions but the file ends inside the header"
        )
    dims = tuple(int(v) for v in np.frombuffer(head, dtype=">u4", count=nd, offset=4))
    return np.dtype(IDX_TYPES[head[2]]), dims, offset


def _read_idx_header(path: Path, fh: io.BufferedIOBase) -> tuple[np.dtype, tuple[int, ...], int]:
    """Read an IDX header from ``fh``, which it leaves at the first value; see
    :func:`_parse_idx_header`."""
    head = fh.read(4)
    if len(head) == 4 and head[3]:
        head += fh.read(4 * head[3])
    return _parse_idx_header(path, head)


def idx_header(path: str | Path) -> tuple[np.dtype, tuple[int, ...]]:
    """The element type and dimensions of an IDX file, reading only its header (cheap)."""
    path = existing_file(path)
    try:
        with _idx_stream(path) as fh:
            dtype, dims, _ = _read_idx_header(path, fh)
    except DataError:
        raise
    except _READ_ERRORS as exc:
        raise _read_error(path, exc) from None
    return dtype, dims


def read_idx(path: str | Path, *, max_elements: int = MAX_ELEMENTS) -> np.ndarray:
    """Read an IDX file (MNIST's format), gzipped or not, into an array of its own type.

    The header's dimensions must account for the file's size exactly; a mismatch is an
    error stating both sizes.
    """
    path = existing_file(path)
    try:
        with _idx_stream(path) as fh:
            dtype, dims, offset = _read_idx_header(path, fh)
            count = math.prod(dims)
            # a zero dimension makes count 0, but NumPy still refuses absurd other dimensions
            if math.prod(d for d in dims if d) > max_elements:
                raise DataError(
                    f"{path}: IDX header declares {' × '.join(map(str, dims))} = {count} values, "
                    f"more than kbench's limit of {max_elements}"
                )
            expected = count * dtype.itemsize
            body = fh.read(expected + 1)
    except DataError:
        raise
    except _READ_ERRORS as exc:
        raise _read_error(path, exc) from None
    if len(body) != expected:
        shape = " × ".join(map(str, dims))
        got = f"{len(body)}" if len(body) <= expected else "more than that"
        raise DataError(
            f"{path}: IDX header says {shape} values of {dtype.itemsize} byte(s) = {expected} bytes "
            f"after the {offset}-byte header, but the file has {got}"
        )
    return np.frombuffer(body, dtype=dtype).reshape(dims).astype(dtype.newbyteorder("="))


def read_idx_pair(images: str | Path, labels: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Read an IDX image file and its IDX label file into float64 ``(X, y)``, one row per image."""
    imgs = read_idx(images)
    labs = read_idx(labels)
    if labs.ndim != 1:
        raise DataError(f"{labels}: an IDX label file must be 1-D, got shape {labs.shape}")
    if len(imgs) != len(labs):
        raise DataError(f"{images} has {len(imgs)} images but {labels} has {len(labs)} labels")
    X = imgs.reshape(len(imgs), -1).astype(np.float64)
    if X.shape[1] == 0 or len(X) == 0:
        raise DataError(f"{images}: no pixels (shape {imgs.shape})")
    y = labs.astype(np.float64)
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise DataError(f"{images}: has NaN or infinite values")
    return X, y


# --------------------------------------------------------------------------------------------
# Labels
# --------------------------------------------------------------------------------------------


def _label_values(raw: Sequence[Any] | np.ndarray) -> tuple[np.ndarray, bool]:
    """The labels as a float array (numeric) or a str array, and whether they are numeric."""
    a = np.asarray(raw)
    if a.dtype.kind in "biuf":
        a = a.astype(np.float64).ravel()
        if not np.isfinite(a).all():
            raise DataError(f"label {a[~np.isfinite(a)][0]} is not finite")
        return a, True
    strs = np.array([str(v).strip() for v in np.ravel(a)], dtype=object)
    try:
        nums = np.array([float(s) for s in strs], dtype=np.float64)
    except ValueError:
        return strs, False
    if not np.isfinite(nums).all():
        return strs, False
    return nums, True


def _fmt(v: Any, *, shown: bool = False) -> str:
    """A label as text; ``shown``: as an error shows it, on one line (repr if unprintable)."""
    text = format(float(v), "g") if isinstance(v, (float, np.floating)) else str(v)
    return repr(text) if shown and not text.isprintable() else text


def encode_labels(
    y: Sequence[Any] | np.ndarray, y_test: Sequence[Any] | np.ndarray | None, task: str, where: str
) -> tuple[np.ndarray, np.ndarray | None, int, tuple[str, ...] | None]:
    """Encode raw labels (numbers or names) for a task.

    Parameters
    ----------
    y, y_test
        Raw training and (optional) test labels; numbers or strings.
    task
        ``binary``: two distinct labels, mapped to −1/+1 (labels in {−1, +1} or {0, 1} keep
        their meaning; else the smaller, numerically or alphabetically, is −1). ``multiclass``:
        the sorted distinct labels become 0..C−1; ``regression``, ``novelty``: numbers kept.
    where
        Names the data in error messages.

    Returns
    -------
    y, y_test, n_classes, class_names
        Encoded float64 labels, the number of classes (2 for binary, 0 for regression), and
        each code's original label (``(negative, positive)`` for binary).
    """
    try:
        tr, num_tr = _label_values(y)
        te, num_te = (None, num_tr) if y_test is None else _label_values(y_test)
    except DataError as exc:
        raise DataError(f"{where}: {exc}") from None
    if len(tr) == 0:
        raise DataError(f"{where}: no labels")
    numeric = num_tr and num_te
    if not numeric:
        tr = np.array([_fmt(v) for v in tr], dtype=object)
        te = None if te is None else np.array([_fmt(v) for v in te], dtype=object)
    both = tr if te is None else np.concatenate([tr, te])
    if task in ("regression", "novelty"):
        if not numeric:
            bad = next(v for v in both if not (_is_number(str(v)) and math.isfinite(float(v))))
            raise DataError(f"{where}: task={task} needs finite numeric labels, found {bad!r}")
        return tr.astype(np.float64), None if te is None else te.astype(np.float64), 0, None
    values = sorted(set(both.tolist()))
    if task == "binary":
        if len(values) > 2:
            more = ", ..." if len(values) > 6 else ""
            shown = ", ".join(_fmt(v, shown=True) for v in values[:6]) + more
            raise DataError(
                f"{where}: task=binary needs two classes but the labels take {len(values)} values "
                f"({shown}); use task=multiclass (and positive= to group classes)"
            )
        if numeric and set(values) <= {-1.0, 1.0}:
            neg, pos = -1.0, 1.0
        elif numeric and set(values) <= {0.0, 1.0}:
            neg, pos = 0.0, 1.0
        elif len(values) == 2:
            neg, pos = values
        else:
            raise DataError(
                f"{where}: task=binary needs two classes but all labels are {_fmt(values[0], shown=True)}"
            )
        enc = {neg: -1.0, pos: 1.0}
        out = np.array([enc[v] for v in tr.tolist()])
        out_t = None if te is None else np.array([enc[v] for v in te.tolist()])
        return out, out_t, 2, (_fmt(neg), _fmt(pos))
    if task != "multiclass":
        raise DataError(f"{where}: unknown task {task!r}")
    code = {v: float(i) for i, v in enumerate(values)}
    out = np.array([code[v] for v in tr.tolist()])
    out_t = None if te is None else np.array([code[v] for v in te.tolist()])
    return out, out_t, len(values), tuple(_fmt(v) for v in values)


def _first_line(exc: object) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
