"""Shared Python side of PiSTOL and kernel SGD: one expansion, its running average in closed form.

Both learners keep ``g = Σ_i c_i k(x_i, ·)`` and predict with ``f_t = w_t · g_{t−1}``
(PiSTOL's multiplier w_t, or 1 for SGD). The average of the iterates is kept in closed
form through one extra number per stored vector, ``u_i = c_i · W_(i)`` with ``W`` the
running sum of the multipliers (specs/002 §1.1): ``f̄_T = (W_T · g − u) / T``. The
buffer holds 2C columns per stored vector, ``[c | u]``, so one kernel row and one
expansion give both. The compiled loop lives in ``cython_core/_pistol.pyx``; the
per-example path below calls the same compiled pieces for compiled kernels and losses
and the plugins only where they have no compiled form, so both paths agree.

The module name starts with an underscore, so the registry does not load it as a plugin.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kbench.core.components import Algorithm
from kbench.cython_core import _kernels, _pistol
from kbench.learners.online_loss import L_PYTHON, make_cfg, python_gradient, setup_loss
from kbench.learners.support_buffer import SupportBuffer
from kbench.plugins.algorithms._sparse_rows import (
    MarkedRows,
    OneRowMethods,
    compiled_kernel,
    csr_rows,
    open_rows,
    stored_rows,
)

MODES = {"pistol": 0, "sgd": 1}
OUTPUTS = {"average": 0, "last": 1}
SCHEDULES = {"constant": 0, "inv_sqrt": 1}
_P = {name: i for i, name in enumerate(_pistol.PARAM_FIELDS)}
_S = {name: i for i, name in enumerate(_pistol.STATE_FIELDS)}


class MultiplierOverflow(FloatingPointError):
    """PiSTOL's multiplier exp(‖g‖²/(2α)) would exceed the range of float64."""


class AveragedExpansion(OneRowMethods, Algorithm):
    """Common machinery of PiSTOL and kernel SGD (not registered itself)."""

    tasks = frozenset({"binary", "multiclass", "regression"})
    uses_loss = True
    default_loss = "logistic"
    #: CSR rows are learned with the per-example update, support vectors kept sparse.
    sparse_input = True

    _mode: str
    _output: str

    def _setup_expansion(
        self,
        owner: str,
        *,
        a: float = 1.0,
        b: float = 1.0,
        L: float = 1.0,
        eta: float = 1.0,
        schedule: str = "constant",
    ) -> None:
        """Check the loss for the task and build the compiled configuration and state."""
        assert self.loss is not None and self.kernel is not None
        self._owner = owner
        self._setup = setup_loss(owner, self.loss, self.task, self.n_classes, 0.0, 1.0)
        self._C = self._setup.n_out
        self._cfg = make_cfg(self.kernel, self._setup)
        self._params = np.zeros(len(_pistol.PARAM_FIELDS))
        for name, value in (
            ("mode", MODES[self._mode]),
            ("output", OUTPUTS[self._output]),
            ("log_b", math.log(b)),
            ("a", a),
            ("L", L),
            ("eta", eta),
            ("schedule", SCHEDULES[schedule]),
        ):
            self._params[_P[name]] = value
        self._state = np.zeros(len(_pistol.STATE_FIELDS))
        # α_0 = a·L (specs/002 §1.1); SGD never reads it.
        self._state[_S["acc_alpha"]] = a * L
        self._buf: SupportBuffer | None = None
        self._sparse: MarkedRows | None = None  # the support vectors as CSR rows
        self._one = np.zeros(1)
        C = self._C
        self._GU = np.zeros(2 * C)
        self._Fon = np.zeros(C)
        self._Fout = np.zeros(C)
        self._xi = np.zeros(C)
        self._chi = np.zeros(C)
        self._work = np.zeros(6 * C)

    # -- helpers -----------------------------------------------------------------------------

    def _buffer(self, d: int) -> SupportBuffer:
        if self._buf is None:
            self._buf = SupportBuffer(d, 64, n_outputs=2 * self._C, growable=True)
        return self._buf

    def _xsq(self, x: np.ndarray) -> float:
        """‖x‖² computed by the compiled core, as the block loop computes it."""
        _kernels.sq_norms(x.reshape(1, -1), self._one)
        return float(self._one[0])

    def _log_w(self) -> float:
        """log of the next round's multiplier (0 for SGD); raises before it overflows."""
        logw = float(_pistol.pistol_multiplier(self._params, self._state))
        if logw > _pistol.LOG_W_MAX:
            self._state[_S["overflow"]] = logw
            self._raise_overflow()
        return logw

    def _raise_overflow(self) -> None:
        st = self._state
        raise MultiplierOverflow(
            f"{self._owner}: the multiplier exp(‖g‖²/(2α)) overflows float64 after "
            f"{int(st[_S['t']])} rounds (log w = {st[_S['overflow']]:.1f}, ‖g‖² = "
            f"{st[_S['norm2']]:.4g}, α = {st[_S['acc_alpha']]:.4g}); the stream drives the "
            "exponent up linearly, which happens when |ℓ'| stays near L on aligned examples: "
            "check that the loss's Lipschitz constant and the kernel's k(x, x) ≤ 1 hold"
        )

    def _expand(self, x: np.ndarray, xsq: float) -> np.ndarray:
        """[g(x) | u(x)] from one (cached) kernel row."""
        buf = self._buffer(len(x))
        k = buf.row(self.kernel, x, xsq)
        _kernels.expansion(k, buf.alpha, buf.size, self._GU)
        return self._GU

    def _forward(self, x: np.ndarray) -> tuple[float, float]:
        """Fill the online scores and the decision at x; return (w, ‖x‖²)."""
        xsq = self._xsq(x)
        GU = self._expand(x, xsq)
        w = math.exp(self._log_w())
        _pistol.pistol_outputs(self._params, self._state, GU, w, self._Fon, self._Fout)
        return w, xsq

    def _decision(self, F: np.ndarray) -> Any:
        return F.copy() if self.task == "multiclass" else float(F[0])

    # -- the online protocol ----------------------------------------------------------------

    def _decision_dense(self, x):
        self._forward(x)
        return self._decision(self._Fout)

    def _learn_dense(self, x, y):
        w, xsq = self._forward(x)
        self._learn(x, xsq, w, float(y))

    def _learn(self, x: np.ndarray, xsq: float, w: float, y: float) -> None:
        """The update at the online scores ``_Fon`` of x: a dense row, or on CSR rows the
        example's mark (k(x, x) of a built-in kernel is computed from ‖x‖² alone)."""
        if self._setup.loss_id != L_PYTHON:
            _pistol.pistol_gradient(self._cfg, self._Fon, y, self._xi, self._chi)
            xi = self._xi
        else:
            with np.errstate(all="ignore"):
                xi, _, _ = python_gradient(self._setup, self.loss, 0.0, self._Fon, self._Fon, y)
        buf = self._buf
        assert buf is not None
        if buf.size == buf.capacity:
            buf.grow()
        _pistol.pistol_apply(
            self._params,
            self._state,
            buf.X,
            buf.sq,
            buf.alpha,
            x,
            xsq,
            self._self_kernel(x, xsq) if np.any(xi != 0.0) else 0.0,
            self._GU,
            w,
            np.ascontiguousarray(xi, dtype=np.float64),
        )
        buf.size = int(self._state[_S["m"]])
        buf.touch()

    def _learn_predict_sparse(self, X: Any, y: np.ndarray) -> np.ndarray:
        """Predict then learn the CSR rows: with a compiled loss, one compiled call per
        block of rows (:meth:`MarkedRows.learn`; the buffer and the store double when full),
        else one row at a time (:meth:`_learn_predict_marked`)."""
        if self._setup.loss_id == L_PYTHON:
            return self._learn_predict_marked(X, y)
        kern = compiled_kernel(self.kernel)
        self._sparse = rows = open_rows(self._owner, self._sparse, self._buf, X, self._buffer)
        buf = self._buf
        assert buf is not None
        st, evals = self._state, _S["kernel_evals"]

        def step(marks: np.ndarray, y: np.ndarray, pred: np.ndarray, block: Any) -> int:
            st[evals] = buf.kernel_evals
            i = _pistol.pistol_block(
                self._cfg, self._params, st, buf.X, buf.sq, buf.alpha, marks, y, pred,
                buf.krow, self._work, 0, block,
            )  # fmt: skip
            buf.kernel_evals = int(st[evals])
            buf.size = int(st[_S["m"]])
            return i

        return rows.learn(kern, X, y, buf, step, grow=self._grow)

    def _grow(self) -> None:
        """Double the buffer after the compiled loop stopped on a full one, or raise if it
        stopped because the multiplier would overflow."""
        if self._state[_S["overflow"]] != 0.0:
            self._raise_overflow()
        assert self._buf is not None
        self._buf.grow()

    def _learn_predict_marked(self, X: Any, y: np.ndarray) -> np.ndarray:
        """Predict then learn each CSR row as ``learn_one`` does a dense one: the kernel row
        from the sparse store, then the same compiled steps on the example's mark (see
        ``_sparse_rows``)."""
        kern = compiled_kernel(self.kernel)
        self._sparse = rows = open_rows(self._owner, self._sparse, self._buf, X, self._buffer)
        buf = self._buf
        assert buf is not None
        pred = np.empty(X.shape[0])
        for i, x, xsq in csr_rows(X):
            k = rows.row(kern, x, xsq, buf)
            _kernels.expansion(k, buf.alpha, buf.size, self._GU)
            w = math.exp(self._log_w())
            _pistol.pistol_outputs(self._params, self._state, self._GU, w, self._Fon, self._Fout)
            pred[i] = self.label_of(self._decision(self._Fout))
            self._learn(rows.next_mark()[0], xsq, w, float(y[i]))
            rows.sync(buf, x, rows.count)
        return pred

    def _self_kernel(self, x: np.ndarray, xsq: float) -> float:
        if self.kernel.compiled() is not None:
            return float(_pistol.pistol_self_kernel(self._cfg, x, xsq))
        return float(np.asarray(self.kernel.diag(x.reshape(1, -1)))[0])

    def learn_predict_many(self, X, y):
        if (csr := self._csr_block(X)) is not None:
            return self._learn_predict_sparse(csr, y)
        if self.kernel.compiled() is None or self._setup.loss_id == L_PYTHON:
            return super().learn_predict_many(X, y)
        buf = self._buffer(X.shape[1])
        pred = np.empty(len(X))
        i = 0
        while True:
            self._state[_S["kernel_evals"]] = buf.kernel_evals
            i = _pistol.pistol_block(
                self._cfg,
                self._params,
                self._state,
                buf.X,
                buf.sq,
                buf.alpha,
                X,
                y,
                pred,
                buf.krow,
                self._work,
                i,
            )
            buf.kernel_evals = int(self._state[_S["kernel_evals"]])
            buf.size = int(self._state[_S["m"]])
            buf.touch()
            if i == len(X):
                return pred
            self._grow()

    def _scores_many(self, X: np.ndarray) -> np.ndarray:
        """The decision for every row of X (n × C), as decision_one computes it."""
        C = self._C
        if self._buf is None or self._buf.size == 0:
            return np.zeros((X.shape[0], C))
        if self._sparse is not None:
            GU = self._sparse.decision_many(self.kernel, X, self._buf.alpha, 1.0)
        else:
            GU = self._buf.decision_many(self.kernel, X)
        st = self._state
        if self._output == "last":
            return math.exp(self._log_w()) * GU[:, :C]
        T = st[_S["t"]]
        return (st[_S["W"]] * GU[:, :C] - GU[:, C:]) / T

    def _decisions(self, X):
        F = self._scores_many(X)
        return F if self.task == "multiclass" else F[:, 0]

    # -- inspection -------------------------------------------------------------------------

    def coefficients(self, output: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the stored vectors (CSR once it has learned CSR rows) and the coefficients (m × C) of ``output``
        (``average``, ``last`` or ``raw`` for g itself; default: the learner's output)."""
        output = output or self._output
        buf = self._buf
        C = self._C
        if buf is None:
            return np.zeros((0, 0)), np.zeros((0, C))
        m = buf.size
        c, u = buf.alpha[:m, :C], buf.alpha[:m, C:]
        st = self._state
        if output == "raw":
            coef = c.copy()
        elif output == "last":
            coef = math.exp(float(_pistol.pistol_multiplier(self._params, st.copy()))) * c
        else:
            T = st[_S["t"]]
            coef = (st[_S["W"]] * c - u) / T if T > 0 else np.zeros_like(c)
        return stored_rows(buf, self._sparse), coef

    def state(self) -> dict[str, float]:
        """The scalar state: t, m, norm2 (‖g‖²), acc_alpha (α), W, kernel_evals, …"""
        return {name: float(self._state[i]) for i, name in enumerate(_pistol.STATE_FIELDS)}

    def stats(self):
        buf = self._buf
        st = self._state
        return {
            "n_support": buf.size if buf else 0,
            "kernel_evals": buf.kernel_evals if buf else 0,
            "model_bytes": (buf.nbytes() if buf else 0)
            + (self._sparse.nbytes() if self._sparse is not None else 0),
            "norm_g": math.sqrt(st[_S["norm2"]]),
        }
