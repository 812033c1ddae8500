"""What the site keeps of one results folder: a JSON-able summary, computed once.

A summary holds the study's provenance, its leaderboard rows (means and standard deviations
over seeds, the verdict over seeds against the data set's best configuration, the
degenerate marks) as :func:`kbench.analysis.comparison.compare` gives them, its learning
curves and its ranking across data sets. The site is built from summaries alone, and a
summary is cached under the folder's fingerprint, so publishing again reads only the
folders that changed.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kbench._version import __version__
from kbench.analysis.comparison import Comparison, load_comparison
from kbench.analysis.formats import VERDICT_WORDS
from kbench.core.registry import Registry
from kbench.core.specs import parse_spec, spec_name
from kbench.results.provenance import PROVENANCE_FILE, read_provenance
from kbench.results.tuning import tune_budget

#: Version of the summary's layout: a cached summary of another version is recomputed.
SUMMARY_FORMAT = 2
#: Points kept per learning curve (the traces' checkpoints, thinned evenly).
CURVE_POINTS = 40

Summary = dict[str, Any]


def fingerprint(folder: Path) -> str:
    """A digest of what a summary of ``folder`` is computed from: every task file's name,
    size and modification time, the labels and provenance files, kbench's version."""
    h = hashlib.sha1(f"{SUMMARY_FORMAT} {__version__}".encode())
    tasks = folder / "tasks"
    names = sorted(p.name for p in tasks.iterdir()) if tasks.is_dir() else []
    for name in names:
        st = (tasks / name).stat()
        h.update(f"{name} {st.st_size} {st.st_mtime_ns}\n".encode())
    for extra in ("labels.json", PROVENANCE_FILE):
        p = folder / extra
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


def study_id(folder: Path) -> str:
    """A file-name-safe id of a results folder: its name and a digest of its full path."""
    name = "".join(c if c.isalnum() else "-" for c in folder.name.lower()).strip("-")
    digest = hashlib.sha1(str(folder.resolve()).encode()).hexdigest()[:6]
    return f"{name or 'results'}-{digest}"


def _number(value: Any) -> float | None:
    """A float for JSON: None for missing and non-finite values."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _budget(spec: str, registry: Registry) -> int | None:
    """The ``budget`` a configuration's learner runs with (its spec's, else its default);
    None for learners without one."""
    name, params = parse_spec(spec)
    if "budget" in params:
        try:
            return int(float(params["budget"]))
        except ValueError:
            return None
    try:
        default = getattr(registry.entry("algorithm", name).cls, "budget", None)
    except Exception:  # a learner whose plugin is not installed here: no default known
        return None
    return int(default) if isinstance(default, (int, float)) else None


def learner_spec(spec: str, registry: Registry) -> str:
    """The spec of the learner a configuration runs: a wrapper's ``base`` (``ovr[base=pa]``
    runs ``pa``, one-vs-rest), else the spec itself. Its page, family and budget are the
    learner's."""
    name, params = parse_spec(spec)
    try:
        wraps = registry.entry("algorithm", name).cls.spec_params.get("base") == "algorithm"
    except Exception:  # a learner whose plugin is not installed here
        return spec
    return learner_spec(params["base"], registry) if wraps and "base" in params else spec


def family(name: str, registry: Registry) -> str:
    """A learner's family: the module of its plugin (``budget_perceptrons``)."""
    try:
        return registry.entry("algorithm", name).cls.__module__.rsplit(".", 1)[-1]
    except Exception:  # a learner whose plugin is not installed here
        return "other"


def _verdicts(cmp: Comparison, board: pd.DataFrame) -> dict[tuple[str, str], str]:
    """Per (stream, label): the verdict over seeds against the stream's best configuration,
    from the comparison's seed-level tests (``best`` for the best itself)."""
    out: dict[tuple[str, str], str] = {}
    seeds = cmp.seeds
    for stream, g in board.groupby("stream", sort=False):
        g = g[g["seeds"] > 0]
        if g.empty:
            continue
        best = str(g.iloc[0]["label"])
        out[(str(stream), best)] = "best"
        if seeds is None or seeds.empty:
            continue
        s = seeds[seeds["stream"] == stream]
        for r in s.itertuples():
            if best not in (r.a, r.b):
                continue
            other, flip = (r.b, False) if r.a == best else (r.a, True)
            result = str(r.result)
            if result in ("win", "loss"):
                worse = (result == "win") != flip  # "win": a better than b
                text = "worse than best" if worse else "better than best"
            elif result == "tie":
                text = "tie with best"
            else:
                text = VERDICT_WORDS.get(result, result)
            out[(str(stream), str(other))] = text
    return out


def _config_facts(cmp: Comparison, registry: Registry) -> dict[str, dict[str, Any]]:
    """Per configuration label: its algorithm, spec, kernel, family, budget and tuning."""
    facts: dict[str, dict[str, Any]] = {}
    runs = cmp.runs
    for label, g in runs.groupby("label", sort=False):
        r = g.iloc[0]
        spec = str(r.get("algorithm_spec") or r.get("algorithm") or label)
        inner = learner_spec(spec, registry)
        name = spec_name(inner)
        tuned = "tune" in g and g["tune"].map(tune_budget).notna().any()
        kernel = r.get("kernel")
        facts[str(label)] = {
            "algorithm": name,
            "spec": spec,
            "kernel": "" if not isinstance(kernel, str) else kernel,
            "family": family(name, registry),
            "budget": _budget(inner, registry),
            "tuned": bool(tuned),
        }
    return facts


def _rows(cmp: Comparison, registry: Registry) -> list[dict[str, Any]]:
    """The leaderboard rows of every data set, best first, as JSON-able records."""
    board = cmp.leaderboard()
    verdicts = _verdicts(cmp, board)
    facts = _config_facts(cmp, registry)
    rows = []
    for r in board.itertuples(index=False):
        label = str(r.label)
        f = facts.get(label, {})
        rows.append(
            {
                "stream": str(r.stream),
                "dataset": str(r.dataset),
                "task": str(r.task),
                "label": label,
                **f,
                "seeds": int(r.seeds),
                "online_error": _number(r.online_error),
                "online_error_sd": _number(r.online_error_sd),
                "test_error": _number(r.test_error),
                "test_error_sd": _number(r.test_error_sd),
                "n_support": _number(r.n_support),
                "us_per_example": _number(r.us_per_example),
                "rank": _number(r.rank),
                "verdict": verdicts.get((str(r.stream), label), ""),
                "flags": str(r.flags or ""),
                "failed": str(r.failed or ""),
            }
        )
    return rows


def _curves(cmp: Comparison, traces: pd.DataFrame) -> dict[str, dict[str, list[list[float]]]]:
    """Per stream and label: the online error over seeds at each checkpoint (thinned)."""
    if traces is None or traces.empty or not {"task_id", "seen", "online_error"} <= set(traces):
        return {}
    ok = cmp.runs[cmp.runs["status"] == "ok"][["task_id", "stream", "label"]]
    t = traces[["task_id", "seen", "online_error"]].merge(ok, on="task_id")
    out: dict[str, dict[str, list[list[float]]]] = {}
    for (stream, label), g in t.groupby(["stream", "label"], sort=False):
        mean = g.groupby("seen")["online_error"].mean()
        mean = mean[np.isfinite(mean.to_numpy(dtype=float))]
        if len(mean) > CURVE_POINTS:
            mean = mean.iloc[np.unique(np.linspace(0, len(mean) - 1, CURVE_POINTS).astype(int))]
        out.setdefault(str(stream), {})[str(label)] = [
            [float(x) for x in mean.index],
            [float(v) for v in mean.to_numpy()],
        ]
    return out


def _ranking(cmp: Comparison) -> dict[str, Any] | None:
    """The ranks across data sets and the Nemenyi groups, when the Friedman test rejects."""
    ranking = cmp.ranking
    fr = getattr(ranking, "friedman", None) or {}
    if not fr or not fr.get("significant") or len(ranking.mean_ranks) < 2:
        return None
    return {
        "mean_ranks": {str(k): float(v) for k, v in ranking.mean_ranks.items()},
        "cd": float(fr["cd"]),
        "groups": [list(map(str, g)) for g in ranking.groups],
        "n_datasets": int(fr["N"]),
    }


def _machine(cmp: Comparison) -> dict[str, Any]:
    """The machine the first finished run recorded."""
    for m in cmp.runs.get("machine", pd.Series(dtype=object)).dropna():
        if isinstance(m, dict):
            return {str(k): v for k, v in m.items()}
    return {}


def _times(runs: pd.DataFrame) -> tuple[float | None, float | None]:
    def col(name: str, how: str) -> float | None:
        if name not in runs:
            return None
        return _number(getattr(pd.to_numeric(runs[name], errors="coerce"), how)())

    return col("started_at", "min"), col("finished_at", "max")


def summarize(folder: Path, registry: Registry) -> Summary:
    """The summary of one results folder.

    Raises
    ------
    ResultsError, NothingToCompareError
        Not a results folder, results of a newer kbench, nothing finished (one line).
    """
    tables, cmp = load_comparison(folder, per_stream=False)
    runs = cmp.runs
    started, finished = _times(runs)
    streams: dict[str, dict[str, str]] = {}
    for r in runs[["stream", "seed", "stream_id"]].dropna().drop_duplicates().itertuples():
        streams.setdefault(str(r.stream), {})[str(r.seed)] = str(r.stream_id)
    versions = sorted({str(v) for v in runs.get("kbench_version", pd.Series()).dropna()})
    return {
        "format": SUMMARY_FORMAT,
        "id": study_id(folder),
        "name": folder.name,
        "path": str(folder.resolve()),
        "provenance": read_provenance(folder),
        "machine": _machine(cmp),
        "written_by": versions,
        "started": started,
        "finished": finished,
        "tasks": len(runs),
        "tasks_ok": int((runs["status"] == "ok").sum()),
        "metric": cmp.metric,
        "alpha": cmp.alpha,
        "labels": cmp.labels,
        "streams": streams,
        "rows": _rows(cmp, registry),
        "curves": _curves(cmp, tables.traces),
        "ranking": _ranking(cmp),
        "notes": list(cmp.notes),
    }
