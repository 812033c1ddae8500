# Shared inline derivatives of the scalar losses the compiled learners support, cimported
# by their modules (``from kbench.cython_core._losses cimport ...``; inline, so no import at
# run time). The ids are the ones loss plugins return from ``compiled()``: the plugins read
# them from kbench.cython_core._losses.LossKind, so there is one list.
from libc.math cimport NAN, exp, fabs


cpdef enum LossKind:
    L_HINGE = 0
    L_LOGISTIC = 1
    L_SQUARED = 2
    L_EPS_INSENSITIVE = 3
    L_SMOOTH_HINGE = 4
    L_SQUARED_HINGE = 5
    L_RAMP = 6
    L_HUBER = 7
    L_NOVELTY = 8


# One past the largest id: the number of compiled losses.
cdef enum:
    L_COUNT = 9


cdef inline double _loss_deriv(int kind, double f, double y, double p1) noexcept nogil:
    """d loss(f, y) / d f for a scalar score f; p1 is the loss's one parameter.

    At a kink the derivative is the one-sided value that makes the inactive side win
    (0 at y f = 1 for the hinge), the convention of the Python plugins. An unknown
    kind gives NaN, which poisons the learner's output instead of silently using
    another loss.
    """
    cdef double z, r
    if kind == L_HINGE:
        return -y if y * f < 1.0 else 0.0
    elif kind == L_LOGISTIC:
        z = y * f
        # −y·σ(−z), written so that neither branch overflows.
        if z >= 0.0:
            r = exp(-z)
            return -y * r / (1.0 + r)
        return -y / (1.0 + exp(z))
    elif kind == L_SQUARED:
        return f - y
    elif kind == L_EPS_INSENSITIVE:
        r = f - y
        if r > p1:
            return 1.0
        if r < -p1:
            return -1.0
        return 0.0
    elif kind == L_SMOOTH_HINGE:
        z = y * f
        if z >= 1.0:
            return 0.0
        if z <= -1.0:
            return -y
        return -y * (1.0 - z) / 2.0
    elif kind == L_SQUARED_HINGE:
        z = y * f
        return -2.0 * y * (1.0 - z) if z < 1.0 else 0.0
    elif kind == L_RAMP:
        # R_s = H_1 − H_s, each hinge with derivative 0 at its own kink: active on [s, 1).
        z = y * f
        return -y if (z < 1.0 and z >= p1) else 0.0
    elif kind == L_HUBER:
        r = f - y
        if r > p1:
            return p1
        if r < -p1:
            return -p1
        return r
    elif kind == L_NOVELTY:
        # Labels carry no information in novelty detection; y is ignored.
        return -1.0 if f < p1 else 0.0
    return NAN


cdef inline double _loss_hess(int kind, double f, double y, double p1) noexcept nogil:
    """Second derivative in f of a compiled scalar loss; 0 where the plugin has none.

    Written operation for operation as the plugins' ``second_derivative`` so that the
    compiled loop and the Python path compute the same bits.
    """
    cdef double z, e, s
    if kind == L_LOGISTIC:
        z = y * f
        e = exp(-fabs(z))
        s = 1.0 / (1.0 + e) if z >= 0.0 else e / (1.0 + e)
        return y * y * s * (1.0 - s)
    elif kind == L_SQUARED:
        return 1.0
    elif kind == L_SMOOTH_HINGE:
        z = y * f
        return 0.5 * y * y if (z > -1.0 and z < 1.0) else 0.0
    elif kind == L_SQUARED_HINGE:
        return 2.0 * y * y if y * f < 1.0 else 0.0
    elif kind == L_HUBER:
        return 1.0 if fabs(f - y) <= p1 else 0.0
    return 0.0
