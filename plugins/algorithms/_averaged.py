"""What PiSTOL and kernel SGD share: one expansion and its running average in closed form.

Both keep ``g = Σ_i c_i k(x_i, ·)`` and predict with ``f_t = w_t · g_{t−1}`` (PiSTOL's
multiplier w_t, or 1 for SGD). The average of the iterates is kept in closed form through
one extra number per stored vector, ``u_i = c_i · W_(i)`` with ``W`` the running sum of
the multipliers (specs/002 §1.1): ``f̄_T = (W_T · g − u) / T``. The store holds 2C columns
per stored vector, ``[c | u]``, so one kernel row and one expansion give both. The compiled
loop is ``kbench.cython_core._pistol.pistol_block``; a loss without a compiled form gives
it the gradient row by row, computed by the loss plugin at the same online scores.

The module name starts with an underscore, so the registry does not load it as a plugin.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from kbench.cython_core._pistol import PistolState, pistol_block
from kbench.learners import (
    Expansion,
    ExpansionLearner,
    Rows,
    labels,
    make_cfg,
    python_gradient,
    setup_loss,
)
from kbench.learners.online_loss import L_PYTHON


class AveragedExpansion(ExpansionLearner):
    """Common machinery of PiSTOL and kernel SGD (not registered itself)."""

    tasks = frozenset({"binary", "multiclass", "regression"})
    uses_loss = True
    default_loss = "logistic"
    reads_self_kernel = True
    #: Whether the learner predicts with the last iterate rather than the average.
    _last: ClassVar[bool] = False

    def _setup_expansion(self, state: PistolState) -> None:
        """Check the loss for the task; the compiled configuration, the state and the store."""
        assert self.loss is not None and self.kernel is not None
        self._setup = setup_loss(self.name, self.loss, self.task, self.n_classes, 0.0, 1.0)
        self._C = self._setup.n_out
        self._cfg = make_cfg(self.kernel, self._setup)
        self._state = state
        self.model = Expansion(self.name, self.kernel, 2 * self._C, self_kernel=True)
        self.learn_with(pistol_block, cfg=self._cfg, state=self._state)

    # -- learning -----------------------------------------------------------------------------

    def learn_predict_many(self, X: Any, y: Any) -> np.ndarray:
        if self._setup.loss_id != L_PYTHON:
            return super().learn_predict_many(X, y)
        rows = Rows.of(X)
        y = labels(y, rows.n)
        pred = np.empty(rows.n)
        for i in range(rows.n):  # the loss plugin's gradient, row by row
            x = rows.row0 if rows.row0 is not None else rows.csr[i] if rows.sparse else rows.X[i]
            raw = self.model.decision_one(x)  # its kernel row stays for the learning step
            online = math.exp(self._state.log_w()) * raw[: self._C]
            with np.errstate(all="ignore"):
                xi, _, _ = python_gradient(self._setup, self.loss, 0.0, online, online, y[i])
            xi = np.ascontiguousarray(xi, dtype=np.float64)
            pred[i] = self._learn(Rows.one(x), y[i : i + 1], xi)[0]
        return pred

    def _learn(self, rows: Rows, y: np.ndarray, xi: np.ndarray | None = None) -> np.ndarray:
        return self.learn_rows(rows, y, xi_given=xi)

    # -- predicting ---------------------------------------------------------------------------

    def _outputs(self, raw: np.ndarray) -> np.ndarray:
        """The decisions (n × C) from the raw outputs [g(x) | u(x)] (n × 2C): the last
        iterate w·g, or the average (W·g − u)/T."""
        out = np.empty((raw.shape[0], self._C))
        self._state.outputs(raw, out)  # compiled: NumPy's calls cost more on one row
        return out

    def decision_one(self, x: Any) -> Any:
        raw = self.model.decision_one(x)
        if self.task == "multiclass":
            return self._outputs(raw[None, :])[0]
        st = self._state  # _outputs in scalars, cheaper than NumPy's calls
        if st.last:
            return math.exp(st.log_w()) * float(raw[0])
        return float((st.W * raw[0] - raw[1]) / st.t) if st.t else 0.0

    def decision_many(self, X: Any) -> np.ndarray:
        F = self._outputs(self.model.decisions(Rows.of(X)))
        return F if self.task == "multiclass" else F[:, 0]

    # -- inspection ---------------------------------------------------------------------------

    def coefficients(self, output: str | None = None) -> tuple[Any, np.ndarray]:
        """Copies of the stored vectors (CSR once it has learned CSR rows) and their
        coefficients (m × C) in ``output``: ``average``, ``last`` or ``raw`` for g itself
        (default: the learner's output)."""
        st, C = self._state, self._C
        output = output or ("last" if st.last else "average")
        store = self.model.store
        if store is None:
            return np.zeros((0, 0)), np.zeros((0, C))
        m = store.size
        c, u = store.alpha[:m, :C], store.alpha[:m, C:]
        if output == "raw":
            coef = c.copy()
        elif output == "last":
            probe = type(st)(**st.fields())  # log_w raises the largest exponent: on a copy
            coef = math.exp(probe.log_w()) * c
        else:
            coef = (st.W * c - u) / st.t if st.t > 0 else np.zeros_like(c)
        return self.model.support_vectors(), coef

    def state(self) -> dict[str, float]:
        """The scalar state: t, m, norm2 (‖g‖²), acc_alpha (α), W, kernel_evals, …"""
        st, stats = self._state, self.model.stats()
        return {
            "t": st.t,
            "m": float(stats["n_support"]),
            "norm2": st.norm2,
            "acc_alpha": st.acc_alpha,
            "W": st.W,
            "kernel_evals": float(stats["kernel_evals"]),
            "max_exponent": st.max_exponent,
            "sup_kxx": st.sup_kxx,
            "overflow": st.overflow,
        }

    def stats(self) -> dict[str, Any]:
        return self.model.stats() | {"norm_g": math.sqrt(self._state.norm2)}
