# Stochastic coordinate descent kernels (Damaskinos et al. (2021): Damaskinos, Mendler-Duenner,
# Guerraoui, Papandreou, Parnell, "Differentially Private Stochastic Coordinate
# Descent", AAAI 2021).  The DP-SGD baseline (Abadi et al. 2016) is in _sgd_fast;
# the helpers both use (losses, Gaussian and batch samplers) in _glm_kernels.pxd.
#
# Problem (paper eq. 1), N examples x_i (rows of a CSR matrix), M features:
#
#     F(theta) = 1/N sum_i l_i(x_i.theta) + lam/2 ||theta||^2
#
# losses (``loss`` codes shared with the Python layer):
#     0 squared   l(a) = (a - y)^2 / 2           l*(-a) = a^2/2 - a y
#     1 logistic  l(a) = log(1 + exp(-y a))      l*(-a) = b log b + (1-b) log(1-b), b = y a in [0,1]
#     2 hinge     l(a) = max(0, 1 - y a)         l*(-a) = -b,                       b = y a in [0,1]
#
# Dual (eq. 3): F*(alpha) = 1/N sum_i l*_i(-alpha_i) + ||X^T alpha||^2 / (2 lam N^2),
# shared vector v = X^T alpha in R^M, primal model theta = v / (lam N).
#
# Coordinate update (subproblem eq. 8, with sigma' = L for independent updates,
# sigma' = 1 for sequential ones): minimise over zeta
#     l*_j(-(alpha_j + zeta)) + (x_j.v / (lam N)) zeta + sigma' ||x_j||^2 zeta^2 / (2 lam N)
# squared : closed form; hinge: closed form, then b = y(alpha + zeta) projected on
# [0, 1]; logistic: the exact minimiser (``exact=True``: safeguarded Newton on
# t = logit(b); what the estimators use, private or not) or one Newton step in b
# from the point projected on [box, 1 - box] (``exact=False``: the paper, Section
# 3, and the authors' code; from alpha = 0 it moves b = y alpha from 1e-4 to only
# about 1e-3, so a private fit barely leaves 0 in its first epochs).  Label
# constraints are enforced before the update (Appendix A.2): alpha_j is projected
# onto its feasible interval, the update is computed there, and the stored alpha_j
# is moved by the same zeta that moves v, so that E[v] = X^T E[alpha] (Remark 1).
# Either way zeta_j is a deterministic function of (alpha_j, x_j, y_j, v), scaled
# to |zeta_j| <= C: the sensitivity of Lemma 1 does not depend on the solver.
#
# Scale of the updates (why the clip C must be small, see _scd_defaults._auto_clip): with
# sigma' = L and ||x_j|| = 1 the minimiser is about r lam N / (lam N + L) for a
# dual residual r (|r| <= 1 for the logistic and hinge losses), e.g. 0.03 for
# lam = 1e-4, N = 32561 (a9a), L = 100.  Noise proportional to C = 1 is then 30
# times the updates; theta = v / (lam N) carries per-coordinate noise
# sigma C sqrt(T) / (lam N).
#
# Kernels (each runs all steps in one ``with nogil`` block):
#   dual_scd    Algorithm 1 (independent updates, sigma' = L) and Algorithm 3
#               (sequential updates, sigma' = 1); Poisson or permutation batches.
#   primal_scd  Algorithm 2: L coordinates per step, independent updates on the
#               separable (Jensen) surrogate with sigma' = L; margins v = X theta
#               kept exactly consistent with the released, noisy theta.
#
# Randomness: uniforms from a NumPy bit generator (dptoolkit._random); Gaussian
# noise and Poisson / permutation batches from _glm_kernels.pxd.  The order in
# which uniforms are consumed is part of the contract with the pure-Python
# reference in tests/test_scd.py.
cimport cython
from libc.math cimport exp, log, log1p, sqrt, fabs, floor, isfinite, INFINITY
from libc.string cimport memset
from numpy.random cimport bitgen_t

import numpy as np

from dptoolkit._typedefs cimport float64_t, index_t
from dptoolkit._random cimport get_bitgen, uniform, uniform_open
from dptoolkit._math cimport sigmoid, log1pexp
from dptoolkit.linear_model._glm._glm_kernels cimport (
    LOSS_SQUARED, LOSS_LOGISTIC, LOSS_HINGE, NormalState, Lots, _normal, _normal_state,
    _poisson_batch, _shuffle_prefix, _lots, _next_lot, _record, _loss, _dloss, _d2loss)

LOSS_CODES = {"squared": LOSS_SQUARED, "logistic": LOSS_LOGISTIC, "hinge": LOSS_HINGE}

# numerical guards for the exact logistic dual solve: b stays in [B_TINY, 1 - B_EPS]
cdef double B_TINY = 1e-300
cdef double B_EPS = 1.1102230246251565e-16

# status codes returned by the kernels
STATUS_OK = 0
STATUS_NONFINITE = 1


# ---------------------------------------------------------------------------
# dual coordinate update (subproblem eq. 8)
# ---------------------------------------------------------------------------
cdef inline double _logistic_exact(double b, double c, double kk) noexcept nogil:
    """argmin_z in (0,1) of H(z) + c (z - b) + kk (z - b)^2 / 2, H the binary entropy-like
    conjugate.  Safeguarded Newton on t = logit(z): g(t) = t + c + kk (sigmoid(t) - b),
    g' = 1 + kk s (1 - s) >= 1, root bracketed in [-c - kk (1 - b), -c + kk b]."""
    cdef double lo = -c - kk * (1.0 - b)
    cdef double hi = -c + kk * b
    cdef double t = log(b) - log1p(-b)
    cdef double g, s, tn
    cdef int it
    if t < lo or t > hi:
        t = 0.5 * (lo + hi)
    for it in range(200):
        s = sigmoid(t)
        g = t + c + kk * (s - b)
        if g > 0.0:
            hi = t
        else:
            lo = t
        tn = t - g / (1.0 + kk * s * (1.0 - s))
        if tn <= lo or tn >= hi:
            tn = 0.5 * (lo + hi)
        if fabs(tn - t) <= 1e-13 * (1.0 + fabs(t)):
            t = tn
            break
        t = tn
    return sigmoid(t)


cdef inline double _dual_delta(int loss, double alpha, double y, double xv, double sqnorm,
                               double sigma_p, double lam_n, bint exact,
                               double box) noexcept nogil:
    """Minimiser zeta of subproblem (8) at the label-feasible projection of alpha."""
    cdef double b, d, kk, c, z, g, h
    if loss == LOSS_SQUARED:
        return (y - alpha - xv / lam_n) / (1.0 + sigma_p * sqnorm / lam_n)
    kk = sigma_p * sqnorm / lam_n
    c = y * xv / lam_n
    if loss == LOSS_HINGE:
        b = y * alpha
        if b < 0.0:
            b = 0.0
        elif b > 1.0:
            b = 1.0
        if kk > 0.0:
            z = b + (1.0 - c) / kk
        elif 1.0 - c > 0.0:
            z = 1.0
        else:
            z = 0.0
        if z < 0.0:
            z = 0.0
        elif z > 1.0:
            z = 1.0
        return y * (z - b)
    # logistic
    if exact:
        b = y * alpha
        if b < B_TINY:
            b = B_TINY
        elif b > 1.0 - B_EPS:
            b = 1.0 - B_EPS
        z = _logistic_exact(b, c, kk)
        return y * (z - b)
    b = y * alpha
    if b < box:
        b = box
    elif b > 1.0 - box:
        b = 1.0 - box
    g = log(b) - log1p(-b) + c
    h = 1.0 / (b * (1.0 - b)) + kk
    z = b - g / h
    if z < box:
        z = box
    elif z > 1.0 - box:
        z = 1.0 - box
    return y * (z - b)


def dual_delta(int loss, double alpha, double y, double xv, double sqnorm,
               double sigma_p, double lam_n, bint exact=False, double box=1e-4):
    """Python access to the scalar dual update (for tests against the reference)."""
    return _dual_delta(loss, alpha, y, xv, sqnorm, sigma_p, lam_n, exact, box)


cdef inline double _clip(double z, double c) noexcept nogil:
    """zeta / max(1, |zeta| / C) (paper Algorithm 1, step 8)."""
    if z > c:
        return c
    if z < -c:
        return -c
    return z


# ---------------------------------------------------------------------------
# Algorithm 1 (dual, independent) and Algorithm 3 (sequential)
# ---------------------------------------------------------------------------
cdef int _dual_step(const double[::1] data, const index_t[::1] indices,
                    const index_t[::1] indptr, const double[::1] y,
                    const double[::1] sqnorm, double[::1] alpha, double[::1] v,
                    index_t* batch, index_t cnt, double* zeta, index_t* last,
                    index_t t, int loss, bint sequential, double sigma_p, double lam_n,
                    double clip, bint exact, double box, double noise_v,
                    double noise_alpha, bint alpha_noise_all, bitgen_t* rng,
                    NormalState* ns) noexcept nogil:
    """One mini-batch step on the given (ordered) batch; returns 1 on non-finite state."""
    cdef index_t k, j, p, m, M = v.shape[0]
    cdef double xv, z, lag
    cdef int bad = 0
    for k in range(cnt):
        j = batch[k]
        if alpha_noise_all:
            lag = <double> (t - last[j])
            if lag > 0:
                alpha[j] += noise_alpha * sqrt(lag) * _normal(rng, ns)
            last[j] = t
        xv = 0.0
        for p in range(indptr[j], indptr[j + 1]):
            xv += data[p] * v[indices[p]]
        z = _clip(_dual_delta(loss, alpha[j], y[j], xv, sqnorm[j], sigma_p, lam_n,
                              exact, box), clip)
        if not isfinite(z):
            bad = 1
            z = 0.0
        if sequential:
            alpha[j] += z
            for p in range(indptr[j], indptr[j + 1]):
                v[indices[p]] += z * data[p]
        else:
            zeta[k] = z
    if not sequential:
        for k in range(cnt):
            j = batch[k]
            alpha[j] += zeta[k]
            if noise_alpha > 0.0 and not alpha_noise_all:
                alpha[j] += noise_alpha * _normal(rng, ns)
            for p in range(indptr[j], indptr[j + 1]):
                v[indices[p]] += zeta[k] * data[p]
    if noise_v > 0.0:
        for m in range(M):
            v[m] += noise_v * _normal(rng, ns)
            if not isfinite(v[m]):
                bad = 1
    return bad


def dual_scd(const double[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
             const double[::1] y, const double[::1] sqnorm,
             double[::1] alpha, double[::1] v, *,
             int loss, bint sequential, double sigma_p, double lam_n, double clip,
             double sampling_rate, index_t batch_size, index_t batch_cap, index_t n_steps,
             double noise_v, double noise_alpha, bint alpha_noise_all,
             bint exact, double box, object bit_generator,
             const index_t[::1] record_steps, double[:, ::1] trace):
    """Run ``n_steps`` mini-batch steps of Algorithm 1 (``sequential=False``) or
    Algorithm 3 (``sequential=True``), updating ``alpha`` (N) and ``v`` (M) in place.

    Batches: ``sampling_rate > 0`` -> Poisson (each example independently with
    that probability; a sequential batch is put in uniformly random order and
    truncated to ``batch_cap``); ``sampling_rate <= 0`` -> consecutive chunks of
    ``batch_size`` of a permutation reshuffled at every pass (non-private).
    Noise: ``noise_v`` (std) on every coordinate of v after each step;
    ``noise_alpha`` on alpha of the batch after the update, or, with
    ``alpha_noise_all``, on every coordinate after each step (drawn lazily when
    the coordinate is next read, as one normal with the summed variance).
    ``v`` is copied into ``trace[r]`` after step ``record_steps[r]`` (0-based).

    Returns (status, number of steps run); status 1 means a non-finite value
    appeared and the run stopped.
    """
    cdef index_t N = y.shape[0]
    cdef index_t t = 0, cnt, r = 0
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef NormalState ns = _normal_state()
    cdef int bad = 0
    lots_np = np.empty(2 * N, dtype=np.int64)
    cdef Lots lots = _lots(lots_np, sampling_rate, batch_size)
    cdef double[::1] zeta = np.zeros(N, dtype=np.float64)
    cdef index_t[::1] last = np.zeros(N, dtype=np.int64)
    with bit_generator.lock, nogil:
        for t in range(n_steps):
            cnt = _next_lot(rng, &lots)
            if sequential and sampling_rate > 0.0:
                # a Poisson lot in uniformly random order, at most batch_cap long
                if cnt > batch_cap:
                    _shuffle_prefix(rng, lots.batch, cnt, batch_cap)
                    cnt = batch_cap
                else:
                    _shuffle_prefix(rng, lots.batch, cnt, cnt)
            bad = _dual_step(data, indices, indptr, y, sqnorm, alpha, v, lots.batch, cnt,
                             &zeta[0], &last[0], t, loss, sequential, sigma_p, lam_n,
                             clip, exact, box, noise_v, noise_alpha, alpha_noise_all,
                             rng, &ns)
            _record(trace, record_steps, &r, t, &v[0], v.shape[0])
            if bad:
                break
    return (STATUS_NONFINITE if bad else STATUS_OK), (t + 1 if n_steps > 0 else 0)


def dual_step(const double[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
              const double[::1] y, const double[::1] sqnorm,
              double[::1] alpha, double[::1] v, const index_t[::1] batch, *,
              int loss, bint sequential, double sigma_p, double lam_n, double clip,
              bint exact=False, double box=1e-4, double noise_v=0.0,
              double noise_alpha=0.0, object bit_generator=None):
    """One step of Algorithm 1/3 on an explicit, ordered batch (tests, sensitivity).

    Returns the status (0 ok, 1 non-finite).
    """
    cdef NormalState ns = _normal_state()
    cdef bitgen_t* rng = NULL
    cdef index_t cnt = batch.shape[0]
    if noise_v > 0.0 or noise_alpha > 0.0:
        if bit_generator is None:
            raise ValueError("bit_generator is needed when noise is added")
        rng = get_bitgen(bit_generator)
    buf_np = np.empty(max(cnt, 1), dtype=np.int64)
    buf_np[:cnt] = np.asarray(batch)
    zeta_np = np.zeros(max(cnt, 1), dtype=np.float64)
    last_np = np.zeros(y.shape[0], dtype=np.int64)
    cdef index_t[::1] b = buf_np
    cdef double[::1] zeta = zeta_np
    cdef index_t[::1] last = last_np
    cdef int bad
    with nogil:
        bad = _dual_step(data, indices, indptr, y, sqnorm, alpha, v, &b[0], cnt, &zeta[0],
                         &last[0], 0, loss, sequential, sigma_p, lam_n, clip, exact, box,
                         noise_v, noise_alpha, False, rng, &ns)
    return bad


# ---------------------------------------------------------------------------
# Algorithm 2 (primal)
# ---------------------------------------------------------------------------
cdef inline double _primal_delta(const double[::1] data, const index_t[::1] indices,
                                 index_t start, index_t end, const double[::1] y,
                                 const double[::1] v, double theta_j, int loss,
                                 double sigma_p, double inv_n, double lam) noexcept nogil:
    """Update of coordinate j on the surrogate
    phi(z) = 1/(sigma' N) sum_i l_i(v_i + sigma' z X_ij) + lam/2 (theta_j + z)^2.
    Squared loss: exact minimiser.  Logistic: one Newton step with Armijo
    backtracking (sufficient decrease 0.01, halving, at most 40 halvings)."""
    cdef index_t p, i
    cdef double g = 0.0, h = 0.0, d, beta, x, f1, tb
    cdef int it
    for p in range(start, end):
        i = indices[p]
        x = data[p]
        g += _dloss(loss, v[i], y[i]) * x
        h += _d2loss(loss, v[i], y[i]) * x * x
    g = g * inv_n + lam * theta_j
    h = sigma_p * h * inv_n + lam
    d = -g / h
    if loss == LOSS_SQUARED:
        return d
    # logistic: backtracking on phi(beta d) - phi(0) <= 0.01 beta g d
    beta = 1.0
    for it in range(40):
        f1 = 0.0
        for p in range(start, end):
            i = indices[p]
            f1 += _loss(loss, v[i] + sigma_p * beta * d * data[p], y[i]) - _loss(loss, v[i], y[i])
        tb = theta_j + beta * d
        f1 = f1 * inv_n / sigma_p + 0.5 * lam * (tb * tb - theta_j * theta_j)
        if f1 <= 0.01 * beta * g * d:
            return beta * d
        beta *= 0.5
    return 0.0


def primal_scd(const double[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
               const double[::1] y, double[::1] theta, double[::1] v, *,
               int loss, double sigma_p, double lam, double n_public, double clip,
               index_t batch_size, index_t n_steps, double noise_theta,
               object bit_generator, const index_t[::1] record_steps,
               double[:, ::1] trace):
    """Run ``n_steps`` steps of Algorithm 2 on a CSC matrix (columns = features).

    Each step takes the next ``batch_size`` coordinates of a permutation of the
    M features reshuffled at every pass (data-independent), computes their
    updates independently from the current margins ``v`` (N), clips each to
    ``clip``, adds N(0, noise_theta^2) to each, and applies theta_B += ... and
    v += X[:, B] (update + noise), so v = X theta holds exactly for the released,
    noisy theta.  ``theta`` is copied into ``trace[r]`` after step
    ``record_steps[r]``.  Returns (status, steps run).
    """
    cdef index_t M = theta.shape[0]
    cdef index_t t = 0, k, j, p, cnt, r = 0
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef NormalState ns = _normal_state()
    cdef double inv_n = 1.0 / n_public, z
    cdef int bad = 0
    # lots of features: permutation chunks (sampling_rate 0)
    lots_np = np.empty(2 * M, dtype=np.int64)
    cdef Lots lots = _lots(lots_np, 0.0, batch_size)
    cdef double[::1] zeta = np.zeros(M, dtype=np.float64)
    with bit_generator.lock, nogil:
        for t in range(n_steps):
            cnt = _next_lot(rng, &lots)
            for k in range(cnt):
                j = lots.batch[k]
                z = _clip(_primal_delta(data, indices, indptr[j], indptr[j + 1], y, v,
                                        theta[j], loss, sigma_p, inv_n, lam), clip)
                if not isfinite(z):
                    bad = 1
                    z = 0.0
                zeta[k] = z
            for k in range(cnt):
                j = lots.batch[k]
                z = zeta[k]
                if noise_theta > 0.0:
                    z += noise_theta * _normal(rng, &ns)
                theta[j] += z
                for p in range(indptr[j], indptr[j + 1]):
                    v[indices[p]] += z * data[p]
            _record(trace, record_steps, &r, t, &theta[0], M)
            if bad:
                break
    return (STATUS_NONFINITE if bad else STATUS_OK), (t + 1 if n_steps > 0 else 0)


def primal_delta(const double[::1] data, const index_t[::1] indices, const double[::1] y,
                 const double[::1] v, double theta_j, int loss, double sigma_p,
                 double n_public, double lam):
    """Python access to the scalar primal update of one column (tests)."""
    return _primal_delta(data, indices, 0, data.shape[0], y, v, theta_j, loss, sigma_p,
                         1.0 / n_public, lam)


def poisson_batches(index_t n, double sampling_rate, index_t n_steps, object bit_generator):
    """Batches drawn by the kernels' Poisson sampler (tests of the sampling scheme).

    Returns a list of ``n_steps`` int64 arrays.
    """
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    out_np = np.empty(n, dtype=np.int64)
    cdef index_t[::1] out = out_np
    cdef index_t cnt, t
    res = []
    with bit_generator.lock:
        for t in range(n_steps):
            with nogil:
                cnt = _poisson_batch(rng, n, sampling_rate, &out[0])
            res.append(out_np[:cnt].copy())
    return res


def standard_normals(index_t n, object bit_generator):
    """``n`` draws of the kernels' Gaussian sampler (tests)."""
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    cdef NormalState ns = _normal_state()
    out_np = np.empty(n, dtype=np.float64)
    cdef double[::1] out = out_np
    cdef index_t i
    with bit_generator.lock, nogil:
        for i in range(n):
            out[i] = _normal(rng, &ns)
    return out_np
