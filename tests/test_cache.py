"""The data cache: keyed on the content of local files, one copy per data set, atomic writes,
and the ``kbench cache`` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import kbench.data.streams.cache as cache
import kbench.data.streams.stream as stream_module
from kbench.core.errors import DataError
from kbench.core.registry import Registry, get_registry
from kbench.data.downloads import cache_dir
from kbench.data.streams import StreamSpec, build_stream, get_stream
from kbench.results.store import load_results

KBENCH = [sys.executable, "-m", "kbench.cli.main"]
HOUR_NS = 3600 * 10**9


@pytest.fixture
def reg() -> Registry:
    return get_registry()


def kbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run(
        [*KBENCH, *args], capture_output=True, text=True, timeout=300, env=env, cwd=cwd
    )


def write_libsvm(path: Path, seed: int, n: int = 80) -> None:
    """A small binary LIBSVM file; every line has the same length, so edits keep the size."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        label = "+1" if rng.random() < 0.5 else "-1"
        values = rng.integers(10, 99, size=4)
        lines.append(f"{label} " + " ".join(f"{j + 1}:0.{v}" for j, v in enumerate(values)))
    path.write_text("\n".join(lines) + "\n")


def write_old_libsvm(path: Path, seed: int) -> int:
    """:func:`write_libsvm`, then its modification time set an hour back (so that a later
    touch is seen as one); returns that mtime in ns."""
    write_libsvm(path, seed=seed)
    old = os.stat(path).st_mtime_ns - HOUR_NS
    os.utime(path, ns=(old, old))
    return old


def flip_first_label(path: Path) -> None:
    """Change the content but not the size."""
    text = path.read_text()
    first = "-1" if text.startswith("+1") else "+1"
    path.write_text(first + text[2:])


def data_folder(name: str) -> Path:
    return cache_dir() / "data" / name


def test_edited_file_gets_a_new_stream_and_is_never_paired(tmp_path: Path) -> None:
    """kbench run on a LIBSVM file, edit the file (same size), run again: the new run builds
    a new stream (new id); the same study resumed in the old folder runs its task again
    and says why; a result of another study left on the old content is never paired."""
    write_libsvm(tmp_path / "train.svm", seed=1)
    spec = "libsvm[path=train.svm,dense=true]"  # pa takes only dense rows
    common = ["-d", spec, "--workers", "0", "--no-report"]
    first = kbench("run", "-a", "perceptron", *common, "--out", "res", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    old_id = load_results(tmp_path / "res").runs["stream_id"].iloc[0]

    flip_first_label(tmp_path / "train.svm")
    fresh = kbench("run", "-a", "perceptron", *common, "--out", "res2", cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    new_id = load_results(tmp_path / "res2").runs["stream_id"].iloc[0]
    assert new_id != old_id

    # Another study into the same folder (pa and norma): the perceptron's result is not
    # one of its tasks and stays on the old content; compare pairs pa and norma only, and
    # says why the perceptron is left out; show says so too.
    more = kbench("run", "-a", "pa", "-a", "norma", *common, "--out", "res", cwd=tmp_path)
    assert more.returncode == 0, more.stderr
    runs = load_results(tmp_path / "res").runs.set_index("algorithm")
    assert runs.loc["perceptron", "stream_id"] == old_id
    assert runs.loc["pa", "stream_id"] == runs.loc["norma", "stream_id"] == new_id
    cmp = kbench("compare", "res", cwd=tmp_path)
    assert cmp.returncode == 0, cmp.stderr
    text = " ".join((cmp.stdout + cmp.stderr).split())
    assert "2 different stream ids" in text and "perceptron not paired" in text
    assert "(1 paired stream, 1 pair tested over seeds)" in text
    show = kbench("show", "res", cwd=tmp_path)
    assert show.returncode == 0, show.stderr
    assert "2 different stream ids" in " ".join(show.stderr.split())

    # The first study resumed in its folder: its task ran on data that changed since, so it
    # runs again (and the run says so) instead of being served as current.
    again = kbench("run", "-a", "perceptron", *common, "--out", "res", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "1 task run again: their data changed since they ran" in again.stderr
    runs = load_results(tmp_path / "res").runs
    assert set(runs["stream_id"]) == {new_id}
    kept = kbench("run", "-a", "perceptron", *common, "--out", "res", cwd=tmp_path)
    assert "1 of 1 tasks already have results" in kept.stderr
    assert "run again" not in kept.stderr


def test_edit_with_its_mtime_put_back_gets_a_new_stream(reg: Registry, tmp_path: Path) -> None:
    """An edit that keeps the size and puts the mtime back (touch -r, cp -p, rsync -t, tar
    -x) is seen: the ctime moved. A copy of the same bytes under a new inode keeps its id."""
    path = tmp_path / "d.svm"
    write_old_libsvm(path, seed=3)
    spec = StreamSpec(f"libsvm[path={path}]", seed=0)
    first = get_stream(spec, reg)
    st = os.stat(path)

    copy = tmp_path / "copy.svm"
    copy.write_bytes(path.read_bytes())
    os.replace(copy, path)  # same bytes, new inode and ctime
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_ino != st.st_ino
    assert get_stream(spec, reg).stream_id == first.stream_id

    st = os.stat(path)
    flip_first_label(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # as touch -r would put it back
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        st.st_size,
        st.st_mtime_ns,
        st.st_ino,
    )
    edited = get_stream(spec, reg)
    assert edited.stream_id != first.stream_id
    assert edited.stream_id == build_stream(spec, reg).stream_id


def test_touched_file_keeps_its_stream_and_an_edit_replaces_it(
    reg: Registry, tmp_path: Path
) -> None:
    """A new mtime with the same content costs one hash and keeps the stream id; new content
    with the same size gives a new id, and its data replace the old copy."""
    path = tmp_path / "d.svm"
    old = write_old_libsvm(path, seed=2)
    spec = StreamSpec(f"libsvm[path={path}]", seed=4)
    first = get_stream(spec, reg)

    os.utime(path, ns=(old + HOUR_NS // 2, old + HOUR_NS // 2))  # touched, same bytes
    again = get_stream(spec, reg)
    assert again.stream_id == first.stream_id
    assert np.array_equal(again.X.toarray(), first.X.toarray())  # a LIBSVM file: CSR
    (record,) = [p for p in data_folder("libsvm").glob("*.json") if ".stream" not in p.name]
    assert json.loads(record.read_text())["sources"][0]["mtime_ns"] == old + HOUR_NS // 2

    flip_first_label(path)
    os.utime(path, ns=(old, old))  # even with the first mtime back: the record has another
    edited = get_stream(spec, reg)
    assert edited.stream_id != first.stream_id
    assert edited.stream_id == build_stream(spec, reg).stream_id
    assert (
        edited.y[np.argsort(edited.X[:, 0].toarray().ravel())].tolist()
        != first.y[np.argsort(first.X[:, 0].toarray().ravel())].tolist()
    )
    assert len(list(data_folder("libsvm").glob("*.data"))) == 1


def test_relative_path_is_the_file_of_the_working_folder(
    reg: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same spec run in two folders reads two files: two streams, never the cached other."""
    for i, name in enumerate(("a", "b")):
        (tmp_path / name).mkdir()
        write_libsvm(tmp_path / name / "data.svm", seed=10 + i)
    spec = StreamSpec("libsvm[path=data.svm]")
    ids = []
    for name in ("a", "b", "a"):
        monkeypatch.chdir(tmp_path / name)
        ids.append(get_stream(spec, reg).stream_id)
        assert ids[-1] == build_stream(spec, reg).stream_id
    assert ids[0] != ids[1] and ids[0] == ids[2]


def test_deleted_file_is_not_served_from_the_cache(reg: Registry, tmp_path: Path) -> None:
    path = tmp_path / "d.svm"
    write_libsvm(path, seed=3)
    spec = StreamSpec(f"libsvm[path={path}]")
    get_stream(spec, reg)
    path.unlink()
    with pytest.raises(DataError, match="no such file"):
        get_stream(spec, reg)


OPTION_SETS = [
    {},
    {"n": 300, "scale": "standard"},
    {"positive": "5-9", "test_size": 0.2, "scale": "minmax"},
    {"order": "counting"},
    {"order": "file", "n": 100},
]


@pytest.mark.parametrize("options", OPTION_SETS)
def test_cached_streams_equal_built_ones(reg: Registry, options: dict) -> None:
    """Streams derived from the one cached copy are the arrays and ids build_stream gives."""
    for seed in (0, 7):
        spec = StreamSpec("digits", seed=seed, **options)
        built = build_stream(spec, reg)
        for _ in range(2):  # built and cached, then from the cache
            got = get_stream(spec, reg)
            assert got.stream_id == built.stream_id
            assert (got.task, got.n_classes) == (built.task, built.n_classes)
            for a, b in zip(
                (got.X, got.y, got.X_test, got.y_test),
                (built.X, built.y, built.X_test, built.y_test),
                strict=True,
            ):
                if b is None:
                    assert a is None
                    continue
                assert np.array_equal(a, b)
                assert a.dtype == np.float64 and a.flags.c_contiguous and not a.flags.writeable
            with pytest.raises(ValueError, match="read-only"):
                got.X[0, 0] = 1.0


def test_one_copy_per_data_set_for_many_seeds(reg: Registry) -> None:
    """50 seeds of a fixed data set: one copy of its arrays and 50 small records."""
    from sklearn.datasets import load_digits

    for seed in range(50):
        get_stream(StreamSpec("digits", seed=seed, test_size=0.25), reg)
    folder = data_folder("digits")
    assert len(list(folder.glob("*.data"))) == 1
    assert len(list(folder.glob("*.stream.json"))) == 50
    d = load_digits()
    own = d.data.astype(np.float64).nbytes + d.target.astype(np.float64).nbytes
    size = sum(p.stat().st_size for p in folder.iterdir())
    assert size <= 1.1 * own, (size, own)
    assert not any(p.name.startswith(".tmp-") for p in folder.iterdir())


def test_generator_data_are_cached_per_seed(reg: Registry) -> None:
    """A generator's data depend on the seed: one copy per seed, each stream its own."""
    specs = [StreamSpec("checkerboard[n_train=300,n_test=50]", seed=s) for s in (0, 1)]
    first = [get_stream(s, reg) for s in specs]
    again = [get_stream(s, reg) for s in specs]
    assert first[0].stream_id != first[1].stream_id
    assert [s.stream_id for s in again] == [s.stream_id for s in first]
    assert len(list(data_folder("checkerboard").glob("*.data"))) == 2


def test_cached_load_does_not_rehash(
    reg: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A verified entry (size, record, unchanged source files) is served without hashing."""
    path = tmp_path / "d.svm"
    write_old_libsvm(path, seed=5)
    spec = StreamSpec(f"libsvm[path={path}]", seed=1)
    first = get_stream(spec, reg)

    def no_hash(*args: object) -> str:
        raise AssertionError("hashed on a verified cache hit")

    monkeypatch.setattr(stream_module, "hash_stream", no_hash)
    monkeypatch.setattr(cache, "sha256_of", no_hash)
    again = get_stream(spec, reg)
    assert again.stream_id == first.stream_id
    assert np.array_equal(again.X.toarray(), first.X.toarray())  # a LIBSVM file: CSR


def test_a_failed_record_write_leaves_no_half_entry(
    reg: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The data file without its record is never left behind; the stream is still served."""
    spec = StreamSpec("digits", seed=2)
    real = cache.atomic_write_bytes

    def full(path: Path, data: bytes) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache, "atomic_write_bytes", full)
    got = get_stream(spec, reg)
    assert got.stream_id == build_stream(spec, reg).stream_id
    assert list(data_folder("digits").iterdir()) == []
    monkeypatch.setattr(cache, "atomic_write_bytes", real)
    get_stream(spec, reg)
    assert {p.suffix for p in data_folder("digits").iterdir()} == {".data", ".json"}


def test_file_size_limit_leaves_no_temporary_file_and_the_next_build_works(
    reg: Registry,
) -> None:
    """With RLIMIT_FSIZE below the data's size (disk full, for real, without root), the cache
    write raises in the writer and the stream is still served; nothing half-written stays;
    the next run, without the limit, caches the stream."""
    spec = StreamSpec("digits", seed=3, positive="0")
    expected = build_stream(spec, reg).stream_id
    child = textwrap.dedent(
        """
        import resource, signal
        from pathlib import Path
        import kbench.data.streams.cache as cache
        from kbench.core.registry import get_registry
        from kbench.data.downloads import cache_dir
        from kbench.data.streams import StreamSpec, get_stream
        from kbench.data.streams.build import load_dataset

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
        spec = StreamSpec("digits", seed=3, positive="0")
        reg = get_registry()
        base, sources = load_dataset(spec, reg)
        folder = cache_dir() / "data" / "digits"
        try:
            cache.write_dataset(folder, "k", base, [])
        except OSError as exc:
            print("raised", exc.errno)
        print("served", get_stream(spec, reg).stream_id)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    import errno

    assert f"raised {errno.EFBIG}" in proc.stdout
    assert f"served {expected}" in proc.stdout
    folder = data_folder("digits")
    assert not [p for p in cache_dir().rglob("*") if p.is_file()], list(folder.iterdir())

    got = get_stream(spec, reg)
    assert got.stream_id == expected
    assert len(list(folder.glob("*.data"))) == 1 and len(list(folder.glob("*.stream.json"))) == 1


def test_processes_building_the_same_data_at_once(reg: Registry) -> None:
    """Four processes building streams of one data set into one cache at the same time (Dask
    workers on a shared folder): every stream is right, one copy of the data, no temp file."""
    child = textwrap.dedent(
        """
        import sys
        from kbench.core.registry import get_registry
        from kbench.data.streams import StreamSpec, get_stream
        seed = int(sys.argv[1])
        print(get_stream(StreamSpec("digits", seed=seed, test_size=0.2), get_registry()).stream_id)
        """
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", child, str(seed)], stdout=subprocess.PIPE, text=True
        )
        for seed in range(4)
    ]
    ids = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    expected = [
        build_stream(StreamSpec("digits", seed=s, test_size=0.2), reg).stream_id for s in range(4)
    ]
    assert ids == expected
    folder = data_folder("digits")
    assert len(list(folder.glob("*.data"))) == 1 and len(list(folder.glob("*.stream.json"))) == 4
    assert not [p for p in folder.iterdir() if p.name.startswith(".tmp-")]
    assert [
        get_stream(StreamSpec("digits", seed=s, test_size=0.2), reg).stream_id for s in range(4)
    ] == expected


def test_cache_command_lists_and_clears(reg: Registry, tmp_path: Path) -> None:
    get_stream(StreamSpec("digits", seed=0), reg)
    get_stream(StreamSpec("iris", seed=0), reg)
    old = cache_dir() / "streams"  # the layout of earlier kbench versions: one file per stream
    old.mkdir()
    (old / "0123.npz").write_bytes(b"x" * 1000)
    shown = kbench("cache", "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    entries = {e["name"]: e for e in json.loads(shown.stdout)["entries"]}
    assert set(entries) == {"digits", "iris", "streams (old format)"}
    assert entries["streams (old format)"]["nbytes"] == 1000
    assert entries["digits"]["nbytes"] > 1797 * 64 * 8 and entries["digits"]["streams"] == 1
    table = kbench("cache", cwd=tmp_path)
    assert table.returncode == 0 and "digits" in table.stdout and "total" in table.stdout

    bad = kbench("cache", "--clear", "digts", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [bad.stderr.strip()]  # one line
    assert "no data set named 'digts'" in bad.stderr and "did you mean 'digits'" in bad.stderr
    assert data_folder("digits").is_dir()  # nothing deleted

    one = kbench("cache", "--clear", "digits", cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    assert not data_folder("digits").exists() and data_folder("iris").is_dir()
    rebuilt = get_stream(StreamSpec("digits", seed=0), reg)
    assert rebuilt.stream_id == build_stream(StreamSpec("digits", seed=0), reg).stream_id

    everything = kbench("cache", "--clear", cwd=tmp_path)
    assert everything.returncode == 0, everything.stderr
    assert list(cache_dir().iterdir()) == []


FORTRAN_PLUGIN = '''
import numpy as np
from kbench import hookimpl, Dataset
from kbench.core.components import Data
from kbench.data.readers import note_source


class Fortran(Dataset):
    """Fortran-ordered arrays read from a .npy file by numpy itself (not a kbench reader)."""
    name = "fortran_npy"
    source = "file"
    def __init__(self, *, path: str = ""):
        self.path = path
    def load(self, seed):
        note_source(self.path)
        X = np.asfortranarray(np.load(self.path))
        return Data(X=X, y=np.where(X[:, 0] > 0, 1.0, -1.0), task="binary", n_classes=2)


@hookimpl
def kbench_register_datasets(register):
    register(Fortran)
'''


def test_plugin_files_and_fortran_arrays(plugin_dist, tmp_path: Path) -> None:
    """A plugin reading its file itself declares it with note_source, so an edit is seen; its
    Fortran-ordered arrays give the same scaled stream built or cached."""
    plugin_dist("kb_fortran", FORTRAN_PLUGIN)
    reg = get_registry()
    path = tmp_path / "x.npy"
    rng = np.random.default_rng(0)
    np.save(path, rng.normal(size=(300, 7)) * rng.uniform(0.1, 1e3, size=7))
    spec = StreamSpec(f"fortran_npy[path={path}]", seed=2, scale="standard")
    built = build_stream(spec, reg)
    for _ in range(2):
        got = get_stream(spec, reg)
        assert got.stream_id == built.stream_id and np.array_equal(got.X, built.X)
    np.save(path, rng.normal(size=(300, 7)))
    assert get_stream(spec, reg).stream_id == build_stream(spec, reg).stream_id != built.stream_id


EDITOR = '''
import os
from pathlib import Path
from kbench import hookimpl
from kbench.core.components import Algorithm, param


class Editor(Algorithm):
    """Predicts +1; the second task to learn (a count in a file) flips the first label of
    $KB_EDIT as it learns its first example, after its stream was read."""
    name = "editor"
    uses_kernel = False
    k: int = param(0)
    def __post_init__(self):
        self.started = False
    def decision_one(self, x):
        return 1.0
    def learn_one(self, x, y):
        if self.started:
            return
        self.started = True
        path = Path(os.environ["KB_EDIT"])
        count = path.with_suffix(".count")
        began = int(count.read_text()) if count.exists() else 0
        count.write_text(str(began + 1))
        if began == 1:
            text = path.read_text()
            path.write_text(("-1" if text.startswith("+1") else "+1") + text[2:])
    def stats(self):
        return {"n_support": 0, "kernel_evals": 0}


@hookimpl
def kbench_register_algorithms(register):
    register(Editor)
'''


def test_a_file_edited_while_a_study_runs_is_told_apart(
    tmp_path: Path, plugin_dist, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second task to run edits the data file as it starts (after its stream was read):
    it and the first ran on the old content, the third reads the new one. The run ends
    with a one-line note, each result carries the id of the stream it read, and the same
    command again reruns the two tasks of the old content only."""
    plugin_dist("kb_editor", EDITOR)
    data = tmp_path / "train.svm"
    write_old_libsvm(data, seed=6)
    monkeypatch.setenv("KB_EDIT", str(data))
    args = ["-a", "editor[k=0]", "-a", "editor[k=1]", "-a", "editor[k=2]"]
    args += ["-d", f"libsvm[path={data}]"]
    args += ["--workers", "1", "--no-report", "--out", "res"]
    first = kbench("run", *args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    text = " ".join(first.stderr.split())
    assert "changed while the study ran: 1 task read the new content" in text, text
    assert load_results(tmp_path / "res").runs["stream_id"].value_counts().tolist() == [2, 1]

    again = kbench("run", *args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "2 tasks run again: their data changed since they ran" in again.stderr
    assert "changed while the study ran" not in again.stderr
    assert load_results(tmp_path / "res").runs["stream_id"].nunique() == 1
