"""Tests of kbench.data.readers: the LIBSVM, CSV, NPZ and IDX readers, label encoding and cached downloads.

Bad input must raise a one-line DataError naming the file (and line, for text); the
hypothesis fuzzers check that no input makes a reader raise anything else. Downloads are
tested against an HTTP server on 127.0.0.1 started by the test, never the internet.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import struct
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbench.core.errors import DataError
from kbench.data import libsvm_format, readers

HEART = Path("/usr/share/doc/liblinear-tools/examples/heart_scale")
FASHION = Path("/usr/share/datasets/fashion-mnist")


def one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text, f"error message is not one line: {text!r}"
    return text


def read_error(read: Callable[..., Any], path: Path, text: str, *args: Any) -> str:
    """Write ``text`` to ``path`` and return the one-line DataError that ``read(path, *args)``
    must raise."""
    path.write_text(text)
    with pytest.raises(DataError) as exc:
        read(path, *args)
    return one_line(exc)


# --------------------------------------------------------------------------------------------
# LIBSVM
# --------------------------------------------------------------------------------------------


def test_libsvm_reads_sparse_rows(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("+1 1:0.5 3:2 # comment\n\n-1 qid:3 2:1.5\n# only a comment\n1\n")
    X, y = libsvm_format.read_libsvm(p)
    assert y.tolist() == [1.0, -1.0, 1.0]
    assert X.tolist() == [[0.5, 0.0, 2.0], [0.0, 1.5, 0.0], [0.0, 0.0, 0.0]]
    X5, _ = libsvm_format.read_libsvm(p, n_features=5)
    assert X5.shape == (3, 5)


def test_libsvm_reads_gzip_by_content(tmp_path):
    p = tmp_path / "a.data"  # no .gz suffix: recognised by its first bytes
    p.write_bytes(gzip.compress(b"2 1:1 2:2\n1 2:3\n"))
    X, y = libsvm_format.read_libsvm(p)
    assert X.tolist() == [[1.0, 2.0], [0.0, 3.0]] and y.tolist() == [2.0, 1.0]


@pytest.mark.parametrize(
    "text, message",
    [
        ("1 1:1\nabc 1:2\n", ":2: label 'abc' is not a number"),
        ("1 1:1\n1 2:x\n", ":2: malformed feature '2:x'"),
        ("1 0:1\n", ":1: malformed feature '0:1' (indices start at 1)"),
        ("1 3:1 2:1\n", ":1: feature indices must increase (2 after 3)"),
        ("1 1:nan\n", ":1: feature 1 has non-finite value 'nan'"),
        ("inf 1:1\n", ":1: label 'inf' is not finite"),
        ("1 1\n", ":1: malformed feature '1'"),
        ("# nothing\n\n", ": no examples"),
    ],
)
def test_libsvm_errors_name_file_and_line(tmp_path, text, message):
    p = tmp_path / "bad.txt"
    error = read_error(libsvm_format.read_libsvm, p, text)
    assert error == f"{p}{message}" or error.startswith(f"{p}{message}")


def test_libsvm_index_beyond_declared_dimension(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("1 1:1\n-1 7:1\n")
    with pytest.raises(
        DataError, match=r"a.txt:2: feature index 7 exceeds the declared dimension 4"
    ):
        libsvm_format.read_libsvm(p, n_features=4)


def test_libsvm_missing_binary_and_huge(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        libsvm_format.read_libsvm(tmp_path / "none.txt")
    b = tmp_path / "bin"
    b.write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(DataError, match="not a UTF-8 text file"):
        libsvm_format.read_libsvm(b)
    big = tmp_path / "big.txt"
    big.write_text("1 4000000000:1\n")
    with pytest.raises(DataError, match=r"would need .* GB as a dense float64 array"):
        libsvm_format.read_libsvm(big)
    broken = tmp_path / "broken.gz"
    whole = gzip.compress("".join(f"{i % 2} 1:{i}\n" for i in range(500)).encode())
    broken.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(DataError, match="cannot read"):
        libsvm_format.read_libsvm(broken)


@pytest.mark.datasets
def test_libsvm_reads_heart_scale():
    """LIBSVM's heart_scale as Debian's liblinear-tools ships it, against scikit-learn's reader."""
    from sklearn.datasets import load_svmlight_file

    X, y = libsvm_format.read_libsvm(HEART)
    Xs, ys = load_svmlight_file(str(HEART))
    assert X.shape == (270, 13) and set(y) == {-1.0, 1.0}
    np.testing.assert_array_equal(X, Xs.toarray())
    np.testing.assert_array_equal(y, ys)


# --------------------------------------------------------------------------------------------
# CSV
# --------------------------------------------------------------------------------------------


def test_csv_header_and_label_by_name(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("a,class,b\n1,x,2\n3,y,4.5\n")
    X, y, names = readers.read_csv(p, "class")
    assert X.tolist() == [[1.0, 2.0], [3.0, 4.5]] and y == ["x", "y"] and names == ["a", "b"]


def test_csv_label_by_index_and_no_header(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1,2,0\n3,4,1\n")
    X, y, names = readers.read_csv(p, -1)
    assert X.tolist() == [[1.0, 2.0], [3.0, 4.0]] and y == ["0", "1"] and names == ["col0", "col1"]
    X0, y0, _ = readers.read_csv(p, "0")
    assert X0.tolist() == [[2.0, 0.0], [4.0, 1.0]] and y0 == ["1", "3"]


@pytest.mark.parametrize(
    "text, delimiter",
    [
        ("1;2;a\n3;4;b\n", "auto"),
        ("1\t2\ta\n3\t4\tb\n", "auto"),
        ("1  2 a\n 3 4   b\n", "auto"),
        ("1;2;a\n3;4;b\n", "semicolon"),
        ("1 2 a\n3 4 b\n", "space"),
    ],
)
def test_csv_delimiters(tmp_path, text, delimiter):
    p = tmp_path / "d.txt"
    p.write_text(text)
    X, y, _ = readers.read_csv(p, -1, delimiter=delimiter)
    assert X.tolist() == [[1.0, 2.0], [3.0, 4.0]] and y == ["a", "b"]


def test_csv_skips_comments_and_blank_lines_and_reads_gzip(tmp_path):
    p = tmp_path / "d.csv.gz"
    p.write_bytes(gzip.compress(b"# made by hand\nx,y,label\n\n1,2,a\r\n3,4,b\n"))
    X, y, names = readers.read_csv(p, "label")
    assert X.shape == (2, 2) and y == ["a", "b"] and names == ["x", "y"]


def test_csv_non_numeric_cell_names_file_line_and_column(tmp_path):
    p = tmp_path / "d.csv"
    error = read_error(readers.read_csv, p, "age,height,label\n30,1.8,a\n41,tall,b\n", "label")
    assert error == f"{p}:3: column 2 ('height'): 'tall' is not a number"


@pytest.mark.parametrize(
    "text, label, message",
    [
        ("a,b,c\n1,2,3\n", "d", "no label column 'd' (columns: 'a', 'b', 'c')"),
        ("1,2,3\n4,5,6\n", "5", "label column 5 does not exist (the file has 3 columns, 0..2)"),
        ("1,2,3\n4,5,6\n", "-4", "label column -4 does not exist"),
        ("a,b\n1,2\n3\n", "b", ":3: has 1 cells, expected 2 (as in line 1)"),
        ("a,b\n1,\n", "b", ":2: column 2 ('b'): the label is empty"),
        ("a,b\n,1\n", "b", ":2: column 1 ('a'): empty cell"),
        ("a,b\n1e999,1\n", "b", ":2: column 1 ('a'): '1e999' is not finite"),
        ("a,b\n", "b", "no data rows after the header"),
        ("\n\n# x\n", "-1", "no rows"),
        ("1\n2\n", "-1", "needs at least two columns"),
    ],
)
def test_csv_errors(tmp_path, text, label, message):
    p = tmp_path / "d.csv"
    error = read_error(readers.read_csv, p, text, label)
    assert message in error and str(p) in error


def test_csv_label_name_without_header_row(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1,2,3\n4,5,6\n")
    with pytest.raises(
        DataError, match="label column 'y' names a column, but the file has no header row"
    ):
        readers.read_csv(p, "y", header="no")


# --------------------------------------------------------------------------------------------
# NPZ
# --------------------------------------------------------------------------------------------


def test_npz_reads_train_and_test(tmp_path):
    p = tmp_path / "d.npz"
    np.savez_compressed(
        p,
        X=np.arange(6).reshape(3, 2),
        y=np.array([0, 1, 0]),
        X_test=np.ones((2, 2), np.float32),
        y_test=np.array([[1], [0]]),
    )
    a = readers.read_npz(p)
    assert (
        a["X"].dtype == np.float64 and a["X"].shape == (3, 2) and a["y_test"].tolist() == [1.0, 0.0]
    )
    assert readers.npz_shapes(p) == {"X": (3, 2), "y": (3,), "X_test": (2, 2), "y_test": (2, 1)}


@pytest.mark.parametrize(
    "arrays, message",
    [
        ({"X": np.ones((2, 2))}, "no array 'y' (it holds: X)"),
        (
            {"X": np.ones((2, 2)), "y": np.ones(2), "X_test": np.ones((1, 2))},
            "has X_test without y_test",
        ),
        ({"X": np.ones((2, 2, 2)), "y": np.ones(2)}, "array 'X' must be 2-D"),
        ({"X": np.ones((2, 2)), "y": np.ones(3)}, "X has 2 rows but y has 3"),
        (
            {"X": np.array([["a", "b"]]), "y": np.ones(1)},
            "array 'X' has dtype <U1; kbench needs numbers",
        ),
        (
            {"X": np.array([[1.0, np.nan]]), "y": np.ones(1)},
            "array 'X' has a NaN or infinite value in row 0",
        ),
        (
            {
                "X": np.ones((2, 2)),
                "y": np.ones(2),
                "X_test": np.ones((1, 3)),
                "y_test": np.ones(1),
            },
            "X_test has 3 columns but X has 2",
        ),
        ({"X": np.ones((0, 2)), "y": np.ones(0)}, "X has no rows"),
    ],
)
def test_npz_errors(tmp_path, arrays, message):
    p = tmp_path / "d.npz"
    np.savez(p, **arrays)
    with pytest.raises(DataError) as exc:
        readers.read_npz(p)
    assert message in one_line(exc)


def test_npz_refuses_pickles_and_non_archives(tmp_path):
    p = tmp_path / "obj.npz"
    np.savez(p, X=np.array([{"a": 1}], dtype=object), y=np.ones(1))
    with pytest.raises(DataError, match=r"not a readable \.npz archive"):
        readers.read_npz(p)
    single = tmp_path / "single.npy"
    np.save(single, np.ones(3))
    with pytest.raises(DataError, match=r"not an \.npz archive"):
        readers.read_npz(single)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(DataError, match=r"not a readable \.npz archive"):
        readers.read_npz(junk)


# --------------------------------------------------------------------------------------------
# IDX
# --------------------------------------------------------------------------------------------


def write_idx(
    path: Path,
    a: np.ndarray,
    code: int = 0x08,
    *,
    compress: bool = False,
    extra: bytes = b"",
    dims: tuple[int, ...] | None = None,
) -> Path:
    dims = a.shape if dims is None else dims
    raw = (
        bytes([0, 0, code, len(dims)]) + struct.pack(f">{len(dims)}I", *dims) + a.tobytes() + extra
    )
    path.write_bytes(gzip.compress(raw) if compress else raw)
    return path


def test_idx_round_trip_types_and_gzip(tmp_path):
    imgs = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    a = readers.read_idx(write_idx(tmp_path / "i", imgs, compress=True))
    assert a.dtype == np.uint8 and a.shape == (2, 3, 4) and np.array_equal(a, imgs)
    ints = np.array([-5, 70000], dtype=">i4")
    assert readers.read_idx(write_idx(tmp_path / "j", ints, 0x0C)).tolist() == [-5, 70000]
    floats = np.array([1.5, -2.25], dtype=">f8")
    assert readers.read_idx(write_idx(tmp_path / "f", floats, 0x0E)).tolist() == [1.5, -2.25]
    assert readers.idx_header(tmp_path / "i")[1] == (2, 3, 4)


def test_idx_pair_makes_rows(tmp_path):
    imgs = write_idx(tmp_path / "imgs", np.arange(2 * 2 * 2, dtype=np.uint8).reshape(2, 2, 2))
    labs = write_idx(tmp_path / "labs", np.array([3, 1], dtype=np.uint8))
    X, y = readers.read_idx_pair(imgs, labs)
    assert X.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]] and y.tolist() == [3.0, 1.0]
    short = write_idx(tmp_path / "short", np.array([3], dtype=np.uint8))
    with pytest.raises(DataError, match=r"has 2 images but .* has 1 labels"):
        readers.read_idx_pair(imgs, short)


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda p: write_idx(p, np.zeros(5, np.uint8), dims=(6,)),
            "IDX header says 6 values of 1 byte(s) = 6 bytes after the 8-byte header, but the file has 5",
        ),
        (
            lambda p: write_idx(p, np.zeros(5, np.uint8), extra=b"\x00"),
            "IDX header says 5 values of 1 byte(s) = 5 bytes after the 8-byte header, but the file has more than that",
        ),
        (
            lambda p: write_idx(p, np.zeros((2, 2), ">i4"), 0x0C, dims=(2, 3)),
            "IDX header says 2 × 3 values of 4 byte(s) = 24 bytes",
        ),
        (lambda p: p.write_bytes(b"\x01\x00\x08\x01\x00\x00\x00\x01\x00"), "not an IDX file"),
        (
            lambda p: p.write_bytes(b"\x00\x00\x07\x01\x00\x00\x00\x01\x00"),
            "unknown IDX data type code 0x07",
        ),
        (lambda p: p.write_bytes(b"\x00\x00\x08\x00"), "IDX header declares 0 dimensions"),
        (lambda p: p.write_bytes(b"\x00\x00\x08\x03\x00\x00"), "the file ends inside the header"),
        (lambda p: p.write_bytes(b"\x00\x00"), "too short for an IDX header"),
    ],
)
def test_idx_header_size_mismatch(tmp_path, make, message):
    p = tmp_path / "bad-idx"
    make(p)
    with pytest.raises(DataError) as exc:
        readers.read_idx(p)
    assert message in one_line(exc) and str(p) in one_line(exc)


@pytest.mark.datasets
def test_idx_reads_fashion_mnist_files():
    """The Debian package's real IDX files: headers, sizes and class balance."""
    X, y = readers.read_idx_pair(
        FASHION / "t10k-images-idx3-ubyte.gz", FASHION / "t10k-labels-idx1-ubyte.gz"
    )
    assert X.shape == (10000, 784) and X.min() == 0 and X.max() == 255
    assert np.bincount(y.astype(int)).tolist() == [1000] * 10
    assert readers.idx_header(FASHION / "train-images-idx3-ubyte.gz") == (
        np.dtype(">u1"),
        (60000, 28, 28),
    )


# --------------------------------------------------------------------------------------------
# Labels
# --------------------------------------------------------------------------------------------


def test_encode_binary_keeps_known_meanings_and_orders_names():
    assert readers.encode_labels([1, -1, 1], None, "binary", "t")[0].tolist() == [1, -1, 1]
    y, _, n, names = readers.encode_labels(np.array([0, 1, 1]), None, "binary", "t")
    assert y.tolist() == [-1, 1, 1] and n == 2 and names == ("0", "1")
    y, yt, _, names = readers.encode_labels(["spam", "ham"], ["ham"], "binary", "t")
    assert y.tolist() == [1, -1] and yt.tolist() == [-1] and names == ("ham", "spam")
    y, _, _, names = readers.encode_labels(
        ["2", "4.0", "4"], None, "binary", "t"
    )  # numeric text is numeric
    assert y.tolist() == [-1, 1, 1] and names == ("2", "4")
    assert readers.encode_labels([1, 1], None, "binary", "t")[0].tolist() == [1, 1]


def test_encode_multiclass_sorts_numbers_numerically():
    y, yt, n, names = readers.encode_labels(["10", "2", "3"], ["3", "11"], "multiclass", "t")
    assert names == ("2", "3", "10", "11") and n == 4
    assert y.tolist() == [2, 0, 1] and yt.tolist() == [1, 3]
    y, _, n, names = readers.encode_labels(np.array([5.0, 7.0, 5.0]), None, "multiclass", "t")
    assert y.tolist() == [0, 1, 0] and names == ("5", "7")


@pytest.mark.parametrize(
    "y, task, message",
    [
        (
            [1, 2, 3],
            "binary",
            "task=binary needs two classes but the labels take 3 values (1, 2, 3); use task=multiclass",
        ),
        ([7, 7], "binary", "task=binary needs two classes but all labels are 7"),
        (["a", "1.5"], "regression", "task=regression needs finite numeric labels, found 'a'"),
        (np.array([1.0, np.inf]), "multiclass", "label inf is not finite"),
        ([], "multiclass", "no labels"),
    ],
)
def test_encode_errors(y, task, message):
    with pytest.raises(DataError) as exc:
        readers.encode_labels(y, None, task, "where.csv")
    assert one_line(exc).startswith("where.csv: ") and message in one_line(exc)


# --------------------------------------------------------------------------------------------
# Downloads against a local HTTP server
# --------------------------------------------------------------------------------------------


def test_fetch_downloads_verifies_and_then_uses_the_cache(http_root, tmp_path):
    root, base, stop = http_root
    body = b"+1 1:1\n-1 2:1\n"
    (root / "train.txt").write_bytes(body)
    digest = hashlib.sha256(body).hexdigest()
    cache = tmp_path / "cache"
    path = readers.fetch_url(f"{base}/train.txt", digest, cache)
    assert path.read_bytes() == body and path == readers.cached_path(
        f"{base}/train.txt", digest, cache
    )
    assert [p.name for p in cache.iterdir()] == [path.name]  # no temporary file left behind
    stop()  # the server is gone: the second fetch must not need it
    assert readers.fetch_url(f"{base}/train.txt", digest.upper(), cache) == path


def test_fetch_checksum_mismatch_is_an_error_and_keeps_the_cached_copy(http_root, tmp_path):
    root, base, _ = http_root
    (root / "d.txt").write_bytes(b"new contents\n")
    expected = hashlib.sha256(b"old contents\n").hexdigest()
    cache = tmp_path / "cache"
    with pytest.raises(DataError) as exc:
        readers.fetch_url(f"{base}/d.txt", expected, cache)
    assert "checksum mismatch: expected sha256 " + expected in one_line(exc)
    assert not any(cache.iterdir())  # the bad download was discarded
    # a cached file that no longer verifies (damaged on disk) is not overwritten by a bad download
    target = readers.cached_path(f"{base}/d.txt", expected, cache)
    target.write_bytes(b"damaged\n")
    with pytest.raises(DataError, match="cached copy left as it was"):
        readers.fetch_url(f"{base}/d.txt", expected, cache)
    assert target.read_bytes() == b"damaged\n"
    assert sorted(p.name for p in cache.iterdir()) == [target.name]


def test_fetch_replaces_a_damaged_cached_copy_with_a_verified_download(http_root, tmp_path):
    root, base, _ = http_root
    (root / "d.txt").write_bytes(b"good\n")
    digest = hashlib.sha256(b"good\n").hexdigest()
    target = readers.cached_path(f"{base}/d.txt", digest, tmp_path)
    target.write_bytes(b"damaged\n")
    assert readers.fetch_url(f"{base}/d.txt", digest, tmp_path).read_bytes() == b"good\n"


def test_fetch_errors(http_root, tmp_path):
    _, base, _ = http_root
    digest = "0" * 64
    with pytest.raises(
        DataError, match=r"cannot download http://127\.0\.0\.1:\d+/missing\.txt: HTTP 404 "
    ):
        readers.fetch_url(f"{base}/missing.txt", digest, tmp_path)
    with pytest.raises(DataError, match="is not a SHA-256 checksum"):
        readers.fetch_url(f"{base}/x", "abc", tmp_path)
    with pytest.raises(DataError, match="kbench downloads http, https or file URLs"):
        readers.fetch_url("ftp://127.0.0.1/x", digest, tmp_path)
    with pytest.raises(DataError, match="cannot download"):
        readers.fetch_url("http://127.0.0.1:9/x", digest, tmp_path, timeout=5)
    assert not any(p.name.startswith(".download-") for p in tmp_path.iterdir())


# --------------------------------------------------------------------------------------------
# Fuzzing: no input raises anything but DataError
# --------------------------------------------------------------------------------------------

#: Examples per fuzzer; raise it for a longer hunt, e.g. KBENCH_FUZZ_EXAMPLES=5000.
FUZZ = settings(
    max_examples=int(os.environ.get("KBENCH_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
_folder = tempfile.mkdtemp(prefix="kbench-fuzz-")


@pytest.fixture(scope="module", autouse=True)
def _remove_fuzz_folder():
    yield
    shutil.rmtree(_folder, ignore_errors=True)


def _file(data: bytes, name: str) -> Path:
    p = Path(_folder) / name
    p.write_bytes(data)
    return p


_token = st.one_of(
    st.from_regex(r"[+-]?[0-9]{1,3}(\.[0-9]*)?(e[+-]?[0-9]{1,3})?", fullmatch=True),
    st.from_regex(r"[0-9]{1,4}:[+-]?[0-9.eEinfa]{0,6}", fullmatch=True),
    st.sampled_from(
        ["qid:1", "#", ":", "nan", "inf", "-", "1:", ":1", "0:0", "1:1:1", "\t", "\x00", "é"]
    ),
    st.text(max_size=4),
)
_libsvm_text = st.lists(st.lists(_token, max_size=6).map(" ".join), max_size=8).map("\n".join)


@FUZZ
@given(st.one_of(_libsvm_text.map(str.encode), st.binary(max_size=200)))
def test_fuzz_libsvm(data):
    try:
        X, y = libsvm_format.read_libsvm(_file(data, "fuzz.svm"), max_elements=10**6)
    except DataError as exc:
        assert "\n" not in str(exc)
        return
    assert X.ndim == 2 and len(X) == len(y) and np.isfinite(X).all() and np.isfinite(y).all()


_cell = st.one_of(
    st.from_regex(r"[+-]?[0-9]{1,3}(\.[0-9]+)?", fullmatch=True),
    st.sampled_from(["", "a", "nan", "1e999", '"1"', '"', "x y", "#"]),
    st.text(max_size=3),
)


@FUZZ
@given(
    st.one_of(
        st.lists(st.lists(_cell, min_size=1, max_size=4).map(",".join), max_size=6)
        .map("\n".join)
        .map(str.encode),
        st.binary(max_size=200),
    ),
    st.sampled_from(["-1", "0", "2", "a", "-9"]),
    st.sampled_from(["auto", "yes", "no"]),
    st.sampled_from(["auto", "comma", "space", "tab"]),
)
def test_fuzz_csv(data, label, header, delimiter):
    try:
        X, labels, names = readers.read_csv(
            _file(data, "fuzz.csv"), label, header=header, delimiter=delimiter, max_elements=10**6
        )
    except DataError as exc:
        assert "\n" not in str(exc)
        return
    assert X.shape == (len(labels), len(names)) and np.isfinite(X).all()


_idx_header = st.builds(
    lambda code, dims: bytes([0, 0, code, len(dims)]) + struct.pack(f">{len(dims)}I", *dims),
    st.sampled_from([0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E, 0x07]),
    st.lists(st.integers(0, 2**32 - 1) | st.integers(0, 6), max_size=4),
)


@FUZZ
@given(
    st.one_of(
        st.binary(max_size=100), st.tuples(_idx_header, st.binary(max_size=60)).map(b"".join)
    ),
    st.booleans(),
)
def test_fuzz_idx(data, compress):
    try:
        a = readers.read_idx(
            _file(gzip.compress(data) if compress else data, "fuzz.idx"), max_elements=10**6
        )
    except DataError as exc:
        assert "\n" not in str(exc)
        return
    assert a.size * a.dtype.itemsize == len(data) - 4 - 4 * data[3]


def _zip_of(members: list[tuple[str, bytes]]) -> bytes:
    p = Path(_folder) / "member.zip"
    with zipfile.ZipFile(p, "w") as zf:
        for name, blob in members:
            zf.writestr(name, blob)
    return p.read_bytes()


_npy = st.one_of(
    st.binary(max_size=80),
    st.just(
        b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999,), }"
    ),
    st.builds(lambda shape: _npy_bytes(np.zeros(shape)), st.lists(st.integers(0, 3), max_size=3)),
)


def _npy_bytes(a: np.ndarray) -> bytes:
    p = Path(_folder) / "a.npy"
    np.save(p, a)
    return p.read_bytes()


@FUZZ
@given(
    st.one_of(
        st.binary(max_size=200),
        st.lists(
            st.tuples(st.sampled_from(["X.npy", "y.npy", "X_test.npy", "y_test.npy", "z"]), _npy),
            max_size=4,
            unique_by=lambda t: t[0],
        ).map(_zip_of),
    )
)
def test_fuzz_npz(data):
    try:
        a = readers.read_npz(_file(data, "fuzz.npz"))
    except DataError as exc:
        assert "\n" not in str(exc)
        return
    assert a["X"].ndim == 2 and len(a["X"]) == len(a["y"])


@FUZZ
@given(
    st.lists(
        st.one_of(st.text(max_size=3), st.integers(-3, 3), st.floats(allow_nan=True)), max_size=8
    ),
    st.sampled_from(["binary", "multiclass", "regression", "novelty", "other"]),
)
def test_fuzz_encode_labels(y, task):
    try:
        out, _, n, names = readers.encode_labels(y, None, task, "fuzz")
    except DataError as exc:
        assert "\n" not in str(exc)
        return
    if task == "binary":
        assert set(out.tolist()) <= {-1.0, 1.0}
    elif task == "multiclass":
        assert sorted(set(out.tolist())) == list(range(n)) and len(names) == n


@pytest.mark.parametrize(
    ("labels", "shown"),
    [
        (["0\n0"], r"all labels are '0\n0'"),
        (["a", "b\nc", "d\re"], r"(a, 'b\nc', 'd\re')"),
    ],
)
def test_a_label_with_a_line_break_is_shown_on_one_line(labels: list[str], shown: str) -> None:
    """The label names in an error are escaped where they hold a line break (found by
    test_fuzz_encode_labels: a label "0\\n0" broke the one-line error in two)."""
    with pytest.raises(DataError) as err:
        readers.encode_labels(labels, None, "binary", "fuzz")
    assert "\n" not in str(err.value) and "\r" not in str(err.value)
    assert shown in str(err.value)
