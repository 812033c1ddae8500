"""A study: experiments (grids of algorithms × kernels × losses × data sets × seeds) planned into tasks.

A study comes from CLI flags or a TOML file::

    [study]                      # defaults for every experiment
    seeds = [0, 1, 2]
    n = 5000

    [[experiment]]
    datasets = ["a9a", "digits[positive=5-9,scale=minmax]"]
    algorithms = ["perceptron", "norma[eta=0.5,budget=200]"]
    kernels = ["rbf[gamma=0.05]"]
    losses = ["hinge"]

A relative file path in a study file (a data set's ``path=``, ``out``) is relative to the
folder of the study file, not to the folder kbench runs in.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from kbench.core import toml
from kbench.core.errors import KbenchError, SpecError
from kbench.core.registry import Registry
from kbench.core.specs import check_label, format_spec, parse_spec, split_label, suggest
from kbench.data.streams import StreamSpec, split_stream_options
from kbench.execution.seed_lists import MAX_SEED, MAX_TASKS, parse_seeds
from kbench.execution.tasks import Task
from kbench.execution.tuning import (
    TuneSpec,
    check_overlap,
    configurations,
    evaluation_tasks,
    evaluation_window,
    group_id,
    parse_tune,
    tuning_tasks,
)

DEFAULT_STUDY = Path(__file__).parents[1] / "studies" / "default.toml"
#: Upper bounds of the protocol's integers, beyond which a run is a typo or cannot finish.
MAX_EPOCHS = 10_000
MAX_CHECKPOINTS = 100_000
#: Values of an experiment's ``multiclass``: none, one-vs-rest or one-vs-one.
MULTICLASS_REDUCTIONS = ("", "ovr", "ovo")


@dataclass
class Experiment:
    """One grid of a study."""

    algorithms: list[str]
    datasets: list[str]
    #: Data sets that join ``datasets`` when loading them reads only this machine (a LIBSVM
    #: catalogue set already in the cache, say); the others are skipped with the reason,
    #: never downloaded.
    cached_datasets: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    losses: list[str] = field(default_factory=list)
    seeds: list[int] = field(default_factory=lambda: [0])
    n: int | None = None
    epochs: int = 1
    checkpoints: int = 32
    test_max: int = 2000
    max_queries: int = 0
    #: Run binary-only learners on multiclass data through this reduction ("ovr" or
    #: "ovo"); "" skips them, with the reason, as for any unsupported pair.
    multiclass: str = ""
    #: Tune each algorithm and kernel per data set before evaluating it: a table
    #: ``{method = "grid"|"random", budget = N, on = "prefix:F"|"seeds:A-B"|"dataset:SPEC"}``
    #: (see :mod:`kbench.execution.tuning`), or None to run the specs as written.
    tune: dict[str, Any] | None = None
    name: str = ""
    #: Folder that relative data paths are resolved against (a study file's folder); not
    #: a study-file key.
    folder: Path | None = None
    #: Results folder a study file names with ``out`` (resolved), or None.
    out: Path | None = None
    #: The study file the experiment was read from (its provenance), or None; not a
    #: study-file key.
    source: Path | None = None
    #: Which runs a tuned experiment plans: "tuning" (every configuration on the tuning
    #: streams) or "evaluation" (the selected ones); not a study-file key.
    phase: str = ""
    #: Evaluation phase: tuning group id → the selected (algorithm, kernel) specs.
    selected: dict[str, tuple[str, str | None]] | None = None


#: Keys of a study file's tables; ``out`` only in [study].
_HIDDEN = {"folder", "out", "phase", "selected", "source"}
_TABLES = ("study", "experiment")


def load_study(path: str | Path) -> list[Experiment]:
    """Read a TOML study file into its experiments."""
    path = Path(path)
    try:
        data = toml.loads(path.read_text())
    except FileNotFoundError:
        raise KbenchError(f"study file {path} does not exist") from None
    except toml.TOMLDecodeError as exc:
        raise KbenchError(f"study file {path} is not valid TOML: {exc}") from None
    except (UnicodeDecodeError, IsADirectoryError, PermissionError) as exc:
        raise KbenchError(f"study file {path} cannot be read: {exc}") from None
    for key, value in data.items():
        if key not in _TABLES:
            kind = (
                "table"
                if isinstance(value, dict)
                or (isinstance(value, list) and value and isinstance(value[0], dict))
                else "key"
            )
            raise KbenchError(
                f"study file {path}: unknown {kind} {key!r}{suggest(key, _TABLES)}; a study file "
                f"has a [study] table and [[experiment]] tables"
            )
    defaults = data.get("study", {})
    blocks = data.get("experiment", [])
    if not blocks:
        blocks = [{}]
    if (
        not isinstance(defaults, dict)
        or not isinstance(blocks, list)
        or not all(isinstance(b, dict) for b in blocks)
    ):
        raise KbenchError(
            f"study file {path}: [study] must be a table and [[experiment]] an array of tables"
        )
    allowed = {f.name for f in fields(Experiment)} - _HIDDEN
    folder = path.parent
    out = defaults.pop("out", None) if isinstance(defaults, dict) else None
    if out is not None and (not isinstance(out, str) or not out.strip()):
        raise KbenchError(f"study file {path}: [study] out must be a folder name, got {out!r}")
    experiments = []
    for i, block in enumerate(blocks):
        where = "[study]" if i == 0 and not data.get("experiment") else f"experiment {i + 1}"
        unknown = sorted(set(defaults) - allowed) or sorted(set(block) - allowed)
        if unknown:
            table = "[study]" if unknown[0] in defaults else where
            hint = (
                " (out belongs in [study])" if unknown[0] == "out" else suggest(unknown[0], allowed)
            )
            keys = allowed | {"out"} if table == "[study]" else allowed
            raise KbenchError(
                f"study file {path}: unknown key {unknown[0]!r} in {table}{hint}; "
                f"keys: {', '.join(sorted(keys))}"
            )
        merged = {**defaults, **block}
        if isinstance(merged.get("algorithms"), list):  # {spec = ..., label = ...} entries
            merged["algorithms"] = [
                labelled_entry(v, f"study file {path}: experiment {i + 1}: algorithms")
                for v in merged["algorithms"]
            ]
        for key, value in merged.items():
            _check_type(path, i + 1, key, value)
        for key in ("algorithms", "datasets"):
            if not merged.get(key):
                raise KbenchError(f"study file {path}: {where} lists no {key}")
        experiments.append(
            Experiment(
                **merged,
                folder=folder,
                source=path,
                out=None if out is None else Path(os.path.join(folder, os.path.expanduser(out))),
            )
        )
    return experiments


_LISTS_OF_STR = ("algorithms", "datasets", "cached_datasets", "kernels", "losses")


def labelled_entry(value: object, where: str) -> object:
    """A study file's ``{spec = "pa[C=1]", label = "PA"}`` as ``"pa[C=1]@PA"``; any other
    value unchanged (the type check that follows reports it)."""
    if not isinstance(value, dict):
        return value
    if set(value) != {"spec", "label"} or not all(isinstance(v, str) for v in value.values()):
        raise KbenchError(
            f"{where}: an algorithm table takes a spec and a label, e.g. "
            f'{{spec = "pa[C=1]", label = "PA"}}; got {value!r}'
        )
    return f"{value['spec']}@{check_label(value['label'], value['spec'])}"


_INTS = ("epochs", "checkpoints", "test_max", "max_queries")


def _check_type(path: Path, index: int, key: str, value: object) -> None:
    where = f"study file {path}: experiment {index}: {key}"
    if key in _LISTS_OF_STR:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise KbenchError(f"{where} must be a list of spec strings, got {value!r}")
    elif key == "seeds":
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise KbenchError(f"{where} must be a list of integers, got {value!r}")
    elif key in _INTS or key == "n":
        if not (isinstance(value, int) and not isinstance(value, bool)):
            raise KbenchError(f"{where} must be an integer, got {value!r}")
    elif key == "name" and not isinstance(value, str):
        raise KbenchError(f"{where} must be a string, got {value!r}")
    elif key == "tune":
        parse_tune(value, where)
    elif key == "multiclass" and value not in MULTICLASS_REDUCTIONS:
        raise KbenchError(
            f"{where} must be one of {', '.join(repr(r) for r in MULTICLASS_REDUCTIONS)}, "
            f"got {value!r}"
        )


@dataclass
class Plan:
    """The tasks of a study, and the combinations skipped with their reasons."""

    tasks: list[Task]
    skipped: list[tuple[str, str]]


def plan(experiments: list[Experiment], registry: Registry) -> Plan:
    """Expand experiments into tasks, validating every spec before anything runs."""
    tasks: dict[str, Task] = {}
    skipped: list[tuple[str, str]] = []
    for exp in experiments:
        if not exp.seeds:
            raise SpecError("a study needs at least one seed")
        bad_seeds = [s for s in exp.seeds if not 0 <= s <= MAX_SEED]
        if bad_seeds:
            raise SpecError(
                f"seed {bad_seeds[0]} is out of range: seeds are integers from 0 to {MAX_SEED}"
            )
        if exp.checkpoints < 1 or exp.test_max < 1:
            raise SpecError("checkpoints and test_max must be at least 1")
        if exp.checkpoints > MAX_CHECKPOINTS:
            raise SpecError(
                f"checkpoints must be at most {MAX_CHECKPOINTS:,}, got {exp.checkpoints:,} "
                f"(each checkpoint evaluates the held-out set)"
            )
        if exp.epochs < 1:
            raise SpecError(f"epochs must be at least 1, got {exp.epochs}")
        if exp.epochs > MAX_EPOCHS:
            raise SpecError(f"epochs must be at most {MAX_EPOCHS:,}, got {exp.epochs:,}")
        if exp.max_queries < 0:
            raise SpecError(f"max_queries must be at least 0, got {exp.max_queries}")
        if exp.n is not None and exp.n < 1:
            raise SpecError(f"--n must be at least 1, got {exp.n}")
        if exp.multiclass not in MULTICLASS_REDUCTIONS:
            raise SpecError(f"multiclass must be ovr or ovo, got {exp.multiclass!r}")
        streams = [_stream_base(spec, registry, exp) for spec in exp.datasets]
        for spec in exp.cached_datasets:
            download = registry.create("dataset", split_stream_options(spec)[0]).download_needed()
            if download is None:
                streams.append(_stream_base(spec, registry, exp))
            else:
                skipped.append(
                    (f"data set {spec}", f"{download}; cached_datasets take no download")
                )
        raw_kernels = {registry.canonical("kernel", k): k for k in exp.kernels or ["rbf"]}
        kernels = list(raw_kernels)
        tune, tuning_stream = _tuning_setup(exp, streams, registry)
        losses = [registry.canonical("loss", spec) for spec in exp.losses]
        bound = len(tasks) + len(exp.algorithms) * len(streams) * len(kernels) * max(
            1, len(losses)
        ) * len(exp.seeds)
        if bound > MAX_TASKS:
            raise SpecError(
                f"the study would plan up to {bound:,} tasks, more than kbench's limit of "
                f"{MAX_TASKS:,} (each task writes its own result file); split it into smaller "
                f"studies or use fewer seeds"
            )
        for alg_spec in exp.algorithms:
            alg_spec = split_label(alg_spec)[0]  # a label names the spec; it is no parameter
            base_cls, _ = registry.resolve("algorithm", alg_spec)
            base_algorithm = registry.canonical("algorithm", alg_spec)
            for dataset, options, task_kind, n_classes in streams:
                cls, algorithm = base_cls, base_algorithm
                if _reducible(cls, task_kind, exp.multiclass):
                    # A binary learner on multiclass data, through the requested reduction.
                    algorithm = registry.canonical(
                        "algorithm", f"{exp.multiclass}[base={base_algorithm}]"
                    )
                    cls, _ = registry.resolve("algorithm", algorithm)
                label = f"{cls.name} on {dataset}"
                reason = cls.supports(task_kind)
                if reason and _reducible(cls, task_kind, "ovr"):
                    reason += (
                        '; --multiclass ovr (multiclass = "ovr" in a study) runs it one-vs-rest'
                    )
                if reason:
                    skipped.append((label, reason))
                    continue
                alg_losses: Sequence[str | None] = [None]
                if cls.uses_loss:
                    alg_losses = losses or [
                        registry.canonical("loss", _default_loss(cls, task_kind, registry))
                    ]
                for loss in alg_losses:
                    loss_obj = registry.create("loss", loss) if loss else None
                    reason = cls.supports(task_kind, loss_obj)
                    if reason:
                        skipped.append((f"{label} with loss {loss}", reason))
                        continue
                    for kernel in kernels if cls.uses_kernel else [None]:
                        kernel_obj = registry.create("kernel", kernel) if kernel else None
                        # Construct once so that out-of-range values fail before anything runs.
                        registry.create(
                            "algorithm",
                            algorithm,
                            kernel=kernel_obj,
                            loss=loss_obj,
                            task=task_kind,
                            n_classes=n_classes,
                            seed=0,
                        )
                        group = [
                            Task(
                                algorithm=algorithm,
                                kernel=kernel,
                                loss=loss,
                                stream=StreamSpec(dataset=dataset, seed=seed, **options),
                                seed=seed,
                                epochs=exp.epochs,
                                checkpoints=exp.checkpoints,
                                test_max=exp.test_max,
                                options=(("max_queries", exp.max_queries),)
                                if exp.max_queries
                                else (),
                            )
                            for seed in exp.seeds
                        ]
                        if tune is not None and cls.offline:
                            group = _untuned_reference(exp, tune, group)
                            if exp.phase == "tuning":
                                skipped.append((f"tuning of {label}", UNTUNED_REFERENCE))
                        elif tune is not None:
                            fixed = (
                                set(parse_spec(alg_spec)[1]),
                                set(parse_spec(raw_kernels[kernel])[1]) if kernel else set(),
                            )
                            group, why = _tuned(exp, tune, group, fixed, tuning_stream, registry)
                            if why:
                                skipped.append((label, why))
                        for task in group:
                            tasks.setdefault(task.task_id, task)
    return Plan(tasks=list(tasks.values()), skipped=skipped)


#: Why a batch reference in a tuned experiment has no tuning runs.
UNTUNED_REFERENCE = (
    "a batch reference has no online error, which the selection reads; it runs as written "
    "on the evaluation streams"
)


def _untuned_reference(exp: Experiment, tune: TuneSpec, group: list[Task]) -> list[Task]:
    """A batch reference (an offline learner) in a tuned experiment: no tuning runs, and
    its spec as written on the streams the tuned learners are evaluated on (after the
    prefix under ``prefix:``), so that it pairs with them."""
    if exp.phase == "tuning":
        return []
    window = evaluation_window(tune)
    return [replace(t, options=tuple(sorted((dict(t.options) | window).items()))) for t in group]


def _tuned(
    exp: Experiment,
    tune: TuneSpec,
    group: list[Task],
    fixed: tuple[set[str], set[str]],
    tuning_stream: StreamSpec | None,
    registry: Registry,
) -> tuple[list[Task], str]:
    """The tasks of a tuned group in the experiment's phase, and why there are none."""
    first = group[0]
    gid = group_id(first, tune, exp.seeds)
    if exp.phase == "tuning":
        configs = configurations(first.algorithm, first.kernel, *fixed, tune, registry)
        return tuning_tasks(group, configs, tune, gid, tuning_stream), ""
    chosen = (exp.selected or {}).get(gid)
    if chosen is None:
        return [], "tuning found no configuration that ran on every tuning stream"
    return evaluation_tasks(group, chosen, tune, gid), ""


def _tuning_setup(
    exp: Experiment, streams: list[tuple[str, dict[str, Any], str, int]], registry: Registry
) -> tuple[TuneSpec | None, StreamSpec | None]:
    """An experiment's tuning spec and tuning data set, checked against its evaluation
    streams (overlap is refused); (None, None) for an untuned experiment."""
    if exp.tune is None:
        return None, None
    if exp.phase not in ("tuning", "evaluation"):
        raise SpecError(
            "a study with tune = {...} runs in two phases: run it with kbench run "
            "(kbench.execution.tuned_study.run_study)"
        )
    tune = parse_tune(exp.tune)
    tuning_stream = None
    tuning_dataset = None
    if tune.on == "dataset":
        tuning_dataset, t_options, t_kind, _ = _stream_base(tune.dataset, registry, exp)
        tuning_stream = StreamSpec(dataset=tuning_dataset, seed=0, **t_options)
    for dataset, options, task_kind, _ in streams:
        source = getattr(registry.resolve("dataset", dataset)[0], "source", "generator")
        check_overlap(tune, exp.seeds, dataset, options, source, tuning_dataset)
        if tuning_stream is not None and t_kind != task_kind:
            raise SpecError(
                f"tune on dataset:{tune.dataset} is a {t_kind} task but {dataset} is "
                f"{task_kind}: a configuration must be tuned on the task it is evaluated on"
            )
    return tune, tuning_stream


def _reducible(cls: Any, task_kind: str, reduction: str) -> bool:
    """Whether a study's multiclass reduction applies: a binary-only online learner on
    multiclass data (learners that run multiclass themselves are left as they are)."""
    return bool(
        reduction
        and task_kind == "multiclass"
        and "multiclass" not in cls.tasks
        and "binary" in cls.tasks
        and not cls.offline
        and cls.name not in ("ovr", "ovo")
    )


#: The loss an algorithm that takes one gets on each task when the study names none.
TASK_LOSSES = {
    "binary": "hinge",
    "multiclass": "multiclass_hinge",
    "regression": "squared",
    "novelty": "novelty_hinge",
}


def _default_loss(cls: Any, task_kind: str, registry: Registry) -> str:
    """The algorithm's own default loss if it fits the task, else the task's usual one."""
    own = getattr(cls, "default_losses", {}).get(task_kind, cls.default_loss)
    if own and task_kind in registry.create("loss", own).tasks:
        return own
    fallback = TASK_LOSSES.get(task_kind, "hinge")
    return fallback if registry.has("loss", fallback) else (own or "hinge")


def _stream_base(
    spec: str, registry: Registry, exp: Experiment
) -> tuple[str, dict[str, Any], str, int]:
    """Canonical data-set spec, stream options, task and class count of one data-set spec."""
    dataset_spec, options = split_stream_options(spec)
    if exp.folder is not None:
        dataset_spec = _paths_relative_to(dataset_spec, exp.folder, registry)
    if exp.n is not None and "n" not in options:
        options["n"] = exp.n
    StreamSpec(dataset="-", **options)  # validates the options
    cls, _ = registry.resolve("dataset", dataset_spec)
    dataset = registry.create("dataset", dataset_spec)
    task_kind = dataset.task  # an instance may choose its task (e.g. a table or file source)
    n_classes = dataset.info().get("classes", 2)
    if options.get("positive") is not None:
        if task_kind != "multiclass":
            raise SpecError(
                f"positive= groups the classes of a multiclass data set; {cls.name!r} is {task_kind}"
            )
        task_kind, n_classes = "binary", 2
    return registry.canonical("dataset", dataset_spec), options, task_kind, n_classes


def _paths_relative_to(spec: str, folder: Path, registry: Registry) -> str:
    """The data-set spec with its relative file paths joined to ``folder`` (a study file's)."""
    name, params = parse_spec(spec)
    names = getattr(registry.entry("dataset", name).cls, "path_params", ())
    base = os.fspath(folder)
    if base in ("", ".") or not any(params.get(k) for k in names):
        return spec  # unchanged, so the canonical spec (and task ids) stay as they were
    for key in names:
        value = params.get(key)
        if value and not os.path.isabs(os.path.expanduser(value)):
            params[key] = os.path.join(base, value)
    return format_spec(name, params)


__all__ = ["DEFAULT_STUDY", "Experiment", "Plan", "load_study", "parse_seeds", "parse_spec", "plan"]
