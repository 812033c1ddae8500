"""A statistic added in one module (kbench/analysis/pair_statistics.py) shows in every view
of the pairs over seeds: the tables, the CSV and JSON outputs, the terminal, Markdown and
the HTML report (docs/architecture.md)."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from rich.console import Console
from test_golden_views import synthetic_study

from kbench.analysis import pair_statistics
from kbench.analysis.comparison import compare
from kbench.analysis.pair_statistics import PairStatistic
from kbench.cli.render import print_comparison
from kbench.report.html import render_report
from kbench.results.store import Results

TOY = PairStatistic(
    name="median_diff",
    header="median A−B",
    compute=lambda d: float(np.median(d)),
    legend="the median over seeds of the difference of final errors.",
    text=lambda v, regression: f"{100 * v:+.3f} pp",
)


def _small() -> Results:
    """Three configurations on two data sets, three seeds (from the golden views' study)."""
    r = synthetic_study()
    streams = sorted(r.runs["stream"].unique())[:2]
    specs = list(dict.fromkeys(r.runs["algorithm_spec"]))[:3]
    runs = r.runs[r.runs["stream"].isin(streams) & r.runs["algorithm_spec"].isin(specs)]
    outcomes = r.outcomes[r.outcomes["task_id"].isin(runs["task_id"])]
    return Results(runs=runs.reset_index(drop=True), traces=pd.DataFrame(), outcomes=outcomes)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> PairStatistic:
    monkeypatch.setattr(pair_statistics, "PAIR_STATISTICS", [TOY])
    return TOY


def test_a_toy_statistic_shows_in_every_view(toy: PairStatistic) -> None:
    results = _small()
    cmp = compare(results)
    seeds = cmp.seeds
    assert len(seeds) == 2 * 3  # three pairs on each of two data sets

    # The number: the median of the seeds' paired differences, computed here from the runs.
    r = seeds.iloc[0]
    runs = results.runs
    finals = runs[runs["stream"] == r["stream"]].pivot_table(
        index="seed", columns="algorithm_spec", values="online_error"
    )
    label = cmp.configs["label"]
    spec_of = dict(zip(label, cmp.configs["algorithm_spec"], strict=True))
    d = finals[spec_of[r["a"]]] - finals[spec_of[r["b"]]]
    assert r["median_diff"] == pytest.approx(float(np.median(d)), abs=1e-12)
    cell = f"{100 * r['median_diff']:+.3f} pp"

    # CSV and JSON: the column and the key.
    csv = pd.read_csv(io.StringIO(cmp.format("csv")))
    at_seeds = csv[csv["level"] == "seeds"]
    np.testing.assert_allclose(at_seeds["median_diff"], seeds["median_diff"], atol=1e-12)
    records = json.loads(cmp.format("json"))["seed_pairs"]
    assert [x["median_diff"] for x in records] == pytest.approx(list(seeds["median_diff"]))

    # Markdown: the head, the cell and the legend.
    md = cmp.format("markdown")
    assert "median A−B" in md
    assert cell in md and "the median over seeds of the difference" in md

    # The terminal.
    console = Console(file=io.StringIO(), record=True, width=200, color_system=None)
    print_comparison(cmp, console)
    text = console.export_text()
    assert "median A−B" in text and cell in text
    assert "the median over seeds of the difference" in " ".join(text.split())

    # The HTML report.
    html = render_report(cmp, results)
    assert ">median A−B<" in html and f">{cell}<" in html
    assert "the median over seeds of the difference" in html


def test_no_statistic_no_column() -> None:
    """kbench's own views add nothing when the list is empty (the golden files hold them)."""
    assert pair_statistics.PAIR_STATISTICS == []
    cmp = compare(_small())
    assert "median_diff" not in cmp.seeds.columns
    assert "median" not in cmp.format("markdown")
