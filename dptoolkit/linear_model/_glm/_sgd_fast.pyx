# Mini-batch (DP-)SGD kernel for L2-regularised generalised linear models: the
# DP-SGD baseline of Damaskinos et al. (2021) (Section 2.3, eq. 5; Abadi et al., "Deep Learning
# with Differential Privacy", CCS 2016), split out of _scd_fast unchanged
# (bit-identical results for the same bit generator state).
#
# Problem (Damaskinos et al. (2021), eq. 1), N examples x_i (rows of a CSR matrix), M features:
#
#     F(theta) = 1/N sum_i l_i(x_i.theta) + lam/2 ||theta||^2 ,
#
# losses coded as in _glm_kernels.pxd (0 squared, 1 logistic, 2 hinge).
#
# Privacy (documented in dptoolkit.linear_model._glm._dpsgd, which calibrates the
# noise): add/remove-one neighbours; each per-example gradient l'(x_i.theta) x_i
# is clipped to L2 norm C, so the sum over a Poisson batch has sensitivity C;
# Gaussian mechanism with noise_std = sigma C on every coordinate of the summed
# gradient; T steps composed by the RDP accountant for the subsampled Gaussian
# with sampling rate q.
#
# Lazy updates (exact in distribution).  A step changes every coordinate --
# theta <- d theta - eta (g + z) / L with d = 1 - eta lam and dense noise z --
# but only the coordinates of the lot's rows are read or receive a gradient.
# Between two reads, coordinate m evolves as theta_t = d^k theta_a + (sum of the
# steps' noise, decayed), a Gaussian with variance c^2 S_k, c = eta sigma C / L,
# S_k = sum_{j<k} d^{2j}, independent of everything else.  So each coordinate
# keeps its value, the step its decay clock starts at, and the first step whose
# noise it has not received; when a lot reads it (and at the end, and at each
# recorded step) the pending noise is drawn as ONE normal with that variance.
# The joint law of every value the algorithm reads, and of its output, is that of
# the dense algorithm (Abadi et al. 2016, Algorithm 1), so its privacy analysis
# (a function of the released iterates' law) is unchanged; a step costs
# O(nnz of the lot) instead of O(M).  The same device as DP-SCD's lag-scaled
# noise (_scd_fast: noise_alpha * sqrt(lag)).  The noise must be the same
# N(0, c^2) in every step, so a private run divides by a constant (denominator).
#
# Randomness: uniforms from a NumPy bit generator (dptoolkit._random); Gaussian
# noise and batches from _glm_kernels.pxd.  The order in which uniforms are
# consumed is part of the contract with the pure-Python reference in
# tests/test_dpsgd.py: the lot; then, for each row of the lot in order and each of
# its features in order, the pending noise of a feature read for the first time in
# this step; after the last step (and after each recorded step) the pending noise
# of every coordinate in index order.
from libc.math cimport exp, fabs, isfinite, sqrt
from numpy.random cimport bitgen_t

import numpy as np

from dptoolkit._typedefs cimport index_t
from dptoolkit._random cimport get_bitgen
from dptoolkit.linear_model._glm._glm_kernels cimport (LOSS_SQUARED, LOSS_LOGISTIC, LOSS_HINGE, NormalState,
                                     _normal, _poisson_batch, _next_chunk, _dloss)

LOSS_CODES = {"squared": LOSS_SQUARED, "logistic": LOSS_LOGISTIC, "hinge": LOSS_HINGE}

# status codes returned by the kernel
STATUS_OK = 0
STATUS_NONFINITE = 1


# per-coordinate clocks, interleaved so that one cache line holds a coordinate's
# three: [3m] the step theta[m]'s decay clock starts at, [3m + 1] the first step
# whose noise it lacks, [3m + 2] the last step that read it
cdef inline void _catch_up(double* theta, index_t* clock, index_t m, index_t t,
                           const double* dpow, const double* sqrt_s, double c,
                           bitgen_t* rng, NormalState* ns) noexcept nogil:
    """Bring coordinate m to the start of step t: decay, then the pending noise."""
    cdef index_t* st = clock + 3 * m
    if st[0] != t:
        theta[m] *= dpow[t - st[0]]
        st[0] = t
    if st[1] != t:
        if c > 0.0:
            theta[m] += c * sqrt_s[t - st[1]] * _normal(rng, ns)
        st[1] = t


cdef inline void _decay_tables(double* dpow, double* sqrt_s, index_t n_steps,
                               double decay) noexcept nogil:
    """dpow[k] = decay^k and sqrt_s[k] = sqrt(sum_{i<k} decay^(2i)), k = 0 .. n_steps:
    the shrink of a weight and the standard deviation (in units of the step's noise)
    of its pending noise after k steps without a read."""
    cdef index_t k
    cdef double s = 0.0
    dpow[0] = 1.0
    sqrt_s[0] = 0.0
    for k in range(1, n_steps + 1):
        dpow[k] = dpow[k - 1] * decay
        s = s * decay * decay + 1.0
        sqrt_s[k] = sqrt(s)


def dpsgd(const double[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
          const double[::1] y, const double[::1] rownorm, double[::1] theta, *,
          int loss, double lam, double learning_rate, double clip, double sampling_rate,
          index_t batch_size, double denominator, index_t n_steps, double noise_std,
          object bit_generator, const index_t[::1] record_steps, double[:, ::1] trace):
    """Mini-batch (DP-)SGD for F(theta) with per-example gradient clipping.

    Step: g = sum_{i in B} clip_C(l'(x_i.theta) x_i) + N(0, noise_std^2 I_M);
    theta <- theta - learning_rate * (g / denominator + lam * theta), all margins
    taken at the theta of the start of the step; coordinates are updated lazily
    (exact in distribution: see the module comment).  Batches: Poisson with
    ``sampling_rate > 0`` (``denominator`` should then be the expected batch size,
    a public constant); otherwise permutation chunks of ``batch_size`` and
    ``denominator <= 0`` means "divide by the actual batch size" (only without
    noise).  ``clip = inf`` disables clipping.  Returns (status, steps run).
    """
    cdef index_t N = y.shape[0]
    cdef index_t M = theta.shape[0]
    cdef index_t t = 0, k, i, p, j, m, cnt, n_touched, pos = N, r = 0
    cdef index_t n_rec = record_steps.shape[0], done
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef NormalState ns
    cdef double a, s, gn, den, decay = 1.0 - learning_rate * lam, c = 0.0
    cdef int bad = 0
    if noise_std > 0.0:
        if denominator <= 0.0:
            raise ValueError("noise_std > 0 needs a constant denominator > 0")
        c = learning_rate * noise_std / denominator
    ns.has_spare = 0
    ns.spare = 0.0
    batch_np = np.empty(N, dtype=np.int64)
    perm_np = np.arange(N, dtype=np.int64)
    grad_np = np.zeros(M, dtype=np.float64)
    marg_np = np.zeros(N, dtype=np.float64)
    clock_np = np.zeros(3 * M, dtype=np.int64)
    clock_np[2::3] = -1
    touched_np = np.empty(M, dtype=np.int64)
    # d^k and sqrt(S_k), S_k = sum_{j<k} d^(2j), for k = 0 .. n_steps
    dpow_np = np.empty(n_steps + 1, dtype=np.float64)
    sqrt_s_np = np.empty(n_steps + 1, dtype=np.float64)
    cdef index_t[::1] batch = batch_np
    cdef index_t[::1] perm = perm_np
    cdef double[::1] grad = grad_np
    cdef double[::1] marg = marg_np
    cdef index_t[::1] clock = clock_np
    cdef index_t[::1] touched = touched_np
    cdef double[::1] dpow = dpow_np
    cdef double[::1] sqrt_s = sqrt_s_np
    with bit_generator.lock, nogil:
        _decay_tables(&dpow[0], &sqrt_s[0], n_steps, decay)
        for t in range(n_steps):
            if sampling_rate > 0.0:
                cnt = _poisson_batch(rng, N, sampling_rate, &batch[0])
            else:
                cnt = _next_chunk(rng, &perm[0], N, &pos, batch_size, &batch[0])
            # margins at the start of the step, each coordinate the lot reads
            # brought there when first read
            n_touched = 0
            for k in range(cnt):
                i = batch[k]
                a = 0.0
                for p in range(indptr[i], indptr[i + 1]):
                    j = indices[p]
                    if clock[3 * j + 2] != t:
                        clock[3 * j + 2] = t
                        touched[n_touched] = j
                        n_touched += 1
                        _catch_up(&theta[0], &clock[0], j, t, &dpow[0], &sqrt_s[0], c,
                                  rng, &ns)
                    a += data[p] * theta[j]
                marg[k] = a
            for k in range(cnt):
                i = batch[k]
                s = _dloss(loss, marg[k], y[i])
                gn = fabs(s) * rownorm[i]
                if gn > clip:
                    s = s * (clip / gn)
                for p in range(indptr[i], indptr[i + 1]):
                    grad[indices[p]] += s * data[p]
            den = denominator
            if den <= 0.0:
                den = <double> cnt if cnt > 0 else 1.0
            # the step on the coordinates read (their noise of step t is pending);
            # the others only decay and gather noise, lazily
            for k in range(n_touched):
                j = touched[k]
                theta[j] = decay * theta[j] - learning_rate * grad[j] / den
                grad[j] = 0.0
                clock[3 * j] = t + 1
                if not isfinite(theta[j]):
                    bad = 1
            if r < n_rec and record_steps[r] == t:
                for m in range(M):
                    _catch_up(&theta[0], &clock[0], m, t + 1, &dpow[0], &sqrt_s[0], c,
                              rng, &ns)
                while r < n_rec and record_steps[r] == t:
                    for m in range(M):
                        trace[r, m] = theta[m]
                    r += 1
            if bad:
                break
        done = t + 1 if n_steps > 0 else 0
        for m in range(M):
            _catch_up(&theta[0], &clock[0], m, done, &dpow[0], &sqrt_s[0], c, rng, &ns)
            if not isfinite(theta[m]):
                bad = 1
    return (STATUS_NONFINITE if bad else STATUS_OK), done


# ---------------------------------------------------------------------------
# Multinomial (softmax) logistic regression.  Weights theta of shape (M, K),
# row-major: coordinate m holds the K class weights of feature m, so the lazy
# clocks above stay per feature (all K entries of a feature are read together).
# Per-example loss l_i(Theta) = -log softmax(Theta^T x_i)_{y_i}; its gradient
# is x_i (p_i - e_{y_i})^T with Frobenius norm ||x_i|| ||p_i - e_{y_i}|| <=
# sqrt(2) ||x_i|| (||p - e_y||^2 = (1 - p_y)^2 + sum_{c != y} p_c^2 <=
# 2 (1 - p_y)^2), and it is clipped to Frobenius norm C as a whole, so the
# summed clipped gradient of a lot has L2 (Frobenius) sensitivity C under
# add/remove of one example: the binary analysis unchanged, with noise
# N(0, noise_std^2) on each of the M K entries.
#
# Uniform order (the contract with tests/test_multiclass.py): the lot; then,
# for each row of the lot and each of its features in order, the K pending
# normals (class order) of a feature read for the first time in this step;
# after each recorded step and after the last, those of every feature in
# index order.
# ---------------------------------------------------------------------------
cdef inline void _catch_up_rows(double* theta, index_t K, index_t* clock, index_t m,
                                index_t t, const double* dpow, const double* sqrt_s,
                                double c, bitgen_t* rng, NormalState* ns) noexcept nogil:
    """Bring the K weights of feature m to the start of step t."""
    cdef index_t* st = clock + 3 * m
    cdef index_t l
    cdef double f, sd
    if st[0] != t:
        f = dpow[t - st[0]]
        for l in range(K):
            theta[m * K + l] *= f
        st[0] = t
    if st[1] != t:
        if c > 0.0:
            sd = c * sqrt_s[t - st[1]]
            for l in range(K):
                theta[m * K + l] += sd * _normal(rng, ns)
        st[1] = t


def dpsgd_softmax(const double[::1] data, const index_t[::1] indices,
                  const index_t[::1] indptr, const index_t[::1] y,
                  const double[::1] rownorm, double[:, ::1] theta, *, double lam,
                  double learning_rate, double clip, double sampling_rate,
                  index_t batch_size, double denominator, index_t n_steps,
                  double noise_std, object bit_generator, const index_t[::1] record_steps,
                  double[:, ::1] trace):
    """Mini-batch (DP-)SGD for the L2-regularised softmax cross-entropy.

    ``theta`` has shape (M, K) (K >= 2 classes; ``y`` in 0 .. K-1).  Step:
    G = sum_{i in B} clip_C(x_i (p_i - e_{y_i})^T) + N(0, noise_std^2 I_{MK});
    theta <- theta - learning_rate (G / denominator + lam theta), every p_i at the
    theta of the start of the step, clipping in Frobenius norm; lazy noise as for
    :func:`dpsgd`.  Batches, ``denominator`` and ``clip = inf`` as for
    :func:`dpsgd`.  ``trace`` has shape (len(record_steps), M K).  Returns
    (status, steps run).
    """
    cdef index_t N = y.shape[0]
    cdef index_t M = theta.shape[0]
    cdef index_t K = theta.shape[1]
    cdef index_t t = 0, k, i, p, j, m, l, cnt, n_touched, pos = N, r = 0
    cdef index_t n_rec = record_steps.shape[0], done
    cdef bitgen_t* rng
    cdef NormalState ns
    cdef double s, gn, den, amax, z, v, decay = 1.0 - learning_rate * lam, c = 0.0
    cdef double* th
    cdef double* a
    cdef int bad = 0
    if K < 2:
        raise ValueError(f"theta needs K >= 2 columns (classes), got {K}")
    if indptr.shape[0] != N + 1 or rownorm.shape[0] != N:
        raise ValueError("indptr, y and rownorm disagree on the number of rows")
    if trace.shape[0] != n_rec or (n_rec > 0 and trace.shape[1] != M * K):
        raise ValueError("trace must have shape (len(record_steps), M * K)")
    for i in range(N):
        if y[i] < 0 or y[i] >= K:
            raise ValueError(f"labels must be in [0, {K - 1}] (the columns of theta)")
    if noise_std > 0.0:
        if denominator <= 0.0:
            raise ValueError("noise_std > 0 needs a constant denominator > 0")
        c = learning_rate * noise_std / denominator
    rng = get_bitgen(bit_generator)
    ns.has_spare = 0
    ns.spare = 0.0
    batch_np = np.empty(N, dtype=np.int64)
    perm_np = np.arange(N, dtype=np.int64)
    grad_np = np.zeros(M * K, dtype=np.float64)
    marg_np = np.zeros(max(N, 1) * K, dtype=np.float64)
    clock_np = np.zeros(3 * M, dtype=np.int64)
    clock_np[2::3] = -1
    touched_np = np.empty(M, dtype=np.int64)
    dpow_np = np.empty(n_steps + 1, dtype=np.float64)
    sqrt_s_np = np.empty(n_steps + 1, dtype=np.float64)
    cdef index_t[::1] batch = batch_np
    cdef index_t[::1] perm = perm_np
    cdef double[::1] grad = grad_np
    cdef double[::1] marg = marg_np
    cdef index_t[::1] clock = clock_np
    cdef index_t[::1] touched = touched_np
    cdef double[::1] dpow = dpow_np
    cdef double[::1] sqrt_s = sqrt_s_np
    th = &theta[0, 0] if M > 0 else NULL
    with bit_generator.lock, nogil:
        _decay_tables(&dpow[0], &sqrt_s[0], n_steps, decay)
        for t in range(n_steps):
            if sampling_rate > 0.0:
                cnt = _poisson_batch(rng, N, sampling_rate, &batch[0])
            else:
                cnt = _next_chunk(rng, &perm[0], N, &pos, batch_size, &batch[0])
            # margins (K per row) at the start of the step
            n_touched = 0
            for k in range(cnt):
                i = batch[k]
                a = &marg[k * K]
                for l in range(K):
                    a[l] = 0.0
                for p in range(indptr[i], indptr[i + 1]):
                    j = indices[p]
                    if clock[3 * j + 2] != t:
                        clock[3 * j + 2] = t
                        touched[n_touched] = j
                        n_touched += 1
                        _catch_up_rows(th, K, &clock[0], j, t, &dpow[0], &sqrt_s[0], c,
                                       rng, &ns)
                    v = data[p]
                    for l in range(K):
                        a[l] += v * th[j * K + l]
            # residuals p - e_y in place of the margins, clipped, then accumulated
            for k in range(cnt):
                i = batch[k]
                a = &marg[k * K]
                amax = a[0]
                for l in range(1, K):
                    if a[l] > amax:
                        amax = a[l]
                z = 0.0
                for l in range(K):
                    a[l] = exp(a[l] - amax)
                    z += a[l]
                gn = 0.0
                for l in range(K):
                    a[l] = a[l] / z
                a[y[i]] -= 1.0
                for l in range(K):
                    gn += a[l] * a[l]
                gn = sqrt(gn) * rownorm[i]
                s = 1.0
                if gn > clip:
                    s = clip / gn
                for p in range(indptr[i], indptr[i + 1]):
                    j = indices[p]
                    v = s * data[p]
                    for l in range(K):
                        grad[j * K + l] += v * a[l]
            den = denominator
            if den <= 0.0:
                den = <double> cnt if cnt > 0 else 1.0
            for k in range(n_touched):
                j = touched[k]
                for l in range(K):
                    m = j * K + l
                    th[m] = decay * th[m] - learning_rate * grad[m] / den
                    grad[m] = 0.0
                    if not isfinite(th[m]):
                        bad = 1
                clock[3 * j] = t + 1
            if r < n_rec and record_steps[r] == t:
                for m in range(M):
                    _catch_up_rows(th, K, &clock[0], m, t + 1, &dpow[0], &sqrt_s[0], c,
                                   rng, &ns)
                while r < n_rec and record_steps[r] == t:
                    for m in range(M * K):
                        trace[r, m] = th[m]
                    r += 1
            if bad:
                break
        done = t + 1 if n_steps > 0 else 0
        for m in range(M):
            _catch_up_rows(th, K, &clock[0], m, done, &dpow[0], &sqrt_s[0], c, rng, &ns)
            for l in range(K):
                if not isfinite(th[m * K + l]):
                    bad = 1
    return (STATUS_NONFINITE if bad else STATUS_OK), done
