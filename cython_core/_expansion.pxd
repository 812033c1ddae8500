# The arrays every expansion block loop reads and writes (perceptron_block's convention:
# see kbench.learners.expansion), fetched and checked once per call by one inline function
# rather than by a copy of the same lines in each loop.
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
                                  ExpansionArrays* A) except -1:
    """A's arrays from ``store`` (``alpha``, ``krow``, ``size``), ``y`` and ``pred``, each
    checked (dtype, layout, sizes) with a one-line ValueError naming it."""
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
    return 0


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
