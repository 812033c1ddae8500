"""kbench.analysis.curves: the learning curves the report draws, summarised over seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.testing import assert_allclose

from kbench.analysis.curves import examples_seen, mean_by_checkpoint, seed_band


def test_examples_seen_counts_across_epochs_per_task() -> None:
    traces = pd.DataFrame(
        {
            "task_id": ["a", "a", "a", "b", "b"],
            "seen": [10, 50, 10, 20, 40],
            "epoch": [1, 1, 2, 1, np.nan],  # a missing epoch is the first
        }
    )
    n = pd.Series({"a": 50, "b": 40})
    assert examples_seen(traces, n).tolist() == [10.0, 50.0, 60.0, 20.0, 40.0]
    # Without the examples per epoch (or without epochs) the count is `seen` itself.
    assert examples_seen(traces).tolist() == [10.0, 50.0, 10.0, 20.0, 40.0]
    assert examples_seen(traces.drop(columns="epoch"), n).tolist() == [10.0, 50.0, 10.0, 20.0, 40.0]


def test_seed_band_is_mean_and_range_over_runs_at_each_checkpoint() -> None:
    traces = pd.DataFrame(
        {
            "x": [10, 10, 10, 20, 20, 30],
            "online_error": [0.1, 0.3, 0.2, 0.5, np.nan, 0.4],
        }
    )
    band = seed_band(traces, "x", "online_error")
    assert band["x"].tolist() == [10, 20, 30]
    # Means of a few decimals: equal up to rounding of the float sum.
    assert_allclose(band["mean"], [0.2, 0.5, 0.4], rtol=1e-12)
    assert band["lo"].tolist() == [0.1, 0.5, 0.4]
    assert band["hi"].tolist() == [0.3, 0.5, 0.4]
    assert band["runs"].tolist() == [3, 1, 1]  # the missing value is not a run
    empty = seed_band(traces.assign(online_error=np.nan), "x", "online_error")
    assert empty.empty and list(empty.columns) == ["x", "mean", "lo", "hi", "runs"]


def test_mean_by_checkpoint_pairs_time_and_error_of_the_same_checkpoint() -> None:
    traces = pd.DataFrame(
        {
            "x": [10, 10, 20, 20, 30],
            "time_s": [1.0, 3.0, 2.0, 4.0, np.nan],
            "online_error": [0.2, 0.4, 0.1, 0.3, 0.5],
        }
    )
    got = mean_by_checkpoint(traces, "x", ["time_s", "online_error"])
    assert got.index.tolist() == [10, 20]  # no time at x = 30: dropped
    assert_allclose(got["time_s"], [2.0, 3.0], rtol=1e-12)
    assert_allclose(got["online_error"], [0.3, 0.2], rtol=1e-12)
