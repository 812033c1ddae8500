"""The short labels a study gave its algorithm specs (``-a "pa[C=1]@PA"``, or
``{spec = "pa[C=1]", label = "PA"}`` in a study file), kept beside the results.

A label is a name for display, not a parameter: it does not enter a task's id, so
relabelling reruns nothing. The labels live in ``labels.json`` in the results folder,
``{canonical algorithm spec: label}``, merged over every run into that folder, and every
view reads them from the ``algorithm_label`` column :func:`attach_labels` adds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from kbench.core.errors import ResultsError
from kbench.core.fileio import atomic_write_text
from kbench.core.registry import Registry
from kbench.core.specs import check_labels, split_label

LABELS_FILE = "labels.json"


def read_labels(folder: str | Path) -> dict[str, str]:
    """The labels stored in a results folder (none: an empty dict)."""
    path = Path(folder) / LABELS_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path} is unreadable ({type(exc).__name__}); delete it") from None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise ResultsError(f"{path} is not a map of algorithm specs to labels; delete it")
    return data


def merged_labels(folder: str | Path, labels: dict[str, str]) -> dict[str, str]:
    """The folder's labels with ``labels`` over them, checked together.

    Raises SpecError when a label of ``labels`` already names another spec in the folder;
    a spec given a new label takes it.
    """
    old = {k: v for k, v in read_labels(folder).items() if k not in labels}
    return check_labels([*old.items(), *labels.items()])


def write_labels(folder: str | Path, labels: dict[str, str]) -> None:
    """Store ``labels`` (from :func:`merged_labels`) in the folder, atomically."""
    if labels:
        atomic_write_text(
            Path(folder) / LABELS_FILE, json.dumps(labels, indent=1, sort_keys=True) + "\n"
        )


def attach_labels(runs: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    """``runs`` with an ``algorithm_label`` column ('' where the spec has no label).

    A multiclass reduction (``ovr[base=SPEC]``) takes its base learner's label.
    """
    if not len(runs) or "algorithm_spec" not in runs.columns:
        return runs
    specs = runs["algorithm_spec"].astype(str)
    base = runs["base_algorithm"] if "base_algorithm" in runs.columns else None

    def label(i: int, spec: str) -> str:
        if spec in labels:
            return labels[spec]
        if base is not None and isinstance(base.iloc[i], str) and base.iloc[i] in labels:
            return labels[base.iloc[i]]
        for key, lab in labels.items():  # a reduction around a labelled learner
            if spec.endswith(f"[base={key}]"):
                return lab
        return ""

    return runs.assign(algorithm_label=[label(i, s) for i, s in enumerate(specs)])


def study_labels(algorithm_lists: Iterable[Iterable[str]], registry: Registry) -> dict[str, str]:
    """The labels of a study's algorithm specs, ``{canonical spec: label}``, checked.

    Parameters
    ----------
    algorithm_lists
        Each experiment's algorithm specs, some with ``@LABEL``.
    registry
        Gives each spec its canonical form, under which the results store it.

    Raises
    ------
    SpecError
        An empty or malformed label, one label for two specs, two labels for one spec.
    """
    pairs = []
    for specs in algorithm_lists:
        for text in specs:
            spec, label = split_label(text)
            if label is not None:
                pairs.append((registry.canonical("algorithm", spec), label))
    return check_labels(pairs)
