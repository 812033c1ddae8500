"""Parse and build component spec strings such as ``norma[eta=0.1,budget=200]``."""

from __future__ import annotations

import difflib
import re
import types
import typing
from typing import Any, Literal

from kbench.errors import SpecError

_SPEC = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:\[(.*)\])?\s*$", re.S)


def parse_spec(text: str) -> tuple[str, dict[str, str]]:
    """Split ``name[a=1,b=x]`` into its name and raw parameter strings."""
    m = _SPEC.match(text)
    if not m:
        raise SpecError(f"malformed spec {text!r}: expected name or name[param=value,...]")
    name, body = m.group(1), m.group(2)
    params: dict[str, str] = {}
    if body is not None and body.strip():
        for item in _split_top_level(body):
            if "=" not in item:
                raise SpecError(
                    f"malformed parameter {item.strip()!r} in {text!r}: expected param=value"
                )
            key, value = item.split("=", 1)
            key = key.strip()
            if key in params:
                raise SpecError(f"parameter {key!r} given twice in {text!r}")
            params[key] = value.strip()
    return name, params


def _split_top_level(body: str) -> list[str]:
    """Split on commas that are not inside brackets or parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return [p for p in parts if p.strip()]


def suggest(word: str, choices: typing.Iterable[str]) -> str:
    """A ' (did you mean X?)' suffix naming the closest choice, or ''."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def coerce(raw: Any, annotation: Any, where: str) -> Any:
    """Convert a raw value (a string from a spec, or a TOML value) to the annotated type."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(annotation)
        if type(None) in args and (
            raw is None or (isinstance(raw, str) and raw.lower() in ("none", "null", ""))
        ):
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return coerce(raw, arg, where)
            except SpecError as exc:
                errors.append(str(exc))
        raise SpecError(
            errors[0] if len(errors) == 1 else f"{where}: cannot read {raw!r} as {annotation}"
        )
    if origin is Literal:
        choices = typing.get_args(annotation)
        for choice in choices:
            if raw == choice or str(raw) == str(choice):
                return choice
        raise SpecError(
            f"{where}: {raw!r} is not one of {', '.join(map(str, choices))}{suggest(str(raw), map(str, choices))}"
        )
    if annotation is bool:
        if isinstance(raw, bool):
            return raw
        if str(raw).lower() in _TRUE:
            return True
        if str(raw).lower() in _FALSE:
            return False
        raise SpecError(f"{where}: expected true or false, got {raw!r}")
    if annotation is int:
        if isinstance(raw, bool):
            raise SpecError(f"{where}: expected an integer, got {raw!r}")
        if isinstance(raw, int):
            return raw
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise SpecError(f"{where}: expected an integer, got {raw!r}") from None
        if not value.is_integer():
            raise SpecError(f"{where}: expected an integer, got {raw!r}")
        return int(value)
    if annotation is float:
        if isinstance(raw, bool):
            raise SpecError(f"{where}: expected a number, got {raw!r}")
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise SpecError(f"{where}: expected a number, got {raw!r}") from None
    if annotation is str:
        return str(raw)
    raise SpecError(f"{where}: parameters of type {annotation!r} cannot be set from a spec")
