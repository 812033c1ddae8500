"""Multiclass losses of a vector of class scores and an integer label.

Scores have shape ``(C,)`` with a scalar label, or ``(n, C)`` with labels of shape
``(n,)``; labels are integers 0..C−1 (integral floats are accepted, as streams store
labels as float64). ``value`` returns a scalar or shape ``(n,)``; ``derivative``
returns an array of the scores' shape. Lipschitz constants are with respect to the
Euclidean norm of the score vector. Ties between class scores go to the lowest
class index, as in ``numpy.argmax`` and ``Algorithm.label_of``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kbench.api import Loss, hookimpl
from kbench.cython_core._online_ops import MulticlassLoss
from kbench.plugins.losses._common import result


def _scores_labels(f: Any, y: Any) -> tuple[np.ndarray, np.ndarray, bool]:
    """Scores as an ``(n, C)`` float array, labels as ``(n,)`` indices, and whether f was 1-D."""
    F = np.asarray(f, dtype=np.float64)
    if F.ndim not in (1, 2):
        raise ValueError(f"multiclass scores must have shape (C,) or (n, C), got {F.shape}")
    single = F.ndim == 1
    if single:
        F = F[None, :]
    n, C = F.shape
    if C < 2:
        raise ValueError(f"multiclass scores need at least 2 classes, got {C}")
    yv = np.asarray(y)
    if single and yv.size != 1:
        raise ValueError(f"one score vector needs one label, got shape {yv.shape}")
    yv = np.broadcast_to(yv.reshape(-1) if single else yv, (n,))
    if yv.dtype.kind not in "iu" and (yv.dtype.kind != "f" or not np.all(yv == np.floor(yv))):
        raise ValueError("multiclass labels must be integers 0..C-1")
    labels = yv.astype(np.intp)
    if labels.size and (labels.min() < 0 or labels.max() >= C):
        raise ValueError(
            f"multiclass labels must be in 0..{C - 1}, got {labels.min()}..{labels.max()}"
        )
    return F, labels, single


def _rivals(F: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Index of the highest-scoring class other than the label (lowest index on ties)."""
    masked = F.copy()
    masked[np.arange(len(F)), labels] = -np.inf
    return np.argmax(masked, axis=1)


class MulticlassHinge(Loss):
    """Crammer–Singer multiclass hinge ``max(0, 1 + max_{c≠y} f_c − f_y)``.

    Where the loss is positive its derivative is +1 on the highest-scoring rival
    class, −1 on the true class y and 0 elsewhere; where it is 0 (including the kink,
    margin exactly 1) the derivative is 0. Its gradient has Euclidean norm √2 when
    active, the Lipschitz constant.
    """

    name = "multiclass_hinge"
    tasks = frozenset({"multiclass"})
    lipschitz = math.sqrt(2.0)
    nu_trick = True

    def compiled_multiclass(self) -> int:
        return int(MulticlassLoss.L_MC_HINGE)

    def value(self, f, y):
        F, labels, single = _scores_labels(f, y)
        rows = np.arange(len(F))
        loss = np.maximum(0.0, 1.0 + F[rows, _rivals(F, labels)] - F[rows, labels])
        return result(loss[0]) if single else loss

    def derivative(self, f, y):
        F, labels, single = _scores_labels(f, y)
        rows = np.arange(len(F))
        rival = _rivals(F, labels)
        active = 1.0 + F[rows, rival] - F[rows, labels] > 0.0
        G = np.zeros_like(F)
        G[rows[active], rival[active]] = 1.0
        G[rows[active], labels[active]] = -1.0
        return G[0] if single else G


class Softmax(Loss):
    """Softmax (multiclass logistic) loss ``log Σ_c exp(f_c) − f_y``.

    Computed as a log-sum-exp shifted by the largest score, so it neither overflows
    nor underflows. The derivative is ``p − e_y`` with ``p = softmax(f)``; the second
    derivative is the Hessian ``diag(p) − p pᵀ``, of shape ``(C, C)`` (or
    ``(n, C, C)``). The gradient's Euclidean norm is below √2.
    """

    name = "softmax"
    tasks = frozenset({"multiclass"})

    def compiled_multiclass(self) -> int:
        return int(MulticlassLoss.L_SOFTMAX)

    smooth = True
    has_second_derivative = True
    lipschitz = math.sqrt(2.0)

    @staticmethod
    def _probabilities(F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Softmax of each row and its log-sum-exp."""
        top = F.max(axis=1, keepdims=True)
        e = np.exp(F - top)
        total = e.sum(axis=1, keepdims=True)
        return e / total, (np.log(total) + top)[:, 0]

    def value(self, f, y):
        F, labels, single = _scores_labels(f, y)
        _, lse = self._probabilities(F)
        loss = lse - F[np.arange(len(F)), labels]
        return result(loss[0]) if single else loss

    def derivative(self, f, y):
        F, labels, single = _scores_labels(f, y)
        P, _ = self._probabilities(F)
        P[np.arange(len(F)), labels] -= 1.0
        return P[0] if single else P

    def second_derivative(self, f, y):
        F, _, single = _scores_labels(f, y)
        P, _ = self._probabilities(F)
        H = -P[:, :, None] * P[:, None, :]
        idx = np.arange(F.shape[1])
        H[:, idx, idx] += P
        return H[0] if single else H


class MulticlassZeroOne(Loss):
    """Multiclass zero-one loss: 1 when ``argmax_c f_c ≠ y``, else 0. For evaluation only.

    Ties go to the lowest class index, the prediction rule of ``Algorithm.label_of``.
    Its derivative is 0 wherever it exists; it is neither continuous nor Lipschitz.
    """

    name = "multiclass_zero_one"
    tasks = frozenset({"multiclass"})
    lipschitz = math.inf

    def value(self, f, y):
        F, labels, single = _scores_labels(f, y)
        loss = (np.argmax(F, axis=1) != labels).astype(np.float64)
        return result(loss[0]) if single else loss

    def derivative(self, f, y):
        F, _, single = _scores_labels(f, y)
        G = np.zeros_like(F)
        return G[0] if single else G


@hookimpl
def kbench_register_losses(register):
    """Register the multiclass losses."""
    for cls in (MulticlassHinge, Softmax, MulticlassZeroOne):
        register(cls)
