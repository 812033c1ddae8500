"""Parse and build component spec strings such as ``norma[eta=0.1,budget=200]``.

The grammar (docs/streams.md has it with examples)::

    spec   = name [ "[" [ param { "," param } ] "]" ]
    param  = key "=" value
    value  = quoted | raw
    quoted = '"' { char | "\\" char } '"' | "'" { char | "\\" char } "'"
    raw    = text whose brackets ([] and ()) balance, with no "," outside them

A raw value is kept as written (so a nested spec such as ``base=poly[degree=9]`` stays
whole); a quoted value may hold anything, a backslash making the next character
literal. :func:`quote_value` quotes a value only when it must, so every spec that
needs no quoting keeps its canonical form (and its task ids).
"""

from __future__ import annotations

import difflib
import itertools
import re
import types
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from kbench.core.errors import SpecError

_NAME = re.compile(r"\s*([A-Za-z0-9_.\-]+)\s*")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUOTES = "\"'"
_CLOSER = {"[": "]", "(": ")"}
#: Characters that may make a value need quotes; values without them never do.
_SPECIAL = frozenset(",[]()\"'")


def parse_spec(text: str) -> tuple[str, dict[str, str]]:
    """Split ``name[a=1,b=x]`` into its name and raw parameter strings.

    Quoted values come back unquoted; raw values (nested specs included) as written.
    Raises SpecError, on one line, for anything that does not follow the grammar.
    """
    if not isinstance(text, str):
        raise SpecError(f"a spec must be a string, got {text!r}")
    m = _NAME.match(text)
    if not m:
        raise SpecError(f"malformed spec {text!r}: expected name or name[param=value,...]")
    name, i = m.group(1), m.end()
    params: dict[str, str] = {}
    if i == len(text):
        return name, params
    if text[i] != "[":
        raise SpecError(f"malformed spec {text!r}: expected name or name[param=value,...]")
    end, commas = _scan_body(text, i + 1)
    if text[end + 1 :].strip():
        raise SpecError(
            f"malformed spec {text!r}: unexpected {text[end + 1 :].strip()!r} after the closing ']'"
        )
    bounds = [i, *commas, end]
    for start, stop in itertools.pairwise(bounds):
        item = text[start + 1 : stop]
        if not item.strip():
            continue  # "rbf[]" and a trailing comma give no parameter
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key or any(q in key for q in _QUOTES):
            raise SpecError(
                f"malformed parameter {item.strip()!r} in {text!r}: expected param=value"
            )
        if not _KEY.fullmatch(key):
            raise SpecError(
                f"malformed parameter name {key!r} in {text!r}: expected letters, digits and _"
            )
        if key in params:
            raise SpecError(f"parameter {key!r} given twice in {text!r}")
        params[key] = _value(value.strip(), text)
    return name, params


def _scan_body(text: str, start: int) -> tuple[int, list[int]]:
    """Index of the ']' that closes the body starting at ``start``, and its top-level commas."""
    stack = ["["]
    commas: list[int] = []
    i = start
    while i < len(text):
        ch = text[i]
        if ch in _QUOTES:
            i = _quote_end(text, i)
        elif ch in _CLOSER:
            stack.append(ch)
        elif ch in "])":
            opener = stack.pop()
            if _CLOSER[opener] != ch:
                raise SpecError(
                    f"malformed spec {text!r}: {ch!r} at position {i} closes {opener!r}; "
                    f"brackets must balance (quote a value that holds brackets)"
                )
            if not stack:
                return i, commas
        elif ch == "," and len(stack) == 1:
            commas.append(i)
        i += 1
    raise SpecError(
        f"malformed spec {text!r}: {len(stack)} unclosed {'bracket' if len(stack) == 1 else 'brackets'} "
        f"(a value that holds brackets must be quoted)"
    )


def _quote_end(text: str, start: int) -> int:
    """Index of the quote closing the one at ``start`` (backslash escapes the next character)."""
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i
        i += 1
    raise SpecError(f"malformed spec {text!r}: the quote {quote} at position {start} is not closed")


def _value(raw: str, text: str) -> str:
    """A parameter's value: a quoted value unquoted, a raw one as it is."""
    if not raw or raw[0] not in _QUOTES:
        return raw
    end = _quote_end(raw, 0)
    if raw[end + 1 :].strip():
        raise SpecError(
            f"malformed spec {text!r}: unexpected {raw[end + 1 :].strip()!r} after the quoted "
            f"value {raw[: end + 1]}"
        )
    return re.sub(r"\\(.)", r"\1", raw[1:end], flags=re.S)


def quote_value(value: str) -> str:
    """``value`` as it is when a spec can hold it raw, else in double quotes with escapes."""
    if value == value.strip() and not _SPECIAL.intersection(value):
        return value
    try:
        if parse_spec(f"x[k={value}]") == ("x", {"k": value}):
            return value  # a nested spec, say, whose brackets and quotes balance
    except SpecError:
        pass
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_spec(name: str, params: Iterable[tuple[str, str]] | dict[str, str]) -> str:
    """``name[k=v,...]`` (or ``name``) with each value quoted only when it must be."""
    items = params.items() if isinstance(params, dict) else params
    body = ",".join(f"{k}={quote_value(str(v))}" for k, v in items)
    return f"{name}[{body}]" if body else name


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


#: Longest label kbench accepts: a label is there to be short.
MAX_LABEL = 40


@dataclass(frozen=True)
class Spec:
    """A parsed spec: its name, parameters and the user's short label, if any.

    ``Spec.parse("pa[C=1]@PA")`` is ``Spec("pa", (("C", "1"),), "PA")``; :attr:`text` is the
    spec string without the label, :attr:`shown` what a table prints for it.
    """

    name: str
    params: tuple[tuple[str, str], ...] = ()
    label: str | None = None

    @property
    def text(self) -> str:
        """The spec string, without its label (values quoted only where they must be)."""
        return format_spec(self.name, self.params)

    @property
    def shown(self) -> str:
        """The label when there is one, else the spec string."""
        return self.label or self.text

    @classmethod
    def parse(cls, text: str) -> Spec:
        """Parse ``name[param=value,...]`` with an optional ``@LABEL`` after it.

        Raises SpecError, on one line, for a malformed spec or an empty, over-long or
        unprintable label.
        """
        spec, label = split_label(text)
        name, params = parse_spec(spec)
        return cls(name, tuple(params.items()), label)


def split_label(text: str) -> tuple[str, str | None]:
    """Split ``"pa[C=1]@PA"`` into ``("pa[C=1]", "PA")``; no ``@`` outside brackets and
    quotes: ``(text, None)``."""
    if not isinstance(text, str):
        raise SpecError(f"a spec must be a string, got {text!r}")
    depth, quote, i = 0, "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in _QUOTES and depth:
            quote = ch
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "@" and depth == 0:
            return text[:i].strip(), check_label(text[i + 1 :], text)
        i += 1
    return text, None


def check_label(label: str, where: str) -> str:
    """``label`` stripped, or SpecError when it is empty, too long or holds a control
    character (a label goes into every table and file)."""
    out = label.strip() if isinstance(label, str) else ""
    if not out:
        raise SpecError(f"empty label in {where!r}: write spec@LABEL, e.g. pa[C=1]@PA")
    if len(out) > MAX_LABEL:
        raise SpecError(f"label {out!r} in {where!r} is longer than {MAX_LABEL} characters")
    if any(not ch.isprintable() for ch in out):
        raise SpecError(f"label {out!r} in {where!r} holds a control character")
    return out


def check_labels(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The labels of a study as ``{canonical spec: label}``, checked.

    Parameters
    ----------
    pairs
        ``(canonical spec, label)`` for every labelled spec of the study.

    Raises
    ------
    SpecError
        One label for two different specs, or two labels for one spec.
    """
    labels: dict[str, str] = {}
    owner: dict[str, str] = {}
    for spec, label in pairs:
        if labels.get(spec, label) != label:
            raise SpecError(f"{spec} has two labels, {labels[spec]!r} and {label!r}")
        if owner.get(label, spec) != spec:
            raise SpecError(f"label {label!r} is given to two specs: {owner[label]} and {spec}")
        labels[spec], owner[label] = label, spec
    return labels


def spec_name(text: Any) -> str:
    """The name of a spec string: ``"norma[eta=0.1]"`` gives ``"norma"``.

    A text that does not parse (a label written by hand, say) gives what comes before its
    first ``[``, so that a view can always show something.
    """
    spec = str(text)
    try:
        return parse_spec(spec)[0]
    except SpecError:
        return spec.partition("[")[0]


def short_names(specs: Iterable[Any]) -> dict[Any, str]:
    """Short display names of spec strings (streams or algorithms), one function for every
    view: the CLI's tables, the exports and the report.

    Each spec is shown by its name, with only the parameters that tell it apart from the
    other specs of the same name; when that is not enough (or a spec does not parse) every
    spec is shown in full.

    Parameters
    ----------
    specs
        The spec strings (or values whose ``str`` is one), each once.

    Returns
    -------
    dict
        ``{spec: short name}``, the names all different.
    """
    specs = list(specs)
    base = {s: spec_name(s) for s in specs}
    if len(set(base.values())) == len(base):
        return base
    parsed: dict[Any, dict[str, str] | None] = {}  # None where the spec does not parse
    for s in specs:
        try:
            parsed[s] = parse_spec(str(s))[1]
        except SpecError:
            parsed[s] = None
    out: dict[Any, str] = {}
    for s in specs:
        same = [t for t in specs if base[t] == base[s]]
        params = parsed[s]
        if len(same) == 1:
            out[s] = base[s]
            continue
        if params is None or any(parsed[t] is None for t in same):
            out[s] = str(s)
            continue
        keys = sorted({k for t in same for k in parsed[t] or {}})
        differ = [k for k in keys if len({str((parsed[t] or {}).get(k)) for t in same}) > 1]
        opts = ",".join(f"{k}={params[k]}" for k in differ if k in params)
        out[s] = f"{base[s]}[{opts}]"
    return out if len(set(out.values())) == len(out) else {s: str(s) for s in specs}
