# Mini-batch (DP-)SGD kernel for L2-regularised generalised linear models: the
# DP-SGD baseline of paper 003 (Section 2.3, eq. 5; Abadi et al., "Deep Learning
# with Differential Privacy", CCS 2016), split out of _scd_fast unchanged
# (bit-identical results for the same bit generator state).
#
# Problem (paper 003, eq. 1), N examples x_i (rows of a CSR matrix), M features:
#
#     F(theta) = 1/N sum_i l_i(x_i.theta) + lam/2 ||theta||^2 ,
#
# losses coded as in _glm_kernels.pxd (0 squared, 1 logistic, 2 hinge).
#
# Privacy (documented in dptoolkit.linear_model._dpsgd, which calibrates the
# noise): add/remove-one neighbours; each per-example gradient l'(x_i.theta) x_i
# is clipped to L2 norm C, so the sum over a Poisson batch has sensitivity C;
# Gaussian mechanism with noise_std = sigma C on every coordinate of the summed
# gradient; T steps composed by the RDP accountant for the subsampled Gaussian
# with sampling rate q.
#
# Randomness: uniforms from a NumPy bit generator (dptoolkit._random); Gaussian
# noise and batches from _glm_kernels.pxd.  The order in which uniforms are
# consumed is part of the contract with the pure-Python reference in
# tests/test_dpsgd.py.
from libc.math cimport fabs, isfinite
from numpy.random cimport bitgen_t

import numpy as np

from dptoolkit._typedefs cimport index_t
from dptoolkit._random cimport get_bitgen
from dptoolkit._glm_kernels cimport (LOSS_SQUARED, LOSS_LOGISTIC, LOSS_HINGE, NormalState,
                                     _normal, _poisson_batch, _next_chunk, _dloss)

LOSS_CODES = {"squared": LOSS_SQUARED, "logistic": LOSS_LOGISTIC, "hinge": LOSS_HINGE}

# status codes returned by the kernel
STATUS_OK = 0
STATUS_NONFINITE = 1


def dpsgd(const double[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
          const double[::1] y, const double[::1] rownorm, double[::1] theta, *,
          int loss, double lam, double learning_rate, double clip, double sampling_rate,
          index_t batch_size, double denominator, index_t n_steps, double noise_std,
          object bit_generator, const index_t[::1] record_steps, double[:, ::1] trace):
    """Mini-batch (DP-)SGD for F(theta) with per-example gradient clipping.

    Step: g = sum_{i in B} clip_C(l'(x_i.theta) x_i) + N(0, noise_std^2 I_M);
    theta <- theta - learning_rate * (g / denominator + lam * theta), all margins
    taken at the theta of the start of the step.  Batches: Poisson with
    ``sampling_rate > 0`` (``denominator`` should then be the expected batch size,
    a public constant); otherwise permutation chunks of ``batch_size`` and
    ``denominator <= 0`` means "divide by the actual batch size".
    ``clip = inf`` disables clipping.  Returns (status, steps run).
    """
    cdef index_t N = y.shape[0]
    cdef index_t M = theta.shape[0]
    cdef index_t t = 0, k, i, p, m, cnt, pos = N, r = 0, n_rec = record_steps.shape[0]
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef NormalState ns
    cdef double a, s, gn, den, decay
    cdef int bad = 0
    ns.has_spare = 0
    ns.spare = 0.0
    batch_np = np.empty(N, dtype=np.int64)
    perm_np = np.arange(N, dtype=np.int64)
    grad_np = np.zeros(M, dtype=np.float64)
    marg_np = np.zeros(N, dtype=np.float64)
    cdef index_t[::1] batch = batch_np
    cdef index_t[::1] perm = perm_np
    cdef double[::1] grad = grad_np
    cdef double[::1] marg = marg_np
    with bit_generator.lock, nogil:
        for t in range(n_steps):
            if sampling_rate > 0.0:
                cnt = _poisson_batch(rng, N, sampling_rate, &batch[0])
            else:
                cnt = _next_chunk(rng, &perm[0], N, &pos, batch_size, &batch[0])
            # margins at the start of the step
            for k in range(cnt):
                i = batch[k]
                a = 0.0
                for p in range(indptr[i], indptr[i + 1]):
                    a += data[p] * theta[indices[p]]
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
            decay = 1.0 - learning_rate * lam
            for m in range(M):
                if noise_std > 0.0:
                    grad[m] += noise_std * _normal(rng, &ns)
                theta[m] = decay * theta[m] - learning_rate * grad[m] / den
                grad[m] = 0.0
                if not isfinite(theta[m]):
                    bad = 1
            while r < n_rec and record_steps[r] == t:
                for m in range(M):
                    trace[r, m] = theta[m]
                r += 1
            if bad:
                break
    return (STATUS_NONFINITE if bad else STATUS_OK), (t + 1 if n_steps > 0 else 0)
