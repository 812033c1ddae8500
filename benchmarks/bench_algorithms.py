"""Speed, memory and accuracy of every registered algorithm on the fixed benchmark streams.

The parameter grids are the registry itself: an algorithm registered by a built-in or
installed plugin is benchmarked here without new code. Each suite runs every algorithm on
every stream of ``common.STREAMS``; a combination the algorithm does not support is
skipped (``setup`` raises NotImplementedError).

- ``LearnOne``, ``PredictOne``: time per example of ``learn_one`` and ``predict_one`` on a
  model that has already learned ``common.WARM`` examples, averaged over the
  ``common.WINDOW`` examples that follow (each sample restarts from the same warm model).
- ``LearnPredictMany``: the block fast path that studies use, over the same window, from
  the same warm model (time per block of ``common.WINDOW`` examples).
- ``StreamMemory``: peak memory of learning the whole stream from scratch.
- ``Fit``: time to fit a batch reference (``Algorithm.offline``, e.g. LIBSVM) on the whole
  stream, the way the runner trains it; batch references have no online path, so the
  learning benchmarks above skip them (they still predict one by one after fitting the
  warm prefix).
- ``StreamQuality``: online error, held-out error and support vectors at the end of the
  stream, from kbench's own prequential runner, so that an accuracy regression shows on
  the dashboard next to a speed one.
"""

from __future__ import annotations

from . import common


class _EveryAlgorithmOnEveryStream:
    """The grid of every suite here (asv reads these attributes through the subclasses)."""

    params = (common.algorithm_names(), list(common.STREAMS))
    param_names = ["algorithm", "stream"]
    timeout = 300


class _PerExample(_EveryAlgorithmOnEveryStream):
    """A suite that times one call per example of the window after the warm prefix."""

    # Each sample is the WINDOW examples after the warm prefix; asv re-runs setup before
    # every timed call, and setup restores the warm model once the window is used up.
    number = common.WINDOW


class LearnOne(_PerExample):
    """Time per example of ``learn_one`` on a warm model."""

    def setup(self, algorithm: str, stream: str) -> None:
        warm = common.warm_model(algorithm, stream, learns=True)
        if getattr(self, "_warm", None) is not warm or self._i >= common.WINDOW:
            self._warm, self._i = warm, 0
            self._model = warm.fresh()
            self._X, self._y = warm.window

    def time_learn_one(self, algorithm: str, stream: str) -> None:
        """One ``learn_one`` call on the next example of the window."""
        i = self._i % common.WINDOW
        self._model.learn_one(self._X[i], self._y[i])
        self._i += 1


class PredictOne(_PerExample):
    """Time per example of ``predict_one`` on a warm model (which it does not change)."""

    def setup(self, algorithm: str, stream: str) -> None:
        warm = common.warm_model(algorithm, stream)
        if getattr(self, "_warm", None) is not warm:
            self._warm, self._i = warm, 0
            self._model = warm.fresh()
            self._X, _ = warm.window

    def time_predict_one(self, algorithm: str, stream: str) -> None:
        """One ``predict_one`` call on the next example of the window."""
        self._model.predict_one(self._X[self._i % common.WINDOW])
        self._i += 1


class LearnPredictMany(_EveryAlgorithmOnEveryStream):
    """Time of the block fast path ``learn_predict_many`` over one window of examples."""

    number = 1

    def setup(self, algorithm: str, stream: str) -> None:
        warm = common.warm_model(algorithm, stream, learns=True)
        self._model = warm.fresh()
        self._X, self._y = warm.window

    def time_learn_predict_many(self, algorithm: str, stream: str) -> None:
        """``learn_predict_many`` over the WINDOW examples after the warm prefix."""
        self._model.learn_predict_many(self._X, self._y)


class StreamMemory(_EveryAlgorithmOnEveryStream):
    """Peak memory of learning a whole stream from an empty model."""

    def setup(self, algorithm: str, stream: str) -> None:
        self._case = common.case(algorithm, stream)
        self._stream = common.stream(stream)

    def peakmem_learn_stream(self, algorithm: str, stream: str) -> None:
        """Build the algorithm and learn the stream (block fast path, or fit once)."""
        model = self._case.build()
        self._case.train(model, self._stream.X, self._stream.y)


class Fit(_EveryAlgorithmOnEveryStream):
    """Time to fit a batch reference on the whole stream (online algorithms are skipped)."""

    number = 1
    repeat = (1, 5, 60.0)
    timeout = 600

    def setup(self, algorithm: str, stream: str) -> None:
        self._case = common.case(algorithm, stream)
        if not self._case.offline:
            raise NotImplementedError(
                f"{algorithm} learns online: see LearnOne and LearnPredictMany"
            )
        self._stream = common.stream(stream)

    def time_fit(self, algorithm: str, stream: str) -> None:
        """``fit`` on every training example of the stream."""
        self._case.train(self._case.build(), self._stream.X, self._stream.y)


class StreamQuality(_EveryAlgorithmOnEveryStream):
    """Accuracy and model size at the end of a stream, from kbench's prequential runner."""

    timeout = 600

    def setup(self, algorithm: str, stream: str) -> None:
        self._run = common.stream_run(algorithm, stream).run

    def track_online_error(self, algorithm: str, stream: str) -> float:
        """Prequential error rate over the stream (mean squared error for regression)."""
        return float(self._run["online_error"])

    track_online_error.unit = "error"

    def track_test_error(self, algorithm: str, stream: str) -> float:
        """Error on the stream's held-out split after the last example (MSE for regression)."""
        return float(self._run["test_error"])

    track_test_error.unit = "error"

    def track_n_support(self, algorithm: str, stream: str) -> float:
        """Support vectors held at the end of the stream."""
        return float(self._run["n_support"])

    track_n_support.unit = "support vectors"
