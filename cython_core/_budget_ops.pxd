# Shared inline pieces of the budgeted learners: a seeded random generator and the
# incremental inverse of a kernel matrix. Cimported by _budget_perceptrons.pyx,
# _bpa.pyx, _bsgd.pyx, _bogd.pyx and _feature_maps.pyx (inline, so no import at run time).
from libc.stdint cimport uint64_t
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport dgemv, dger



# -- random numbers ---------------------------------------------------------------------------
# SplitMix64 (Steele, Lea and Flood 2014): one 64-bit word of state, a few integer operations
# per draw, and trivial to write again in Python, which the tests do to replay a run exactly.
# The state lives in a one-element uint64 array owned by the learner, so the compiled block
# loop and the per-example path draw from the same sequence.

cdef inline uint64_t _rng_next(uint64_t* s) noexcept nogil:
    cdef uint64_t z
    s[0] += <uint64_t>0x9E3779B97F4A7C15ULL
    z = s[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline double _rng_uniform(uint64_t* s) noexcept nogil:
    """A double in [0, 1) from the top 53 bits of the next word."""
    return <double>(_rng_next(s) >> 11) * (1.0 / 9007199254740992.0)


cdef inline Py_ssize_t _rng_below(uint64_t* s, Py_ssize_t n) noexcept nogil:
    """A uniform index in 0..n−1 (the bias of flooring u·n is below 2⁻⁴⁰ for n < 2¹³)."""
    cdef Py_ssize_t r = <Py_ssize_t>(_rng_uniform(s) * <double>n)
    return r if r < n else n - 1


# -- the incremental inverse of a kernel matrix -----------------------------------------------
# Kinv is the inverse of the Gram matrix K of the first m support vectors, stored in the
# top-left m×m block of a row-major ld×ld array. It is symmetric, so row-major and
# column-major readings coincide and BLAS may be called on it either way.

cdef inline void _kinv_solve(const double* Kinv, Py_ssize_t ld, Py_ssize_t m, const double* k,
                             double* out) noexcept nogil:
    """out = Kinv k: the coefficients of the projection of k(x, ·) onto the span."""
    cdef int one = 1, mm = <int>m, ldd = <int>ld
    cdef double a1 = 1.0, b0 = 0.0
    cdef char nt = b'N'
    if m <= 0:
        return
    dgemv(&nt, &mm, &mm, &a1, <double*>Kinv, &ldd, <double*>k, &one, &b0, out, &one)


cdef inline void _kinv_append(double* Kinv, Py_ssize_t ld, Py_ssize_t m, const double* dvec,
                              double delta2) noexcept nogil:
    """Grow Kinv from m to m+1 rows for a new vector with projection dvec = Kinv k.

    With δ² = k(x, x) − kᵀ Kinv k (the squared distance of k(x, ·) from the span), the
    block-inverse formula gives
        [[K, k], [kᵀ, k(x,x)]]⁻¹ = [[Kinv + d dᵀ/δ², −d/δ²], [−dᵀ/δ², 1/δ²]].
    """
    cdef int one = 1, mm = <int>m, ldd = <int>ld
    cdef double r = 1.0 / delta2
    cdef Py_ssize_t i
    if m > 0:
        dger(&mm, &mm, &r, <double*>dvec, &one, <double*>dvec, &one, Kinv, &ldd)
    for i in range(m):
        Kinv[i * ld + m] = -dvec[i] * r
        Kinv[m * ld + i] = -dvec[i] * r
    Kinv[m * ld + m] = r


cdef inline void _kinv_remove(double* Kinv, Py_ssize_t ld, Py_ssize_t m, Py_ssize_t p,
                              double* work) noexcept nogil:
    """Shrink Kinv from m to m−1 rows by deleting vector p; vector m−1 moves into slot p.

    The inverse of K without row and column p is Kinv₋ₚ₋ₚ − Kinv₋ₚ,ₚ Kinvₚ,₋ₚ / Kinvₚₚ (the
    rank-one downdate that undoes _kinv_append). ``work`` holds m numbers.
    """
    cdef int one = 1, mm = <int>m, ldd = <int>ld
    cdef double r = -1.0 / Kinv[p * ld + p]
    cdef Py_ssize_t i, last = m - 1
    for i in range(m):
        work[i] = Kinv[i * ld + p]
    work[p] = 0.0  # leave row and column p untouched; they are overwritten below
    dger(&mm, &mm, &r, work, &one, work, &one, Kinv, &ldd)
    if p != last:
        # Move the last row and column into slot p (the diagonal entry moves with both).
        for i in range(m):
            Kinv[p * ld + i] = Kinv[last * ld + i]
        for i in range(m):
            Kinv[i * ld + p] = Kinv[i * ld + last]
        Kinv[p * ld + p] = Kinv[last * ld + last]


# -- scaled coefficients ----------------------------------------------------------------------
# Learners that shrink every coefficient each round keep them as cs·a[j] and multiply the
# scale cs alone; before cs under- or overflows it is folded into the coefficients.

cdef inline double _fold_scale(double* a, Py_ssize_t m, double cs) noexcept nogil:
    """a[j] *= cs for j < m; returns the new scale, 1."""
    cdef Py_ssize_t j
    for j in range(m):
        a[j] *= cs
    return 1.0


cdef inline void _move_row(double* A, Py_ssize_t ncol, Py_ssize_t src, Py_ssize_t dst) noexcept nogil:
    """Copy row src of a row-major array with ncol columns over row dst."""
    if src != dst:
        memcpy(A + dst * ncol, A + src * ncol, ncol * sizeof(double))
