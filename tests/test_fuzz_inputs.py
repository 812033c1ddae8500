"""Fuzzing the user-facing parsers: spec strings, study files and the command line.

Whatever the input, kbench answers with its own one-line error (a KbenchError), never
another exception and never a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import SCRIPTS, script
from kbench.core.errors import KbenchError, SpecError
from kbench.core.registry import get_registry
from kbench.core.specs import parse_spec
from kbench.execution.study import Experiment, load_study, plan

NAMES = ["perceptron", "norma", "rbf", "poly", "linear", "hinge", "digits", "a9a", "x"]
PARAMS = [
    "eta",
    "gamma",
    "budget",
    "degree",
    "c",
    "positive",
    "n",
    "scale",
    "order",
    "schedule",
    "q",
]
VALUES = [
    "1",
    "-1",
    "0",
    "0.5",
    "1e400",
    "nan",
    "inf",
    "true",
    "abc",
    "",
    "5-9",
    "minmax",
    "none",
    "[1]",
    "(",
    "]",
]

spec_like = st.one_of(
    st.text(max_size=40),
    st.builds(
        lambda n, items: n + "[" + ",".join(f"{k}={v}" for k, v in items) + "]",
        st.sampled_from(NAMES),
        st.lists(st.tuples(st.sampled_from(PARAMS), st.sampled_from(VALUES)), max_size=3),
    ),
    st.builds(
        lambda n, junk: n + junk, st.sampled_from(NAMES), st.text(alphabet="[]=,() ab1", max_size=8)
    ),
)
FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(text=st.text(max_size=60))
def test_parse_spec_only_raises_spec_error(text: str) -> None:
    """Any text either parses or raises SpecError."""
    try:
        name, params = parse_spec(text)
    except SpecError as exc:
        assert "\n" not in str(exc)
        return
    assert isinstance(name, str) and all(isinstance(v, str) for v in params.values())


@FUZZ
@given(kind=st.sampled_from(["algorithm", "kernel", "loss", "dataset"]), text=spec_like)
def test_create_only_raises_spec_error(kind: str, text: str) -> None:
    """Any spec either builds a component or raises a one-line SpecError."""
    reg = get_registry()
    context = (
        {"kernel": reg.create("kernel", "rbf"), "loss": reg.create("loss", "hinge")}
        if kind == "algorithm"
        else {}
    )
    try:
        reg.create(kind, text, **context)
    except SpecError as exc:
        assert str(exc) and "\n" not in str(exc)


@FUZZ
@given(algorithm=spec_like, dataset=spec_like, kernel=spec_like)
def test_plan_only_raises_kbench_errors(algorithm: str, dataset: str, kernel: str) -> None:
    """Planning a study from arbitrary specs raises nothing but KbenchError."""
    try:
        plan(
            [Experiment(algorithms=[algorithm], datasets=[dataset], kernels=[kernel])],
            get_registry(),
        )
    except KbenchError as exc:
        assert "\n" not in str(exc)


toml_value = st.recursive(
    st.one_of(
        st.integers(-3, 10**6),
        st.floats(allow_nan=False),
        st.booleans(),
        st.text(max_size=10),
        st.sampled_from(["perceptron", "digits", "rbf", "norma[eta=2]", "a9a[n=5]"]),
    ),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=6,
)
KEYS = [
    "algorithms",
    "datasets",
    "kernels",
    "losses",
    "seeds",
    "n",
    "epochs",
    "checkpoints",
    "test_max",
    "name",
    "bogus",
]


#: The fuzz script's TOML writer: a value as TOML text.
_toml = script("fuzz_inputs")._toml


@FUZZ
@given(
    study=st.dictionaries(st.sampled_from(KEYS), toml_value, max_size=5),
    experiments=st.lists(
        st.dictionaries(st.sampled_from(KEYS), toml_value, max_size=5), max_size=2
    ),
    junk=st.text(max_size=30),
)
def test_study_files_only_raise_kbench_errors(
    tmp_path: Path, study: dict, experiments: list, junk: str
) -> None:
    """Random study files, well-formed TOML or not, give a KbenchError or a valid plan."""
    text = "[study]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in study.items())
    for exp in experiments:
        text += "[[experiment]]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in exp.items())
    for body in (text, text + junk):
        path = tmp_path / "study.toml"
        path.write_text(body)
        try:
            plan(load_study(path), get_registry())
        except KbenchError as exc:
            assert "\n" not in str(exc).strip() or "TOML" in str(exc)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(algorithm=spec_like, dataset=spec_like)
def test_cli_answers_bad_specs_with_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    algorithm: str,
    dataset: str,
) -> None:
    """The command line turns every bad spec into `kbench: error: ...` and exit status 2."""
    from kbench.cli import main as cli

    monkeypatch.setattr(
        sys,
        "argv",
        [
            "kbench",
            "run",
            "-a",
            algorithm,
            "-d",
            dataset,
            "--n",
            "20",
            "--workers",
            "0",
            "--no-memory",
            "--no-report",
            "--out",
            str(tmp_path / "r"),
        ],
    )
    try:
        cli.main()
        code = 0
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if code == 2:
        errors = [ln for ln in err.splitlines() if ln.startswith("kbench: error:")]
        assert len(errors) == 1, err
    else:
        assert code in (0, 1), err


# ---------------------------------------------------------------------------------------------
# Quoting round-trips; study files with misspelt tables; option values; the fuzz script
# ---------------------------------------------------------------------------------------------

_keys = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)


@FUZZ
@given(params=st.dictionaries(_keys, st.text(max_size=12), max_size=4))
def test_format_then_parse_gives_the_values_back(params: dict[str, str]) -> None:
    """Whatever the values hold (commas, brackets, quotes, backslashes, spaces), writing a spec
    with format_spec and parsing it gives them back; a value is quoted only when it must be."""
    from kbench.core.specs import format_spec, quote_value

    text = format_spec("csv", params)
    assert parse_spec(text) == ("csv", params)
    for value in params.values():
        if value == value.strip() and not set(value) & set(",[]()\"'"):
            assert quote_value(value) == value


@FUZZ
@given(
    table=st.sampled_from(["experimnet", "experiments", "stduy", "Study", "exp"]),
    key=st.sampled_from(["algoritms", "dataset", "seed", "kernel", "epoch", "out"]),
)
def test_misspelt_tables_and_keys_are_refused(tmp_path: Path, table: str, key: str) -> None:
    """A misspelt table or key is a one-line KbenchError naming it, never silently ignored."""
    base = '[[experiment]]\nalgorithms = ["perceptron"]\ndatasets = ["digits"]\n'
    for text, name in ((f"{base}[[{table}]]\nx = 1\n", table), (f"{base}{key} = 1\n", key)):
        path = tmp_path / "study.toml"
        path.write_text(text)
        with pytest.raises(KbenchError) as info:
            plan(load_study(path), get_registry())
        assert repr(name) in str(info.value) and "\n" not in str(info.value)


_option_values = {
    "--timeout": st.one_of(st.floats(), st.sampled_from(["nan", "inf", "-inf", "1e999", "x"])),
    "--max-memory": st.one_of(
        st.from_regex(r"-?[0-9]{0,22}(\.[0-9]{0,3})?(e[0-9]{1,3})? ?[kKmMgGtTpP]?(i?[bB])?", fullmatch=True),
        st.text(max_size=5),
    ),
    "--workers": st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=4)),
    "--seeds": st.one_of(
        st.builds(lambda a, b: f"{a}-{b}", st.integers(-5, 2**40), st.integers(-5, 2**40)),
        st.text(alphabet="0123456789-, ", max_size=12),
    ),
    "--scheduler": st.one_of(st.text(max_size=20), st.from_regex(r"[a-z]{0,4}://[a-z:\[\]0-9]{0,10}", fullmatch=True)),
    "--out": st.sampled_from(["", " ", "\t"]),
}  # fmt: skip


def _seed_count(text: str) -> int:
    """How many seeds ``text`` names if it is valid (0 when it is not), without expanding it."""
    count = 0
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            return 0
        count += int(hi) - int(lo) + 1 if sep else 1
    return count


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    options=st.lists(
        st.sampled_from(sorted(_option_values)).flatmap(
            lambda o: st.tuples(st.just(o), _option_values[o].map(str))
        ),
        min_size=1,
        max_size=3,
        unique_by=lambda t: t[0],
    )
)
def test_option_values_give_a_kbench_or_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: list[tuple[str, str]]
) -> None:
    """In-process `kbench run` with generated option values either runs or raises kbench's own
    one-line error or a click usage error; the valid values run a 5-example stream."""
    import click
    from hypothesis import assume

    from kbench.cli.main import cli

    # A valid seed list of up to 10^6 seeds is accepted and would run that many tasks here:
    # keep the valid ones small (invalid ones, huge ranges included, are what is fuzzed).
    assume(_seed_count(dict(options).get("--seeds", "0")) <= 20)
    monkeypatch.chdir(tmp_path)
    args = ["run", "-a", "perceptron", "-d", "digits[n=5]", "--no-report", "--no-memory"]
    for option, value in options:
        args += [option, value]
    if "--workers" not in dict(options):
        args += ["--workers", "0"]
    if "--out" not in dict(options):
        args += ["--out", str(tmp_path / "r")]
    try:
        cli.main(args, standalone_mode=False)
    except KbenchError as exc:
        assert "\n" not in str(exc)
    except click.UsageError as exc:
        assert exc.exit_code == 2
    except SystemExit as exc:
        assert exc.code in (0, 1)


def test_fuzz_script_finds_no_tracebacks(tmp_path: Path) -> None:
    """scripts/fuzz_inputs.py runs its targets and reports 0 tracebacks (a short run here; the
    script's default is 2 400 cases)."""
    import subprocess

    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "fuzz_inputs.py"), "--cases", "240", "--seed", "3"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    total = next(ln for ln in proc.stdout.splitlines() if ln.startswith("total"))
    assert int(total.split()[1]) >= 200 and total.split()[3] == "0", proc.stdout
    assert {ln.split()[0] for ln in proc.stdout.splitlines()} >= {
        "spec", "toml", "libsvm", "csv", "idx", "cli", "total"
    }  # fmt: skip
    # Whatever --out the CLI cases gave, nothing but hypothesis's own folder lands here.
    assert [p.name for p in tmp_path.iterdir() if p.name != ".hypothesis"] == []
