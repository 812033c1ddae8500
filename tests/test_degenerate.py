"""The one definition of a degenerate learner, on constructed runs and through real studies."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.stats import binom

from kbench.cli.main import cli
from kbench.results.degenerate import (
    MARK,
    at_majority_rate,
    degenerate_column,
    degenerate_reason,
    reason_kinds,
)


def _run(**kw) -> dict:
    """A finished binary-classification run that learned well on 1 000 examples."""
    return {
        "task_id": "t",
        "status": "ok",
        "task": "binary",
        "n": 1000,
        "seen": 1000,
        "online_error": 0.12,
        "majority_error": 0.40,
        "constant_predictions": False,
        "test_error": 0.10,
        "test_n": 500,
        "majority_test_error": 0.40,
        "test_constant_predictions": False,
        "query_budget": None,
        "stopped_at": float("nan"),
    } | kw


def test_a_fine_run_is_not_degenerate() -> None:
    assert degenerate_reason(_run()) == ""


def test_constant_predictions_online_and_held_out_separately() -> None:
    assert degenerate_reason(_run(constant_predictions=True)) == "online: constant predictions"
    assert degenerate_reason(_run(test_constant_predictions=True)) == (
        "held-out: constant predictions"
    )


def test_majority_rate_uses_the_binomial_interval() -> None:
    # The lower end of the central 95 % interval of Binomial(1000, 0.4) is 370 errors.
    low = int(binom.ppf(0.025, 1000, 0.4))
    assert 360 < low < 380
    assert at_majority_rate(low / 1000, 0.4, 1000)
    assert not at_majority_rate((low - 1) / 1000, 0.4, 1000)
    assert at_majority_rate(0.55, 0.4, 1000)  # worse than the majority class: flagged too
    r = degenerate_reason(_run(online_error=low / 1000))
    assert r.startswith("online: at the majority-class rate"), r
    # Held-out checked on its own: a good online error does not hide it.
    r = degenerate_reason(_run(test_error=0.39))
    assert r.startswith("held-out: at the majority-class rate") and "online" not in r
    # Regression has no majority class: its yardstick is the variance of y (stored in
    # the same columns), which a mean squared error of 0.9 against 0.4 does not beat.
    assert degenerate_reason(_run(task="regression", online_error=0.9, test_error=0.9)) == (
        "online: mean squared error not below the variance of y (0.9 vs 0.4); "
        "held-out: mean squared error not below the variance of y (0.9 vs 0.4)"
    )
    assert degenerate_reason(_run(task="regression", online_error=0.1, test_error=0.1)) == ""


def test_truncated_unless_a_label_budget_stopped_it() -> None:
    assert degenerate_reason(_run(seen=600)) == "saw 600 of 1000 examples"
    assert degenerate_reason(_run(seen=600, query_budget=600, stopped_at=600)) == ""
    # Older results without ``seen``: the caller reads it from the trace.
    old = _run()
    del old["seen"]
    assert degenerate_reason(old, seen=300) == "saw 300 of 1000 examples"


def test_non_finite_outputs() -> None:
    diverged = {"status": "diverged", "reason": "non-finite prediction at example 7"}
    assert degenerate_reason(diverged) == "non-finite outputs (diverged)"
    assert degenerate_reason({"status": "error"}) == ""


def test_column_and_kinds() -> None:
    runs = pd.DataFrame(
        [_run(task_id="a"), _run(task_id="b", constant_predictions=True, online_error=0.41)]
    )
    runs = runs.drop(columns="seen")
    traces = pd.DataFrame({"task_id": ["a", "b"], "seen": [1000, 400], "epoch": [1, 1]})
    col = degenerate_column(runs, traces)
    assert col.iloc[0] == ""
    assert "saw 400 of 1000" in col.iloc[1] and "constant" in col.iloc[1]
    assert reason_kinds(col) == (
        "online: at the majority-class rate; online: constant predictions; "
        "saw fewer examples than the stream holds"
    )


STUDY = [
    "-a",
    "perceptron",
    "-k",
    "rbf[gamma=0.5]",
    # So narrow a kernel is zero between any two distinct examples: the model's decision
    # on a new example is always 0, one class, so its runs must be flagged.
    "-k",
    "rbf[gamma=1000000]",
    "-d",
    "twonorm[n=300,n_test=200]",
    "-d",
    "checkerboard[n=300,n_test=200,noise=0.1]",
    "--seeds",
    "0-1",
    "--workers",
    "0",
    "--no-report",
]


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("deg") / "results"
    res = CliRunner().invoke(cli, ["run", *STUDY, "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out, res.output


def test_column_in_runs_parquet_and_run_leaderboard(study: tuple[Path, str]) -> None:
    out, output = study
    from kbench.results.store import load_results

    tables = load_results(out)
    tables.save(out)
    runs = pd.read_parquet(out / "runs.parquet")
    assert "degenerate" in runs.columns
    assert runs["degenerate"].map(lambda v: isinstance(v, str)).all()
    # On twonorm (20 dimensions) no two examples are close enough for the narrow kernel:
    # the model predicts one class, and is flagged, online and held-out.
    narrow = runs[runs["kernel"].str.contains("1000000") & runs["stream"].str.startswith("twonorm")]
    assert len(narrow) == 2
    assert narrow["degenerate"].str.contains("online: constant predictions").all()
    assert narrow["degenerate"].str.contains("held-out: constant predictions").all()
    # The perceptron with a sensible kernel on twonorm learns: not flagged.
    good = runs[~runs["kernel"].str.contains("1000000") & runs["stream"].str.startswith("twonorm")]
    assert (good["degenerate"] == "").all(), good["degenerate"].tolist()
    # The flag is written into each task file when the task finishes, not only on load.
    from kbench.results.store import read_run

    stored = [read_run(p) for p in sorted((out / "tasks").glob("*.parquet"))]
    assert all("degenerate" in r for r in stored)
    # kbench run's leaderboard marks the degenerate configuration and explains the mark.
    lines = [ln for ln in output.splitlines() if "1000000" in ln and "│" in ln]
    assert len(lines) == 2 and MARK in lines[1], output  # twonorm is printed second
    assert "degenerate:" in output


def test_show_marks_and_full_width(study: tuple[Path, str]) -> None:
    out, _ = study
    res = CliRunner().invoke(cli, ["show", str(out)])
    assert res.exit_code == 0, res.output
    rows = [ln for ln in res.output.splitlines() if "│" in ln]
    assert any("1000000" in ln and MARK in ln for ln in rows)
    assert any("gamma=0.5" in ln and MARK not in ln for ln in rows)
    # Not a terminal: no cell is cut with an ellipsis and lines may exceed 80 columns.
    assert "…" not in res.output
    assert max(len(ln) for ln in res.output.splitlines()) > 80


def test_show_formats_parse_back(study: tuple[Path, str]) -> None:
    out, _ = study

    def show(fmt: str) -> str:
        res = CliRunner().invoke(cli, ["show", str(out), "--format", fmt])
        assert res.exit_code == 0, res.output
        return res.stdout

    csv = pd.read_csv(io.StringIO(show("csv")))
    assert len(csv) == 4 and {"stream", "configuration", "online_error", "degenerate"} <= set(
        csv.columns
    )
    narrow = csv["configuration"].str.contains("1000000") & csv["stream"].str.startswith("twonorm")
    assert (csv.loc[narrow, "degenerate"] == 2).all()
    good = csv["configuration"].str.contains("0.5") & csv["stream"].str.startswith("twonorm")
    assert (csv.loc[good, "degenerate"] == 0).all()
    data = json.loads(show("json"))
    assert len(data["rows"]) == 4 and "degenerate" in data["legend"]
    assert {r["configuration"] for r in data["rows"]} == set(csv["configuration"])
    md = show("markdown")
    assert md.count("### ") == 2 and "|---" in md and MARK in md
    tex = show("latex")
    for needle in ("\\toprule", "\\midrule", "\\bottomrule", "\\textbf{", "$\\pm$", "\\dagger"):
        assert needle in tex, needle
    assert "degenerate" in tex.split("\\caption{")[1]  # the legend explains the mark
    # Each data row has as many cells as the header.
    body = tex.split("\\midrule")[1].split("\\bottomrule")[0].strip().splitlines()
    header = tex.split("\\toprule")[1].split("\\midrule")[0]
    assert len(body) == 2 and all(r.count("&") == header.count("&") for r in body)
    bad = CliRunner().invoke(cli, ["show", str(out), "--format", "xml"])
    assert bad.exit_code == 2


def test_compare_marks_and_formats(study: tuple[Path, str]) -> None:
    out, _ = study

    def compare(*args: str) -> str:
        res = CliRunner().invoke(cli, ["compare", str(out), *args])
        assert res.exit_code == 0, res.output
        return res.stdout

    table = compare()
    assert any("1000000" in ln and MARK in ln for ln in table.splitlines()), table
    assert "degenerate learner: perceptron rbf[gamma=1000000.0]: " in table
    assert "degenerate:" in table and "…" not in table
    csv = pd.read_csv(io.StringIO(compare("--format", "csv")))
    assert {"a", "b", "degenerate_a", "degenerate_b"} <= set(csv.columns)
    # Marked per data set: on twonorm only the narrow kernel is degenerate.
    tw = csv[csv["stream"].fillna("").str.startswith("twonorm")]
    both = pd.concat(
        [
            tw[["a", "degenerate_a"]].set_axis(["c", "d"], axis=1),
            tw[["b", "degenerate_b"]].set_axis(["c", "d"], axis=1),
        ]
    )
    assert len(both) >= 4
    narrow = both["c"].str.contains("1000000")
    assert both.loc[narrow, "d"].str.contains("constant predictions").all()
    assert both.loc[~narrow, "d"].fillna("").eq("").all()
    data = json.loads(compare("--format", "json"))
    flags = {
        r["label"]: r["flags"] for r in data["leaderboard"] if r["stream"].startswith("twonorm")
    }
    assert len(flags) == 2 and all(("1000000" in k) == bool(v) for k, v in flags.items()), flags
    assert "degenerate" in data["degenerate_legend"]
    md = compare("--format", "markdown")
    assert "**" in md and MARK in md and "### twonorm" in md
    tex = compare("--format", "latex")
    for needle in ("\\toprule", "\\midrule", "\\bottomrule", "\\textbf{", "$\\pm$"):
        assert needle in tex, needle
    rows = tex.split("\\midrule")[1].split("\\bottomrule")[0].strip().splitlines()
    assert len(rows) == 2
    narrow = next(r for r in rows if "1000000" in r)
    good = next(r for r in rows if "1000000" not in r)
    # On twonorm (the second column) the narrow kernel is degenerate, and not the best.
    assert narrow.split("&")[2].count("\\dagger") == 1 and "\\textbf" not in narrow.split("&")[2]
    assert "\\textbf" in good.split("&")[2] and "\\dagger" not in good.split("&")[2]
    caption = tex.split("\\caption{")[1]
    assert "lowest in bold" in caption and "degenerate" in caption and "significantly" in caption


def test_reproduce_verdict_table_marks_degenerate_runs(tmp_path: Path) -> None:
    """PiSTOL's quick a9a run predicts the majority class (its error is the majority rate):
    the claims resting on it carry the mark and say which runs are degenerate."""
    res = CliRunner().invoke(
        cli,
        [
            "reproduce",
            "pistol",
            "--quick",
            "--workers",
            "0",
            "--no-report",
            "--out",
            str(tmp_path / "rep"),
        ],
    )
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "degenerate runs on this data set:" in out
    flat = " ".join(out.split())  # cells fold over lines: read the table as one text
    # Table cells fold long text over lines; read the "why" cells back without the borders.
    why = "".join(ln.split("│")[-2].strip() for ln in out.splitlines() if ln.count("│") >= 8)
    assert "pistol[a=None,b=1.0,output=average] (3 of 3:" in why, why[:3000]
    assert flat.count(MARK) >= 3
    assert "degenerate: constant predictions" in out  # the legend


def test_binomial_quantile_is_scipy_stats_own() -> None:
    """The quantile behind at_majority_rate is scipy.stats.binom.ppf's, computed without
    importing scipy.stats (same SciPy function: equal exactly), NaN outside its range."""
    import math

    from scipy.stats import binom

    from kbench.results.degenerate import _binom_ppf

    for n in (1, 2, 7, 100, 2_000, 32_561, 10**6):
        for p in (0.0, 1e-6, 0.05, 0.2408, 0.5, 0.7592, 0.999, 1.0):
            assert _binom_ppf(0.025, n, p) == binom.ppf(0.025, n, p), (n, p)
    assert math.isnan(_binom_ppf(0.025, 10, 1.5)) and math.isnan(binom.ppf(0.025, 10, 1.5))


def test_majority_rate_bounds_agree_with_the_quantile() -> None:
    """at_majority_rate decides far-off counts by bounds, without the quantile: on every count
    of small and a9a-sized streams it agrees with its definition, k >= binom.ppf(0.025, n, m)."""
    import numpy as np

    for n in (1, 2, 9, 40, 333, 2_000):
        for m in (0.0, 0.013, 0.1, 0.2408, 0.5, 0.62, 0.97, 1.0):
            low = binom.ppf(0.025, n, m)
            for k in range(n + 1):
                assert at_majority_rate(k / n, m, n) == bool(k >= low), (n, m, k)
    # A large stream, counts around both bounds.
    n, m = 1_000_000, 0.2408
    low = binom.ppf(0.025, n, m)
    for k in np.unique(
        np.linspace(0, n, 2001).astype(int).tolist() + list(range(240_000, 241_700, 7))
    ):
        assert at_majority_rate(int(k) / n, m, n) == bool(k >= low), int(k)


def test_marks_land_on_the_cell_they_concern_in_every_format(study: tuple[Path, str]) -> None:
    """A reason about the online error marks the online error, one about the held-out error
    marks that, any other the configuration, in the terminal table, Markdown and LaTeX
    alike (issue 33: one seed's held-out reason marked a sound online error)."""
    from rich.console import Console

    from kbench.analysis.leaderboard import format_leaderboard
    from kbench.cli.render import print_leaderboard
    from kbench.core.registry import get_registry

    out, _ = study
    runs = pd.read_parquet(out / "runs.parquet")
    twonorm = runs["stream"].str.startswith("twonorm")
    narrow = runs["kernel"].str.contains("1000000")
    runs = runs[twonorm].copy()
    runs["degenerate"] = ""
    runs.loc[narrow[twonorm], "degenerate"] = "online: at the majority-class rate (0.51)"
    registry = get_registry()
    md = format_leaderboard(runs, registry, "markdown")
    rows = {ln.split(" | ")[0].strip("| "): ln.split(" | ") for ln in md.splitlines() if "±" in ln}
    bad = next(v for k, v in rows.items() if "1000000" in k)
    good = next(v for k, v in rows.items() if "1000000" not in k)
    assert MARK in bad[2] and MARK not in bad[3] and MARK not in bad[0]  # online only
    assert not any(MARK in cell for cell in good)
    tex = format_leaderboard(runs, registry, "latex")  # the held-out errors: none marked
    assert "\\dagger" not in tex.split("\\midrule")[1]
    console = Console(record=True, width=400)
    print_leaderboard(runs, registry, console=console)
    line = next(ln for ln in console.export_text().splitlines() if "1000000" in ln)
    cells = line.split("│")
    assert MARK in cells[3] and MARK not in cells[4] and MARK not in cells[1]
    # A reason about the held-out error: now the held-out cells are the marked ones.
    runs.loc[narrow[twonorm], "degenerate"] = "held-out: constant predictions"
    md = format_leaderboard(runs, registry, "markdown")
    bad = next(ln.split(" | ") for ln in md.splitlines() if "1000000" in ln and "±" in ln)
    assert MARK not in bad[2] and MARK in bad[3]
    tex = format_leaderboard(runs, registry, "latex")
    narrow_row = next(r for r in tex.split("\\midrule")[1].splitlines() if "1000000" in r)
    assert "\\dagger" in narrow_row
