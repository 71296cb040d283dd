# (DP-)IGHT kernel: iterative gradient hard thresholding for sparse logistic
# regression (Wang & Gu, IJCAI 2019, Algorithm 1 with the full batch; the private
# IGHT baseline of Khanna, Lu and Raff (2023), Section 4.2).  All T iterations in one nogil block.
#
# Problem: N examples x_i (the columns of X are given as CSC), labels y_i in {0, 1},
# theta in R^D with at most s non-zeros.  One iteration:
#
#     z_i   = x_i . theta                      (only the columns of supp(theta))
#     g     = X^T (sigmoid(z) - y) + noise_std * b,   b ~ N(0, I_D)
#     u     = theta - step * g
#     theta = H_s(u)   (the s largest |u_j|, ties to the lower index j)
#
# Cost per iteration: nnz of the s support columns for the margins, nnz(X) for
# the full gradient (one pass over the CSC arrays), D normals and an O(D)
# selection (radix select on the bit patterns of |u_j|, four 16-bit digits;
# no sort, no data-dependent worst case).
#
# Privacy (documented in dptoolkit.linear_model._glm._ight, which calibrates
# noise_std): the kernel only adds the noise it is given; noise_std = 0 is the
# non-private IGHT and then draws nothing.
#
# Randomness: Gaussian noise by the kernels' sampler (_glm_kernels._normal,
# Marsaglia's polar method on a NumPy bit generator), D draws per iteration in
# coordinate order, one stream over the T iterations; the pure-Python reference
# in tests/test_ight.py reproduces it with dptoolkit.kernels.scd_fast.standard_normals.
from libc.math cimport exp, fabs, isfinite
from libc.stdint cimport uint64_t
from libc.string cimport memcpy, memset
from numpy.random cimport bitgen_t

import numpy as np

from dptoolkit._typedefs cimport index_t
from dptoolkit._math cimport sigmoid
from dptoolkit._random cimport get_bitgen
from dptoolkit.linear_model._glm._glm_kernels cimport NormalState, _normal

# status codes returned by the kernel
STATUS_OK = 0
STATUS_NONFINITE = 1

cdef enum:
    RADIX_BITS = 16
    RADIX_SIZE = 65536


cdef inline uint64_t _key(double v) noexcept nogil:
    """Bit pattern of |v|: for v >= 0 (not NaN) the IEEE-754 order is the integer order."""
    cdef double a = fabs(v)
    cdef uint64_t k
    memcpy(&k, &a, sizeof(double))
    return k


cdef index_t _threshold(const double* u, index_t d, index_t s, index_t* hist,
                        uint64_t* thr) noexcept nogil:
    """Radix select: the key ``thr`` of the s-th largest |u_j| (1 <= s <= d).

    Sets ``thr`` and returns ``need`` with ``#{j: key_j > thr} = s - need`` and
    ``#{j: key_j >= thr} >= s``, i.e. H_s keeps every key above ``thr`` and the
    ``need`` lowest indices with key equal to ``thr``.
    """
    cdef uint64_t prefix = 0, mask = 0, key
    cdef index_t need = s, above, j, b
    cdef int digit, shift
    for digit in range(64 // RADIX_BITS):
        shift = 64 - RADIX_BITS * (digit + 1)
        memset(hist, 0, RADIX_SIZE * sizeof(index_t))
        for j in range(d):
            key = _key(u[j])
            if (key & mask) == prefix:
                hist[(key >> shift) & (RADIX_SIZE - 1)] += 1
        above = 0
        b = RADIX_SIZE - 1
        while b > 0 and above + hist[b] < need:
            above += hist[b]
            b -= 1
        need -= above
        prefix |= (<uint64_t> b) << shift
        mask |= (<uint64_t> (RADIX_SIZE - 1)) << shift
    thr[0] = prefix
    return need


cdef inline bint _kept(uint64_t key, uint64_t thr, index_t* need) noexcept nogil:
    """Whether H_s keeps an entry of this key (every key above ``thr``, the first
    ``need`` equal to it), counting the ties it takes."""
    if key > thr:
        return True
    if key == thr and need[0] > 0:
        need[0] -= 1
        return True
    return False


cdef int _run(const double[::1] data, const index_t[::1] indices,
              const index_t[::1] indptr, const double[::1] y, double[::1] theta,
              double step, double noise_std, index_t s, index_t max_iter,
              bitgen_t* rng, double[::1] z, double[::1] u, index_t[::1] support,
              index_t[::1] hist, index_t* n_done) noexcept nogil:
    cdef index_t n = y.shape[0], d = theta.shape[0]
    cdef index_t t, a, j, p, n_sup = 0, need
    cdef double w, g
    cdef uint64_t thr, key
    cdef NormalState ns
    ns.has_spare = 0
    ns.spare = 0.0
    for j in range(d):
        if theta[j] != 0.0:
            support[n_sup] = j
            n_sup += 1
    for t in range(max_iter):
        # margins from the support columns only
        for j in range(n):
            z[j] = 0.0
        for a in range(n_sup):
            j = support[a]
            w = theta[j]
            for p in range(indptr[j], indptr[j + 1]):
                z[indices[p]] += data[p] * w
        for j in range(n):
            z[j] = sigmoid(z[j]) - y[j]
        # full (noisy) gradient step: one pass over the CSC arrays
        for j in range(d):
            g = 0.0
            for p in range(indptr[j], indptr[j + 1]):
                g += data[p] * z[indices[p]]
            if noise_std > 0.0:
                g += noise_std * _normal(rng, &ns)
            u[j] = theta[j] - step * g
            if not isfinite(u[j]):
                n_done[0] = t
                return 1
        # hard thresholding H_s
        need = _threshold(&u[0], d, s, &hist[0], &thr)
        for a in range(n_sup):
            theta[support[a]] = 0.0
        n_sup = 0
        for j in range(d):
            key = _key(u[j])
            if _kept(key, thr, &need):
                if key != 0:
                    theta[j] = u[j]
                    support[n_sup] = j
                    n_sup += 1
    n_done[0] = max_iter
    return 0


cdef _check_args(const double[::1] data, const index_t[::1] indices,
                 const index_t[::1] indptr, index_t d, index_t sparsity, index_t max_iter,
                 double noise_std, double step, object bit_generator):
    """The argument checks both kernels share (ValueError naming the argument)."""
    if noise_std > 0.0 and bit_generator is None:
        raise ValueError("noise_std > 0 needs a bit_generator")
    if indptr.shape[0] != d + 1:
        raise ValueError(f"indptr must have n_features + 1 = {d + 1} entries, got "
                         f"{indptr.shape[0]}")
    if indices.shape[0] != data.shape[0] or (d > 0 and indptr[d] > data.shape[0]):
        raise ValueError("indices and data must have the same length, at least indptr[-1]")
    if not 1 <= sparsity <= d:
        raise ValueError(f"sparsity must be in [1, n_features] = [1, {d}], got {sparsity}")
    if max_iter < 0:
        raise ValueError(f"max_iter must be >= 0, got {max_iter}")
    if not (noise_std >= 0.0 and isfinite(noise_std)):
        raise ValueError(f"noise_std must be a finite float >= 0, got {noise_std}")
    if not (step > 0.0 and isfinite(step)):
        raise ValueError(f"step must be a finite float > 0, got {step}")


def ight(const double[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
         const double[::1] y, double[::1] theta, *, double step, double noise_std,
         index_t sparsity, index_t max_iter, object bit_generator=None):
    """Run ``max_iter`` (DP-)IGHT iterations on ``theta`` in place.

    Parameters
    ----------
    data, indices, indptr : CSC arrays of X, shape (n_samples, n_features)
        Canonical (sorted row indices, no duplicates); int64 indices.
    y : ndarray of shape (n_samples,)
        Labels in {0, 1}.
    theta : ndarray of shape (n_features,)
        Start (normally zeros); overwritten by the last iterate.
    step : float
        Step on the summed gradient (eta / N).
    noise_std : float
        Standard deviation of the Gaussian noise added to every coordinate of the
        summed gradient; 0 draws nothing (non-private IGHT).
    sparsity : int
        s in [1, n_features].
    max_iter : int
    bit_generator : numpy.random.BitGenerator or None
        Needed when ``noise_std > 0``.

    Returns
    -------
    status : int
        ``STATUS_OK`` or ``STATUS_NONFINITE`` (a non-finite iterate; ``theta`` then
        holds the last finite one).
    n_iter : int
        Iterations completed.
    """
    cdef index_t n = y.shape[0], d = theta.shape[0]
    cdef index_t n_done = 0
    cdef int status
    cdef bitgen_t* rng = NULL
    _check_args(data, indices, indptr, d, sparsity, max_iter, noise_std, step,
                bit_generator)
    z_np = np.empty(n, dtype=np.float64)
    u_np = np.empty(d, dtype=np.float64)
    support_np = np.empty(d, dtype=np.int64)
    hist_np = np.empty(RADIX_SIZE, dtype=np.int64)
    cdef double[::1] z = z_np, u = u_np
    cdef index_t[::1] support = support_np, hist = hist_np
    if noise_std > 0.0:
        rng = get_bitgen(bit_generator)
        with bit_generator.lock, nogil:
            status = _run(data, indices, indptr, y, theta, step, noise_std, sparsity,
                          max_iter, rng, z, u, support, hist, &n_done)
    else:
        with nogil:
            status = _run(data, indices, indptr, y, theta, step, 0.0, sparsity,
                          max_iter, NULL, z, u, support, hist, &n_done)
    return (STATUS_NONFINITE if status else STATUS_OK), int(n_done)


def hard_threshold(const double[::1] u, index_t sparsity):
    """H_s(u): the ``sparsity`` largest |u_j| kept (ties to the lower index), a copy.

    The selection the kernel applies at every iteration (tests compare it with a
    stable sort).
    """
    cdef index_t d = u.shape[0], j, need
    cdef uint64_t thr, key
    if not 1 <= sparsity <= d:
        raise ValueError(f"sparsity must be in [1, {d}], got {sparsity}")
    for j in range(d):
        if not isfinite(u[j]):
            raise ValueError("u must be finite")
    out_np = np.zeros(d, dtype=np.float64)
    hist_np = np.empty(RADIX_SIZE, dtype=np.int64)
    cdef double[::1] out = out_np
    cdef index_t[::1] hist = hist_np
    with nogil:
        need = _threshold(&u[0], d, sparsity, &hist[0], &thr)
        for j in range(d):
            key = _key(u[j])
            if _kept(key, thr, &need):
                out[j] = u[j]
    return out_np


# ---------------------------------------------------------------------------
# Multinomial (softmax) IGHT with group hard thresholding, for K > 2 classes.
# theta has shape (D, K), row j the K class weights of feature j; labels are
# class codes in 0 .. K-1.  One iteration:
#
#     Z   = X theta                         (only the rows of the support)
#     R   = softmax(Z) - E_y                (row-wise; E_y the one-hot labels)
#     G   = X^T R + noise_std * B,          B ~ N(0, I_{D x K})
#     U   = theta - step * G
#     theta = H^group_s(U)   (the s rows of largest ||U_j||_2, ties to the lower j)
#
# Row i of R is p_i - e_{y_i}, of L2 norm <= sqrt(2), so one example moves X^T R
# by x_i (p_i - e_{y_i})^T, of Frobenius norm <= sqrt(2) ||x_i||: the caller
# calibrates noise_std to that sensitivity (dptoolkit.linear_model._glm._ight).
# Noise order: for each feature j in index order, its K normals in class order.
# ---------------------------------------------------------------------------
cdef int _run_softmax(const double[::1] data, const index_t[::1] indices,
                      const index_t[::1] indptr, const index_t[::1] y,
                      double[:, ::1] theta, double step, double noise_std, index_t s,
                      index_t max_iter, bitgen_t* rng, double[:, ::1] z,
                      double[:, ::1] u, double[::1] r, index_t[::1] support,
                      index_t[::1] hist, index_t* n_done) noexcept nogil:
    cdef index_t n = z.shape[0], d = theta.shape[0], K = theta.shape[1]
    cdef index_t t, a, i, j, l, p, n_sup = 0, need
    cdef double v, amax, tot, g
    cdef uint64_t thr, key
    cdef NormalState ns
    ns.has_spare = 0
    ns.spare = 0.0
    for j in range(d):
        for l in range(K):
            if theta[j, l] != 0.0:
                support[n_sup] = j
                n_sup += 1
                break
    for t in range(max_iter):
        # margins from the support rows only
        for i in range(n):
            for l in range(K):
                z[i, l] = 0.0
        for a in range(n_sup):
            j = support[a]
            for p in range(indptr[j], indptr[j + 1]):
                i = indices[p]
                v = data[p]
                for l in range(K):
                    z[i, l] += v * theta[j, l]
        # residuals p_i - e_{y_i} in place
        for i in range(n):
            amax = z[i, 0]
            for l in range(1, K):
                if z[i, l] > amax:
                    amax = z[i, l]
            tot = 0.0
            for l in range(K):
                z[i, l] = exp(z[i, l] - amax)
                tot += z[i, l]
            for l in range(K):
                z[i, l] /= tot
            z[i, y[i]] -= 1.0
        # full (noisy) gradient step, row norms for the selection
        for j in range(d):
            for l in range(K):
                u[j, l] = 0.0
            for p in range(indptr[j], indptr[j + 1]):
                i = indices[p]
                v = data[p]
                for l in range(K):
                    u[j, l] += v * z[i, l]
            r[j] = 0.0
            for l in range(K):
                g = u[j, l]
                if noise_std > 0.0:
                    g += noise_std * _normal(rng, &ns)
                u[j, l] = theta[j, l] - step * g
                if not isfinite(u[j, l]):
                    n_done[0] = t
                    return 1
                r[j] += u[j, l] * u[j, l]
        # group hard thresholding on the squared row norms
        need = _threshold(&r[0], d, s, &hist[0], &thr)
        for a in range(n_sup):
            for l in range(K):
                theta[support[a], l] = 0.0
        n_sup = 0
        for j in range(d):
            key = _key(r[j])
            if _kept(key, thr, &need):
                if key != 0:
                    for l in range(K):
                        theta[j, l] = u[j, l]
                    support[n_sup] = j
                    n_sup += 1
    n_done[0] = max_iter
    return 0


def ight_softmax(const double[::1] data, const index_t[::1] indices,
                 const index_t[::1] indptr, const index_t[::1] y, double[:, ::1] theta, *,
                 double step, double noise_std, index_t sparsity, index_t max_iter,
                 object bit_generator=None):
    """Run ``max_iter`` (DP-)IGHT iterations of the multinomial model in place.

    As :func:`ight` with ``theta`` of shape (n_features, n_classes), ``y`` the class
    codes in [0, n_classes - 1], the softmax cross-entropy, and the group hard
    thresholding: the ``sparsity`` features (rows) of largest L2 norm are kept
    (ties to the lower index).  Returns (status, iterations completed).
    """
    cdef index_t n = y.shape[0], d = theta.shape[0], K = theta.shape[1], i, p
    cdef index_t n_done = 0
    cdef int status
    cdef bitgen_t* rng = NULL
    if K < 2:
        raise ValueError(f"theta needs n_classes >= 2 columns, got {K}")
    _check_args(data, indices, indptr, d, sparsity, max_iter, noise_std, step,
                bit_generator)
    for p in range(indices.shape[0]):
        if indices[p] < 0 or indices[p] >= n:
            raise ValueError(f"row indices must be in [0, {n - 1}] (the labels' length)")
    for i in range(n):
        if y[i] < 0 or y[i] >= K:
            raise ValueError(f"labels must be in [0, {K - 1}] (the columns of theta)")
    z_np = np.empty((max(n, 1), K), dtype=np.float64)
    u_np = np.empty((max(d, 1), K), dtype=np.float64)
    r_np = np.empty(max(d, 1), dtype=np.float64)
    support_np = np.empty(max(d, 1), dtype=np.int64)
    hist_np = np.empty(RADIX_SIZE, dtype=np.int64)
    cdef double[:, ::1] z = z_np, u = u_np
    cdef double[::1] r = r_np
    cdef index_t[::1] support = support_np, hist = hist_np
    if noise_std > 0.0:
        rng = get_bitgen(bit_generator)
        with bit_generator.lock, nogil:
            status = _run_softmax(data, indices, indptr, y, theta, step, noise_std,
                                  sparsity, max_iter, rng, z, u, r, support, hist, &n_done)
    else:
        with nogil:
            status = _run_softmax(data, indices, indptr, y, theta, step, 0.0, sparsity,
                                  max_iter, NULL, z, u, r, support, hist, &n_done)
    return (STATUS_NONFINITE if status else STATUS_OK), int(n_done)
