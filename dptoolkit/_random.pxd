# Random numbers inside nogil kernels come from a NumPy Generator's bit
# generator (``bitgen_t``), never from a toy PRNG: privacy noise must be
# cryptographically unremarkable and reproducible from ``random_state``.
#
# Use from Python:   bitgen = generator.bit_generator
#                    cdef bitgen_t* rng = get_bitgen(bitgen)
#                    with bitgen.lock, nogil: ...
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.math cimport log, log1p
from numpy.random cimport bitgen_t


cdef inline bitgen_t* get_bitgen(object bit_generator) except NULL:
    return <bitgen_t*> PyCapsule_GetPointer(bit_generator.capsule, "BitGenerator")


cdef inline double uniform(bitgen_t* rng) noexcept nogil:
    """Uniform on [0, 1) with 53 random bits."""
    return rng.next_double(rng.state)


cdef inline double uniform_open(bitgen_t* rng) noexcept nogil:
    """Uniform on (0, 1): safe to take logs of."""
    cdef double u = rng.next_double(rng.state)
    while u == 0.0:
        u = rng.next_double(rng.state)
    return u


cdef inline double standard_gumbel(bitgen_t* rng) noexcept nogil:
    """Gumbel(0, 1) by inversion: -log(-log U), U uniform on (0, 1)."""
    return -log(-log(uniform_open(rng)))


cdef inline double laplace(bitgen_t* rng, double scale) noexcept nogil:
    """Laplace(0, scale) by inversion on (-1/2, 1/2)."""
    cdef double u = uniform_open(rng) - 0.5
    if u < 0:
        return scale * log1p(2.0 * u)
    return -scale * log1p(-2.0 * u)
