"""OISVM, online independent support vector machines (Orabona et al. 2010), binary."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from kbench.api import LogUniform, hookimpl, param
from kbench.cython_core._oisvm import OisvmState, oisvm_block
from kbench.learners import (
    BlockRows,
    ExpansionLearner,
    Rows,
    SparseSupportBuffer,
    SupportBuffer,
    labels,
    refuse_switch,
)


class Oisvm(ExpansionLearner):
    """Online independent SVM (Orabona, Castellini, Caputo, Jie and Sandini 2010), binary.

    ``f(x) = Σⱼ βⱼ k(bⱼ, x)`` over a basis B of examples. With k the kernel row of x
    against B, x joins B (with ``β = 0``) when it is not approximately linearly dependent
    on it in feature space: ``δ = k(x, x) − kᵀ K_BB⁻¹ k > η``. Then, when x is a margin
    violator (``y f(x) < 1``), β is the minimiser of the primal of the squared-hinge SVM
    restricted to the span of B over every example seen,
    ``½ βᵀ K_BB β + (C/2) Σᵢ max(0, 1 − yᵢ oᵢ)²``, ``oᵢ = Σⱼ βⱼ k(bⱼ, xᵢ)``, by Newton's
    method from the current β: with I the examples with ``yᵢ oᵢ < 1`` and kᵢ their kernel
    values against B, ``β ← C (K_BB + C Σ_{i∈I} kᵢ kᵢᵀ)⁻¹ Σ_{i∈I} yᵢ kᵢ``, I recomputed,
    until I no longer changes (at most ``newton_steps`` steps). The Hessian's Cholesky
    factor is updated by rank one as examples enter or leave I, and extended when B grows.
    As in the paper, every example seen is kept (its kernel values against B, and the
    example itself, which a new basis vector's kernel values need): memory O(t·|B|) after t
    examples, and a Newton step costs O(t·|B|). kbench's OISVM has no bias term (the
    DOGMA toolbox adds one with a small ridge).

    Parameters
    ----------
    C
        Weight C > 0 of the squared hinge losses.
    eta
        Sparseness η > 0: the least squared distance of a new basis vector from the span
        of B (larger keeps a smaller basis).
    newton_steps
        At most this many Newton steps per margin violator.
    """

    name = "oisvm"
    paper = "Orabona, Castellini, Caputo, Jie and Sandini (2010). On-line independent support vector machines. Pattern Recognition 43(4)."
    tasks = frozenset({"binary"})
    reads_self_kernel = True
    search_space = {"C": LogUniform(0.1, 100.0), "eta": LogUniform(0.01, 0.5)}

    C: float = param(1.0, low=0.0, low_open=True)
    eta: float = param(0.1, low=0.0, low_open=True)
    newton_steps: int = param(20, low=1)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.model.spec.compiled:
            raise ValueError(
                f"oisvm: computes kernel values against every past example in compiled code: "
                f"use a built-in kernel, not {self.kernel}"
            )
        self._state = OisvmState()
        self.learn_with(
            oisvm_block,
            signs=True,
            state=self._state,
            C=float(self.C),
            eta=float(self.eta),
            newton_steps=int(self.newton_steps),
        )

    def learn_predict_many(self, X, y) -> np.ndarray:
        rows = Rows.of(X)
        y = labels(y, rows.n, signs=self.name)
        history = self._remember(rows)
        return self.learn_rows(rows, y, history=history)

    def _remember(self, rows: Rows) -> BlockRows:
        """Append the rows to the history of examples seen (after the ``t`` learned: rows
        of a call that failed are dropped) and return a BlockRows of no rows over it."""
        state, t = self._state, self._state.t
        if state.history is None:
            kind = SparseSupportBuffer if rows.sparse else SupportBuffer
            state.history = kind(rows.d, 64, growable=True)
        hist: Any = state.history
        if rows.d != hist.d:
            raise ValueError(f"X has {rows.d} columns but {self.name} holds rows of {hist.d}")
        if isinstance(hist, SupportBuffer):
            if rows.sparse:
                refuse_switch(self.name, True)
            if hist.capacity < t + rows.n:
                hist.grow(max(t + rows.n, 2 * hist.capacity))
            X = rows.dense()
            hist.X[t : t + rows.n] = X
            hist.sq[t : t + rows.n] = np.einsum("ij,ij->i", X, X)
            hist.size = t + rows.n
            hist.touch()
            return BlockRows(np.zeros((0, hist.d)))
        while hist.size > t:
            hist.remove(hist.size - 1)
        indptr, indices, data = rows.as_sparse().parts
        for a, b in itertools.pairwise(indptr):
            hist.add((indices[a:b], data[a:b]), 0.0)
        empty = hist.block(self.model.spec, np.zeros(1, np.int64), indices[:0], data[:0])
        return BlockRows.csr(empty)

    def snapshot(self) -> dict[str, np.ndarray]:
        """Copies of the basis (dense or CSR), its β, and each basis vector's example index."""
        store = self.model.store
        m = store.size if store else 0
        return {
            "X": self.model.support_vectors(),
            "alpha": store.alpha[:m, 0].copy() if store else np.zeros(0),
            "basis": self._state.basis[:m].copy(),
        }


@hookimpl
def kbench_register_algorithms(register):
    """Register OISVM."""
    register(Oisvm)
