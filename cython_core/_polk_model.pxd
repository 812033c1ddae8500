# The POLK model shared by its two compiled modules: _polk_model (the dictionary, its
# inverse Gram matrix, KOMP and the refresh) and _polk (the prequential block loop over
# the learner toolkit's store, dense or CSR rows).
from kbench.cython_core._sparse cimport LoopRows

cpdef enum Schedule:
    SCH_CONSTANT = 0
    SCH_DIMINISHING = 1

cpdef enum Reduce:
    RED_MEAN = 0
    RED_SUM = 1

cpdef enum Criterion:
    CRIT_NORM = 0
    CRIT_SQUARED = 1


cdef struct Model:
    # The dictionary and its pending mini-batch, as raw pointers into the store's arrays
    # (sq, W) and the PolkState's (_attach). The pending points are stored rows too: slots
    # m, m + 1, … of the store, their coefficients zero until the update.
    double* sq      # cap squared norms (the store's)
    double* W       # cap × C weights (the store's coefficients)
    double* G       # cap × cap inverse Gram matrix (top-left M × M used)
    double* ids     # cap: stream position of each atom
    double* kdb     # B: κ(x_b, x_b)
    double* XI      # B × C: loss gradients
    double* idb     # B: stream positions
    double* Kb      # B × cap: κ(x_b, ·) over the atoms and the pending points before it
    double* work    # scratch of work_size(cap, C, B) = 3·cap + 2·C + B entries
    double* R       # cap × cap refresh scratch, NULL when refreshes are off
    Py_ssize_t cap, C


cdef class PolkState:
    # Settings.
    cdef public double eta, lam, K, t0, tau, rtol
    cdef public Schedule schedule
    cdef public Reduce reduce
    cdef public Criterion criterion
    cdef public Py_ssize_t B, refresh
    # Running state.
    cdef public Py_ssize_t m, t, nseen, nstored, updates, kernel_evals, appends, folds
    cdef public Py_ssize_t deletions, zero_run, refreshes, refresh_failures
    cdef public bint update_due, probe_due
    cdef public double last_err, last_eps, max_err_ratio, eta_t, probe_residual
    # The arrays over the capacity and the batch (grown with the store), and their pointers.
    cdef public object G, ids, Kb, R, XI, kdb, idb, work
    cdef Model mo


# Layout of the scratch: G's column (cap), a = G k (cap), k (cap), the deleted atom's
# weights (C), the new coefficients (C), the batch index of each atom appended in this
# step (B).
cdef inline double* _w_gcol(Model* mo) noexcept nogil:
    return mo.work


cdef inline double* _w_a(Model* mo) noexcept nogil:
    return mo.work + mo.cap


cdef inline double* _w_k(Model* mo) noexcept nogil:
    return mo.work + 2 * mo.cap


cdef inline double* _w_wj(Model* mo) noexcept nogil:
    return mo.work + 3 * mo.cap


cdef inline double* _w_coef(Model* mo) noexcept nogil:
    return mo.work + 3 * mo.cap + mo.C


cdef inline double* _w_map(Model* mo) noexcept nogil:
    return mo.work + 3 * mo.cap + 2 * mo.C


cdef Model* _attach(PolkState s, Py_ssize_t cap, Py_ssize_t C, double* W,
                    double* sq) except NULL
cdef void _update(PolkState s, const LoopRows* rows) noexcept nogil
cdef Py_ssize_t _probe_index(const double* G, Py_ssize_t M, Py_ssize_t cap) noexcept nogil
cdef double _probe_residual(const double* G, Py_ssize_t M, Py_ssize_t cap,
                            const double* krow, Py_ssize_t j, double* a) noexcept nogil
cdef bint _refresh_due(PolkState s, double probe) noexcept nogil
cdef bint _refresh(double* G, double* R, Py_ssize_t M, Py_ssize_t cap) noexcept nogil
