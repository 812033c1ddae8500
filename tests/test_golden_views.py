"""Golden files of the views of a 12 × 6 study with long ids (issue 33): the leaderboards
at 80 and 200 columns and the comparison at 80, drawn from fixed synthetic results, so
that any change to what a reader sees (a cut name, a moved mark, a lost column) shows as
a diff of a file. The results are made here from a seeded generator and kbench draws and
tests them itself: the numbers shown are rounded to 2-4 digits, far coarser than the
last-bit differences another CPU's summation order can make, so the text is the same on
any CPU and BLAS.

After an intended change of the views: ``KBENCH_UPDATE_GOLDEN=1 pytest
tests/test_golden_views.py``, then read the diff of ``tests/golden/`` before committing.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rich.cells import cell_len
from rich.console import Console

from kbench import __version__
from kbench.analysis.comparison import compare
from kbench.analysis.leaderboard import leaderboard_long
from kbench.cli.render import print_comparison, print_leaderboard
from kbench.core.registry import get_registry
from kbench.execution.prequential import RESULTS_FORMAT
from kbench.results.store import Results

GOLDEN = Path(__file__).parent / "golden"

DATASETS = [
    "twonorm[d=20,n_test=60,n_train=120]",
    "drift[angle=90.0,d=2,drift_at=0.5,kind=swap,n_test=60,n_train=120,noise=0.1]",
    "checkerboard[k=4,n_test=60,n_train=120,noise=0.1]",
    "checkerboard[k=2,n_test=60,n_train=120,noise=0.2]",
    "digits[n=120,positive=5-9,scale=minmax,test_size=0.3]",
    "drift[angle=135.0,d=3,drift_at=0.25,kind=rotate,n_test=60,n_train=120,noise=0.05]",
]
#: As a run stores them: every parameter given (the views shorten them).
ALGORITHMS = [
    "perceptron",
    "norma[budget=30,c=0.001,eta=0.5,eta_eps=1.0,margin0=1.0,nu=0.0,nu_rule=log,"
    "offset=True,schedule=constant,tau=100.0]",
    "norma[budget=30,c=0.001,eta=1.0,eta_eps=1.0,margin0=1.0,nu=0.0,nu_rule=log,"
    "offset=True,schedule=decay_tau,tau=1000.0]",
    "norma[budget=30,c=0.0001,eta=1.0,eta_eps=1.0,margin0=1.0,nu=0.0,nu_rule=log,"
    "offset=True,schedule=inv_sqrt,tau=100.0]",
    "norma[budget=30,c=0.01,eta=0.25,eta_eps=1.0,margin0=1.0,nu=0.0,nu_rule=log,"
    "offset=True,schedule=decay_tau,tau=250.0]",
    "norma[budget=30,c=1e-05,eta=2.0,eta_eps=1.0,margin0=1.0,nu=0.0,nu_rule=log,"
    "offset=False,schedule=inv_sqrt,tau=100.0]",
    "forgetron[budget=30]",
    "bpa_s[C=1.0,budget=30]",
    "bogd[budget=30,eta=0.5,lam=0.02,sampling=uniform]",
    "nogd[budget=30,eta=0.1,rank=None,rank_fraction=0.2]",
    "norma[budget=30,c=0.001,eta=0.75,eta_eps=1.0,margin0=1.0,nu=0.0,nu_rule=log,"
    "offset=True,schedule=inv_sqrt,tau=100.0]",
    "bsgd[budget=30,lam=0.0001,maintenance=merge]",
]
N, SEEDS = 300, 3


def synthetic_study() -> Results:
    """12 configurations × 6 data sets × 3 seeds: each example right with the
    configuration's accuracy on that data set; one configuration degenerate on its
    online error, one on its held-out error, everywhere."""
    rng = np.random.default_rng(2026)
    accuracy = rng.uniform(0.55, 0.95, size=(len(ALGORITHMS), len(DATASETS)))
    runs, outcomes = [], []
    for j, stream in enumerate(DATASETS):
        for seed in range(SEEDS):
            sid = f"s{j}-{seed}"
            for i, spec in enumerate(ALGORITHMS):
                tid = f"{sid}-a{i}"
                right = rng.random(N) < accuracy[i, j]
                outcomes.append({"task_id": tid, "stream_id": sid, "outcome": right})
                reason = {
                    6: "online: at the majority-class rate (0.48)",
                    9: "held-out: constant predictions",
                }.get(i, "")
                runs.append(
                    {
                        "task_id": tid,
                        "algorithm": spec.partition("[")[0],
                        "algorithm_spec": spec,
                        "kernel": "rbf[gamma=0.5,sigma=None]",
                        "loss": "hinge" if spec.startswith("norma") else None,
                        "dataset": stream.partition("[")[0],
                        "stream": stream,
                        "stream_seed": seed,
                        "stream_id": sid,
                        "seed": seed,
                        "epochs": 1,
                        "task": "binary",
                        "n": N,
                        "d": 2,
                        "kbench_version": __version__,
                        "results_format": RESULTS_FORMAT,
                        "status": "ok",
                        "reason": "",
                        "online_error": 1 - right.mean(),
                        "test_error": float(np.clip(1 - accuracy[i, j] + 0.01 * seed, 0, 1)),
                        "n_support": 30.0,
                        "kernel_evals": 9000.0 + 10 * i,
                        "time_s": 0.01 * (i + 1),
                        "us_per_example": 3.0 + i,
                        "peak_memory": 4_000_000 + 100_000 * i,
                        "constant_predictions": False,
                        "degenerate": reason,
                    }
                )
    return Results(runs=pd.DataFrame(runs), traces=pd.DataFrame(), outcomes=pd.DataFrame(outcomes))


def drawn(view: str, width: int) -> str:
    """What ``kbench show`` (``leaderboard``) or ``kbench compare`` (``comparison``) draws
    of the synthetic study on a terminal ``width`` columns wide, without colours."""
    console = Console(file=io.StringIO(), record=True, width=width, color_system=None)
    results = synthetic_study()
    if view == "leaderboard":
        print_leaderboard(results.runs, get_registry(), console=console)
    else:
        print_comparison(compare(results, short=get_registry().short), console)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"


@pytest.mark.parametrize(
    ("view", "width"), [("leaderboard", 80), ("leaderboard", 200), ("comparison", 80)]
)
def test_views_match_their_golden_files(view: str, width: int) -> None:
    text = drawn(view, width)
    path = GOLDEN / f"{view}-{width}.txt"
    if os.environ.get("KBENCH_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    # The golden files were read and hold every name whole; the checks say why a diff fails.
    assert [ln for ln in text.splitlines() if cell_len(ln) > width] == []
    assert "…" not in text
    flat = "".join(text.split())
    if view == "leaderboard":  # a label folds within its column: join that column's lines
        flat += "".join(
            ln.split("│")[1].strip().replace(" ", "") for ln in text.splitlines() if ln[:1] == "│"
        )
    labels = leaderboard_long(synthetic_study().runs, get_registry())["configuration"]
    for name in [*set(labels), *DATASETS]:  # as every view labels them
        assert name.replace(" ", "") in flat, name
    assert text == path.read_text(encoding="utf-8"), f"{path.name} differs: see its diff"


def test_golden_check_fails_on_a_cut_name() -> None:
    """The name check can fail: a label cut by an ellipsis is not found whole."""
    flat = "".join(["│", "norma[c=0.001,eta=1.0,offset=…", "│", "0.2", "│"])
    assert "norma[c=0.001,eta=1.0,offset=True]" not in flat
