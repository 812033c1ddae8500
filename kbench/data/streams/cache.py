"""The data cache: a data set's arrays stored once, memory-mapped, and the streams derived from them.

A stream is built once per (dataset spec, stream options, seed) and cached on disk, so
worker processes load it rather than rebuild it: :func:`get_stream`. The data set's
arrays (dense, or the three arrays of a CSR matrix) are written once per data set (per
seed for generators) and mapped read-only by every process that reads them; each stream
(seed, options) is a small record, its rows re-derived from the seed on every load.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import numpy as np

from kbench._version import __version__
from kbench.core.arrays import is_sparse
from kbench.core.components import Data
from kbench.core.fileio import atomic_write_bytes
from kbench.core.specs import parse_spec
from kbench.data import gathered
from kbench.data.downloads import cache_dir
from kbench.data.readers import sha256_of
from kbench.data.streams.arrays import DatasetArrays
from kbench.data.streams.build import RowPlan, apply_plan, lazy_stream, load_dataset, plan_rows
from kbench.data.streams.files import layout, map_arrays, write_arrays
from kbench.data.streams.spec import StreamSpec
from kbench.data.streams.stream import Stream

# ---------------------------------------------------------------------------------------------
# The data cache
#
# <cache>/data/<data set>/<key>.data          the data set's arrays, once (per seed for
#                                             generators, whose data depend on it)
# <cache>/data/<data set>/<key>.json          its record: content id, file size, and the
#                                             local files it was read from
# <cache>/data/<data set>/<key>.stream.json   one per stream (spec and seed): its id and
#                                             the content id it was derived from
# <cache>/data/<data set>/<key>.order         a large stream's order file: the arrays its
#                                             seed and options derive (row indices, labels,
#                                             column scale), named in its record
#
# A small stream is re-derived from the data set's arrays on every load (the seeded orders
# are recomputed: a few milliseconds), so 200 seeds cost 200 small records, not 200 copies.
# A large one (more than gathered.LAZY_BYTES of features and labels) maps its order file
# instead: drawing its permutation again would hold 8 bytes per row in every task.
# ---------------------------------------------------------------------------------------------

#: Version of the cache layout; part of every cache key. 3: seeds per purpose (the data
#: set, the split and the order each draw from their own stream of the seed) and source
#: files keyed on inode and ctime too.
CACHE_FORMAT = 3
_MAGIC = b"KBENCH-DATA\x00"
_ORDER_MAGIC = b"KBENCH-ORDER"
ALIGN = 64
_ARRAY_NAMES = ("X", "y", "X_test", "y_test")
#: The arrays of a CSR matrix in a data file, in the order scipy's constructor takes them.
_CSR_PARTS = ("data", "indices", "indptr")
#: A source file whose mtime is this close to when it was last checked may have changed
#: again within the file system's timestamp resolution: it is re-hashed, not trusted.
_RACY_NS = 2_000_000_000


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


def _stat_key(st: os.stat_result) -> dict[str, int]:
    """What a change of content cannot keep, as git's index keeps it: size, mtime and
    ctime (ns) and inode. ``touch -r``, ``cp -p``, ``rsync -t`` and ``tar -x`` put an
    edited file's mtime back, but its ctime moves (only the kernel sets it) or, for a
    file replaced, its inode."""
    return {
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
        "ino": st.st_ino,
    }


def _source_records(sources: dict[str, os.stat_result]) -> list[dict[str, Any]] | None:
    """Stat key (:func:`_stat_key`) and SHA-256 of the files a data set was read from;
    None if one changed while it was read (its data are then not cached)."""
    out = []
    for path, before in sorted(sources.items()):
        try:
            digest = sha256_of(path)
            after = os.stat(path)
        except OSError:
            return None
        if _stat_key(after) != _stat_key(before):
            return None
        out.append(
            {
                "path": path,
                "abspath": os.path.abspath(path),
                **_stat_key(after),
                "sha256": digest,
                "checked_ns": time.time_ns(),
            }
        )
    return out


def _sources_unchanged(record: dict[str, Any], record_path: Path) -> bool:
    """True when every file the cached data were read from still has the same content.

    The same stat key (:func:`_stat_key`: size, mtime, ctime, inode) and path is trusted;
    otherwise the file is re-hashed, and the record is updated when the content is the
    same (a ``touch`` or a copy costs one hash, and keeps the stream id).
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
        key = _stat_key(st)
        if (
            abspath == src["abspath"]
            and all(src.get(k) == v for k, v in key.items())
            and st.st_mtime_ns < src["checked_ns"] - _RACY_NS
        ):
            continue
        try:
            if sha256_of(path) != src["sha256"]:
                return False
        except OSError:
            return False
        src.update(abspath=abspath, **key, checked_ns=time.time_ns())
        refreshed = True
    if refreshed:
        with contextlib.suppress(OSError):  # only saves a hash next time
            atomic_write_bytes(record_path, json.dumps(record).encode())
    return True


def write_dataset(
    folder: Path, key: str, base: DatasetArrays, sources: list[dict[str, Any]]
) -> str:
    """Cache a data set's arrays and their record; return their content id.

    The record is written last and removed first: a data file without its record is
    never used. On failure neither is left, and the error (OSError) is raised.
    """
    arrays: dict[str, np.ndarray] = {}
    sparse: dict[str, list[int]] = {}
    for k in _ARRAY_NAMES:
        a = getattr(base.data, k)
        if a is None:
            continue
        if is_sparse(a):
            # a CSR matrix is its three arrays, each mapped as it is stored
            sparse[k] = list(a.shape)
            for part in _CSR_PARTS:
                arrays[f"{k}.{part}"] = np.ascontiguousarray(getattr(a, part))
        else:
            arrays[k] = np.ascontiguousarray(a, dtype=np.float64)
    meta = {
        "name": base.name,
        "label": base.label,
        "task": base.data.task,
        "n_classes": base.data.n_classes,
        "class_names": None if base.data.class_names is None else list(base.data.class_names),
        "time_ordered": base.time_ordered,
    }
    h = hashlib.sha256(json.dumps(meta, sort_keys=True).encode())
    for k, a in arrays.items():
        # dense entries are hashed as before sparse entries existed
        h.update(
            f"{k}{a.shape}".encode() if a.dtype == np.float64 else f"{k}{a.shape}{a.dtype}".encode()
        )
        h.update(a.data)
    data_id = h.hexdigest()[:32]
    extra = {"sparse": sparse} if sparse else {}
    head = {**meta, "data_id": data_id, "arrays": layout(arrays), **extra}
    record_path, data_path = folder / f"{key}.json", folder / f"{key}.data"
    folder.mkdir(parents=True, exist_ok=True)
    record_path.unlink(missing_ok=True)
    try:
        write_arrays(data_path, _MAGIC, head, arrays)
        record = {"data_id": data_id, "size": data_path.stat().st_size, "sources": sources}
        atomic_write_bytes(record_path, json.dumps(record).encode())
    except BaseException:
        for path in (record_path, data_path):
            with contextlib.suppress(OSError):
                path.unlink()
        raise
    return data_id


def _read_base(path: Path) -> tuple[DatasetArrays, str]:
    """Map a cached data file read-only; return its arrays and content id."""
    head, arrays = map_arrays(path, _MAGIC)
    for k, shape in head.get("sparse", {}).items():
        import scipy.sparse as sp

        parts = tuple(arrays.pop(f"{k}.{part}") for part in _CSR_PARTS)
        arrays[k] = sp.csr_matrix(parts, shape=tuple(shape), copy=False)
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
    base = DatasetArrays(data, head["name"], head["label"], bool(head["time_ordered"]), frozen=True)
    return base, head["data_id"]


def _cached_base(folder: Path, key: str, data_id: str | None) -> tuple[DatasetArrays, str] | None:
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


def _nbytes(base: DatasetArrays) -> int:
    """Bytes of a data set's arrays (a CSR matrix's three arrays)."""
    total = 0
    for k in _ARRAY_NAMES:
        a = getattr(base.data, k)
        parts = () if a is None else (a.data, a.indices, a.indptr) if is_sparse(a) else (a,)
        total += sum(int(p.nbytes) for p in parts)
    return total


def get_stream(spec: StreamSpec, registry: Any, *, cache: Path | None = None) -> Stream:
    """Load a stream from the cache, building and caching it on first use.

    A cached stream is used only while the local files its data set was read from keep
    their content (checked by size, mtime, ctime and inode, then by SHA-256 when one of
    them changed); an
    edited file gives a rebuilt stream, with a new ``stream_id``. A cache that cannot be
    written (read-only, full) only costs a rebuild next time. A large stream's order file
    (its row indices and labels) that is missing, damaged or shorter than its record says
    gives a rebuilt one, never other rows.
    """
    folder = (cache or cache_dir()) / "data" / _folder_name(spec)
    entry = folder / f"{_stream_key(spec)}.stream.json"
    meta = _read_json(entry)
    if meta is not None:
        try:
            found = _cached_base(folder, meta["data_key"], meta["data_id"])
            if found is not None:
                return _served(spec, found[0], _cached_plan(entry, meta, found[0]), entry, meta)
        except (KeyError, TypeError, _Damaged):
            pass  # a damaged record or order file is rebuilt
    cls, _ = registry.resolve("dataset", spec.dataset)
    key = _data_key(spec, seeded=getattr(cls, "source", "generator") == "generator")
    found = _cached_base(folder, key, None)
    if found is not None:
        base, data_id = found
    else:
        base, sources = load_dataset(spec, registry)
        records = _source_records(sources)
        data_id = None
        if records is not None:
            with contextlib.suppress(OSError):
                data_id = write_dataset(folder, key, base, records)
        if data_id is not None and _nbytes(base) > gathered.LAZY_BYTES:
            # A large data set is served from the cache file just written, as every later
            # load is: the stream's arrays are then its read-only map, not copies of the
            # data set's arrays (a small one keeps the arrays it was built from).
            written = _cached_base(folder, key, data_id)
            base = written[0] if written is not None else base
    record = (
        None if data_id is None else {"data_key": key, "data_id": data_id, "spec": spec.to_dict()}
    )
    return _served(spec, base, None, entry, record)


def _served(
    spec: StreamSpec,
    base: DatasetArrays,
    plan: RowPlan | None,
    entry: Path,
    record: dict[str, Any] | None,
) -> Stream:
    """The stream of ``spec`` over ``base``: its plan as cached, or drawn from the seed.

    A plan drawn for a large stream of a mapped data set is written to the stream's order
    file and mapped back, so that the stream holds no array of its length (the rows and
    labels are read a chunk at a time); the stream's record (``record``, without its id
    if new) is written with the order file's size.
    """
    if plan is not None:
        arrays, _ = apply_plan(spec, base, plan)
        return Stream.of(spec, arrays, str(record["stream_id"]))  # type: ignore[index]
    plan = plan_rows(spec, base)
    arrays, plan = apply_plan(spec, base, plan)
    stream_id = None if record is None else record.get("stream_id")
    stream = Stream.of(spec, arrays, stream_id)
    stored = plan.stored(base) if lazy_stream(spec, base, len(plan.y)) else {}
    if record is None or (stream_id is not None and not stored):
        return stream  # no cache, or a small stream whose record is written already
    record = {**record, "stream_id": stream.stream_id}
    with contextlib.suppress(OSError, _Damaged):
        if stored:
            order = _order_path(entry)
            head = {"n": len(plan.y), "task": plan.task, "n_classes": plan.n_classes}
            write_arrays(order, _ORDER_MAGIC, {**head, "arrays": layout(stored)}, stored)
            record["order"] = {"size": order.stat().st_size}
            mapped = _cached_plan(entry, record, base)
            if mapped is not None:
                # the drawn arrays are dropped: the stream reads the order file's map
                arrays, _ = apply_plan(spec, base, mapped)
                stream = Stream.of(spec, arrays, stream.stream_id)
        atomic_write_bytes(entry, json.dumps(record).encode())
    return stream


def _order_path(entry: Path) -> Path:
    """The order file beside a stream's record."""
    return entry.with_name(entry.name.replace(".stream.json", ".order"))


class _Damaged(Exception):
    """A stream's order file is missing, damaged, or not the size its record says."""


def _cached_plan(entry: Path, record: dict[str, Any], base: DatasetArrays) -> RowPlan | None:
    """The plan of a stream's order file, mapped; None when its record names none (the
    stream is small: its plan is drawn again).

    Raises
    ------
    _Damaged
        When the file is missing, damaged or not the size its record says (the stream is
        then rebuilt).
    """
    if "order" not in record:
        return None
    path = _order_path(entry)
    try:
        if path.stat().st_size != record["order"]["size"]:
            raise _Damaged(path)
        head, arrays = map_arrays(path, _ORDER_MAGIC)
        n, data = int(head["n"]), base.data
        return RowPlan(
            y=arrays.get("y", data.y[:n]),
            y_test=arrays.get("y_test", data.y_test),
            rows=arrays.get("rows"),
            test_rows=arrays.get("test_rows"),
            task=str(head["task"]),
            n_classes=int(head["n_classes"]),
            center=arrays.get("center"),
            width=arrays.get("width"),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise _Damaged(path) from exc
