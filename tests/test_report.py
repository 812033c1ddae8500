"""Tests of ``kbench report``: a real study, the HTML it gives, and a real headless browser."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from PIL import Image

from kbench.cli.main import cli


def _chromium() -> str:
    """Path of Debian's chromium, installing it with apt-get when it is missing."""
    path = shutil.which("chromium")
    if path is None:
        subprocess.run(["apt-get", "update", "-qq"], check=True, capture_output=True, timeout=600)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "chromium"],
            check=True,
            capture_output=True,
            timeout=1200,
        )
        path = shutil.which("chromium")
    assert path is not None, "chromium is needed to test the report: apt-get install chromium"
    return path


def _browser(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_report_in_a_real_browser(small_study: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    res = CliRunner().invoke(cli, ["report", str(small_study), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.is_file()
    text = out.read_text()

    # Self-contained: no external resource of any kind.
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", text)
    assert "<link" not in text
    # The expected sections, and every data set with its curves and pair matrix.
    for anchor in ("id='summary'", "id='across'", "id='configurations'", "id='run'"):
        assert anchor in text
    for name in ("twonorm", "checkerboard", "digits"):
        assert f"<h2>{name}[" in text
    for heading in (
        "Leaderboard",
        "Every pair",
        "Win / tie / loss over every stream",
        "Friedman over 3 data sets",
        "Machines",
        "Step size",
        "Per stream: a description, no test",
    ):
        assert heading in text
    # the CD diagram comes from the Friedman test shown: drawn exactly when it rejects
    rejects = "the configurations differ" in text
    assert ('aria-label="critical difference diagram"' in text) == rejects
    assert 'aria-label="win tie loss matrix"' in text
    # Figures are inline SVG whose text stays text (searchable, and measurable below).
    sizes = re.findall(r'<svg [^>]*width="([\d.]+)pt" height="([\d.]+)pt"', text)
    assert len(sizes) >= 2 + int(rejects) + 2 * 3  # overview, [CD,] w/t/l; curves, matrix per set
    assert all(float(w) > 150 and float(h) > 70 for w, h in sizes), sizes
    assert text.count("<text ") > 200

    # A real browser: every figure is drawn, no script error, and the page is not blank.
    dom = _browser("--virtual-time-budget=5000", "--dump-dom", out.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    n_figures = re.search(r'data-figures="(\d+)"', dom.stdout)
    drawn = re.search(r'data-figures-drawn="(\d+)"', dom.stdout)
    assert n_figures and drawn, "the page's load handler did not run"
    assert int(n_figures.group(1)) == len(sizes) == int(drawn.group(1))
    html_tag = re.search(r"<html[^>]*>", dom.stdout)
    assert html_tag and "data-js-errors" not in html_tag.group(0), (
        "a script error was raised on the page"
    )
    console_errors = [
        ln
        for ln in dom.stderr.splitlines()
        if "CONSOLE" in ln and ("Error" in ln or "Uncaught" in ln)
    ]
    assert not console_errors, console_errors

    shot = tmp_path / "report.png"
    ran = _browser(f"--screenshot={shot}", "--window-size=1280,2000", out.as_uri())
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert shot.is_file() and shot.stat().st_size > 10_000
    with Image.open(shot) as im:
        assert im.size == (1280, 2000)
        colours = im.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 200, "the screenshot is (nearly) blank"


def _run_on_twonorm(tmp_path: Path, *args: str) -> Path:
    """The results folder of ``kbench run ARGS`` with the RBF kernel on a small twonorm."""
    out = tmp_path / "results"
    kernel_and_data = ["-k", "rbf[gamma=0.5]", "-d", "twonorm[n=120,n_test=60]"]
    res = CliRunner().invoke(
        cli, ["run", *args, *kernel_and_data, "--workers", "0", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    return out


def test_report_shows_failed_tasks(tmp_path: Path, plugin_dist) -> None:
    from conftest import MISBEHAVING

    plugin_dist("kbench_misbehaving", MISBEHAVING)
    out = _run_on_twonorm(
        tmp_path, "-a", "perceptron", "-a", "norma[budget=30]", "-a", "exploder[after=20]",
        "--seeds", "0-1",
    )  # fmt: skip
    res = CliRunner().invoke(cli, ["report", str(out)])
    assert res.exit_code == 0, res.output
    text = (out / "report.html").read_text()
    assert "Tasks that did not finish (2)" in text
    assert "exploded on purpose" in text
    assert ">error</span>" in text
    assert "2 of 2" in text  # the exploder's unfinished runs in the summary table
    # A single data set: no ranking across data sets, said in words rather than a broken figure.
    assert "need at least two data sets" in text


def test_report_of_a_single_configuration_still_draws_curves(tmp_path: Path) -> None:
    out = _run_on_twonorm(tmp_path, "-a", "perceptron")
    html_path = tmp_path / "one.html"
    res = CliRunner().invoke(
        cli, ["report", str(out), "-o", str(html_path), "--title", "one learner"]
    )
    assert res.exit_code == 0, res.output
    text = html_path.read_text()
    assert "<h1>one learner</h1>" in text
    assert "nothing to pair" in text
    assert 'alt="curves on twonorm' in text


def test_report_bad_input(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["report", str(tmp_path / "nowhere")])
    assert res.exit_code != 0
    assert "does not exist" in str(res.exception)


def test_report_gives_the_seed_level_verdicts_and_no_per_stream_test(tmp_path: Path) -> None:
    """One seed of a real a9a study: the pair's verdict over seeds is 'not available' with
    its reason (not 'tie'), the stream table describes (no test, p or p Holm column), and
    the text describes the signed-rank test over seeds, not a per-example McNemar test."""
    out = tmp_path / "r"
    run = CliRunner().invoke(
        cli,
        [
            *("run", "-a", "perceptron", "-a", "norma[budget=100]", "-d", "a9a[n=600]"),
            *("--seeds", "0", "--workers", "0", "--no-report", "--out", str(out)),
        ],
    )
    assert run.exit_code == 0, run.output
    page = tmp_path / "report.html"
    res = CliRunner().invoke(cli, ["report", str(out), "--out", str(page)])
    assert res.exit_code == 0, res.output
    text = page.read_text()
    pairs = text.split("<h3>Every pair</h3>")[1].split("<details>")[0]
    assert "<span class='undecided'>not available</span>" in pairs
    assert "1 seed: a test over seeds needs at least 2" in pairs
    assert "<span class='tie'>tie</span>" not in pairs
    assert "exact Wilcoxon signed-rank test over the seeds" in text
    assert "McNemar" not in text
    streams = text.split("Per stream: a description, no test")[1].split("</details>")[0]
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", streams)
    assert "fewer errors" in heads and "only A wrong" in heads
    assert not {"test", "p", "p Holm"} & set(heads), heads


def test_report_escapes_what_comes_from_the_results(tmp_path: Path) -> None:
    """Labels, specs, reasons and titles are text, never markup: the templates autoescape
    everything but the figures' SVG, and a spec still breaks after its commas."""
    from kbench.report.html import environment

    label = "norma[x=<script>,y=a&b]"
    macros = environment().get_template("macros.html.j2").make_module({"colours": {label: "#123"}})
    cell = str(macros.swatch(label, flags="<img src=x>", reasons=True))
    assert "<script>" not in cell and "<img" not in cell
    assert "norma[x=&lt;script&gt;,</span><wbr>y=a&amp;b]" in cell
    assert 'style="background:#123"' in cell and "⚠ degenerate: &lt;img src=x&gt;" in cell
    row = dict(label="p", stream="s", seed="0", status="error", colour="#c00", reason="bad <x> & y")
    assert "<td class='mono'>bad &lt;x&gt; &amp; y</td>" in str(macros.failed_table([row], True))
    svg = "<svg><text>a &lt; b</text></svg>"
    fig = str(macros.figure(svg, "curves on <x>", "a & b"))
    assert svg in fig and 'aria-label="curves on &lt;x&gt;"' in fig and "a &amp; b" in fig

    # And a whole report of a real run, with a title that would be markup.
    out = tmp_path / "results"
    run = CliRunner().invoke(
        cli,
        [
            *("run", "-a", "perceptron", "-d", "twonorm[n=80,n_test=40]"),
            *("--workers", "0", "--no-report", "--out", str(out)),
        ],
    )
    assert run.exit_code == 0, run.output
    page = tmp_path / "page.html"
    title = "<script>alert(1)</script> & co"
    res = CliRunner().invoke(cli, ["report", str(out), "-o", str(page), "--title", title])
    assert res.exit_code == 0, res.output
    text = page.read_text()
    assert "<h1>&lt;script&gt;alert(1)&lt;/script&gt; &amp; co</h1>" in text
    assert "alert(1)</script>" not in text


def test_report_modules_import_jinja2_and_matplotlib_only_to_render() -> None:
    """Importing the report (as ``kbench run --report`` does) loads neither jinja2 nor
    matplotlib: they are imported when a page or figure is drawn (in a fresh interpreter)."""
    code = (
        "import sys, kbench.report.html, kbench.report.sections\n"
        "print(sorted(m for m in ('jinja2', 'markupsafe', 'matplotlib') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
