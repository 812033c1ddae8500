"""A stream: the read-only arrays every algorithm of a study sees, and its id, a hash of
its spec and contents (results carry it; comparisons refuse to pair different ids)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from kbench.core.arrays import is_sparse
from kbench.data.gathered import RowGather
from kbench.data.streams.spec import StreamSpec

#: A stream's arrays and task: X, y, X_test, y_test, task, number of classes.
StreamArrays = tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None, str, int]


@dataclass(frozen=True)
class Stream:
    """Read-only arrays of one stream, and its id.

    ``y`` and ``y_test`` are C-contiguous float64 arrays; ``X`` and ``X_test`` are too for
    a dense stream, and read-only ``scipy.sparse.csr_matrix`` (float64 values, sorted
    int32 indices, no stored zeros) for a sparse one. A large seeded order of a cached data
    set makes ``X`` a :class:`~kbench.data.gathered.RowGather` (row indices into the mapped
    data set), whose slices are such arrays: read ``X[a:b]``, not ``X`` itself.
    """

    spec: StreamSpec
    X: np.ndarray
    y: np.ndarray
    task: str
    n_classes: int
    stream_id: str
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None

    @classmethod
    def of(cls, spec: StreamSpec, arrays: StreamArrays, stream_id: str | None = None) -> Stream:
        """The stream of ``spec`` with these arrays, its id hashed from spec and contents
        (or ``stream_id``: the id a cache recorded for the same arrays)."""
        X, y, Xt, yt, task, n_classes = arrays
        return cls(
            spec=spec,
            X=X,
            y=y,
            X_test=Xt,
            y_test=yt,
            task=task,
            n_classes=n_classes,
            stream_id=hash_stream(spec, X, y, Xt, yt) if stream_id is None else stream_id,
        )

    @property
    def n(self) -> int:
        """Number of training examples."""
        return self.X.shape[0]

    @property
    def sparse(self) -> bool:
        """Whether the features are CSR."""
        return is_sparse(self.X) or (isinstance(self.X, RowGather) and self.X.sparse)

    @property
    def d(self) -> int:
        """Dimension."""
        return self.X.shape[1]


def hash_stream(spec: StreamSpec, *arrays: Any) -> str:
    h = hashlib.sha256(json.dumps(spec.to_dict(), sort_keys=True).encode())
    for a in arrays:
        if a is None:
            h.update(b"-")
        elif isinstance(a, RowGather):
            a.hash_into(h)  # the bytes of the eager gather, read a chunk at a time
        elif is_sparse(a):
            # The CSR arrays themselves (never densified); index pointers as int64 so that
            # the id does not depend on the index type a gather happened to choose.
            h.update(f"csr{a.shape}{a.indices.dtype}".encode())
            h.update(np.ascontiguousarray(a.indptr, dtype=np.int64))
            h.update(np.ascontiguousarray(a.indices))
            h.update(np.ascontiguousarray(a.data))
        else:
            h.update(np.ascontiguousarray(a))  # the bytes of tobytes(), without a copy
    return h.hexdigest()[:16]
