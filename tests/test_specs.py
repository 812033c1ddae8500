"""Spec strings: parsing and type coercion from annotations."""

from __future__ import annotations

from typing import Literal

import pytest

from kbench.errors import SpecError
from kbench.specs import coerce, parse_spec


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
