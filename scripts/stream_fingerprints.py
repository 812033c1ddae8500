"""Print a hash of every array of a few streams, built and from the cache, to diff across a change.

    OPENBLAS_NUM_THREADS=1 python scripts/stream_fingerprints.py > before.txt
    # change how streams are built or cached
    OPENBLAS_NUM_THREADS=1 python scripts/stream_fingerprints.py > after.txt
    diff before.txt after.txt   # no output: the same arrays and stream ids

Each line: spec, seed, how the stream was obtained (built; first get, which caches it;
second get, from the cache), its stream id, a SHA-256 of its arrays (shapes and bytes of
X, y, X_test, y_test; of a sparse stream's CSR arrays), its task and classes. The LIBSVM and CSV files are written from a
fixed seed into ``$TMPDIR/kbench-fingerprints`` (a fixed path: it is part of their specs,
hence of their stream ids), and a fresh cache folder is used.
"""

from __future__ import annotations

import hashlib
import os
import random
import tempfile
from pathlib import Path

SPECS = [
    "a9a",
    "a9a[n=1000,scale=standard]",
    "digits[positive=5-9,test_size=0.2,scale=minmax]",
    "digits[order=counting]",
    "digits[order=file,n=300]",
    "checkerboard[n_train=500,n_test=100]",
    "drift[n_train=400,n_test=50]",
    "breast_cancer[test_size=0.3,scale=standard]",
    "libsvm[path={folder}/f.svm,test_size=0.25]",
    "csv[path={folder}/f.csv,task=multiclass,positive=1]",
    "diabetes[scale=minmax]",
]


def _write_files(folder: Path) -> None:
    rng = random.Random(5)
    with open(folder / "f.svm", "w") as fh:
        for _ in range(300):
            features = sorted(rng.sample(range(1, 20), 5))
            values = " ".join(f"{j}:{rng.random():.4f}" for j in features)
            fh.write(f"{rng.choice([1, -1])} {values}\n")
    with open(folder / "f.csv", "w") as fh:
        fh.write("a,b,c,label\n")
        for _ in range(200):
            fh.write(
                f"{rng.random():.5f},{rng.random():.3f},{rng.randint(0, 9)},"
                f"{rng.choice(['x', 'y', 'z'])}\n"
            )


def main() -> None:
    folder = Path(tempfile.gettempdir()) / "kbench-fingerprints"
    folder.mkdir(exist_ok=True)
    _write_files(folder)
    with tempfile.TemporaryDirectory(prefix="kbench-fingerprints-cache-") as cache:
        os.environ["KBENCH_CACHE"] = cache
        import numpy as np

        from kbench.core.registry import get_registry
        from kbench.data.streams import StreamSpec, build_stream, get_stream, split_stream_options

        reg = get_registry()
        for text in SPECS:
            dataset, options = split_stream_options(text.format(folder=folder))
            for seed in (0, 3):
                spec = StreamSpec(dataset=reg.canonical("dataset", dataset), seed=seed, **options)
                for how, make in (
                    ("build", build_stream),
                    ("get", get_stream),
                    ("get2", get_stream),
                ):
                    s = make(spec, reg)
                    h = hashlib.sha256()
                    for a in (s.X, s.y, s.X_test, s.y_test):
                        if a is None:
                            h.update(b"-")
                            continue
                        if hasattr(a, "indptr"):  # a sparse stream: its CSR arrays
                            parts = (a.data, a.indices, a.indptr)
                            assert not any(p.flags.writeable for p in parts)
                            h.update(f"csr{a.shape}".encode())
                            for p in parts:
                                h.update(p.astype(np.int64 if p is a.indptr else p.dtype).tobytes())
                            continue
                        assert a.dtype == np.float64 and a.flags.c_contiguous
                        assert not a.flags.writeable
                        h.update(repr(a.shape).encode())
                        h.update(a.tobytes())
                    print(text, seed, how, s.stream_id, h.hexdigest()[:16], s.task, s.n_classes)


if __name__ == "__main__":
    main()
