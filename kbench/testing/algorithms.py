"""The checks of algorithms: the prediction protocol, for every task the algorithm declares,
on the small read-only streams of :func:`~kbench.testing.toy_stream`.

An offline algorithm (a batch reference) has no online protocol: it is checked on
``fit`` and held-out predictions, and the online checks do not apply to it.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from kbench.core.components import Algorithm, Component
from kbench.core.registry import Registry
from kbench.data.streams import Stream
from kbench.testing.checks import conformance_check, params_of
from kbench.testing.toys import make_test_algorithm, toy_stream


def _online(cls: type[Component]) -> bool:
    return not getattr(cls, "offline", False)


def _tasks(cls: type[Algorithm]) -> Iterator[tuple[str, str, Stream]]:
    """(task, who, stream) for every task the algorithm declares, in a fixed order."""
    assert cls.tasks, f"algorithm {cls.name!r}: declares no task"
    for task in sorted(cls.tasks):
        offline = ", offline" if cls.offline else ""
        yield task, f"algorithm {cls.name!r} ({task}{offline})", toy_stream(task)


def _learned(cls: type[Algorithm], task: str, s: Stream, registry: Registry) -> Algorithm:
    """A test instance that has learned the stream (online) or been fitted on it (offline)."""
    a = make_test_algorithm(cls, task, registry)
    if cls.offline:
        a.fit(s.X, s.y)
    else:
        a.learn_predict_many(s.X, s.y)
    return a


def _same(task: str, p: np.ndarray, q: np.ndarray) -> bool:
    """Equal predictions: exactly for labels; to rounding for regression, whose fast paths
    sum the same products in another order."""
    if task == "regression":
        return bool(np.allclose(p, q, rtol=1e-7, atol=1e-9))
    return bool(np.array_equal(p, q))


@conformance_check("algorithm")
def check_algorithm_spec(cls: type[Algorithm], registry: Registry) -> None:
    """``repr`` is the spec, and every parameter is stored under its own name."""
    for task, who, _ in _tasks(cls):
        a = make_test_algorithm(cls, task, registry)
        assert repr(a) == a.spec(), f"{who}: repr must be its spec"
        for pname, value in a.get_params().items():
            expected = params_of(cls).get(pname, cls.parameters()[pname].default)
            assert value == expected, (
                f"{who}: attribute {pname} is {value!r}, constructed with {expected!r}"
            )


@conformance_check("algorithm", applies=_online)
def check_learn_predict_many(cls: type[Algorithm], registry: Registry) -> None:
    """``learn_predict_many`` in two blocks predicts what ``predict_one``/``learn_one`` do."""
    for task, who, s in _tasks(cls):
        a = make_test_algorithm(cls, task, registry)
        half = len(s.X) // 2
        fast = np.concatenate(
            [
                a.learn_predict_many(s.X[:half], s.y[:half]),
                a.learn_predict_many(s.X[half:], s.y[half:]),
            ]
        )
        assert fast.shape == (len(s.X),), f"{who}: learn_predict_many returned shape {fast.shape}"
        b = make_test_algorithm(cls, task, registry)
        # The base class's learn_predict_many is the one-by-one loop, whatever b overrides.
        slow = Algorithm.learn_predict_many(b, s.X, s.y)
        if task == "regression":
            assert _same(task, fast, slow), (
                f"{who}: learn_predict_many differs from predict_one/learn_one"
            )
        else:
            agree = np.mean(fast == slow)
            assert agree == 1.0, (
                f"{who}: learn_predict_many differs from predict_one/learn_one on "
                f"{1 - agree:.1%} of examples"
            )


@conformance_check("algorithm")
def check_stream_untouched(cls: type[Algorithm], registry: Registry) -> None:
    """Learning and predicting never write into the stream's arrays."""
    for task, who, s in _tasks(cls):
        X0, y0 = s.X.copy(), s.y.copy()
        a = _learned(cls, task, s, registry)
        assert s.X_test is not None  # a toy stream has a test split
        a.predict_many(s.X_test)
        assert np.array_equal(s.X, X0) and np.array_equal(s.y, y0), f"{who}: wrote into the stream"


@conformance_check("algorithm")
def check_deterministic(cls: type[Algorithm], registry: Registry) -> None:
    """Two instances with the same seed make the same predictions."""
    for task, who, s in _tasks(cls):
        a, b = (make_test_algorithm(cls, task, registry) for _ in range(2))
        if cls.offline:
            assert s.X_test is not None  # a toy stream has a test split
            a.fit(s.X, s.y)
            b.fit(s.X, s.y)
            pa, pb = a.predict_many(s.X_test), b.predict_many(s.X_test)
        else:
            pa, pb = a.learn_predict_many(s.X, s.y), b.learn_predict_many(s.X, s.y)
        pa, pb = np.asarray(pa, dtype=np.float64), np.asarray(pb, dtype=np.float64)
        # A batch fit is one computation: exactly equal even for regression.
        same = np.array_equal(pa, pb) if cls.offline else _same(task, pa, pb)
        assert same, f"{who}: not deterministic for a fixed seed"


@conformance_check("algorithm")
def check_stats(cls: type[Algorithm], registry: Registry) -> None:
    """``stats()`` has ``n_support`` and ``kernel_evals``, and its numbers are finite."""
    for task, who, s in _tasks(cls):
        st = _learned(cls, task, s, registry).stats()
        for key in ("n_support", "kernel_evals"):
            assert key in st, f"{who}: stats() lacks {key!r}"
        for key, value in st.items():
            if isinstance(value, (int, float, np.number)):
                assert np.isfinite(value), f"{who}: stats()[{key!r}] = {value}"


@conformance_check("algorithm")
def check_predict_many(cls: type[Algorithm], registry: Registry) -> None:
    """``predict_many`` equals ``predict_one``, gives labels of the task, and learns nothing."""
    for task, who, s in _tasks(cls):
        assert s.X_test is not None  # a toy stream has a test split
        a = _learned(cls, task, s, registry)
        before = a.stats().get("n_support")
        pm = np.asarray(a.predict_many(s.X_test), dtype=np.float64)
        po = np.array([a.predict_one(x) for x in s.X_test], dtype=np.float64)
        assert _same(task, pm, po), f"{who}: predict_many differs from predict_one"
        if task != "regression":
            labels = (
                {-1.0, 1.0}
                if task in ("binary", "novelty")
                else set(map(float, range(s.n_classes)))
            )
            assert set(np.unique(pm)) <= labels, (
                f"{who}: predictions {np.unique(pm)} are not labels of the task"
            )
        assert a.stats().get("n_support") == before, f"{who}: predicting changed the model"
