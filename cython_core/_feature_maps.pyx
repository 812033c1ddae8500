"""Compiled loops of online gradient descent on explicit feature maps: FOGD and NOGD.

FOGD maps x to random Fourier features z(x) = [cos(Ωᵀx), sin(Ωᵀx)]/√D; NOGD first runs
kernel OGD until it holds B support vectors, then maps x to Nyström features
z(x) = M k_B(x). Both then run linear OGD, W ← W − η z gᵀ with g the derivative of the
loss with respect to the scores. ``task`` is a code of ``_online_ops.Task``; ``loss_kind`` a
compiled scalar loss id (``_losses.LossKind``), ``_online_ops.MulticlassLoss.L_MC_HINGE`` or
``L_SOFTMAX`` on multiclass tasks, or ``L_PYTHON`` (the gradient comes from Python).
"""
cimport numpy as cnp
from libc.math cimport exp, sqrt
from libc.stdint cimport int32_t, int64_t
from scipy.linalg.cython_blas cimport daxpy, dgemv

from kbench.cython_core._loop cimport *
from kbench.cython_core._arrays cimport _f64
from kbench.cython_core._labels cimport _argmax, _class_label, _rival, _sign_label
from kbench.cython_core._losses cimport _loss_deriv
from kbench.cython_core._online_ops cimport L_MC_HINGE, L_PYTHON, T_MULTICLASS, T_REGRESSION


cnp.import_array()


cdef extern from "_sincos_simd.h" nogil:
    # Vectorised cos/sin of a block of phases and the phases of a sparse example (see the
    # header for the error bound and the run-time choice of instruction set).
    void kb_sincos_d(const double* u, Py_ssize_t D, double scale, double* c_out,
                     double* s_out)
    void kb_phases_d(const double* Omega, Py_ssize_t D, const Py_ssize_t* idx,
                     const double* vals, Py_ssize_t nnz, double* u)

cdef enum:
    # Non-zeros of a sparse example gathered per call of kb_phases_d.
    NZ_CHUNK = 64


cdef extern from "_kernel_simd.h" nogil:
    int kb_level_cache
    int kb_level()


def sincos_block(const double[::1] u, double scale, double[::1] c_out, double[::1] s_out):
    """The vectorised cos/sin of the FOGD loop (exposed for tests)."""
    with nogil:
        kb_sincos_d(&u[0], u.shape[0], scale, &c_out[0], &s_out[0])


def simd_level(int force=-1):
    """The instruction set of this module's vector loops: 0 baseline, 1 AVX2, 2 AVX-512.

    ``force`` ≥ 0 selects a lower one (tests of every path on one machine); it is capped
    at what the CPU supports. Returns the level in use afterwards.
    """
    global kb_level_cache
    cdef int best
    if force >= 0:
        kb_level_cache = -1
        best = kb_level()
        kb_level_cache = force if force < best else best
    return kb_level()


cdef inline void _fourier(const double* Omega, Py_ssize_t D, const int32_t* cols,
                          const double* x, Py_ssize_t n_x, double* u, double* z) noexcept nogil:
    """z = [cos(Ωᵀx), sin(Ωᵀx)]/√D for the row-major d×D frequency matrix Ω.

    x holds ``n_x`` values: a dense row (``cols`` NULL: value e is feature e) or a CSR
    row's values with their features in ``cols``. The phases are the sum, in the order of
    the features, of the rows of Ω for the non-zeros of x: a sparse x (like a9a's 14 of
    123) reads nnz·D numbers instead of d·D, and dense and CSR rows go through the same
    arithmetic. cos and sin of the D phases come from one vectorised pass
    (``_sincos_simd.h``).
    """
    cdef Py_ssize_t e, k, n = 0
    cdef Py_ssize_t idx[NZ_CHUNK]
    cdef double vals[NZ_CHUNK]
    cdef double r = 1.0 / sqrt(<double>D)
    for k in range(D):
        u[k] = 0.0
    for e in range(n_x):
        if x[e] != 0.0:
            idx[n] = e if cols == NULL else cols[e]
            vals[n] = x[e]
            n += 1
            if n == NZ_CHUNK:
                kb_phases_d(Omega, D, idx, vals, n, u)
                n = 0
    if n > 0:
        kb_phases_d(Omega, D, idx, vals, n, u)
    kb_sincos_d(u, D, r, z, z + D)


cdef struct Rows:
    # The rows a loop reads: dense (indptr NULL: row i at X + i·d) or CSR.
    const double* X
    Py_ssize_t d
    const int64_t* indptr
    const int32_t* indices
    const double* data


cdef inline void _fourier_row(const double* Omega, Py_ssize_t D, Rows rows, Py_ssize_t i,
                              double* u, double* z) noexcept nogil:
    """z of row i of ``rows``."""
    if rows.indptr == NULL:
        _fourier(Omega, D, NULL, rows.X + i * rows.d, rows.d, u, z)
    else:
        _fourier(Omega, D, rows.indices + rows.indptr[i], rows.data + rows.indptr[i],
                 rows.indptr[i + 1] - rows.indptr[i], u, z)


cdef Rows _rows(rows, Py_ssize_t* n) except *:
    """The Rows of a dense 2-D array or of CSR arrays ``(indptr, indices, data)``; their
    count in ``n``."""
    if isinstance(rows, tuple):
        return _csr_rows(rows[0], rows[1], rows[2], n)
    return _dense_rows(rows, n)


cdef Rows _dense_rows(const double[:, ::1] X, Py_ssize_t* n):
    cdef Rows rows
    rows.X = &X[0, 0] if X.shape[0] else NULL
    rows.d = X.shape[1]
    rows.indptr = NULL
    n[0] = X.shape[0]
    return rows


cdef Rows _csr_rows(const int64_t[::1] indptr, const int32_t[::1] indices,
                    const double[::1] data, Py_ssize_t* n):
    cdef Rows rows
    rows.X, rows.d = NULL, 0
    rows.indptr = &indptr[0]
    rows.indices = &indices[0] if indices.shape[0] else NULL  # no values: no row reads them
    rows.data = &data[0] if data.shape[0] else NULL
    n[0] = indptr.shape[0] - 1
    return rows


cdef inline void _linear_scores(const double* W, Py_ssize_t p, Py_ssize_t C, const double* z,
                                double* out) noexcept nogil:
    """out = Wᵀ z for the row-major p×C weights W."""
    cdef int one = 1, pp = <int>p, nc = <int>C
    cdef double a1 = 1.0, b0 = 0.0
    cdef char nt = b'N'
    if C == 1:
        out[0] = _dot(W, z, pp)
        return
    dgemv(&nt, &nc, &pp, &a1, <double*>W, &nc, <double*>z, &one, &b0, out, &one)


cdef inline double _predict(int task, const double* s, Py_ssize_t C) noexcept nogil:
    if task == T_MULTICLASS:
        return _class_label(<double>_argmax(s, C), s, C)
    if task == T_REGRESSION:
        return s[0]
    return _sign_label(s[0])


cdef inline bint _gradient(int task, int loss_kind, double loss_p1, const double* s,
                           Py_ssize_t C, double y, double* g) noexcept nogil:
    """g = ∂ loss / ∂ scores; returns whether g is non-zero."""
    cdef Py_ssize_t c, yi, rv
    cdef double top, total
    cdef bint nonzero = False
    if task != T_MULTICLASS:
        g[0] = _loss_deriv(loss_kind, s[0], y, loss_p1)
        return g[0] != 0.0
    yi = <Py_ssize_t>y
    for c in range(C):
        g[c] = 0.0
    if loss_kind == L_MC_HINGE:
        rv = _rival(s, C, yi)
        if 1.0 + s[rv] - s[yi] > 0.0:
            g[rv] = 1.0
            g[yi] = -1.0
            return True
        return False
    # softmax: g = p − e_y with p computed from the scores shifted by their maximum
    top = s[_argmax(s, C)]
    total = 0.0
    for c in range(C):
        g[c] = exp(s[c] - top)
        total += g[c]
    for c in range(C):
        g[c] /= total
    g[yi] -= 1.0
    return True


cdef inline void _linear_step(double* W, Py_ssize_t p, Py_ssize_t C, const double* z,
                              const double* g, double eta) noexcept nogil:
    """W ← W − η z gᵀ, column by column for the non-zero entries of g."""
    cdef int one = 1, pp = <int>p, nc = <int>C
    cdef Py_ssize_t c
    cdef double step
    for c in range(C):
        if g[c] != 0.0:
            step = -eta * g[c]
            daxpy(&pp, &step, <double*>z, &one, W + c, &nc)


def fourier_features(const double[:, ::1] Omega, const double[::1] x, double[::1] u,
                     double[::1] z, const int32_t[::1] cols=None):
    """z(x) into ``z`` (length 2D), with the arithmetic of the FOGD loop; with ``cols``, x
    holds the values of a sparse row and ``cols`` their features."""
    cdef const int32_t* c = NULL
    if cols is not None:
        if cols.shape[0] != x.shape[0]:
            raise ValueError("cols and x differ in length")
        if cols.shape[0]:
            c = &cols[0]
    with nogil:
        _fourier(&Omega[0, 0], Omega.shape[1], c, &x[0] if x.shape[0] else NULL, x.shape[0],
                 &u[0], &z[0])


def linear_scores(const double[:, ::1] W, const double[::1] z, double[::1] out):
    """out = Wᵀ z, with the arithmetic of the loops."""
    with nogil:
        _linear_scores(&W[0, 0], W.shape[0], W.shape[1], &z[0], &out[0])


def linear_step(double[:, ::1] W, const double[::1] z, const double[::1] g, double eta):
    """W ← W − η z gᵀ, with the arithmetic of the loops."""
    with nogil:
        _linear_step(&W[0, 0], W.shape[0], W.shape[1], &z[0], &g[0], eta)


def nystrom_features(const double[:, ::1] Mmap, const double[::1] krow, double[::1] z):
    """z = Mmap k_B(x), with the arithmetic of the NOGD loop."""
    cdef int one = 1, rr = <int>Mmap.shape[0], BB = <int>Mmap.shape[1]
    cdef double a1 = 1.0, b0 = 0.0
    cdef char tr = b'T'
    with nogil:
        dgemv(&tr, &BB, &rr, &a1, <double*>&Mmap[0, 0], &BB, <double*>&krow[0], &one, &b0, &z[0],
              &one)


def fogd_block(const double[:, ::1] Omega, double[:, ::1] W, double eta, int task,
               int loss_kind, double loss_p1, rows, const double[::1] y, double[::1] pred,
               double[::1] u, double[::1] z, double[::1] scores, double[::1] g):
    """FOGD: predict then learn every row of ``rows`` on random Fourier features. ``rows``
    is a dense 2-D array or the CSR arrays ``(indptr int64, indices int32, data)`` (whose
    features the caller has checked)."""
    cdef Py_ssize_t n
    cdef Rows r = _rows(rows, &n)
    with nogil:
        _fogd(&Omega[0, 0], Omega.shape[1], &W[0, 0], W.shape[1], eta, task, loss_kind,
              loss_p1, r, n, &y[0], &pred[0], &u[0], &z[0], &scores[0], &g[0])


cdef void _fogd(const double* Omega, Py_ssize_t D, double* W, Py_ssize_t C, double eta,
                int task, int loss_kind, double loss_p1, Rows rows, Py_ssize_t n,
                const double* y, double* pred, double* u, double* z, double* scores,
                double* g) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        _fourier_row(Omega, D, rows, i, u, z)
        _linear_scores(W, 2 * D, C, z, scores)
        pred[i] = _predict(task, scores, C)
        if _gradient(task, loss_kind, loss_p1, scores, C, y[i], g):
            _linear_step(W, 2 * D, C, z, g, eta)


def fogd_decision_many(const double[:, ::1] Omega, const double[:, ::1] W, rows,
                       double[:, ::1] out, double[::1] u, double[::1] z):
    """Scores of every row of ``rows`` (as for :func:`fogd_block`; held-out evaluation),
    row by row as in the loop."""
    cdef Py_ssize_t n
    cdef Rows r = _rows(rows, &n)
    with nogil:
        _fogd_scores(&Omega[0, 0], Omega.shape[1], &W[0, 0], W.shape[1], r, n, &out[0, 0],
                     &u[0], &z[0])


cdef void _fogd_scores(const double* Omega, Py_ssize_t D, const double* W, Py_ssize_t C,
                       Rows rows, Py_ssize_t n, double* out, double* u,
                       double* z) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        _fourier_row(Omega, D, rows, i, u, z)
        _linear_scores(W, 2 * D, C, z, out + i * C)


cdef class NogdState:
    """NOGD beside its store: the Nyström map ``M`` (r × B) and the linear weights ``W``
    (r × C), used once ``nystrom`` is set; the features ``z`` (r) and ``scores`` (C) of the
    last row, and its gradient ``g`` (C), given from Python for a loss without a compiled
    form; picklable."""

    cdef public object M
    cdef public object W
    cdef public object z
    cdef public object scores
    cdef public object g
    cdef public bint nystrom

    def __init__(self, M, W, z, scores, g, bint nystrom=False):
        self.M, self.W, self.z, self.scores, self.g = M, W, z, scores, g
        self.nystrom = nystrom

    def __reduce__(self):
        return NogdState, (self.M, self.W, self.z, self.scores, self.g, self.nystrom)


def nogd_block(kernel, BlockRows rows not None, store, y, pred, Py_ssize_t start=0,
               bint have_row=False, double kxx=0.0, *, NogdState state not None,
               Py_ssize_t budget, double eta, int task, int loss_kind, double loss_p1):
    """NOGD on rows start, start+1, … of ``rows``. Calling convention and result as
    :func:`kbench.cython_core._perceptron.perceptron_block`.

    Before the Nyström map exists (``state.nystrom`` false) this is kernel OGD: f = Σ_j α_j
    k(x_j, ·), and a non-zero gradient adds x with coefficients −ηg; the loop stops after
    the addition that fills the ``budget`` slots, so that Python can build the map.
    Afterwards z = M k_B(x) (M is r × B) and W ← W − η z gᵀ. With ``loss_kind`` L_PYTHON
    the gradient of the row is read from ``state.g`` (a loss without a compiled form: one
    row per call).
    """
    cdef LoopRows R = _loop_rows(kernel, rows, store)
    cdef ExpansionArrays A
    _expansion_arrays(&R, store, y, pred, rows.n, start, have_row, &A)
    # The state's arrays through the C API (a memoryview each would cost more than a
    # runner's row of NOGD's linear step).
    cdef Py_ssize_t sM[2]
    cdef Py_ssize_t sW[2]
    cdef Py_ssize_t sz, ss, sg
    cdef double* Mmap = _f64(state.M, 2, False, "nogd: M", sM)
    cdef double* W = _f64(state.W, 2, True, "nogd: W", sW)
    cdef double* z = _f64(state.z, 1, True, "nogd: z", &sz)
    cdef double* scores = _f64(state.scores, 1, True, "nogd: scores", &ss)
    cdef double* g = _f64(state.g, 1, True, "nogd: g", &sg)
    cdef bint nystrom = state.nystrom
    cdef Py_ssize_t n = rows.n, C = A.C, m = A.m, i = start, c
    cdef Py_ssize_t r = sM[0], B = sM[1]
    cdef long long evals = 0
    cdef double xsq, a1 = 1.0, b0 = 0.0
    cdef bint nonzero
    cdef int one = 1, rr = <int>r, BB = <int>B
    cdef char tr = b'T'
    if sW[1] != C or ss != C or sg != C:
        raise ValueError(f"nogd: W, scores and g need {C} columns, one per output")
    if nystrom and (m != B or sz != r or sW[0] != r):
        raise ValueError(f"nogd: a map of rank {r} over {B} landmarks, but {m} are stored")
    with nogil:
        while i < n:
            evals += _row_at(&R, i, m, have_row and i == 0, &xsq, A.krow)
            if nystrom:
                # z = M k: M row-major r×B is column-major B×r, so z = M_cmᵀ k.
                dgemv(&tr, &BB, &rr, &a1, Mmap, &BB, A.krow, &one, &b0, z, &one)
                _linear_scores(W, r, C, z, scores)
            else:
                _expansion(A.krow, A.alpha, m, C, 1.0, scores)
            A.pred[i] = _predict(task, scores, C)
            if loss_kind == L_PYTHON:
                nonzero = False
                for c in range(C):
                    if g[c] != 0.0:
                        nonzero = True
            else:
                nonzero = _gradient(task, loss_kind, loss_p1, scores, C, A.y[i], g)
            if nonzero and nystrom:
                _linear_step(W, r, C, z, g, eta)
            elif nonzero:
                if _store_full(m, A.cap, have_row and i == 0, &evals, m):
                    break
                _store_at(&R, i, m)
                R.sq[m] = xsq
                for c in range(C):
                    A.alpha[m * C + c] = -eta * g[c]
                m += 1
                if m == budget:
                    i += 1
                    break
            i += 1
    return i, m, evals
