"""What the learners that revisit their support vectors share (the Huller, LASVM).

Both keep examples in slots of fixed-size arrays owned here and bound to a compiled core
(``HullerCore``, ``LasvmCore``), a kernel-row cache keyed by slot, the map from training
ids (rows of the stream, see :mod:`kbench.learners.example_ids`) to slots, and the examples held back while
only one class has been seen. The cores share a protocol: ``block(X, y, ids, pred,
start[, insert_only])`` returns ``(next_row, status)`` with the statuses ``STATUS_*`` of
their module; ``bind``, ``bind_cache`` and ``bind_ids`` take the arrays.

CSR rows (``sparse_input``) are learned natively: the support vectors are the CSR rows of
a :class:`~kbench.learners.sparse_buffer.SparseSupportBuffer`, and the core's compiled loop runs
with a :class:`~kbench.cython_core._sparse.SparseBlock` of the rows attached (at most
``BLOCK_ROWS`` a call, the store's pool reserved for them beforehand), so that the kernel
row of a new example, the cached rows between support vectors and the removals all read
and write the sparse store in compiled code (``_kernel_cache.pxd``). CSR blocks are copies
(scipy slices copy), so a CSR row is known again by its position in the runner's pass
(:class:`~kbench.learners.example_ids.PassIds`, checked by a hash of its
content).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import numpy as np

from kbench.core.arrays import grown, is_sparse
from kbench.core.components import Algorithm, Kernel
from kbench.cython_core import _kernels
from kbench.learners.example_ids import ExampleIds, PassIds
from kbench.learners.expansion import refuse_switch
from kbench.learners.kernel_cache import MB, KernelCache
from kbench.learners.rows import (
    BLOCK_ROWS,
    Rows,
    compiled_kernel,
    csr_parts,
    labels,
    packed_rows,
)
from kbench.learners.sparse_buffer import SparseSupportBuffer

#: Slots allocated at first; the arrays double when full.
INITIAL_CAPACITY = 64


class RevisitingLearner(Algorithm):
    """Base of kernel learners with a slot buffer, a row cache and example identities.

    Subclasses set ``_module`` (the compiled module with the STATUS_* constants), create
    ``self._core`` in ``__init__`` after calling :meth:`_setup`, and implement
    :meth:`_array_names`, :meth:`_bind_arrays` and :meth:`_learn_python` (the path of
    kernels without a compiled form).
    """

    _module: Any = None
    #: CSR rows are learned with the same core, the support vectors kept sparse.
    sparse_input = True
    #: Coefficient columns of the held-out decision (``decision_function``'s ``coef``).
    _n_coef = 1
    # Set by the subclass (the core) and by _allocate (the per-slot arrays it names).
    _core: Any
    _SV: np.ndarray
    _sv_ids: np.ndarray
    _sq: np.ndarray
    _krow: np.ndarray
    _scratch: np.ndarray

    @property
    def _kernel(self) -> Kernel:
        """The kernel (Algorithm refuses a missing one: ``uses_kernel``)."""
        assert self.kernel is not None
        return self.kernel

    def _setup(self, cache_mb: float) -> None:
        compiled = self._kernel.compiled()
        self._compiled = compiled
        self._kernel_args = (compiled or (0, 0.0, 0.0, 0.0, 0.0), compiled is not None)
        self._cache_budget = int(cache_mb * MB)
        self._ids = ExampleIds()
        self._pass_ids = PassIds()  # CSR rows: ids by position in the pass
        self._id_slot = np.full(0, -1, dtype=np.int64)
        self._cache: KernelCache | None = None
        self._d = -1
        self._pending: list[tuple[Any, float, int]] = []
        self._pending_ids: set[int] = set()
        # The CSR support vectors, when the learner takes CSR rows (set by _ensure).
        self._store: SparseSupportBuffer | None = None

    # -- storage ------------------------------------------------------------------------------

    def _array_names(self) -> tuple[str, ...]:
        """Per-slot float arrays besides ``_SV`` and ``_sv_ids`` (all of length capacity)."""
        raise NotImplementedError

    def _bind_arrays(self) -> None:
        """Pass the arrays to the core."""
        raise NotImplementedError

    def _ensure(self, d: int, sparse: bool = False) -> None:
        if self._d == d and sparse == (self._store is not None):
            return
        if self._d >= 0:
            if self._d != d:
                raise ValueError(
                    f"{self.name}: examples have {d} features, earlier ones had {self._d}"
                )
            refuse_switch(self.name, sparse)
        if sparse:
            compiled_kernel(self._kernel)  # CSR rows need a built-in kernel
            self._store = SparseSupportBuffer(
                d, INITIAL_CAPACITY, n_outputs=self._n_coef, growable=True
            )
        self._d = d
        self._cache = KernelCache(self._cache_budget, INITIAL_CAPACITY)
        self._allocate(INITIAL_CAPACITY, 0)
        self._core.bind_ids(self._id_slot)

    def _allocate(self, cap: int, keep: int) -> None:
        if not hasattr(self, "_SV"):  # the first allocation grows empty arrays
            # On CSR rows the vectors live in the sparse store: no dense columns.
            width = 0 if self._store is not None else self._d
            self._SV, self._sv_ids = np.zeros((0, width)), np.zeros(0, dtype=np.int64)
            for name in self._array_names():
                setattr(self, name, np.zeros(0))
        for name in ("_SV", "_sv_ids", *self._array_names()):
            fill = -1 if name == "_sv_ids" else 0
            setattr(self, name, grown(getattr(self, name), cap, keep=keep, fill=fill))
        if self._store is not None and self._store.capacity < cap:
            self._store.grow(cap)
        self._bind_arrays()
        assert self._cache is not None
        if self._cache.capacity != cap:
            self._cache.resize(cap)
        self._core.bind_cache(*self._cache.arrays())

    def _grow(self) -> None:
        self._allocate(2 * self._core.cap, self._core.m)

    def _bind_ids(self) -> None:
        if len(self._id_slot) != self._ids.n:
            self._id_slot = np.full(self._ids.n, -1, dtype=np.int64)
            self._core.bind_ids(self._id_slot)

    # -- CSR rows -----------------------------------------------------------------------------

    @contextmanager
    def _attached(self, xp: np.ndarray, indices: np.ndarray, data: np.ndarray) -> Iterator[None]:
        """The core's loops read the CSR examples ``xp`` (int64 row pointers into indices
        and data) against the sparse store; the store takes back what they wrote after."""
        store = self._store
        assert store is not None and self._compiled is not None
        block = store.block(self._compiled, xp, indices, data)
        self._core.attach(block)
        try:
            yield
        finally:
            self._core.detach()
            store.absorb(block, self._core.m)

    def _attached_store(self) -> Any:
        """:meth:`_attached` with no examples (the core revisits its support vectors only);
        a no-op context on dense rows."""
        if self._store is None:
            return nullcontext()
        return self._attached(np.zeros(1, dtype=np.int64), np.zeros(0, np.int32), np.zeros(0))

    def _block_csr(
        self,
        xp: np.ndarray,
        indices: np.ndarray,
        data: np.ndarray,
        y: np.ndarray,
        ids: np.ndarray,
        pred: np.ndarray,
        first_pass: bool = True,
    ) -> None:
        """:meth:`_block` on CSR rows ``xp`` (``BLOCK_ROWS`` or fewer): each call of the
        core's loop gets a block of the rows not yet learned (a new one after the store
        grows); ``first_pass`` False for held examples (no predictions nor revisits)."""
        core, mod = self._core, self._module
        i, n = 0, len(xp) - 1
        while i < n:
            with self._attached(xp[i:], indices, data):
                j, status = core.block(
                    np.empty((n - i, 0)), y[i:], ids[i:], pred[i:], 0, not first_pass
                )
            i += j
            if status == mod.STATUS_GROW:
                self._grow()
            elif status == mod.STATUS_PENDING:
                a, b = xp[i - 1], xp[i]
                self._keep((indices[a:b], data[a:b]), float(y[i - 1]), int(ids[i - 1]))
            elif status == mod.STATUS_FLUSH:
                self._flush()
            else:
                break

    def _learn_predict_csr(self, X: Any, y: np.ndarray) -> np.ndarray:
        """Predict then learn the rows of the CSR matrix X, ``BLOCK_ROWS`` a call."""
        indptr, indices, data = csr_parts(X)
        indptr = indptr.astype(np.int64, copy=False)
        y = np.ascontiguousarray(y, dtype=np.float64)
        n = X.shape[0]
        ids = self._pass_ids.block(indptr, indices, data)
        if len(self._id_slot) < self._pass_ids.n:  # keep the slots of the ids known
            self._id_slot = grown(
                self._id_slot, max(self._pass_ids.n, 2 * len(self._id_slot)), fill=-1
            )
            self._core.bind_ids(self._id_slot)
        pred = np.empty(n)
        for a in range(0, n, BLOCK_ROWS):
            b = min(a + BLOCK_ROWS, n)
            self._block_csr(indptr[a : b + 1], indices, data, y[a:b], ids[a:b], pred[a:b])
        self._after(-1)
        return pred

    # -- learning -----------------------------------------------------------------------------

    def _block(self, X: np.ndarray, y: np.ndarray, ids: np.ndarray, pred: np.ndarray) -> None:
        core, mod = self._core, self._module
        i = 0
        while i < len(X):
            i, status = core.block(X, y, ids, pred, i)
            if status == mod.STATUS_GROW:
                self._grow()
            elif status == mod.STATUS_PENDING:
                self._keep(X[i - 1], float(y[i - 1]), int(ids[i - 1]))
            elif status == mod.STATUS_FLUSH:
                self._flush()
            else:
                break

    def _keep(self, x: Any, y: float, xid: int) -> None:
        """Hold an example until the other class has one (a view of the stream when it has an id)."""
        if xid >= 0:
            if xid in self._pending_ids:
                return
            self._pending_ids.add(xid)
        if isinstance(x, tuple):  # a CSR row: a pair of arrays of the caller's block
            x = (x[0].copy(), x[1].copy())
        elif xid < 0:
            x = x.copy()
        self._pending.append((x, y, xid))
        self._core.n_pending = len(self._pending)

    def _flush(self) -> None:
        """Learn the held examples (without predictions), now that both classes have one."""
        pending, self._pending, self._pending_ids = self._pending, [], set()
        self._core.n_pending = 0
        if self._store is not None:
            xp, indices, data = packed_rows([p[0] for p in pending])
            yP = np.array([p[1] for p in pending])
            idP = np.array([p[2] for p in pending], dtype=np.int64)
            self._block_csr(xp, indices, data, yP, idP, np.empty(len(pending)), False)
        elif self._compiled is not None:
            P = np.ascontiguousarray(np.array([p[0] for p in pending]))
            yP = np.array([p[1] for p in pending])
            idP = np.array([p[2] for p in pending], dtype=np.int64)
            i, dummy = 0, np.empty(len(P))
            while i < len(P):
                i, status = self._core.block(P, yP, idP, dummy, i, True)
                if status == self._module.STATUS_GROW:
                    self._grow()
        else:
            for x, y, xid in pending:
                self._learn_python(x, y, xid, first_pass=False)

    def _held_back(self, status: int, x: np.ndarray, y: float, xid: int) -> bool:
        """Whether the core's ``status`` for an example on the Python path ends its step: it
        is held (no example of the other class yet) or the held ones are learned (one came)."""
        if status == self._module.STATUS_PENDING:
            self._keep(x, y, xid)
            return True
        if status == self._module.STATUS_FLUSH:
            self._flush()
            return True
        return False

    def _learn_python(self, x: np.ndarray, y: float, xid: int, *, first_pass: bool) -> None:
        """One example with rows from ``kernel.row``; ``first_pass`` False for held examples."""
        raise NotImplementedError

    def _after(self, last_id: int) -> None:
        """Called after each learning call with the id of its last example."""

    def end_pass(self) -> None:
        """The runner's end of a pass: the next CSR row is the first of a pass."""
        self._pass_ids.end_pass()

    def learn_predict_many(self, X: Any, y: np.ndarray) -> np.ndarray:
        return self._learn(X, y, predict=True)

    def learn_one(self, x: Any, y: float) -> None:
        self._learn(Rows.one(x), np.array([float(y)]), predict=False)

    def _learn(self, X: Any, y: np.ndarray, *, predict: bool) -> np.ndarray:
        """The one learning path of blocks and single rows, dense or CSR: predictions
        before each update (``predict`` False: one row of ``learn_one``, whose kernel
        without a compiled form then predicts nothing)."""
        rows = Rows.of(X)
        y = labels(y, rows.n)
        if rows.sparse or self._store is not None:  # a dense block made CSR after CSR ones
            X = rows.as_sparse().csr
            self._ensure(rows.d, True)
            return self._learn_predict_csr(X, y)
        self._ensure(rows.d)
        X = rows.X if rows.row0 is None else rows.row0[None, :]
        # One row: its id from the row itself (a 1-D view of the stream; x[None, :] has
        # a zero row stride, which no block of the stream has).
        ids = self._ids.block(X) if rows.row0 is None else np.array([self._ids.one(rows.row0)])
        self._bind_ids()
        pred = np.empty(rows.n)
        if self._compiled is not None:
            self._block(X, y, ids, pred)
            self._after(int(ids[-1]) if len(ids) else -1)
            return pred
        for i in range(rows.n):  # a kernel without a compiled form: rows from kernel.row
            x = X[i]
            if predict:
                pred[i] = self.predict_one(x)
            self._learn_python(x, float(y[i]), int(ids[i]), first_pass=True)
            self._after(int(ids[i]))
        return pred

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """f(x) for each row of X."""
        raise NotImplementedError

    def decision_many(self, X: Any) -> np.ndarray:
        """Decision values of the rows of X (dense or CSR), without learning."""
        return self.decision_function(X)

    def predict_many(self, X: Any) -> np.ndarray:
        return self.labels_of(self.decision_function(X))

    @property
    def _m(self) -> int:
        """The number of slots in use (0 before the first example allocates any)."""
        return self._core.m if self._d >= 0 else 0

    def _row(self, slot: int) -> np.ndarray:
        """Kernel row of a stored example over the slots in use, through the cache."""
        assert self._cache is not None
        return self._cache.fetch(
            self._kernel, slot, self._core.m, self._SV, self._sq, self._scratch
        )

    def _new_row(self, x: np.ndarray, xsq: float) -> tuple[np.ndarray, float]:
        """Row of a new example over the slots in use (in ``_krow``) and k(x, x)."""
        m = self._core.m
        row = self._krow[:m]
        if m:
            row[:] = self._kernel.row(self._SV[:m], x, sq=self._sq[:m], xsq=xsq)
        self._core.row_evals += m
        return row, float(np.asarray(self._kernel.diag(x[None, :]))[0])

    def _features(self, X: Any) -> Any:
        """X as the rows the support vectors are kept in: CSR on CSR rows, else C-order
        float64."""
        if self._store is not None:
            import scipy.sparse as sp

            return X if is_sparse(X) else sp.csr_matrix(np.asarray(X, dtype=np.float64))
        if is_sparse(X):
            X = X.toarray()
        return np.ascontiguousarray(X, dtype=np.float64)

    def _gram_block(self, X: Any, coef: np.ndarray) -> np.ndarray:
        """``k(X, SV[:m]) @ coef`` in blocks (compiled kernels) or through ``kernel.matrix``;
        on CSR rows from the sparse store (X CSR, see :meth:`_features`)."""
        m = self._core.m
        if self._store is not None:
            self._store.alpha[:m] = coef[:m]
            return self._store.decision_many(self._kernel, X)
        out = np.empty((len(X), coef.shape[1]))
        if self._compiled is None:
            out[:] = np.asarray(self._kernel.matrix(X, self._SV[:m])) @ coef
            return out
        xsq = np.einsum("ij,ij->i", X, X)
        block = max(1, min(2048, 4_000_000 // m))
        K = np.empty((min(block, len(X)), m))
        for a in range(0, len(X), block):
            b = min(a + block, len(X))
            _kernels.decision_block(
                self._compiled, self._SV, self._sq, coef, m, X[a:b], xsq[a:b], K, out[a:b]
            )
        return out

    def _support_rows(self) -> Any:
        """The stored vectors: dense rows, or on CSR rows a CSR matrix of the store's rows."""
        m = self._m
        if self._store is None:
            return self._SV[:m].copy() if m else np.zeros((0, max(self._d, 0)))
        return self._store.to_csr()

    def _cache_stats(self) -> dict[str, float]:
        return self._cache.stats() if self._cache is not None else {}

    def _kernel_evals(self) -> int:
        cache = self._cache.kernel_evals if self._cache is not None else 0
        return int(self._core.row_evals) + cache
