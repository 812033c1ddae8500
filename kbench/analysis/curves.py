"""Learning curves summarised over seeds: what the report draws from a results folder's traces.

A trace row is one checkpoint of one task (``task_id``, ``seen``, ``epoch`` and the
quantities measured there). The curves of a configuration are summarised over its runs
(one per seed) at each checkpoint: the mean and the range, never a fit.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd


def examples_seen(traces: pd.DataFrame, n_of_task: pd.Series | None = None) -> pd.Series:
    """Examples seen since the start of each run, counted across epochs.

    Parameters
    ----------
    traces
        Trace rows with ``seen`` and, for runs of several epochs, ``epoch`` (1-based) and
        ``task_id``.
    n_of_task
        Examples per epoch of each task (indexed by ``task_id``). Without it, or without an
        ``epoch`` column, the count is ``seen`` itself.

    Returns
    -------
    pandas.Series
        ``seen + (epoch - 1) · n`` as floats, aligned with ``traces``.
    """
    x = traces["seen"].astype(float)
    if "epoch" not in traces.columns or n_of_task is None:
        return x
    n = traces["task_id"].map(n_of_task).astype(float)
    return x + (traces["epoch"].fillna(1).astype(float) - 1) * n


def seed_band(traces: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """Mean, minimum and maximum of ``y`` over the runs at each value of ``x``.

    Returns
    -------
    pandas.DataFrame
        Columns ``x``, ``mean``, ``lo``, ``hi`` and ``runs`` (how many runs have a value
        there), one row per value of ``x`` in increasing order; empty when no row has both.
    """
    d = traces[[x, y]].dropna()
    if d.empty:
        return pd.DataFrame(columns=["x", "mean", "lo", "hi", "runs"])
    g = d.groupby(x)[y]
    out = pd.DataFrame({"mean": g.mean(), "lo": g.min(), "hi": g.max(), "runs": g.size()})
    out.index.name = "x"
    return out.reset_index()


def mean_by_checkpoint(traces: pd.DataFrame, x: str, columns: Sequence[str]) -> pd.DataFrame:
    """Means of ``columns`` over the runs at each value of ``x`` (rows missing any dropped).

    Runs have different clocks: a curve against time averages the time and the error at
    each checkpoint rather than pairing one run's time with another's error.
    """
    return traces.groupby(x)[list(columns)].mean().dropna()
