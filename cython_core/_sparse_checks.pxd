# Argument checks of the sparse kernel rows (_sparse.pyx) and of the blocks of CSR rows it
# builds, through the NumPy C API: a few pointer reads per array, where a typed memoryview
# costs several hundred nanoseconds. The inline ones are defined here so that they inline.
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t


cdef enum:
    S_AUTO = 0
    S_MERGE = 1
    S_SCATTER = 2


# The stored rows as _sparse_row reads them: the pool's arrays and the rows' squared norms
# (NULL when the kernel does not read them).
cdef struct Store:
    const int64_t* starts
    const int64_t* ends
    const int32_t* indices
    const double* data
    const double* sq


cdef inline bint _is(object a, int typenum, bint write):
    """a is an aligned, C-contiguous 1-D ndarray of this dtype (writeable if asked)."""
    if not cnp.PyArray_Check(a):
        return False
    cdef cnp.ndarray arr = <cnp.ndarray>a
    return (cnp.PyArray_NDIM(arr) == 1 and cnp.PyArray_TYPE(arr) == typenum
            and cnp.PyArray_ISCARRAY_RO(arr) and (not write or cnp.PyArray_ISWRITEABLE(arr)))


cdef inline Py_ssize_t _len(object a):
    return cnp.PyArray_DIMS(<cnp.ndarray>a)[0]


cdef inline void* _data(object a):
    return cnp.PyArray_DATA(<cnp.ndarray>a)


cdef str _dtype_name(object a)
cdef int _need(object a, int typenum, bint write, str name, str what) except -1
cdef int _need_n(object a, int typenum, bint write, str name, str what, Py_ssize_t n,
                 str call) except -1
cdef Py_ssize_t _bad_index(const int32_t* idx, Py_ssize_t n, Py_ssize_t d) noexcept nogil
cdef str _index_reason(const int32_t* idx, Py_ssize_t t, Py_ssize_t d)
cdef int _check_index_list(object indices, Py_ssize_t d) except -1
cdef int _span_error(Py_ssize_t row, const int64_t* ps, const int64_t* pe,
                     Py_ssize_t pool) except -1
cdef int _choose(int kind, int strategy, object work, str what, Py_ssize_t* d) except -1
cdef Py_ssize_t _check_store(object starts, object ends, object indices, object data,
                             object sq, Py_ssize_t m, bint need_sq, Store* st) except -2
cdef int _check_x(object xi, object xd, Py_ssize_t d) except -1
