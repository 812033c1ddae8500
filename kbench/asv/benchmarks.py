"""The benchmark suites: speed, memory and accuracy of algorithms, speed of kernel rows.

asv discovers a suite as a class with ``time_``, ``peakmem_`` and ``track_`` methods in a
module of a benchmark folder. The classes here are templates: :func:`algorithm_suites`
and :func:`kernel_suites` make subclasses whose parameter grid is a given list of
algorithm or kernel specs and whose streams follow a given profile, and a benchmark
module puts them in its namespace (see :func:`kbench.asv.suites`).

Algorithm suites, over (algorithm, stream):

- ``LearnOne``, ``PredictOne``: time per example of ``learn_one`` and ``predict_one`` on a
  model that has already learned ``WARM`` examples, averaged over the ``WINDOW``
  examples that follow (each sample restarts from the same warm model).
- ``LearnPredictMany``: the block fast path that studies use, over the same window, from
  the same warm model (time per block of ``WINDOW`` examples).
- ``StreamMemory``: peak memory of learning the whole stream from scratch.
- ``Fit``: time to fit a batch reference (``Algorithm.offline``, e.g. LIBSVM) on the whole
  stream, the way the runner trains it; batch references have no online path, so the
  learning benchmarks above skip them (they still predict one by one after fitting the
  warm prefix). Made only when one of the algorithms is a batch reference.
- ``StreamQuality``: online error, held-out error and support vectors at the end of the
  stream, from kbench's own prequential runner, so that an accuracy regression shows on
  the dashboard next to a speed one.

Kernel suites: ``KernelRow`` times ``Kernel.row`` over M stored vectors of dimension d, in
float64 and float32; ``MatVec`` times the bare BLAS matrix-vector product ``S @ x`` of the
same shapes, the memory-bandwidth floor a kernel row is compared with.

A combination an algorithm does not support is skipped (``setup`` raises
NotImplementedError, which asv records as skipped).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from kbench.asv import streams as common
from kbench.core.specs import parse_spec

#: Dimensions of the kernel-row inputs.
DIMS = [2, 784]
#: Precisions of the kernel-row inputs.
DTYPES = ["float64", "float32"]
#: Processes (asv's rounds) per commit of a time benchmark, one sample each: the fewest
#: for which asv's two-sided Mann-Whitney test at p < 0.002 can call two commits
#: different (6 against 6 cannot go below p = 0.0022).
ROUNDS = 7


class Timed:
    """How every ``time_`` suite samples: CPU time, one sample in each of ROUNDS processes.

    On a busy machine, a benchmark process's timings move together: every sample of a
    process runs under the load of its moment. Samples of one process are therefore
    not independent, and asv's default (two processes of up to five samples) calls
    such shifts significant. One sample per process makes the process the unit that
    is compared, and asv interleaves the processes of the commits it compares. CPU
    time (the learners run on one BLAS thread) leaves out the time slices other
    processes take.
    """

    timer = staticmethod(time.process_time)
    rounds = ROUNDS
    repeat = 1


# -------------------------------------------------------------------------------------------
# Algorithm suites (templates: the grid and profile come from algorithm_suites)
# -------------------------------------------------------------------------------------------


class _AlgorithmSuite:
    """The grid of every algorithm suite (asv reads these attributes through the subclasses)."""

    params: tuple[list[str], list[str]] = ([], [])
    param_names = ["algorithm", "stream"]
    timeout = 300
    #: Profile of the streams (a key of ``streams.PROFILES``).
    profile = common.DEFAULT_PROFILE


class _PerExample(Timed, _AlgorithmSuite):
    """A suite that times one call per example of the window after the warm prefix."""

    # Each sample is the WINDOW examples after the warm prefix; asv re-runs setup before
    # every timed call, and setup restores the warm model once the window is used up.
    number = common.WINDOW
    #: The example of the window the next timed call reads (set by setup).
    _i: int


class _LearnOne(_PerExample):
    """Time per example of ``learn_one`` on a warm model."""

    def setup(self, algorithm: str, stream: str) -> None:
        warm = common.warm_model(algorithm, stream, self.profile, learns=True)
        if getattr(self, "_warm", None) is not warm or self._i >= common.WINDOW:
            self._warm, self._i = warm, 0
            self._model = warm.fresh()
            self._X, self._y = warm.window

    def time_learn_one(self, algorithm: str, stream: str) -> None:
        """One ``learn_one`` call on the next example of the window."""
        i = self._i % common.WINDOW
        self._model.learn_one(self._X[i], self._y[i])
        self._i += 1


class _PredictOne(_PerExample):
    """Time per example of ``predict_one`` on a warm model (which it does not change)."""

    def setup(self, algorithm: str, stream: str) -> None:
        warm = common.warm_model(algorithm, stream, self.profile)
        if getattr(self, "_warm", None) is not warm:
            self._warm, self._i = warm, 0
            self._model = warm.fresh()
            self._X, _ = warm.window

    def time_predict_one(self, algorithm: str, stream: str) -> None:
        """One ``predict_one`` call on the next example of the window."""
        self._model.predict_one(self._X[self._i % common.WINDOW])
        self._i += 1


class _LearnPredictMany(Timed, _AlgorithmSuite):
    """Time of the block fast path ``learn_predict_many`` over one window of examples."""

    number = 1

    def setup(self, algorithm: str, stream: str) -> None:
        warm = common.warm_model(algorithm, stream, self.profile, learns=True)
        self._model = warm.fresh()
        self._X, self._y = warm.window

    def time_learn_predict_many(self, algorithm: str, stream: str) -> None:
        """``learn_predict_many`` over the WINDOW examples after the warm prefix."""
        self._model.learn_predict_many(self._X, self._y)


class _StreamMemory(_AlgorithmSuite):
    """Peak memory of learning a whole stream from an empty model."""

    def setup(self, algorithm: str, stream: str) -> None:
        self._case = common.case(algorithm, stream, self.profile)
        self._stream = common.stream(stream, self.profile)

    def peakmem_learn_stream(self, algorithm: str, stream: str) -> None:
        """Build the algorithm and learn the stream (block fast path, or fit once)."""
        model = self._case.build()
        self._case.train(model, self._stream.X, self._stream.y)


class _Fit(_AlgorithmSuite):
    """Time to fit a batch reference on the whole stream (online algorithms are skipped)."""

    number = 1
    repeat = (1, 5, 60.0)
    timeout = 600
    # CPU time as the other suites; asv's default two processes of up to five fits.
    timer = staticmethod(time.process_time)

    def setup(self, algorithm: str, stream: str) -> None:
        self._case = common.case(algorithm, stream, self.profile)
        if not self._case.offline:
            raise NotImplementedError(
                f"{algorithm} learns online: see LearnOne and LearnPredictMany"
            )
        self._stream = common.stream(stream, self.profile)

    def time_fit(self, algorithm: str, stream: str) -> None:
        """``fit`` on every training example of the stream."""
        self._case.train(self._case.build(), self._stream.X, self._stream.y)


class _StreamQuality(_AlgorithmSuite):
    """Accuracy and model size at the end of a stream, from kbench's prequential runner."""

    timeout = 600

    def setup(self, algorithm: str, stream: str) -> None:
        self._run = common.stream_run(algorithm, stream, self.profile).run

    def track_online_error(self, algorithm: str, stream: str) -> float:
        """Prequential error rate over the stream (mean squared error for regression)."""
        return float(self._run["online_error"])

    track_online_error.unit = "error"  # type: ignore[attr-defined]

    def track_test_error(self, algorithm: str, stream: str) -> float:
        """Error on the stream's held-out split after the last example (MSE for regression)."""
        return float(self._run["test_error"])

    track_test_error.unit = "error"  # type: ignore[attr-defined]

    def track_n_support(self, algorithm: str, stream: str) -> float:
        """Support vectors held at the end of the stream."""
        return float(self._run["n_support"])

    track_n_support.unit = "support vectors"  # type: ignore[attr-defined]


# -------------------------------------------------------------------------------------------
# Kernel suites
# -------------------------------------------------------------------------------------------


def _inputs(m: int, d: int, dtype: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """S (m × d), its squared row norms and x, scaled so that ‖s − x‖² is about 2."""
    rs = np.random.RandomState(common.KERNEL_SEED)
    S = (rs.standard_normal((m, d)) / np.sqrt(d)).astype(dtype)
    x = (rs.standard_normal(d) / np.sqrt(d)).astype(dtype)
    sq = np.einsum("ij,ij->i", S, S).astype(dtype)
    return S, sq, x, float(x @ x)


def calls_per_sample(fn: Callable[[], object], target: float = 2e-3) -> int:
    """How many calls fill about ``target`` seconds (asv times each call separately)."""
    fn()
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    return int(min(1000, max(1, target / once)))


class _KernelRow(Timed):
    """``Kernel.row(S, x)`` with cached squared norms, into a preallocated output."""

    params: tuple[list[Any], ...] = ([], [], DIMS, DTYPES)
    param_names = ["kernel", "M", "d", "dtype"]

    def setup(self, kernel: str, m: int, d: int, dtype: str) -> None:
        if getattr(self, "_key", None) == (kernel, m, d, dtype):
            return  # asv re-runs setup between timed calls; the inputs do not change
        self._key = (kernel, m, d, dtype)
        self._kernel = common.registry().create("kernel", kernel)
        self._S, self._sq, self._x, self._xsq = _inputs(m, d, dtype)
        self._out = np.empty(m, dtype=dtype)
        self.number = calls_per_sample(lambda: self.time_row(kernel, m, d, dtype))

    def time_row(self, kernel: str, m: int, d: int, dtype: str) -> None:
        """One kernel row."""
        self._kernel.row(self._S, self._x, out=self._out, sq=self._sq, xsq=self._xsq)


class _MatVec(Timed):
    """The floor: NumPy's BLAS matrix-vector product ``S @ x`` of the same shapes."""

    params: tuple[list[Any], ...] = ([], DIMS, DTYPES)
    param_names = ["M", "d", "dtype"]

    def setup(self, m: int, d: int, dtype: str) -> None:
        if getattr(self, "_key", None) == (m, d, dtype):
            return
        self._key = (m, d, dtype)
        self._S, _, self._x, _ = _inputs(m, d, dtype)
        self._out = np.empty(m, dtype=dtype)
        self.number = calls_per_sample(lambda: self.time_matvec(m, d, dtype))

    def time_matvec(self, m: int, d: int, dtype: str) -> None:
        """One ``S @ x``."""
        np.matmul(self._S, self._x, out=self._out)


# -------------------------------------------------------------------------------------------
# Factories
# -------------------------------------------------------------------------------------------


def _suite(template: type, name: str, **attrs: Any) -> type:
    """A subclass of ``template`` named ``name`` (asv names a benchmark by its class)."""
    return type(name, (template,), {"__doc__": template.__doc__, **attrs})


def stream_keys(algorithms: Sequence[str]) -> list[str]:
    """The benchmark streams of a task that at least one of ``algorithms`` supports."""
    reg = common.registry()
    classes = [reg.entry("algorithm", parse_spec(a)[0]).cls for a in algorithms]
    return [
        key
        for key, sd in common.STREAMS.items()
        if any(not cls.supports(sd.task) for cls in classes)
    ]


def algorithm_suites(
    algorithms: Sequence[str],
    *,
    streams: Sequence[str] | None = None,
    profile: str = common.DEFAULT_PROFILE,
) -> dict[str, type]:
    """The algorithm suites over ``algorithms`` × ``streams``, by class name.

    Parameters
    ----------
    algorithms
        Algorithm specs (``"norma"``, ``"rbp[budget=50]"``); each is checked against the
        registry, so a misspelled name fails at discovery, not as skipped benchmarks.
    streams
        Keys of ``streams.STREAMS``; by default every stream of a task one of the
        algorithms supports.
    profile
        The stream lengths' profile.

    Returns
    -------
    dict
        ``LearnOne``, ``PredictOne``, ``LearnPredictMany``, ``StreamMemory``,
        ``StreamQuality``, and ``Fit`` when one of the algorithms is a batch reference.
    """
    reg = common.registry()
    algorithms = list(algorithms)
    for spec in algorithms:
        reg.canonical("algorithm", spec)  # a SpecError names what is wrong
    keys = stream_keys(algorithms) if streams is None else list(streams)
    unknown = [k for k in keys if k not in common.STREAMS]
    if unknown:
        raise ValueError(
            f"unknown kbench asv stream {unknown[0]!r}; streams: {', '.join(common.STREAMS)}"
        )
    attrs = {"params": (algorithms, keys), "profile": profile}
    templates = {
        "LearnOne": _LearnOne,
        "PredictOne": _PredictOne,
        "LearnPredictMany": _LearnPredictMany,
        "StreamMemory": _StreamMemory,
        "StreamQuality": _StreamQuality,
    }
    if any(reg.entry("algorithm", parse_spec(a)[0]).cls.offline for a in algorithms):
        templates["Fit"] = _Fit
    return {name: _suite(t, name, **attrs) for name, t in templates.items()}


def kernel_suites(
    kernels: Sequence[str], *, profile: str = common.DEFAULT_PROFILE
) -> dict[str, type]:
    """``KernelRow`` over ``kernels`` and ``MatVec``, its floor, at the profile's sizes.

    Parameters
    ----------
    kernels
        Kernel specs (``"rbf"``, ``"cauchy[sigma=0.5]"``), checked against the registry.
    profile
        The profile whose ``kernel_sizes`` are the M of the rows.
    """
    reg = common.registry()
    kernels = list(kernels)
    for spec in kernels:
        reg.canonical("kernel", spec)
    sizes = list(common.PROFILES[profile]["kernel_sizes"])
    return {
        "KernelRow": _suite(_KernelRow, "KernelRow", params=(kernels, sizes, DIMS, DTYPES)),
        "MatVec": _suite(_MatVec, "MatVec", params=(sizes, DIMS, DTYPES)),
    }
