"""Kernel rows shared among the binary learners of kbench's multiclass reductions.

The reductions (``plugins/algorithms/reductions.py``) tag every example with its stream
position as one extra, last coordinate, which the binary learners store with it. A row
``k(S, x)`` of the current example x is assembled here from a cache keyed by the stored
examples' tags: ``values[tag]`` holds ``k(x, stored example)`` when ``stamp[tag]`` equals
x's tag, and the other entries are computed (on the first d coordinates) and cached.
"""

from kbench.cython_core._kernels cimport as_spec
from kbench.cython_core._kernels cimport K_RBF, _dot, _kernel_one, _transform


def shared_row(kernel,
               const double[:, ::1] S, Py_ssize_t m, const double[::1] x,
               double[::1] stamp, double[::1] values, double[::1] norms, double[::1] out):
    """Write k(S[i, :d], x[:d]) for i < m into out, d = S's columns − 1; return how many
    values were computed (the others were read from ``values``).

    Tags (last column) are non-negative integers below ``len(stamp)``; stamps and tags are
    float64, exact for positions below 2⁵³. ``norms[tag]`` caches the squared norm of the
    tagged example (NaN until known): x's is stored on every call, so a stored example's
    norm, known since it was itself the current example, is never computed again.
    """
    cdef int kind
    cdef double gamma, scale, offset, degree
    kind, gamma, scale, offset, degree = as_spec(kernel).params()  # unpacked once, outside the nogil loop
    cdef Py_ssize_t d = S.shape[1] - 1, i, tag, n_tags = stamp.shape[0]
    cdef double t, xsq, ssq, v
    cdef long long evals = 0
    if d < 0 or x.shape[0] != d + 1:
        raise ValueError(f"shared_row: S has {S.shape[1]} columns but x has {x.shape[0]} entries")
    if (m < 0 or m > S.shape[0] or out.shape[0] < m or values.shape[0] < n_tags
            or norms.shape[0] < n_tags):
        raise ValueError(f"shared_row: {m} rows need S and out of at least {m} rows")
    t = x[d]
    if not (0 <= t < n_tags) or t != <double><Py_ssize_t>t:
        raise ValueError(f"shared_row: x has tag {t!r}, not a position below {n_tags}")
    for i in range(m):
        if not (0 <= S[i, d] < n_tags) or S[i, d] != <double><Py_ssize_t>S[i, d]:
            raise ValueError(f"shared_row: row {i} has tag {S[i, d]!r}, not a position "
                             f"below {n_tags}")
    with nogil:
        xsq = _dot(&x[0], &x[0], <int>d) if d > 0 else 0.0
        norms[<Py_ssize_t>t] = xsq
        for i in range(m):
            tag = <Py_ssize_t>S[i, d]
            if stamp[tag] == t:
                out[i] = values[tag]
            else:
                ssq = 0.0
                if kind == K_RBF and d > 0:
                    ssq = norms[tag]
                    if ssq != ssq:  # NaN: not known yet
                        ssq = _dot(&S[i, 0], &S[i, 0], <int>d)
                        norms[tag] = ssq
                if d > 0:
                    v = _kernel_one(kind, gamma, scale, offset, degree, &S[i, 0], &x[0], d,
                                    ssq, xsq)
                else:
                    v = _transform(kind, 0.0, 0.0, 0.0, gamma, scale, offset, degree)
                values[tag] = v
                stamp[tag] = t
                out[i] = v
                evals += 1
    return evals
