# OpenMP for the kernels, whether or not the extension was compiled with it
# (setup.py adds -fopenmp only when the compiler supports it).  Without OpenMP the
# prange loops run serially and these functions report one thread, as in
# scikit-learn's build.  The C preprocessor decides: _OPENMP is defined by the
# compiler exactly when OpenMP is on.
cdef extern from *:
    """
    #ifdef _OPENMP
        #include <omp.h>
        #define DPT_OPENMP_ENABLED 1
    #else
        #define DPT_OPENMP_ENABLED 0
        #define omp_get_max_threads() 1
    #endif
    """
    bint DPT_OPENMP_ENABLED
    int omp_get_max_threads() noexcept nogil
