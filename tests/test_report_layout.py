"""The report's layout, measured in headless Chromium: no two texts overlap, no figure
cuts its own text, nothing runs off its box or the page; for a small version of the
default study (other configurations on each data set) and a study of 12 algorithms × 6
data sets with long stream ids."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from layout_check import layout_problems

from kbench.cli.main import cli
from kbench.execution.study import DEFAULT_STUDY

WIDE_STUDY = """
[study]
seeds = [0, 1]
checkpoints = 8

[[experiment]]
name = "wide"
datasets = [
  "twonorm[n_train=120,n_test=60,d=20]",
  "drift[n_train=120,n_test=60,d=2,drift_at=0.5,kind=swap,angle=90.0,noise=0.1]",
  "checkerboard[n_train=120,n_test=60,noise=0.1,k=4]",
  "checkerboard[n_train=120,n_test=60,noise=0.2,k=2]",
  "digits[positive=5-9,scale=minmax,test_size=0.3,n=120]",
  "drift[n_train=120,n_test=60,d=3,drift_at=0.25,kind=rotate,angle=135.0,noise=0.05]",
]
algorithms = [
  "perceptron",
  "norma[eta=0.5,c=0.001,budget=30,offset=true]",
  "norma[eta=1.0,schedule=decay_tau,tau=1000,c=0.001,budget=30,offset=true]",
  "norma[eta=1.0,schedule=inv_sqrt,c=0.0001,budget=30,offset=true]",
  "norma[eta=0.25,schedule=decay_tau,tau=250,c=0.01,budget=30,offset=true]",
  "norma[eta=2.0,schedule=inv_sqrt,c=0.00001,budget=30,offset=false]",
  "forgetron[budget=30]",
  "bpa_s[budget=30,C=1.0]",
  "bogd[budget=30,eta=0.5,lam=0.02]",
  "nogd[budget=30,eta=0.1]",
  "norma[eta=0.75,schedule=inv_sqrt,c=0.001,budget=30,offset=true]",
  "bsgd[budget=30,lam=0.0001]",
]
kernels = ["rbf[gamma=0.5]"]
losses = ["hinge"]
"""


def _report(tmp: Path, *run_args: str) -> tuple[Path, str]:
    out = tmp / "results"
    ran = CliRunner().invoke(
        cli, ["run", *run_args, "--workers", "0", "--no-report", "--out", str(out)]
    )
    assert ran.exit_code == 0, ran.output
    page = tmp / "report.html"
    res = CliRunner().invoke(cli, ["report", str(out), "--out", str(page)])
    assert res.exit_code == 0, res.output
    return page, page.read_text()


def _assert_clean(page: Path, width: int) -> None:
    found = layout_problems(page, width)
    assert found["svg_texts"] > 100 and found["texts"] > found["svg_texts"]
    assert found["overlaps"] == [], found["overlaps"][:10]
    assert found["clipped"] == [], found["clipped"][:10]
    assert found["spill"] == [], found["spill"][:10]
    assert found["offpage"] == [] and found["scroll_width"] <= width, found["offpage"][:10]


@pytest.fixture(scope="module")
def default_small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """kbench's default study, 200 examples per stream and two seeds."""
    tmp = tmp_path_factory.mktemp("default")
    return _report(tmp, str(DEFAULT_STUDY), "--n", "200", "--seeds", "0-1")


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("wide")
    study = tmp / "wide.toml"
    study.write_text(WIDE_STUDY)
    return _report(tmp, str(study))


def test_the_check_finds_overlaps_and_cut_text(tmp_path: Path) -> None:
    """The measurement can fail: two labels drawn on top of each other, a label outside
    its figure and a table cell whose text runs out of it are all reported."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><body style='margin:0'>"
        "<figure><svg width='300' height='100' viewBox='0 0 300 100'>"
        "<text x='10' y='50' font-size='14'>norma[eta=0.5,c=0.001]</text>"
        "<text x='40' y='52' font-size='14'>perceptron rbf[gamma=0.5]</text>"
        "<text x='250' y='90' font-size='14'>cut off by the edge</text></svg></figure>"
        "<table style='table-layout:fixed;width:120px'><tr>"
        "<td style='width:60px;white-space:nowrap'>a-very-long-stream-id[n=1000,d=20]</td>"
        "<td>x</td></tr></table></body></html>"
    )
    found = layout_problems(page, 800)
    assert any("norma" in a + b and "perceptron" in a + b for a, b, *_ in found["overlaps"])
    assert "cut off by the edge" in found["clipped"]
    assert any("a-very-long-stream-id" in s for s in found["spill"])


@pytest.mark.parametrize("width", [1280, 900])
def test_default_study_report_has_no_overlapping_text(
    default_small: tuple[Path, str], width: int
) -> None:
    _assert_clean(default_small[0], width)


def test_default_study_is_ranked_per_experiment_group(default_small: tuple[Path, str]) -> None:
    _, text = default_small
    # Each data set ran its own configurations: three groups, each ranked. With two seeds
    # the exact Friedman test of five or seven configurations can still reach 0.05 (1/5! and
    # 1/7!), and a CD diagram is drawn exactly where the test shown rejects (issue 33).
    assert "The configurations differ by data set" in text
    assert text.count("Friedman over 2 seeds") == 3
    assert text.count("exact p = ") + text.count("permutation p ") == 3
    rejects = text.count("the configurations differ;")
    assert text.count('aria-label="critical difference diagram"') == rejects
    assert "left out of the ranking" not in text
    # The summary's mean ranks are filled in (within each group), not all "–".
    ranks = re.findall(r"<td class='num'>(\d\.\d\d) <span class='sd' title=", text)
    assert len(ranks) >= 12, ranks


def test_wide_study_report_has_no_overlapping_text(wide: tuple[Path, str]) -> None:
    _assert_clean(wide[0], 1280)


def test_wide_study_report_ranks_everything_and_shortens_ids(wide: tuple[Path, str]) -> None:
    _, text = wide
    assert "Every configuration ran on every data set: one ranking over the 6 data sets" in text
    assert "Friedman over 6 data sets and 12 configurations: χ² = " in text
    # the diagram is drawn from the Friedman test shown: present exactly when it rejects
    rejects = "the configurations differ" in text
    assert text.count('aria-label="critical difference diagram"') == int(rejects)
    long_id = "drift[angle=135.0,d=3,drift_at=0.25,kind=rotate,n_test=60,n_train=120,noise=0.05]"
    # Navigation and column heads name the stream by what tells it apart; the full id is
    # in their title and in the data set's own heading.
    nav = re.search(r"<nav>.*?</nav>", text).group(0)
    assert f"title='{long_id}'" in nav
    assert ">drift[angle=135.0,d=3,drift_at=0.25,kind=rotate,noise=0.05]<" in nav
    assert f"<h2>{long_id}</h2>" in text
