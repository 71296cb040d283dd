# nogil helpers shared by the generalised-linear-model kernels _scd_fast (DP-SCD,
# Damaskinos et al. (2021)) and _sgd_fast (DP-SGD, Abadi et al. 2016): loss codes and
# derivatives, the Gaussian sampler and the mini-batch samplers.  One definition
# each; the order in which they consume uniforms is part of the contract with the
# pure-Python references in tests/test_scd.py and tests/test_dpsgd.py.
#
# Gaussian noise: Marsaglia's polar method on uniforms of a NumPy bit generator
# (exact).  Poisson batches by geometric skips: gap = floor(log U / log(1 - q)),
# P(gap >= k) = (1 - q)^k, so each example is included independently with
# probability q (what the subsampled-Gaussian accountant assumes).
from libc.math cimport log, log1p, sqrt, floor
from numpy.random cimport bitgen_t

from dptoolkit._typedefs cimport index_t
from dptoolkit._random cimport uniform, uniform_open
from dptoolkit._math cimport sigmoid, log1pexp

# loss codes (the Python dicts LOSS_CODES of both kernels map names to them)
cdef enum:
    LOSS_SQUARED = 0
    LOSS_LOGISTIC = 1
    LOSS_HINGE = 2

# random helpers
cdef struct NormalState:
    bint has_spare
    double spare


cdef inline NormalState _normal_state() noexcept nogil:
    """A fresh polar-method state (no spare normal)."""
    cdef NormalState st
    st.has_spare = 0
    st.spare = 0.0
    return st


cdef inline double _normal(bitgen_t* rng, NormalState* st) noexcept nogil:
    """Standard normal by Marsaglia's polar method (two per accepted pair)."""
    cdef double u, w, s, f
    if st.has_spare:
        st.has_spare = 0
        return st.spare
    while True:
        u = 2.0 * uniform(rng) - 1.0
        w = 2.0 * uniform(rng) - 1.0
        s = u * u + w * w
        if s > 0.0 and s < 1.0:
            break
    f = sqrt(-2.0 * log(s) / s)
    st.spare = w * f
    st.has_spare = 1
    return u * f


cdef inline index_t _poisson_batch(bitgen_t* rng, index_t n, double q,
                                   index_t* out) noexcept nogil:
    """Indices i < n included independently with probability q, increasing."""
    cdef index_t i, cnt = 0
    cdef double lq, g
    if q >= 1.0:
        for i in range(n):
            out[i] = i
        return n
    lq = log1p(-q)
    i = -1
    while True:
        g = floor(log(uniform_open(rng)) / lq)
        if g >= <double> n:
            break
        i += 1 + <index_t> g
        if i >= n:
            break
        out[cnt] = i
        cnt += 1
    return cnt


cdef inline void _shuffle_prefix(bitgen_t* rng, index_t* arr, index_t n,
                                 index_t k) noexcept nogil:
    """Partial Fisher-Yates: arr[:k] becomes a uniform random ordered k-subset."""
    cdef index_t i, j, tmp
    for i in range(k):
        j = i + <index_t> (uniform(rng) * (n - i))
        if j >= n:
            j = n - 1
        tmp = arr[i]
        arr[i] = arr[j]
        arr[j] = tmp


cdef inline index_t _next_chunk(bitgen_t* rng, index_t* perm, index_t n,
                                index_t* pos, index_t size, index_t* out) noexcept nogil:
    """Next chunk of at most ``size`` indices of a permutation reshuffled per pass."""
    cdef index_t k, cnt
    if pos[0] >= n:
        _shuffle_prefix(rng, perm, n, n)
        pos[0] = 0
    cnt = size
    if cnt > n - pos[0]:
        cnt = n - pos[0]
    for k in range(cnt):
        out[k] = perm[pos[0] + k]
    pos[0] += cnt
    return cnt


# Mini-batches ("lots"): Poisson with sampling_rate > 0 (_poisson_batch), else
# consecutive chunks of batch_size of a permutation reshuffled at every pass
# (_next_chunk, non-private).
cdef struct Lots:
    index_t* batch          # the lot drawn (room for n indices)
    index_t* perm           # the permutation the chunks come from
    index_t n
    index_t pos             # next position in perm (n: reshuffle first)
    index_t batch_size
    double sampling_rate


cdef inline Lots _lots(index_t[::1] buf, double sampling_rate, index_t batch_size):
    """Lots over 0 .. n-1 in ``buf`` (2 n int64, owned by the caller: batch, then
    the permutation, set to the identity)."""
    cdef Lots lots
    cdef index_t i
    lots.n = buf.shape[0] // 2
    lots.batch = &buf[0] if lots.n > 0 else NULL
    lots.perm = lots.batch + lots.n if lots.n > 0 else NULL
    for i in range(lots.n):
        lots.perm[i] = i
    lots.pos = lots.n
    lots.batch_size = batch_size
    lots.sampling_rate = sampling_rate
    return lots


cdef inline index_t _next_lot(bitgen_t* rng, Lots* lots) noexcept nogil:
    """Draw the next lot into lots.batch; returns its size."""
    if lots.sampling_rate > 0.0:
        return _poisson_batch(rng, lots.n, lots.sampling_rate, lots.batch)
    return _next_chunk(rng, lots.perm, lots.n, &lots.pos, lots.batch_size, lots.batch)


cdef inline void _record(double[:, ::1] trace, const index_t[::1] record_steps,
                         index_t* r, index_t t, const double* x,
                         index_t size) noexcept nogil:
    """Copy x[:size] into trace[r] for every r from r[0] on with record_steps[r] == t
    (record_steps increasing), advancing r[0]."""
    cdef index_t m
    while r[0] < record_steps.shape[0] and record_steps[r[0]] == t:
        for m in range(size):
            trace[r[0], m] = x[m]
        r[0] += 1


# ---------------------------------------------------------------------------
# losses
# ---------------------------------------------------------------------------
cdef inline double _loss(int loss, double a, double y) noexcept nogil:
    if loss == LOSS_SQUARED:
        return 0.5 * (a - y) * (a - y)
    if loss == LOSS_LOGISTIC:
        return log1pexp(-y * a)
    if 1.0 - y * a > 0.0:
        return 1.0 - y * a
    return 0.0


cdef inline double _dloss(int loss, double a, double y) noexcept nogil:
    """Derivative (a subgradient for the hinge) of l(a) in a."""
    if loss == LOSS_SQUARED:
        return a - y
    if loss == LOSS_LOGISTIC:
        return -y * sigmoid(-y * a)
    if y * a < 1.0:
        return -y
    return 0.0


cdef inline double _d2loss(int loss, double a, double y) noexcept nogil:
    cdef double s
    if loss == LOSS_SQUARED:
        return 1.0
    if loss == LOSS_LOGISTIC:
        s = sigmoid(y * a)
        return s * (1.0 - s)
    return 0.0
