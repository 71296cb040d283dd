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
from dptoolkit.linear_model._glm._glm_kernels cimport (
    LOSS_SQUARED, LOSS_LOGISTIC, LOSS_HINGE, NormalState, Lots, _normal, _normal_state,
    _lots, _next_lot, _record, _dloss)

LOSS_CODES = {"squared": LOSS_SQUARED, "logistic": LOSS_LOGISTIC, "hinge": LOSS_HINGE}

# status codes returned by the kernel
STATUS_OK = 0
STATUS_NONFINITE = 1


# ---------------------------------------------------------------------------
# The lazy state both kernels share.  Weights theta of shape (M, K), row-major:
# feature m holds K weights (K = 1 for the binary kernel), read together, so
# the clocks are per feature, interleaved so that one cache line holds a
# feature's three: [3m] the step its decay clock starts at, [3m + 1] the first
# step whose noise it lacks, [3m + 2] the last step that read it.
# ---------------------------------------------------------------------------
cdef struct _Lazy:
    double* theta
    index_t M
    index_t K
    index_t* clock
    index_t* touched        # the features the current lot read, in first-read order
    index_t n_touched
    const double* dpow      # dpow[k] = decay^k, k = 0 .. n_steps
    const double* sqrt_s    # sqrt_s[k] = sqrt(sum_{i<k} decay^(2i))
    double c                # std of one step's noise on a weight, 0 without noise
    bitgen_t* rng
    NormalState ns
    Lots lots
    double* grad            # M K: the lot's summed clipped gradients
    double* marg            # K per row of the lot: margins, then residuals


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


cdef inline void _catch_up(_Lazy* L, index_t m, index_t t) noexcept nogil:
    """Bring the K weights of feature m to the start of step t: decay, then the
    pending noise (K normals, class order)."""
    cdef index_t* st = L.clock + 3 * m
    cdef double* w = L.theta + m * L.K
    cdef index_t l
    cdef double f, sd
    if st[0] != t:
        f = L.dpow[t - st[0]]
        for l in range(L.K):
            w[l] *= f
        st[0] = t
    if st[1] != t:
        if L.c > 0.0:
            sd = L.c * L.sqrt_s[t - st[1]]
            for l in range(L.K):
                w[l] += sd * _normal(L.rng, &L.ns)
        st[1] = t


cdef inline void _read(_Lazy* L, index_t j, index_t t) noexcept nogil:
    """A lot of step t reads feature j: on its first read in the step, list it
    and bring it to the start of the step."""
    cdef index_t* st = L.clock + 3 * j
    if st[2] != t:
        st[2] = t
        L.touched[L.n_touched] = j
        L.n_touched += 1
        _catch_up(L, j, t)


cdef inline bint _step(_Lazy* L, double decay, double learning_rate, double den,
                       index_t t) noexcept nogil:
    """The step on the features read (their noise of step t is pending; the
    others only decay and gather noise, lazily): theta <- decay theta -
    learning_rate grad / den, grad zeroed.  Returns 1 if a weight is not finite."""
    cdef index_t k, j, l, m
    cdef bint bad = 0
    for k in range(L.n_touched):
        j = L.touched[k]
        for l in range(L.K):
            m = j * L.K + l
            L.theta[m] = decay * L.theta[m] - learning_rate * L.grad[m] / den
            L.grad[m] = 0.0
            if not isfinite(L.theta[m]):
                bad = 1
        L.clock[3 * j] = t + 1
    L.n_touched = 0
    return bad


cdef inline bint _catch_up_all(_Lazy* L, index_t t) noexcept nogil:
    """Every weight brought to the start of step t; returns 1 if one is not finite."""
    cdef index_t m, l
    cdef bint bad = 0
    for m in range(L.M):
        _catch_up(L, m, t)
        for l in range(L.K):
            if not isfinite(L.theta[m * L.K + l]):
                bad = 1
    return bad


cdef inline double _lot_denominator(double denominator, index_t cnt) noexcept nogil:
    """The constant denominator, or (denominator <= 0, without noise) the lot's size."""
    if denominator > 0.0:
        return denominator
    return <double> cnt if cnt > 0 else 1.0


ctypedef fused label_t:
    double      # binary losses, labels -1/+1 (squared: any real), K = 1
    index_t     # softmax, labels 0 .. K-1, K >= 2


cdef object _run(const double[::1] data, const index_t[::1] indices,
                 const index_t[::1] indptr, const label_t[::1] y,
                 const double[::1] rownorm, double* theta, index_t M, index_t K, int loss,
                 double lam, double learning_rate, double clip, double sampling_rate,
                 index_t batch_size, double denominator, index_t n_steps,
                 double noise_std, object bit_generator,
                 const index_t[::1] record_steps, double[:, ::1] trace):
    """The run of either kernel (arguments validated); returns (status, steps run)."""
    cdef index_t N = y.shape[0]
    cdef index_t t = 0, k, i, p, j, l, cnt, r = 0, done
    cdef double s, gn, amax, z, v, decay = 1.0 - learning_rate * lam
    cdef double* a
    cdef bint bad = 0
    cdef _Lazy L
    if noise_std > 0.0 and denominator <= 0.0:
        raise ValueError("noise_std > 0 needs a constant denominator > 0")
    L.c = learning_rate * noise_std / denominator if noise_std > 0.0 else 0.0
    clock_np = np.zeros(3 * M + 1, dtype=np.int64)  # +1: never empty
    clock_np[2:3 * M:3] = -1
    cdef index_t[::1] clock = clock_np
    cdef index_t[::1] touched = np.empty(M + 1, dtype=np.int64)
    cdef index_t[::1] lots = np.empty(2 * N, dtype=np.int64)
    cdef double[::1] tables = np.empty(2 * (n_steps + 1), dtype=np.float64)
    cdef double[::1] grad = np.zeros(M * K + 1, dtype=np.float64)
    cdef double[::1] marg = np.zeros((N + 1) * K, dtype=np.float64)
    L.theta = theta
    L.M = M
    L.K = K
    L.clock = &clock[0]
    L.touched = &touched[0]
    L.n_touched = 0
    L.dpow = &tables[0]
    L.sqrt_s = &tables[n_steps + 1]
    L.rng = get_bitgen(bit_generator)
    L.ns = _normal_state()
    L.lots = _lots(lots, sampling_rate, batch_size)
    L.grad = &grad[0]
    L.marg = &marg[0]
    with bit_generator.lock, nogil:
        _decay_tables(&tables[0], &tables[n_steps + 1], n_steps, decay)
        for t in range(n_steps):
            cnt = _next_lot(L.rng, &L.lots)
            # margins at the start of the step, each feature the lot reads
            # brought there when first read
            for k in range(cnt):
                i = L.lots.batch[k]
                a = L.marg + k * K
                for l in range(K):
                    a[l] = 0.0
                z = 0.0     # K = 1: the margin, summed in a register
                for p in range(indptr[i], indptr[i + 1]):
                    j = indices[p]
                    _read(&L, j, t)
                    v = data[p]
                    if label_t is double:
                        z += v * theta[j]
                    else:
                        for l in range(K):
                            a[l] += v * theta[j * K + l]
                if label_t is double:
                    a[0] = z
            # clipped per-example gradients, accumulated
            for k in range(cnt):
                i = L.lots.batch[k]
                a = L.marg + k * K
                if label_t is double:
                    s = _dloss(loss, a[0], y[i])
                    gn = fabs(s) * rownorm[i]
                    if gn > clip:
                        s = s * (clip / gn)
                    for p in range(indptr[i], indptr[i + 1]):
                        L.grad[indices[p]] += s * data[p]
                else:
                    # residuals p - e_y in place of the margins
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
                            L.grad[j * K + l] += v * a[l]
            if _step(&L, decay, learning_rate, _lot_denominator(denominator, cnt), t):
                bad = 1
            if r < record_steps.shape[0] and record_steps[r] == t:
                _catch_up_all(&L, t + 1)
                _record(trace, record_steps, &r, t, theta, M * K)
            if bad:
                break
        done = t + 1 if n_steps > 0 else 0
        if _catch_up_all(&L, done):
            bad = 1
    return (STATUS_NONFINITE if bad else STATUS_OK), done


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
    return _run(data, indices, indptr, y, rownorm, &theta[0], theta.shape[0], 1, loss, lam,
                learning_rate, clip, sampling_rate, batch_size, denominator, n_steps,
                noise_std, bit_generator, record_steps, trace)


# ---------------------------------------------------------------------------
# Multinomial (softmax) logistic regression: K >= 2 weights per feature.
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
    cdef index_t i, n_rec = record_steps.shape[0]
    if K < 2:
        raise ValueError(f"theta needs K >= 2 columns (classes), got {K}")
    if indptr.shape[0] != N + 1 or rownorm.shape[0] != N:
        raise ValueError("indptr, y and rownorm disagree on the number of rows")
    if trace.shape[0] != n_rec or (n_rec > 0 and trace.shape[1] != M * K):
        raise ValueError("trace must have shape (len(record_steps), M * K)")
    for i in range(N):
        if y[i] < 0 or y[i] >= K:
            raise ValueError(f"labels must be in [0, {K - 1}] (the columns of theta)")
    return _run(data, indices, indptr, y, rownorm, &theta[0, 0] if M > 0 else NULL, M, K,
                0, lam, learning_rate, clip, sampling_rate, batch_size, denominator,
                n_steps, noise_std, bit_generator, record_steps, trace)
