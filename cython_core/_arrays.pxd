# Array arguments read through the NumPy C API: a few pointer reads, where a typed memoryview
# costs several hundred nanoseconds per array. For the block loops called once per row
# (learn_one), whose arguments would otherwise cost more than the row's update.
cimport numpy as cnp


cdef inline double* _f64(object a, int ndim, bint write, str name,
                         Py_ssize_t* shape) except? NULL:
    """The data of a, an aligned C-contiguous float64 array of ndim (1 or 2) dimensions
    (writeable if asked), its shape into shape; a one-line ValueError naming it otherwise."""
    if not (cnp.PyArray_Check(a) and cnp.PyArray_NDIM(<cnp.ndarray>a) == ndim
            and cnp.PyArray_TYPE(<cnp.ndarray>a) == cnp.NPY_DOUBLE
            and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>a)
            and (not write or cnp.PyArray_ISWRITEABLE(<cnp.ndarray>a))):
        raise ValueError(f"kbench: {name} must be a C-contiguous {ndim}-D float64 array"
                         f"{' (writeable)' if write else ''}")
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(<cnp.ndarray>a)
    shape[0] = dims[0]
    if ndim == 2:
        shape[1] = dims[1]
    return <double*>cnp.PyArray_DATA(<cnp.ndarray>a)
