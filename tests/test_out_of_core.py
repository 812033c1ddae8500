"""Streams larger than memory: seeded orders gathered a chunk at a time from the mapped
cache (same rows, same stream id, same outcomes as the eager gather), the runner's chunks
(same outcomes whatever their size), and the pages of a mapped stream given back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import stub_plugin
from kbench.core.registry import get_registry
from kbench.data import gathered
from kbench.data.cache import get_stream
from kbench.data.gathered import RowGather
from kbench.data.paging import release_rows
from kbench.data.streams import StreamSpec
from kbench.execution import prequential
from kbench.execution.prequential import run_task
from kbench.execution.tasks import Task

#: A binary data set, dense or CSR (about 8 non-zeros of 300 features per example).
BLOBS = stub_plugin('''
import scipy.sparse as sp


class Blobs(Dataset):
    """Two classes, dense or sparse."""
    name = "blobs"
    size: int = param(3000)
    sparse: bool = param(False)
    def load(self, seed):
        rng = np.random.default_rng(seed)
        if self.sparse:
            X = sp.random(self.size, 300, density=8 / 300, format="csr", random_state=seed)
            X.data = rng.uniform(0.1, 1.0, X.nnz)
            w = rng.standard_normal(300)
            y = np.where(X @ w > 0, 1.0, -1.0)
        else:
            X = rng.standard_normal((self.size, 20))
            y = np.where(X[:, 0] - X[:, 1] > 0, 1.0, -1.0)
        return Data(X=X, y=y, task="binary", n_classes=2)


@hookimpl
def kbench_register_datasets(register):
    register(Blobs)
''')

KERNEL = {False: "rbf[gamma=0.05]", True: "rbf[gamma=0.5]"}


def _task(spec: StreamSpec, sparse: bool, **options: int) -> Task:
    return Task(
        algorithm="rbp[budget=50]",
        kernel=KERNEL[sparse],
        loss=None,
        stream=spec,
        options=tuple(sorted(options.items())),
    )


def _same_rows(a, b) -> None:
    if sp.issparse(a):
        assert sp.issparse(b) and a.shape == b.shape
        for part in ("data", "indices", "indptr"):
            assert np.array_equal(getattr(a, part), getattr(b, part)), part
        assert b.indices.dtype == np.int32
    else:
        assert np.array_equal(a, b) and not b.flags.writeable


@pytest.mark.parametrize("sparse", [False, True])
def test_gathered_stream_equals_the_eager_gather(
    sparse: bool, tmp_path: Path, plugin_dist, monkeypatch
) -> None:
    """With every copy counted as large, a shuffled stream (test split, n) of a cached data
    set is a RowGather whose slices, stream id and task outcomes are the eager stream's."""
    plugin_dist("kb_blobs", BLOBS)
    reg = get_registry()
    spec = StreamSpec(f"blobs[sparse={str(sparse).lower()}]", seed=4, test_size=0.2, n=2000)
    eager = get_stream(spec, reg, cache=tmp_path / "eager")
    assert not isinstance(eager.X, RowGather)
    monkeypatch.setattr(gathered, "LAZY_BYTES", 0)
    lazy = get_stream(spec, reg, cache=tmp_path / "lazy")
    again = get_stream(spec, reg, cache=tmp_path / "lazy")  # from the stream's record
    for s in (lazy, again):
        assert isinstance(s.X, RowGather) and s.sparse == sparse
        assert s.stream_id == eager.stream_id and s.X.shape == eager.X.shape == (2000, s.d)
        assert np.array_equal(s.y, eager.y)
    for a, b in ((0, 2000), (5, 17), (1990, 2000), (3, 3)):
        _same_rows(eager.X[a:b], lazy.X[a:b])
    for options in ({}, {"max_queries": 300}):
        task = _task(spec, sparse, **options)
        want, got = run_task(task, eager, reg), run_task(task, lazy, reg)
        assert got.status == want.status == "ok", got.run["reason"]
        assert np.array_equal(got.outcomes, want.outcomes)
        for key in ("online_error", "test_error", "n_support", "constant_predictions"):
            assert got.run[key] == want.run[key], key


@pytest.mark.parametrize("sparse", [False, True])
def test_chunks_of_any_size_give_the_same_run(sparse: bool, plugin_dist, monkeypatch) -> None:
    """The runner's chunks (7 examples here, 16 384 by default) change nothing a run records."""
    plugin_dist("kb_blobs", BLOBS)
    reg = get_registry()
    spec = StreamSpec(f"blobs[size=1500,sparse={str(sparse).lower()}]", seed=1, test_size=0.2)
    stream = get_stream(spec, reg)
    for options in ({}, {"max_queries": 222}):
        task = _task(spec, sparse, **options)
        whole = run_task(task, stream, reg)
        monkeypatch.setattr(prequential, "_CHUNK", 7)
        chunked = run_task(task, stream, reg)
        monkeypatch.undo()
        assert whole.status == chunked.status == "ok"
        assert whole.outcomes.dtype == bool and np.array_equal(whole.outcomes, chunked.outcomes)
        cols = ["seen", "mistakes", "online_error", "test_error", "n_support"]
        assert whole.traces[cols].equals(chunked.traces[cols])
        for key in ("online_error", "test_error", "constant_predictions", "labels_queried"):
            assert whole.run[key] == chunked.run[key], key


def _rss_file_kb() -> int:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("RssFile:"))


def test_pages_of_a_mapped_stream_are_given_back(plugin_dist) -> None:
    """Rows read from a stream mapped from the cache count in the resident set until the
    runner releases them; then they leave it (and read again the same)."""
    plugin_dist("kb_blobs", BLOBS)
    reg = get_registry()
    spec = StreamSpec("blobs[size=200000]", order="file")  # 32 MB of features
    get_stream(spec, reg)
    stream = get_stream(spec, reg)  # from the cache: a read-only map of its file
    X = stream.X
    before = float(X[:100].sum())
    X.sum()  # every page read
    read = _rss_file_kb()
    release_rows(X, 0, stream.n, stream.y)
    released = _rss_file_kb()
    assert read - released > 25_000, (read, released)
    assert float(X[:100].sum()) == before


# LIBSVM files parsed a block at a time
# --------------------------------------------------------------------------------------------


def _libsvm_text(n: int, seed: int = 0) -> str:
    """n lines of a LIBSVM file with comments, blank lines, qid tokens and empty rows."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        cols = np.sort(rng.choice(np.arange(1, 41), size=int(rng.integers(0, 6)), replace=False))
        feats = " ".join(f"{j}:{rng.uniform(-2, 2):.6g}" for j in cols)
        qid = "qid:7 " if i % 17 == 0 else ""
        lines.append(f"{rng.choice([-1, 1])} {qid}{feats}".rstrip())
        if i % 23 == 0:
            lines.append("# a comment line" if i % 2 else "")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("compress", [False, True])
def test_a_file_read_in_blocks_equals_the_file_read_whole(tmp_path: Path, compress: bool) -> None:
    """A LIBSVM file parsed 200 bytes at a time (about 60 blocks, with lines that span
    block ends) gives the arrays of the file parsed at once, int32 CSR as the cache keeps
    it, mapped from files that are already removed from the scratch folder."""
    import gzip

    from kbench.data.libsvm_format import read_libsvm_csr

    text = _libsvm_text(600).encode()
    p = tmp_path / ("a.svm.gz" if compress else "a.svm")
    p.write_bytes(gzip.compress(text) if compress else text)
    whole, y_whole = read_libsvm_csr(p)
    scratch = tmp_path / "scratch"
    X, y = read_libsvm_csr(p, block_bytes=200, scratch=scratch)
    assert X.shape == whole.shape == (600, 40)
    assert np.array_equal(y, y_whole)
    for part in ("data", "indices", "indptr"):
        assert np.array_equal(getattr(X, part), getattr(whole, part)), part
    assert X.indices.dtype == X.indptr.dtype == np.int32 and X.data.dtype == np.float64
    assert isinstance(X.data, np.memmap) and isinstance(y, np.memmap)
    assert list(scratch.iterdir()) == []  # the files live on as long as the maps only
    X5, _ = read_libsvm_csr(p, 50, block_bytes=200, scratch=scratch)
    assert X5.shape == (600, 50)


def test_a_bad_line_in_a_later_block_is_named_and_nothing_is_left(tmp_path: Path) -> None:
    """An error in the 40th block names the file's line, not the block's, and the arrays
    already written for the blocks before it are removed."""
    from kbench.core.errors import DataError
    from kbench.data.libsvm_format import read_libsvm_csr

    lines = _libsvm_text(600).splitlines()
    lines[500] = "1 3:1 2:1"
    p = tmp_path / "bad.svm"
    p.write_text("\n".join(lines) + "\n")
    scratch = tmp_path / "scratch"
    with pytest.raises(DataError) as err:
        read_libsvm_csr(p, block_bytes=200, scratch=scratch)
    assert str(err.value) == f"{p}:501: feature indices must increase (2 after 3)"
    assert list(scratch.iterdir()) == []


def test_a_stream_from_a_file_read_in_blocks(tmp_path: Path, monkeypatch) -> None:
    """libsvm[path=...] built from a file of many blocks gives the stream (and stream id)
    of the same file read at once."""
    from kbench.data import libsvm_format

    p = tmp_path / "a.svm"
    p.write_text(_libsvm_text(800, seed=3))
    spec = StreamSpec(dataset=f"libsvm[path={p}]", seed=1)
    whole = get_stream(spec, get_registry(), cache=tmp_path / "c1")
    monkeypatch.setattr(libsvm_format, "BLOCK_BYTES", 300)
    monkeypatch.setenv("KBENCH_CACHE", str(tmp_path / "c2"))
    blocks = get_stream(spec, get_registry(), cache=tmp_path / "c2")
    assert sp.issparse(blocks.X) and blocks.stream_id == whole.stream_id
    assert (blocks.X != whole.X).nnz == 0 and np.array_equal(blocks.y, whole.y)
    assert list((tmp_path / "c2" / "tmp").iterdir()) == []
