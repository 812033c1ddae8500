"""What NORMA and SVMD share: their loss and ν-trick parameters, the loss's setup, and the
margin novelty detection flags below.

The module name starts with an underscore, so the registry does not load it as a plugin.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.api import param
from kbench.cython_core._online_ops import OnlineConfig
from kbench.learners import ExpansionLearner, Rows, make_cfg, setup_loss
from kbench.learners.online_loss import L_PYTHON, NU_OFF, TASK_CODES


class MarginLearner(ExpansionLearner):
    """Base of NORMA and SVMD (not registered itself): any task, any loss, offsets and the
    ν-trick. Subclasses set their own defaults of ``eta`` and ``budget``."""

    tasks = frozenset(TASK_CODES)
    uses_loss = True
    default_loss = "hinge"

    eta: float = param(0.5, low=0.0, low_open=True)
    c: float = param(0.01, low=0.0)
    budget: int = param(1000, low=1)
    offset: bool = param(False)
    nu: float = param(0.0, low=0.0, high=1.0, high_open=True)
    margin0: float = param(1.0, low=0.0, low_open=True)
    eta_eps: float = param(1.0, low=0.0, low_open=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        assert self.loss is not None
        self._setup = setup_loss(
            self.name, self.loss, self.task, self.n_classes, self.nu, self.margin0
        )

    def _make_cfg(self, **settings: float) -> OnlineConfig:
        """The loop's configuration: the task, the loss, the step η, the shrinkage c and the
        offset, which both learners pass, then the learner's own ``settings``."""
        return make_cfg(
            self.kernel, self._setup, eta0=self.eta, c=self.c, use_offset=self.offset, **settings
        )

    @property
    def n_outputs(self) -> int:
        """Scores per example: the number of classes for multiclass, else 1."""
        return int(self._setup.n_out)

    def _compiled_block(self) -> bool:
        """Whether the loop computes the gradient itself (a compiled loss, or the ν-trick's
        margin losses) and the kernel rows (a built-in kernel)."""
        s = self._setup
        return self.model.spec.compiled and (s.loss_id != L_PYTHON or s.nu_mode != NU_OFF)

    def _offsets(self) -> np.ndarray:
        """The offsets b (one per output, at the start of the array), in the loop's state."""
        raise NotImplementedError

    def _with_offsets(self, raw: np.ndarray) -> np.ndarray:
        """The scores with their offsets, F + b (n × C), from the expansion's outputs (F
        first, C columns)."""
        C = self.n_outputs
        Fb: np.ndarray = raw[:, :C] + self._offsets()[:C]
        return Fb

    def _values(self, raw: np.ndarray) -> np.ndarray:
        """The decision values of the expansion's outputs: F + b, less the margin for
        novelty detection, one column unless multiclass."""
        Fb = self._with_offsets(raw)
        if self.task == "multiclass":
            return Fb
        if self.task == "novelty":
            values: np.ndarray = Fb[:, 0] - self._margin()
            return values
        first: np.ndarray = Fb[:, 0]
        return first

    def decision_one(self, x: Any) -> Any:
        raw = self.model.decision_one(x)
        if self.task == "multiclass":
            return self._values(raw[None, :])[0]
        f = raw[0] + self._offsets()[0]  # _values in scalars, cheaper than NumPy's calls
        return float(f - self._margin() if self.task == "novelty" else f)

    def decision_many(self, X: Any) -> np.ndarray:
        return self._values(self.model.decisions(Rows.of(X)))

    def _margin(self) -> float:
        """The margin below which novelty detection flags a point: the ν-trick's ε, or the
        novelty hinge's ρ."""
        return self._state.eps if self._setup.nu_mode != NU_OFF else self._setup.margin
