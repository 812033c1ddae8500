"""``kbench publish``: the site over real studies, its incremental updates and bad input.

The studies are run here (small, a few seconds each); the browser test of the site is in
test_publish_browser.py.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import kbench
from kbench.results.store import RUN_KEY

#: Each test runs or publishes real studies (seconds to a minute).
pytestmark = pytest.mark.slow

STREAM = "twonorm[n_train=300,n_test=100,d=5]"


def _study(folder: Path, algorithms: list[str], datasets: list[str]) -> Path:
    kbench.run(
        kbench.Experiment(
            algorithms=algorithms, datasets=datasets, kernels=["rbf[gamma=0.2]"], seeds=[0, 1, 2]
        ),
        out=folder,
    )
    return folder


@pytest.fixture(scope="module")
def studies(tmp_path_factory) -> list[Path]:
    """Two studies sharing a data set, and a third with a learner of its own."""
    root = tmp_path_factory.mktemp("studies")
    return [
        _study(root / "first", ["perceptron", "pa", "rbp[budget=20]"], [STREAM, "banana[n=300]"]),
        _study(root / "second", ["perceptron", "norma[budget=30,eta=0.5]"], [STREAM]),
        _study(root / "third", ["bsgd[budget=20]"], [STREAM]),
    ]


def _publish(*args: str | Path) -> tuple[int, str, str]:
    """``kbench publish ARGS`` as a user runs it: its exit status, output and errors."""
    res = subprocess.run(
        [sys.executable, "-m", "kbench", "publish", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    return res.returncode, res.stdout, res.stderr


def _mtimes(site: Path) -> dict[str, int]:
    return {str(p.relative_to(site)): p.stat().st_mtime_ns for p in site.rglob("*") if p.is_file()}


def _rewrite_runs(folder: Path, **changes) -> None:
    """Change fields of every run record of a results folder (as another kbench would
    have written them)."""
    for path in (folder / "tasks").glob("*.parquet"):
        table = pq.read_table(path)
        meta = dict(table.schema.metadata)
        meta[RUN_KEY] = json.dumps(json.loads(meta[RUN_KEY]) | changes).encode()
        pq.write_table(table.replace_schema_metadata(meta), path)


def test_the_site_has_every_page_figure_and_table(studies, tmp_path) -> None:
    site = tmp_path / "site"
    code, out, err = _publish(*studies[:2], "-o", site)
    assert code == 0, err
    assert out.strip() == str(site / "index.html")
    index = (site / "index.html").read_text()
    for name in ("first", "second"):
        assert f">{name}</a>" in index
    # provenance: the command, kbench's version, the BLAS and the CPU of each study
    record = json.loads((studies[0] / "provenance.json").read_text())[-1]
    assert record["command"] and record["blas"] and record["cpu"]
    assert record["blas"] in index and record["kbench"] in index
    pages = {p.name for p in (site / "datasets").iterdir()}
    assert len(pages) == 2  # twonorm (both studies) and banana
    for name in ("perceptron", "pa", "rbp", "norma"):
        assert (site / "learners" / f"{name}.html").is_file()
    # each learner page names the learner's paper
    norma = (site / "learners" / "norma.html").read_text()
    assert (
        "<b>Paper</b>: Kivinen, Smola and Williamson (2004). Online learning with kernels." in norma
    )
    assert len(list((site / "studies").iterdir())) == 2
    svgs = sorted((site / "figures").glob("*.svg"))
    assert svgs and all(p.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-" for p in svgs)
    assert {p.name.split("-")[0] for p in svgs} >= {"speed", "size", "curves"}
    for ext, head in (("csv", "study,learner"), ("md", "#"), ("tex", "% kbench")):
        files = list((site / "tables").glob(f"*.{ext}"))
        assert len(files) == 2 and all(f.read_text().lstrip().startswith(head) for f in files)


def test_a_data_set_page_shows_what_kbench_compare_gives(studies, tmp_path) -> None:
    """Every row of the published leaderboard: the mean online error over seeds that
    ``kbench.compare`` computes, in percent with two decimals."""
    site = tmp_path / "site"
    assert _publish(*studies[:2], "-o", site)[0] == 0
    page = next(p for p in (site / "datasets").iterdir() if p.name.startswith("twonorm"))
    html = page.read_text()
    for study in studies[:2]:
        board = kbench.compare(study).leaderboard()
        twonorm = board[board["stream"].str.startswith("twonorm")]
        assert len(twonorm) >= 2
        for r in twonorm.itertuples():
            cell = f'data-v="{r.online_error}"'
            assert cell in html, (study.name, r.label)
            assert f"{100 * r.online_error:.2f} ± {100 * r.online_error_sd:.2f}" in html


def test_publishing_again_rewrites_nothing_and_a_new_study_only_itself(studies, tmp_path) -> None:
    site = tmp_path / "site"
    first = kbench.publish(studies[:2], site)
    assert first.summaries_computed == 2 and first.written > 10
    before = _mtimes(site)
    again = kbench.publish(studies[:2], site)
    assert again.summaries_computed == 0 and again.written == 0 and again.removed == 0
    assert again.figures_drawn == 0
    assert _mtimes(site) == before
    more = kbench.publish(studies, site)
    assert more.summaries_computed == 1
    after = _mtimes(site)
    assert (site / "learners" / "bsgd.html").is_file()
    # the banana page and its figures, untouched by the third study, were not rewritten
    banana = [k for k in before if "banana" in k]
    assert banana and all(after[k] == before[k] for k in banana)
    # leaving a study out removes what only it showed
    fewer = kbench.publish(studies[:1], site)
    assert fewer.removed > 0
    assert not (site / "learners" / "norma.html").exists()
    assert not (site / "learners" / "bsgd.html").exists()


def test_a_folder_that_cannot_be_published_is_left_out_in_one_line(studies, tmp_path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "notes.txt").write_text("not results")
    newer = tmp_path / "newer"
    shutil.copytree(studies[2], newer)
    _rewrite_runs(newer, results_format=99)
    site = tmp_path / "site"
    code, _, err = _publish(studies[0], plain, tmp_path / "missing", newer, "-o", site)
    assert code == 1
    lines = [x for x in err.splitlines() if x.startswith("kbench: left out")]
    assert len(lines) == 3, err
    assert "not a kbench results folder" in lines[0]
    assert "no such folder" in lines[1]
    assert "newer" in lines[2].lower()
    index = (site / "index.html").read_text()
    assert "Left out" in index and "not a kbench results folder" in index
    assert ">first</a>" in index


def test_two_studies_that_disagree_on_a_stream_keep_the_first(studies, tmp_path) -> None:
    other = tmp_path / "other"
    shutil.copytree(studies[1], other)
    _rewrite_runs(other, stream_id="0123456789abcdef")
    site = tmp_path / "site"
    code, _, err = _publish(studies[0], other, "-o", site)
    assert code == 1, err
    index = (site / "index.html").read_text()
    assert "differs in content from first" in index
    page = next(p for p in (site / "datasets").iterdir() if p.name.startswith("twonorm"))
    assert "norma" not in page.read_text()  # the other study's rows there are left out


def test_the_site_folder_is_never_overwritten(studies, tmp_path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    code, _, err = _publish(studies[0], "-o", afile)
    assert code == 2 and "is a file" in err and afile.read_text() == "keep me"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("keep me too")
    code, _, err = _publish(studies[0], "-o", mine)
    assert code == 2 and "no kbench site" in err
    assert [p.name for p in mine.iterdir()] == ["thesis.tex"]
    empty_site = tmp_path / "empty-site"
    code, _, err = _publish(tmp_path / "nowhere", "-o", empty_site)
    assert code == 2 and "no results folder could be published" in err
    assert len(err.strip().splitlines()) == 2  # the folder's line and the error's
    assert not empty_site.exists()


def test_publish_needs_results_and_out() -> None:
    code, _, err = _publish("-o", "x")
    assert code == 2 and "RESULTS" in err
    code, _, err = _publish("somewhere")
    assert code == 2 and "--out" in err


def test_the_study_page_names_its_command_and_links_the_asv_dashboard(studies, tmp_path) -> None:
    asv = tmp_path / "asv-html"
    asv.mkdir()
    (asv / "index.html").write_text("<html></html>")
    site = tmp_path / "site"
    assert _publish(studies[0], "-o", site, "--asv", asv, "--title", "Our lab")[0] == 0
    index = (site / "index.html").read_text()
    assert "<title>Our lab</title>" in index
    assert asv.joinpath("index.html").as_uri() in index
    page = next((site / "studies").iterdir()).read_text()
    command = json.loads((studies[0] / "provenance.json").read_text())[-1]["command"]
    assert re.sub(r"\s+", " ", command).split()[0] in page


def test_a_wrapped_learner_is_shown_as_the_learner_it_runs() -> None:
    """One-vs-rest and active wrappers run a base learner: its page, family and budget."""
    from kbench.api import get_registry
    from kbench.report.site.summary import _budget, family, learner_spec

    reg = get_registry()
    inner = learner_spec("ovr[base=bogd[budget=100]]", reg)
    assert inner == "bogd[budget=100]"
    assert family("bogd", reg) == "bogd" and _budget(inner, reg) == 100
    assert learner_spec("active_margin[base=pa[C=2]]", reg) == "pa[C=2]"
    assert learner_spec("norma[budget=30]", reg) == "norma[budget=30]"
