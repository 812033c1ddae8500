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
from kbench.data.gathered import RowGather
from kbench.data.paging import is_mapped, release_rows
from kbench.data.streams import StreamSpec, get_stream
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
    d: int = param(20)
    def load(self, seed):
        rng = np.random.default_rng(seed)
        if self.d != 20:
            X = rng.standard_normal((self.size, self.d))
            return Data(X=X, y=np.where(X[:, 0] > 0, 1.0, -1.0), task="binary", n_classes=2)
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


def _same_stream(a, b) -> None:
    """Same id, labels and rows (compared in slices: a gathered stream is read by slices)."""
    assert a.stream_id == b.stream_id and a.sparse == b.sparse and a.X.shape == b.X.shape
    assert np.array_equal(a.y, b.y) and (a.y_test is None) == (b.y_test is None)
    for lo, hi in ((0, a.n), (7, 130), (a.n - 3, a.n)):
        _same_rows(a.X[lo:hi], b.X[lo:hi])
    if a.y_test is not None:
        assert np.array_equal(a.y_test, b.y_test)
        _same_rows(a.X_test[0 : len(a.y_test)], b.X_test[0 : len(b.y_test)])


def test_a_large_shuffled_stream_maps_its_order_file(
    tmp_path: Path, plugin_dist, monkeypatch
) -> None:
    """A large shuffled stream's permutation (as row indices) and its labels are written
    once to an order file in the cache and mapped by every load: the stream holds no array
    of its length, and its rows are exactly the data set's rows in the seed's permutation."""
    plugin_dist("kb_blobs", BLOBS)
    reg = get_registry()
    spec = StreamSpec("blobs[size=3000]", seed=7, n=2500)
    eager = get_stream(spec, reg, cache=tmp_path / "eager")
    monkeypatch.setattr(gathered, "LAZY_BYTES", 0)
    built = get_stream(spec, reg, cache=tmp_path / "lazy")
    (order,) = (tmp_path / "lazy").rglob("*.order")
    loaded = get_stream(spec, reg, cache=tmp_path / "lazy")
    for s in (built, loaded):
        _same_stream(s, eager)
        assert is_mapped(s.y) and is_mapped(s.X.rows) and s.X.rows.dtype == np.int32
    # the rows of the data set in the order NumPy's generator draws for the seed's order stream
    file_order = StreamSpec("blobs[size=3000]", seed=7, order="file")
    data = get_stream(file_order, reg, cache=tmp_path / "f")
    perm = np.random.default_rng(np.random.SeedSequence(7, spawn_key=(3,))).permutation(3000)[:2500]
    assert np.array_equal(np.asarray(loaded.X.rows), perm)
    assert np.array_equal(loaded.X[0:2500], data.X[perm]) and np.array_equal(loaded.y, data.y[perm])
    assert order.stat().st_size < 2500 * 12 + 1024  # indices and labels: 12 bytes an example


@pytest.mark.parametrize("dataset, order", [("blobs", "shuffle"), ("blobs[sparse=true]", "file")])
def test_a_window_of_a_large_stream_is_not_read_at_once(
    dataset: str, order: str, tmp_path: Path, plugin_dist, monkeypatch
) -> None:
    """A tuning window (head:F, tail:F) of a large gathered stream, or of a CSR map of the
    cache, is a gather of its rows (nothing read), with the rows of the eager window."""
    from kbench.execution.tuning import window_stream

    plugin_dist("kb_blobs", BLOBS)
    reg = get_registry()
    spec = StreamSpec(dataset, seed=1, order=order)
    eager = get_stream(spec, reg, cache=tmp_path / "eager")
    monkeypatch.setattr(gathered, "LAZY_BYTES", 0)
    get_stream(spec, reg, cache=tmp_path / "lazy")
    lazy = get_stream(spec, reg, cache=tmp_path / "lazy")
    for window in ("head:0.3", "tail:0.3"):
        part = window_stream(lazy, window)
        assert isinstance(part.X, RowGather)
        _same_stream(part, window_stream(eager, window))


@pytest.mark.parametrize(
    "dataset, options",
    [
        ("blobs[size=2000]", {"scale": "standard", "test_size": 0.2}),
        ("blobs[size=2000]", {"scale": "minmax", "order": "file", "n": 1500}),
        ("blobs[size=2000,d=1]", {"scale": "standard"}),
        ("blobs[size=2000,sparse=true]", {"dense": True, "test_size": 0.25}),
        ("blobs[size=2000,sparse=true]", {"dense": True, "scale": "standard", "order": "file"}),
    ],
)
def test_options_on_a_large_stream_are_applied_a_chunk_at_a_time(
    dataset: str, options: dict, tmp_path: Path, plugin_dist, monkeypatch
) -> None:
    """test_size, scale and dense=true on a large stream of a mapped data set are applied
    to each slice as it is read (held-out rows gathered likewise), bit for bit the arrays
    and stream id of the options applied to whole copies; the column scale is computed
    once, a chunk at a time, and stored with the stream's order."""
    plugin_dist("kb_blobs", BLOBS)
    reg = get_registry()
    spec = StreamSpec(dataset, seed=3, **options)
    eager = get_stream(spec, reg, cache=tmp_path / "eager")
    monkeypatch.setattr(gathered, "LAZY_BYTES", 0)
    # chunks of 37 rows of 20 features (2 of the 300 densified): the scale summed over
    # many chunks, and the runner's chunks as small (wide dense rows are read a few at a time)
    monkeypatch.setattr(gathered, "CHUNK_BYTES", 37 * 20 * 8)
    built = get_stream(spec, reg, cache=tmp_path / "lazy")
    loaded = get_stream(spec, reg, cache=tmp_path / "lazy")
    for s in (built, loaded):
        assert isinstance(s.X, RowGather) and not s.sparse
        _same_stream(s, eager)
    if "test_size" in options:
        assert isinstance(loaded.X_test, RowGather)
        task = _task(spec, False)
        want, got = run_task(task, eager, reg), run_task(task, loaded, reg)
        assert got.status == want.status == "ok", got.run["reason"]
        assert got.run["test_error"] == want.run["test_error"]
        assert np.array_equal(got.outcomes, want.outcomes)


@pytest.mark.parametrize("damage", ["truncated", "header", "missing"])
def test_a_damaged_order_file_is_rebuilt_never_read(
    damage: str, tmp_path: Path, plugin_dist, monkeypatch
) -> None:
    """An order file shorter than its record says (a write cut short, a full disk), with
    a bad header, or removed, gives the stream rebuilt from its seed: the same rows and id."""
    plugin_dist("kb_blobs", BLOBS)
    reg = get_registry()
    spec = StreamSpec("blobs[size=2000]", seed=5, test_size=0.1)
    want = get_stream(spec, reg, cache=tmp_path / "eager")
    monkeypatch.setattr(gathered, "LAZY_BYTES", 0)
    cache = tmp_path / "lazy"
    get_stream(spec, reg, cache=cache)  # (its map is not read again: the file changes below)
    (order,) = cache.rglob("*.order")
    size = order.stat().st_size
    if damage == "truncated":
        order.write_bytes(order.read_bytes()[: size // 2])
    elif damage == "header":
        order.write_bytes(b"X" * 16 + order.read_bytes()[16:])
    else:
        order.unlink()
    got = get_stream(spec, reg, cache=cache)
    _same_stream(got, want)
    assert order.stat().st_size == size  # written again
    _same_stream(get_stream(spec, reg, cache=cache), want)


def test_a_long_shuffled_stream_keeps_the_memory_of_a_short_one(
    tmp_path: Path, plugin_dist, monkeypatch
) -> None:
    """Loading a shuffled stream of 10^6 examples from the cache and running a task on it
    grows the process's peak resident memory (kbench's own measurement, PeakMemory) by
    about as much as 10^5 examples of the same data set do.

    The margin, 6 MB, is above what must grow (the outcomes, 1 byte an example: 0.9 MB)
    and the allocator's noise, and below what holding the order in memory cost: the row
    indices (4 bytes an example) and the labels (8), 10.8 MB more at 10^6 examples than at
    10^5. Both streams read random rows of the same 16 MB file."""
    from kbench.execution.memory import PeakMemory

    plugin_dist("kb_blobs", BLOBS)
    reg = get_registry()
    monkeypatch.setattr(gathered, "LAZY_BYTES", 2**20)
    growth = {}
    for n in (100_000, 1_000_000):
        spec = StreamSpec("blobs[size=1000000,d=2]", seed=2, n=n)
        get_stream(spec, reg, cache=tmp_path)  # built once (drawing the permutation)
        # Resident set on Linux; where it cannot be reset, tracemalloc, which also counts
        # arrays of the stream's length held in memory (what this test is about).
        memory = PeakMemory()
        memory.begin()
        stream = get_stream(spec, reg, cache=tmp_path)
        task = Task(algorithm="rbp[budget=20]", kernel="linear", loss=None, stream=spec)
        result = run_task(task, stream, reg, trace_memory=False)
        memory.end()
        assert result.status == "ok", result.run["reason"]
        assert isinstance(stream.X, RowGather) and is_mapped(stream.y)
        growth[n] = memory.peak
        del stream, result
    assert growth[1_000_000] - growth[100_000] < 6 * 2**20, growth


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
