"""Algorithm configurations of a results folder: their keys and display labels, the runs
table prepared for a comparison, and the kbench versions that wrote it."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from kbench._version import __version__
from kbench.analysis.tables import count
from kbench.core.errors import ResultsError
from kbench.core.specs import spec_name
from kbench.results.degenerate import degenerate_column
from kbench.results.store import Results

METRICS = ("online_error", "test_error", "final_epoch_error")
"""Run columns a comparison of final errors can use."""


class NothingToCompareError(ResultsError):
    """A results folder holds nothing a comparison can use."""


def _spec_parts(spec: str) -> tuple[str, list[str]]:
    m = re.match(r"^([^\[]+)(?:\[(.*)\])?$", spec.strip())
    if not m:
        return spec, []
    body = m.group(2) or ""
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
    return m.group(1), [p.strip() for p in parts if p.strip()]


def _is_set(value: Any) -> bool:
    return isinstance(value, str) and value != "" and value != "-"


def config_key(row: Any) -> str:
    """Identity of an algorithm configuration: algorithm, kernel, loss and epochs."""
    parts = [str(row["algorithm_spec"])]
    for col in ("kernel", "loss"):
        if _is_set(row.get(col)):
            parts.append(str(row[col]))
    epochs = row.get("epochs")
    if (
        epochs is not None
        and not (isinstance(epochs, float) and math.isnan(epochs))
        and int(epochs) != 1
    ):
        parts.append(f"epochs={int(epochs)}")
    if _is_set(row.get("tune")) and row.get("phase") == "evaluation":
        parts.append(f"tuned {row['tune']}")  # a tuned learner is not its untuned spec
    return " | ".join(parts)


def config_table(
    runs: pd.DataFrame, short: Callable[[str, str], str] | None = None
) -> pd.DataFrame:
    """One row per configuration, with a short distinct display label.

    The label keeps what tells configurations apart: the algorithm spec without the
    parameters every configuration of that algorithm shares, and the kernel, loss or
    epochs only when they vary in the study. ``short(kind, spec)`` (e.g. the registry's
    ``short``) first drops parameters left at their defaults.

    Returns
    -------
    pandas.DataFrame
        Indexed by configuration key; columns ``label``, ``algorithm``, ``algorithm_spec``,
        ``kernel``, ``loss``, ``epochs``.
    """
    rows = []
    for _, r in runs.drop_duplicates("config").iterrows():
        rows.append(
            {
                "config": r["config"],
                "algorithm": r["algorithm"],
                "algorithm_spec": r["algorithm_spec"],
                "kernel": r["kernel"] if _is_set(r.get("kernel")) else "",
                "loss": r["loss"] if _is_set(r.get("loss")) else "",
                "epochs": int(r["epochs"]) if pd.notna(r.get("epochs")) else 1,
                "given": str(r.get("algorithm_label") or "")
                if _is_set(r.get("algorithm_label"))
                else "",
            }
        )
    table = pd.DataFrame(
        rows, columns=["config", "algorithm", "algorithm_spec", "kernel", "loss", "epochs", "given"]
    )
    if table.empty:
        table["label"] = []
        return table.drop(columns="given").set_index("config")

    def shorten(kind: str, spec: str) -> str:
        if not spec:
            return ""
        return short(kind, spec) if short is not None else spec

    algo_short = [shorten("algorithm", s) for s in table["algorithm_spec"]]
    # Parameters shared by every configuration of one algorithm tell nothing apart.
    parsed = [_spec_parts(s) for s in algo_short]
    by_name: dict[str, list[set[str]]] = {}
    for name, params in parsed:
        by_name.setdefault(name, []).append(set(params))
    shared = {
        name: set.intersection(*sets) if len(sets) > 1 else set() for name, sets in by_name.items()
    }
    algo_label = []
    for name, params in parsed:
        keep = [p for p in params if p not in shared[name]]
        algo_label.append(f"{name}[{','.join(keep)}]" if keep else name)
    # The user's label (spec@LABEL) stands for the whole algorithm spec.
    algo_label = [g or a for g, a in zip(table["given"], algo_label, strict=True)]
    algo_short = [g or a for g, a in zip(table["given"], algo_short, strict=True)]
    kernels = [shorten("kernel", k) for k in table["kernel"]]
    losses = [shorten("loss", lo) for lo in table["loss"]]
    vary_k = len({k for k in kernels if k}) > 1
    vary_l = len({lo for lo in losses if lo}) > 1
    vary_e = table["epochs"].nunique() > 1
    labels = []
    for i in range(len(table)):
        parts = [algo_label[i]]
        if vary_k and kernels[i]:
            parts.append(kernels[i])
        if vary_l and losses[i]:
            parts.append(losses[i])
        if vary_e:
            parts.append(f"×{table['epochs'].iloc[i]}")
        labels.append(" ".join(parts))
    if len(set(labels)) < len(labels):  # the shortening lost a distinction: show everything
        labels = [
            " ".join(p for p in (a, k, lo, f"×{e}" if e != 1 else "") if p)
            for a, k, lo, e in zip(algo_short, kernels, losses, table["epochs"], strict=True)
        ]
    # A tuned learner is labelled with its tuning budget (kbench.execution.tuning).
    labels = [
        f"{lab} tuned@{key.split(' | tuned ')[1].split(':')[1]}" if " | tuned " in key else lab
        for lab, key in zip(labels, table["config"], strict=True)
    ]
    seen: dict[str, int] = {}
    unique = []
    for lab in labels:
        seen[lab] = seen.get(lab, 0) + 1
        unique.append(lab if seen[lab] == 1 else f"{lab} #{seen[lab]}")
    table["label"] = unique
    return table.drop(columns="given").set_index("config")


def run_flags(runs: pd.DataFrame, traces: pd.DataFrame) -> pd.Series:
    """Why a run is a degenerate learner, per task ('' when it is not).

    The one definition of :mod:`kbench.results.degenerate`, read from the ``degenerate`` column
    kbench stores when a task finishes (computed from ``traces`` for older results).
    """
    return degenerate_column(runs, traces)


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", str(text))[:3])


def check_versions(runs: pd.DataFrame) -> None:
    """Refuse results written by a newer kbench than this one (ResultsError)."""
    if "kbench_version" not in runs.columns:
        return
    mine = _version_tuple(__version__)
    newer = sorted(
        {str(v) for v in runs["kbench_version"].dropna() if _version_tuple(v) > mine},
        key=_version_tuple,
    )
    if newer:
        raise ResultsError(
            f"results were written by kbench {newer[-1]}, newer than this kbench {__version__}; "
            "upgrade kbench to compare them"
        )


def check_results_format(runs: pd.DataFrame) -> None:
    """Refuse runs of another results format than this kbench's (ResultsError, naming it).

    Format 1 (no ``results_format`` column) predates seeds per purpose: its learners and
    data drew from the study seed itself, so its runs are another experiment than this
    kbench's and are never mixed with them."""
    from kbench.execution.prequential import RESULTS_FORMAT

    column = runs["results_format"] if "results_format" in runs.columns else None
    formats = pd.Series(1, index=runs.index) if column is None else column.fillna(1).astype(int)
    other = sorted(set(formats) - {RESULTS_FORMAT})
    if not other:
        return
    n = int((formats != RESULTS_FORMAT).sum())
    if other[-1] > RESULTS_FORMAT:
        raise ResultsError(
            f"{n} of {len(runs)} runs were written in results format {other[-1]}, newer than "
            f"this kbench's format {RESULTS_FORMAT}; upgrade kbench to read them"
        )
    raise ResultsError(
        f"{n} of {len(runs)} runs were written in results format {other[0]} (before seeds per "
        f"purpose), this kbench reads format {RESULTS_FORMAT}; run the same study again into "
        "the folder to rerun them, or read them with the kbench that wrote them"
    )


def prepare_runs(
    results: Results, short: Callable[[str, str], str] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The runs table with ``config``, ``label`` and ``flags`` columns, and the configurations.

    Raises
    ------
    NothingToCompareError
        No run at all, or none that finished.
    ResultsError
        A run table without the columns kbench writes, or written by a newer kbench.
    """
    runs = results.runs
    if runs is None or runs.empty:
        raise NothingToCompareError(
            "the results folder holds no task results; run kbench run --out FOLDER first"
        )
    missing = [
        c
        for c in ("task_id", "algorithm_spec", "stream", "stream_id", "status")
        if c not in runs.columns
    ]
    if missing:
        raise ResultsError(
            f"the runs table lacks the column(s) {', '.join(missing)}: not written by kbench"
        )
    check_versions(runs)
    check_results_format(runs)
    runs = runs.copy()
    for col, default in (
        ("kernel", None),
        ("loss", None),
        ("epochs", 1),
        ("seed", 0),
        ("stream_seed", 0),
        ("task", "binary"),
        ("n", np.nan),
        ("reason", ""),
        ("dataset", None),
    ):
        if col not in runs.columns:
            runs[col] = default
    if runs["dataset"].isna().any():
        runs["dataset"] = runs["dataset"].fillna(runs["stream"].map(spec_name))
    for col in (*METRICS, "n_support", "kernel_evals", "time_s", "us_per_example"):
        if col not in runs.columns:
            runs[col] = np.nan
    runs["config"] = [config_key(r) for _, r in runs.iterrows()]
    configs = config_table(runs, short)
    runs["label"] = runs["config"].map(configs["label"])
    runs["flags"] = run_flags(runs, results.traces)
    # eq(True), not fillna(False): a missing value is False without pandas 2's deprecated
    # downcast of an object column (a FutureWarning, an error in the test suite).
    runs["offline"] = runs["offline"].eq(True) if "offline" in runs.columns else False
    ok = runs[runs["status"] == "ok"]
    if ok.empty:
        counts = ", ".join(f"{v} {k}" for k, v in runs["status"].value_counts().items())
        raise NothingToCompareError(
            f"no task finished ({len(runs)} tasks: {counts}); nothing to compare"
        )
    return runs, configs


STATS_CHANGES: tuple[tuple[str, str], ...] = ()
"""(kbench version, what changed) for each release that changed how a stored quantity a
verdict uses (the final errors, the outcomes, the flags) is computed, oldest first."""


def version_notes(runs: pd.DataFrame) -> list[str]:
    """Notes for a results folder whose runs were written by several kbench versions.

    Names the versions with their run counts, and each recorded change of the stored
    quantities between the oldest and the newest of them (:data:`STATS_CHANGES`).
    """
    if "kbench_version" not in runs.columns:
        return []
    counts = runs["kbench_version"].fillna("unknown").astype(str).value_counts()
    if len(counts) < 2:
        return []
    versions = sorted(counts.index, key=_version_tuple)
    listed = ", ".join(f"{v} ({count(int(counts[v]), 'run')})" for v in versions)
    known = [v for v in versions if v != "unknown"]
    changes = (
        [
            f"{v}: {what}"
            for v, what in STATS_CHANGES
            if _version_tuple(known[0]) < _version_tuple(v) <= _version_tuple(known[-1])
        ]
        if known
        else []
    )
    tail = (
        "; between them the stored quantities changed: " + "; ".join(changes) + " — rerun the "
        "older runs with --force before trusting verdicts that mix them"
        if changes
        else "; no recorded change of the stored quantities between them, and the tests "
        f"are those of kbench {__version__}"
    )
    return [f"runs written by {len(counts)} kbench versions: {listed}{tail}"]


def spec_shortener() -> Callable[[str, str], str] | None:
    """A spec shortener for labels, or None when the registry cannot load (labels stay full).

    It is the registry's ``short``; for a spec the registry no longer resolves (a parameter
    renamed since the run, say) it still drops the parameters left at a declared default.
    """
    try:
        from kbench.core.components import format_value
        from kbench.core.registry import get_registry
        from kbench.core.specs import format_spec, parse_spec, quote_value

        registry = get_registry()
    except Exception:  # a broken plugin must not stop reading results
        return None

    def short(kind: str, spec: str) -> str:
        out = registry.short(kind, spec)
        if out != spec:
            return out
        try:
            name, params = parse_spec(spec)
            declared = registry.entry(kind, name).cls.parameters()
        except Exception:  # unknown component: show the spec as it was run
            return spec
        keep = [
            (k, v)
            for k, v in params.items()
            if k not in declared or quote_value(v) != format_value(declared[k].default)
        ]
        return format_spec(name, keep)

    return short
