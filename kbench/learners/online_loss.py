"""How an online learner runs its loss: in its compiled loop, or from the loss plugin.

:func:`setup_loss` checks that a loss fits the task (and the ν-trick, which adapts the
margin of a hinge or the tube of the ε-insensitive loss) and returns its
:class:`LossSetup`; :func:`make_cfg` turns it and the kernel into the ``OnlineConfig``
the compiled loops take (``kbench.cython_core._online_ops``: the loss gradient ξ, the
Hessian–vector product χ = Λ·V, the prediction rule). A loss without a compiled form
(``loss_id == L_PYTHON``) is run by :func:`python_gradient`, which mirrors the compiled
formulas operation for operation, so that both paths make the same predictions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kbench.core.components import Kernel, Loss
from kbench.cython_core._online_ops import MulticlassLoss, NuMode, OnlineConfig, Task

#: Task codes of the compiled loops, by task name (the cpdef enum Task of _online_ops).
TASK_CODES = {member.name[2:].lower(): int(member) for member in Task}
#: Compiled ids of the two built-in multiclass losses, and the id of a Python-only loss.
L_MC_HINGE, L_SOFTMAX, L_PYTHON = (
    int(MulticlassLoss.L_MC_HINGE),
    int(MulticlassLoss.L_SOFTMAX),
    int(MulticlassLoss.L_PYTHON),
)
#: ν-trick modes: off, an adapted hinge margin, an adapted ε-insensitive tube.
NU_OFF, NU_MARGIN, NU_TUBE = int(NuMode.NU_OFF), int(NuMode.NU_MARGIN), int(NuMode.NU_TUBE)
#: The loss whose margin (or tube) the ν-trick adapts, per task (its ``nu_trick`` set).
NU_LOSSES = {
    "binary": "hinge",
    "multiclass": "multiclass_hinge",
    "novelty": "novelty_hinge",
    "regression": "eps_insensitive",
}


@dataclass(frozen=True)
class LossSetup:
    """How a learner runs its loss: outputs, compiled codes and the ν-trick's settings."""

    n_out: int
    task_code: int
    loss_id: int
    loss_p1: float
    nu_mode: int
    nu: float
    margin0: float
    #: Fixed margin of novelty detection without the ν-trick (the loss's ``rho``).
    margin: float
    #: Whether the loss has a second derivative (the Hessian term of SVMD).
    hessian: bool


def setup_loss(
    owner: str, loss: Loss, task: str, n_classes: int, nu: float, margin0: float
) -> LossSetup:
    """Check that ``loss`` fits ``task`` (and the ν-trick) and return how to run it.

    The ν-trick is on when ``nu > 0``; for novelty detection it is also on when the
    novelty hinge itself carries ``nu > 0``, and then its ``rho`` is the initial margin.
    """
    if task not in loss.tasks:
        raise ValueError(
            f"{owner}: loss {loss.name!r} cannot be used for {task} tasks "
            f"(it supports {', '.join(sorted(loss.tasks))})"
        )
    n_out = 1
    if task == "multiclass":
        if n_classes < 2:
            raise ValueError(f"{owner}: a multiclass task needs n_classes ≥ 2, got {n_classes}")
        n_out = int(n_classes)
    novelty = task == "novelty" and loss.nu_trick  # the novelty hinge: its own ν and ρ
    loss_nu = float(getattr(loss, "nu", 0.0)) if novelty else 0.0
    if nu > 0.0 and loss_nu > 0.0 and nu != loss_nu:
        raise ValueError(f"{owner}: nu={nu!r} and the loss's nu={loss_nu!r} disagree; set one")
    if nu == 0.0 and loss_nu > 0.0:
        nu, margin0 = loss_nu, float(getattr(loss, "rho", 0.0))  # the loss's own ν-trick settings
        if margin0 <= 0.0:
            raise ValueError(
                f"{owner}: the ν-trick needs the novelty hinge's rho > 0, got {margin0!r}"
            )
    nu_mode = NU_OFF
    if nu > 0.0:
        if not loss.nu_trick:
            raise ValueError(
                f"{owner}: the ν-trick (nu > 0) adapts the margin of loss "
                f"{NU_LOSSES[task]!r} on {task} tasks; got loss {loss.name!r}"
            )
        nu_mode = NU_TUBE if task == "regression" else NU_MARGIN
    compiled, multiclass = loss.compiled(), loss.compiled_multiclass()
    if compiled is not None:
        loss_id, p1 = int(compiled[0]), float(compiled[1])
    elif multiclass is not None:
        loss_id, p1 = int(multiclass), 0.0
    else:
        loss_id, p1 = L_PYTHON, 0.0
    margin = float(getattr(loss, "rho", 0.0)) if task == "novelty" else 0.0
    return LossSetup(
        n_out=n_out,
        task_code=TASK_CODES[task],
        loss_id=loss_id,
        loss_p1=p1,
        nu_mode=nu_mode,
        nu=float(nu),
        margin0=float(margin0),
        margin=margin,
        hessian=bool(loss.has_second_derivative) and nu_mode == NU_OFF,
    )


def make_cfg(kernel: Kernel, setup: LossSetup, **values: float) -> OnlineConfig:
    """The configuration of the compiled loops: the kernel's and the loss's codes, and
    ``values``, the learner's own settings (fields of ``OnlineConfig``)."""
    compiled = kernel.compiled()
    if compiled is None:  # the block loop will not run; the per-example path needs no codes
        compiled = (-1, 0.0, 0.0, 0.0, 0.0)
    kind, gamma, scale, offset, degree = compiled
    fields: dict[str, Any] = {
        "kind": int(kind),
        "gamma": gamma,
        "scale": scale,
        "offset": offset,
        "degree": degree,
        "task": setup.task_code,
        "n_out": setup.n_out,
        "loss": setup.loss_id,
        "loss_p1": setup.loss_p1,
        "nu_mode": setup.nu_mode,
        "nu": setup.nu,
        "margin": setup.margin,
    } | values
    return OnlineConfig(**fields)


def python_gradient(
    setup: LossSetup, loss: Loss, eps: float, Fb: np.ndarray, V: np.ndarray, y: float
) -> tuple[np.ndarray, np.ndarray, int]:
    """ξ, χ = Λ·V and the violation indicator s at the scores Fb, from the loss plugin.

    With the ν-trick the margin (or tube) is ``eps`` and the formulas are the ν-losses'
    (spec §1.6, §1.9), written as the compiled loop writes them.
    """
    C = setup.n_out
    chi = np.zeros(C)
    if setup.nu_mode == NU_OFF:
        if C == 1:
            f = float(Fb[0])
            xi = np.array([float(loss.derivative(f, y))])
            if setup.hessian:
                chi[0] = float(loss.second_derivative(f, y)) * V[0]
        else:
            xi = np.asarray(loss.derivative(Fb, y), dtype=np.float64).copy()
            if setup.hessian:
                chi = np.asarray(loss.second_derivative(Fb, y), dtype=np.float64) @ V
        return xi, chi, int(np.any(xi != 0.0))
    xi = np.zeros(C)
    s = 0
    if setup.task_code == TASK_CODES["multiclass"]:
        label = int(y)
        masked = Fb.copy()
        masked[label] = -np.inf
        rival = int(np.argmax(masked))
        if eps + Fb[rival] - Fb[label] > 0.0:
            xi[label], xi[rival], s = -1.0, 1.0, 1
        return xi, chi, s
    f = float(Fb[0])
    if setup.nu_mode == NU_TUBE:
        if abs(f - y) > eps:
            xi[0], s = (1.0 if f - y > 0.0 else -1.0), 1
    elif setup.task_code == TASK_CODES["novelty"]:
        if f < eps:
            xi[0], s = -1.0, 1
    elif y * f < eps:
        xi[0], s = -y, 1
    return xi, chi, s
