"""Short labels for algorithm specs (issue 33): ``-a "pa[C=1]@PA"`` on the command line,
``{spec = ..., label = ...}`` in a study file, carried in the results and used by every
view and export; a bad label is one line, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from helpers import kbench, kbench_run
from kbench.core.errors import SpecError
from kbench.core.specs import Spec, check_labels, split_label

DIGITS = "digits[positive=5-9,scale=minmax,test_size=0.3,n=300]"


def test_spec_value_parses_its_label() -> None:
    s = Spec.parse("pa[C=1]@PA")
    assert (s.name, s.params, s.label, s.text, s.shown) == (
        "pa",
        (("C", "1"),),
        "PA",
        "pa[C=1]",
        "PA",
    )
    plain = Spec.parse("norma[eta=0.5]")
    assert plain.label is None and plain.shown == "norma[eta=0.5]"
    # an @ inside brackets or quotes belongs to a value, not to a label
    assert split_label('x[path="a@b"]') == ('x[path="a@b"]', None)
    assert split_label("ovr[base=pa[C=1]]@OvR PA") == ("ovr[base=pa[C=1]]", "OvR PA")


@pytest.mark.parametrize("text", ["pa@", "pa@  ", "pa[C=1]@\tx\x1b[0m", "pa@" + "L" * 41])
def test_bad_labels_are_one_line_spec_errors(text: str) -> None:
    with pytest.raises(SpecError) as err:
        Spec.parse(text)
    assert "\n" not in str(err.value) and "label" in str(err.value)


def test_one_label_per_spec_and_spec_per_label() -> None:
    assert check_labels([("a", "A"), ("a", "A"), ("b", "B")]) == {"a": "A", "b": "B"}
    with pytest.raises(SpecError, match="given to two specs"):
        check_labels([("a", "A"), ("b", "A")])
    with pytest.raises(SpecError, match="two labels"):
        check_labels([("a", "A"), ("a", "B")])


def test_labels_reach_results_and_every_view(tmp_path: Path) -> None:
    out = tmp_path / "r"
    proc = kbench_run(
        out,
        *("-a", "perceptron@PER", "-a", "norma[eta=0.5,c=0.001,budget=100]@NORMA-100"),
        *("-k", "rbf[gamma=0.05]", "-d", DIGITS, "--seeds", "0-1"),
    )
    assert "PER" in proc.stdout and "NORMA-100" in proc.stdout
    assert "norma[" not in proc.stdout  # the label stands for the spec
    runs = pd.read_parquet(out / "runs.parquet")
    assert set(runs["algorithm_label"]) == {"PER", "NORMA-100"}
    assert json.loads((out / "labels.json").read_text()) == {
        s: lab for s, lab in zip(runs["algorithm_spec"], runs["algorithm_label"], strict=True)
    }
    views = {
        "show": kbench("show", str(out)),
        "show-csv": kbench("show", str(out), "--format", "csv"),
        "compare": kbench("compare", str(out)),
        "compare-json": kbench("compare", str(out), "--format", "json"),
        "compare-md": kbench("compare", str(out), "--format", "markdown"),
    }
    for name, v in views.items():
        assert v.returncode == 0, (name, v.stderr)
        assert "PER" in v.stdout and "NORMA-100" in v.stdout, name


def test_study_file_labels(tmp_path: Path) -> None:
    study = tmp_path / "s.toml"
    study.write_text(
        "[study]\nseeds = [0]\n[[experiment]]\n"
        f'datasets = ["{DIGITS}"]\nkernels = ["rbf[gamma=0.05]"]\n'
        'algorithms = [{spec = "perceptron", label = "P"}, "norma[budget=50]@N50"]\n'
    )
    proc = kbench("run", str(study), "--workers", "0", "--out", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(tmp_path / "r" / "runs.parquet")
    assert set(runs["algorithm_label"]) == {"P", "N50"}


@pytest.mark.parametrize(
    ("algorithms", "message"),
    [
        (["perceptron@P", "norma@P"], "given to two specs"),
        (["perceptron@"], "empty label"),
        (["perceptron@A", "perceptron@B"], "two labels"),
    ],
)
def test_bad_label_exits_2_writing_nothing(
    tmp_path: Path, algorithms: list[str], message: str
) -> None:
    out = tmp_path / "r"
    args = [x for a in algorithms for x in ("-a", a)]
    proc = kbench("run", *args, "-d", DIGITS, "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("kbench: error:")]
    assert len(errors) == 1 and message in errors[0]
    assert not out.exists()


def test_label_taken_by_another_spec_in_the_folder_exits_2(tmp_path: Path) -> None:
    out = tmp_path / "r"
    first = kbench("run", "-a", "perceptron@X", "-d", DIGITS, "--seeds", "0", "--out", str(out))
    assert first.returncode == 0, first.stderr
    before = sorted(p.name for p in (out / "tasks").iterdir())
    again = kbench(
        "run", "-a", "norma[budget=50]@X", "-d", DIGITS, "--seeds", "0", "--out", str(out)
    )
    assert again.returncode == 2 and "given to two specs" in again.stderr
    assert sorted(p.name for p in (out / "tasks").iterdir()) == before
