"""The Cauwenberghs–Poggio bookkeeping of IDSVM (:mod:`idsvm`): the inverse R of the
margin vectors' bordered kernel matrix, grown and shrunk by rank-one updates, and the loop
that moves α_c while every other example keeps its KKT conditions (one compiled step of
:mod:`kbench.cython_core._idsvm` a set change), incremental and decremental.
"""

from __future__ import annotations

import numpy as np

from kbench.cython_core import _idsvm
from kbench.learners.sparse_buffer import SparseRow
from kbench.plugins.algorithms._idsvm_store import (
    ERROR,
    EV_C_ERROR,
    EV_C_MARGIN,
    EV_C_ZERO,
    EV_S_ERROR,
    EV_S_RESERVE,
    EV_UNBOUNDED,
    MARGIN,
    MOVING,
    RESERVE,
    ExampleStore,
)

#: Sensitivities |β_j|, |γ_i| at or below this are treated as zero.
EPS = 1e-12
#: Relative size of the Schur complement below which an example may not enter S. Rounding
#: leaves a dependent example (κ = 0 exactly) with |κ| of order 1e-10·Q_kk on low-rank
#: kernels; RBF points this close to dependent are 1e-4/√γ apart.
SINGULAR = 1e-8
#: A Schur complement below −INDEFINITE·max(Q_kk, 1) is not rounding: the kernel is not
#: positive semi-definite, and IDSVM stops with an error.
INDEFINITE = 1e-4


class Solver(ExampleStore):
    """The exact solver over the stored examples: incremental learning of a new example
    (:meth:`_increment`), the loop that also unlearns one (:meth:`_run`), and the refresh
    of R and the margins (:meth:`refresh_now`). Reads the learner's ``C`` and ``max_steps``."""

    C: float
    max_steps: int

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
