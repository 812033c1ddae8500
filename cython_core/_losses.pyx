"""Python entry points to the compiled loss derivatives, for tests and diagnostics.

The learners call ``_loss_deriv`` inline from their own modules; this module exposes
the same code so that its values can be compared with the Python loss plugins.
"""
include "_loss_ops.pxi"

#: Compiled loss ids by enum name, read from the enum itself.
LOSS_KINDS = {
    "L_HINGE": L_HINGE,
    "L_LOGISTIC": L_LOGISTIC,
    "L_SQUARED": L_SQUARED,
    "L_EPS_INSENSITIVE": L_EPS_INSENSITIVE,
    "L_SMOOTH_HINGE": L_SMOOTH_HINGE,
    "L_SQUARED_HINGE": L_SQUARED_HINGE,
    "L_RAMP": L_RAMP,
    "L_HUBER": L_HUBER,
    "L_NOVELTY": L_NOVELTY,
}


def py_loss_deriv(int kind, double f, double y, double p1):
    """d loss(f, y) / d f as the compiled learners compute it (p1: the loss parameter)."""
    if kind < 0 or kind >= L_COUNT:
        raise ValueError(f"unknown compiled loss kind {kind} (valid: 0..{L_COUNT - 1})")
    return _loss_deriv(kind, f, y, p1)
