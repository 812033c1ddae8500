"""The LIBSVM collection by name (``libsvm[name=...]``) and its downloads.

Every download here is a real HTTP transfer from an ``http.server`` on 127.0.0.1 that
honours ``Range`` requests and can be told to close the connection half-way through a file;
the files it serves are small LIBSVM texts, plain, bz2 and xz, written by the tests. The
catalogue entries point at that server through ``$KBENCH_LIBSVM_CATALOGUE``, and the data
folder is a temporary ``$KBENCH_DATA``.
"""

from __future__ import annotations

import bz2
import hashlib
import http.server
import json
import lzma
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from helpers import read_terminal
from kbench.core.errors import DataError
from kbench.core.registry import get_registry
from kbench.data.downloads import decompress, download
from kbench.data.libsvm_catalogue import CATALOGUE, catalogue, fetch
from kbench.data.libsvm_format import read_libsvm
from kbench.data.streams import StreamSpec, build_stream

ROOT = Path(__file__).resolve().parents[1]


def _libsvm_text(n: int, d: int, seed: int, labels: tuple[str, ...] = ("-1", "+1")) -> bytes:
    """A LIBSVM file of n examples with about a third of d features non-zero."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        cols = sorted(rng.choice(d, size=max(1, d // 3), replace=False) + 1)
        feats = " ".join(f"{j}:{rng.normal():.6g}" for j in cols)
        lines.append(f"{labels[i % len(labels)]} {feats}")
    return ("\n".join(lines) + "\n").encode()


TRAIN = _libsvm_text(200, 12, 0)
TEST = _libsvm_text(80, 12, 1)
COMPRESS = {"": lambda b: b, ".bz2": bz2.compress, ".xz": lzma.compress}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Server:
    """A file server on 127.0.0.1 that honours Range and can cut a file off half-way."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)
        self.cut: dict[str, int] = {}  # path -> responses still to cut half-way
        self.ignore_range = False  # answer every request with the whole file (200)
        self.delay = 0.0  # seconds to wait before sending a body
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                name = self.path.lstrip("/")
                rng = self.headers.get("Range")
                server.requests.append((name, rng))
                path = server.root / name
                if not path.is_file():
                    self.send_error(404)
                    return
                data = path.read_bytes()
                start = 0
                if rng and not server.ignore_range:
                    start = int(re.fullmatch(r"bytes=(\d+)-", rng).group(1))
                    if start >= len(data):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(data)}")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                body = data[start:]
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                time.sleep(server.delay)
                if server.cut.get(name, 0) > 0:
                    server.cut[name] -= 1
                    body = body[: len(body) // 2]  # then the connection closes mid-file
                    self.close_connection = True
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server(tmp_path: Path):
    root = tmp_path / "served"
    root.mkdir()
    for suffix, comp in COMPRESS.items():
        (root / f"set{suffix}").write_bytes(comp(TRAIN))
        (root / f"set.t{suffix}").write_bytes(comp(TEST))
    s = _Server(root)
    yield s
    s.close()


def _files(folder: Path) -> list[str]:
    """The files of a data folder, without the lock files that serialise fetches."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".lock"))


def _closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (connections to it are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("KBENCH_DATA", str(folder))
    monkeypatch.setenv("KBENCH_CACHE", str(tmp_path / "cache"))
    return folder


def _catalogue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries: dict) -> None:
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps(entries))
    monkeypatch.setenv("KBENCH_LIBSVM_CATALOGUE", str(path))


def _entry(url: str, suffix: str, *, sizes: bool = True, sha: bool = True, task="binary") -> dict:
    comp = COMPRESS[suffix]
    train, test = comp(TRAIN), comp(TEST)
    return {
        "task": task,
        "d": 12,
        "n": 200,
        "n_test": 80,
        "train": {
            "url": f"{url}set{suffix}",
            "size": len(train) if sizes else None,
            "sha256": _sha(train) if sha else None,
        },
        "test": {
            "url": f"{url}set.t{suffix}",
            "size": len(test) if sizes else None,
            "sha256": _sha(test) if sha else None,
        },
    }


def _expected(tmp_path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    (tmp_path / "plain_train").write_bytes(TRAIN)
    (tmp_path / "plain_test").write_bytes(TEST)
    X, y = read_libsvm(tmp_path / "plain_train", 12)
    Xt, yt = read_libsvm(tmp_path / "plain_test", 12)
    return X, y, Xt, yt


# --- the catalogue ------------------------------------------------------------------------


def test_catalogue_covers_the_common_sets_with_their_tasks():
    for name, task in {
        "a9a": "binary", "w8a": "binary", "ijcnn1": "binary", "cod-rna": "binary",
        "covtype.binary": "binary", "rcv1.binary": "binary", "news20.binary": "binary",
        "real-sim": "binary", "webspam": "binary", "url": "binary", "mnist": "multiclass",
        "usps": "multiclass", "letter": "multiclass", "satimage": "multiclass",
        "pendigits": "multiclass", "cadata": "regression", "abalone": "regression",
    }.items():  # fmt: skip
        assert CATALOGUE[name].task == task, name
        assert CATALOGUE[name].train.url.startswith("https://www.csie.ntu.edu.tw/~cjlin/")
    compressions = {f.compression for e in CATALOGUE.values() for f in e.files}
    assert {None, "bz2", "xz"} <= compressions
    # a9a's checksums are those of kbench's bundled copy of the same files
    import gzip

    bundled = ROOT / "plugins" / "datasets" / "data" / "a9a_train.txt.gz"
    raw = gzip.decompress(bundled.read_bytes())
    assert CATALOGUE["a9a"].train.sha256 == _sha(raw)
    assert CATALOGUE["a9a"].train.size == len(raw)


def test_existing_libsvm_specs_keep_their_canonical_form():
    reg = get_registry()
    # The name parameter is left out at its default: task ids of stored studies still hold.
    assert reg.canonical("dataset", "libsvm[path=a.txt]") == (
        "libsvm[n_features=0,path=a.txt,task=binary,test_path=]"
    )
    assert reg.canonical("dataset", "libsvm[name=a9a]") == (
        "libsvm[n_features=0,name=a9a,path=,task=binary,test_path=]"
    )
    ds = reg.create("dataset", "libsvm[name=mnist]")
    assert ds.spec(defaults=False) == "libsvm[name=mnist]"
    assert ds.task == "multiclass" and ds.info()["classes"] == 10
    assert reg.create("dataset", ds.spec()).spec() == ds.spec()


def test_unknown_name_and_name_with_path_are_one_line_errors():
    from kbench.core.errors import SpecError

    reg = get_registry()
    with pytest.raises(SpecError, match=r"no data set 'nosuch' in the LIBSVM collection"):
        reg.create("dataset", "libsvm[name=nosuch]")
    with pytest.raises(SpecError, match="not both"):
        reg.create("dataset", "libsvm[name=a9a,path=x.txt]")


def test_a_set_too_large_for_dense_arrays_is_available_sparse_and_refused_dense(data, tmp_path):
    """rcv1.binary (47 236 features, 697 641 examples) is a sparse data set: available
    without densifying; a stream asked dense=true beyond the dense limit is a one-line error."""
    ds = get_registry().create("dataset", "libsvm[name=rcv1.binary]")
    assert ds.unavailable() is None and type(ds).sparse
    assert not data.exists()  # nothing downloaded to say so
    path = tmp_path / "wide.svm"
    path.write_text("1 1:1\n-1 2:1\n")
    spec = StreamSpec(f"libsvm[path={path},n_features=200000000]", dense=True)
    with pytest.raises(DataError) as exc:
        build_stream(spec, get_registry())
    message = str(exc.value)
    assert "\n" not in message and "dense=true" in message and "3.2 GB" in message
    sparse = build_stream(StreamSpec(spec.dataset), get_registry())
    assert sparse.sparse and sparse.X.shape == (2, 200_000_000) and sparse.X.nnz == 2


# --- downloads ----------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["", ".bz2", ".xz"])
def test_full_download_verifies_decompresses_and_loads(tmp_path, monkeypatch, server, data, suffix):
    _catalogue(tmp_path, monkeypatch, {"fixture": _entry(server.url, suffix)})
    ds = get_registry().create("dataset", "libsvm[name=fixture]")
    got = ds.load(0)
    X, y, Xt, yt = _expected(tmp_path)
    np.testing.assert_array_equal(got.X.toarray(), X)  # same reader, same text: exact
    np.testing.assert_array_equal(got.X_test.toarray(), Xt)
    np.testing.assert_array_equal(got.y, np.where(y > 0, 1.0, -1.0))
    np.testing.assert_array_equal(got.y_test, np.where(yt > 0, 1.0, -1.0))
    folder = data / "libsvm"
    assert (folder / f"set{suffix}").read_bytes() == COMPRESS[suffix](TRAIN)
    assert (folder / "set").read_bytes() == TRAIN
    # the files as published and decompressed; no .part and no temporary file left
    assert _files(folder) == sorted({f"set{suffix}", "set", f"set.t{suffix}", "set.t"})
    # A second load uses the folder: no request reaches the server.
    n = len(server.requests)
    ds.load(0)
    assert len(server.requests) == n


def test_a_download_cut_half_way_is_resumed_with_a_range_request(tmp_path, server):
    payload = COMPRESS[".bz2"](TRAIN)
    server.cut["set.bz2"] = 1
    dest = tmp_path / "dl" / "set.bz2"
    download(server.url + "set.bz2", dest, size=len(payload), sha256=_sha(payload))
    assert dest.read_bytes() == payload
    assert server.requests[0] == ("set.bz2", None)
    assert server.requests[1] == ("set.bz2", f"bytes={len(payload) // 2}-")


def test_a_cut_download_keeps_its_part_and_the_next_run_resumes(tmp_path, server):
    payload = COMPRESS[".xz"](TRAIN)
    server.cut["set.xz"] = 1
    dest = tmp_path / "dl" / "set.xz"
    with pytest.raises(DataError, match=r"closed after \d+ of \d+ bytes.*run again to resume"):
        download(server.url + "set.xz", dest, sha256=_sha(payload), attempts=1)
    part = dest.with_name("set.xz.part")
    assert part.stat().st_size == len(payload) // 2 and not dest.exists()
    download(server.url + "set.xz", dest, sha256=_sha(payload), attempts=1)
    assert dest.read_bytes() == payload and not part.exists()
    assert server.requests[-1] == ("set.xz", f"bytes={len(payload) // 2}-")


def test_a_checksum_mismatch_is_moved_aside_and_not_used(tmp_path, monkeypatch, server, data):
    entry = _entry(server.url, ".bz2")
    entry["train"]["sha256"] = "0" * 64
    _catalogue(tmp_path, monkeypatch, {"fixture": entry})
    ds = get_registry().create("dataset", "libsvm[name=fixture]")
    with pytest.raises(DataError) as exc:
        ds.load(0)
    msg = str(exc.value)
    assert "\n" not in msg and "set.bz2" in msg and "failed verification" in msg
    folder = data / "libsvm"
    assert not (folder / "set.bz2").exists() and not (folder / "set").exists()
    aside = list(folder.glob("set.bz2.part.mismatch-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == COMPRESS[".bz2"](TRAIN)


def test_a_hand_placed_file_of_the_wrong_size_is_moved_aside_and_fetched(
    tmp_path, monkeypatch, server, data
):
    _catalogue(tmp_path, monkeypatch, {"fixture": _entry(server.url, "", sha=False)})
    folder = data / "libsvm"
    folder.mkdir(parents=True)
    (folder / "set").write_bytes(TRAIN[:-10])
    got = get_registry().create("dataset", "libsvm[name=fixture]").load(0)
    assert got.X.shape[0] == 200
    assert (folder / "set").read_bytes() == TRAIN
    assert [p.read_bytes() for p in folder.glob("set.mismatch-*")] == [TRAIN[:-10]]


@pytest.mark.parametrize("suffix", [".bz2", ".xz"])
def test_a_truncated_compressed_file_is_a_one_line_error_naming_it(
    tmp_path, monkeypatch, data, suffix
):
    url = f"http://127.0.0.1:{_closed_port()}/"
    _catalogue(tmp_path, monkeypatch, {"fixture": _entry(url, suffix, sizes=False, sha=False)})
    folder = data / "libsvm"
    folder.mkdir(parents=True)
    whole = COMPRESS[suffix](TRAIN)
    (folder / f"set{suffix}").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(DataError) as exc:
        get_registry().create("dataset", "libsvm[name=fixture]").load(0)
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith(f"{folder / f'set{suffix}'}: truncated or damaged {suffix[1:]} file")
    assert _files(folder) == [f"set{suffix}"]  # nothing half-written


def test_offline_names_the_url_and_where_to_put_the_file(tmp_path, monkeypatch, data):
    url = f"http://127.0.0.1:{_closed_port()}/"
    _catalogue(tmp_path, monkeypatch, {"fixture": _entry(url, ".bz2")})
    with pytest.raises(DataError) as exc:
        get_registry().create("dataset", "libsvm[name=fixture]").load(0)
    msg = str(exc.value)
    assert "\n" not in msg
    assert f"cannot download {url}set.bz2" in msg
    assert f"put it at {data / 'libsvm' / 'set.bz2'}" in msg
    assert "refused" in msg.lower()


def _env(tmp_path: Path, url: str, **extra: str) -> dict[str, str]:
    cat = tmp_path / "offline.json"
    entry = _entry(url, ".bz2")
    cat.write_text(json.dumps({"rcv1.binary": entry}))
    return {
        **os.environ,
        "KBENCH_LIBSVM_CATALOGUE": str(cat),
        "KBENCH_DATA": str(tmp_path / "data"),
        "KBENCH_CACHE": str(tmp_path / "cache"),
        "OPENBLAS_NUM_THREADS": "1",
        "COLUMNS": "1000",  # rich wraps long lines at the terminal's width
        **extra,
    }


def test_kbench_run_offline_from_a_hand_placed_file(tmp_path):
    """``kbench run -a rbp -a nogd -d "libsvm[name=rcv1.binary]"`` with the files put in place by hand
    and no server to download from (the catalogue entry is a small fixture in rcv1's place)."""
    url = f"http://127.0.0.1:{_closed_port()}/"
    env = _env(tmp_path, url)
    kbench = [sys.executable, "-m", "kbench.cli.main"]
    base = [*kbench, "run", "-a", "rbp", "-a", "nogd", "-d", "libsvm[name=rcv1.binary]"]
    base += ["--workers", "0"]
    out = tmp_path / "out"
    # Before the file is there: a one-line error naming the URL and the place for the file.
    r = subprocess.run([*base, "--out", str(out)], env=env, capture_output=True, text=True)
    assert r.returncode != 0
    error = next(line for line in r.stderr.splitlines() if "error" in line)
    assert f"cannot download {url}set.bz2" in error
    assert f"put it at {tmp_path / 'data' / 'libsvm' / 'set.bz2'}" in error
    assert "Traceback" not in r.stderr
    listing = subprocess.run([*kbench, "list", "datasets", "--json"], env=env,
                             capture_output=True, text=True, check=True)  # fmt: skip
    row = next(x for x in json.loads(listing.stdout) if x["name"] == "libsvm[name=rcv1.binary]")
    assert row["cached"] is False and row["n"] == 200
    folder = tmp_path / "data" / "libsvm"
    folder.mkdir(parents=True, exist_ok=True)  # the failed download may have made it
    (folder / "set.bz2").write_bytes(COMPRESS[".bz2"](TRAIN))
    (folder / "set.t.bz2").write_bytes(COMPRESS[".bz2"](TEST))
    listing = subprocess.run([*kbench, "list", "datasets", "--json"], env=env,
                             capture_output=True, text=True, check=True)  # fmt: skip
    row = next(x for x in json.loads(listing.stdout) if x["name"] == "libsvm[name=rcv1.binary]")
    assert row["cached"] is True
    r = subprocess.run([*base, "--out", str(out)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    import pandas as pd

    runs = pd.read_parquet(out / "runs.parquet")
    assert sorted(runs["algorithm"]) == ["nogd", "rbp"]
    assert set(runs["status"]) == {"ok"}, runs["reason"].tolist()
    assert (
        runs["stream"].iloc[0].startswith("libsvm[")
        and "name=rcv1.binary" in runs["stream"].iloc[0]
    )
    assert runs[["n", "d", "test_n"]].drop_duplicates().values.tolist() == [[200, 12, 80]]


def test_disk_full_while_decompressing_leaves_no_half_written_file(tmp_path):
    folder = tmp_path / "data" / "libsvm"
    folder.mkdir(parents=True)
    big = _libsvm_text(4000, 12, 2)  # about 400 kB of text, far less compressed
    packed = bz2.compress(big)
    (folder / "set.bz2").write_bytes(packed)
    limit = 64 * 1024
    assert len(packed) < limit < len(big)
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
        "from kbench.data.downloads import decompress\n"
        "from kbench.core.errors import DataError\n"
        "try:\n"
        f"    decompress({str(folder / 'set.bz2')!r}, {str(folder / 'set')!r})\n"
        "except DataError as exc:\n"
        "    print(exc, file=sys.stderr); sys.exit(1)\n"
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith(f"cannot write {folder / 'set'}: File too large")
    assert len(r.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in folder.iterdir()) == ["set.bz2"]
    # With room to write, the same file decompresses whole.
    decompress(folder / "set.bz2", folder / "set")
    assert (folder / "set").read_bytes() == big


# --- bad LIBSVM text ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (b"+1 1:1 3:2\n-1 3:1 2:1\n", 2, "feature indices must increase (2 after 3)"),
        (b"+1 1:1 2:2\n-1 2:1 2:1\n", 2, "feature indices must increase (2 after 2)"),
        (b"+1 0:1 2:2\n", 1, "indices start at 1"),
        (b"+1 1:1\nspam 1:2\n", 2, "label 'spam' is not a number"),
    ],
)
def test_bad_libsvm_text_is_one_line_naming_file_and_line(
    tmp_path, monkeypatch, data, text, line, reason
):
    url = f"http://127.0.0.1:{_closed_port()}/"
    entry = _entry(url, ".bz2", sizes=False, sha=False)
    del entry["test"]
    _catalogue(tmp_path, monkeypatch, {"fixture": entry})
    folder = data / "libsvm"
    folder.mkdir(parents=True)
    (folder / "set.bz2").write_bytes(bz2.compress(text))
    with pytest.raises(DataError) as exc:
        get_registry().create("dataset", "libsvm[name=fixture]").load(0)
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith(f"{folder / 'set'}:{line}: ") and reason in msg


def test_catalogue_file_errors_are_one_line(tmp_path, monkeypatch):
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": {"task": "binary"}}')
    monkeypatch.setenv("KBENCH_LIBSVM_CATALOGUE", str(bad))
    with pytest.raises(DataError, match=r"catalogue entry 'x': KeyError"):
        catalogue()


def test_fetch_returns_plain_paths_of_both_files(tmp_path, monkeypatch, server, data):
    _catalogue(tmp_path, monkeypatch, {"fixture": _entry(server.url, ".xz")})
    train, test = fetch(catalogue()["fixture"])
    assert train.read_bytes() == TRAIN and test is not None and test.read_bytes() == TEST


def test_a_terminal_shows_a_progress_bar(tmp_path, server):
    """On a terminal (a pseudo-terminal here) the download draws a rich progress bar."""
    import pty

    payload = _libsvm_text(3000, 12, 3)
    (server.root / "big").write_bytes(payload)
    code = (
        "from kbench.data.downloads import download\n"
        f"download({server.url + 'big'!r}, {str(tmp_path / 'dl' / 'big')!r})\n"
    )
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=slave, env=env)
    os.close(slave)
    shown = read_terminal(master)
    assert proc.wait(timeout=60) == 0
    assert (tmp_path / "dl" / "big").read_bytes() == payload
    text = shown.decode(errors="replace")
    kb = f"{len(payload) / 1e3:.1f}"  # rich's download column: decimal kB, one decimal
    assert "big" in text and f"0.0/{kb} kB" in text and f"{kb}/{kb} kB" in text


def test_a_hand_placed_decompressed_file_is_used_without_the_network(tmp_path, monkeypatch, data):
    url = f"http://127.0.0.1:{_closed_port()}/"
    _catalogue(tmp_path, monkeypatch, {"fixture": _entry(url, ".xz")})
    folder = data / "libsvm"
    folder.mkdir(parents=True)
    (folder / "set").write_bytes(TRAIN)  # placed as set, not set.xz: used as it is
    (folder / "set.t").write_bytes(TEST)
    got = get_registry().create("dataset", "libsvm[name=fixture]").load(0)
    X, _, Xt, _ = _expected(tmp_path)
    np.testing.assert_array_equal(got.X.toarray(), X)  # the data set's features are CSR
    np.testing.assert_array_equal(got.X_test.toarray(), Xt)


def test_a_server_that_ignores_range_restarts_the_file(tmp_path, server):
    payload = COMPRESS[".bz2"](TEST)
    dest = tmp_path / "dl" / "set.t.bz2"
    dest.parent.mkdir()
    part = dest.with_name("set.t.bz2.part")
    part.write_bytes(b"garbage that is not a prefix")
    server.ignore_range = True
    download(server.url + "set.t.bz2", dest, sha256=_sha(payload))
    assert dest.read_bytes() == payload
    assert server.requests[-1][1] is not None  # it asked to resume; the server sent it whole


def test_processes_fetching_one_set_at_once_download_it_once(tmp_path, monkeypatch, server, data):
    """Streams built at the same time (several workers) fetch a file one after the other."""
    _catalogue(tmp_path, monkeypatch, {"fixture": _entry(server.url, ".bz2")})
    server.delay = 0.5  # long enough for both processes to ask before either has the file
    code = (
        "from kbench.data.libsvm_catalogue import catalogue, fetch\n"
        "train, test = fetch(catalogue()['fixture'])\n"
        "print(train.read_bytes() == " + repr(TRAIN) + ")\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert outs == ["True", "True"]
    assert [r[0] for r in server.requests].count("set.bz2") == 1
    assert [r[0] for r in server.requests].count("set.t.bz2") == 1


@pytest.mark.parametrize(
    ("task", "labels"), [("multiclass", ("3", "1", "2")), ("regression", ("0.5", "-1.25", "7"))]
)
def test_the_entry_decides_the_task(tmp_path, monkeypatch, data, task, labels):
    text, text_t = _libsvm_text(60, 12, 4, labels), _libsvm_text(30, 12, 5, labels)
    url = f"http://127.0.0.1:{_closed_port()}/"
    entry = {**_entry(url, "", sizes=False, sha=False), "task": task, "n": 60, "n_test": 30}
    _catalogue(tmp_path, monkeypatch, {"fixture": entry})
    folder = data / "libsvm"
    folder.mkdir(parents=True)
    (folder / "set").write_bytes(text)
    (folder / "set.t").write_bytes(text_t)
    ds = get_registry().create("dataset", "libsvm[name=fixture]")
    a, b = ds.load(0), ds.load(0)
    assert ds.task == a.task == task
    np.testing.assert_array_equal(a.X.toarray(), b.X.toarray())
    assert ds.info() == {"n": a.X.shape[0], "d": a.X.shape[1], "n_test": a.X_test.shape[0]}
    if task == "multiclass":  # classes sorted to 0..C-1: "1" -> 0, "2" -> 1, "3" -> 2
        assert a.n_classes == 3 and a.y[:3].tolist() == [2.0, 0.0, 1.0]
    else:
        assert a.y[:3].tolist() == [0.5, -1.25, 7.0]


def test_cached_datasets_join_a_study_only_when_on_this_machine(tmp_path, monkeypatch, data):
    """A study's ``cached_datasets`` plan the catalogue sets whose files are in the data
    folder and skip the others with the reason, without touching the network."""
    from kbench.execution.study import Experiment, plan

    url = f"http://127.0.0.1:{_closed_port()}/"  # nothing listens: a download would fail
    here, away = _entry(url, ".bz2"), _entry(url, ".bz2")
    away["train"]["url"], away["test"]["url"] = f"{url}away.bz2", f"{url}away.t.bz2"
    _catalogue(tmp_path, monkeypatch, {"here": here, "away": away})
    folder = data / "libsvm"
    folder.mkdir(parents=True)
    (folder / "set.bz2").write_bytes(COMPRESS[".bz2"](TRAIN))
    (folder / "set.t.bz2").write_bytes(COMPRESS[".bz2"](TEST))
    reg = get_registry()
    exp = Experiment(
        algorithms=["perceptron"],
        datasets=["twonorm[n_train=50,n_test=10]"],
        cached_datasets=["libsvm[name=here,n=100]", "libsvm[name=away]"],
        seeds=[0, 1],
    )
    planned = plan([exp], reg)
    streams = sorted({t.stream.label for t in planned.tasks})
    assert len(planned.tasks) == 4 and any("name=here" in s for s in streams), streams
    assert not any("away" in s for s in streams)
    assert planned.skipped == [
        (
            "data set libsvm[name=away]",
            f"libsvm[name=away] is not in {folder} yet (loading downloads it); "
            "cached_datasets take no download",
        )
    ]
    assert sorted(p.name for p in folder.iterdir()) == ["set.bz2", "set.t.bz2"]
