"""Spec strings: parsing and type coercion from annotations."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import pytest

from kbench.core.errors import DataError, SpecError
from kbench.core.registry import get_registry
from kbench.core.specs import coerce, format_spec, parse_spec, quote_value
from kbench.data.streams import StreamSpec, build_stream, split_stream_options
from kbench.execution.study import Experiment, plan


@pytest.mark.parametrize(
    ("text", "name", "params"),
    [
        ("rbf", "rbf", {}),
        ("rbf[]", "rbf", {}),
        (" norma[ eta = 0.1 , budget=10] ", "norma", {"eta": "0.1", "budget": "10"}),
        ("cosine[base=poly[degree=9],x=1]", "cosine", {"base": "poly[degree=9]", "x": "1"}),
        ("digits[positive=5-9]", "digits", {"positive": "5-9"}),
    ],
)
def test_parse_spec(text: str, name: str, params: dict[str, str]) -> None:
    """Names and raw parameter strings come out; nested brackets stay whole."""
    assert parse_spec(text) == (name, params)


@pytest.mark.parametrize("text", ["", "rbf[gamma", "rbf[gamma]", "rbf[a=1,a=2]", "a b"])
def test_malformed_specs(text: str) -> None:
    """Malformed specs raise SpecError."""
    with pytest.raises(SpecError):
        parse_spec(text)


@pytest.mark.parametrize(
    ("raw", "annotation", "expected"),
    [
        ("3", int, 3),
        ("3.0", int, 3),
        ("0.5", float, 0.5),
        ("1e-3", float, 0.001),
        ("true", bool, True),
        ("No", bool, False),
        ("none", float | None, None),
        ("2", float | None, 2.0),
        ("inv_sqrt", Literal["constant", "inv_sqrt"], "inv_sqrt"),
        ("x", str, "x"),
        (7, float, 7.0),
    ],
)
def test_coerce(raw: object, annotation: object, expected: object) -> None:
    """Values are converted to the annotated type."""
    value = coerce(raw, annotation, "here")
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(
    ("raw", "annotation", "message"),
    [
        ("3.5", int, "expected an integer"),
        ("maybe", bool, "expected true or false"),
        ("fast", Literal["constant", "inv_sqrt"], "is not one of constant, inv_sqrt"),
        ("inv_sqr", Literal["constant", "inv_sqrt"], "did you mean 'inv_sqrt'"),
        (True, float, "expected a number"),
    ],
)
def test_coerce_errors(raw: object, annotation: object, message: str) -> None:
    """Bad values raise SpecError saying what was expected."""
    with pytest.raises(SpecError, match=message):
        coerce(raw, annotation, "here")


# ---------------------------------------------------------------------------------------------
# Balanced brackets and quoting
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "params"),
    [
        ('csv[path="a,b[1].csv"]', {"path": "a,b[1].csv"}),
        ("csv[path='a,b[1].csv',label=class]", {"path": "a,b[1].csv", "label": "class"}),
        (r'csv[path="say \"hi\".csv"]', {"path": 'say "hi".csv'}),
        (r"csv[path='it\'s.csv']", {"path": "it's.csv"}),
        (r'csv[path="back\\slash"]', {"path": "back\\slash"}),
        ('csv[path=" padded "]', {"path": " padded "}),
        ('csv[path=""]', {"path": ""}),
        # A quoted value inside a nested spec stays as written, quotes and all, for the inner parse.
        ('active_margin[base=x[path="a,b"],width=1]', {"base": 'x[path="a,b"]', "width": "1"}),
    ],
)
def test_quoted_values(text: str, params: dict[str, str]) -> None:
    """A quoted value may hold commas, brackets, quotes and backslashes."""
    assert parse_spec(text)[1] == params


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rbf[gamma=(1]", "']' at position 12 closes '('"),
        ("rbf[gamma=[1]", "1 unclosed bracket"),
        ("digits[positive=1", "1 unclosed bracket"),
        ("rbf[gamma=1]]", "unexpected ']' after the closing ']'"),
        ("rbf[gamma=1]x", "unexpected 'x' after the closing ']'"),
        ("rbf[gamma=1)]", "')' at position 11 closes '['"),
        ('csv[path="a.csv]', 'the quote " at position 9 is not closed'),
        ('csv[path="a"b]', "unexpected 'b' after the quoted value"),
        ("rbf[gam ma=1]", "malformed parameter name 'gam ma'"),
        ("rbf[=1]", "malformed parameter '=1'"),
    ],
)
def test_unbalanced_or_unclosed_specs_are_refused(text: str, message: str) -> None:
    """Unbalanced brackets, unclosed quotes and trailing text are one-line errors."""
    with pytest.raises(SpecError, match=re.escape(message)) as info:
        parse_spec(text)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("a.csv", "a.csv"),
        ("", ""),
        ("5-9", "5-9"),
        ("poly[degree=9]", "poly[degree=9]"),  # a nested spec needs no quotes
        ("a,b[1].csv", '"a,b[1].csv"'),
        ("x(", '"x("'),
        ('say "hi"', 'say "hi"'),  # quotes inside a raw value are kept as written
        ('"hi"', r'"\"hi\""'),  # a leading quote would be read as quoting
        ("it's", '"it\'s"'),
        (" padded", '" padded"'),
    ],
)
def test_values_are_quoted_only_when_they_must_be(value: str, written: str) -> None:
    """format_spec writes a value raw when it can; parsing gives the value back either way."""
    assert quote_value(value) == written
    assert parse_spec(format_spec("csv", {"path": value})) == ("csv", {"path": value})


def test_canonical_specs_and_task_ids_are_unchanged_by_quoting() -> None:
    """Specs that need no quotes keep the canonical form and task ids they had before quoting
    existed, so existing results still resume; the ids below were computed by that version."""
    reg = get_registry()
    exp = Experiment(
        algorithms=[
            "perceptron",
            "norma[eta=0.5,budget=100]",
            "active_margin[base=perceptron,width=0.5]",
        ],
        datasets=[
            "digits[positive=5-9,scale=minmax,test_size=0.3,n=400]",
            "csv[path=data/a.csv,label=class]",
        ],
        kernels=["rbf[gamma=0.05]", "cosine[base=poly[degree=3]]"],
        seeds=[0],
    )
    ids = {t.task_id for t in plan([exp], reg).tasks}
    assert ids == {
        "415a029dd63ee7177159", "43498a13f8f5ab8c55a7", "47b4a3ac6b9fbff1344d",
        "5cf202e9ae3af02796b8", "6110d9dd8fc37f8108ee", "6770fff13d5eed0eecd2",
        "875c6ef605370e856053", "914c14f517d50bedff3f", "978c3f35319a9bc9e855",
        "9893abce8951e1895728", "bff4c21178450a5786d8", "ca230565eac8c960ebd3",
    }  # fmt: skip
    assert reg.canonical("kernel", "cosine[base=poly[degree=3]]") == (
        "cosine[base=poly[degree=3,offset=1.0,scale=1.0]]"
    )


def test_a_path_with_commas_and_brackets_is_read(tmp_path: Path) -> None:
    """A quoted path reaches the reader whole, and its canonical spec quotes it again."""
    data = tmp_path / "a,b[1].csv"
    data.write_text("".join(f"{i},{i % 3},{1 if i % 2 else -1}\n" for i in range(20)))
    reg = get_registry()
    spec = f'csv[path="{data}"]'
    canonical = reg.canonical("dataset", spec)
    assert f'path="{data}"' in canonical
    (task,) = plan([Experiment(algorithms=["perceptron"], datasets=[spec])], reg).tasks
    stream = build_stream(task.stream, reg)
    assert stream.n == 20 and set(stream.y.tolist()) == {-1.0, 1.0}
    assert "a,b[1].csv" in task.stream.label


# ---------------------------------------------------------------------------------------------
# A classification data set needs two classes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "spec", "message"),
    [
        ([1, 1, 1, 1], "csv[path={}]", "every training example has the label '1'; a binary task"),
        ([0, 0, 0, 0], "csv[path={}]", "every training example has the label '0'; a binary task"),
        (["b"] * 4, "csv[path={},task=multiclass]", "the label 'b'; a multiclass task"),
        ([1, -1, 1, -1], "csv[path={}]", None),
        ([1, 1, 1, 1], "csv[path={},task=regression]", None),  # regression has no classes
    ],
)
def test_fewer_than_two_classes_is_refused(
    tmp_path: Path, labels: list, spec: str, message: str | None
) -> None:
    """A binary or multiclass stream whose training examples hold one class is a DataError
    naming the data set (before this check such a data set ran and gave meaningless errors)."""
    data = tmp_path / "one.csv"
    data.write_text("".join(f"{i},{i * i},{lab}\n" for i, lab in enumerate(labels)))
    reg = get_registry()
    dataset, options = split_stream_options(spec.format(data))
    stream = StreamSpec(dataset=reg.canonical("dataset", dataset), **options)
    if message is None:
        assert build_stream(stream, reg).n == 4
        return
    with pytest.raises(DataError) as info:
        build_stream(stream, reg)
    text = str(info.value)
    assert message in text and str(data) in text and "\n" not in text


def test_positive_leaving_one_class_is_refused(tmp_path: Path) -> None:
    """After positive= groups the classes, the training examples must still hold both."""
    data = tmp_path / "three.csv"
    # Label 3 appears only in the test file: grouping labels 1 and 2 (codes 0 and 1) leaves
    # every training example +1.
    data.write_text("".join(f"{i},{i},{1 + i % 2}\n" for i in range(6)))
    test = tmp_path / "test.csv"
    test.write_text("0,0,3\n1,1,1\n")
    reg = get_registry()
    dataset = reg.canonical("dataset", f"csv[path={data},test_path={test},task=multiclass]")
    with pytest.raises(DataError, match=r"has the label \+1 after positive=0\|1; a binary task"):
        build_stream(StreamSpec(dataset=dataset, positive="0|1"), reg)
