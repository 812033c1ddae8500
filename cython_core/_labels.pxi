# The label of a binary decision value, shared by the compiled block loops.
from libc.math cimport NAN, isfinite


cdef inline double _sign_label(double f) noexcept nogil:
    """+1 for f >= 0, -1 below; NaN when f is NaN or infinite, as Algorithm.label_of gives:
    the runner then stops the task as diverged instead of scoring a broken learner."""
    if not isfinite(f):
        return NAN
    return 1.0 if f >= 0.0 else -1.0


cdef inline double _class_label(double label, const double* s, Py_ssize_t C) noexcept nogil:
    """``label`` (the class a block loop picked from the C scores ``s``), or NaN when a
    score is not finite: an argmax over NaN would name a class for a broken learner."""
    cdef Py_ssize_t c
    for c in range(C):
        if not isfinite(s[c]):
            return NAN
    return label
