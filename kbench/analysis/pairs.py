"""Pairs of configurations on one data set: per stream (the per-example outcomes of one
stream id and algorithm seed, described), and over seeds (the final errors, tested).

Per stream, prequential outcomes depend on everything the learner saw before, so the
examples are not replicates: the rows describe that stream order and test nothing. The
verdict on a pair comes from the seeds: an exact signed-rank test on the final errors,
Holm-adjusted over the pairs of the data set (docs/statistics.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from kbench.analysis.configs import METRICS
from kbench.analysis.pair_statistics import statistic_names, statistic_values
from kbench.analysis.statistics import (
    ALPHA,
    PAIRED_TEST_COLUMNS,
    holm,
    paired_final_test,
    seed_verdict,
)
from kbench.core.errors import KbenchError

#: The columns that say which stream a row is about (data set, stream, its id and seed, the
#: algorithm's seed, the task), first in the tables of single streams.
STREAM_COLUMNS = ("dataset", "stream", "stream_id", "stream_seed", "seed", "task")
#: What :func:`compare_outcomes` counts on one stream: each run's error rate and errors, and
#: the examples on which only one of the two was wrong (or worse).
OUTCOME_COLUMNS = ("err_a", "err_b", "errors_a", "errors_b", "a_worse", "b_worse")


class StreamMismatchError(KbenchError):
    """Two results that were not computed on the same stream were asked to be paired."""


def compare_outcomes(
    a: np.ndarray, b: np.ndarray, task: str, alpha: float = ALPHA
) -> dict[str, Any]:
    """Paired description of two per-example outcome vectors of one stream.

    A description conditional on that stream order, not a test: prequential outcomes
    depend on everything the learner saw before, so the examples of a stream are not
    independent replicates and no p-value or interval is computed from them (see
    docs/statistics.md). The verdict on a pair comes from the seeds (:func:`seed_pairs`).

    Parameters
    ----------
    a, b
        Classification: True where the prediction was correct. Regression: squared errors.
    task
        ``regression`` or a classification task.
    alpha
        Unused; kept so callers that pass a level keep working.

    Returns
    -------
    dict
        ``n``, ``err_a``, ``err_b`` (error rates, or mean squared errors), ``errors_a``,
        ``errors_b`` (counts; NaN for regression), ``a_worse``, ``b_worse`` (discordant
        examples: only A wrong / only B wrong; for regression, examples where A's, resp.
        B's, squared error is the larger), ``diff`` (err_a − err_b), ``sd_diff``;
        ``ci_low``, ``ci_high``, ``statistic`` and ``p`` are NaN and ``test`` is empty
        (columns kept for readers of older tables).
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise StreamMismatchError(
            f"outcome vectors of different lengths ({len(a)} and {len(b)}) cannot be paired"
        )
    n = len(a)
    if task == "regression":
        a, b = a.astype(float), b.astype(float)
        d = a - b
        mean = float(d.mean()) if n else math.nan
        return {
            "n": n,
            "err_a": float(a.mean()) if n else math.nan,
            "err_b": float(b.mean()) if n else math.nan,
            "errors_a": math.nan,
            "errors_b": math.nan,
            "a_worse": int((d > 0).sum()),
            "b_worse": int((d < 0).sum()),
            "diff": mean,
            "sd_diff": float(d.std(ddof=1)) if n > 1 else math.nan,
            **_NO_TEST,
        }
    wa, wb = ~a.astype(bool), ~b.astype(bool)
    a_worse, b_worse = int((wa & ~wb).sum()), int((wb & ~wa).sum())
    diff = (a_worse - b_worse) / n if n else math.nan
    return {
        "n": n,
        "err_a": float(wa.mean()) if n else math.nan,
        "err_b": float(wb.mean()) if n else math.nan,
        "errors_a": int(wa.sum()),
        "errors_b": int(wb.sum()),
        "a_worse": a_worse,
        "b_worse": b_worse,
        "diff": diff,
        "sd_diff": _sd_discordant(n, a_worse, b_worse),
        **_NO_TEST,
    }


_NO_TEST: dict[str, Any] = {
    "ci_low": math.nan,
    "ci_high": math.nan,
    "test": "",
    "statistic": math.nan,
    "p": math.nan,
}
"""The test columns of a per-stream row: empty, since examples are not replicates."""


def _sd_discordant(n: int, a_worse: int, b_worse: int) -> float:
    """Sample sd of per-example error differences that are +1 (a_worse), −1 (b_worse) or 0."""
    if n < 2:
        return math.nan
    mean = (a_worse - b_worse) / n
    return math.sqrt(max(0.0, (a_worse + b_worse - n * mean * mean) / (n - 1)))


def compare_runs(
    run_a: pd.Series | dict[str, Any],
    run_b: pd.Series | dict[str, Any],
    outcome_a: np.ndarray,
    outcome_b: np.ndarray,
    alpha: float = ALPHA,
) -> dict[str, Any]:
    """Compare two finished runs example by example; they must share a stream id.

    Raises
    ------
    StreamMismatchError
        The runs were computed on different streams.
    """
    if run_a["stream_id"] != run_b["stream_id"]:
        name_a = run_a.get("label", run_a["algorithm_spec"])
        name_b = run_b.get("label", run_b["algorithm_spec"])
        raise StreamMismatchError(
            f"cannot pair results of different streams: {name_a} ran on stream "
            f"{run_a['stream_id']}, {name_b} on {run_b['stream_id']}"
        )
    return compare_outcomes(outcome_a, outcome_b, str(run_a.get("task", "binary")), alpha)


def stream_mismatches(runs: pd.DataFrame) -> list[str]:
    """Notes on streams that should be identical (same data set and seed) but are not."""
    notes = []
    ok = runs[runs["status"] == "ok"]
    for (stream, seed), g in ok.groupby(["stream", "stream_seed"], sort=True):
        ids = g["stream_id"].value_counts()
        if len(ids) > 1:
            names = g["label"] if "label" in g else g["algorithm_spec"]
            odd = names[g["stream_id"] != ids.index[0]].unique()
            notes.append(
                f"{stream} seed {seed} has {len(ids)} different stream ids (the data changed "
                f"between runs); {', '.join(map(str, odd))} not paired with the others there: "
                "rerun them with --force"
            )
    return notes


def stream_pairs(
    runs: pd.DataFrame,
    outcomes: pd.DataFrame,
    order: Sequence[str] | None = None,
    alpha: float = ALPHA,
) -> pd.DataFrame:
    """Every pair of configurations on every stream (stream id and algorithm seed).

    Parameters
    ----------
    runs
        Runs with ``config`` and ``label`` columns (see :func:`kbench.analysis.configs.prepare_runs`).
    outcomes
        The outcomes table: ``task_id`` and ``outcome``.
    order
        Configuration keys in display order; the first of each pair comes first in it.
    alpha
        Unused (no test is made per stream); kept for callers that pass it.

    Returns
    -------
    pandas.DataFrame
        One row per (stream, pair): identifiers, :func:`compare_outcomes` columns,
        ``p_holm`` (NaN) and ``result``: ``win``, ``tie`` or ``loss`` as ``a`` made fewer,
        as many or more errors than ``b`` on that stream — a description, not a test.
    """
    cols = [
        *STREAM_COLUMNS,
        "a",
        "b",
        "config_a",
        "config_b",
        "task_a",
        "task_b",
        "n",
        *OUTCOME_COLUMNS,
        "diff",
        "sd_diff",
        "ci_low",
        "ci_high",
        "test",
        "statistic",
        "p",
        "p_holm",
        "result",
    ]
    by_task = (
        dict(zip(outcomes["task_id"], outcomes["outcome"], strict=True)) if len(outcomes) else {}
    )
    ok = runs[(runs["status"] == "ok") & ~runs["offline"] & runs["task_id"].isin(by_task.keys())]
    rank = {c: i for i, c in enumerate(order)} if order is not None else {}
    rows: list[dict[str, Any]] = []
    for (stream_id, seed), g in ok.groupby(["stream_id", "seed"], sort=False):
        g = g.drop_duplicates("config", keep="last")
        g = g.iloc[
            sorted(
                range(len(g)),
                key=lambda i: (rank.get(g["config"].iloc[i], len(rank)), g["label"].iloc[i]),
            )
        ]
        recs = g.to_dict("records")
        block = []
        for i in range(len(recs)):
            for j in range(i + 1, len(recs)):
                ra, rb = recs[i], recs[j]
                oa, ob = by_task[ra["task_id"]], by_task[rb["task_id"]]
                # a run stopped by a label budget has outcomes for a prefix of the stream:
                # the pair is compared on the examples both saw
                k = min(len(oa), len(ob))
                res = compare_runs(ra, rb, oa[:k], ob[:k], alpha)
                block.append(
                    {
                        "dataset": ra["dataset"],
                        "stream": ra["stream"],
                        "stream_id": stream_id,
                        "stream_seed": ra["stream_seed"],
                        "seed": seed,
                        "task": ra["task"],
                        "a": ra["label"],
                        "b": rb["label"],
                        "config_a": ra["config"],
                        "config_b": rb["config"],
                        "task_a": ra["task_id"],
                        "task_b": rb["task_id"],
                    }
                    | res
                )
        for r in block:
            # a description of this stream (fewer, as many, more errors), not a test
            r["p_holm"] = math.nan
            r["result"] = _lower(r["diff"])
        rows.extend(block)
    df = pd.DataFrame(rows, columns=cols)
    return (
        df.sort_values(["stream", "stream_seed", "seed"], kind="stable").reset_index(drop=True)
        if len(df)
        else df
    )


def pair_row(labels: pd.Series, ca: str, cb: str, values: pd.DataFrame) -> dict[str, Any]:
    """The columns that name a pair of configurations and give their means over the same
    replicates: ``a``, ``b`` (labels), ``config_a``, ``config_b`` (keys), ``mean_a``,
    ``mean_b`` (of the columns ``ca`` and ``cb`` of ``values``)."""
    return {
        "a": labels[ca],
        "b": labels[cb],
        "config_a": ca,
        "config_b": cb,
        "mean_a": float(values[ca].mean()),
        "mean_b": float(values[cb].mean()),
    }


def _lower(diff: float) -> str:
    """``win`` where a made fewer errors on a stream, ``loss`` where more, else ``tie``."""
    if pd.notna(diff) and diff < 0:
        return "win"
    if pd.notna(diff) and diff > 0:
        return "loss"
    return "tie"


def final_errors(runs: pd.DataFrame, metric: str = "online_error") -> pd.DataFrame:
    """Final error per finished run: data set, stream unit, configuration, value.

    Where a data set has no value of ``metric`` (no held-out split, say) the online
    error is used for it and ``metric_used`` says so.
    """
    if metric not in METRICS:
        raise KbenchError(f"unknown metric {metric!r}: expected one of {', '.join(METRICS)}")
    ok = runs[(runs["status"] == "ok") & ~runs["offline"]].copy()
    ok["metric_used"] = metric
    if metric != "online_error":
        has = ok.groupby("stream")[metric].transform(lambda s: s.notna().any())
        ok.loc[~has, "metric_used"] = "online_error"
    ok["value"] = np.where(ok["metric_used"] == metric, ok[metric], ok["online_error"]).astype(
        float
    )
    return ok[[*STREAM_COLUMNS, "config", "label", "value", "metric_used"]]


def _stream_counts(pairs: pd.DataFrame) -> dict[tuple[Any, Any, Any], tuple[int, int, int]]:
    """Per (stream, config_a, config_b): the streams on which a made fewer, as many and
    more errors than b."""
    if pairs.empty:
        return {}
    won = pairs["result"].eq("win")
    tied = pairs["result"].eq("tie")
    lost = pairs["result"].eq("loss")
    table = (
        pd.DataFrame({"won": won, "tied": tied, "lost": lost})
        .astype(int)
        .groupby([pairs["stream"], pairs["config_a"], pairs["config_b"]], sort=False)
        .sum()
    )
    return {r.Index: (int(r.won), int(r.tied), int(r.lost)) for r in table.itertuples()}


def seed_pairs(
    finals: pd.DataFrame,
    order: Sequence[str],
    alpha: float = ALPHA,
    pairs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per data set, every pair of configurations tested over the seeds both finished.

    The verdict of a pair on a data set: the exact signed-rank test on the final errors of
    the seeds (:func:`~kbench.analysis.statistics.paired_final_test`), Holm-adjusted over the pairs of the data set, and
    :func:`~kbench.analysis.statistics.seed_verdict`.

    Parameters
    ----------
    finals
        :func:`final_errors` output.
    order
        Configuration keys in display order.
    alpha
        Significance level.
    pairs
        :func:`stream_pairs` output; when given, the streams on which a made fewer, as
        many or more errors are counted (a description).

    Returns
    -------
    pandas.DataFrame
        One row per (data set, pair): ``n_pairs`` (seeds), ``mean_a``, ``mean_b``,
        :func:`~kbench.analysis.statistics.paired_final_test` columns, a column per
        statistic of :data:`~kbench.analysis.pair_statistics.PAIR_STATISTICS`, ``family`` (pairs in the Holm family),
        ``p_holm``, ``result`` (see :data:`~kbench.analysis.statistics.SEED_VERDICTS`) and ``reason``; with ``pairs``,
        also ``streams_won``/``streams_tied``/``streams_lost`` (of a).
    """
    cols = [
        "stream",
        "a",
        "b",
        "config_a",
        "config_b",
        "n_pairs",
        "mean_a",
        "mean_b",
        *PAIRED_TEST_COLUMNS,
        *statistic_names(),
        "family",
        "p_holm",
        "result",
        "reason",
    ]
    if pairs is not None:
        cols += ["streams_won", "streams_tied", "streams_lost"]
    counts = _stream_counts(pairs) if pairs is not None else None
    rows = []
    for stream, g in finals.groupby("stream", sort=True):
        wide = g.pivot_table(
            index=["stream_id", "seed"], columns="config", values="value", aggfunc="mean"
        )
        present = [c for c in order if c in wide.columns]
        labels = g.drop_duplicates("config").set_index("config")["label"]
        # NumPy columns, not DataFrame selections: a study of 50 configurations has 1 225
        # pairs per data set, and pandas indexing per pair cost more than the tests.
        values = wide[present].to_numpy(dtype=float)
        finite = ~np.isnan(values)
        todo = [
            (i, j)
            for i in range(len(present))
            for j in range(i + 1, len(present))
            if (finite[:, i] & finite[:, j]).any()
        ]
        block = []
        for i, j in todo:
            both = finite[:, i] & finite[:, j]
            xa, xb = values[both, i], values[both, j]
            ca, cb = present[i], present[j]
            d = xa - xb
            res = paired_final_test(d, alpha, len(todo)) | statistic_values(d)
            row = {
                "stream": stream,
                "a": labels[ca],
                "b": labels[cb],
                "config_a": ca,
                "config_b": cb,
                "mean_a": float(xa.mean()),
                "mean_b": float(xb.mean()),
                "family": len(todo),
            } | res
            if counts is not None:
                won, tied, lost = counts.get((stream, ca, cb), (0, 0, 0))
                row |= {"streams_won": won, "streams_tied": tied, "streams_lost": lost}
            block.append(row)
        adj = holm([r["p"] for r in block])
        for r, pa in zip(block, adj, strict=True):
            r["p_holm"] = pa
            r["result"], r["reason"] = seed_verdict(
                r["mean_diff"], pa, r["n_pairs"], r["family"], alpha
            )
        rows.extend(block)
    return pd.DataFrame(rows, columns=cols)


STREAM_RESULTS = {"win": "fewer errors: A", "loss": "fewer errors: B", "tie": "as many errors"}
"""How the written tables (CSV, JSON) name a per-stream row's result: a description of one
stream order, so never the words a verdict uses."""


def described(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per-stream rows as the written tables give them: ``result`` says which side made fewer
    errors on that stream, and ``reason`` that the row describes one stream order and tests
    nothing (the verdict is the test over seeds; docs/statistics.md)."""
    if pairs.empty:
        return pairs.assign(reason=pd.Series(dtype=object))
    return pairs.assign(
        result=pairs["result"].map(STREAM_RESULTS).fillna(pairs["result"]),
        reason="one stream order described; no test",
    )
