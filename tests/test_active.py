"""Active-learning wrappers and the runner's active protocol."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import assert_refused, binary_stream, checkerboard, run_stream
from kbench.core.registry import get_registry
from kbench.data.streams import Stream

KERNEL = "rbf[gamma=2.0]"


def make(spec: str):
    reg = get_registry()
    return reg.create("algorithm", spec, kernel=reg.create("kernel", KERNEL))


def stream(n: int = 400, seed: int = 0) -> Stream:
    X, y = checkerboard(n, seed)
    Xt, yt = checkerboard(300, seed + 100, noise=0.0)
    return binary_stream(X, y, Xt, yt, dataset="checker", seed=seed)


def run(spec: str, s: Stream, max_queries: int = 0):
    options = (("max_queries", max_queries),) if max_queries else ()
    return run_stream(s, spec, kernel=KERNEL, seed=0, options=options)


def test_margin_band_around_online_svm_r_is_online_asvm_r() -> None:
    X, y = checkerboard(500)
    a = make("active_margin[base=online_svm_r[C=10.0]]")
    b = make("online_asvm_r[C=10.0]")
    pa = np.array([(a.predict_one(x), a.learn_one(x, t))[0] for x, t in zip(X, y, strict=True)])
    pb = b.learn_predict_many(X, y)
    assert np.array_equal(pa, pb)
    assert a.stats()["labels_queried"] == b.stats()["labels_queried"] < 500
    assert np.array_equal(a.learner.snapshot()["alpha"], b.snapshot()["alpha"])


@pytest.mark.parametrize(
    "base", ["pa[C=1.0]", "online_svm_r[C=10.0]", "idsvm[C=10.0]", "norma[budget=50]"]
)
def test_query_all_is_the_passive_learner(base: str) -> None:
    X, y = checkerboard(300, seed=1)
    a = make(f"active_all[base={base}]")
    b = (
        make(base)
        if not base.startswith("norma")
        else get_registry().create(
            "algorithm",
            base,
            kernel=get_registry().create("kernel", KERNEL),
            loss=get_registry().create("loss", "hinge"),
        )
    )
    assert np.array_equal(a.learn_predict_many(X, y), b.learn_predict_many(X, y))
    assert a.stats()["labels_queried"] == 300
    assert a.stats()["n_support"] == b.stats()["n_support"]


def test_greedy_queries_the_smallest_margin_of_each_block() -> None:
    """A NumPy-level reference: per block of h, the example of smallest |f| is learned."""
    X, y = checkerboard(403, seed=2)
    h = 5
    algo = make(f"active_greedy[base=pa[C=1.0],h={h}]")
    pred = algo.learn_predict_many(X, y)
    ref = make("pa[C=1.0]")
    ref_pred = np.empty(len(X))
    chosen = []
    for start in range(0, len(X), h):
        idx = range(start, min(start + h, len(X)))
        f = np.array([ref.decision_one(X[i]) for i in idx])
        ref_pred[list(idx)] = np.where(f >= 0, 1.0, -1.0)
        if len(f) == h:
            j = start + int(np.argmin(np.abs(f)))
            chosen.append(j)
            ref.learn_one(X[j], y[j])
    assert np.array_equal(pred, ref_pred)
    assert algo.stats()["labels_queried"] == len(chosen) == 403 // h
    assert np.array_equal(algo.learner.snapshot()["alpha"], ref.snapshot()["alpha"])
    # the labels it did not choose are never read: garbage there changes nothing
    y_bad = np.full(len(y), np.nan)
    y_bad[chosen] = y[chosen]
    again = make(f"active_greedy[base=pa[C=1.0],h={h}]")
    assert np.array_equal(again.learn_predict_many(X, y_bad), pred)
    # h = 1 is passive learning
    one = make("active_greedy[base=pa[C=1.0],h=1]")
    assert np.array_equal(one.learn_predict_many(X, y), make("pa[C=1.0]").learn_predict_many(X, y))


def test_margin_band_computes_one_decision_per_example_on_the_runner_path() -> None:
    """predict_one, wants_label and learn_one of one example share one decision of the base
    learner; after learning, the next example gets a fresh one."""
    s = stream(300)
    algo = make("active_margin[base=pa[C=1.0]]")
    calls = []
    inner = algo.learner.decision_one
    algo.learner.decision_one = lambda x: calls.append(1) or inner(x)
    ref = make("active_margin[base=pa[C=1.0]]")
    for i in range(s.n):
        x = s.X[i]
        before = len(calls)
        p = algo.predict_one(x)
        if algo.wants_label(x):
            algo.learn_one(x, s.y[i])
        assert len(calls) - before == 1
        xr = np.array(s.X[i])  # a fresh array each time: no sharing, same answers
        assert ref.predict_one(xr) == p
        if ref.wants_label(np.array(xr)):
            ref.learn_one(np.array(xr), s.y[i])
    assert algo.stats()["labels_queried"] == ref.stats()["labels_queried"]
    assert np.array_equal(algo.predict_many(s.X_test), ref.predict_many(s.X_test))


def test_runner_counts_queries_and_budgets_stop_them() -> None:
    s = stream()
    res = run("active_margin[base=online_svm_r[C=10.0]]", s)
    direct = make("active_margin[base=online_svm_r[C=10.0]]")
    direct.learn_predict_many(s.X, s.y)
    assert res.run["labels_queried"] == direct.stats()["labels_queried"] < s.n
    # the trace's count grows with the stream, and matches the learner's own count
    tr = res.traces
    assert np.all(np.diff(tr["labels_queried"]) >= 0)
    assert tr["labels_queried"].iloc[-1] == res.run["labels_queried"]
    for spec in (
        "active_margin[base=online_svm_r[C=10.0],max_queries=40]",
        "active_all[base=online_svm_r[C=10.0],max_queries=40]",
    ):
        res = run(spec, s)
        assert res.run["labels_queried"] == 40
        assert res.run["n_support"] <= 40
    res = run("active_all[base=pa]", s)
    assert res.run["labels_queried"] == s.n
    # Greedy runs on the passive path; its trace carries the labels it used
    res = run("active_greedy[base=pa,h=4]", s)
    assert res.traces["labels_queried"].iloc[-1] == s.n // 4


def test_runner_query_budget_stops_the_task_where_the_last_label_is_used() -> None:
    s = stream()
    full = run("active_margin[base=online_svm_r[C=10.0]]", s)
    # the example at which the learner used its 40th label, from its own run
    direct = make("active_margin[base=online_svm_r[C=10.0]]")
    at = next(
        i + 1
        for i in range(s.n)
        if direct.wants_label(s.X[i])
        and (direct.learn_one(s.X[i], s.y[i]) or direct.stats()["labels_queried"] == 40)
    )
    res = run("active_margin[base=online_svm_r[C=10.0]]", s, max_queries=40)
    assert res.run["labels_queried"] == 40 and res.run["stopped_at"] == at < s.n
    assert res.run["query_budget"] == 40
    assert res.traces["seen"].iloc[-1] == at and res.traces["test_n"].iloc[-1] == len(s.y_test)
    assert np.array_equal(res.outcomes, full.outcomes[:at])
    assert res.run["online_error"] == pytest.approx(1 - full.outcomes[:at].mean())
    # a passive learner spends one label per example
    pa = run("pa[C=1.0]", s, max_queries=100)
    assert pa.run["stopped_at"] == 100 == pa.run["labels_queried"] == len(pa.outcomes)
    assert np.array_equal(pa.outcomes, run("pa[C=1.0]", s).outcomes[:100])
    # Greedy reads one label per block of h: 30 labels end with the 30th block
    g = run("active_greedy[base=pa,h=4]", s, max_queries=30)
    assert g.run["labels_queried"] == 30 and g.run["stopped_at"] == 120
    # a budget larger than the stream changes nothing
    big = run("active_margin[base=online_svm_r[C=10.0]]", s, max_queries=10_000)
    assert np.isnan(big.run["stopped_at"]) and np.array_equal(big.outcomes, full.outcomes)
    # a batch reference fits on the examples whose labels the budget buys
    off = run("libsvm[C=1.0]", s, max_queries=50)
    assert off.run["labels_queried"] == 50 == off.run["stopped_at"]
    assert off.traces["seen"].iloc[-1] == 50


def test_bad_bases() -> None:
    assert_refused(
        make,
        {
            "active_margin[base=nope]": "unknown algorithm",
            "active_all[base=libsvm]": "batch learner",
            "active_margin[base=online_asvm_r]": "already an active learner",
            "active_greedy[base=pa,h=0]": "h must be",
            "active_margin[base=pa,width=-1]": "width must be",
            "active_all[base=pa,max_queries=-3]": "max_queries must be",
        },
    )
