# The state of the ramp-loss SVM core shared by its two compiled modules: the stored
# examples, their kernel rows and the support vectors (_ramp_store.pyx), and the solver
# over them with the learning methods (_ramp.pyx, RampCore extends RampStore).
from libc.stdint cimport int32_t, int64_t


# One CSR row: nx values xd at the indices xi, and ‖x‖².
cdef struct CsrRow:
    const int32_t* xi
    const double* xd
    Py_ssize_t nx
    double xsq


cdef inline CsrRow _csr_row(const int32_t* xi, const double* xd, int64_t a,
                            int64_t b) noexcept:
    """Entries [a, b) of the CSR arrays xi, xd as a row, its ‖x‖² summed in index order
    (as _sparse.row_sq_norms)."""
    cdef CsrRow r
    cdef Py_ssize_t t
    r.nx = b - a
    r.xi = xi + a if r.nx else NULL
    r.xd = xd + a if r.nx else NULL
    r.xsq = 0.0
    for t in range(r.nx):
        r.xsq += r.xd[t] * r.xd[t]
    return r


cdef inline const int32_t* _ints(const int32_t[::1] a) noexcept:
    return &a[0] if a.shape[0] else NULL


cdef inline const double* _doubles(const double[::1] a) noexcept:
    return &a[0] if a.shape[0] else NULL


cdef class RampStore:
    # kernel: the KernelSpec's fields, or K_NOT_COMPILED with a Python kernel object
    cdef readonly int kind
    cdef readonly double gamma, kscale, koffset, degree
    cdef object pykernel
    cdef bint const_diag
    # hyper-parameters
    cdef public double C, s, tau, eps_gain
    #: −1 for the correct gradient update; +1 reproduces the misprinted eq. (15).
    cdef public double grad_sign
    cdef public long long max_outer, max_steps, refresh, m_keep
    # sizes
    cdef readonly Py_ssize_t n, d, cap, nsv, svcap, nslots
    cdef readonly double cache_bytes
    # counters
    cdef readonly long long kernel_evals, kernel_requests, steps, outer_total, outer_max
    cdef readonly long long outer_caps, step_caps, removed, updates, seen, refresh_evals
    cdef readonly long long ex_steps, since_refresh, clock, version
    cdef readonly double drift_max
    #: arrival number of the last example that started an update (−1: none yet)
    cdef readonly long long last_update
    #: with ``trace`` on, the ramp objective after every SMO solve of a CCCP iteration is
    #: appended to ``history`` as (examples seen, objective)
    cdef public bint trace
    cdef public object history
    # arrays (numpy objects, and memoryviews bound to them)
    cdef public object X_, sq_, y_, alpha_, g_, kd_, inV_, age_, svpos_
    cdef public object SVX_, SVsq_, SVc_, SVown_, krow_
    cdef public object KC_, cslot_, cown_, clen_, cstamp_, scratch_, tmp_
    cdef double[:, ::1] X
    cdef double[::1] sq, y, alpha, g, kd
    cdef unsigned char[::1] inV
    cdef long long[::1] age
    cdef Py_ssize_t[::1] svpos, SVown, cslot, cown, clen, tmp
    cdef long long[::1] cstamp
    cdef double[:, ::1] SVX, SVc, KC
    cdef double[::1] SVsq, krow, scratch
    # the prediction row of the last x asked about, reused by the learning step
    cdef object last_x
    cdef long long last_version
    cdef double last_f
    # CSR rows (sparse): example k's row is pool[st[k]:en[k]], support vector p's
    # pool[SVst[p]:SVen[p]]; pool_end entries of the pool are in use (live rows and holes)
    cdef readonly bint sparse
    cdef readonly int strategy
    cdef readonly Py_ssize_t pool_end, pool_len
    cdef public object st_, en_, SVst_, SVen_, pidx_, pdat_, work_
    cdef int64_t[::1] st, en, SVst, SVen
    cdef int32_t[::1] pidx
    cdef double[::1] pdat, work

    cdef void _bind(self)
    cdef Py_ssize_t _width(self)
    cdef void _grow(self, Py_ssize_t new_cap)
    cdef void _bind_sv(self)
    cdef void _grow_sv(self, Py_ssize_t new_cap)
    cdef void _sv_update(self, Py_ssize_t i)
    cdef void _set_pool(self, object pidx_, object pdat_)
    cdef void _repack(self, Py_ssize_t extra)
    cdef void _put_sparse(self, Py_ssize_t k, const int32_t* xi, const double* xd,
                          Py_ssize_t nx)
    cdef void _rows_of(self, Py_ssize_t a, Py_ssize_t b, Py_ssize_t i, double* out)
    cdef double* _ensure_row(self, Py_ssize_t i)
    cdef double _predict_ptr(self, const double* x, double xsq, object xobj)
    cdef double _predict_sparse(self, const CsrRow* x)
    cdef double _predict_stored(self, Py_ssize_t k)
    cdef double _self_kernel(self, const double* x, double xsq, object xobj)
    cdef int _append(self, const double* x, double xsq, object xobj, double yv,
                     double f) except -1
    cdef int _append_sparse(self, const CsrRow* x, double yv, double f) except -1
    cdef int _room(self, double kxx) except -1
    cdef int _append_state(self, double xsq, double kxx, double yv, double f) except -1
    cdef void _remove(self, Py_ssize_t i)
    cdef int _need_sparse(self, str what) except -1
    cdef int _need_dense(self) except -1
    cdef int _check_block(self, xp, xi, xd, Py_ssize_t n, str what) except -1
    cdef int _check_row(self, xi, xd) except -1
