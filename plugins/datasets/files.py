"""Data sets read from the user's files or a verified download: LIBSVM, CSV, NPZ, IDX and URL.

Each names its files in its parameters, e.g. ``libsvm[path=train.txt,test_path=test.txt]``
or ``csv[path=data.csv,label=class,task=multiclass]``. Labels are encoded for the chosen
``task`` by :func:`kbench.data.readers.encode_labels` (binary: two classes to −1/+1; multiclass:
sorted classes to 0..C−1; regression: numbers as they are). A relative path is relative
to the folder kbench runs in, or in a study file to the study file's folder. A path
holding commas or brackets is quoted: ``csv[path="a,b[1].csv"]``. Bad files raise a
one-line DataError naming the file and, for text formats, the line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

from kbench.api import (
    MAX_ELEMENTS,
    Data,
    DataError,
    Dataset,
    Entry,
    cache_dir,
    catalogue,
    check_range,
    encode_labels,
    fetch,
    fetch_url,
    folder,
    hookimpl,
    idx_header,
    is_cached,
    npz_shapes,
    param,
    read_csv,
    read_idx,
    read_idx_pair,
    read_libsvm,
    read_libsvm_csr,
    read_npz,
    suggest,
)

Task = Literal["binary", "multiclass", "regression"]
Header = Literal["auto", "yes", "no"]
Delimiter = Literal["auto", "comma", "semicolon", "tab", "space"]


def _path(text: str) -> Path:
    return Path(text).expanduser()


def _missing_files(owner: str, files: list[tuple[str, str, bool]]) -> str | None:
    """The first problem with a data set's files: (parameter, value, required) triples."""
    for pname, value, required in files:
        if not value:
            if required:
                return f"{owner} reads a file: give it as {owner}[{pname}=FILE,...]"
            continue
        p = _path(value)
        if not p.is_file():
            return f"{p}: no such file ({owner} parameter {pname})"
    return None


class _FileDataset(Dataset):
    """Label encoding and checks shared by the file formats."""

    source = "file"

    def _data(
        self, X: np.ndarray, y: object, Xt: np.ndarray | None, yt: object | None, where: str
    ) -> Data:
        if Xt is not None and Xt.shape[1] != X.shape[1]:
            raise DataError(
                f"{where}: the test file has {Xt.shape[1]} features but the training file {X.shape[1]}"
            )
        y2, yt2, n_classes, names = encode_labels(y, yt, self.task, where)  # type: ignore[arg-type]
        return Data(
            X=X, y=y2, X_test=Xt, y_test=yt2, task=self.task, n_classes=n_classes, class_names=names
        )


def _check_size(where: str, n: int, d: int) -> None:
    if n * d > MAX_ELEMENTS:
        raise DataError(
            f"{where}: {n} rows × {d} features would need {n * d * 8 / 1e9:.1f} GB as a dense "
            f"float64 array (kbench's limit is {MAX_ELEMENTS} values)"
        )


def _widen(X: sp.csr_matrix, d: int) -> sp.csr_matrix:
    """X with d columns (d at least its own): the same CSR arrays, a wider shape."""
    import scipy.sparse as sp  # only when reading a LIBSVM file: plugin loading skips it

    return X if X.shape[1] == d else sp.csr_matrix((X.data, X.indices, X.indptr), (X.shape[0], d))


def _load_libsvm(
    path: Path, test_path: Path | None, n_features: int
) -> tuple[sp.csr_matrix, np.ndarray, sp.csr_matrix | None, np.ndarray | None]:
    nf = n_features or None
    X, y = read_libsvm_csr(path, nf)
    if test_path is None:
        return X, y, None, None
    Xt, yt = read_libsvm_csr(test_path, nf)
    d = max(X.shape[1], Xt.shape[1])  # the highest index of either file sets the dimension
    return _widen(X, d), y, _widen(Xt, d), yt


class Libsvm(_FileDataset):
    """A LIBSVM/svmlight file (``label index:value ...``), with an optional test file, or a
    data set of the LIBSVM collection by name.

    The format of the LIBSVM data-set page; gzip, bz2 and xz files are read as they are.
    Without ``n_features`` the dimension is the highest feature index of the two files.
    The features are read sparse (CSR) and stay sparse through the stream; the stream
    option ``dense=true`` densifies the whole stream (learners that take only dense rows
    otherwise get its rows densified a block at a time).
    ``libsvm[name=ijcnn1]`` reads the collection's entry (``kbench list datasets`` shows
    them all): its files are downloaded once into ``$KBENCH_DATA/libsvm/``, verified, and
    decompressed; a file placed there by hand is used without the network (see
    ``docs/datasets.md``).

    Parameters
    ----------
    path
        The training file.
    test_path
        The test file ('' for none).
    n_features
        The dimension (0: the highest index present; with ``name``, the entry's).
    task
        ``binary`` (two label values, to −1/+1), ``multiclass`` or ``regression``. With
        ``name``, the entry's task unless another than ``binary`` is asked for.
    name
        A data set of the LIBSVM collection ('' for none: read ``path``).
    """

    name = "libsvm"
    path_params = ("path", "test_path")
    added_params = ("name",)
    task = "binary"
    #: ``load`` returns CSR features (see ``docs/sparse.md``).
    sparse = True

    def __init__(
        self,
        *,
        path: str = "",
        test_path: str = "",
        n_features: int = 0,
        task: Task = "binary",
        name: str = "",
    ) -> None:
        check_range("libsvm", "n_features", n_features, low=0)
        self.path, self.test_path, self.n_features = path, test_path, n_features
        self.task = task  # type: ignore[misc]  # the file decides the task
        self.entry: Entry | None = None
        if name:
            if path or test_path:
                raise ValueError("libsvm: give either name= (the collection) or path=, not both")
            known = catalogue()
            if name not in known:
                raise ValueError(
                    f"libsvm: no data set {name!r} in the LIBSVM collection"
                    f"{suggest(name, known)}; kbench list datasets shows them"
                )
            self.entry = known[name]
            if task == "binary":  # the default: the entry decides
                self.task = self.entry.task  # type: ignore[misc]
        self.task_param = task  # the parameter as given (the spec shows it, not the entry's)
        # Kept as ``collection``: ``name`` is the component's registered name ("libsvm").
        self.collection = name

    def get_params(self) -> dict[str, Any]:
        return {**super().get_params(), "name": self.collection, "task": self.task_param}

    def unavailable(self) -> str | None:
        if self.entry is not None:
            return None
        return _missing_files(
            "libsvm", [("path", self.path, True), ("test_path", self.test_path, False)]
        )

    def download_needed(self) -> str | None:
        if self.entry is None or is_cached(self.entry, folder()):
            return None
        return f"libsvm[name={self.entry.name}] is not in {folder()} yet (loading downloads it)"

    def load(self, seed: int) -> Data:
        if self.entry is not None:
            train, test = fetch(self.entry)
            X, y, Xt, yt = _load_libsvm(train, test, self.n_features or self.entry.d)
            return self._data(X, y, Xt, yt, f"libsvm[name={self.entry.name}]")
        X, y, Xt, yt = _load_libsvm(
            _path(self.path), _path(self.test_path) if self.test_path else None, self.n_features
        )
        return self._data(X, y, Xt, yt, self.path)

    def info(self):
        if self.entry is None:
            return {}
        return _entry_info(self.entry)

    @classmethod
    def variants(cls) -> list[dict[str, Any]]:
        try:
            entries = catalogue().values()
        except DataError as exc:  # a broken $KBENCH_LIBSVM_CATALOGUE shows as one row
            return [{"name": "libsvm[name=...]", "task": "?", "unavailable": str(exc)}]
        where = folder()
        rows = []
        for e in entries:
            row: dict[str, Any] = {"name": f"libsvm[name={e.name}]", "task": e.task}
            row["source"] = "download"
            row.update(_entry_info(e))
            row["size"], row["cached"] = e.size, is_cached(e, where)
            rows.append(row)
        return rows


def _entry_info(e: Entry) -> dict[str, Any]:
    out: dict[str, Any] = {"n": e.n, "d": e.d}
    if e.n_test:
        out["n_test"] = e.n_test
    if e.classes:
        out["classes"] = e.classes
    return out


class HeartScale(_FileDataset):
    """Statlog heart, LIBSVM's ``heart_scale``: 270 patients, 13 features scaled to [−1, 1], 2 classes.

    The LIBSVM-format example file shipped by Debian's ``liblinear-tools`` package.
    """

    name = "heart_scale"
    task = "binary"
    source = "debian"
    PATH = "/usr/share/doc/liblinear-tools/examples/heart_scale"

    def unavailable(self) -> str | None:
        if Path(self.PATH).is_file():
            return None
        return (
            "heart_scale comes with Debian's liblinear-tools; install it with: "
            "sudo apt-get install -y --no-install-recommends liblinear-tools"
        )

    def load(self, seed: int) -> Data:
        X, y = read_libsvm(self.PATH, 13)
        return self._data(X, y, None, None, self.PATH)

    def info(self):
        return {"n": 270, "d": 13, "classes": 2}


def _load_csv(
    path: Path, test_path: Path | None, label: str, header: str, delimiter: str
) -> tuple[np.ndarray, list[str], np.ndarray | None, list[str] | None]:
    X, y, names = read_csv(path, label, header=header, delimiter=delimiter)
    if test_path is None:
        return X, y, None, None
    Xt, yt, names_t = read_csv(test_path, label, header=header, delimiter=delimiter)
    if len(names_t) != len(names):
        raise DataError(
            f"{test_path}: has {len(names_t)} feature columns but {path} has {len(names)}"
        )
    return X, y, Xt, yt


class Csv(_FileDataset):
    """A delimited text file (CSV) with one label column, with an optional test file.

    Every other column is a feature and must hold finite numbers; a cell that does not
    is an error naming the file, line and column. Labels may be numbers or names.

    Parameters
    ----------
    path
        The training file.
    label
        The label column: its header name or its 0-based index (``-1``: the last).
    test_path
        The test file ('' for none), with the same columns.
    header
        ``auto`` (a first row of names above numbers is a header), ``yes`` or ``no``.
    delimiter
        ``auto`` (``,`` ``;`` or tab, from the first line; else whitespace), ``comma``,
        ``semicolon``, ``tab`` or ``space``.
    task
        ``binary`` (two label values, to −1/+1), ``multiclass`` or ``regression``.
    """

    name = "csv"
    path_params = ("path", "test_path")
    path: str = param("")
    label: str = param("-1")
    test_path: str = param("")
    header: Header = param("auto")
    delimiter: Delimiter = param("auto")
    task: Task = param("binary")  # type: ignore[misc]  # the file decides the task

    def unavailable(self) -> str | None:
        return _missing_files(
            "csv", [("path", self.path, True), ("test_path", self.test_path, False)]
        )

    def load(self, seed: int) -> Data:
        X, y, Xt, yt = _load_csv(
            _path(self.path),
            _path(self.test_path) if self.test_path else None,
            self.label,
            self.header,
            self.delimiter,
        )
        return self._data(X, y, Xt, yt, self.path)


class Npz(_FileDataset):
    """A NumPy ``.npz`` archive with arrays ``X``, ``y`` and optionally ``X_test``, ``y_test``.

    ``X`` arrays are examples × features; no pickled objects are loaded.

    Parameters
    ----------
    path
        The archive.
    task
        ``binary`` (two label values, to −1/+1), ``multiclass`` or ``regression``.
    """

    name = "npz"
    path_params = ("path",)
    path: str = param("")
    task: Task = param("binary")  # type: ignore[misc]  # the file decides the task

    def unavailable(self) -> str | None:
        return _missing_files("npz", [("path", self.path, True)])

    def load(self, seed: int) -> Data:
        a = read_npz(_path(self.path))
        return self._data(a["X"], a["y"], a.get("X_test"), a.get("y_test"), self.path)

    def info(self):
        if self.unavailable():
            return {}
        try:  # array headers, and the labels (one number per example)
            shapes = npz_shapes(_path(self.path))
            out = {"n": shapes["X"][0], "d": int(np.prod(shapes["X"][1:]))}
            if "X_test" in shapes:
                out["n_test"] = shapes["X_test"][0]
            if self.task == "binary":
                out["classes"] = 2
            elif self.task == "multiclass":
                with np.load(_path(self.path), allow_pickle=False) as z:
                    labels = [z["y"]] + ([z["y_test"]] if "y_test" in z.files else [])
                out["classes"] = len(np.unique(np.concatenate([np.ravel(v) for v in labels])))
        except Exception:  # a damaged file is reported by load(), not by a listing
            return {}
        return out


class Idx(_FileDataset):
    """IDX files (MNIST's format): an image file and a label file, optionally a test pair.

    Each image becomes one row of its pixels, as stored (use ``scale=`` or divide
    yourself). The header's dimensions must match the file's size.

    Parameters
    ----------
    images
        The training images (e.g. ``train-images-idx3-ubyte.gz``).
    labels
        The training labels.
    test_images
        The test images ('' for none).
    test_labels
        The test labels ('' for none; given with test_images).
    task
        ``multiclass`` (labels to 0..C−1), ``binary`` or ``regression``.
    """

    name = "idx"
    path_params = ("images", "labels", "test_images", "test_labels")
    images: str = param("")
    labels: str = param("")
    test_images: str = param("")
    test_labels: str = param("")
    task: Task = param("multiclass")  # type: ignore[misc]  # the files decide the task

    def __post_init__(self) -> None:
        if bool(self.test_images) != bool(self.test_labels):
            raise ValueError("idx: give test_images and test_labels together")

    def unavailable(self) -> str | None:
        return _missing_files(
            "idx",
            [
                ("images", self.images, True),
                ("labels", self.labels, True),
                ("test_images", self.test_images, False),
                ("test_labels", self.test_labels, False),
            ],
        )

    def load(self, seed: int) -> Data:
        X, y = read_idx_pair(_path(self.images), _path(self.labels))
        Xt = yt = None
        if self.test_images:
            Xt, yt = read_idx_pair(_path(self.test_images), _path(self.test_labels))
        return self._data(X, y, Xt, yt, self.images)

    def info(self):
        if self.unavailable():
            return {}
        try:  # the headers, and the labels (one byte per example)
            _, dims = idx_header(_path(self.images))
            out = {"n": dims[0], "d": int(np.prod(dims[1:]))}
            labels = [read_idx(_path(self.labels))]
            if self.test_images:
                out["n_test"] = idx_header(_path(self.test_images))[1][0]
                labels.append(read_idx(_path(self.test_labels)))
            if self.task == "binary":
                out["classes"] = 2
            elif self.task == "multiclass":
                out["classes"] = len(np.unique(np.concatenate(labels)))
        except Exception:  # a damaged file is reported by load(), not by a listing
            return {}
        return out


class Url(_FileDataset):
    """A data file downloaded once into kbench's cache folder and verified by its SHA-256 checksum.

    ``url[url=https://host/a9a.gz,sha256=<64 hex digits>,format=libsvm]``. The file goes to
    ``<cache>/downloads/`` (``$KBENCH_CACHE`` or ``~/.cache/kbench``); later loads use the
    cached copy without the network. A download whose checksum differs is an error and
    never replaces the cached file. For machines without a network, copy the file there.

    Parameters
    ----------
    url
        http, https or file URL of the training file.
    sha256
        Its SHA-256 checksum (required: kbench never uses an unverified download).
    format
        ``libsvm``, ``csv`` or ``npz``.
    test_url
        URL of a test file ('' for none), in the same format.
    test_sha256
        Its SHA-256 checksum.
    label
        CSV only: the label column (header name or 0-based index).
    n_features
        LIBSVM only: the dimension (0: the highest index present).
    task
        ``binary`` (two label values, to −1/+1), ``multiclass`` or ``regression``.
    """

    name = "url"
    source = "url"
    url: str = param("")
    sha256: str = param("")
    format: Literal["libsvm", "csv", "npz"] = param("libsvm")
    test_url: str = param("")
    test_sha256: str = param("")
    label: str = param("-1")
    n_features: int = param(0, low=0)
    task: Task = param("binary")  # type: ignore[misc]  # the file decides the task

    def __post_init__(self) -> None:
        if bool(self.test_url) != bool(self.test_sha256):
            raise ValueError("url: give test_url and test_sha256 together")

    def unavailable(self) -> str | None:
        if not self.url:
            return "url downloads a file: give url[url=URL,sha256=CHECKSUM,format=libsvm|csv|npz]"
        if not self.sha256:
            return (
                f"url needs the file's checksum: url[url={self.url},sha256=<64 hex digits>] "
                f"(kbench never uses an unverified download)"
            )
        return None

    def load(self, seed: int) -> Data:
        folder = cache_dir() / "downloads"
        path = fetch_url(self.url, self.sha256, folder)
        test = fetch_url(self.test_url, self.test_sha256, folder) if self.test_url else None
        if self.format == "libsvm":
            # dense: the planner reads sparseness from the class, and url's other formats are dense
            X, y, Xt, yt = _load_libsvm(path, test, self.n_features)
            _check_size(self.url, X.shape[0] + (0 if Xt is None else Xt.shape[0]), X.shape[1])
            X, Xt = X.toarray(), None if Xt is None else Xt.toarray()
        elif self.format == "csv":
            X, y, Xt, yt = _load_csv(path, test, self.label, "auto", "auto")
        else:
            a = read_npz(path)
            X, y, Xt, yt = a["X"], a["y"], a.get("X_test"), a.get("y_test")
            if test is not None:
                b = read_npz(test)
                Xt, yt = b["X"], b["y"]
        return self._data(X, y, Xt, yt, self.url)


@hookimpl
def kbench_register_datasets(register):
    """Register the file-format and download data sets."""
    for cls in (Libsvm, HeartScale, Csv, Npz, Idx, Url):
        register(cls)
