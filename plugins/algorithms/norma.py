"""NORMA: online kernel gradient descent with a circular budget (Kivinen, Smola and Williamson 2004)."""

from __future__ import annotations

from typing import Literal

import numpy as np

from kbench import hookimpl
from kbench.buffer import SupportBuffer
from kbench.components import Algorithm, check_range
from kbench.cython_core import _norma

SCHEDULES = {"constant": 0, "inv_sqrt": 1, "decay_tau": 2}


class NORMA(Algorithm):
    """NORMA, the online SVM: stochastic gradient descent in the RKHS.

    Each step ``f ← (1 − η_t c) f − η_t ℓ'(f(x_t), y_t) k(x_t, ·)``; only the ``budget``
    most recent non-zero terms are kept (a circular buffer, oldest evicted first). The
    shrinking by ``1 − η_t c`` is applied lazily through one global scale factor.

    Parameters
    ----------
    eta
        Initial step size η₀ > 0.
    schedule
        ``constant`` (η₀), ``inv_sqrt`` (η₀/√t) or ``decay_tau`` (η₀·√(τ/(τ+t))), with t
        the number of examples seen before the current one.
    tau
        τ of the ``decay_tau`` schedule.
    c
        Regularisation constant; η₀·c < 1.
    budget
        ω, the number of expansion terms kept.
    offset
        Learn an unregularised offset b with the same step sizes.
    """

    name = "norma"
    tasks = frozenset({"binary", "regression"})
    uses_loss = True
    default_loss = "hinge"
    test_params = {"budget": 16}

    def __init__(self, *, kernel=None, loss=None, task="binary", n_classes=2, seed=0,
                 eta: float = 0.5, schedule: Literal["constant", "inv_sqrt", "decay_tau"] = "constant",
                 tau: float = 100.0, c: float = 0.01, budget: int = 1000,
                 offset: bool = False) -> None:
        super().__init__(kernel=kernel, loss=loss, task=task, n_classes=n_classes, seed=seed)
        check_range("norma", "eta", eta, low=0.0, low_open=True)
        check_range("norma", "tau", tau, low=0.0, low_open=True)
        check_range("norma", "c", c, low=0.0)
        check_range("norma", "budget", budget, low=1)
        if eta * c >= 1.0:
            raise ValueError(f"norma: eta·c must be < 1 (the shrink factor 1 − ηc must stay positive), got {eta * c!r}")
        if schedule not in SCHEDULES:
            raise ValueError(f"norma: unknown schedule {schedule!r}")
        self.eta, self.schedule, self.tau, self.c = eta, schedule, tau, c
        self.budget, self.offset = budget, offset
        self._buf: SupportBuffer | None = None
        # m, head, t, coefficient scale, b, kernel evaluations: shared with the compiled loop.
        self._state = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0])

    def _buffer(self, d: int) -> SupportBuffer:
        if self._buf is None:
            self._buf = SupportBuffer(d, self.budget)
        return self._buf

    def _step(self, t: float) -> float:
        if self.schedule == "constant":
            return self.eta
        if self.schedule == "inv_sqrt":
            return self.eta / np.sqrt(t + 1.0)
        return self.eta * np.sqrt(self.tau / (self.tau + t))

    def _decision(self, x) -> float:
        buf = self._buffer(len(x))
        k = buf.row(self.kernel, x)  # cached: predict_one then learn_one compute one row
        self._state[5] = buf.kernel_evals
        return float(self._state[3] * (k @ buf.alpha[: buf.size, 0])) + self._state[4]

    def decision_one(self, x):  # noqa: D102
        return self._decision(x)

    def learn_one(self, x, y):  # noqa: D102
        buf = self._buffer(len(x))
        f = self._decision(x)
        xi = float(self.loss.derivative(f, y))
        st = self._state
        eta = self._step(st[2])
        st[3] *= 1.0 - eta * self.c
        if st[3] < 1e-200:  # fold the global scale into the coefficients before it underflows
            buf.alpha[: buf.size, 0] *= st[3]
            st[3] = 1.0
        if xi != 0.0:
            buf.add(x, -eta * xi / st[3])
            st[0], st[1] = buf.size, buf.head
            if self.offset:
                st[4] -= eta * xi
        st[2] += 1.0

    def learn_predict_many(self, X, y):  # noqa: D102
        compiled, loss_c = self.kernel.compiled(), self.loss.compiled()
        if compiled is None or loss_c is None:
            return super().learn_predict_many(X, y)
        buf = self._buffer(X.shape[1])
        pred = np.empty(len(X))
        _norma.norma_block(*compiled, *loss_c, SCHEDULES[self.schedule], self.eta, self.tau,
                           self.c, self.offset, self.task == "regression", buf.X, buf.sq,
                           buf.alpha.reshape(-1), self._state,
                           X, y, pred, buf.krow)
        buf.size, buf.head, buf.kernel_evals = (int(v) for v in self._state[[0, 1, 5]])
        buf.touch()
        return pred

    def predict_many(self, X):  # noqa: D102
        if self._buf is None:
            f = np.full(len(X), self._state[4])
        else:
            f = self._buf.decision_many(self.kernel, X, scale=self._state[3])[:, 0] + self._state[4]
        return f if self.task == "regression" else np.where(f >= 0.0, 1.0, -1.0)

    def stats(self):  # noqa: D102
        buf = self._buf
        return {
            "n_support": buf.size if buf else 0,
            "kernel_evals": int(self._state[5]),
            "eta": self._step(self._state[2]),
            "model_bytes": buf.nbytes() if buf else 0,
        }


@hookimpl
def kbench_register_algorithms(register):
    """Register NORMA."""
    register(NORMA)
