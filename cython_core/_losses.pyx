"""Python entry points to the compiled loss derivatives, for tests and diagnostics.

The learners cimport ``_loss_deriv`` (inline) from ``_losses.pxd``; this module exposes
the same code so that its values can be compared with the Python loss plugins, and the
loss ids, ``LossKind``, that the plugins' ``compiled()`` return.
"""

#: Compiled loss ids by enum name (the members of LossKind, the enum the learners switch on).
LOSS_KINDS = {kind.name: int(kind) for kind in LossKind}


def py_loss_deriv(int kind, double f, double y, double p1):
    """d loss(f, y) / d f as the compiled learners compute it (p1: the loss parameter)."""
    if kind < 0 or kind >= L_COUNT:
        raise ValueError(f"unknown compiled loss kind {kind} (valid: 0..{L_COUNT - 1})")
    return _loss_deriv(kind, f, y, p1)
