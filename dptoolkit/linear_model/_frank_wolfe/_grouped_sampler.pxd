# Big-Step Little-Step exponential-mechanism sampler (Raff, Khanna and Lu (2023), Algorithm 4,
# corrected: groups are contiguous blocks, sums are re-computed exactly on
# cancellation and at every refresh; underflowing weights are a tiny delta).  Items 0..n_items-1 carry
# log-weights; draws are exact inverse-CDF draws from p_i ∝ exp(logw_i).
from libc.stdint cimport int32_t
from numpy.random cimport bitgen_t
from dptoolkit._typedefs cimport intp_t


cdef class GroupedExpSampler:
    cdef readonly intp_t n_items
    cdef readonly intp_t group_size        # contiguous blocks [g*group_size, (g+1)*group_size)
    cdef readonly intp_t n_groups
    cdef readonly double rel_tol           # bound on the relative error of maintained sums
    cdef double ref                        # log reference: weight[i] = exp(logw[i] - ref)
    cdef double[:, ::1] lw_w               # (n_items, 2): logw[i], weight[i] side by side
    cdef double[:] logw                    # lw_w[:, 0]
    cdef double[:] weight                  # lw_w[:, 1]
    cdef double[::1] group_sum
    cdef double[::1] group_err             # bound on the absolute rounding error of group_sum
    cdef double total
    cdef double total_err
    cdef readonly intp_t n_finite          # items with logw > -inf (O(1) empty-state handling)
    cdef readonly long n_group_resums      # counters, for tests and benchmarks
    cdef readonly long n_total_resums
    cdef readonly long n_rebuilds
    cdef int group_shift                   # log2(group_size) if a power of 2, else -1
    cdef unsigned char[::1] g_touched      # update_batch scratch, O(n_groups): flags,
    cdef intp_t[::1] g_list                # ... the groups changed, in first-touch order,
    cdef double[::1] g_old                 # ... and their sums before the batch

    # Preconditions of the cdef methods (the def methods check them): logw has
    # n_items entries, no NaN, no +inf (-inf = weight 0); 0 <= item < n_items.
    cdef void build(self, const double[:] logw) noexcept nogil
    cdef void update(self, intp_t item, double logw) noexcept nogil
    cdef void set_total(self, double t, double terr) noexcept nogil
    # update_batch: update(items[k], logws[k]) for k < n in order, with the sums
    # brought up to date once per changed group (same logw/weight arrays).
    cdef void update_batch(self, const int32_t* items, const double* logws,
                           intp_t n) noexcept nogil
    # reweight_batch: the same updates, then every sum re-computed exactly (the
    # state of a rebuild at the current ref): for batches touching many items.
    cdef void reweight_batch(self, const int32_t* items, const double* logws,
                             intp_t n) noexcept nogil
    # _batch with scaled weights (module docstring, *Scaled weights*): scaled
    # NULL, or scaled[k] >= 0 the caller's exp(logws[k] - offset) to within
    # SCALED_REL_ERR (then no exp for item k), scaled[k] < 0: exp(logws[k] - ref).
    cdef void _batch(self, const int32_t* items, const double* logws,
                     const double* scaled, double offset, intp_t n,
                     bint resum) noexcept nogil
    cdef void resum_all(self) noexcept nogil
    # sample returns -1 when no item has positive weight (all logw = -inf) or
    # when a precondition was violated (NaN / +inf stored): callers must check.
    cdef intp_t sample(self, bitgen_t* rng) noexcept nogil
    cdef double log_total(self) noexcept nogil
