# The arrays every expansion block loop reads and writes (perceptron_block's convention:
# see kbench.learners.expansion), fetched and checked once per call by one inline function
# rather than by a copy of the same lines in each loop; with them, the helpers those loops
# share (the scratch buffer, the stop when the store is full).
from libc.stdlib cimport malloc

from kbench.cython_core._arrays cimport _f64
from kbench.cython_core._sparse cimport LoopRows, _check_labels


cdef struct ExpansionArrays:
    double* alpha       # the store's coefficients, cap × C (row-major)
    double* krow        # the store's kernel row buffer, cap values
    const double* y     # a label per row of the block
    double* pred        # a prediction slot per row of the block
    Py_ssize_t m        # support vectors stored (store.size)
    Py_ssize_t cap      # rows the store holds before it must grow
    Py_ssize_t C        # coefficient columns (1, or the number of classes)


cdef inline int _expansion_arrays(const LoopRows* R, object store, object y, object pred,
                                  Py_ssize_t n, Py_ssize_t start, bint have_row,
                                  ExpansionArrays* A, str one_column=None) except -1:
    """A's arrays from ``store`` (``alpha``, ``krow``, ``size``), ``y`` and ``pred``, each
    checked (dtype, layout, sizes) with a one-line ValueError naming it. A loop that keeps
    one coefficient column names the error of a store with more in ``one_column``, its
    ``{}`` the number of columns."""
    cdef Py_ssize_t sa[2]
    cdef Py_ssize_t sk[1]
    cdef Py_ssize_t sy[1]
    cdef Py_ssize_t sp[1]
    sa[0] = sa[1] = sk[0] = sy[0] = sp[0] = 0  # set by _f64, or it raises
    A.alpha = _f64(store.alpha, 2, True, "store.alpha", sa)
    A.krow = _f64(store.krow, 1, True, "store.krow", sk)
    A.y = _f64(y, 1, False, "y", sy)
    A.pred = _f64(pred, 1, True, "pred", sp)
    A.m, A.cap, A.C = store.size, sa[0], sa[1]
    if sk[0] < A.cap or not 0 <= A.m <= A.cap:
        raise ValueError(f"kbench: a store of {A.cap} rows needs krow of {A.cap} and a "
                         f"size below")
    _check_labels(R, n, start, have_row, sy[0], sp[0])
    if one_column is not None and A.C != 1:
        raise ValueError("kbench: " + one_column.format(A.C))
    return 0


cdef inline bint _store_full(Py_ssize_t m, Py_ssize_t cap, bint first, long long* evals,
                             long long redone) noexcept nogil:
    """Whether a store of ``cap`` rows holding ``m`` has no room for the example about to be
    stored. The loop then stops at it, and the caller grows the store and calls again from
    it: the ``redone`` kernel evaluations the example has made come off ``evals``, to be
    counted when it is redone, unless it is ``first`` (its row was handed in, counted by
    none, and is handed in again)."""
    if m != cap:
        return False
    if not first:
        evals[0] -= redone
    return True


cdef inline object _grown(object a, tuple shape):
    """A zero array of ``shape`` holding ``a`` in its leading block: the typed state of a
    loop (a matrix over the stored rows, a value per stored row) grown with its store."""
    import numpy as np
    out = np.zeros(shape)
    # a loop, not a generator expression: Cython cannot compile one in an inline .pxd
    cdef list block = []
    for n in a.shape:
        block.append(slice(0, n))
    out[tuple(block)] = a
    return out


cdef inline double* _doubles(Py_ssize_t n) except NULL:
    """Scratch for n doubles from malloc (the caller frees it), or MemoryError: the one
    check every block loop makes of its work buffer."""
    cdef double* p = <double*>malloc(n * sizeof(double))
    if p == NULL:
        raise MemoryError()
    return p
