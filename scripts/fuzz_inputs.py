"""Fuzz kbench's inputs and count tracebacks: spec strings, study files, data files, options.

Each case feeds one generated input to one target, in this process:

- ``spec``: :func:`kbench.core.specs.parse_spec`, then the registry (resolve, canonical, create);
- ``toml``: :func:`kbench.execution.study.load_study` and :func:`kbench.execution.study.plan` on a study file;
- ``libsvm``, ``csv``, ``idx``: the readers of :mod:`kbench.data.readers` on a generated file;
- ``cli``: ``kbench run`` with generated option values (``cli.main(args,
  standalone_mode=False)``, one-example streams and no worker processes, to be fast).

A case passes when it succeeds or raises kbench's own one-line error (a ``KbenchError``)
or a click usage error; anything else (or an error message of several lines) is counted
as a traceback and printed. Usage::

    python scripts/fuzz_inputs.py [--cases 2400] [--seed 0]

It prints the cases run and the tracebacks per target, and exits 1 if there was any.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import os
import struct
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import click
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbench.core.errors import KbenchError
from kbench.core.registry import get_registry
from kbench.core.specs import parse_spec
from kbench.data.libsvm_format import read_libsvm
from kbench.data.readers import read_csv, read_idx
from kbench.execution.study import load_study, plan

NAMES = ["perceptron", "norma", "rbf", "poly", "cosine", "hinge", "digits", "csv", "libsvm", "x"]
PARAMS = ["eta", "gamma", "budget", "degree", "base", "positive", "n", "scale", "path", "label"]
VALUES = [
    "1", "-1", "0", "0.5", "1e400", "nan", "inf", "true", "abc", "", "5-9", "minmax", "none",
    "[1]", "(", "]", '"a,b[1]"', "'x'", '"', "\\", "poly[degree=2]", '"un', "a b",
]  # fmt: skip

spec_text = st.one_of(
    st.text(max_size=40),
    st.text(alphabet="abc[]()=,\"'\\ 1", max_size=24),
    st.builds(
        lambda n, items, tail: n + "[" + ",".join(f"{k}={v}" for k, v in items) + "]" + tail,
        st.sampled_from(NAMES),
        st.lists(st.tuples(st.sampled_from(PARAMS), st.sampled_from(VALUES)), max_size=3),
        st.sampled_from(["", "", "]", "x", "["]),
    ),
)


class Tally:
    """Cases and tracebacks per target."""

    def __init__(self) -> None:
        self.cases: dict[str, int] = {}
        self.tracebacks: dict[str, list[str]] = {}

    def run(self, target: str, fn: Callable[[], object], what: object) -> None:
        self.cases[target] = self.cases.get(target, 0) + 1
        try:
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                fn()
        except (KbenchError, click.UsageError) as exc:
            text = str(exc)
            if "\n" in text.strip():
                self._bad(target, what, f"message of several lines: {text!r}")
        except SystemExit as exc:
            if exc.code not in (0, 1, 2):
                self._bad(target, what, f"exit status {exc.code}")
        except BaseException as exc:  # anything else is a traceback a user would see
            if isinstance(exc, KeyboardInterrupt):
                raise
            self._bad(target, what, "".join(traceback.format_exception_only(exc)).strip())

    def _bad(self, target: str, what: object, why: str) -> None:
        self.tracebacks.setdefault(target, []).append(f"{what!r}: {why}")


def fuzz_specs(tally: Tally, n: int, seed: int) -> None:
    reg = get_registry()
    kinds = ["algorithm", "kernel", "loss", "dataset"]

    def one(text: str, kind: str) -> None:
        parse_spec(text)
        reg.resolve(kind, text)
        reg.canonical(kind, text)
        context = (
            {"kernel": reg.create("kernel", "rbf"), "loss": reg.create("loss", "hinge")}
            if kind == "algorithm"
            else {}
        )
        reg.create(kind, text, **context)

    @_settings(n, seed)
    @given(text=spec_text, kind=st.sampled_from(kinds))
    def case(text: str, kind: str) -> None:
        tally.run("spec", lambda: one(text, kind), text)

    case()


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.encode("unicode_escape").decode().replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)


TOML_KEYS = [
    "algorithms", "datasets", "kernels", "losses", "seeds", "n", "epochs", "checkpoints",
    "test_max", "max_queries", "name", "out", "algoritms", "bogus",
]  # fmt: skip
toml_value = st.one_of(
    st.integers(-3, 10**12),
    st.floats(allow_nan=False),
    st.booleans(),
    st.text(max_size=8),
    st.lists(
        st.one_of(
            st.integers(-2, 2**33),
            st.sampled_from(
                ["perceptron", "digits[n=5]", "rbf", 'csv[path="d,1.csv"]', "norma[eta=2"]
            ),
            spec_text,
        ),
        max_size=3,
    ),
)


def fuzz_toml(tally: Tally, n: int, seed: int, folder: Path) -> None:
    reg = get_registry()
    (folder / "d,1.csv").write_text("".join(f"{i},{i % 3},{i % 2}\n" for i in range(6)))
    tables = st.sampled_from(["study", "experiment", "experimnet", "stduy", ""])

    @_settings(n, seed)
    @given(
        blocks=st.lists(
            st.tuples(tables, st.dictionaries(st.sampled_from(TOML_KEYS), toml_value, max_size=5)),
            max_size=3,
        ),
        junk=st.one_of(st.just(""), st.text(max_size=20)),
    )
    def case(blocks: list, junk: str) -> None:
        text = ""
        for table, body in blocks:
            head = "" if not table else (f"[{table}]" if table.startswith("s") else f"[[{table}]]")
            text += head + "\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in body.items())
        path = folder / "study.toml"
        path.write_text(text + junk)
        tally.run("toml", lambda: plan(load_study(path), reg), text + junk)

    case()


_token = st.one_of(
    st.from_regex(r"[+-]?[0-9]{1,3}(\.[0-9]*)?(e[+-]?[0-9]{1,3})?", fullmatch=True),
    st.from_regex(r"[0-9]{1,4}:[+-]?[0-9.eEinfa]{0,6}", fullmatch=True),
    st.sampled_from(["qid:1", "#", ":", "nan", "inf", "-", "1:", "0:0", "1:1:1", "\t", "é"]),
    st.text(max_size=4),
)
_cell = st.one_of(
    st.from_regex(r"[+-]?[0-9]{1,3}(\.[0-9]+)?", fullmatch=True),
    st.sampled_from(["", "a", "nan", "1e999", '"1"', '"', "x y", "#"]),
    st.text(max_size=3),
)
_idx_header = st.builds(
    lambda code, dims: bytes([0, 0, code, len(dims)]) + struct.pack(f">{len(dims)}I", *dims),
    st.sampled_from([0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E, 0x07]),
    st.lists(st.integers(0, 2**32 - 1) | st.integers(0, 6), max_size=4),
)


def fuzz_readers(tally: Tally, n: int, seed: int, folder: Path) -> None:
    libsvm = st.one_of(
        st.lists(st.lists(_token, max_size=6).map(" ".join), max_size=8)
        .map("\n".join)
        .map(str.encode),
        st.binary(max_size=200),
    )
    csv = st.one_of(
        st.lists(st.lists(_cell, min_size=1, max_size=4).map(",".join), max_size=6)
        .map("\n".join)
        .map(str.encode),
        st.binary(max_size=200),
    )
    idx = st.one_of(
        st.binary(max_size=100), st.tuples(_idx_header, st.binary(max_size=60)).map(b"".join)
    )

    def write(name: str, data: bytes, compress: bool) -> Path:
        path = folder / name
        path.write_bytes(gzip.compress(data) if compress else data)
        return path

    @_settings(n, seed)
    @given(
        fmt=st.sampled_from(["libsvm", "csv", "idx"]),
        data=st.data(),
        compress=st.booleans(),
        label=st.sampled_from(["-1", "0", "2", "a"]),
        header=st.sampled_from(["auto", "yes", "no"]),
    )
    def case(fmt: str, data: st.DataObject, compress: bool, label: str, header: str) -> None:
        blob = data.draw({"libsvm": libsvm, "csv": csv, "idx": idx}[fmt])
        path = write(f"fuzz.{fmt}", blob, compress)
        fn = {
            "libsvm": lambda: read_libsvm(path, max_elements=10**6),
            "csv": lambda: read_csv(path, label, header=header, max_elements=10**6),
            "idx": lambda: read_idx(path, max_elements=10**6),
        }[fmt]
        tally.run(fmt, fn, blob)

    case()


OPTION_VALUES = {
    "--seeds": ["0", "0-2", "0-99999999999999", "-3", "5-2", "a-b", "", "1,,2", "4294967296", "0x1"],
    "--n": ["1", "0", "-5", "abc", "1e3", "99999999999999999999"],
    "--epochs": ["1", "0", "100000", "nan", "2"],
    "--max-queries": ["0", "-1", "3", "x"],
    "--workers": ["0", "-1", "100000", "abc", "0.5"],
    "--timeout": ["nan", "inf", "-inf", "-1", "0", "1e300", "abc", "30"],
    "--max-memory": ["1K", "512M", "2G", "nan", "inf", "1e30", "lots", "", "-1G", "0", "3T", "1.5GiB"],
    "--executor": ["local", "dask", "dusk", ""],
    "--scheduler": ["::::", "tcp://", "tcp://host:99999", "bogus://h:1", "", "tcp://[::1:8786"],
    "--out": ["", " ", "r\x00x"],
}  # fmt: skip


def fuzz_cli(tally: Tally, n: int, seed: int, folder: Path) -> None:
    from kbench.cli.main import cli

    options = st.lists(
        st.sampled_from(list(OPTION_VALUES)).flatmap(
            lambda o: st.tuples(st.just(o), st.sampled_from(OPTION_VALUES[o]) | st.text(max_size=6))
        ),
        min_size=1,
        max_size=3,
        unique_by=lambda t: t[0],
    )

    @_settings(n, seed)
    @given(
        options=options,
        algorithm=st.sampled_from(["perceptron", "norma[budget=5]", "percepton", "rbf[", "x"]),
        dataset=st.sampled_from(["digits[n=5]", "digits[positive=1,n=5]", "nope", 'csv[path="']),
    )
    def case(options: list, algorithm: str, dataset: str) -> None:
        args = ["run", "-a", algorithm, "-d", dataset, "--no-report", "--no-memory"]
        for option, value in options:
            args += [option, value]
        if "--out" not in dict(options):
            args += ["--out", str(folder / "results")]
        if "--workers" not in dict(options):
            args += ["--workers", "0"]
        cwd = os.getcwd()
        os.chdir(folder)  # whatever --out says, nothing lands outside the scratch folder
        try:
            tally.run(
                "cli", lambda: cli.main(args, standalone_mode=False, prog_name="kbench"), args
            )
        finally:
            os.chdir(cwd)

    case()


def _settings(n: int, seed: int) -> Callable:
    def wrap(fn: Callable) -> Callable:
        from hypothesis import seed as fix_seed

        return fix_seed(seed)(
            settings(
                max_examples=n,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )(fn)
        )

    return wrap


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2400, help="total cases (about)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    share = {"spec": 0.3, "toml": 0.25, "readers": 0.3, "cli": 0.15}
    tally = Tally()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kbench-fuzz-") as tmp:
        folder = Path(tmp)
        os.environ["KBENCH_CACHE"] = str(folder / "cache")
        fuzz_specs(tally, int(args.cases * share["spec"]), args.seed)
        fuzz_toml(tally, int(args.cases * share["toml"]), args.seed, folder)
        fuzz_readers(tally, int(args.cases * share["readers"]), args.seed, folder)
        fuzz_cli(tally, int(args.cases * share["cli"]), args.seed, folder)
    total = sum(tally.cases.values())
    bad = sum(len(v) for v in tally.tracebacks.values())
    for target, count in tally.cases.items():
        print(
            f"{target:8s} {count:6d} cases  {len(tally.tracebacks.get(target, [])):4d} tracebacks"
        )
    print(
        f"total    {total:6d} cases  {bad:4d} tracebacks  ({time.perf_counter() - started:.0f} s)"
    )
    for target, items in tally.tracebacks.items():
        for item in items[:10]:
            print(f"  {target}: {item[:300]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
