"""Every-pair comparison of algorithm configurations on identical streams.

Reads only the results tables (``runs``, ``traces``, ``outcomes``) and returns pandas
DataFrames. Three levels, each with a Holm correction over the pairs it tests:

- **per stream** (one stream id and one algorithm seed): the per-example outcomes of two
  configurations are paired and described (error counts, discordant counts, the error
  difference); examples of one stream are not replicates, so nothing is tested there
  (:mod:`kbench.analysis.pairs`).
- **per data set, across seeds**: an exact Wilcoxon signed-rank test on the final errors
  of the seeds both configurations finished, Holm-adjusted over the pairs of the data set:
  the verdict.
- **across data sets**: mean ranks, the Friedman test (with the Iman–Davenport F),
  Nemenyi's critical difference and the groups it does not separate (Demšar 2006), and
  pairwise tests on the per-data-set mean errors (:mod:`kbench.analysis.ranking`).

A win/tie/loss matrix counts, for every ordered pair, the streams on which the first
configuration made fewer, as many or more errors. The single tests are in
:mod:`kbench.analysis.statistics`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kbench._version import __version__
from kbench.analysis import formats
from kbench.analysis.configs import (
    NothingToCompareError,
    prepare_runs,
    spec_shortener,
    version_notes,
)
from kbench.analysis.leaderboard import RUN_MEANS, failed_counts
from kbench.analysis.pair_statistics import statistic_names
from kbench.analysis.pairs import (
    OUTCOME_COLUMNS,
    described,
    final_errors,
    seed_pairs,
    stream_mismatches,
    stream_pairs,
)
from kbench.analysis.ranking import Ranking, dataset_table, rank_configs, win_tie_loss
from kbench.analysis.statistics import ALPHA
from kbench.analysis.tables import plain, seed_label
from kbench.core.errors import KbenchError, ResultsError
from kbench.core.fileio import atomic_write_text
from kbench.results.degenerate import reason_kinds
from kbench.results.store import Results


@dataclass
class Comparison:
    """Everything ``kbench compare`` computes from a results folder."""

    runs: pd.DataFrame
    """The runs table with ``config``, ``label``, ``flags`` and ``offline`` columns."""
    configs: pd.DataFrame
    """One row per configuration (index: key) in display order: label, specs, run counts,
    mean final error, flags."""
    pairs: pd.DataFrame
    """Per-stream paired tests (see :func:`kbench.analysis.pairs.stream_pairs`)."""
    seeds: pd.DataFrame
    """Per-data-set tests across seeds (see :func:`kbench.analysis.pairs.seed_pairs`)."""
    ranking: Ranking
    """Across data sets."""
    wtl: pd.DataFrame
    """Win/tie/loss counts over streams (see :func:`kbench.analysis.ranking.win_tie_loss`)."""
    metric: str
    alpha: float
    notes: list[str] = field(default_factory=list)
    rope: float | None = None
    """Region of practical equivalence of the Bayesian test across data sets (None: not run)."""

    @property
    def labels(self) -> list[str]:
        """Configuration labels in display order."""
        return list(self.configs["label"])

    def leaderboard(self) -> pd.DataFrame:
        """Per data set and configuration: seeds, mean and sd of the errors, resources, flags."""
        r = self.runs
        ok = r[r["status"] == "ok"]
        agg = ok.groupby(["stream", "label"], sort=False).agg(
            dataset=("dataset", "first"),
            task=("task", "first"),
            **RUN_MEANS,
            flags=(
                "flags",
                reason_kinds,
            ),
            offline=("offline", "any"),
        )
        agg = agg.join(failed_counts(r, ["stream", "label"]), how="outer")
        agg["failed"] = agg["failed"].fillna("")
        agg["flags"] = agg["flags"].fillna("")
        agg["seeds"] = agg["seeds"].fillna(0).astype(int)
        agg = agg.reset_index()
        key = "test_error" if self.metric == "test_error" else "online_error"
        agg["_key"] = agg.groupby("stream")[key].transform(
            lambda s: s if s.notna().any() else np.nan
        )
        agg["_key"] = agg["_key"].fillna(agg["online_error"])
        agg["rank"] = agg.groupby("stream")["_key"].rank(method="min")
        return (
            # ties broken by label, as in every other view (kbench.analysis.leaderboard)
            agg.sort_values(["stream", "_key", "label"], na_position="last", kind="stable")
            .drop(columns="_key")
            .reset_index(drop=True)
        )

    def long_table(self) -> pd.DataFrame:
        """Every pairwise test of every level in one table (the ``--csv`` output).

        ``level`` is ``stream`` (a description of one stream: discordant counts and the
        error difference, no test), ``seeds`` (the test over the seeds of one data set,
        the verdict) or ``datasets`` (the test over the per-data-set mean errors). The
        verdict ``n/a`` is written ``not available``.
        """
        s = described(self.pairs).assign(level="stream")
        d = self.seeds.assign(
            level="seeds",
            err_a=self.seeds["mean_a"],
            err_b=self.seeds["mean_b"],
            diff=self.seeds["mean_diff"],
            # the seed-level interval is over seeds; the stream rows have none
            ci_low=self.seeds["ci_low"],
            ci_high=self.seeds["ci_high"],
        )
        o = self.ranking.pairs.assign(
            level="datasets",
            stream="",
            err_a=self.ranking.pairs["mean_a"],
            err_b=self.ranking.pairs["mean_b"],
            diff=self.ranking.pairs["mean_diff"],
        )
        cols = [
            "level",
            "stream",
            "stream_id",
            "stream_seed",
            "seed",
            "task",
            "a",
            "b",
            "n",
            "n_pairs",
            *OUTCOME_COLUMNS,
            "a_better",
            "equal",
            "b_better",
            "diff",
            "ci_low",
            "ci_high",
            "test",
            "statistic",
            "wilcoxon_p",
            "sign_p",
            "p",
            "min_p",
            "seeds_needed",
            *statistic_names(),
            "family",
            "p_holm",
            "result",
            "reason",
            "p_a_better",
            "p_rope",
            "p_b_better",
            "config_a",
            "config_b",
        ]
        parts = [x.reindex(columns=cols) for x in (s, d, o) if len(x)]
        out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)
        # In words: CSV readers (pandas, R) read the code "n/a" as a missing value.
        out["result"] = out["result"].replace({"n/a": "not available"})
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every table (the ``--json`` output)."""

        def records(df: pd.DataFrame) -> list[dict[str, Any]]:
            return [{k: plain(v) for k, v in row.items()} for row in df.to_dict("records")]

        fr = {k: plain(v) for k, v in self.ranking.friedman.items()}
        return {
            "kbench_version": __version__,
            "statistics": STATISTICS,
            "metric": self.metric,
            "alpha": self.alpha,
            "rope": self.rope,
            "notes": list(self.notes),
            "configurations": records(self.configs.reset_index()),
            "leaderboard": records(self.leaderboard()),
            "stream_pairs": records(described(self.pairs)),
            "seed_pairs": records(self.seeds),
            "datasets": {
                "values": {
                    str(k): {str(c): plain(v) for c, v in row.items()}
                    for k, row in self.ranking.values.to_dict("index").items()
                },
                "mean_ranks": {str(k): plain(v) for k, v in self.ranking.mean_ranks.items()},
                "friedman": fr,
                "cd_groups": self.ranking.groups,
                "pairs": records(self.ranking.pairs),
                "excluded": self.ranking.excluded,
            },
            "win_tie_loss": records(self.wtl),
            "failed": records(
                self.failed[["task_id", "label", "stream", "seed", "status", "reason"]]
            ),
        }

    @property
    def failed(self) -> pd.DataFrame:
        """The runs that did not finish (status other than ``ok``)."""
        return self.runs[self.runs["status"] != "ok"]

    def degenerate_cells(self) -> tuple[set[tuple[str, str]], set[tuple[str, str, str]]]:
        """Where a finished run is a degenerate learner (:mod:`kbench.results.degenerate`):
        the (stream, label) pairs, and the (stream, seed, label) triples with the seed named
        as the experiment groups name their seed blocks. A configuration degenerate on one
        data set is not marked on the others."""
        bad = self.runs[(self.runs["status"] == "ok") & (self.runs["flags"] != "")]
        return (
            {(str(r.stream), str(r.label)) for r in bad.itertuples()},
            {(str(r.stream), seed_label(r.seed), str(r.label)) for r in bad.itertuples()},
        )

    def wtl_blocks(self, groups: Sequence[Any]) -> list[tuple[str, list[str]]]:
        """The labels of each win/tie/loss matrix: one per experiment group (configurations
        of different groups never ran on the same stream, so a matrix across groups would be
        mostly empty), or one of every label when there is at most one group. Blocks of
        fewer than two labels are left out."""
        labels = self.labels
        blocks = [
            (g.name, [x for x in labels if x in set(g.values.columns) | set(g.mean_ranks.index)])
            for g in groups
        ]
        if len(blocks) <= 1:
            blocks = [("", list(labels))]
        return [(name, members) for name, members in blocks if len(members) >= 2]

    def notes_beside_groups(self) -> list[str]:
        """The notes, less those about the one ranking across every data set, which the
        experiment groups (:func:`kbench.analysis.groups.experiment_groups`) replace."""
        return [n for n in self.notes if not n.startswith(RANKING_NOTES)]

    def check_pairable(self, source: Any) -> None:
        """Refuse a comparison with nothing to pair (NothingToCompareError naming
        ``source``, the results folder): one configuration, or no two configurations that
        finished on the same stream."""
        if len(self.configs) < 2:
            raise NothingToCompareError(
                f"{source} holds one algorithm configuration ({self.labels[0]}): nothing to "
                "pair; run at least two"
            )
        if self.pairs.empty:
            raise NothingToCompareError(
                f"no two configurations in {source} finished on the same stream: nothing to pair"
            )

    def to_markdown(self) -> str:
        """Per data set the configurations (mean ± sd over seeds, best in bold, marks) and
        every pair's verdict, then the rankings (``kbench compare --format markdown``)."""
        return formats.to_markdown_text(self)

    def to_latex(self) -> str:
        """One booktabs table, configurations × data sets (``--format latex``)."""
        return formats.to_latex(self)

    def to_csv(self) -> str:
        """Every pairwise test of every level with each side's degenerate reasons
        (``--format csv``)."""
        return formats.to_csv_text(self)

    def to_json(self) -> str:
        """Every table, the rankings per experiment group and the legend of the degenerate
        mark (``--format json``)."""
        return formats.to_json_text(self)

    def format(self, fmt: str) -> str:
        """The comparison as ``markdown``, ``latex``, ``csv`` or ``json`` text."""
        return formats.format_comparison(self, fmt)

    def write_csv(self, path: str | Path) -> None:
        """Write ``format("csv")`` to a file (``kbench compare --csv``): the file holds what
        ``--format csv`` prints, byte for byte."""
        _write(path, lambda: self.format("csv"))

    def write_json(self, path: str | Path) -> None:
        """Write ``format("json")`` to a file (``kbench compare --json``): the file holds
        what ``--format json`` prints, byte for byte."""
        _write(path, lambda: self.format("json"))


RANKING_NOTES = ("left out of the ranking across data sets", "ranks across data sets need")
"""Starts of the notes about the one ranking across every data set."""


def _write(path: str | Path, content: Callable[[], str]) -> None:
    try:
        atomic_write_text(Path(path), content())
    except OSError as exc:
        raise ResultsError(f"cannot write {path}: {exc.strerror or exc}") from None


STATISTICS = (
    "verdicts over seeds: exact Wilcoxon signed-rank on final errors, Holm over the pairs of "
    "a data set; per-stream rows describe, they do not test (docs/statistics.md)"
)
"""How this kbench decides a verdict (written into the JSON output)."""


def compare(
    results: Results,
    metric: str = "online_error",
    alpha: float = ALPHA,
    short: Callable[[str, str], str] | None = None,
    rope: float | None = None,
    per_stream: bool = True,
) -> Comparison:
    """Compare every pair of configurations at every level.

    Parameters
    ----------
    results
        The tables of a results folder.
    metric
        Final error compared across seeds and data sets: ``online_error`` (the
        prequential error, the default), ``test_error`` or ``final_epoch_error``.
        Per-stream tests always use the per-example online outcomes.
    alpha
        Significance level; intervals are at 1 − alpha.
    short
        ``short(kind, spec)`` shortening specs for labels (e.g. ``Registry.short``).
    rope
        Half-width of the region of practical equivalence for the Bayesian signed-rank test
        across data sets (in error units: 0.01 is one point); None leaves it out.
    per_stream
        Describe every pair on every stream from the per-example outcomes (``pairs``,
        ``wtl`` and the ``streams_won`` columns of ``seeds``). False leaves them empty:
        the verdicts, which rest on the seeds, are the same, at a fraction of the cost
        (the published site shows only those).

    Returns
    -------
    Comparison

    Raises
    ------
    NothingToCompareError
        No run, or no finished run.
    ResultsError
        Results written by a newer kbench, or a table kbench did not write.
    """
    if not 0 < alpha < 1:
        raise KbenchError(f"alpha must be in (0, 1), got {alpha:g}")
    runs, configs = prepare_runs(results, short)
    finals = final_errors(runs, metric)
    table = dataset_table(finals)
    labels = configs["label"]
    if rope is not None and not (rope >= 0 and math.isfinite(rope)):
        raise KbenchError(f"--rope must be a finite number >= 0, got {rope:g}")
    ranking = rank_configs(table, labels, alpha, rope=rope)
    # Display order: mean rank across data sets, then mean error for the unranked.
    mean_err = finals.groupby("config")["value"].mean()
    ranked = list(ranking.mean_ranks.index.map({v: k for k, v in labels.items()}))
    rest = sorted(
        (c for c in configs.index if c not in ranked),
        key=lambda c: (mean_err.get(c, math.inf), labels[c]),
    )
    order = ranked + rest
    configs = configs.loc[order].copy()
    configs["mean_rank"] = configs["label"].map(ranking.mean_ranks)
    configs["mean_error"] = configs.index.map(mean_err)
    grp = runs.groupby("config")
    configs["runs"] = grp.size().reindex(configs.index).fillna(0).astype(int)
    configs["ok"] = (
        grp["status"]
        .apply(lambda s: int((s == "ok").sum()))
        .reindex(configs.index)
        .fillna(0)
        .astype(int)
    )
    configs["failed"] = configs["runs"] - configs["ok"]
    configs["flags"] = grp["flags"].apply(reason_kinds).reindex(configs.index).fillna("")
    configs["offline"] = grp["offline"].any().reindex(configs.index).eq(True)

    if per_stream:
        pairs = stream_pairs(runs, results.outcomes, order, alpha)
    else:
        pairs = stream_pairs(runs.iloc[:0], results.outcomes.iloc[:0], order, alpha)
    seeds = seed_pairs(finals, order, alpha, pairs if per_stream else None)
    wtl = win_tie_loss(pairs, list(configs["label"]))

    notes = stream_mismatches(runs) + version_notes(runs)
    n_fail = int((runs["status"] != "ok").sum())
    if n_fail:
        notes.append(
            f"{n_fail} of {len(runs)} tasks did not finish; they are left out of every test"
        )
    if len(configs) < 2:
        notes.append(
            f"only one algorithm configuration ({configs['label'].iloc[0]}): nothing to pair"
        )
    elif per_stream and pairs.empty:
        notes.append("no two configurations finished on the same stream: nothing to pair")
    undecided = seeds[seeds["result"].isin(["cannot tell", "n/a"])] if len(seeds) else seeds
    for reason, g in undecided.groupby("reason", sort=False):
        where = ", ".join(sorted(g["stream"].astype(str).unique()))
        notes.append(f"no verdict over seeds on {where}: {reason}")
    if ranking.excluded:
        notes.append("left out of the ranking across data sets: " + "; ".join(ranking.excluded))
    if len(ranking.values) < 2 and len(configs) >= 2:
        notes.append(
            "ranks across data sets need at least two data sets; the Friedman test is not computed"
        )
    used = finals.drop_duplicates("stream").set_index("stream")["metric_used"]
    fallback = sorted(used[used != metric].index)
    if fallback:
        notes.append(f"{', '.join(fallback)}: no {metric}; online_error used there")
    flagged = runs[runs["flags"] != ""]
    for label, g in flagged.groupby("label", sort=False):
        where = ", ".join(sorted(g["stream"].astype(str).unique()))
        notes.append(
            f"degenerate learner: {label}: {reason_kinds(g['flags'])} ({len(g)} runs: {where})"
        )
    return Comparison(
        runs=runs,
        configs=configs,
        pairs=pairs,
        seeds=seeds,
        ranking=ranking,
        wtl=wtl,
        metric=metric,
        alpha=alpha,
        notes=notes,
        rope=rope,
    )


def load_comparison(
    folder: str | Path,
    metric: str = "online_error",
    alpha: float = ALPHA,
    rope: float | None = None,
    tune_budget: int | None = None,
    per_stream: bool = True,
) -> tuple[Results, Comparison]:
    """The tables of a results folder and their comparison, labelled as ``kbench compare``
    labels them (:func:`kbench.analysis.configs.spec_shortener`).

    Parameters
    ----------
    folder
        A results folder written by ``kbench run``.
    metric, alpha, rope, per_stream
        As for :func:`compare`.
    tune_budget
        Compare only the runs tuned with this many configurations (and the untuned ones);
        None keeps every run.

    Raises
    ------
    ResultsError
        The folder does not exist or is not a results folder.
    """
    from kbench.results.store import load_results
    from kbench.results.tuning import at_tuning_budget

    if not Path(folder).exists():
        raise ResultsError(
            f"results folder {folder} does not exist; run kbench run --out {folder} first"
        )
    tables = load_results(folder)
    if tune_budget is not None:
        tables = at_tuning_budget(tables, tune_budget)
    return tables, compare(
        tables, metric=metric, alpha=alpha, short=spec_shortener(), rope=rope, per_stream=per_stream
    )
