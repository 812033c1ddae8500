"""The tuning protocol: configurations tried on tuning streams, the best one evaluated.

A study's experiment may say::

    tune = {method = "random", budget = 8, on = "prefix:0.1"}

For each algorithm, kernel, loss and data set of the experiment (a *tuning group*) the
planner draws up to ``budget`` configurations from the search spaces of the algorithm and
the kernel (:mod:`kbench.core.search_space`), runs each on the tuning streams, selects the
configuration with the lowest mean online error over them (ties go to the first in
search order; a configuration that failed on any tuning stream is never selected) and
evaluates that one on the evaluation seeds. Tuning streams never overlap the
evaluation streams:

``prefix:F``
    The first fraction F of each evaluation stream. The evaluation run then starts after
    that prefix, so none of the examples it scores was seen while tuning that run.
``seeds:A-B``
    Streams of other seeds, which must not be evaluation seeds. Refused on a data set
    read from files (every seed shuffles the same examples) and under ``order=file`` or
    ``counting`` (every seed gives the same stream): there, use ``prefix`` or ``dataset``.
``dataset:SPEC``
    Another data set (with its own stream options), on the evaluation seeds; refused
    when it is the evaluation data set.

Tuning runs and evaluation runs are ordinary tasks: they go through the executors, the
stream cache and the results folder, so an interrupted tuning study resumes where it
stopped. Their task options say what they are (``phase``, ``tune``, ``tune_group``,
``tune_config``, ``window``), and the run rows carry those as columns.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from kbench.core import seeds
from kbench.core.errors import SpecError
from kbench.core.search_space import Dimension, search_space
from kbench.core.specs import format_spec, parse_spec
from kbench.data.gathered import rows_between
from kbench.data.streams import Stream, StreamSpec
from kbench.execution.seed_lists import parse_seeds
from kbench.execution.tasks import Task

METHODS = ("grid", "random")
#: Most configurations one tuning group may try (each is a run per tuning stream).
MAX_BUDGET = 10_000
_ON = re.compile(r"^(prefix|seeds|dataset):(.+)$")


@dataclass(frozen=True)
class TuneSpec:
    """A study's ``tune`` table, checked.

    Attributes
    ----------
    method
        ``grid`` or ``random``.
    budget
        Most configurations tried per tuning group.
    on
        Where configurations are tried: ``prefix``, ``seeds`` or ``dataset``.
    fraction
        The prefix's fraction of each stream (``prefix``).
    seeds
        The tuning seeds (``seeds``).
    dataset
        The tuning data set's spec, with stream options (``dataset``).
    """

    method: str
    budget: int
    on: str
    fraction: float = 0.0
    seeds: tuple[int, ...] = ()
    dataset: str = ""

    @property
    def text(self) -> str:
        """The spec in one string, e.g. ``random:8:prefix:0.1`` (stored with each run)."""
        where = {
            "prefix": f"{self.fraction:g}",
            "seeds": ",".join(map(str, self.seeds)),
            "dataset": self.dataset,
        }[self.on]
        return f"{self.method}:{self.budget}:{self.on}:{where}"


def parse_tune(value: Any, where: str = "tune") -> TuneSpec:
    """Check a ``tune`` table (``{method, budget, on}``) and return its :class:`TuneSpec`."""
    if not isinstance(value, dict):
        raise SpecError(
            f'{where} must be a table such as {{method = "random", budget = 8, on = "prefix:0.1"}}'
        )
    unknown = sorted(set(value) - {"method", "budget", "on"})
    if unknown:
        raise SpecError(f"{where}: unknown key {unknown[0]!r}; keys: budget, method, on")
    method = value.get("method", "random")
    if method not in METHODS:
        raise SpecError(f"{where}: method must be grid or random, got {method!r}")
    budget = value.get("budget")
    if not isinstance(budget, int) or isinstance(budget, bool) or not 1 <= budget <= MAX_BUDGET:
        raise SpecError(
            f"{where}: budget must be an integer from 1 to {MAX_BUDGET:,} (configurations "
            f"tried per algorithm and data set), got {budget!r}"
        )
    on = value.get("on")
    m = _ON.match(on) if isinstance(on, str) else None
    if m is None:
        raise SpecError(
            f'{where}: on must be "prefix:F" (0 < F < 1), "seeds:A-B" or "dataset:SPEC", got {on!r}'
        )
    kind, arg = m.group(1), m.group(2).strip()
    if kind == "prefix":
        try:
            fraction = float(arg)
        except ValueError:
            fraction = -1.0
        if not 0.0 < fraction < 1.0:
            raise SpecError(
                f"{where}: on = {on!r}: the prefix is a fraction of each stream, between 0 and 1 "
                "(exclusive), e.g. prefix:0.1"
            )
        return TuneSpec(method, budget, "prefix", fraction=fraction)
    if kind == "seeds":
        return TuneSpec(method, budget, "seeds", seeds=tuple(parse_seeds(arg)))
    return TuneSpec(method, budget, "dataset", dataset=arg)


def check_overlap(
    tune: TuneSpec,
    eval_seeds: list[int],
    dataset: str,
    options: dict[str, Any],
    source: str,
    tuning_dataset: str | None = None,
) -> None:
    """Refuse tuning streams that would overlap the evaluation streams (SpecError, one line).

    Parameters
    ----------
    tune
        The experiment's tuning spec.
    eval_seeds
        The evaluation seeds.
    dataset, options, source
        The evaluation data set's canonical spec, its stream options and its class's
        ``source`` (``generator`` for data drawn afresh under each seed).
    tuning_dataset
        The canonical spec of the tuning data set (``dataset:`` only).
    """
    if tune.on == "seeds":
        common = sorted(set(tune.seeds) & set(eval_seeds))
        if common:
            raise SpecError(
                f"tune on seeds:{','.join(map(str, tune.seeds))} overlaps the evaluation seeds "
                f"(seed {common[0]} is both): tuning streams must not be evaluation streams"
            )
        order = options.get("order", "shuffle")
        if order != "shuffle":
            raise SpecError(
                f"tune on seeds: {dataset} with order={order} gives the same stream under every "
                "seed, so the tuning streams would be the evaluation streams; use prefix:F"
            )
        if source != "generator":
            raise SpecError(
                f"tune on seeds: {dataset} is read from data, so every seed shuffles the same "
                "examples and the tuning streams would hold the evaluation examples; use "
                "prefix:F or dataset:SPEC"
            )
    elif tune.on == "dataset" and tuning_dataset == dataset:
        raise SpecError(
            f"tune on dataset:{tune.dataset} is the evaluation data set {dataset}: the tuning "
            "streams would hold the evaluation examples; use prefix:F or another data set"
        )


# --------------------------------------------------------------------------------------------
# Configurations
# --------------------------------------------------------------------------------------------


def _stable_seed(*parts: Any) -> int:
    text = json.dumps(parts, sort_keys=True, default=str)
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def _grid(space: dict[str, Dimension], budget: int) -> list[dict[str, Any]]:
    """At most ``budget`` points of the product grid: every value of each Choice, and as
    many points per continuous dimension as the budget left over allows (at least one)."""
    from itertools import product

    from kbench.core.search_space import Choice

    choices = [p for p, d in space.items() if isinstance(d, Choice)]
    ranged = [p for p in space if p not in choices]
    n_choice = int(np.prod([len(space[p].grid(0)) for p in choices])) if choices else 1
    per = 1
    if ranged:
        left = max(budget // n_choice, 1)
        per = max(int(np.floor(left ** (1.0 / len(ranged)) + 1e-9)), 1)
    axes = [space[p].grid(per) for p in space]
    points = [dict(zip(space, values, strict=True)) for values in product(*axes)]
    return points[:budget]


def _random(space: dict[str, Dimension], budget: int, seed: int) -> list[dict[str, Any]]:
    """The defaults first (a tuned learner is never chosen below its defaults on the tuning
    streams), then random draws until ``budget`` distinct points or 50 draws per point."""
    rng = seeds.rng(seed, "tuning")
    points: list[dict[str, Any]] = [{}]
    seen: set[str] = {"{}"}
    for _ in range(50 * budget):
        if len(points) >= budget:
            break
        point = {p: d.sample(rng) for p, d in space.items()}
        key = json.dumps(point, sort_keys=True)
        if key not in seen:
            seen.add(key)
            points.append(point)
    return points


def _with(kind: str, spec: str, values: dict[str, Any], registry: Any) -> str:
    name, params = parse_spec(spec)
    params.update({k: repr(v) if isinstance(v, float) else str(v) for k, v in values.items()})
    return registry.canonical(kind, format_spec(name, params))


def configurations(
    algorithm: str,
    kernel: str | None,
    fixed_algorithm: set[str],
    fixed_kernel: set[str],
    tune: TuneSpec,
    registry: Any,
) -> list[tuple[str, str | None]]:
    """The (algorithm spec, kernel spec) pairs a tuning group tries, in search order.

    Parameters
    ----------
    algorithm, kernel
        Canonical specs of the group's algorithm and kernel (None: no kernel).
    fixed_algorithm, fixed_kernel
        Parameters the user set in the specs: not tuned (a kernel with any parameter set
        is not tuned at all).
    tune
        The tuning spec (method and budget).
    registry
        Components by name.

    Returns
    -------
    list
        One pair when there is nothing to tune (a parameter-free learner, or every
        parameter fixed); otherwise up to ``tune.budget`` distinct pairs.
    """
    alg_cls, _ = registry.resolve("algorithm", algorithm)
    space = {f"a.{p}": d for p, d in search_space(alg_cls, fixed_algorithm).items()}
    # A kernel written with parameters (rbf[gamma=0.1], rbf[sigma=2]) is fixed as a whole:
    # its parameters can be alternatives of one another (an RBF's gamma and sigma).
    if kernel is not None and not fixed_kernel:
        kernel_cls, _ = registry.resolve("kernel", kernel)
        space |= {f"k.{p}": d for p, d in search_space(kernel_cls, fixed_kernel).items()}
    if not space:
        return [(algorithm, kernel)]
    if tune.method == "grid":
        points = _grid(space, tune.budget)
    else:
        # Seeded without the budget, so a search of budget k tries the first k
        # configurations of any larger one: budgets compare on the same draws.
        where = tune.text.split(":", 2)[2]
        points = _random(space, tune.budget, _stable_seed(algorithm, kernel, where))
    configs: list[tuple[str, str | None]] = []
    for point in points:
        a = {p[2:]: v for p, v in point.items() if p.startswith("a.")}
        k = {p[2:]: v for p, v in point.items() if p.startswith("k.")}
        pair = (
            _with("algorithm", algorithm, a, registry) if a else algorithm,
            _with("kernel", kernel, k, registry) if k and kernel else kernel,
        )
        if pair not in configs:
            configs.append(pair)
    return configs


# --------------------------------------------------------------------------------------------
# Tasks of the two phases
# --------------------------------------------------------------------------------------------


def group_id(task: Task, tune: TuneSpec, seeds: list[int]) -> str:
    """The id of a tuning group: what was tuned (the specs as the user wrote them, made
    canonical), on which data, how, and for which evaluation seeds."""
    key = {
        "algorithm": task.algorithm,
        "kernel": task.kernel,
        "loss": task.loss,
        "stream": replace(task.stream, seed=0).to_dict(),
        "epochs": task.epochs,
        "checkpoints": task.checkpoints,
        "test_max": task.test_max,
        "options": list(task.options),
        "tune": tune.text,
        "seeds": sorted(seeds),
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def tuning_tasks(
    base: list[Task],
    configs: list[tuple[str, str | None]],
    tune: TuneSpec,
    gid: str,
    tuning_stream: StreamSpec | None = None,
) -> list[Task]:
    """The tuning runs of one group: every configuration on every tuning stream.

    ``base`` holds the group's untuned evaluation tasks (one per evaluation seed);
    ``tuning_stream`` is the tuning data set's stream (``dataset:`` only, seed 0).
    """
    streams: list[tuple[StreamSpec, int]]
    window: tuple[tuple[str, Any], ...] = ()
    first = base[0]
    if tune.on == "prefix":
        streams = [(t.stream, t.seed) for t in base]
        window = (("window", f"head:{tune.fraction:g}"),)
    elif tune.on == "seeds":
        streams = [(replace(first.stream, seed=s), s) for s in tune.seeds]
    else:
        assert tuning_stream is not None
        streams = [(replace(tuning_stream, seed=t.seed), t.seed) for t in base]
    tasks = []
    for i, (algorithm, kernel) in enumerate(configs):
        for stream, seed in streams:
            options = dict(first.options) | dict(window)
            options |= {"phase": "tuning", "tune": tune.text, "tune_group": gid, "tune_config": i}
            tasks.append(
                replace(
                    first,
                    algorithm=algorithm,
                    kernel=kernel,
                    stream=stream,
                    seed=seed,
                    options=tuple(sorted(options.items())),
                )
            )
    return tasks


def evaluation_window(tune: TuneSpec) -> dict[str, str]:
    """The task option that puts an evaluation run after the tuning prefix (under
    ``prefix:``; none otherwise)."""
    return {"window": f"tail:{tune.fraction:g}"} if tune.on == "prefix" else {}


def evaluation_tasks(
    base: list[Task], selected: tuple[str, str | None], tune: TuneSpec, gid: str
) -> list[Task]:
    """The group's evaluation runs: the selected configuration on the evaluation seeds
    (after the prefix, under ``prefix:``)."""
    algorithm, kernel = selected
    # What was tuned, as the study gave it: the learner a comparison is about.
    extra: dict[str, Any] = {
        "tune": tune.text,
        "tune_group": gid,
        "base_algorithm": base[0].algorithm,
        "base_kernel": base[0].kernel or "",
    }
    extra |= evaluation_window(tune)
    return [
        replace(
            t,
            algorithm=algorithm,
            kernel=kernel,
            options=tuple(sorted((dict(t.options) | extra).items())),
        )
        for t in base
    ]


# --------------------------------------------------------------------------------------------
# Windows of a stream, and the selection rule
# --------------------------------------------------------------------------------------------


def window_bounds(window: str, n: int) -> tuple[int, int]:
    """Example range ``[start, stop)`` of ``head:F`` (the first ⌊F·n⌋ examples, at least
    one) or ``tail:F`` (the rest) on a stream of ``n`` examples."""
    part, _, text = window.partition(":")
    cut = min(max(int(np.floor(float(text) * n)), 1), n - 1) if n > 1 else n
    if part == "head":
        return 0, cut
    if part == "tail":
        return cut, n
    raise ValueError(f"unknown stream window {window!r}")


def window_id(stream_id: str, window: str | None) -> str:
    """The stream id of a task's ``window`` of the stream ``stream_id`` (itself if none)."""
    if not window:
        return stream_id
    return hashlib.sha256(f"{stream_id}|{window}".encode()).hexdigest()[: len(stream_id)]


def window_stream(stream: Stream, window: str | None) -> Stream:
    """The part of a stream a task's ``window`` option names (the stream itself if none).

    The part has its own stream id, so paired comparisons pair runs on the same part.
    The held-out test split, when the data set has one, is kept whole.
    """
    if not window:
        return stream
    start, stop = window_bounds(window, stream.n)
    sid = window_id(stream.stream_id, window)
    X = rows_between(stream.X, start, stop)  # a large stream's window is not read here
    return replace(stream, X=X, y=stream.y[start:stop], stream_id=sid)


def select(runs: Any, gid: str, n_streams: int) -> int | None:
    """The index (search order) of the group's selected configuration, or None.

    The rule: the lowest mean online error over the tuning streams, among configurations
    that ran ``ok`` on all ``n_streams`` of them; ties go to the first in search order.
    """
    if not len(runs) or "tune_group" not in runs:
        return None
    rows = runs[(runs["tune_group"] == gid) & (runs.get("phase") == "tuning")]
    best: tuple[float, int] | None = None
    for index, group in rows.groupby("tune_config", sort=True):
        ok = group[group["status"] == "ok"]
        if len(ok) < n_streams or len(group) > len(ok):
            continue
        score = (float(ok["online_error"].mean()), int(index))
        if best is None or score < best:
            best = score
    return None if best is None else best[1]


__all__ = [
    "METHODS",
    "TuneSpec",
    "check_overlap",
    "configurations",
    "evaluation_tasks",
    "evaluation_window",
    "group_id",
    "parse_tune",
    "select",
    "tuning_tasks",
    "window_bounds",
    "window_stream",
]
