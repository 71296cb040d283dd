# Frank-Wolfe kernel for L1-constrained multinomial logistic regression
# (Khanna, Lu and Raff (2023), Appendix A, Algorithm 3).
#
#   minimise  F(W) = sum_i [logsumexp_k (W x_i)_k - (W x_i)_{y_i}]
#   s.t.      ||w_k||_1 <= l1_bound for every class k   (W is K x D, w_k its rows)
#
# The feasible set is the product of K L1 balls, so the linear minimisation of
# Frank-Wolfe splits by class: every step picks one vertex s_k = sigma_k *
# l1_bound * e_{j_k} per class and moves every row, w_k <- (1 - eta) w_k + eta s_k,
# eta_t = 2 / (t + 2).  Sum-form gradient G = X^T Q with Q_ik = softmax(W x_i)_k -
# [y_i = k]; the gap sum_k <G_k, w_k - s_k> is N times the mean-loss gap.
#
# State: W = w_m * Wt with one scalar w_m for all classes (every row is rescaled by
# the same 1 - eta), margins V = X W^T = w_m * Vt maintained exactly: a step adds
# delta_k * X[:, j_k] to column k of Vt (one CSC column per class), so the
# margins cost O(sum_k nnz(X[:, j_k])) instead of O(nnz(X) K).  Q and G are
# recomputed exactly every step (O(N K) exponentials, O(nnz(X) K) for X^T Q): a
# step changes every row's softmax, so there is no sparse update to exploit (this
# is the "standard" solver of Raff, Khanna and Lu (2023) for K classes; no staleness).
#
# Layouts (row-major, C contiguous): Vt and Q are N x K, G and the exponential
# buffer are D x K (contiguous K-vectors per feature), Wt is K x D.
#
# Vertex selection (codes shared with dptoolkit.linear_model._frank_wolfe._fw_fast; one draw per class, all
# with independent randomness):
#   0  argmax |G[j, k]| (non-private)
#   10 exponential mechanism by inverse CDF over coordinates, then the sign with
#      P(descent) = sigmoid(2 c |G[j,k]|), c = coef (the sign is part of the
#      mechanism's output: both signed vertices are weighted)
#   11 Gumbel-max over the 2D signed vertices (same law as 10)
#   13 Laplace report noisy max over the 2D signed vertices, scale b = coef
# Scores are -sigma * G[j, k] (sum units, l1_bound factored out).
cimport cython
from libc.math cimport exp, log1p, fabs, INFINITY
from numpy.random cimport bitgen_t

import numpy as np

from dptoolkit._typedefs cimport float64_t, intp_t, index_t
from dptoolkit._random cimport get_bitgen, uniform, uniform_open, standard_gumbel, laplace
from dptoolkit._math cimport sigmoid, sign_of

cdef enum:
    SEL_ARGMAX = 0
    SEL_EXPONENTIAL = 10
    SEL_NOISY_MAX = 11
    SEL_LAPLACE = 13

SELECTOR_CODES = {
    "argmax": SEL_ARGMAX,
    "exponential": SEL_EXPONENTIAL,
    "noisy_max": SEL_NOISY_MAX,
    "laplace": SEL_LAPLACE,
}


cdef void select_vertices_raw(const double[::1] g, intp_t D, intp_t K, int sel, double c,
                              double[::1] buf, double[::1] bv, double[::1] total,
                              double[::1] target, double[::1] acc, double[::1] sig,
                              index_t[::1] best, bitgen_t* rng) noexcept nogil:
    # One vertex per class (best[k], sig[k]) from the sum-form gradient g (D x K,
    # row-major): the selection of a step of MultinomialFW, over raw arrays so that
    # the distributed fit (select_vertices) runs the same code on a summed gradient.
    # buf (D * K doubles) is needed by the exponential mechanism only; bv, total,
    # target, acc are K-long scratch.
    cdef intp_t j, k
    cdef double a, v, m
    for k in range(K):
        bv[k] = -INFINITY
        best[k] = 0
        sig[k] = 1.0
    if sel == SEL_ARGMAX:
        for j in range(D):
            for k in range(K):
                a = fabs(g[j * K + k])
                if a > bv[k]:
                    bv[k] = a
                    best[k] = j
        for k in range(K):
            sig[k] = -sign_of(g[best[k] * K + k])
        return
    if sel == SEL_NOISY_MAX or sel == SEL_LAPLACE:
        for j in range(D):
            for k in range(K):
                a = g[j * K + k]
                if sel == SEL_NOISY_MAX:
                    a = c * a
                    v = -a + standard_gumbel(rng)      # vertex +e_j
                else:
                    v = -a + laplace(rng, c)
                if v > bv[k]:
                    bv[k] = v
                    best[k] = j
                    sig[k] = 1.0
                if sel == SEL_NOISY_MAX:
                    v = a + standard_gumbel(rng)       # vertex -e_j
                else:
                    v = a + laplace(rng, c)
                if v > bv[k]:
                    bv[k] = v
                    best[k] = j
                    sig[k] = -1.0
        return
    # SEL_EXPONENTIAL: per class, weights exp(c|a| - M_k) + exp(-c|a| - M_k)
    # of both signs, inverse CDF over coordinates, then the sign.
    for k in range(K):
        bv[k] = 0.0               # M_k / c: the largest |G[j, k]|
        total[k] = 0.0
        acc[k] = 0.0
    for j in range(D):
        for k in range(K):
            a = fabs(g[j * K + k])
            if a > bv[k]:
                bv[k] = a
    for j in range(D):
        for k in range(K):
            a = c * fabs(g[j * K + k])
            m = c * bv[k]
            v = exp(a - m) + exp(-a - m)
            buf[j * K + k] = v
            total[k] = total[k] + v
    for k in range(K):
        target[k] = uniform(rng) * total[k]
        best[k] = -1
    for j in range(D):
        for k in range(K):
            if best[k] < 0:
                acc[k] = acc[k] + buf[j * K + k]
                if acc[k] > target[k]:
                    best[k] = j
    for k in range(K):
        if best[k] < 0:
            best[k] = D - 1
        a = g[best[k] * K + k]
        if uniform(rng) < sigmoid(2.0 * c * fabs(a)):
            sig[k] = -sign_of(a)
        else:
            sig[k] = sign_of(a)


@cython.final
cdef class MultinomialFW:
    """Algorithm 3 of Khanna, Lu and Raff (2023) (see the module comment).

    Parameters (positional): CSC data (float64), indices (int64), indptr (int64),
    labels (int64 class indices in [0, n_classes)), n_classes, l1_bound, selector
    code, coef (exponential-mechanism coefficient c, or Laplace scale b), and a numpy
    BitGenerator.
    """
    cdef const float64_t[::1] data
    cdef const index_t[::1] indices
    cdef const index_t[::1] indptr
    cdef const index_t[::1] labels
    cdef intp_t n_samples, n_features, n_classes
    cdef double l1_bound
    cdef int selector
    cdef double mech_coef
    cdef object bit_generator
    cdef double[::1] wt, vt, q, g, buf
    cdef double w_m
    cdef double t_offset   # t0 of the step size 2 / (t + t0 + 2) (set_start)
    # per-class scratch
    cdef double[::1] best_val, total, target, acc, sigma
    cdef index_t[::1] best
    cdef public long t
    cdef public long n_touched

    def __init__(self, data, indices, indptr, labels, intp_t n_classes, double l1_bound,
                 int selector, double coef, bit_generator):
        if selector not in (SEL_ARGMAX, SEL_EXPONENTIAL, SEL_NOISY_MAX, SEL_LAPLACE):
            raise ValueError(f"unknown selector code {selector}")
        self.data = data
        self.indices = indices
        self.indptr = indptr
        self.labels = labels
        self.n_samples = labels.shape[0]
        self.n_features = indptr.shape[0] - 1
        self.n_classes = n_classes
        self.l1_bound = l1_bound
        self.selector = selector
        self.mech_coef = coef
        self.bit_generator = bit_generator
        K = n_classes
        self.wt = np.zeros(K * self.n_features)
        self.vt = np.zeros(self.n_samples * K)
        self.q = np.zeros(self.n_samples * K)
        self.g = np.zeros(self.n_features * K)
        self.buf = np.zeros(self.n_features * K if selector == SEL_EXPONENTIAL else 0)
        self.w_m = 1.0
        self.t_offset = 0.0
        self.best_val = np.zeros(K)
        self.total = np.zeros(K)
        self.target = np.zeros(K)
        self.acc = np.zeros(K)
        self.sigma = np.zeros(K)
        self.best = np.zeros(K, dtype=np.int64)
        self.t = 0
        self.n_touched = 0

    def run(self, long n_steps, double[::1] gaps, double tol=-INFINITY):
        """Run ``n_steps`` iterations, writing the (sum-form) gap of each to
        ``gaps[t]``; stop early when gap <= tol.  Returns the steps done."""
        cdef bitgen_t* rng = get_bitgen(self.bit_generator)
        cdef long done = 0
        if gaps.shape[0] < self.t + n_steps:
            raise ValueError("gaps is too short")
        with self.bit_generator.lock, nogil:
            done = self._run(n_steps, gaps, tol, rng)
        return done

    cdef void gradient(self) noexcept nogil:
        # Q = softmax(w_m Vt) - onehot(y), G = X^T Q
        cdef intp_t i, j, k, K = self.n_classes, n = self.n_samples
        cdef index_t p, r
        cdef double m, s, v, x, w_m = self.w_m
        cdef double[::1] vt = self.vt, q = self.q, g = self.g
        cdef const float64_t[::1] data = self.data
        cdef const index_t[::1] indices = self.indices, indptr = self.indptr
        cdef const index_t[::1] labels = self.labels
        for i in range(n):
            m = -INFINITY
            for k in range(K):
                v = w_m * vt[i * K + k]
                if v > m:
                    m = v
            s = 0.0
            for k in range(K):
                v = exp(w_m * vt[i * K + k] - m)
                q[i * K + k] = v
                s = s + v
            for k in range(K):
                q[i * K + k] = q[i * K + k] / s
            q[i * K + labels[i]] = q[i * K + labels[i]] - 1.0
        for j in range(self.n_features):
            for k in range(K):
                g[j * K + k] = 0.0
            for p in range(indptr[j], indptr[j + 1]):
                r = indices[p]
                x = data[p]
                for k in range(K):
                    g[j * K + k] = g[j * K + k] + x * q[r * K + k]

    cdef void select(self, bitgen_t* rng) noexcept nogil:
        # one vertex per class: best[k], sigma[k]
        select_vertices_raw(self.g, self.n_features, self.n_classes, self.selector,
                            self.mech_coef, self.buf, self.best_val, self.total,
                            self.target, self.acc, self.sigma, self.best, rng)

    cdef long _run(self, long n_steps, double[::1] gaps, double tol,
                   bitgen_t* rng) noexcept nogil:
        cdef intp_t i, j, k, K = self.n_classes, D = self.n_features
        cdef index_t p
        cdef long step
        cdef double eta, gap, gw, dlt
        cdef double[::1] wt = self.wt, vt = self.vt, g = self.g, sig = self.sigma
        cdef index_t[::1] best = self.best
        cdef const float64_t[::1] data = self.data
        cdef const index_t[::1] indices = self.indices, indptr = self.indptr
        for step in range(n_steps):
            self.t += 1
            self.gradient()
            self.select(rng)
            # gap = sum_k <G_k, w_k> - sum_k sigma_k l1_bound G[j_k, k]
            gw = 0.0
            for k in range(K):
                for j in range(D):
                    gw = gw + g[j * K + k] * wt[k * D + j]
            gap = self.w_m * gw
            for k in range(K):
                gap = gap - sig[k] * self.l1_bound * g[best[k] * K + k]
            gaps[self.t - 1] = gap
            eta = 2.0 / (self.t + self.t_offset + 2.0)
            self.w_m = self.w_m * (1.0 - eta)
            if self.w_m < 1e-150:
                self.rescale()
            for k in range(K):
                j = best[k]
                dlt = eta * sig[k] * self.l1_bound / self.w_m
                wt[k * D + j] = wt[k * D + j] + dlt
                for p in range(indptr[j], indptr[j + 1]):
                    vt[indices[p] * K + k] = vt[indices[p] * K + k] + dlt * data[p]
                self.n_touched += indptr[j + 1] - indptr[j]
            if gap <= tol:
                return step + 1
        return n_steps

    cdef void rescale(self) noexcept nogil:
        cdef intp_t i
        for i in range(self.wt.shape[0]):
            self.wt[i] = self.wt[i] * self.w_m
        for i in range(self.vt.shape[0]):
            self.vt[i] = self.vt[i] * self.w_m
        self.w_m = 1.0

    def set_start(self, w0, double t_offset):
        """Start from ``w0`` (shape (n_classes, n_features), every row in the L1
        ball) with the step size ``2 / (t + t_offset + 2)``; before the first step.

        Sets wt = w0 (w_m = 1) and the scores vt = X w0^T (CSC, each column's
        non-zeros in order)."""
        if self.t:
            raise ValueError("set_start must precede the first step")
        K, D = self.n_classes, self.n_features
        w = np.ascontiguousarray(w0, dtype=np.float64)
        if w.shape != (K, D) or not np.all(np.isfinite(w)):
            raise ValueError(f"w0 must be finite, of shape ({K}, {D})")
        if np.any(np.abs(w).sum(axis=1) > self.l1_bound * (1.0 + 1e-12)):
            raise ValueError("every row of w0 must lie in the L1 ball of radius l1_bound")
        if not (t_offset >= 0.0 and t_offset < INFINITY):
            raise ValueError(f"t_offset must be finite and >= 0, got {t_offset}")
        cdef const double[::1] wf = w.ravel()
        cdef intp_t j, k
        cdef index_t p
        for k in range(K):
            for j in range(D):
                self.wt[k * D + j] = wf[k * D + j]
        self.vt[:] = 0.0
        for j in range(D):
            for k in range(K):
                if wf[k * D + j] != 0.0:
                    for p in range(self.indptr[j], self.indptr[j + 1]):
                        self.vt[self.indices[p] * K + k] += self.data[p] * wf[k * D + j]
        self.w_m = 1.0
        self.t_offset = t_offset

    def coef(self):
        """The weights W, shape (n_classes, n_features)."""
        return (np.asarray(self.wt) * self.w_m).reshape(self.n_classes, self.n_features)

    def gradient_sum(self):
        """G = X^T (softmax(X W^T) - Y) at the current W, shape (n_classes,
        n_features) (for tests)."""
        with nogil:
            self.gradient()
        return np.asarray(self.g).reshape(self.n_features, self.n_classes).T.copy()


def select_vertices(gradient, int selector, double coef, bit_generator):
    """One vertex per class from a sum-form gradient: the selection of one step of
    :class:`MultinomialFW` (same code, same draws from ``bit_generator``).

    The distributed fit sums the blocks' gradients on the client and selects
    with this, so that with the same generator it draws what the in-memory
    kernel draws at the same gradient.

    Parameters
    ----------
    gradient : ndarray of shape (n_features, n_classes), float64
        :math:`G = X^\\top(\\mathrm{softmax}(XW^\\top) - Y)` (transposed: one
        contiguous K-vector per feature, the kernel's layout).
    selector : int
        A code of ``SELECTOR_CODES``.
    coef : float
        Exponential-mechanism coefficient c, or Laplace scale b (unused by argmax).
    bit_generator : numpy.random.BitGenerator

    Returns
    -------
    best : ndarray of shape (n_classes,), int64
        The chosen coordinate of each class.
    sigma : ndarray of shape (n_classes,), float64
        The sign of each class's vertex :math:`\\sigma_k \\lambda e_{j_k}`.
    """
    if selector not in (SEL_ARGMAX, SEL_EXPONENTIAL, SEL_NOISY_MAX, SEL_LAPLACE):
        raise ValueError(f"unknown selector code {selector}")
    g2 = np.ascontiguousarray(gradient, dtype=np.float64)
    if g2.ndim != 2 or g2.shape[0] < 1 or g2.shape[1] < 1:
        raise ValueError(f"gradient must be a non-empty 2-D array, got shape {g2.shape}")
    cdef intp_t D = g2.shape[0], K = g2.shape[1]
    cdef const double[::1] g = g2.reshape(-1)
    cdef double[::1] buf = np.zeros(D * K if selector == SEL_EXPONENTIAL else 0)
    cdef double[::1] bv = np.zeros(K), total = np.zeros(K), target = np.zeros(K)
    cdef double[::1] acc = np.zeros(K)
    sigma = np.ones(K)
    best = np.zeros(K, dtype=np.int64)
    cdef double[::1] sig = sigma
    cdef index_t[::1] b = best
    cdef bitgen_t* rng = get_bitgen(bit_generator)
    with bit_generator.lock, nogil:
        select_vertices_raw(g, D, K, selector, coef, buf, bv, total, target, acc, sig, b,
                            rng)
    return best, sigma
