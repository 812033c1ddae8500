"""The tuning protocol: search spaces, overlap refusal, the selection rule, tuning cost and
resuming a tuned study killed while tuning."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import stub_plugin
from helpers import kbench, kill_9_after
from kbench.core.errors import SpecError
from kbench.core.registry import get_registry
from kbench.core.search_space import (
    GENERIC_SPACE,
    Choice,
    IntLogUniform,
    LogUniform,
    search_space,
)
from kbench.execution.study import Experiment, load_study, plan
from kbench.execution.tuned_study import selections
from kbench.execution.tuning import (
    configurations,
    parse_tune,
    select,
    window_bounds,
)
from kbench.results.store import load_results

# --------------------------------------------------------------------------------------------
# Search spaces
# --------------------------------------------------------------------------------------------


def test_declared_generic_and_fixed_spaces() -> None:
    """A declared space is the whole space; PiSTOL declares nothing to tune; a class that
    declares none gets the generic dimensions whose range holds its default; parameters
    the user fixed are left out."""
    reg = get_registry()
    norma = reg.entry("algorithm", "norma").cls
    assert search_space(norma) == norma.search_space
    assert "budget" not in search_space(norma)
    assert search_space(reg.entry("algorithm", "pistol").cls) == {}
    assert search_space(norma, {"eta"}) == {"c": norma.search_space["c"]}
    assert search_space(reg.entry("kernel", "rbf").cls) == {"gamma": LogUniform(1e-3, 10.0)}

    class Generic:
        name, kind = "generic", "algorithm"

        @classmethod
        def parameters(cls):
            from types import SimpleNamespace as P

            return {"eta": P(default=0.5), "lam": P(default=0.99), "budget": P(default=64)}

    space = search_space(Generic)
    # lam = 0.99 is outside the generic regularisation range: a forgetting factor.
    assert space == {"eta": GENERIC_SPACE["eta"], "budget": GENERIC_SPACE["budget"]}


@pytest.mark.parametrize(
    ("dim", "why"),
    [
        (Choice(), "Choice() lists no value"),
        (LogUniform(10.0, 1.0), "upper bound below the lower one"),
        (LogUniform(0.0, 1.0), "needs a positive lower bound"),
        (IntLogUniform(0, 8), "lower bound of at least 1"),
    ],
)
def test_an_empty_dimension_is_refused(dim, why: str) -> None:
    class Bad:
        name, kind = "bad", "algorithm"
        search_space = {"eta": dim}

        @classmethod
        def parameters(cls):
            from types import SimpleNamespace as P

            return {"eta": P(default=0.5)}

    with pytest.raises(SpecError) as info:
        search_space(Bad)
    assert str(info.value).startswith("algorithm 'bad': the search space of 'eta' is empty: ")
    assert why in str(info.value) and "\n" not in str(info.value)


def test_grid_and_random_configurations() -> None:
    """A grid of budget 9 over two ranges is 3 × 3 points from each end; a random search
    tries the defaults first, then distinct draws, the same ones every time."""
    reg = get_registry()
    norma, rbf = reg.canonical("algorithm", "norma"), reg.canonical("kernel", "rbf")
    fixed_rbf = reg.canonical("kernel", "rbf[gamma=0.1]")
    grid = configurations(norma, fixed_rbf, set(), {"gamma"}, parse_tune(_tune("grid", 9)), reg)
    assert len(grid) == 9 and all(k == fixed_rbf for _, k in grid)
    etas = sorted({reg.resolve("algorithm", a)[1]["eta"] for a, _ in grid})
    assert etas == [0.001, 0.1, 10.0]
    rand = configurations(norma, rbf, set(), set(), parse_tune(_tune("random", 8)), reg)
    assert len(rand) == len(set(rand)) == 8
    assert rand[0] == (norma, rbf)
    assert rand == configurations(norma, rbf, set(), set(), parse_tune(_tune("random", 8)), reg)
    for a, k in rand[1:]:
        eta = reg.resolve("algorithm", a)[1]["eta"]
        gamma = reg.resolve("kernel", k)[1]["gamma"]
        assert 1e-3 <= eta <= 10 and 1e-3 <= gamma <= 10
    # Nothing to tune: one configuration whatever the budget (PiSTOL's cost is 1).
    pistol = reg.canonical("algorithm", "pistol")
    assert configurations(
        pistol, fixed_rbf, set(), {"gamma"}, parse_tune(_tune("random", 8)), reg
    ) == [(pistol, fixed_rbf)]


def _tune(method: str = "random", budget: int = 4, on: str = "prefix:0.2") -> dict:
    return {"method": method, "budget": budget, "on": on}


# --------------------------------------------------------------------------------------------
# Planning: the two phases, overlap refusal
# --------------------------------------------------------------------------------------------


def _experiment(**kw) -> Experiment:
    base = dict(
        algorithms=["norma", "pistol"],
        datasets=["digits[positive=5-9,scale=minmax,n=300]"],
        kernels=["rbf[gamma=0.05]"],
        seeds=[0, 1, 2],
        tune=_tune(),
    )
    return Experiment(**(base | kw))


def test_tuning_phase_plans_every_configuration_on_every_prefix() -> None:
    reg = get_registry()
    tasks = plan([_experiment(phase="tuning")], reg).tasks
    norma = [t for t in tasks if t.algorithm.startswith("norma")]
    pistol = [t for t in tasks if t.algorithm.startswith("pistol")]
    assert len(norma) == 4 * 3 and len(pistol) == 1 * 3
    options = dict(norma[0].options)
    assert options["phase"] == "tuning" and options["window"] == "head:0.2"
    assert {t.seed for t in norma} == {0, 1, 2}
    # the kernel was fixed by the user: only NORMA's eta and c vary
    assert {t.kernel for t in tasks} == {reg.canonical("kernel", "rbf[gamma=0.05]")}


def test_a_study_file_with_tune_is_read_and_refused_outside_the_two_phases(tmp_path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        '[study]\nseeds = [0]\ntune = {method = "grid", budget = 4, on = "prefix:0.1"}\n'
        '[[experiment]]\nalgorithms = ["norma"]\ndatasets = ["digits[positive=5-9]"]\n'
    )
    (exp,) = load_study(path)
    assert exp.tune == {"method": "grid", "budget": 4, "on": "prefix:0.1"}
    with pytest.raises(SpecError, match="runs in two phases"):
        plan([exp], get_registry())


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (
            dict(tune=_tune(on="seeds:2-4"), datasets=["checkerboard[n=200]"]),
            "tune on seeds:2,3,4 overlaps the evaluation seeds (seed 2 is both): tuning "
            "streams must not be evaluation streams",
        ),
        (
            dict(tune=_tune(on="seeds:10-11")),
            "every seed shuffles the same examples",
        ),
        (
            dict(tune=_tune(on="seeds:10-11"), datasets=["checkerboard[n=200,order=file]"]),
            "with order=file gives the same stream under every seed",
        ),
        (
            dict(tune=_tune(on="dataset:digits[positive=1-3]")),
            "is the evaluation data set digits",
        ),
        (dict(tune=_tune(on="prefix:1.0")), "between 0 and 1 (exclusive)"),
        (dict(tune=_tune(budget=0)), "budget must be an integer from 1"),
        (dict(tune=_tune(method="bayes")), "method must be grid or random"),
    ],
)
def test_bad_tuning_specs_are_refused_in_one_line(kw, message: str) -> None:
    with pytest.raises(SpecError) as info:
        plan([_experiment(phase="tuning", **kw)], get_registry())
    assert message in str(info.value) and "\n" not in str(info.value)


def _refused(tmp_path: Path, seeds: str, tune: str, algorithm: str) -> list[str]:
    """The lines ``kbench run`` writes to stderr on a study of ``algorithm`` on a small
    checkerboard with these seeds and tuning, which it must refuse with exit code 2."""
    study = tmp_path / "s.toml"
    study.write_text(
        f"[study]\n{seeds}\ntune = {tune}\n[[experiment]]\n"
        f'algorithms = ["{algorithm}"]\ndatasets = ["checkerboard[n=100]"]\n'
    )
    proc = kbench("run", str(study), "--workers", "0", "--out", str(tmp_path / "r"))
    assert proc.returncode == 2
    return proc.stderr.strip().splitlines()


def test_overlap_is_refused_by_kbench_run_with_exit_2(tmp_path: Path) -> None:
    tune = '{method = "random", budget = 2, on = "seeds:1-3"}'
    assert _refused(tmp_path, "seeds = [0, 1]", tune, "norma") == [
        "kbench: error: tune on seeds:1,2,3 overlaps the evaluation seeds (seed 1 is both): "
        "tuning streams must not be evaluation streams"
    ]
    assert not (tmp_path / "r" / "tasks").exists() or not list((tmp_path / "r" / "tasks").iterdir())


def test_window_bounds_split_each_stream() -> None:
    assert window_bounds("head:0.1", 1000) == (0, 100)
    assert window_bounds("tail:0.1", 1000) == (100, 1000)
    assert window_bounds("head:0.001", 10) == (0, 1)  # at least one example on each side
    assert window_bounds("tail:0.999", 10) == (9, 10)


# --------------------------------------------------------------------------------------------
# The selection rule
# --------------------------------------------------------------------------------------------


def _tuning_runs(errors: dict[int, list[float | None]]) -> pd.DataFrame:
    rows = []
    for config, errs in errors.items():
        for seed, err in enumerate(errs):
            rows.append(
                {
                    "task_id": f"{config}-{seed}",
                    "phase": "tuning",
                    "tune_group": "g",
                    "tune_config": config,
                    "stream": "s",
                    "seed": seed,
                    "status": "ok" if err is not None else "diverged",
                    "online_error": np.nan if err is None else err,
                    "algorithm_spec": f"alg[x={config}]",
                    "kernel": None,
                }
            )
    return pd.DataFrame(rows)


def test_lowest_mean_wins_ties_go_first_failures_never_win() -> None:
    # config 0 mean 0.25; config 1 mean 0.2 but diverged on one stream; 2 and 3 tie at 0.225
    runs = _tuning_runs(
        {0: [0.2, 0.3], 1: [0.1, None], 2: [0.25, 0.2], 3: [0.2, 0.25], 4: [0.5, 0.5]}
    )
    assert select(runs, "g", 2) == 2
    assert selections(runs) == {"g": ("alg[x=2]", None)}
    assert select(_tuning_runs({0: [None, None]}), "g", 2) is None
    # a configuration missing a tuning stream (a run not recorded) is not selected
    assert select(_tuning_runs({0: [0.4, 0.4], 1: [0.1]}), "g", 2) == 0


# --------------------------------------------------------------------------------------------
# A tuned study end to end: cost accounting, tables, resume after kill -9
# --------------------------------------------------------------------------------------------

TUNED_STUDY = """
[study]
seeds = [0, 1]
tune = {{method = "random", budget = {budget}, on = "prefix:0.2"}}

[[experiment]]
algorithms = ["pistol", "norma[budget=50]", "bsgd[budget=50]"]
kernels = ["rbf"]
datasets = ["digits[positive=5-9,scale=minmax,n={n}]"]
"""


def _write_study(folder: Path, budget: int = 3, n: int = 300) -> Path:
    path = folder / "tuned.toml"
    path.write_text(TUNED_STUDY.format(budget=budget, n=n))
    return path


def test_tuned_study_records_selection_tuning_runs_and_cost(tmp_path: Path) -> None:
    study = _write_study(tmp_path)
    out = tmp_path / "r"
    proc = kbench("run", str(study), "--workers", "0", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    res = load_results(out)
    tuning, runs = res.tuning, res.runs
    # rbf's gamma is tuned for every learner; PiSTOL has nothing else, NORMA eta and c, BSGD lam
    per_alg = tuning.groupby("algorithm")["tune_config"].nunique().to_dict()
    assert per_alg == {"pistol": 3, "norma": 3, "bsgd": 3}
    assert len(tuning) == 3 * 3 * 2 and set(tuning["window"]) == {"head:0.2"}
    assert (tuning["n"] == 60).all()  # the first 20 % of 300 examples
    assert set(runs["phase"]) == {"evaluation"} and set(runs["window"]) == {"tail:0.2"}
    assert (runs["n"] == 240).all() and len(runs) == 3 * 2
    # the charged cost is the sum over the group's tuning runs
    for _, run in runs.iterrows():
        mine = tuning[tuning["tune_group"] == run["tune_group"]]
        assert run["tune_configs"] == mine["tune_config"].nunique() == 3
        assert run["tune_runs"] == len(mine) == 6
        # every finished tuning run saw its 60 examples (a drawn configuration can be
        # invalid, e.g. NORMA's eta·c > 1: its run is an error and sees none)
        finished = int((mine["status"] == "ok").sum())
        assert finished >= 4
        assert run["tune_examples"] == mine["seen"].sum() == 60 * finished
        assert run["tune_kernel_evals"] == mine["kernel_evals"].sum()
        assert run["tune_seconds"] == pytest.approx(mine["time_s"].sum(), rel=1e-12)
        # the evaluated configuration is the best mean on the tuning prefixes; the run is
        # filed under the learner the study named, the selection beside it
        means = mine.groupby("tune_config")["online_error"].mean()
        best = mine[mine["tune_config"] == means.idxmin()].iloc[0]
        assert run["selected_algorithm"] == best["algorithm_spec"]
        assert run["selected_kernel"] == best["kernel"]
        first = mine[mine["tune_config"] == 0].iloc[0]  # the defaults: the spec as given
        assert run["algorithm_spec"] == first["algorithm_spec"] == run["base_algorithm"]
    assert (out / "tuning.parquet").exists()
    assert len(pd.read_parquet(out / "runs.parquet")) == len(runs)  # accuracy tables: no tuning
    assert "tuning cost" in proc.stdout
    # kbench show and kbench compare print the cost beside the accuracy
    shown = kbench("show", str(out), "--format", "csv")
    assert shown.returncode == 0, shown.stderr
    table = pd.read_csv(__import__("io").StringIO(shown.stdout))
    assert {"tune_configs", "tune_runs", "tune_kernel_evals", "tune_seconds"} <= set(table)
    assert table["tune_runs"].tolist() == [6, 6, 6]
    assert all(c.endswith(" tuned@3") for c in table["configuration"])
    compared = kbench("compare", str(out))
    assert compared.returncode == 0, compared.stderr
    assert "accuracy and tuning cost" in compared.stdout
    for algorithm in ("pistol", "norma", "bsgd"):
        assert any(
            line.split()[1:2] == [f"{algorithm}[budget=50]" if algorithm != "pistol" else "pistol"]
            and line.split()[-5:-3] == ["3", "6"]
            for line in compared.stdout.splitlines()
            if line.strip().startswith("digits")
        ), compared.stdout
    # kbench show --tuning: every configuration tried, the selected one marked
    searched = kbench("show", str(out), "--tuning", "--format", "csv")
    assert searched.returncode == 0, searched.stderr
    search = pd.read_csv(__import__("io").StringIO(searched.stdout))
    assert len(search) == 9 and search.groupby("group")["selected"].sum().tolist() == [1, 1, 1]
    for _, g in search.groupby("group"):
        assert g.loc[g["selected"], "error"].iloc[0] == g["error"].min()
        assert g.loc[g["config"] == 0, "values"].iloc[0] == "defaults"
    report = kbench("report", str(out))
    assert report.returncode == 0, report.stderr
    html = (out / "report.html").read_text()
    assert "id='tuning'" in html and "Accuracy and tuning cost" in html


def _run_study(folder: Path, text: str, name: str = "s") -> Path:
    """Write a study file of ``text`` into ``folder``, run it (exit 0), return its results
    folder."""
    study = folder / f"{name}.toml"
    study.write_text(text)
    out = folder / f"{name}-results"
    proc = kbench("run", str(study), "--workers", "0", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


def test_parameter_free_learner_costs_one_configuration(tmp_path: Path) -> None:
    """With the kernel fixed, PiSTOL has nothing to tune: one configuration per tuning
    stream, charged as such, while NORMA tries its whole budget."""
    out = _run_study(
        tmp_path,
        '[study]\nseeds = [0, 1]\ntune = {method = "grid", budget = 4, on = "prefix:0.25"}\n'
        '[[experiment]]\nalgorithms = ["pistol", "norma[budget=40]"]\nkernels = ["rbf[gamma=1.0]"]\n'
        'datasets = ["checkerboard[n=200]"]\n',
    )
    runs = load_results(out).runs.set_index("algorithm")
    assert (runs.loc["pistol", "tune_configs"] == 1).all()
    assert (runs.loc["pistol", "tune_runs"] == 2).all()
    assert (runs.loc["norma", "tune_configs"] == 4).all()


def test_kill_9_while_tuning_then_resume(tmp_path: Path) -> None:
    """A tuned study killed (SIGKILL) during its tuning phase resumes: the tuning runs kept
    are not run again and the end is the same as an uninterrupted run's."""
    study = _write_study(tmp_path, budget=4, n=1200)
    out = tmp_path / "killed"
    args = ["run", str(study), "--workers", "1", "--out", str(out)]
    kept = kill_9_after(args, out, 4)
    n_tuning = 4 * 2 + 4 * 2 + 4 * 2  # budget 4 (γ tuned for PiSTOL too), 2 prefixes each
    assert 4 <= len(kept) < n_tuning, "the kill did not land in the tuning phase"
    partial = load_results(out)  # every file left behind is whole
    assert len(partial.runs) == 0 and len(partial.tuning) == len(kept)
    again = kbench(*args)
    assert again.returncode == 0, again.stderr
    assert f"{len(kept)} of {n_tuning} tasks already have results" in again.stderr
    assert "run again" not in again.stderr  # a tuning window's stream id is checked as such
    assert kept <= {p.name for p in (out / "tasks").glob("*.parquet")}
    clean = kbench("run", str(study), "--workers", "2", "--out", str(tmp_path / "clean"))
    assert clean.returncode == 0, clean.stderr
    a, b = load_results(out), load_results(tmp_path / "clean")
    cols = ["task_id", "selected_algorithm", "selected_kernel", "online_error", "tune_configs"]
    pd.testing.assert_frame_equal(
        a.runs[cols].sort_values("task_id").reset_index(drop=True),
        b.runs[cols].sort_values("task_id").reset_index(drop=True),
    )
    assert sorted(a.tuning["task_id"]) == sorted(b.tuning["task_id"])


EMPTY_SPACE_PLUGIN = stub_plugin('''
from kbench.core.search_space import Choice


class Untunable(Stub):
    """Declares a search space with no value."""
    name = "untunable"
    eta: float = param(0.5)
    search_space = {"eta": Choice()}


@hookimpl
def kbench_register_algorithms(register):
    register(Untunable)
''')


def test_an_empty_search_space_is_a_one_line_error(tmp_path: Path, plugin_dist) -> None:
    plugin_dist("kb_untunable", EMPTY_SPACE_PLUGIN)
    tune = '{method = "random", budget = 4, on = "prefix:0.1"}'
    assert _refused(tmp_path, "seeds = [0]", tune, "untunable") == [
        "kbench: error: algorithm 'untunable': the search space of 'eta' is empty: "
        "Choice() lists no value"
    ]


def test_compare_at_equal_tuning_budget(tmp_path: Path) -> None:
    """Two budgets in one folder: the random searches share their first draws, and
    kbench compare --tune-budget N ranks the learners tuned with N configurations only."""
    out = tmp_path / "r"
    for budget in (2, 4):
        study = tmp_path / f"b{budget}.toml"
        study.write_text(
            f'[study]\nseeds = [0, 1]\ntune = {{method = "random", budget = {budget}, '
            'on = "prefix:0.25"}\n[[experiment]]\nalgorithms = ["pistol", "norma[budget=40]"]\n'
            'kernels = ["rbf[gamma=1.0]"]\ndatasets = ["checkerboard[n=200]"]\n'
        )
        proc = kbench("run", str(study), "--workers", "0", "--out", str(out))
        assert proc.returncode == 0, proc.stderr
    res = load_results(out)
    norma = res.tuning[res.tuning["algorithm"] == "norma"]
    by_budget = {
        b: list(dict.fromkeys(g.sort_values("tune_config")["algorithm_spec"]))
        for b, g in norma.groupby(norma["tune"].str.split(":").str[1].astype(int))
    }
    assert by_budget[4][:2] == by_budget[2]  # the budget-2 search is the start of the other
    both = kbench("compare", str(out))
    assert both.returncode == 0 and "tuned@2" in both.stdout and "tuned@4" in both.stdout
    at2 = kbench("compare", str(out), "--tune-budget", "2")
    assert at2.returncode == 0, at2.stderr
    assert "tuned@2" in at2.stdout and "tuned@4" not in at2.stdout
    none = kbench("compare", str(out), "--tune-budget", "3")
    assert none.returncode == 2
    assert none.stderr.strip() == (
        "kbench: error: no run was tuned with a budget of 3 configurations; budgets there: 2, 4"
    )


@pytest.mark.parametrize(
    ("on", "streams"),
    [
        ("seeds:10-11", {("checkerboard", 10), ("checkerboard", 11)}),
        ("dataset:twonorm[n=150]", {("twonorm", 0), ("twonorm", 1)}),
    ],
)
def test_tuning_on_other_seeds_or_another_data_set(tmp_path: Path, on: str, streams: set) -> None:
    """Tuning streams of other seeds of a generator, or of another data set; the
    evaluation runs the whole evaluation streams (no prefix is held out)."""
    study = tmp_path / "s.toml"
    study.write_text(
        f'[study]\nseeds = [0, 1]\ntune = {{method = "grid", budget = 2, on = "{on}"}}\n'
        '[[experiment]]\nalgorithms = ["norma[budget=30,c=0.01]"]\n'
        'kernels = ["rbf[gamma=1.0]"]\ndatasets = ["checkerboard[n=150]"]\n'
    )
    out = tmp_path / "r"
    proc = kbench("run", str(study), "--workers", "0", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    res = load_results(out)
    assert {(r.dataset, r.seed) for r in res.tuning.itertuples()} == streams
    assert res.tuning["window"].isna().all() and res.runs["window"].isna().all()
    assert set(res.runs["seed"]) == {0, 1} and (res.runs["n"] == 150).all()
    assert set(res.runs["dataset"]) == {"checkerboard"}
    # eta alone is tuned (c is fixed): two grid points, each on both tuning streams
    assert (res.runs["tune_configs"] == 2).all() and (res.runs["tune_runs"] == 4).all()
    etas = {get_registry().resolve("algorithm", a)[1]["eta"] for a in res.tuning["algorithm_spec"]}
    assert etas == {0.001, 10.0}


def test_a_batch_reference_is_not_tuned_and_pairs_with_the_tuned(tmp_path: Path) -> None:
    """libsvm (offline: no online error for the selection rule to read) gets no tuning runs,
    which used to select its defaults every time at full cost; it runs as written on the
    evaluation streams of the tuned learners, so that it pairs with them. A tuned study of
    batch references alone runs too."""
    study = tmp_path / "s.toml"
    study.write_text(
        '[study]\nseeds = [0, 1]\ntune = {method = "random", budget = 3, on = "prefix:0.25"}\n'
        '[[experiment]]\nalgorithms = ["perceptron", "libsvm"]\n'
        'datasets = ["twonorm[n_train=200,n_test=50,d=5]"]\n'
    )
    out = tmp_path / "r"
    proc = kbench("run", str(study), "--workers", "0", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "skipped tuning of libsvm on twonorm" in proc.stderr
    assert "a batch reference has no online error" in proc.stderr
    res = load_results(out)
    assert set(res.tuning["algorithm"]) == {"perceptron"}
    runs = res.runs.set_index(["algorithm", "seed"])
    assert set(runs["window"]) == {"tail:0.25"}
    for seed in (0, 1):
        assert (
            runs.loc[("libsvm", seed), "stream_id"] == runs.loc[("perceptron", seed), "stream_id"]
        )
        assert runs.loc[("libsvm", seed), "status"] == "ok"
    assert runs.loc[("libsvm", 0), "algorithm_spec"].startswith("libsvm[C=1.0")
    assert pd.isna(runs.loc[("libsvm", 0), "tune_group"])
    text = study.read_text().replace('"perceptron", "libsvm"', '"libsvm"')
    assert len(load_results(_run_study(tmp_path, text, "alone")).runs) == 2


def test_tuning_runs_skip_the_held_out_split(tmp_path: Path) -> None:
    """A tuning run is scored by its online error alone: no held-out predictions (most of
    its cost on a large test split); the evaluation runs have their held-out error."""
    out = _run_study(
        tmp_path,
        '[study]\nseeds = [0]\ntune = {method = "random", budget = 2, on = "prefix:0.25"}\n'
        '[[experiment]]\nalgorithms = ["perceptron"]\n'
        'datasets = ["twonorm[n_train=200,n_test=50,d=5]"]\n',
    )
    res = load_results(out)
    assert len(res.tuning) == 2 and res.tuning["test_error"].isna().all()
    assert (res.tuning["test_n"] == 0).all() and res.tuning["online_error"].notna().all()
    assert res.runs["test_error"].notna().all() and (res.runs["test_n"] == 50).all()
