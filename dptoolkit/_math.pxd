# Small numerical helpers shared by the nogil kernels (one definition each).
from libc.math cimport exp, log1p


cdef inline double sigmoid(double v) noexcept nogil:
    """1 / (1 + exp(-v)) without overflow."""
    cdef double e
    if v >= 0:
        return 1.0 / (1.0 + exp(-v))
    e = exp(v)
    return e / (1.0 + e)


cdef inline double log1pexp(double z) noexcept nogil:
    """log(1 + exp(z)) without overflow."""
    if z > 0:
        return z + log1p(exp(-z))
    return log1p(exp(z))


cdef inline double sign_of(double a) noexcept nogil:
    """+1 for a > 0, else -1 (a Frank-Wolfe vertex's sign)."""
    return 1.0 if a > 0 else -1.0
