# Big-Step Little-Step exponential-mechanism sampler (paper 000, Algorithm 4,
# corrected: groups are contiguous blocks, sums are re-computed exactly on
# cancellation and at every refresh; underflowing weights are a tiny delta).  Items 0..n_items-1 carry
# log-weights; draws are exact inverse-CDF draws from p_i ∝ exp(logw_i).
from numpy.random cimport bitgen_t
from dptoolkit._typedefs cimport intp_t


cdef class GroupedExpSampler:
    cdef readonly intp_t n_items
    cdef readonly intp_t group_size        # contiguous blocks [g*group_size, (g+1)*group_size)
    cdef readonly intp_t n_groups
    cdef readonly double rel_tol           # bound on the relative error of maintained sums
    cdef double ref                        # log reference: weight[i] = exp(logw[i] - ref)
    cdef double[::1] logw
    cdef double[::1] weight
    cdef double[::1] group_sum
    cdef double[::1] group_err             # bound on the absolute rounding error of group_sum
    cdef double total
    cdef double total_err
    cdef readonly intp_t n_finite          # items with logw > -inf (O(1) empty-state handling)
    cdef readonly long n_group_resums      # counters, for tests and benchmarks
    cdef readonly long n_total_resums
    cdef readonly long n_rebuilds

    # Preconditions of the cdef methods (the def methods check them): logw has
    # n_items entries, no NaN, no +inf (-inf = weight 0); 0 <= item < n_items.
    cdef void build(self, const double[::1] logw) noexcept nogil
    cdef void update(self, intp_t item, double logw) noexcept nogil
    # sample returns -1 when no item has positive weight (all logw = -inf) or
    # when a precondition was violated (NaN / +inf stored): callers must check.
    cdef intp_t sample(self, bitgen_t* rng) noexcept nogil
    cdef double log_total(self) noexcept nogil
