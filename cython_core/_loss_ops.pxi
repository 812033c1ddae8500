# Shared inline derivatives of the scalar losses the compiled learners support.
# Keep in sync with the ``cython_id`` of the loss plugins (kbench/plugins/losses).
from libc.math cimport exp, fabs

cdef enum:
    L_HINGE = 0
    L_LOGISTIC = 1
    L_SQUARED = 2
    L_EPS_INSENSITIVE = 3
    L_SMOOTH_HINGE = 4
    L_SQUARED_HINGE = 5


cdef inline double _loss_deriv(int kind, double f, double y, double p1) noexcept nogil:
    """d loss(f, y) / d f for a scalar score f."""
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
    else:  # L_SQUARED_HINGE
        z = y * f
        return -2.0 * y * (1.0 - z) if z < 1.0 else 0.0
