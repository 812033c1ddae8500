"""Fixed inputs of kbench's asv suites: seeds, streams, profiles and how each case is built.

Must not be changed -- only appended.

asv compares each benchmark with its own results at earlier commits. A stream, a seed, a
kernel width or a loss that changed under a benchmark would make that history compare
different things, so every definition here is frozen: to benchmark something new, add a
new stream or constant under a new name and leave the old ones alone.

A case is one algorithm, given by a spec string (``"norma"``, ``"rbp[budget=50]"``), on
one stream: the algorithm with the spec's parameters (its defaults otherwise: what
``kbench run -a SPEC`` runs), the stream's RBF kernel and the stream's loss (the
algorithm's own default loss when that fits the task). A combination the algorithm does
not support raises NotImplementedError in ``setup``, which asv records as skipped.

Streams are registered as kbench data sets (``asv-binary-d2``, ...) in the suite's own
registry and built by :func:`kbench.data.streams.build_stream`, the path every study uses.
Their generators draw from ``numpy.random.RandomState``, whose streams NumPy keeps
identical across releases (``Generator``'s may change), so a NumPy upgrade cannot
change the data under a benchmark.

A profile (``fast``, ``regular``, ``large_scale``) scales the stream lengths and the
kernel-row sizes. :func:`profile_name` reads it from a suite's ``config.json`` (kbench's
own ``benchmarks/config.json``) and the environment variable ``KBENCH_ASV_PROFILE``
overrides it. Results of different profiles are different benchmarks: keep one profile
per machine.

Nothing here imports asv: the suites are plain classes that asv discovers.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from threadpoolctl import threadpool_limits

from kbench import hookimpl
from kbench.core.components import Algorithm, Data, Dataset
from kbench.core.registry import Registry
from kbench.core.specs import parse_spec
from kbench.data.streams import Stream, StreamSpec, build_stream
from kbench.execution.prequential import TaskResult, make_algorithm, run_task
from kbench.execution.tasks import Task

# One BLAS thread, as kbench's executors run every task: timings must not depend on how
# many cores happen to be idle while asv runs. (Importing kbench above loaded the BLAS
# libraries; threadpoolctl limits only those already loaded.) This module is imported
# only by asv suites, never by ``import kbench``.
threadpool_limits(1)

# -------------------------------------------------------------------------------------------
# Seeds
# -------------------------------------------------------------------------------------------

#: Seed of every stream (the data).
STREAM_SEED = 20240901
#: Seed passed to every algorithm (its own randomness).
ALGORITHM_SEED = 0
#: Seed of the kernel-row inputs.
KERNEL_SEED = 7

# -------------------------------------------------------------------------------------------
# Profiles
# -------------------------------------------------------------------------------------------

PROFILES: dict[str, dict[str, Any]] = {
    # stream_scale multiplies each stream's n_train; kernel_sizes are the M of kernel rows.
    "fast": {"stream_scale": 0.5, "kernel_sizes": (256, 1024)},
    "regular": {"stream_scale": 1.0, "kernel_sizes": (256, 1024, 4096)},
    "large_scale": {"stream_scale": 4.0, "kernel_sizes": (256, 1024, 4096, 16384)},
}


#: Environment variable that selects the profile, over any ``config.json``.
ENV_PROFILE = "KBENCH_ASV_PROFILE"
#: The profile when nothing selects one.
DEFAULT_PROFILE = "regular"


def profile_name(config: Path | None = None) -> str:
    """The active profile: ``$KBENCH_ASV_PROFILE``, else ``config``'s ``"profile"``, else
    ``regular``.

    Parameters
    ----------
    config
        A suite's ``config.json`` (``{"profile": "fast"}``); a missing file is no profile.

    Raises
    ------
    ValueError
        When the name is not one of :data:`PROFILES`.
    """
    name = os.environ.get(ENV_PROFILE)
    if not name and config is not None and config.exists():
        name = json.loads(config.read_text())["profile"]
    name = name or DEFAULT_PROFILE
    if name not in PROFILES:
        raise ValueError(f"kbench asv profile {name!r} is not one of {', '.join(PROFILES)}")
    return name


# -------------------------------------------------------------------------------------------
# Stream generators (frozen: each is the definition of the streams that use it)
# -------------------------------------------------------------------------------------------


def _checkerboard(rs: np.random.RandomState, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """4×4 checkerboard on the unit square: a non-linear binary task."""
    X = rs.uniform(0.0, 1.0, (n, d))
    cells = np.floor(4 * X[:, :2]).astype(int).sum(axis=1)
    return X, np.where(cells % 2 == 0, 1.0, -1.0)


def _blobs(
    rs: np.random.RandomState, n: int, d: int, classes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Overlapping Gaussian blobs whose centres sit on a circle of radius 1."""
    angle = 2 * np.pi * np.arange(classes) / classes
    centres = np.zeros((classes, d))
    centres[:, 0], centres[:, 1] = np.cos(angle), np.sin(angle)
    y = rs.randint(0, classes, n)
    return centres[y] + 0.45 * rs.standard_normal((n, d)), y.astype(float)


def _pixel_prototypes(
    rs: np.random.RandomState, d: int, classes: int, amplitude: float
) -> np.ndarray:
    """Three prototype 'images' per class: a shared base plus a class-specific patch."""
    base = rs.uniform(0.0, 1.0, d)
    protos = np.empty((classes, 3, d))
    for c in range(classes):
        patch = rs.uniform(0.0, 1.0, d) < 0.1
        for k in range(3):
            protos[c, k] = base + patch * rs.standard_normal(d) * amplitude
    return protos


def _pixels(
    rs: np.random.RandomState, n: int, protos: np.ndarray, binary: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Noisy copies of the prototypes, clipped to [0, 1] like pixel intensities."""
    classes, _, d = protos.shape
    y = rs.randint(0, classes, n)
    k = rs.randint(0, 3, n)
    X = np.clip(protos[y, k] + 0.35 * rs.standard_normal((n, d)), 0.0, 1.0)
    return X, (np.where(y == 0, 1.0, -1.0) if binary else y.astype(float))


def _wave(rs: np.random.RandomState, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Regression: y = sin(3 x₀) cos(2 x₁) + noise, x uniform on [−1, 1]²."""
    X = rs.uniform(-1.0, 1.0, (n, d))
    return X, np.sin(3 * X[:, 0]) * np.cos(2 * X[:, 1]) + 0.1 * rs.standard_normal(n)


def _novelty(rs: np.random.RandomState, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Three tight blobs (y = +1) with 5 % uniform outliers (y = −1)."""
    X, _ = _blobs(rs, n, d, 3)
    X = X * 0.6
    out = rs.uniform(0.0, 1.0, n) < 0.05
    X[out] = rs.uniform(-3.0, 3.0, (int(out.sum()), d))
    return X, np.where(out, -1.0, 1.0)


# -------------------------------------------------------------------------------------------
# Streams
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamDef:
    """One benchmark stream: its task, shape, test split and RBF width."""

    task: str
    d: int
    n_train: int
    n_test: int
    n_classes: int
    gamma: float
    generator: str
    description: str
    #: Strength of the class patches of the ``pixels`` generator.
    amplitude: float = 0.0

    def draw(self, seed: int, n_train: int) -> Data:
        """Training stream of ``n_train`` examples and the test split, from ``seed``."""
        # The test split and (for pixels) the prototypes come from their own generators,
        # so the test split is the same whatever the profile's training length.
        train, test = np.random.RandomState(seed + 1), np.random.RandomState(seed + 2)
        if self.generator == "pixels":
            protos = _pixel_prototypes(
                np.random.RandomState(seed), self.d, self.n_classes, self.amplitude
            )
            binary = self.task == "binary"
            X, y = _pixels(train, n_train, protos, binary)
            Xt, yt = _pixels(test, self.n_test, protos, binary)
        else:
            makers: dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]] = {
                "checkerboard": _checkerboard,
                "blobs": functools.partial(_blobs, classes=self.n_classes),
                "wave": _wave,
                "novelty": _novelty,
            }
            make = makers[self.generator]
            X, y = make(train, n_train, self.d)
            Xt, yt = make(test, self.n_test, self.d)
        return Data(X=X, y=y, X_test=Xt, y_test=yt, task=self.task, n_classes=self.n_classes)


# One stream a line: task, d, n_train, n_test, n_classes, gamma, generator, description.
# fmt: off
STREAMS: dict[str, StreamDef] = {
    "binary-d2": StreamDef("binary", 2, 2000, 500, 2, 30.0, "checkerboard", "4×4 checkerboard on the unit square"),
    "binary-d784": StreamDef("binary", 784, 1000, 300, 2, 0.005, "pixels", "784 'pixels': two classes of noisy prototypes", amplitude=0.3),
    "multiclass-d2": StreamDef("multiclass", 2, 2000, 500, 5, 4.0, "blobs", "five overlapping Gaussian blobs on a circle"),
    "multiclass-d784": StreamDef("multiclass", 784, 1000, 300, 10, 0.005, "pixels", "784 'pixels': ten classes of noisy prototypes", amplitude=0.6),
    "regression-d2": StreamDef("regression", 2, 2000, 500, 0, 10.0, "wave", "sin(3 x₀) cos(2 x₁) plus noise on [−1, 1]²"),
    "novelty-d2": StreamDef("novelty", 2, 2000, 500, 2, 10.0, "novelty", "three tight blobs with 5 % uniform outliers (labelled −1)"),
}
# fmt: on

#: Loss per task when the algorithm's default loss does not fit the task.
LOSSES = {
    "binary": "hinge",
    "multiclass": "multiclass_hinge",
    "regression": "eps_insensitive",
    "novelty": "novelty_hinge",
}

#: Examples learned before per-example timings start (the model is warm, not empty).
WARM = 512
#: Examples timed per sample in the per-example benchmarks, right after the warm prefix.
WINDOW = 32
#: Checkpoints of the runs behind the track_ benchmarks.
CHECKPOINTS = 8


def n_train(stream: str, profile: str) -> int:
    """Training length of a stream under a profile (never below WARM + WINDOW)."""
    sd = STREAMS[stream]
    return max(WARM + WINDOW, round(sd.n_train * PROFILES[profile]["stream_scale"]))


# -------------------------------------------------------------------------------------------
# The suite's registry: every installed plugin plus the benchmark streams as data sets
# -------------------------------------------------------------------------------------------


class _AsvStream(Dataset):
    """Base of the benchmark streams; one subclass per entry of STREAMS."""

    source = "generator"
    stream_key: ClassVar[str] = ""

    def __init__(self, *, n_train: int = 1000) -> None:
        self.n_train = n_train

    def load(self, seed: int) -> Data:
        return STREAMS[self.stream_key].draw(seed, self.n_train)


def _dataset_class(key: str) -> type[Dataset]:
    sd = STREAMS[key]
    doc = f"kbench asv stream {key}: {sd.description} (d = {sd.d}, {sd.task})."
    return type(
        f"AsvStream_{key.replace('-', '_')}",
        (_AsvStream,),
        {"name": f"asv-{key}", "task": sd.task, "stream_key": key, "__doc__": doc},
    )


@hookimpl
def _register_streams(register: Callable[[type[Dataset]], None]) -> None:
    for key in STREAMS:
        register(_dataset_class(key))


# A module object: the registry keys plugins by identity and hash.
_plugin = types.ModuleType("kbench_asv_streams")
vars(_plugin)["kbench_register_datasets"] = _register_streams


@functools.cache
def registry() -> Registry:
    """All installed kbench plugins, plus the benchmark streams (loaded once per process)."""
    return Registry(extra_plugins=[("kbench-asv-streams", _plugin)])


def algorithm_names() -> list[str]:
    """Every registered algorithm: the parameter list of the generated suites."""
    return registry().names("algorithm")


def kernel_names() -> list[str]:
    """Every registered kernel."""
    return registry().names("kernel")


@functools.cache
def stream(key: str, profile: str) -> Stream:
    """The benchmark stream ``key`` under a profile (built once per process)."""
    spec = StreamSpec(dataset=f"asv-{key}[n_train={n_train(key, profile)}]", seed=STREAM_SEED)
    return build_stream(spec, registry())


# -------------------------------------------------------------------------------------------
# Cases: one algorithm on one stream
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """What a benchmark needs to build one algorithm for one stream."""

    #: The algorithm's spec string, as the suite's parameter gives it.
    algorithm: str
    stream: str
    profile: str
    kernel: str | None
    loss: str | None
    #: A batch reference (``Algorithm.offline``): trained by ``fit``, with no online path.
    offline: bool = False

    def build(self) -> Algorithm:
        """A new algorithm with its spec's parameters, kernel and loss, built as kbench's
        runner builds the learner of the case's task."""
        return make_algorithm(self.task(), stream(self.stream, self.profile), registry())

    def train(self, algo: Algorithm, X: np.ndarray, y: np.ndarray) -> None:
        """Learn a block the way kbench's runner does: ``fit`` once for a batch reference,
        else the block fast path."""
        if self.offline:
            algo.fit(X, y)
        else:
            algo.learn_predict_many(X, y)

    def task(self) -> Task:
        """The kbench task that runs this case over its whole stream."""
        reg = registry()
        return Task(
            algorithm=reg.canonical("algorithm", self.algorithm),
            kernel=self.kernel,
            loss=self.loss,
            stream=stream(self.stream, self.profile).spec,
            seed=ALGORITHM_SEED,
            checkpoints=CHECKPOINTS,
        )


def case(algorithm: str, stream_key: str, profile: str) -> Case:
    """The case of an algorithm spec on a stream; NotImplementedError if it does not apply."""
    reg = registry()
    cls = reg.entry("algorithm", parse_spec(algorithm)[0]).cls
    sd = STREAMS[stream_key]
    reason = cls.supports(sd.task)
    if reason:
        raise NotImplementedError(reason)
    loss = None
    if cls.uses_loss:
        loss = LOSSES[sd.task]
        if cls.default_loss and sd.task in reg.entry("loss", cls.default_loss).cls.tasks:
            loss = cls.default_loss
        reason = cls.supports(sd.task, reg.create("loss", loss))
        if reason:
            raise NotImplementedError(reason)
    kernel = f"rbf[gamma={sd.gamma!r}]" if cls.uses_kernel else None
    return Case(algorithm, stream_key, profile, kernel, loss, offline=bool(cls.offline))


class WarmModel:
    """An algorithm that has learned the first WARM examples of its stream.

    A batch reference is fitted on them instead (it then predicts, but does not learn
    online).

    ``fresh()`` returns an independent copy of that state, cheaply (a deep copy of its
    arrays rather than relearning the prefix); an algorithm that cannot be deep-copied
    is rebuilt and relearns the prefix instead.
    """

    def __init__(self, c: Case) -> None:
        self.case = c
        self.stream = stream(c.stream, c.profile)
        self._model = self._learn_prefix()
        try:
            copy.deepcopy(self._model)
            self._copyable = True
        except Exception:  # an algorithm holding an uncopyable object: relearn instead
            self._copyable = False

    def _learn_prefix(self) -> Algorithm:
        algo = self.case.build()
        self.case.train(algo, self.stream.X[:WARM], self.stream.y[:WARM])
        return algo

    def fresh(self) -> Algorithm:
        """The warm model, as a copy that may be changed freely."""
        return copy.deepcopy(self._model) if self._copyable else self._learn_prefix()

    @property
    def window(self) -> tuple[np.ndarray, np.ndarray]:
        """The WINDOW examples that follow the warm prefix."""
        return self.stream.X[WARM : WARM + WINDOW], self.stream.y[WARM : WARM + WINDOW]


@functools.cache
def warm_model(algorithm: str, stream_key: str, profile: str, *, learns: bool = False) -> WarmModel:
    """The warm model of a case, built once per process (NotImplementedError if unsupported).

    ``learns``: the benchmark goes on learning online, which a batch reference cannot do.
    """
    c = case(algorithm, stream_key, profile)
    if learns and c.offline:
        raise NotImplementedError(
            f"{algorithm} is a batch reference: it is fitted once on the "
            "whole stream and does not learn online"
        )
    return WarmModel(c)


@functools.cache
def stream_run(algorithm: str, stream_key: str, profile: str) -> TaskResult:
    """kbench's prequential run of a case over its whole stream, once per process."""
    c = case(algorithm, stream_key, profile)
    result = run_task(c.task(), stream(stream_key, profile), registry(), trace_memory=False)
    if result.status != "ok":
        raise RuntimeError(
            f"kbench run of {algorithm} on {stream_key} ended {result.status}: "
            f"{result.run['reason']}"
        )
    return result
