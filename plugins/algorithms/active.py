"""Active-learning wrappers: any online binary learner becomes an active learner.

The wrapped learner is named by its spec string (``base=online_svm_r[C=10]``) and built
with the wrapper's kernel, task and seed (and its own default loss when it takes one).
``active_all`` and ``active_margin`` state their query rule in ``wants_label``, so the
runner reveals and counts only the labels they ask for; ``learn_one`` applies the same
rule, so a learner shown every label uses exactly the same ones.

``active_greedy`` (Guillory, Chastain and Bilmes 2009; the ramp-SVM paper's Greedy with
h = 5) queries the best of h examples, which the runner's one-example-at-a-time question
cannot express: it is shown every label and reads only the ones it chooses, reporting
their number as the statistic ``labels_queried``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.api import (
    Algorithm,
    child_seed,
    get_registry,
    hookimpl,
    is_sparse,
    param,
    parse_spec,
    takes_csr,
)


class _ActiveWrapper(Algorithm):
    """Common part of the wrappers: the wrapped learner, the query count and its budget.

    Parameters
    ----------
    base
        Spec of the wrapped online learner.
    max_queries
        Stop asking for labels after this many (0: no limit).
    """

    tasks = frozenset({"binary"})
    spec_params = {"base": "algorithm"}

    base: str = param("online_svm_r")
    max_queries: int = param(0, low=0)

    def __post_init__(self) -> None:
        owner = self.name
        registry = get_registry()
        cls = registry.entry("algorithm", parse_spec(self.base)[0]).cls
        if cls.offline:
            raise ValueError(
                f"{owner}: base {self.base!r} is a batch learner; an active "
                "learner needs an online one"
            )
        if callable(getattr(cls, "wants_label", None)):
            raise ValueError(f"{owner}: base {self.base!r} is already an active learner")
        if self.task not in cls.tasks:
            raise ValueError(f"{owner}: base {self.base!r} does not support {self.task} tasks")
        loss = None
        if cls.uses_loss:
            loss = registry.create("loss", cls.default_loss or "hinge")
        self.learner: Any = registry.create(
            "algorithm",
            self.base,
            kernel=self.kernel if cls.uses_kernel else None,
            loss=loss,
            task=self.task,
            n_classes=self.n_classes,
            seed=self.seed,
        )
        self.queries = 0

    @property
    def sparse_input(self) -> bool:
        """CSR rows as they are when the wrapped learner takes them (the wrapper itself
        only reads the learner's decision values)."""
        return takes_csr(self.learner)

    def _budget_left(self) -> bool:
        return self.max_queries == 0 or self.queries < self.max_queries

    def decision_one(self, x):
        return self.learner.decision_one(x)

    def predict_one(self, x):
        return self.learner.predict_one(x)

    def predict_many(self, X):
        return self.learner.predict_many(X)

    def decision_many(self, X):
        """The wrapped learner's decision values of a dense or CSR block."""
        return self.learner.decision_many(X)

    def stats(self):
        return dict(self.learner.stats()) | {"labels_queried": self.queries}

    def end_pass(self) -> None:
        """The base learner's end of a pass (LASVM's finishing step), when it has one."""
        end = getattr(self.learner, "end_pass", None)
        if callable(end):
            end()


class QueryAll(_ActiveWrapper):
    """Active learning that asks for every label (until ``max_queries``): the passive learner
    in the active protocol, the baseline of the ramp-SVM paper's Fig. 6.

    Its parameters are every wrapper's, ``base`` and ``max_queries``.
    """

    name = "active_all"
    test_params = {"base": "pa"}

    def wants_label(self, x) -> bool:
        """True while the query budget lasts."""
        return self._budget_left()

    def learn_one(self, x, y):
        if self._budget_left():
            self.learner.learn_one(x, y)
            self.queries += 1

    def learn_predict_many(self, X, y):
        if self.max_queries:
            return super().learn_predict_many(X, y)
        self.queries += X.shape[0]
        return self.learner.learn_predict_many(X, y)


class _Memo(_ActiveWrapper):
    """A wrapper that reads the wrapped learner's decision value of an example up to three
    times (``predict_one``, ``wants_label``, ``learn_one``): one decision answers all three.

    The runner passes the same array object to the three calls; the value is kept for that
    object until the learner learns. It is a cache only: another object of the same row
    recomputes the same value.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        self._memo: tuple[object, float] | None = None

    def _decision(self, x) -> float:
        memo = self._memo
        if memo is not None and memo[0] is x:
            return memo[1]
        f = float(self.learner.decision_one(x))
        self._memo = (x, f)
        return f

    def _learn(self, x, y) -> None:
        self._memo = None
        self.learner.learn_one(x, y)
        self.queries += 1

    def decision_one(self, x):
        return self._decision(x)

    def predict_one(self, x):
        return self.learner.label_of(self._decision(x))


class MarginBand(_Memo):
    """Active learning that asks for the label of x only when ``|f(x)| ≤ width``: the query
    rule of OnlineASVM^R (Wang and Vucetic 2009), around any online learner.
    ``active_margin[base=online_svm_r]`` learns exactly what ``online_asvm_r`` learns.

    ``base`` and ``max_queries`` are every wrapper's.

    Parameters
    ----------
    width
        Half-width of the query band, ≥ 0.
    """

    name = "active_margin"
    paper = (
        "Wang and Vucetic (2009). Fast online training of ramp loss support vector machines. ICDM."
    )
    test_params = {"base": "pa"}

    width: float = param(1.0, low=0.0)

    def wants_label(self, x) -> bool:
        """Whether x falls in the band |f(x)| ≤ width (and the query budget lasts)."""
        return self._budget_left() and abs(self._decision(x)) <= self.width

    def learn_one(self, x, y):
        if self.wants_label(x):
            self._learn(x, y)


class Greedy(_ActiveWrapper):
    """Greedy active learning (Guillory, Chastain and Bilmes 2009; the ramp-SVM paper's
    Greedy, h = 5): the stream is cut into blocks of h consecutive examples; each is
    predicted by the current model, and at the end of a block the example with the smallest
    |f(x)| (the earliest on ties) is queried and learned; the other h − 1 are discarded.
    h = 1 is passive learning; a stream of n examples costs ⌊n/h⌋ labels.

    The runner asks about one example at a time, so it cannot offer a choice among h: this
    learner is shown every label, reads only the labels it chooses, and reports their
    number as ``labels_queried`` in its statistics (the run's own count is n).

    ``base`` and ``max_queries`` are every wrapper's.

    Parameters
    ----------
    h
        Block length, ≥ 1.
    """

    name = "active_greedy"
    paper = (
        "Guillory, Chastain and Bilmes (2009). Active learning as non-convex optimization. AISTATS."
    )
    test_params = {"base": "pa"}

    h: int = param(5, low=1)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._block: list[tuple[float, Any, float]] = []

    def learn_one(self, x, y):
        # The label goes into the block with its example; it is read only if chosen.
        kept = x.copy() if is_sparse(x) else np.array(x)  # the caller may reuse its row
        self._block.append((abs(float(self.learner.decision_one(x))), kept, y))
        if len(self._block) < self.h:
            return
        block, self._block = self._block, []
        if not self._budget_left():
            return
        best = min(range(len(block)), key=lambda i: block[i][0])
        _, xb, yb = block[best]
        self.learner.learn_one(xb, float(yb))
        self.queries += 1


class SelectiveSampling(_Memo):
    """Selective sampling (Cesa-Bianchi, Gentile and Zaniboni 2006; around the perceptron,
    their label-efficient perceptron): ask for the label of x with probability
    ``b / (b + |f(x)|)``, f the wrapped learner's decision value, and learn from it when
    asked. Small b asks for few labels far from the boundary.

    One coin per example, from the wrapper's own stream (``child_seed(seed, 1)``; the
    wrapped learner keeps ``seed``). ``wants_label`` tosses it; ``learn_one`` uses the coin
    of a ``wants_label`` that said yes, and otherwise tosses its own. Predicting tosses
    nothing, so the runner's protocol (predict, ask, learn when asked), a learner shown
    every label (``learn_one``, with or without ``predict_one``) and a block use the same
    coins and the same labels. ``base`` and ``max_queries`` are every wrapper's.

    Parameters
    ----------
    b
        The sampling parameter b > 0.
    """

    name = "active_selective"
    paper = "Cesa-Bianchi, Gentile and Zaniboni (2006). Worst-case analysis of selective sampling for linear classification. JMLR 7."
    test_params = {"base": "perceptron"}

    b: float = param(1.0, low=0.0, low_open=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._coins = np.random.default_rng(child_seed(self.seed, 1))
        self._heads = False  # the last wants_label said yes; learn_one follows

    def _toss(self, x) -> bool:
        if not self._budget_left():
            return False
        return bool(self._coins.random() < self.b / (self.b + abs(self._decision(x))))

    def wants_label(self, x) -> bool:
        """The example's coin: heads with probability b / (b + |f(x)|)."""
        self._heads = self._toss(x)
        return self._heads

    def learn_one(self, x, y):
        heads, self._heads = self._heads, False
        if heads or self._toss(x):
            self._learn(x, y)


@hookimpl
def kbench_register_algorithms(register):
    """Register the active-learning wrappers."""
    for cls in (QueryAll, MarginBand, Greedy, SelectiveSampling):
        register(cls)
