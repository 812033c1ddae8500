"""Budget perceptrons: random budget perceptron, self-tuned Forgetron, Projectron and Projectron++.

All are mistake-driven kernel perceptrons whose number of support vectors never exceeds
a budget B. Their update loops are compiled (``cython_core/_budget_perceptrons.pyx``).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from kbench import hookimpl
from kbench.core.components import param
from kbench.cython_core import _budget_perceptrons as _bp
from kbench.plugins.algorithms._budget import BudgetLearner, seed_state


class RandomBudgetPerceptron(BudgetLearner):
    """Random budget perceptron (Cavallanti, Cesa-Bianchi and Gentile 2007).

    The kernel perceptron with at most ``budget`` support vectors. Binary: predict
    ``sign f(x)``, ``f = Σ αᵢ k(xᵢ, ·)``; on a mistake (``y f(x) ≤ 0``) store x with
    ``α = y``; if B vectors are already stored, first discard one drawn uniformly at
    random. Multiclass (one score per class, the multiclass perceptron of kbench's
    ``perceptron``): on a mistake store x with +1 for the true class and −1 for the
    predicted one, discarding a uniformly drawn vector when full. With B at least the
    number of mistakes it is exactly the kernel perceptron. Draws come from a seeded
    SplitMix64 generator, so a run is reproducible from its seed.

    Parameters
    ----------
    budget
        B ≥ 1, the largest number of support vectors.
    """

    name = "rbp"
    paper = "Cavallanti, Cesa-Bianchi and Gentile (2007). Tracking the best hyperplane with a simple budget perceptron. Machine Learning 69."
    tasks = frozenset({"binary", "multiclass"})
    test_params = {"budget": 12}
    #: CSR rows are learned with the same update, support vectors kept sparse.
    sparse_input = True
    sparse_loop = True

    budget: int = param(100, low=1)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._rng = seed_state(self.seed)

    def _allocate(self, d):
        self._scores = np.empty(self._outputs)

    def _run(self, X, y, pred, have_row, sparse=None):
        buf = self._buf
        buf.size, evals = _bp.rbp_block(
            self._kargs(),
            buf.X,
            buf.sq,
            buf.alpha,
            self._rng,
            buf.size,
            X,
            y,
            pred,
            buf.krow,
            self._scores,
            have_row,
            sparse,
        )
        buf.kernel_evals += evals


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


class Projectron(BudgetLearner):
    """Projectron (Orabona, Keshet and Caputo 2009), binary and multiclass, with a hard budget.

    A kernel perceptron that adds a support vector only when the new example is far from
    the span of the stored ones. On a mistake (binary ``y f(x) ≤ 0``; multiclass
    ``argmax ≠ y``) with ``k`` the kernel row over the support set S, ``K⁻¹`` the inverse
    Gram matrix of S, ``d = K⁻¹ k`` and ``δ² = k(x, x) − kᵀ d`` (the squared distance of
    ``k(x, ·)`` from the span):

    * if ``δ² ≤ η`` (or the budget B is full), project: ``α ← α + y d`` (multiclass:
      ``+d`` on the true class, ``−d`` on the predicted one) — the perceptron update
      projected onto the span, which adds no support vector;
    * otherwise add x with ``α = y`` (multiclass ±1) and extend ``K⁻¹`` by the
      block-inverse formula ``[[K⁻¹ + d dᵀ/δ², −d/δ²], [−dᵀ/δ², 1/δ²]]`` (O(B²), no
      matrix inversion).

    Variants chosen: δ² (not δ) is compared with η, as in the authors' DOGMA code; the
    original bounds the support set through η alone, and kbench adds the hard budget B
    (once S holds B vectors every update is projected), so that it can be compared with
    the other budgeted learners at equal B. A point with ``δ² ≤ 10⁻¹⁰ k(x, x)`` is
    numerically in the span and always projected, which keeps ``K⁻¹`` finite when the
    stream repeats examples. With η = 0 and a large budget it is the kernel perceptron.

    Parameters
    ----------
    budget
        B ≥ 1, the largest number of support vectors.
    eta
        η ≥ 0, the largest squared projection error for which a mistake is projected
        instead of adding a support vector.
    """

    name = "projectron"
    paper = "Orabona, Keshet and Caputo (2009). Bounded kernel-based online learning. JMLR 10."
    tasks = frozenset({"binary", "multiclass"})
    test_params = {"budget": 12}
    #: CSR rows are learned with the same update, support vectors kept sparse.
    sparse_input = True
    sparse_loop = True
    state_stats = {"projected_updates": 2, "margin_updates": 3}
    model_arrays = ("_Kinv", "_d")
    _plus = False

    budget: int = param(100, low=1)
    eta: float = param(0.1, low=0.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        # m, kernel evaluations in the loop, projected mistakes, margin-error updates.
        self._state = np.zeros(4)

    def _allocate(self, d):
        self._Kinv = np.zeros((self.budget, self.budget))
        self._d = np.zeros(self.budget)
        self._scores = np.empty(self._outputs)

    def _run(self, X, y, pred, have_row, sparse=None):
        buf = self._buf
        kxx = self._loop_kxx(X, have_row)
        with self._counted(evals=1) as st:
            _bp.projectron_block(
                self._kargs(), buf.X, buf.sq, buf.alpha, self._Kinv, st, self.eta, self._plus,
                X, y, pred, buf.krow, self._d, self._scores, have_row, kxx, self._margin_U(),
                sparse,
            )  # fmt: skip

    def _margin_U(self) -> float:
        """U of the margin-error test β ≥ 0, or −1 for the η test (and for the Projectron)."""
        return -1.0

    def kernel_inverse(self) -> np.ndarray:
        """The maintained inverse Gram matrix of the current support vectors (a copy)."""
        m = self._buf.size if self._buf is not None else 0
        return self._Kinv[:m, :m].copy() if m else np.zeros((0, 0))


class ProjectronPP(Projectron):
    """Projectron++ (Orabona, Keshet and Caputo 2009), binary and multiclass, with a hard budget.

    The Projectron (see ``projectron``: mistakes are handled identically), plus an
    update on margin errors that never adds a support vector. On a margin error
    (binary ``0 < y f(x) < 1``; multiclass ``argmax = y`` but ``f_y − f_r < 1`` with r the
    best other class) let ``ℓ = 1 − margin``, ``d = K⁻¹ k``, ``δ² = k(x,x) − kᵀd`` (δ is
    the distance of ``k(x, ·)`` from the span) and ``‖Pk‖² = kᵀ d`` (the squared norm of
    its projection). The paper's mistake bound rewards a projected step of size τ by
    ``β = τ(2ℓ − τ‖Pk‖² − 2‖g‖δ)``, g being the competitor, and the step is taken only
    when it helps. ``‖g‖`` is unknown, and the two rules differ in what stands for it:

    * ``margin=bound`` (default): ``τ = min(ℓ/‖Pk‖², 1)``, and ``α ← α + τ y d`` if
      ``β = τ(2ℓ − τ‖Pk‖² − 2Uδ) ≥ 0``, with ``U`` standing for ‖g‖. The LIBOKL library
      (Lu, Hoi and colleagues, JMLR 2016) uses this rule with the Forgetron's norm bound
      ``U = ¼√((B + 1)/ln(B + 1))`` (1.17 at B = 100, 3.68 at B = 1600). The competitor's
      norm has nothing to do with the learner's budget, and a U growing with B makes a
      larger budget refuse more margin steps even when η keeps the support set far below
      B, so kbench's default is the fixed ``U = 1``: held-out accuracy on a9a (γ = 0.01,
      five shuffles) 83.2 % at B = 100 and at B = 1600, against 82.5 % and 81.4 % with
      LIBOKL's U; on MAGIC and ring (B = 100 and 500) U = 1 is as good or better too;
    * ``margin=eta``: the authors' DOGMA code, with ``1/η`` in place of ‖g‖ and δ² in
      place of δ: if ``ℓ − δ²/η > 0``, ``α ← α + τ y d`` with
      ``τ = min(ℓ/‖Pk‖², 1, 2(ℓ − δ²/η)/‖Pk‖²)`` (the largest step with β ≥ 0). With
      η = 0 a margin error is then used only when x is exactly in the span.

    The default changed from ``eta`` to ``bound``: on a9a (γ = 0.01, one pass, B = 100)
    the η rule at η = 0.1 takes 4 382 margin steps, each cut short by the
    ``2(ℓ − δ²/η)/‖Pk‖²`` cap (76.6 % held out), and at η = 0 only 20; the bound rule takes
    3 670 steps of full size and gives 83.8 %, the accuracy LIBOKL reports
    (docs/budgeted.md, parity table).
    Multiclass uses the joint feature ``Φ(x, y) − Φ(x, r)``, whose squared norms are twice
    the binary ones (``2‖Pk‖²``, ``2δ²``), with ``+τ d`` on y and ``−τ d`` on r.

    Parameters
    ----------
    budget
        B ≥ 1, the largest number of support vectors.
    eta
        η ≥ 0, the projection threshold of the Projectron (mistakes) and, with
        ``margin=eta``, the trade-off of the margin-error step.
    margin
        ``bound`` or ``eta``: the margin-error test (see above).
    U
        U ≥ 0, the competitor's norm in the test of ``margin=bound``.
    """

    name = "projectronpp"
    paper = "Orabona, Keshet and Caputo (2009). Bounded kernel-based online learning. JMLR 10."
    _plus = True

    margin: Literal["bound", "eta"] = param("bound")
    U: float = param(1.0, low=0.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.margin not in ("bound", "eta"):
            raise ValueError(f"projectronpp: margin must be bound or eta, got {self.margin!r}")

    def _margin_U(self):
        return float(self.U) if self.margin == "bound" else -1.0


@hookimpl
def kbench_register_algorithms(register):
    """Register the budget perceptrons."""
    for cls in (RandomBudgetPerceptron, Forgetron, Projectron, ProjectronPP):
        register(cls)
