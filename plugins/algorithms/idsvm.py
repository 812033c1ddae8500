"""IDSVM: exact incremental and decremental SVM learning (Cauwenberghs and Poggio 2001).

After every example the SVM solution on all examples seen so far is the exact optimum of

    max_α 1ᵀα − ½ αᵀQα,  0 ≤ α ≤ C  (and yᵀα = 0 with a bias b),   Q_ij = y_i y_j k(x_i, x_j),

kept by adiabatic increments: the new example's α_c grows while every other example keeps
its Karush–Kuhn–Tucker conditions, in the convention of the paper ``h_i = y_i f(x_i) − 1``:

* margin vectors S: 0 < α < C, h = 0 (their α move with α_c);
* error vectors E: α = C, h ≤ 0;  reserve vectors R: α = 0, h ≥ 0 (fixed).

With ``R = A⁻¹``, ``A = [[0, y_Sᵀ], [y_S, Q_SS]]`` (bias) or ``A = Q_SS`` (no bias), a step
Δα_c moves ``[Δb; Δα_S] = β Δα_c`` with ``β = −R [y_c; Q_Sc]`` and every other margin by
``Δh_i = γ_i Δα_c``, ``γ_i = Q_ic + Σ_{j∈S} Q_ij β_j + y_i β_b``. The largest step that keeps
every condition is taken; the example that hits its bound changes set, R grows or shrinks by
a rank-one update, and the loop goes on until c itself reaches S (h_c = 0) or E (α_c = C).
Decremental unlearning runs the same loop backwards until α_c = 0.

Numerical care (kbench spec 001 §7.13): ties go to c's own transition first, then the lowest
index; sensitivities below 1e-12 are treated as zero; an example whose Schur complement
κ = Q_kk + vᵀβ^k is below 1e-8·max(Q_kk, 1) (a duplicate, or a low-rank kernel) is refused
entry to S and counted in ``degenerate`` — in exact arithmetic such an example's margin does
not move while S keeps its members, so it stays at h = 0 on its bound until S loses one; every loop has a step bound (hits counted in
``step_caps``); R is re-inverted and the margins h recomputed from α every ``refresh``
examples, their drift recorded.
"""

from __future__ import annotations

import time
from collections import OrderedDict

import numpy as np

from kbench import hookimpl
from kbench.core.arrays import grown, is_sparse
from kbench.core.components import Algorithm, param
from kbench.core.kernel_rows import as_matrix
from kbench.cython_core import _idsvm, _kernels, _sparse
from kbench.learners.sparse_buffer import SparseRow, SparseSupportBuffer
from kbench.plugins.algorithms._sparse_rows import (
    OneRowMethods,
    as_csr,
    compiled_kernel,
    csr_parts,
    refuse_switch,
    self_kernel,
)

# The compiled step's numbering (its cpdef enums), as plain ints for per-step comparisons.
_SET, _EV = _idsvm.Set, _idsvm.Event
RESERVE, MARGIN, ERROR, MOVING = map(int, (_SET.RESERVE, _SET.MARGIN, _SET.ERROR, _SET.MOVING))
EV_C_MARGIN, EV_C_ERROR, EV_C_ZERO = map(int, (_EV.EV_C_MARGIN, _EV.EV_C_ERROR, _EV.EV_C_ZERO))
EV_S_ERROR, EV_S_RESERVE = int(_EV.EV_S_ERROR), int(_EV.EV_S_RESERVE)
EV_ENTER, EV_UNBOUNDED = int(_EV.EV_ENTER), int(_EV.EV_UNBOUNDED)
#: Sensitivities |β_j|, |γ_i| at or below this are treated as zero.
EPS = 1e-12
#: Relative size of the Schur complement below which an example may not enter S. Rounding
#: leaves a dependent example (κ = 0 exactly) with |κ| of order 1e-10·Q_kk on low-rank
#: kernels; RBF points this close to dependent are 1e-4/√γ apart.
SINGULAR = 1e-8
#: A Schur complement below −INDEFINITE·max(Q_kk, 1) is not rounding: the kernel is not
#: positive semi-definite, and IDSVM stops with an error.
INDEFINITE = 1e-4


def _check_label(owner: str, y: float) -> None:
    if y != 1.0 and y != -1.0:
        raise ValueError(f"{owner}: labels must be −1 or +1, got {y!r}")


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


class IDSVM(OneRowMethods, Algorithm):
    """IDSVM, the exact online SVM of Cauwenberghs and Poggio (2001), with or without a bias.

    The SVM with hinge loss and box constraint C on every example seen so far, kept at its
    optimum after each example by incremental learning; :meth:`unlearn` removes an example
    by decremental unlearning. Every example is stored (reserve vectors may become support
    vectors again), with the kernel values between all stored examples and the margin
    vectors. The optimum is the batch SVM's: with ``bias=True`` LIBSVM's C-SVC, with
    ``bias=False`` the zero-bias SVM that ``online_svm_r`` trains on its active set.

    CSR rows (``sparse_input``, built-in kernels) are stored as they come: the examples in a
    sparse pool whose slots follow their positions, the support vectors in a
    :class:`SparseSupportBuffer`, and every kernel row is one compiled sparse call, O(nnz)
    per value; the bookkeeping is the dense rows' own.

    Parameters
    ----------
    C
        Box constraint, > 0.
    bias
        Learn an offset b (the dual then has the equality constraint yᵀα = 0).
    max_steps
        Bound on bookkeeping steps per example; 0 uses 10·(examples stored) + 1000. Hits
        are counted in ``step_caps``.
    refresh
        Every this many examples, re-invert the margin-vector matrix and recompute every
        margin from α, recording the drift of the rank-one updates (0 never).
    max_kernel_evals
        Stop learning (keep predicting with the model reached) once this many kernel values
        have been requested (``kernel_requests``: those computed plus those the row cache
        served, so the stopping point does not depend on ``cache_mb``); 0 never. The paper
        stops IDSVM after 5 000 s; a kernel budget gives the same effect reproducibly.
    max_seconds
        Stop learning after this much time spent learning; 0 never.
    cache_mb
        Byte budget (MiB) of the kernel rows kept for examples that left the margin set, most
        recently used first: margin vectors often return, and a returning one then costs
        only the values for examples that arrived since. 0 keeps none.
    """

    name = "idsvm"
    paper = "Cauwenberghs and Poggio (2001). Incremental and decremental support vector machine learning. NIPS."
    tasks = frozenset({"binary"})
    test_params = {"C": 1.0}

    C: float = param(1.0, low=0.0, low_open=True)
    bias: bool = param(False)
    max_steps: int = param(0, low=0)
    refresh: int = param(1000, low=0)
    max_kernel_evals: int = param(0, low=0)
    max_seconds: float = param(0.0, low=0.0)
    cache_mb: float = param(100.0, low=0.0)

    @property
    def sparse_input(self) -> bool:
        """CSR rows as they are with a built-in kernel (its kernel rows are compiled sparse
        calls); a kernel written in Python gets dense rows (the runner's DenseRows)."""
        return self.kernel is not None and self.kernel.compiled() is not None

    def __post_init__(self) -> None:
        # Rows K(x_k, x_T[:L]) of examples that left S, by example id (LRU order), with the
        # number of examples L they cover; the bytes they hold.
        self._rows: OrderedDict[int, np.ndarray] = OrderedDict()
        self._row_bytes = 0
        self.cache_hits = 0
        self.cached_values = 0
        assert self.kernel is not None
        self._compiled = self.kernel.compiled()
        self._o = 1 if self.bias else 0
        self._d: int | None = None
        # The examples' CSR rows, slot i holding example i of T, once CSR rows are learned
        # (then there is no dense X); None on dense rows.
        self._pool: SparseSupportBuffer | None = None
        self.b = 0.0
        self.n = 0
        self.ns = 0
        self.kernel_evals = 0
        self.steps = 0
        self.degenerate = 0
        self.step_caps = 0
        self.learned = 0
        self.frozen = False
        self.learn_time = 0.0
        self.drift_R = 0.0
        self.drift_h = 0.0
        self._next_id = 0
        self._last: tuple[object, float] | None = None

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
            self._compiled, x[0], x[1], xsq, rows.starts[a:b], rows.ends[a:b], rows.indices,
            rows.data, sq[a:b], out, b - a, buf._strategy, buf.work,
        )  # fmt: skip

    def _row_T(self, x: np.ndarray | SparseRow, xsq: float) -> np.ndarray:
        """K(x_i, x) for every stored example (a new array)."""
        n = self.n
        out = np.empty(n)
        if n:
            if self._pool is not None:
                self._csr(self._pool, self.sq, x, xsq, 0, n, out)
            elif self._compiled is not None:
                _kernels.kernel_row(self._compiled, self.X, self.sq, x, xsq, out, n)
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
            elif self._compiled is not None:
                _kernels.kernel_row(
                    self._compiled, self.X[L:n], self.sq[L:n], self.X[k], self.sq[k], tail, n - L
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
        if self._compiled is not None:
            out = np.empty(1)
            _kernels.kernel_row(
                self._compiled, self.X[k : k + 1], self.sq[k : k + 1], x, xsq, out, 1
            )
            return float(out[0])
        return float(np.asarray(self.kernel.row(self.X[k : k + 1], x))[0])

    def _self_kernel(self, x: np.ndarray | SparseRow, xsq: float) -> float:
        if self._compiled is not None and self._compiled[0] in (1, 3):  # RBF, Laplacian
            return 1.0
        self.kernel_evals += 1
        if self._pool is not None:
            return self_kernel(self._compiled, xsq)
        return float(np.asarray(self.kernel.diag(x[None, :]))[0])

    def _f(self, x: np.ndarray | SparseRow, xsq: float) -> float:
        """f(x) from the support vectors; leaves their kernel row in the store."""
        st = self.store
        m = st.m
        if m == 0:
            return self.b
        if isinstance(st, _SparseStore):
            self._csr(st.buf, st.buf.sq, x, xsq, 0, m, st.krow)
        elif self._compiled is not None:
            _kernels.kernel_row(self._compiled, st.X, st.sq, x, xsq, st.krow, m)
        else:
            st.krow[:m] = self.kernel.row(st.X[:m], x, sq=st.sq[:m], xsq=xsq)
        self.kernel_evals += m
        return float(st.krow[:m] @ st.coef[:m, 0]) + self.b

    # -- the matrix R ----------------------------------------------------------------------

    def _v(self, col: np.ndarray, yk: float) -> np.ndarray:
        """[y_k; Q_Sk] (bias) or Q_Sk, from k's kernel column over the stored examples."""
        ns = self.ns
        S = self.sidx[:ns]
        q = self.y[S] * yk * col[S]
        return np.concatenate(([yk], q)) if self.bias else q

    def _expand(self, k: int, col: np.ndarray) -> bool:
        """Add k to S; False (and k is refused) when its Schur complement is degenerate."""
        ns, o = self.ns, self._o
        yk, Qkk = self.y[k], self.kd[k]
        if ns + 1 >= len(self.KsT):
            self._grow_S()
        if ns == 0 and self.bias:
            self.R[:2, :2] = [[-Qkk, yk], [yk, 0.0]]
        else:
            v = self._v(col, yk)
            kappa = _idsvm.r_expand(self.R, ns + o, v, Qkk, SINGULAR * max(Qkk, 1.0), self._wbeta)
            if kappa < -INDEFINITE * max(Qkk, 1.0):
                raise ValueError(
                    f"{self.name}: the kernel matrix is not positive semi-definite: the Schur "
                    f"complement of example {int(self.ids[k])} against the margin set is "
                    f"{kappa:.3g} < 0"
                )
            if kappa <= SINGULAR * max(Qkk, 1.0):
                self.degenerate += 1
                return False
        self.KsT[ns, : self.n] = col[: self.n]
        self.sidx[ns] = k
        self.spos[k] = ns
        self.kind[k] = MARGIN
        self.ns = ns + 1
        return True

    def _contract(self, k: int) -> None:
        """Remove k from S (rank-one downdate of R); the last margin vector takes its place."""
        p = int(self.spos[k])
        o = self._o
        m = self.ns + o
        last = self.ns - 1
        if self.ns == 1:
            # The last margin vector: nothing is left to update (with a bias, R_qq = 0
            # here and the bias alone is handled without R).
            self.R[:m, :m] = 0.0
        else:
            _idsvm.r_contract(self.R, m, p + o)
        self._keep_row(k, self.KsT[p, : self.n])
        if p != last:
            j = int(self.sidx[last])
            self.sidx[p] = j
            self.spos[j] = p
            self.KsT[p, : self.n] = self.KsT[last, : self.n]
        self.spos[k] = -1
        self.ns = last

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

    # -- the bookkeeping loop ---------------------------------------------------------------

    def _step_bound(self) -> int:
        return self.max_steps if self.max_steps > 0 else 10 * self.n + 1000

    def _bias_only(self, c: int, sign: float, excluded: list[int]) -> tuple[str, int, float]:
        """With a bias and S empty only b can move: Δb = sign·y_c·t, t ≥ 0.

        Returns the event that ends the move: ("done", c, t) when c's margin reaches 0
        (increments only), or ("enter", i, t) for the first example to reach the margin.
        """
        n = self.n
        yc = self.y[c]
        yy = self.y[:n] * yc * sign  # Δh_i = yy_i · t
        h, kind = self.h[:n], self.kind[:n]
        with np.errstate(divide="ignore", invalid="ignore"):
            cand = np.where(
                (kind == RESERVE) & (yy < 0),
                h / -yy,
                np.where((kind == ERROR) & (yy > 0), -h / yy, np.inf),
            )
        cand[excluded] = np.inf
        i = int(np.argmin(cand)) if n else -1
        t_in = max(float(cand[i]), 0.0) if n else np.inf
        t_c = max(-self.h[c], 0.0) if sign > 0 else np.inf
        if t_c <= t_in:
            return "done", c, t_c
        return "enter", i, t_in

    def _apply_bias_move(self, c: int, sign: float, t: float) -> None:
        n = self.n
        self.b += sign * self.y[c] * t
        self.h[:n] += self.y[:n] * self.y[c] * sign * t

    def _run(self, c: int, kc: np.ndarray, sign: float) -> None:
        """Move α_c up (sign +1, incremental learning) or down to 0 (sign −1, unlearning)
        while keeping every other example's KKT conditions."""
        # Examples refused entry to S (degenerate Schur complement) sit at h = 0 with α at
        # its bound and are not candidates again until S loses a member, which may remove
        # the dependency. A refused c stops aiming at the margin (its h no longer moves)
        # and goes on along the null direction, or to α_c = C, until that happens.
        excluded: list[int] = []
        mask = self._excluded
        c_blocked = False
        moved = [c]
        for _ in range(self._step_bound()):
            self.steps += 1
            if self.bias and self.ns == 0:
                event, k, t = self._bias_only(c, sign, excluded)
                if not np.isfinite(t):
                    # No example can absorb the change of α_c (possible only after a
                    # degenerate refusal): count it and stop.
                    self.degenerate += 1
                    break
                self._apply_bias_move(c, sign, t)
                if event == "done":
                    self.h[c] = 0.0
                    if self.alpha[c] > 0.0:
                        # S emptied while α_c moved: c stops at the margin as its only
                        # member (with S empty the bordered matrix is never singular).
                        self._expand(c, kc)
                    else:
                        self.kind[c] = RESERVE
                    break
                self.h[k] = 0.0
                if not self._expand(k, self._column(k)):
                    excluded.append(k)
                    mask[k] = 1
                moved.append(k)
                continue
            self._work(self.n)
            event, k, _, db = _idsvm.ids_step(
                self.R,
                self.KsT,
                self.n,
                self.ns,
                self.sidx,
                self.y,
                self.alpha,
                self.h,
                self.kind,
                mask,
                kc,
                c,
                sign,
                self.bias,
                c_blocked,
                self.C,
                EPS,
                self._wv,
                self._wbeta,
                self._ww,
                self._wgamma,
            )
            if event == EV_UNBOUNDED:
                # Nothing bounds the move: α_c cannot reach its target with these examples
                # (a degenerate S); count it and stop here.
                self.degenerate += 1
                break
            self.b += db
            if event == EV_C_ZERO:
                self.alpha[c] = 0.0
                break
            if event == EV_C_MARGIN:
                self.h[c] = 0.0
                if self._expand(c, kc):
                    break
                c_blocked = True
                continue
            if event == EV_C_ERROR:
                self.alpha[c] = self.C
                self.kind[c] = ERROR
                break
            moved.append(k)
            if event in (EV_S_ERROR, EV_S_RESERVE):
                to_error = event == EV_S_ERROR
                self.alpha[k] = self.C if to_error else 0.0
                self._contract(k)
                self.kind[k] = ERROR if to_error else RESERVE
                for i in excluded:
                    mask[i] = 0
                excluded.clear()
                c_blocked = False
            else:  # EV_ENTER
                self.h[k] = 0.0
                if not self._expand(k, self._column(k)):
                    excluded.append(k)
                    mask[k] = 1
        else:
            self.step_caps += 1
        for i in excluded:
            mask[i] = 0
        if self.alpha[c] <= 0.0 and self.kind[c] == MOVING:
            self.kind[c] = RESERVE
        self._sync(np.concatenate([np.asarray(moved, dtype=np.intp), self.sidx[: self.ns]]))

    def _work(self, n: int) -> None:
        """Make the scratch γ of the compiled step long enough for n examples."""
        if len(self._wgamma) < n:
            self._wgamma = np.empty(len(self.sq))

    # -- incremental learning ---------------------------------------------------------------

    def _append(self, x: np.ndarray | SparseRow, xsq: float, y: float, f: float) -> int:
        if self.n == len(self.sq):
            self._grow_T()
        c = self.n
        if self._pool is None:
            self.X[c] = x
        else:
            self._pool.add(x, 0.0, xsq)  # slot c: the pool's slots follow T
        self.sq[c] = xsq
        self.y[c] = y
        self.kd[c] = self._self_kernel(x, xsq)
        if not self.kd[c] >= 0.0:
            raise ValueError(
                f"{self.name}: k(x, x) = {float(self.kd[c])!r} < 0 for example {self._next_id}: the "
                "kernel is not positive semi-definite"
            )
        self.alpha[c] = 0.0
        self.h[c] = y * f - 1.0
        self.kind[c] = MOVING
        self.ids[c] = self._next_id
        self._next_id += 1
        self.spos[c] = -1
        self.svpos[c] = -1
        ns = self.ns
        if ns:
            # K(x_c, x_S) from the prediction's row over the support vectors; a margin
            # vector still at α = 0 (it entered S on the step that ended the last
            # increment) is not in the store and costs one evaluation.
            S = self.sidx[:ns]
            pos = self.svpos[S]
            have = pos >= 0
            col = self.KsT[:ns, c]
            col[have] = self.store.krow[pos[have]]
            for j in np.flatnonzero(~have):
                col[j] = self._pair(int(S[j]), x, xsq)
        self.n = c + 1
        return c

    def _increment(self, x: np.ndarray | SparseRow, y: float, xsq: float, f: float) -> None:
        """Learn x (‖x‖² = xsq, f = f(x) before learning it) by incremental learning."""
        c = self._append(x, xsq, y, f)
        if self.h[c] >= 0.0:
            self.kind[c] = RESERVE
            return
        kc = self._row_T(x, xsq)
        kc[c] = self.kd[c]
        self._run(c, kc, +1.0)
        if self.kind[c] == MOVING:
            self.kind[c] = ERROR if self.alpha[c] >= self.C else RESERVE

    def _decide(self, x: np.ndarray, xsq: float | None = None) -> float:
        last = self._last
        if last is not None and last[0] is x:
            return last[1]
        if self._d is None:
            return self.b
        f = self._f(x, float(x @ x) if xsq is None else xsq)
        self._last = (x, f)
        return f

    # -- the one-row methods and blocks: dense rows, or CSR rows (OneRowMethods) -----------

    def _rows_learned(self) -> str | None:
        if self._d is None:
            return None
        return "dense" if self._pool is None else "csr"

    def decision_one(self, x):
        # A dense row to a learner of dense rows first: the runner's per-example path.
        if type(x) is np.ndarray and self._pool is None:
            return float(self._decide(x))
        return OneRowMethods.decision_one(self, x)

    def _decision_dense(self, x: np.ndarray) -> float:
        return float(self._decide(x))

    def learn_one(self, x, y):
        if type(x) is np.ndarray and self._pool is None:
            self._learn_dense(x, y)
        else:
            OneRowMethods.learn_one(self, x, y)

    def _learn_dense(self, x: np.ndarray, y: float) -> None:
        _check_label(self.name, y)
        if self._d is None:
            self._init(len(x))
        if self.frozen:
            return
        t0 = time.perf_counter()
        xsq = float(x @ x)
        self._increment(x, float(y), xsq, self._decide(x, xsq))
        self._learned(t0)

    def _learned(self, t0: float) -> None:
        """After an example learned from time t0: counts, refresh, the budgets."""
        self._last = None
        self.learned += 1
        if self.refresh and self.learned % self.refresh == 0:
            self.refresh_now()
        self.learn_time += time.perf_counter() - t0
        if (self.max_kernel_evals and self.kernel_requests >= self.max_kernel_evals) or (
            self.max_seconds and self.learn_time >= self.max_seconds
        ):
            self.frozen = True

    def learn_predict_many(self, X, y):
        if self._pool is None and not is_sparse(X):
            return super().learn_predict_many(X, y)  # one dense row at a time
        if self._pool is None and self._d is not None:
            refuse_switch(self.name, True)
        return self._learn_csr(as_csr(X), np.asarray(y, dtype=np.float64))

    def _learn_csr(self, X, y: np.ndarray) -> np.ndarray:
        """Predict then learn each CSR row of X: its kernel rows from the sparse pool."""
        compiled_kernel(self.kernel)  # a one-line TypeError for other kernels
        if self._d is None:
            self._init(X.shape[1], sparse=True)
        elif X.shape[1] != self._d:
            raise ValueError(f"{self.name}: X has {X.shape[1]} columns but the model has {self._d}")
        indptr, indices, data = csr_parts(X)
        pred = np.empty(X.shape[0])
        for i in range(X.shape[0]):
            a, b = indptr[i], indptr[i + 1]
            x = (indices[a:b], data[a:b])
            xsq = float(x[1] @ x[1])
            f = self._f(x, xsq)
            pred[i] = self.label_of(f)
            _check_label(self.name, y[i])
            if not self.frozen:
                t0 = time.perf_counter()
                self._increment(x, float(y[i]), xsq, f)
                self._learned(t0)
        return pred

    def _decisions(self, X) -> np.ndarray:
        """f for every row of X, dense or CSR as the rows learned (held-out evaluation)."""
        st = getattr(self, "store", None)
        if is_sparse(X):
            if st is None or st.m == 0:
                return np.full(X.shape[0], self.b)
            return st.buf.decision_many(self.kernel, X)[:, 0] + self.b
        X = as_matrix(X, "X")
        if st is None or st.m == 0:
            return np.full(len(X), self.b)
        m = st.m
        if self._compiled is None:
            return (self.kernel.matrix(X, st.X[:m]) @ st.coef[:m])[:, 0] + self.b
        out = np.empty(len(X))
        block = max(1, min(2048, 4_000_000 // m))
        K = np.empty((min(block, len(X)), m))
        res = np.empty((min(block, len(X)), 1))
        xsq = np.einsum("ij,ij->i", X, X)
        for a in range(0, len(X), block):
            b = min(a + block, len(X))
            _kernels.decision_block(
                self._compiled, st.X, st.sq, st.coef, m, X[a:b], xsq[a:b], K, res[: b - a]
            )
            out[a:b] = res[: b - a, 0]
        return out + self.b

    # -- decremental unlearning -------------------------------------------------------------

    def unlearn(self, example_id: int) -> None:
        """Remove the example that arrived as number ``example_id`` (0-based) exactly: the
        solution becomes the optimum over the remaining examples."""
        hits = np.flatnonzero(self.ids[: self.n] == example_id) if self._d is not None else []
        if len(hits) == 0:
            raise KeyError(f"{self.name}: no stored example number {example_id}")
        c = int(hits[0])
        if self.alpha[c] > 0.0:
            if self.kind[c] == MARGIN:
                kc = self.KsT[self.spos[c], : self.n].copy()
                self._contract(c)
            else:
                kc = self._row_T(self._row_of(c), self.sq[c])
            kc[c] = self.kd[c]
            self.kind[c] = MOVING
            self._run(c, kc, -1.0)
            self.alpha[c] = 0.0
            self._sync(np.array([c]))
        self._delete(c)
        self._last = None

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

    # -- numerical hygiene and inspection ---------------------------------------------------

    def _A(self) -> np.ndarray:
        ns, o = self.ns, self._o
        S = self.sidx[:ns]
        A = np.zeros((ns + o, ns + o))
        A[o:, o:] = np.outer(self.y[S], self.y[S]) * self.KsT[:ns, S]
        if self.bias:
            A[0, 1:] = self.y[S]
            A[1:, 0] = self.y[S]
        return A

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

    def refresh_now(self) -> None:
        """Re-invert A_S and recompute every margin from α, recording the drift."""
        m = self.ns + self._o
        if m:
            A = self._A()
            self.drift_R = max(self.drift_R, float(np.abs(A @ self.R[:m, :m] - np.eye(m)).max()))
            self.R[:m, :m] = np.linalg.inv(A)
        if self.n:
            exact = self.exact_margins()
            S = self.sidx[: self.ns]
            self.drift_h = max(self.drift_h, float(np.abs(exact - self.h[: self.n]).max()))
            exact[S] = 0.0
            self.h[: self.n] = exact

    def snapshot(self) -> dict[str, np.ndarray | float]:
        """Copies of the stored examples in arrival order: X (a CSR matrix once CSR rows are
        learned), y, alpha, h (= y f − 1), set (0 reserve, 1 margin, 2 error), ids, and the
        offset b."""
        if self._d is None:
            z = np.zeros(0)
            return {
                "X": np.zeros((0, 0)),
                "y": z,
                "alpha": z,
                "h": z,
                "set": z,
                "ids": z,
                "b": self.b,
            }
        n = self.n
        order = np.argsort(self.ids[:n], kind="stable")
        return {
            "X": self.X[order].copy() if self._pool is None else self._pool.to_csr()[order],
            "y": self.y[order].copy(),
            "alpha": self.alpha[order].copy(),
            "h": self.h[order].copy(),
            "set": self.kind[order].copy(),
            "ids": self.ids[order].copy(),
            "b": self.b,
        }

    def stats(self):
        kind = self.kind[: self.n] if self._d is not None else np.zeros(0)
        return {
            "n_support": self.store.m if self._d is not None else 0,
            "kernel_evals": self.kernel_evals,
            "kernel_requests": self.kernel_requests,
            "n_margin": int(np.sum(kind == MARGIN)),
            "n_error": int(np.sum(kind == ERROR)),
            "n_reserve": int(np.sum(kind == RESERVE)),
            "bookkeeping_steps": self.steps,
            "degenerate": self.degenerate,
            "cache_hits": self.cache_hits,
            "step_caps": self.step_caps,
            "drift_R": self.drift_R,
            "drift_h": self.drift_h,
            "learned": self.learned,
            "frozen": int(self.frozen),
            "b": self.b,
        }


@hookimpl
def kbench_register_algorithms(register):
    """Register IDSVM."""
    register(IDSVM)
