"""The examples IDSVM keeps (:mod:`idsvm`): their rows, their kernel values and the
support vectors, with the row cache of examples that left the margin set.

:class:`ExampleStore` holds every example seen (dense rows, or CSR rows in a sparse pool
whose slots follow their positions), the kernel rows of the margin vectors over all of them
(``KsT``), the margins h and sets, and the support vectors (α > 0) in contiguous rows for
predictions (:class:`_Store`, or :class:`_SparseStore` over a
:class:`~kbench.learners.SparseSupportBuffer`). Every kernel value asked for is counted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.cython_core import _idsvm, _kernels, _sparse
from kbench.learners import KernelKind, KernelSpec, SparseSupportBuffer
from kbench.learners.sparse_buffer import SparseRow

# The compiled step's numbering (its cpdef enums), as plain ints for per-step comparisons.
_SET, _EV = _idsvm.Set, _idsvm.Event
RESERVE, MARGIN, ERROR, MOVING = map(int, (_SET.RESERVE, _SET.MARGIN, _SET.ERROR, _SET.MOVING))
EV_C_MARGIN, EV_C_ERROR, EV_C_ZERO = map(int, (_EV.EV_C_MARGIN, _EV.EV_C_ERROR, _EV.EV_C_ZERO))
EV_S_ERROR, EV_S_RESERVE = int(_EV.EV_S_ERROR), int(_EV.EV_S_RESERVE)
EV_ENTER, EV_UNBOUNDED = int(_EV.EV_ENTER), int(_EV.EV_UNBOUNDED)
#: Kernels whose k(x, x) is 1 whatever x.
_UNIT_DIAGONAL = (int(KernelKind.K_RBF), int(KernelKind.K_LAPLACIAN))


def grown(old: np.ndarray, shape: Any, keep: Any, fill: Any = 0) -> np.ndarray:
    """A new array of ``shape`` (an int: the first axis) holding ``old``'s leading block
    ``keep`` (an int: along the first axis, all of the others), the rest ``fill``."""
    shape = (shape, *old.shape[1:]) if isinstance(shape, int) else shape
    keep = (keep, *old.shape[1:]) if isinstance(keep, int) else keep
    new = np.full(shape, fill, dtype=old.dtype)
    block = tuple(slice(0, k) for k in keep)
    new[block] = old[block]
    return new


class _Store:
    """The support vectors (α > 0) in contiguous rows, for predictions: f = k·coef + b."""

    def __init__(self, d: int, cap: int = 16) -> None:
        self.d = d
        self.X = np.zeros((cap, d))
        self.sq = np.zeros(cap)
        self.coef = np.zeros((cap, 1))
        self.own = np.zeros(cap, dtype=np.intp)
        self.krow = np.zeros(cap)
        self.m = 0

    def add(self, owner: int, x: np.ndarray, xsq: float, coef: float) -> int:
        if self.m == len(self.X):
            new = 2 * len(self.X)
            for name in ("X", "sq", "coef", "own", "krow"):
                setattr(self, name, grown(getattr(self, name), new, keep=self.m))
        p = self.m
        self.X[p] = x
        self.sq[p] = xsq
        self.coef[p, 0] = coef
        self.own[p] = owner
        self.m += 1
        return p

    def remove(self, p: int) -> int:
        """Delete row p (the last row takes its place); return the owner of the moved row
        or −1."""
        last = self.m - 1
        moved = -1
        if p != last:
            self.X[p] = self.X[last]
            self.sq[p] = self.sq[last]
            self.coef[p] = self.coef[last]
            self.own[p] = self.own[last]
            moved = int(self.own[p])
        self.m -= 1
        return moved


class _SparseStore:
    """The support vectors as CSR rows (:class:`_Store` on CSR rows): a growing
    :class:`SparseSupportBuffer`, its coefficients as ``coef`` and each row's owner."""

    def __init__(self, d: int, cap: int = 16) -> None:
        self.buf = SparseSupportBuffer(d, cap, growable=True)
        self.own = np.zeros(cap, dtype=np.intp)
        self._follow()

    def _follow(self) -> None:
        """Name the buffer's size and arrays as :class:`_Store` does (they change when it
        grows or a row comes or goes)."""
        self.m, self.coef, self.krow = self.buf.size, self.buf.alpha, self.buf.krow

    def add(self, owner: int, x: SparseRow, xsq: float, coef: float) -> int:
        p = self.buf.add(x, coef, xsq)
        if p >= len(self.own):
            self.own = grown(self.own, self.buf.capacity, keep=p)
        self.own[p] = owner
        self._follow()
        return p

    def remove(self, p: int) -> int:
        """As :meth:`_Store.remove`."""
        moved = self.buf.remove(p)
        self._follow()
        if moved < 0:
            return -1
        self.own[p] = self.own[moved]
        return int(self.own[p])


class ExampleStore:
    """The stored examples, their kernel values and the support vectors of :class:`IDSVM`
    (a base of it: it reads the learner's ``kernel``, ``bias``, ``cache_mb`` and ``name``;
    the counters are set by the learner's ``__post_init__``)."""

    kernel: Any
    bias: bool
    cache_mb: float
    name: str
    _spec: KernelSpec
    _builtin: bool

    # -- storage ----------------------------------------------------------------------------

    def _init(self, d: int, sparse: bool = False) -> None:
        cap = 16
        self._d = d
        if sparse:
            # Its kernel rows scatter through the support vectors' work vector (_csr): the
            # pool needs none of its own (d values).
            self._pool = SparseSupportBuffer(d, cap, growable=True, strategy="merge")
        else:
            self.X = np.zeros((cap, d))
        self.sq = np.zeros(cap)
        self.y = np.zeros(cap)
        self.kd = np.zeros(cap)
        self.alpha = np.zeros(cap)
        self.h = np.zeros(cap)
        self.kind = np.zeros(cap, dtype=np.int8)
        self.ids = np.zeros(cap, dtype=np.int64)
        self.spos = np.full(cap, -1, dtype=np.intp)
        self.svpos = np.full(cap, -1, dtype=np.intp)
        self.sidx = np.zeros(cap, dtype=np.intp)
        # K(x_S[j], x_i): one row per margin vector over every stored example, so that the
        # γ of a step reads the rows it needs contiguously.
        self.KsT = np.zeros((8, cap))
        self.R = np.zeros((9 + self._o, 9 + self._o))
        self.store: _Store | _SparseStore = _SparseStore(d) if sparse else _Store(d)
        self._excluded = np.zeros(cap, dtype=np.uint8)
        self._wgamma = np.empty(cap)
        self._wv, self._wbeta, self._ww = np.empty(10), np.empty(10), np.empty(10)

    def _grow_T(self) -> None:
        cap = 2 * len(self.sq)
        n = self.n
        if self._pool is None:
            self.X = grown(self.X, cap, keep=n)
        for name in (
            "sq",
            "y",
            "kd",
            "alpha",
            "h",
            "kind",
            "ids",
            "spos",
            "svpos",
            "sidx",
            "_excluded",
        ):
            fill = -1 if name in ("spos", "svpos") else 0
            setattr(self, name, grown(getattr(self, name), cap, keep=n, fill=fill))
        self.KsT = grown(self.KsT, (len(self.KsT), cap), keep=(self.ns, n))

    def _grow_S(self) -> None:
        cs = 2 * len(self.KsT)
        self.KsT = grown(self.KsT, (cs, self.KsT.shape[1]), keep=(self.ns, self.n))
        m = self.ns + self._o
        self.R = grown(self.R, (cs + self._o + 1, cs + self._o + 1), keep=(m, m))
        self._wv, self._wbeta, self._ww = np.empty(cs + 2), np.empty(cs + 2), np.empty(cs + 2)

    # -- kernel values ----------------------------------------------------------------------

    @property
    def kernel_requests(self) -> int:
        """Kernel values an implementation without the row cache computes (the paper's count)."""
        return self.kernel_evals + self.cached_values

    def _row_of(self, k: int) -> np.ndarray | SparseRow:
        """Stored example k: its dense row, or views of its CSR row in the pool."""
        pool = self._pool
        if pool is None:
            return self.X[k]
        a, b = pool.starts[k], pool.ends[k]
        return pool.indices[a:b], pool.data[a:b]

    def _csr(
        self,
        rows: SparseSupportBuffer,
        sq: np.ndarray,
        x: SparseRow,
        xsq: float,
        a: int,
        b: int,
        out: np.ndarray,
    ) -> None:
        """K(rows[i], x) for a ≤ i < b into ``out[: b − a]`` (squared norms ``sq[a:b]``):
        one compiled call, O(nnz) per row, through the support vectors' strategy."""
        buf = self.store.buf
        _sparse.kernel_row(
            self._spec,
            x[0],
            x[1],
            xsq,
            rows.starts[a:b],
            rows.ends[a:b],
            rows.indices,
            rows.data,
            sq[a:b],
            out,
            b - a,
            buf._strategy,
            buf.work,
        )

    def _row_T(self, x: np.ndarray | SparseRow, xsq: float) -> np.ndarray:
        """K(x_i, x) for every stored example (a new array)."""
        n = self.n
        out = np.empty(n)
        if n:
            if self._pool is not None:
                self._csr(self._pool, self.sq, x, xsq, 0, n, out)
            elif self._builtin:
                _kernels.kernel_row(self._spec, self.X, self.sq, x, xsq, out, n)
            else:
                out[:] = self.kernel.row(self.X[:n], x, sq=self.sq[:n], xsq=xsq)
            self.kernel_evals += n
        return out

    def _keep_row(self, k: int, row: np.ndarray) -> None:
        """Cache the kernel row of k (leaving S) within the byte budget, evicting the oldest."""
        budget = self.cache_mb * 2.0**20
        if row.nbytes > budget:
            return
        key = int(self.ids[k])
        old = self._rows.pop(key, None)
        if old is not None:
            self._row_bytes -= old.nbytes
        self._rows[key] = row.copy()
        self._row_bytes += row.nbytes
        while self._row_bytes > budget:
            _, dropped = self._rows.popitem(last=False)
            self._row_bytes -= dropped.nbytes

    def _column(self, k: int) -> np.ndarray:
        """K(x_i, x_k) for every stored example i, from the cached row when there is one
        (only the examples stored since it was cached are computed)."""
        cached = self._rows.pop(int(self.ids[k]), None)
        if cached is None:
            return self._row_T(self._row_of(k), self.sq[k])
        self._row_bytes -= cached.nbytes
        self.cache_hits += 1
        self.cached_values += len(cached)
        n, L = self.n, len(cached)
        out = np.empty(n)
        out[:L] = cached
        if n > L:
            tail = np.empty(n - L)
            if self._pool is not None:
                self._csr(self._pool, self.sq, self._row_of(k), self.sq[k], L, n, tail)
            elif self._builtin:
                _kernels.kernel_row(
                    self._spec, self.X[L:n], self.sq[L:n], self.X[k], self.sq[k], tail, n - L
                )
            else:
                tail[:] = self.kernel.row(self.X[L:n], self.X[k], sq=self.sq[L:n], xsq=self.sq[k])
            out[L:] = tail
            self.kernel_evals += n - L
        return out

    def _pair(self, k: int, x: np.ndarray | SparseRow, xsq: float) -> float:
        """K(x_k, x) for one stored example k."""
        self.kernel_evals += 1
        if self._pool is not None:
            out = np.empty(1)
            self._csr(self._pool, self.sq, x, xsq, k, k + 1, out)
            return float(out[0])
        if self._builtin:
            out = np.empty(1)
            _kernels.kernel_row(self._spec, self.X[k : k + 1], self.sq[k : k + 1], x, xsq, out, 1)
            return float(out[0])
        return float(np.asarray(self.kernel.row(self.X[k : k + 1], x))[0])

    def _self_kernel(self, x: np.ndarray | SparseRow, xsq: float) -> float:
        if self._spec.kind in _UNIT_DIAGONAL:
            return 1.0
        self.kernel_evals += 1
        if self._pool is not None:
            return self._spec.self_kernel(xsq)
        return float(np.asarray(self.kernel.diag(x[None, :]))[0])

    def _f(self, x: np.ndarray | SparseRow, xsq: float) -> float:
        """f(x) from the support vectors; leaves their kernel row in the store."""
        st = self.store
        m = st.m
        if m == 0:
            return self.b
        if isinstance(st, _SparseStore):
            self._csr(st.buf, st.buf.sq, x, xsq, 0, m, st.krow)
        elif self._builtin:
            _kernels.kernel_row(self._spec, st.X, st.sq, x, xsq, st.krow, m)
        else:
            st.krow[:m] = self.kernel.row(st.X[:m], x, sq=st.sq[:m], xsq=xsq)
        self.kernel_evals += m
        return float(st.krow[:m] @ st.coef[:m, 0]) + self.b

    # -- support-vector store ---------------------------------------------------------------

    def _sync(self, idx: np.ndarray) -> None:
        """Bring the store's rows of the examples idx in line with their α."""
        st = self.store
        idx = np.unique(idx)
        a, p = self.alpha[idx], self.svpos[idx]
        keep = (a > 0.0) & (p >= 0)
        st.coef[p[keep], 0] = a[keep] * self.y[idx[keep]]
        for i in idx[(a > 0.0) & (p < 0)]:
            i = int(i)
            self.svpos[i] = st.add(i, self._row_of(i), self.sq[i], self.alpha[i] * self.y[i])
        for i in idx[(a <= 0.0) & (p >= 0)]:
            i = int(i)
            moved = st.remove(int(self.svpos[i]))
            if moved >= 0:
                self.svpos[moved] = self.svpos[i]
            self.svpos[i] = -1

    def _delete(self, c: int) -> None:
        """Drop stored example c (α_c = 0, not in S); the last example takes its place."""
        # The cached rows are indexed by position in T, which changes here.
        self._rows.clear()
        self._row_bytes = 0
        last = self.n - 1
        if self._pool is not None:
            self._pool.remove(c)  # the last row takes slot c, as below
        elif c != last:
            self.X[c] = self.X[last]
        if c != last:
            for name in ("sq", "y", "kd", "alpha", "h", "kind", "ids", "spos", "svpos"):
                arr = getattr(self, name)
                arr[c] = arr[last]
            self.KsT[: self.ns, c] = self.KsT[: self.ns, last]
            if self.spos[c] >= 0:
                self.sidx[self.spos[c]] = c
            if self.svpos[c] >= 0:
                self.store.own[self.svpos[c]] = c
        self.n = last

    def exact_margins(self) -> np.ndarray:
        """h = y f − 1 for every stored example, recomputed from α (kernel values counted)."""
        n = self.n
        if self._pool is not None:
            # One block of compiled sparse rows: every example against the support vectors.
            st = self.store
            f = np.full(n, self.b)
            if st.m and n:
                f += st.buf.decision_many(self.kernel, self._pool.to_csr())[:, 0]
                self.kernel_evals += n * st.m
            return self.y[:n] * f - 1.0
        out = np.empty(n)
        for i in range(n):
            out[i] = self.y[i] * self._f(self.X[i], self.sq[i]) - 1.0
        self._last = None  # the store's kernel row no longer belongs to the last x asked about
        return out
