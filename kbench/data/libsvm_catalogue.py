"""The LIBSVM data-set collection by name: where each file is, how big, and how it is verified.

``libsvm[name=a9a]`` reads the entry ``a9a`` of :data:`CATALOGUE`. Its files live in
``<data folder>/libsvm/`` (:func:`kbench.data.downloads.data_dir`, ``$KBENCH_DATA``) under the
name they have on the LIBSVM page; a compressed file is decompressed beside it once, and a
file placed there by hand (compressed as published, or already decompressed) is used
without the network.

Checksums: the LIBSVM page publishes none. An entry carries a SHA-256 only where kbench
holds a copy of the file whose provenance is recorded (said in a comment at the entry);
every other file is verified by its size when the size is recorded, and otherwise only by
parsing. Sizes of examples and features (n, n_test, d) are those stated on the LIBSVM page.

``$KBENCH_LIBSVM_CATALOGUE`` names a JSON file of further entries, or replacements, in the
form of :meth:`Entry.from_dict` (a mirror, a private set in the same layout)::

    {"myset": {"task": "binary", "d": 20, "n": 100,
               "train": {"url": "https://host/myset.bz2", "sha256": "...", "size": 1234}}}
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbench.core.errors import DataError
from kbench.data.downloads import data_dir, decompress, download, plain_name

BASE = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/"


@dataclass(frozen=True)
class File:
    """One published file: its URL and what is known to verify it."""

    url: str
    #: Bytes of the file as published (compressed if it is); None: not recorded.
    size: int | None = None
    #: SHA-256 of the file as published; None: none recorded (see the entry's comment).
    sha256: str | None = None

    @property
    def name(self) -> str:
        """The file's name on the server, which is also its name in the data folder."""
        return self.url.rstrip("/").rsplit("/", 1)[-1]

    @property
    def compression(self) -> str | None:
        """``bz2``, ``xz``, ``gz`` or None (plain text), from the name."""
        return {".bz2": "bz2", ".xz": "xz", ".gz": "gz"}.get(Path(self.name).suffix)


@dataclass(frozen=True)
class Entry:
    """A data set of the collection: its task, shape and files."""

    name: str
    task: str
    d: int
    n: int
    train: File
    test: File | None = None
    n_test: int = 0
    classes: int | None = None

    @classmethod
    def from_dict(cls, name: str, d: dict[str, Any]) -> Entry:
        """An entry from JSON: task, d, n, train {url, size, sha256}, and optionally
        test {...}, n_test, classes."""
        try:
            train = File(**d["train"])
            test = File(**d["test"]) if d.get("test") else None
            return cls(
                name=name,
                task=str(d.get("task", "binary")),
                d=int(d["d"]),
                n=int(d.get("n", 0)),
                train=train,
                test=test,
                n_test=int(d.get("n_test", 0)),
                classes=d.get("classes"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"catalogue entry {name!r}: {type(exc).__name__}: {exc}") from None

    @property
    def files(self) -> tuple[File, ...]:
        return (self.train,) if self.test is None else (self.train, self.test)

    @property
    def size(self) -> int | None:
        """Bytes to download (None when a file's size is not recorded)."""
        sizes = [f.size for f in self.files]
        return None if None in sizes else sum(s for s in sizes if s is not None)


def _f(path: str, size: int | None = None, sha256: str | None = None) -> File:
    return File(BASE + path, size, sha256)


# a9a: size and sha256 of kbench's bundled copy of the LIBSVM page's a9a and a9a.t
# (plugins/datasets/data/README.md: gzip-compressed, otherwise unchanged; the sha256 of the
# uncompressed files is recorded there, and the sizes measured from them).
_A9A = Entry(
    "a9a",
    "binary",
    123,
    32561,
    _f("binary/a9a", 2329875, "f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906"),
    _f("binary/a9a.t", 1164628, "1f448a153f0320399a7e40836eb207655b0bde0f21fc941cc472193daa9f5de9"),
    16281,
    2,
)

# The entries of this table have no published checksum, no recorded checksum and no recorded
# size: they are verified by parsing only (a wrong file fails with the file and line at
# fault, or by its shape). Checksums may be added once files fetched from the page have been
# recorded. Files are named within the page's folder of the task (binary/, multiclass/, ...).
# name, task, d, n, training file, test file, n_test, classes
# fmt: off
_PARSED_ONLY: tuple[tuple[str, str, int, int, str, str | None, int, int | None], ...] = (
    # --- binary ----------------------------------------------------------------------------
    ("w8a", "binary", 300, 49749, "w8a", "w8a.t", 14951, 2),
    ("ijcnn1", "binary", 22, 49990, "ijcnn1.bz2", "ijcnn1.t.bz2", 91701, 2),
    ("cod-rna", "binary", 8, 59535, "cod-rna", "cod-rna.t", 271617, 2),
    ("covtype.binary", "binary", 54, 581012, "covtype.libsvm.binary.bz2", None, 0, 2),
    ("covtype.binary.scale", "binary", 54, 581012, "covtype.libsvm.binary.scale.bz2", None, 0, 2),
    ("mushrooms", "binary", 112, 8124, "mushrooms", None, 0, 2),
    ("phishing", "binary", 68, 11055, "phishing", None, 0, 2),
    ("rcv1.binary", "binary", 47236, 20242, "rcv1_train.binary.bz2", "rcv1_test.binary.bz2",
     677399, 2),
    ("news20.binary", "binary", 1355191, 19996, "news20.binary.bz2", None, 0, 2),
    ("real-sim", "binary", 20958, 72309, "real-sim.bz2", None, 0, 2),
    ("webspam", "binary", 254, 350000, "webspam_wc_normalized_unigram.svm.xz", None, 0, 2),
    ("url", "binary", 3231961, 2396130, "url_combined.bz2", None, 0, 2),
    ("SUSY", "binary", 18, 5000000, "SUSY.xz", None, 0, 2),
    ("HIGGS", "binary", 28, 11000000, "HIGGS.xz", None, 0, 2),
    # --- multiclass ------------------------------------------------------------------------
    ("mnist", "multiclass", 780, 60000, "mnist.bz2", "mnist.t.bz2", 10000, 10),
    ("usps", "multiclass", 256, 7291, "usps.bz2", "usps.t.bz2", 2007, 10),
    ("letter", "multiclass", 16, 15000, "letter.scale", "letter.scale.t", 5000, 26),
    ("satimage", "multiclass", 36, 4435, "satimage.scale", "satimage.scale.t", 2000, 6),
    ("pendigits", "multiclass", 16, 7494, "pendigits", "pendigits.t", 3498, 10),
    # --- regression ------------------------------------------------------------------------
    ("cadata", "regression", 8, 20640, "cadata", None, 0, None),
    ("abalone", "regression", 8, 4177, "abalone", None, 0, None),
    ("cpusmall", "regression", 12, 8192, "cpusmall", None, 0, None),
    ("space_ga", "regression", 6, 3107, "space_ga", None, 0, None),
    ("YearPredictionMSD", "regression", 90, 463715, "YearPredictionMSD.bz2",
     "YearPredictionMSD.t.bz2", 51630, None),
)
# fmt: on

_BUILTIN: tuple[Entry, ...] = (
    _A9A,
    *(
        Entry(
            name,
            task,
            d,
            n,
            _f(f"{task}/{train}"),
            _f(f"{task}/{test}") if test else None,
            n_test,
            k,
        )
        for name, task, d, n, train, test, n_test, k in _PARSED_ONLY
    ),
)

#: The built-in catalogue, by name.
CATALOGUE: dict[str, Entry] = {e.name: e for e in _BUILTIN}


def catalogue() -> dict[str, Entry]:
    """The built-in catalogue with the entries of ``$KBENCH_LIBSVM_CATALOGUE`` over it."""
    path = os.environ.get("KBENCH_LIBSVM_CATALOGUE", "").strip()
    if not path:
        return CATALOGUE
    try:
        raw = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"KBENCH_LIBSVM_CATALOGUE={path}: cannot read it ({exc})") from None
    if not isinstance(raw, dict):
        raise DataError(f"KBENCH_LIBSVM_CATALOGUE={path}: expected a JSON object of entries")
    return CATALOGUE | {name: Entry.from_dict(name, d) for name, d in raw.items()}


def folder() -> Path:
    """Where the collection's files live: ``<data folder>/libsvm``."""
    return data_dir() / "libsvm"


def local_file(f: File, where: Path | None = None) -> Path | None:
    """The decompressed text of a compressed ``f`` if it is in the data folder, else None.

    (A file published uncompressed is verified on every use instead, by :func:`fetch_file`.)
    """
    if f.compression is None:
        return None
    plain = (where or folder()) / plain_name(f.name)
    return plain if plain.is_file() else None


def is_cached(entry: Entry, where: Path | None = None) -> bool:
    """Whether every file of ``entry`` is in the data folder (plain, or compressed as published)."""
    where = where or folder()
    return all(local_file(f, where) or (where / f.name).is_file() for f in entry.files)


def fetch_file(f: File, where: Path | None = None) -> Path:
    """The plain text of a published file: from the data folder, else downloaded (and
    decompressed) into it."""
    where = where or folder()
    plain = local_file(f, where)
    if plain is not None:
        return plain
    with _locked(where / f".{f.name}.lock"):
        plain = local_file(f, where)  # another process may have fetched it meanwhile
        if plain is not None:
            return plain
        got = download(f.url, where / f.name, size=f.size, sha256=f.sha256)
        if f.compression is None:
            return got
        return decompress(got, where / plain_name(f.name))


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (POSIX): processes that build streams at the same
    time fetch a file one after the other, never into the same ``.part``."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; one process at a time is assumed
        yield
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path, "a")  # noqa: SIM115 (closed by the with below, once locked)
    except OSError as exc:
        raise DataError(f"cannot write the data folder {path.parent}: {exc.strerror}") from None
    with fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def fetch(entry: Entry, where: Path | None = None) -> tuple[Path, Path | None]:
    """Plain-text paths of an entry's training and test files, fetched if need be."""
    train = fetch_file(entry.train, where)
    test = fetch_file(entry.test, where) if entry.test is not None else None
    return train, test
