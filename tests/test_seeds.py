"""Seeds per purpose: a study seed reaches no plugin as it is; the data, the split, the order,
the learner and each sub-learner draw from independent streams derived from it; the
derivation is the documented one; results stay bit-identical run to run."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import kbench
from kbench.core import seeds
from kbench.core.registry import get_registry
from kbench.core.seeds import child_seed, derive_seed
from kbench.data.streams import StreamSpec, build_stream
from kbench.execution.prequential import make_algorithm
from kbench.execution.study import Experiment
from kbench.execution.tasks import Task


def fogd_on(dataset: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """FOGD's frequencies (d × D) as a task of ``seed`` builds them, and the data set's
    arrays as its generator drew them (before any stream option)."""
    reg = get_registry()
    spec = StreamSpec(dataset=dataset, seed=seed)
    stream = build_stream(spec, reg)
    task = Task(algorithm="fogd", kernel="rbf[gamma=0.5]", loss="hinge", stream=spec, seed=seed)
    algo = make_algorithm(task, stream, reg)
    algo.features(np.asarray(stream.X[0]))  # draws the frequencies
    raw = reg.create("dataset", dataset).load(derive_seed(seed, "data"))
    return algo._Omega, np.asarray(raw.X)


def test_fogd_frequencies_are_not_the_data_rows() -> None:
    """With one seed for everything, FOGD's N(0, 2γ) frequencies at γ = 0.5 were exactly the
    first 400 rows of ``drift`` at seed 0 (both drew standard normals from default_rng(0))."""
    omega, X = fogd_on("drift", 0)
    assert omega.shape == (2, 400)
    assert not np.allclose(omega.ravel(), X.ravel()[: omega.size])
    assert not np.isin(omega.ravel(), X.ravel()).any()


def test_learner_and_data_draws_are_uncorrelated_over_seeds() -> None:
    """Over 20 seeds, the correlation of FOGD's frequencies with the data's first draws is
    at chance. Under independence each r is about N(0, 1/m) with m = 800 draws: the mean
    of 20 has sd 0.0079 and every |r| stays within 5 sd (0.18); with one seed for both,
    every r was 1. (The draws are fixed by the seeds: the test does not flake.)"""
    rs = []
    for seed in range(20):
        omega, X = fogd_on("drift", seed)
        m = omega.size
        rs.append(np.corrcoef(omega.ravel(), X.ravel()[:m])[0, 1])
    rs_arr = np.array(rs)
    assert abs(rs_arr.mean()) < 4 * np.sqrt(1 / (20 * 800))
    assert np.abs(rs_arr).max() < 5 / np.sqrt(800)


@pytest.mark.parametrize("reduction", ["ovr", "ovo"])
def test_sub_learner_seeds_are_never_another_tasks_seed(reduction: str) -> None:
    """A reduction's sub-learners got ``seed + i``: the next task's seed. Now each is
    derived from the reduction's own seed, and none of 200 study seeds' sub-learners (10
    classes: 10 or 45 of them) has the learner or data seed of any task."""
    reg = get_registry()
    kernel = reg.create("kernel", "rbf")
    task_seeds = {derive_seed(s, p) for s in range(200) for p in ("learner", "data")}
    subs = []
    for s in range(200):
        algo = reg.create(
            "algorithm",
            f"{reduction}[base=perceptron]",
            kernel=kernel,
            task="multiclass",
            n_classes=10,
            seed=derive_seed(s, "learner"),
        )
        algo.learn_one(np.zeros(3), 0)  # builds its learners
        subs += [learner.seed for learner in algo.learners]
    assert len(subs) == 200 * (10 if reduction == "ovr" else 45)
    assert not task_seeds & set(subs)
    assert len(set(subs)) == len(subs)


def test_purposes_are_distinct_streams() -> None:
    """Each purpose of one seed is its own stream, and seeds are unsigned 32-bit."""
    values = {p: derive_seed(7, p) for p in seeds.PURPOSES}
    assert len(set(values.values())) == len(values)
    assert all(0 <= v < 2**32 for v in values.values())
    assert child_seed(5, 0) != child_seed(5, 1) != child_seed(6, 0)
    with pytest.raises(ValueError, match="unknown seed purpose 'model'"):
        derive_seed(0, "model")


def test_a_stream_is_rebuilt_from_its_seed_alone_as_documented() -> None:
    """docs/streams.md: the order of a shuffled stream is
    ``default_rng(SeedSequence(seed, spawn_key=(3,))).permutation(n)``, the held-out split
    ``...spawn_key=(2,)``, and a generator's ``load`` gets the first 32-bit word of
    ``SeedSequence(seed, spawn_key=(1,))``: written here with NumPy alone."""
    reg = get_registry()
    raw = reg.create("dataset", "digits").load(0)
    stream = build_stream(StreamSpec(dataset="digits", seed=11), reg)
    order = np.random.default_rng(np.random.SeedSequence(11, spawn_key=(3,)))
    perm = order.permutation(len(raw.y))
    assert np.array_equal(stream.y, raw.y[perm])
    assert np.array_equal(stream.X, raw.X[perm])

    split = build_stream(StreamSpec(dataset="digits", seed=11, test_size=0.25), reg)
    n, n_test = len(raw.y), round(0.25 * len(raw.y))
    held = np.random.default_rng(np.random.SeedSequence(11, spawn_key=(2,))).permutation(n)
    test_rows, rows = held[:n_test], held[n_test:]
    shuffle = np.random.default_rng(np.random.SeedSequence(11, spawn_key=(3,)))
    rows = rows[shuffle.permutation(len(rows))]
    assert np.array_equal(split.y_test, raw.y[test_rows])
    assert np.array_equal(split.y, raw.y[rows])

    word = int(np.random.SeedSequence(4, spawn_key=(1,)).generate_state(1, np.uint32)[0])
    gen = build_stream(StreamSpec(dataset="checkerboard[n_train=300]", seed=4, order="file"), reg)
    direct = reg.create("dataset", "checkerboard[n_train=300]").load(word)
    assert np.array_equal(gen.X, direct.X) and np.array_equal(gen.y, direct.y)


def _tables(out, workers: int) -> pd.DataFrame:
    exp = Experiment(
        algorithms=["fogd[D=64]", "rbp[budget=20]", "bogd[budget=20]", "ovr[base=rbp[budget=10]]"],
        datasets=["digits[n=300,test_size=0.2]", "digits[positive=5-9,n=300,test_size=0.2]"],
        kernels=["rbf[gamma=0.02]"],
        seeds=[0, 1],
    )
    res = kbench.run(exp, out=out, workers=workers, force=True)
    assert set(res.runs["algorithm"]) == {"fogd", "rbp", "bogd", "ovr"}
    cols = ["stream_id", "online_error", "test_error", "mistakes", "n_support"]
    return res.runs.set_index("task_id").sort_index()[cols]


def test_same_seed_same_results_on_one_or_two_workers(tmp_path) -> None:
    """Run to run, in-process, on one worker and on two: bit-identical tables (the
    randomized learners included); Dask is held to the same in test_dask_streams."""
    first = _tables(tmp_path / "a", 0)
    pd.testing.assert_frame_equal(first, _tables(tmp_path / "b", 1), check_exact=True)
    pd.testing.assert_frame_equal(first, _tables(tmp_path / "c", 2), check_exact=True)
    assert first["online_error"].notna().all()


def _as_format_1(folder) -> int:
    """Rewrite every task file of ``folder`` as kbench wrote it before results formats:
    its run record without ``results_format``. Returns the number of files."""
    import json

    import pyarrow.parquet as pq

    from kbench.results.store import RUN_KEY

    files = sorted((folder / "tasks").glob("*.parquet"))
    for path in files:
        table = pq.read_table(path)
        meta = dict(table.schema.metadata)
        run = json.loads(meta[RUN_KEY])
        del run["results_format"]
        meta[RUN_KEY] = json.dumps(run).encode()
        pq.write_table(table.replace_schema_metadata(meta), path)
    return len(files)


def test_results_of_format_1_are_refused_and_rerun(tmp_path) -> None:
    """Results written before seeds were split by purpose (format 1) are another
    experiment: compare and show refuse them in one line naming the format (exit 2), and
    the same study resumed into their folder runs them again."""
    from helpers import kbench as cli

    out = tmp_path / "r"
    args = ["run", "-a", "perceptron", "-a", "norma", "-d", "checkerboard[n_train=200]"]
    args += ["--seeds", "0-1", "--workers", "0", "--no-report", "--out", str(out)]
    first = cli(*args)
    assert first.returncode == 0, first.stderr
    assert _as_format_1(out) == 4
    for command in ("compare", "show"):
        proc = cli(command, str(out))
        assert proc.returncode == 2, (command, proc.stdout, proc.stderr)
        line = proc.stderr.strip()
        assert "\n" not in line and "4 of 4 runs were written in results format 1" in line
    again = cli(*args)
    assert again.returncode == 0, again.stderr
    assert "4 tasks run again: written in results format 1, this kbench writes format 2" in (
        " ".join(again.stderr.split())
    )
    assert cli("compare", str(out)).returncode == 0
