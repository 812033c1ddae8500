# The labels of decision values and the class picks shared by the compiled learners
# (cimported; inline, so no import at run time).
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


cdef inline Py_ssize_t _argmax(const double* s, Py_ssize_t C) noexcept nogil:
    """Index of the largest entry, the lowest index on ties (numpy.argmax)."""
    cdef Py_ssize_t c, best = 0
    cdef double v = s[0]
    for c in range(1, C):
        if s[c] > v:
            best = c
            v = s[c]
    return best


cdef inline Py_ssize_t _rival(const double* s, Py_ssize_t C, Py_ssize_t y) noexcept nogil:
    """The highest-scoring class other than y, the lowest index on ties."""
    cdef Py_ssize_t c, best = -1
    cdef double v = 0.0
    for c in range(C):
        if c == y:
            continue
        if best < 0 or s[c] > v:
            best = c
            v = s[c]
    return best
