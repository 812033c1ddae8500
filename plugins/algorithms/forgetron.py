"""The self-tuned Forgetron: a kernel perceptron on a budget that shrinks, then forgets."""

from __future__ import annotations

import numpy as np

from kbench import hookimpl
from kbench.core.components import param
from kbench.cython_core import _budget_perceptrons as _bp
from kbench.plugins.algorithms._budget import BudgetLearner


class Forgetron(BudgetLearner):
    """Self-tuned Forgetron (Dekel, Shalev-Shwartz and Singer 2008), binary.

    A kernel perceptron with at most B support vectors, kept in a queue. On a mistake
    (``y_t f_t(x_t) ≤ 0``), with M_t the number of mistakes so far (this one included):

    * perceptron step ``f' = f_t + y_t k(x_t, ·)``;
    * if f' has at most B terms, ``f_{t+1} = f'``;
    * otherwise let r be the oldest support vector, ``σ = |α_r|`` its current weight,
      ``μ = y_r f'(x_r)`` and, with the paper's removal damage ``Ψ(λ, μ) = λ² + 2λ − 2λμ``,
      take the shrinking coefficient as the largest ``φ ∈ (0, 1]`` with
      ``Q + Ψ(σφ, φμ) ≤ (15/32) M_t`` — the margin enters as ``φμ``, the margin of x_r
      under the shrunk function ``φ f'``, so ``Ψ(σφ, φμ) = (σ² − 2σμ)φ² + 2σφ``; then
      ``Q ← Q + Ψ(σφ, φμ)`` and ``f_{t+1} = φ f' − φ σ y_r k(x_r, ·)`` (shrink every
      coefficient by φ, then remove the oldest).

    Shrinking is applied through one global scale factor. The removal needs ``f'(x_r)``,
    one more kernel row on each mistake once the budget is full. With B at least the
    number of mistakes it is exactly the kernel perceptron. The Forgetron is defined for
    binary problems only.

    Parameters
    ----------
    budget
        B ≥ 1, the largest number of support vectors.
    """

    name = "forgetron"
    paper = "Dekel, Shalev-Shwartz and Singer (2008). The Forgetron: a kernel-based perceptron on a budget. SIAM Journal on Computing 37(5)."
    tasks = frozenset({"binary"})
    test_params = {"budget": 12}
    #: CSR rows are learned with the same update, support vectors kept sparse.
    sparse_input = True
    sparse_loop = True
    state_stats = {"scale": 2, "removal_damage": 3}
    model_arrays = ("_krow2",)

    budget: int = param(100, low=1)

    def __post_init__(self) -> None:
        super().__post_init__()
        # m, head (oldest slot), coefficient scale, Q, M, kernel evaluations in the loop.
        self._state = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])

    def _allocate(self, d):
        self._krow2 = np.zeros(self.budget)

    def _scale(self):
        return float(self._state[2])

    def _run(self, X, y, pred, have_row, sparse=None):
        buf, st = self._buf, self._state
        have_row2 = False
        if have_row and self._compiled is None and buf.size == self.budget:
            # A third-party kernel: compute the oldest vector's row here if the update needs it.
            out = np.empty(1)
            _bp.scores(buf.krow, buf.alpha, buf.size, st[2], out)
            if y[0] * out[0] <= 0.0:
                r = int(st[1])
                m = buf.size
                if self._sparse is not None:  # CSR rows: buf.X holds marks, the store the rows
                    store = self._sparse.store
                    self._krow2[:m] = store.row(self.kernel, store.get(r))[:m]
                else:
                    self._krow2[:m] = self.kernel.row(
                        buf.X[:m], buf.X[r], sq=buf.sq[:m], xsq=buf.sq[r]
                    )
                buf.kernel_evals += m
                have_row2 = True
        with self._counted(evals=5):
            _bp.forgetron_block(
                self._kargs(), buf.X, buf.sq, buf.alpha.reshape(-1), st,
                X, y, pred, buf.krow, self._krow2, have_row, have_row2, sparse,
            )  # fmt: skip


@hookimpl
def kbench_register_algorithms(register):
    """Register the Forgetron."""
    register(Forgetron)
