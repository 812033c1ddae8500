"""The results folder: one Parquet file per finished task, written atomically.

``<out>/tasks/<task_id>.parquet`` holds the task's trace (one row per checkpoint); its
schema metadata holds the run row (JSON) and the per-example outcomes. A file is
written under a temporary name and renamed, so a killed study leaves no partial
file and is resumed by running the same command again.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import tempfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from kbench.core.errors import ResultsError
from kbench.core.fileio import atomic_write, remove_stale_temps
from kbench.execution.prequential import TaskResult
from kbench.results.degenerate import degenerate_column, degenerate_reason
from kbench.results.labels import attach_labels, read_labels
from kbench.results.tuning import with_tuning_cost

RUN_KEY = b"kbench.run"
OUTCOMES_KEY = b"kbench.outcomes"


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _encode_outcomes(outcomes: np.ndarray, binary: bool) -> bytes:
    if binary:
        payload = {
            "kind": "bits",
            "n": len(outcomes),
            "data": base64.b64encode(zlib.compress(np.packbits(outcomes > 0.5).tobytes())).decode(),
        }
    else:
        # A squared error beyond float32's range (a diverged learner's) is stored as inf.
        with np.errstate(over="ignore"):
            single = outcomes.astype("<f4")
        payload = {
            "kind": "float32",
            "n": len(outcomes),
            "data": base64.b64encode(zlib.compress(single.tobytes())).decode(),
        }
    return json.dumps(payload).encode()


def _decode_outcomes(blob: bytes) -> np.ndarray:
    payload = json.loads(blob)
    raw = zlib.decompress(base64.b64decode(payload["data"]))
    if payload["kind"] == "bits":
        return np.unpackbits(np.frombuffer(raw, dtype=np.uint8))[: payload["n"]].astype(bool)
    return np.frombuffer(raw, dtype="<f4").astype(np.float64)


@dataclass(frozen=True)
class Finished:
    """What a task's result file recorded, as resuming needs it."""

    status: str
    #: The stream the task ran on (None when it failed before its stream was built).
    stream_id: str | None
    #: The results format it was written in (1 before the format was recorded).
    results_format: int
    #: Why it failed (None when it did not).
    reason: str | None = None


class ResultsStore:
    """A results folder: write task results atomically, list and read them back."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.tasks_dir = self.folder / "tasks"

    def prepare(self) -> None:
        """Create the folder and check that it is writable (ResultsError if not)."""
        try:
            self.tasks_dir.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(dir=self.tasks_dir, prefix=".probe-")
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise ResultsError(
                f"cannot write results to {self.folder}: {exc.strerror or exc}; choose another folder with --out"
            ) from None
        # Left by a run killed mid-write (task files, or the summary tables beside them).
        remove_stale_temps(self.tasks_dir)
        remove_stale_temps(self.folder)

    def path(self, task_id: str) -> Path:
        """File of one task."""
        return self.tasks_dir / f"{task_id}.parquet"

    def write(self, result: TaskResult) -> Path:
        """Write one task's result atomically (temporary file, fsync, rename)."""
        # Judged once, when the task finishes, so every table reads the same verdict.
        result.run["degenerate"] = degenerate_reason(result.run)
        run = _jsonable(result.run)
        traces = (
            result.traces
            if len(result.traces.columns)
            else pd.DataFrame({"task_id": pd.Series([], dtype=str)})
        )
        table = pa.Table.from_pandas(traces, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta[RUN_KEY] = json.dumps(run).encode()
        if result.run.get("status") == "ok" and not result.run.get("offline"):
            meta[OUTCOMES_KEY] = _encode_outcomes(
                np.asarray(result.outcomes), run.get("task") != "regression"
            )
        table = table.replace_schema_metadata(meta)
        return atomic_write(
            self.path(result.run["task_id"]),
            lambda fh: pq.write_table(table, fh, compression="zstd"),
        )

    def finished(self) -> dict[str, Finished]:
        """task_id → what every readable result recorded; unreadable files are set aside."""
        done = {}
        for path in _task_files(self.tasks_dir):
            try:
                run = read_run(path)
            except ResultsError:
                path.rename(path.with_suffix(".parquet.corrupt"))
                continue
            done[run["task_id"]] = Finished(
                status=run["status"],
                stream_id=run.get("stream_id"),
                results_format=int(run.get("results_format") or 1),
                reason=run.get("reason"),
            )
        return done

    def run_rows(self, task_ids: Iterable[str]) -> pd.DataFrame:
        """The run rows of some tasks, read from their files' metadata alone (no traces or
        outcomes: the rows of 14 000 tasks take a tenth of the memory of the tables); tasks
        with no file are left out."""
        rows = []
        for task_id in task_ids:
            path = self.path(task_id)
            if path.exists():
                rows.append(read_run(path))
        return pd.DataFrame(rows)

    def corrupt_files(self) -> list[Path]:
        """Result files set aside as unreadable."""
        return sorted(self.tasks_dir.glob("*.corrupt"))

    def collect(self) -> Results:
        """Load every task file and write the folder's three tables (after a study ran)."""
        results = self.load()
        results.save(self.folder)
        return results

    def load(self) -> Results:
        """Read every task file into the three tables."""
        return load_results(self.folder)


def _task_files(folder: Path) -> list[Path]:
    """Finished task files (temporary files start with a dot and are not results)."""
    return sorted(p for p in folder.glob("*.parquet") if not p.name.startswith("."))


def read_run(path: Path) -> dict[str, Any]:
    """The run row stored in one task file."""
    try:
        meta = pq.read_schema(path).metadata or {}
        return json.loads(meta[RUN_KEY])
    except Exception as exc:
        raise ResultsError(
            f"result file {path} is unreadable ({type(exc).__name__}); delete it, or rerun that task with --force"
        ) from None


@dataclass
class Results:
    """The tables of a results folder.

    ``runs``: one row per task. ``traces``: one row per checkpoint. ``outcomes``: one row
    per task, with the per-example outcome vector (bool correct, or squared error for
    regression) in the ``outcome`` column.
    """

    runs: pd.DataFrame
    traces: pd.DataFrame
    outcomes: pd.DataFrame
    #: The tuning runs of tuned studies (``phase = "tuning"``), kept apart so that every
    #: table and test of accuracy reads ``runs`` alone; the evaluation runs in ``runs``
    #: carry their tuning cost (:mod:`kbench.results.tuning`).
    tuning: pd.DataFrame = field(default_factory=pd.DataFrame)

    def outcomes_long(self) -> pd.DataFrame:
        """Outcomes as one row per (task, example): bool (correct) when every task is a
        classification, float64 when regression tasks are among them (1.0 for a correct
        prediction, the squared error for a regression example), never a column of mixed
        Python objects that Parquet cannot store."""
        vectors = list(self.outcomes["outcome"]) if len(self.outcomes) else []
        mixed = any(np.asarray(v).dtype != np.bool_ for v in vectors)
        parts = [
            pd.DataFrame(
                {
                    "task_id": r.task_id,
                    "stream_id": r.stream_id,
                    "example": np.arange(len(r.outcome)),
                    "outcome": np.asarray(r.outcome, dtype=np.float64) if mixed else r.outcome,
                }
            )
            for r in self.outcomes.itertuples()
        ]
        return (
            pd.concat(parts, ignore_index=True)
            if parts
            else pd.DataFrame(columns=["task_id", "stream_id", "example", "outcome"])
        )

    def subset(self, task_ids: set[str] | list[str]) -> Results:
        """The tables restricted to some tasks (a folder can hold earlier studies too)."""
        ids = set(task_ids)
        runs = self.runs[self.runs["task_id"].isin(ids)] if len(self.runs) else self.runs
        traces = self.traces
        if len(traces) and "task_id" in traces.columns:
            traces = traces[traces["task_id"].isin(ids)]
        outcomes = self.outcomes[self.outcomes["task_id"].isin(ids)]
        return Results(runs=runs, traces=traces, outcomes=outcomes)

    def save(self, folder: str | Path) -> None:
        """Write the three tables as Parquet files beside the task files, each atomically.

        Raises
        ------
        ResultsError
            When a table cannot be written (a full disk, say): that table keeps its
            previous content, and the task files it is built from are untouched.
        """
        folder = Path(folder)
        tables = {
            "runs.parquet": self.runs.drop(columns=["config", "machine"], errors="ignore"),
            "traces.parquet": self.traces,
            "outcomes.parquet": self.outcomes_long(),
        }
        if len(self.tuning):  # a tuned study's tuning runs, for inspection
            tables["tuning.parquet"] = self.tuning.drop(
                columns=["config", "machine"], errors="ignore"
            )
        for name, frame in tables.items():
            try:
                atomic_write(folder / name, functools.partial(_to_parquet, frame))
            except OSError as exc:
                raise ResultsError(
                    f"cannot write {folder / name}: {exc.strerror or exc}; every finished task is "
                    f"kept in {folder / 'tasks'}; free some space and run the same command again "
                    "to write the tables"
                ) from None


def _to_parquet(frame: pd.DataFrame, fh: Any) -> None:
    frame.to_parquet(fh, index=False)


def load_results(folder: str | Path) -> Results:
    """Read a results folder; ResultsError names any unreadable file."""
    folder = Path(folder)
    tasks_dir = folder / "tasks"
    if not tasks_dir.is_dir():
        raise ResultsError(
            f"{folder} is not a kbench results folder (no tasks/ inside); run kbench run --out {folder} first"
        )
    runs, traces, outcomes = [], [], []
    for path in _task_files(tasks_dir):
        try:
            # From memory and without threads: Arrow's file readers start thread pools
            # that outlive the read, and the driver must have no thread when it forks
            # tasks (kbench reproduce runs several studies in one process). The files
            # are small, so threads would gain nothing.
            table = pq.ParquetFile(pa.BufferReader(path.read_bytes())).read(use_threads=False)
        except Exception as exc:
            raise ResultsError(
                f"result file {path} is unreadable ({type(exc).__name__}); delete it, or rerun that task with --force"
            ) from None
        meta = table.schema.metadata or {}
        if RUN_KEY not in meta:
            raise ResultsError(
                f"result file {path} has no kbench run record; delete it, or rerun that task with --force"
            )
        run = json.loads(meta[RUN_KEY])
        runs.append(run)
        if table.num_rows:
            traces.append(table.replace_schema_metadata(None))
        if OUTCOMES_KEY in meta:
            outcomes.append(
                {
                    "task_id": run["task_id"],
                    "stream_id": run["stream_id"],
                    "outcome": _decode_outcomes(meta[OUTCOMES_KEY]),
                }
            )
    runs_df = pd.DataFrame(runs)
    traces_df = _concat_traces(traces)
    if len(runs_df):  # results written before kbench stored the verdict get it computed here
        runs_df["degenerate"] = degenerate_column(runs_df, traces_df)
        runs_df = attach_labels(runs_df, read_labels(folder))
    out_df = pd.DataFrame(outcomes, columns=["task_id", "stream_id", "outcome"])
    return split_tuning(Results(runs=runs_df, traces=traces_df, outcomes=out_df))


def _concat_traces(tables: list[pa.Table]) -> pd.DataFrame:
    """The traces of every task as one frame: one conversion to pandas, not one per task
    (converting a thousand small tables cost more than reading them). Columns a learner
    does not trace are missing values in its rows, as ``pandas.concat`` gives them."""
    if not tables:
        return pd.DataFrame()
    merged = pa.concat_tables(tables, promote_options="permissive")
    return merged.to_pandas(use_threads=False)


def split_tuning(results: Results) -> Results:
    """Move the tuning runs (and their traces and outcomes) to ``results.tuning`` and
    charge the evaluation runs their tuning cost; unchanged without tuning runs."""
    runs = results.runs
    if not len(runs) or "phase" not in runs:
        return results
    runs = with_tuning_cost(runs)
    is_tuning = runs["phase"] == "tuning"
    ids = set(runs.loc[is_tuning, "task_id"])
    traces = results.traces
    if len(traces) and "task_id" in traces.columns:
        traces = traces[~traces["task_id"].isin(ids)].reset_index(drop=True)
    outcomes = results.outcomes[~results.outcomes["task_id"].isin(ids)].reset_index(drop=True)
    return Results(
        runs=runs[~is_tuning].reset_index(drop=True),
        traces=traces,
        outcomes=outcomes,
        tuning=runs[is_tuning].reset_index(drop=True),
    )
