# The set-up of the Frank-Wolfe kernels (_csc_fast.pyx): what the solvers cimport.
from dptoolkit._typedefs cimport float64_t

cdef bint _all_ones(const float64_t[::1] a) noexcept nogil
