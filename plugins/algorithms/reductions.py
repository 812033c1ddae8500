"""Multiclass reductions: one-vs-rest and one-vs-one around any binary learner.

``ovr[base=forgetron[budget=100]]`` trains one binary learner per class (class k against
the rest, labels +1/−1) and predicts the class whose learner scores highest;
``ovo[base=...]`` trains one binary learner per pair of classes (i against j, on the
examples of those two classes only) and predicts the class with most votes. Both run
on multiclass tasks only: on a binary data set the base learner itself is the reduction
(``ovr`` of two classes would train two mirror-image learners), so the planner skips the
pair with that reason rather than run a duplicate.

Kernel rows shared among the binary learners
--------------------------------------------
Every binary learner of a reduction sees the same example x and computes its kernel row
against its own support set. The support sets of learners that store examples verbatim
(the kernel perceptron, the budget perceptrons, Forgetron, the budget PA family) are
subsets of the examples seen, and overlap: an example is often a support vector of
several learners. With ``share=True`` (the default) and such a base, the reduction gives
each learner a view kernel (:class:`SharedRowKernel`) and tags each example with its
position in the stream as one extra, last coordinate, which the learners store with it.
A learner's kernel row ``k(S, x)`` is then read from a per-example cache keyed by the
stored examples' positions: the kernel values between x and a stored example are
computed once, by the base kernel, on first request, and every other learner holding
that example reads them. ``kernel_evals`` in ``stats()`` counts the values actually
computed; ``kernel_evals_requested`` counts those the binary learners asked for (their
own counters), so the saving is their difference.

The view kernel has no compiled form, so the learners take their per-example Python
path; learners that build new vectors (BSGD's merge), transform x or ignore the kernel
do not share (``share`` has no effect on them) and run unchanged, and ``kernel_evals``
is then the sum of their counts.

CSR rows
--------
A reduction takes CSR rows as they are when its base learner does (``sparse_input``):
each row is handed to the binary learners as a one-row CSR matrix. The tag column is
for dense rows only, so on CSR rows the learners do not share kernel rows: a reduction
that has learned nothing yet rebuilds its learners with the plain kernel on its first
CSR rows, and one that has learned dense rows with shared ones refuses CSR rows.

The module name does not start with an underscore: the registry loads it as a plugin.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from kbench.api import (
    Algorithm,
    Kernel,
    child_seed,
    dense,
    get_registry,
    hookimpl,
    is_sparse,
    parse_spec,
    takes_csr,
)
from kbench.cython_core import _shared_rows

#: Base learners whose support vectors are verbatim copies of examples seen and whose
#: kernel values all come from ``kernel.row``/``matrix``/``diag``: they can share rows.
SHAREABLE = frozenset(
    {"perceptron", "rbp", "forgetron", "projectron", "projectronpp", "pa", "bpa_s"}
)


class SharedRowKernel(Kernel):
    """A view of a kernel for rows tagged with their stream position (the last column).

    ``row(S, x)`` for the current example x returns cached values for the rows of S whose
    tag was already asked about for x, and computes the others with the base kernel; any
    other x (a stored example, during a learner's maintenance) is computed directly.
    Tags of held-out examples are fresh positions too, so they share in the same way.

    Parameters
    ----------
    base
        The kernel the learners would otherwise use.
    """

    name = "shared_rows"  # not registered: built by the reductions only

    def __init__(self, base: Kernel) -> None:
        self.base_kernel = base
        # Per instance: the view has the diagonal of the kernel it wraps.
        self.constant_diagonal = base.constant_diagonal  # type: ignore[misc]
        self.evals = 0
        self._current = -1
        self._compiled = base.compiled()
        # Float64 stamps and tags (exact below 2⁵³), as the compiled row reads them.
        self._stamp = np.full(1024, -1.0)
        self._values = np.zeros(1024)
        self._norms = np.full(1024, np.nan)  # squared norms by tag, NaN until known

    def get_params(self) -> dict[str, Any]:
        return {}

    def spec(self, *, defaults: bool = True) -> str:
        return self.base_kernel.spec(defaults=defaults)

    def nbytes(self) -> int:
        """Memory held by the cache (three floats per tag)."""
        return self._stamp.nbytes + self._values.nbytes + self._norms.nbytes

    def begin(self, t: int) -> None:
        """Start serving rows of the example tagged t."""
        if t >= len(self._stamp):
            n = max(2 * len(self._stamp), t + 1)
            stamp = np.full(n, -1.0)
            stamp[: len(self._stamp)] = self._stamp
            values = np.zeros(n)
            values[: len(self._values)] = self._values
            norms = np.full(n, np.nan)
            norms[: len(self._norms)] = self._norms
            self._stamp, self._values, self._norms = stamp, values, norms
        self._current = t

    def row(self, S, x, *, out=None, sq=None, xsq=None):
        S = np.asarray(S, dtype=np.float64)
        x = np.asarray(x, dtype=np.float64)
        t = int(x[-1])
        compiled = self._compiled
        if (
            compiled is not None
            and t == self._current
            and S.ndim == 2
            and S.flags.c_contiguous
            and x.flags.c_contiguous
        ):
            # The per-example path: one compiled pass over S, computing only the values
            # no other learner has asked for yet.
            m = len(S)
            target = out if out is not None and len(out) >= m else np.empty(m)
            self.evals += _shared_rows.shared_row(
                compiled, S, m, x, self._stamp, self._values, self._norms, target
            )
            return target[:m]
        if t != self._current or len(S) == 0:
            values = self.base_kernel.row(
                np.ascontiguousarray(S[:, :-1]), np.ascontiguousarray(x[:-1])
            )
            self.evals += len(S)
        else:
            tags = S[:, -1].astype(np.intp)
            miss = self._stamp[tags] != t
            if miss.any():
                fresh = tags[miss]
                self._values[fresh] = self.base_kernel.row(
                    S[miss, :-1], np.ascontiguousarray(x[:-1])
                )
                self._stamp[fresh] = t
                self.evals += len(fresh)
            values = self._values[tags]
        if out is None:
            return values
        out[: len(values)] = values
        return out[: len(values)]

    def matrix(self, A, B):
        A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
        self.evals += len(A) * len(B)
        return self.base_kernel.matrix(
            np.ascontiguousarray(A[:, :-1]), np.ascontiguousarray(B[:, :-1])
        )

    def diag(self, A):
        A = np.asarray(A, dtype=np.float64)
        self.evals += len(A)
        return self.base_kernel.diag(np.ascontiguousarray(A[:, :-1]))

    def compiled(self):
        return None


class _Reduction(Algorithm):
    """Common part of the reductions: the binary learners, tagging and statistics.

    Parameters
    ----------
    base
        Spec of the binary online learner, e.g. ``forgetron[budget=100]``.
    share
        Share kernel rows among the learners (for bases that store examples verbatim).
    """

    tasks = frozenset({"multiclass"})
    spec_params = {"base": "algorithm"}

    base: str
    share: bool
    _pairs: list[tuple[int, int]]

    def __init__(
        self,
        *,
        kernel=None,
        loss=None,
        task="multiclass",
        n_classes=2,
        seed=0,
        base: str = "perceptron",
        share: bool = True,
    ) -> None:
        super().__init__(kernel=kernel, loss=loss, task=task, n_classes=n_classes, seed=seed)
        self.base, self.share = base, bool(share)
        self._build(self.name, self._learners_for(int(n_classes)))

    @property
    def sparse_input(self) -> bool:  # type: ignore[override]
        """CSR rows as they are when the base learner takes them."""
        return takes_csr(self.learners[0])

    def _learners_for(self, n_classes: int) -> int:
        """How many binary learners the reduction trains for ``n_classes`` classes (and
        whatever the subclass needs to map classes to learners)."""
        raise NotImplementedError

    @classmethod
    def supports(cls, task, loss=None):
        if task != "multiclass":
            return (
                f"{cls.name} reduces multiclass tasks to binary ones; on {task} data "
                "run its base learner itself"
            )
        return None

    def _build(self, owner: str, n_learners: int, share: bool = True) -> None:
        registry = get_registry()
        try:
            cls: Any = registry.entry("algorithm", parse_spec(self.base)[0]).cls
        except (ValueError, KeyError) as exc:
            raise ValueError(f"{owner}: base {self.base!r}: {exc}") from None
        if "binary" not in cls.tasks:
            raise ValueError(
                f"{owner}: base {self.base!r} is not a binary learner "
                f"(it supports {', '.join(sorted(cls.tasks))})"
            )
        if cls.offline:
            raise ValueError(
                f"{owner}: base {self.base!r} is a batch learner; a reduction needs an online one"
            )
        if callable(getattr(cls, "wants_label", None)):
            raise ValueError(
                f"{owner}: base {self.base!r} is an active learner; the reduction would "
                "show it every label"
            )
        if issubclass(cls, _Reduction):
            raise ValueError(f"{owner}: base {self.base!r} is itself a reduction")
        if self.n_classes < 2:
            raise ValueError(f"{owner}: needs at least 2 classes, got {self.n_classes}")
        self._shared: SharedRowKernel | None = None
        kernel = self.kernel if cls.uses_kernel else None
        if share and self.share and kernel is not None and cls.name in SHAREABLE:
            self._shared = kernel = SharedRowKernel(kernel)
        loss = registry.create("loss", cls.default_loss or "hinge") if cls.uses_loss else None
        self.learners: list[Any] = [
            registry.create(
                "algorithm",
                self.base,
                kernel=kernel,
                loss=loss,
                task="binary",
                n_classes=2,
                seed=child_seed(self.seed, i),
            )
            for i in range(n_learners)
        ]
        self._t = 0
        self._last: tuple[Any, np.ndarray] | None = None
        self._learned = False

    def _rows(self, X: Any, learn: bool) -> Any:
        """The rows X (``learn``: to be learned), once the learners suit them: on CSR rows
        a reduction that has learned nothing stops sharing kernel rows (its learners are
        rebuilt with the plain kernel); one that has learned dense rows with shared ones
        refuses to learn CSR rows (it predicts them densified, see :meth:`_tagged`)."""
        if is_sparse(X) and self._shared is not None and self.sparse_input:
            if not self._learned:
                self._build(self.name, len(self.learners), share=False)
            elif learn:
                raise TypeError(
                    f"{self.name} has learned dense rows; it cannot continue on sparse ones"
                )
        self._learned = self._learned or learn
        return X

    def _tagged(self, x: Any) -> Any:
        """x as the learners see it: a CSR row as it is to learners that take CSR rows
        without sharing, else densified; with its stream tag when rows are shared."""
        if is_sparse(x):
            if self._shared is None and self.sparse_input:
                return x
            x = dense(x).reshape(-1)
        if self._shared is None:
            return x
        last = self._last
        if last is not None and last[0] is x:  # predict_one then learn_one of one example
            return last[1]
        xt = np.empty(len(x) + 1)
        xt[:-1] = x
        xt[-1] = self._t
        self._shared.begin(self._t)
        self._t += 1
        self._last = (x, xt)
        return xt

    def _scores(self, xt: np.ndarray) -> np.ndarray:
        return np.array([float(m.decision_one(xt)) for m in self.learners])

    def learn_predict_many(self, X, y):
        X = self._rows(X, learn=True)
        pred = np.empty(X.shape[0])
        for i in range(X.shape[0]):
            xt = self._tagged(X[i])
            pred[i] = self.label_of(self._decision(xt))
            self._learn(xt, y[i])
        self._last = None
        return pred

    def decision_one(self, x):
        return self._decision(self._tagged(self._rows(x, learn=False)))

    def learn_one(self, x, y):
        self._learn(self._tagged(self._rows(x, learn=True)), y)
        self._last = None

    def decision_many(self, X):
        """Class scores of the rows of X (dense or CSR), n × C, without learning."""
        X = self._rows(X, learn=False)
        n = X.shape[0]
        F = np.array([self._decision(self._tagged(X[i])) for i in range(n)]).reshape(n, -1)
        self._last = None
        return F

    def predict_many(self, X):
        return self.labels_of(self.decision_many(X))

    def stats(self):
        per = [m.stats() for m in self.learners]
        requested = int(sum(s.get("kernel_evals", 0) for s in per))
        out: dict[str, Any] = {
            "n_support": int(sum(s.get("n_support", 0) for s in per)),
            "kernel_evals": requested if self._shared is None else int(self._shared.evals),
            "kernel_evals_requested": requested,
            "binary_learners": len(self.learners),
        }
        if all("model_bytes" in s for s in per):
            out["model_bytes"] = int(sum(s["model_bytes"] for s in per))
            if self._shared is not None:
                out["model_bytes"] += self._shared.nbytes()
        return out

    def end_pass(self) -> None:
        """Each binary learner's end of a pass (LASVM's finishing step), when it has one."""
        for m in self.learners:
            end = getattr(m, "end_pass", None)
            if callable(end):
                end()

    def _decision(self, xt: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _learn(self, xt: np.ndarray, y: float) -> None:
        raise NotImplementedError


class OneVsRest(_Reduction):
    """One-vs-rest: one binary learner per class, class k (+1) against the rest (−1).

    The class scores are the C learners' decision values ``f_k(x)``, and the prediction
    their argmax (the lowest class on a tie). Each learner sees every example, labelled
    +1 if it is of its class and −1 otherwise; learner k is built with seed ``child_seed(seed, k)`` (:mod:`kbench.core.seeds`).

    Its parameters are every reduction's, ``base`` and ``share``.
    """

    name = "ovr"
    test_params = {"base": "forgetron[budget=12]"}

    def _learners_for(self, n_classes: int) -> int:
        return n_classes

    def _decision(self, xt):
        return self._scores(xt)

    def _learn(self, xt, y):
        label = int(y)
        for k, m in enumerate(self.learners):
            m.learn_one(xt, 1.0 if k == label else -1.0)


class OneVsOne(_Reduction):
    """One-vs-one: one binary learner per pair of classes i < j, i (+1) against j (−1).

    The pair's learner sees only the examples of classes i and j. Each learner votes for
    i when ``f_ij(x) ≥ 0`` and for j otherwise; the class scores are the vote counts and
    the prediction the class with most votes (the lowest class on a tie). The learner of
    the p-th pair (in the order (0, 1), (0, 2), …, (C−2, C−1)) is built with seed
    ``child_seed(seed, p)``.

    Its parameters are every reduction's, ``base`` and ``share``.
    """

    name = "ovo"
    test_params = {"base": "forgetron[budget=12]"}

    def _learners_for(self, n_classes: int) -> int:
        self._pairs = list(itertools.combinations(range(n_classes), 2))
        self._first = np.array([i for i, _ in self._pairs], dtype=np.intp)
        self._second = np.array([j for _, j in self._pairs], dtype=np.intp)
        self._index = {p: n for n, p in enumerate(self._pairs)}
        return len(self._pairs)

    def _decision(self, xt):
        f = self._scores(xt)
        # NaN stays NaN: a diverged pair makes the example's prediction NaN (divergence).
        votes = np.zeros(self.n_classes)
        np.add.at(votes, self._first, np.where(f >= 0.0, 1.0, 0.0))
        np.add.at(votes, self._second, np.where(f < 0.0, 1.0, 0.0))
        if not np.isfinite(f).all():
            votes[:] = np.nan
        return votes

    def _learn(self, xt, y):
        label = int(y)
        for n, (i, j) in enumerate(self._pairs):
            if label == i:
                self.learners[n].learn_one(xt, 1.0)
            elif label == j:
                self.learners[n].learn_one(xt, -1.0)


@hookimpl
def kbench_register_algorithms(register):
    """Register the one-vs-rest and one-vs-one reductions."""
    for cls in (OneVsRest, OneVsOne):
        register(cls)
