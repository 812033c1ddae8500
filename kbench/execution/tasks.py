"""A task: one algorithm configuration on one stream with one seed."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

from kbench.core.specs import spec_name
from kbench.data.streams import StreamSpec


@dataclass(frozen=True)
class Task:
    """One unit of work of a study.

    Parameters
    ----------
    algorithm, kernel, loss
        Canonical specs (kernel and loss None when the algorithm takes none).
    stream
        The stream the algorithm runs on.
    seed
        The algorithm's seed (the stream has its own in ``stream.seed``).
    epochs
        Passes over the stream; the online error is that of the first pass.
    checkpoints
        About how many log-spaced checkpoints to record (the last example is always one).
    test_max
        Test examples used at intermediate checkpoints; the last checkpoint of each pass
        uses the whole test split.
    options
        Further settings as sorted ``(name, value)`` pairs, present only when set, so that
        adding one leaves the ids of existing tasks unchanged: ``max_queries`` (a label
        budget: the task stops at the example that spends it).
    """

    algorithm: str
    kernel: str | None
    loss: str | None
    stream: StreamSpec
    seed: int = 0
    epochs: int = 1
    checkpoints: int = 32
    test_max: int = 2000
    options: tuple[tuple[str, Any], ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the stream spec nested)."""
        d = asdict(self)
        d["stream"] = self.stream.to_dict()  # leaves out options at their old defaults
        d["options"] = dict(self.options)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Task:
        """Inverse of :meth:`to_dict`."""
        d = dict(d)
        d["stream"] = StreamSpec(**d["stream"])
        d["options"] = tuple(sorted(d.get("options", {}).items()))
        return cls(**d)

    @cached_property  # a task is frozen; the runner writes the id into every trace row
    def task_id(self) -> str:
        """Hash of the full configuration: the name of the task's result file."""
        text = json.dumps(self.to_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:20]

    @property
    def max_queries(self) -> int:
        """The label budget (0: none)."""
        return int(dict(self.options).get("max_queries", 0))

    @cached_property  # parsed once: the runner, its rows and the registry look-up use it
    def algorithm_name(self) -> str:
        """The algorithm's registered name (its spec without the parameters)."""
        return spec_name(self.algorithm)

    @cached_property
    def dataset_name(self) -> str:
        """The data set's registered name (its spec without the parameters)."""
        return spec_name(self.stream.dataset)

    @property
    def label(self) -> str:
        """A short readable description."""
        parts = [self.algorithm_name]
        if self.kernel:
            parts.append(spec_name(self.kernel))
        return f"{'/'.join(parts)} on {self.stream.label} (seed {self.seed})"
