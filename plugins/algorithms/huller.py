"""The Huller (Bordes and Bottou, ECML 2005): an online hard-margin SVM with a bias, in hull form.

The maximum-margin hyperplane is the perpendicular bisector of the closest points X_P and
X_N of the two classes' convex hulls (specs/003 §1). Each is kept as a convex combination
of support vectors; one UPDATE moves one of them along the segment towards (λ > 0) or away
from (λ < 0) a single example with an exact line search, which inserts, shrinks or
removes a support vector. Every example gets an insertion attempt and is followed by a
removal attempt on a support vector drawn at random (the pairing of the paper's Fig. 4).
The hull dot products X_P·X_P, X_N·X_P, X_N·X_N follow by O(1) recursions.

The compiled core is ``cython_core/_huller.pyx``; kernels without a compiled form run the
same core with rows computed by ``kernel.row`` (the Python path).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from kbench.api import hookimpl, is_sparse, param
from kbench.cython_core import _huller
from kbench.learners import RevisitingLearner

#: Relative size below which ‖X_P − X_N‖² counts as zero when scaling decisions.
_TINY = 1e-300


class Huller(RevisitingLearner):
    """The Huller: online nearest-point SVM with a bias that can also remove support vectors.

    Binary only. The decision value is in the standard SVM scale (specs/003 §1.3):
    ``f(x) = ŷ(x) / (d²/2)`` with ``ŷ(x) = (X_P − X_N)·x + (X_N·X_N − X_P·X_P)/2`` and
    ``d² = ‖X_P − X_N‖²``, so support vectors of the converged solution sit at
    ``y f = 1`` and ``2αᵢ/d²`` are LIBSVM's dual coefficients; :meth:`decision_function`
    also gives the raw ŷ. The hard-margin problem needs the classes to be separable in
    the kernel's feature space: when the two hulls (nearly) touch, ‖X_P − X_N‖² below
    1e-6 of max(‖X_P‖², ‖X_N‖²), the learner warns once, keeps going (every update stays
    finite), and reports ``nonseparable = 1`` in ``stats()``; use the soft variant (``C``).

    Initialisation: the first ``n_init_per_class`` examples of each class are averaged
    (X_c is their mean); the class's hull is then updated like any other. Before an
    example of each class has been seen the learner predicts the only class seen (+1 at
    first); examples of a class whose average is complete wait until the other class
    appears and are then given their insertion attempts.

    Across passes (the runner's ``epochs``) an example is known again by its row in the
    stream's array (see ``_example_ids``): an example that is a support vector gets an
    UPDATE as a support vector (re-optimised, possibly removed), not a second copy.

    Parameters
    ----------
    C
        None (default): hard margin. A number > 0: the soft margin of the kernel
        ``K + δᵢⱼ/C`` (the L2-slack SVM), δ the identity of training examples; the
        decision on new points uses the plain kernel.
    n_init_per_class
        Examples of each class averaged into the initial hull points, ≥ 1.
    removals
        Removal attempts (UPDATEs on a random support vector) after each insertion
        attempt; 0 gives the insertion-only variant.
    allow_negative_lambda
        Let an UPDATE on a support vector move away from it (λ down to −αₖ/(1−αₖ)),
        which shrinks or removes it; False is the paper's "first algorithm" (λ ∈ [0, 1]).
    cache_mb
        Budget of the kernel-row cache between support vectors (removal attempts and
        revisited examples read it), in MB; 0 caches nothing.
    """

    name = "huller"
    paper = "Bordes and Bottou (2005). The Huller: a simple and efficient online SVM. ECML."
    tasks = frozenset({"binary"})
    test_params = {"cache_mb": 1.0}
    _module = _huller
    _n_coef = 2

    C: float | None = param(None, low=0.0, low_open=True)
    n_init_per_class: int = param(5, low=1)
    removals: int = param(1, low=0)
    allow_negative_lambda: bool = param(True)
    cache_mb: float = param(256.0, low=0.0)

    def __post_init__(self) -> None:
        C, allow_negative_lambda, removals = self.C, self.allow_negative_lambda, self.removals
        n_init_per_class, seed = self.n_init_per_class, self.seed
        self._setup(self.cache_mb)
        self._core = _huller.HullerCore(
            *self._kernel_args,
            0.0 if C is None else 1.0 / C,
            allow_negative_lambda,
            removals,
            n_init_per_class,
            seed % (1 << 64),
        )
        self._warned = False

    def _array_names(self) -> tuple[str, ...]:
        return ("_sq", "_ap", "_an", "_lab", "_krow", "_scratch")

    def _bind_arrays(self) -> None:
        self._core.bind(
            self._SV,
            self._sq,
            self._ap,
            self._an,
            self._lab,
            self._sv_ids,
            self._krow,
            self._scratch,
        )

    def _learn_python(self, x: np.ndarray, y: float, xid: int, *, first_pass: bool) -> None:
        core = self._core
        if core.m == core.cap:
            self._grow()
        k = core.slot_of(xid)
        xsq = float(x @ x)
        if k >= 0:
            row = self._row(k)
            kap = float(row[k])
        else:
            row, kap = self._new_row(x, xsq)
        status = core.learn_row(x, xsq, y, xid, row, kap)
        if self._held_back(status, x, y, xid):
            return
        if first_pass:
            for _ in range(self.removals):
                r = core.pick()
                if r >= 0:
                    core.update_sv(r, self._row(r))

    def _after(self, last_id: int) -> None:
        if self._core.nonseparable and not self._warned:
            self._warned = True
            warnings.warn(
                f"kbench {self.name}: the convex hulls of the two classes (nearly) touch "
                f"(‖X_P − X_N‖² = {self.d2:.3g}, below 1e-6 of the hull points' squared norms), "
                "so the data are not separable with this kernel (or barely) and the hard-margin "
                f"solution degenerates; use the soft-margin variant {self.name}[C=...] "
                "(kernel K + δᵢⱼ/C)",
                RuntimeWarning,
                stacklevel=3,
            )

    # -- prediction ---------------------------------------------------------------------------

    @property
    def d2(self) -> float:
        """‖X_P − X_N‖² (in the training geometry, with the ridge 1/C when soft)."""
        c = self._core
        return c.PP - 2.0 * c.NP + c.NN

    def _scale(self) -> float:
        d2 = self.d2
        return 0.5 * d2 if d2 > _TINY else 1.0

    def _one_class_value(self) -> float | None:
        """The decision before both classes have an example: the class seen, or 0."""
        c = self._core
        if c.n_pos > 0 and c.n_neg > 0:
            return None
        return -1.0 if c.n_neg > 0 else (1.0 if c.n_pos > 0 else 0.0)

    def _raw_one(self, x: np.ndarray) -> float:
        core = self._core
        if self._compiled is not None:
            return float(core.decision(x, float(x @ x))[0])
        m = core.m
        row = np.asarray(self.kernel.row(self._SV[:m], x, sq=self._sq[:m], xsq=float(x @ x)))
        return float(core.decision_row(np.ascontiguousarray(row, dtype=np.float64))[0])

    def decision_one(self, x):
        if self._d < 0:
            return 0.0
        if is_sparse(x) or self._store is not None:
            return float(self.decision_function(x)[0])
        fixed = self._one_class_value()
        if fixed is not None:
            return fixed
        return self._raw_one(x) / self._scale()

    def decision_function(self, X: np.ndarray, *, canonical: bool = True) -> np.ndarray:
        """Decision values of the rows of X: in the SVM scale, or the raw ŷ (``canonical=False``)."""
        X = self._features(X)
        c = self._core
        m = self._m
        if m == 0:
            return np.zeros(X.shape[0])
        AB = self._gram_block(
            X, np.ascontiguousarray(np.column_stack([self._ap[:m], self._an[:m]]))
        )
        raw = AB[:, 0] - AB[:, 1] + 0.5 * (c.NN - c.PP)
        fixed = self._one_class_value()
        if fixed is not None:
            return np.full(X.shape[0], fixed)
        return raw / self._scale() if canonical else raw

    # -- inspection ---------------------------------------------------------------------------

    def support(self) -> tuple[Any, np.ndarray, np.ndarray]:
        """``(SV, y, α)``: the support vectors (a CSR matrix on CSR rows), their labels and
        hull coefficients (each class sums to 1)."""
        m = self._m
        if m == 0:
            return self._support_rows(), np.zeros(0), np.zeros(0)
        return self._support_rows(), self._lab[:m].copy(), (self._ap + self._an)[:m].copy()

    def svm_dual(self) -> tuple[np.ndarray, float]:
        """The standard SVM's signed dual coefficients ``2yᵢαᵢ/d²`` and bias ``(X_N·X_N − X_P·X_P)/d²``."""
        _, lab, alpha = self.support()
        d2 = self.d2
        c = self._core
        return 2.0 * lab * alpha / d2, (c.NN - c.PP) / d2

    def hull_scalars(self) -> tuple[float, float, float]:
        """The recursively maintained ``(X_P·X_P, X_N·X_P, X_N·X_N)``."""
        c = self._core
        return c.PP, c.NP, c.NN

    def exact_scalars(self) -> tuple[float, float, float]:
        """``(X_P·X_P, X_N·X_P, X_N·X_N)`` recomputed from the Gram matrix of the support vectors."""
        SV, _, _ = self.support()
        m = SV.shape[0]
        if m == 0:
            return 0.0, 0.0, 0.0
        if self._store is not None:
            K = self._store.gram(self.kernel, SV)
        else:
            K = np.asarray(self.kernel.matrix(SV, SV))
        if self.C is not None:
            K = K + np.eye(m) / self.C
        ap, an = self._ap[:m], self._an[:m]
        return float(ap @ K @ ap), float(an @ K @ ap), float(an @ K @ an)

    def stats(self):
        c = self._core
        out = {
            "n_support": self._m,
            "kernel_evals": self._kernel_evals(),
            "insertions": c.insertions,
            "removed": c.removed,
            "updates": c.updates,
            "noop_updates": c.noops,
            "pending": len(self._pending),
            "hull_distance_sq": self.d2,
            "nonseparable": int(c.nonseparable),
        }
        if c.n_pos > 0 and c.n_neg > 0 and self.d2 > _TINY:
            out["bias"] = (c.NN - c.PP) / self.d2
            out["margin"] = 0.5 * float(np.sqrt(self.d2))
        out.update(self._cache_stats())
        return out


@hookimpl
def kbench_register_algorithms(register):
    """Register the Huller."""
    register(Huller)
