#
# Sparse proximal stochastic inner loops of DSAL (Bao, Wu, Xian, Huang,
# IJCAI 2022, Section 2.1, eq. 4-6) and of the baselines ProxSVRG / ProxASAGA, without the GIL.
#
#   minimise  P(w) = (1/n) sum_i f_i(x_i . w) + alpha * Omega(w)
#
#   f_i(z) = (z - y_i)^2 / 2                (loss code 0, squared)
#   f_i(z) = log(1 + exp(-y_i z)), y_i=+-1  (loss code 1, logistic)
#   Omega(w) = sum_j |w_j|                  (penalty code 0, l1)
#   Omega(w) = sum_B ||w_B||_2              (penalty code 1, group l1)
#
# The matrix handed to the kernels is the CSR matrix of the *active* features
# only, in a compact numbering where every block B is the contiguous range
# block_ptr[B] .. block_ptr[B+1]-1 (block_of[j] maps a compact feature to its
# block; for the l1 penalty block_of[j] == j).  One stochastic step on row i
# therefore reads and writes only the non-zeros of x_i restricted to the active
# set (l1), or the active blocks that x_i intersects (group l1):
#
#   v_B   = (f_i'(x_i.w_hat) - mem_i) x_{i,B} + d_B gbar_B        (eq. 5)
#   w_B  <- prox_{step * alpha * d_B * Omega_B}(w_hat_B - step v_B)  (eq. 6)
#
# for every block B of the support of x_i (Psi_i in the paper), where
# d_B = 1 / P(the sampled row meets B) -- n / n_B under uniform sampling, n_B
# the number of rows whose support meets B -- so that
# E[D_i gbar] = gbar and E[phi_i] = Omega (Leblond et al. 2017; Pedregosa
# et al. 2017).  Blocks that x_i does not meet are not touched at all: no lazy
# catch-up is needed because the reweighted estimator is already unbiased.
#
# ``method`` codes:
#   0  plain sparse proximal SGD (Sha-DSAL-Naive, Alg. 1): v = f_i'(x_i.w) x_i,
#      no correction term (mem and gbar unused);
#   1  SVRG (Sha-DSAL, Alg. 2, eq. 4-5): mem_i = f_i'(x_i.w0) at the snapshot
#      w0 and gbar = grad F(w0) restricted to the active set, both read-only;
#   2  SAGA (ProxASAGA, Pedregosa et al. 2017, Alg. 1): mem_i is the stored
#      derivative of the last visit of row i, gbar their running average
#      (1/n) sum_i mem_i x_i; both are updated at each step (mem_i by an atomic
#      exchange when threaded, so the invariant on gbar survives collisions).
#
# Threads (Alg. 2): ``n_jobs`` OpenMP threads inside one nogil region, each with
# its own NumPy bit generator, read the shared iterate without locks
# (inconsistent reads, Hogwild!) and add their increment
# delta = prox(...) - w_hat coordinate-wise atomically (compare-and-swap on the
# 8-byte double; Property 3 of the paper).  With one thread the new value is
# stored directly, so a single-threaded run is reproducible bit for bit and is
# checked against the pure-Python reference in tests/test_dsal.py.
#
# Sampling: i = floor(U * n) with U uniform on [0, 1) (53 random bits) from the
# thread's bit generator; the bias from the 53-bit grid is below n * 2^-53.
cimport cython
from cython.parallel cimport prange
from libc.math cimport exp, sqrt, fabs, log, log1p, isfinite, INFINITY
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memcpy
from numpy.random cimport bitgen_t

import time

import numpy as np

from dptoolkit._typedefs cimport float64_t, index_t
from dptoolkit._random cimport get_bitgen, uniform

cdef extern from *:
    """
    /* Relaxed atomic load and compare-and-swap add on a double (GCC/Clang
       generic __atomic builtins; lock-free for 8-byte types on x86-64 and
       aarch64).  Other compilers fall back to plain, racy accesses, which is
       the Hogwild! model without Property 3. */
    static inline double dpt_load_double(double *p) {
    #if defined(__GNUC__) || defined(__clang__)
        double v;
        __atomic_load(p, &v, __ATOMIC_RELAXED);
        return v;
    #else
        return *(volatile double *)p;
    #endif
    }
    static inline void dpt_atomic_add_double(double *p, double inc) {
    #if defined(__GNUC__) || defined(__clang__)
        double expected, desired;
        __atomic_load(p, &expected, __ATOMIC_RELAXED);
        do {
            desired = expected + inc;
        } while (!__atomic_compare_exchange(p, &expected, &desired, 1,
                                            __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    #else
        *(volatile double *)p += inc;
    #endif
    }
    static inline double dpt_exchange_double(double *p, double val) {
    #if defined(__GNUC__) || defined(__clang__)
        double old;
        __atomic_exchange(p, &val, &old, __ATOMIC_RELAXED);
        return old;
    #else
        double old = *(volatile double *)p;
        *(volatile double *)p = val;
        return old;
    #endif
    }
    """
    double dpt_load_double(double *p) noexcept nogil
    double dpt_exchange_double(double *p, double val) noexcept nogil
    void dpt_atomic_add_double(double *p, double inc) noexcept nogil

cdef enum:
    LOSS_SQUARED = 0
    LOSS_LOGISTIC = 1
    PENALTY_L1 = 0
    PENALTY_GROUP_L1 = 1
    METHOD_SGD = 0
    METHOD_SVRG = 1
    METHOD_SAGA = 2

LOSS_CODES = {"squared": LOSS_SQUARED, "logistic": LOSS_LOGISTIC}
PENALTY_CODES = {"l1": PENALTY_L1, "group_l1": PENALTY_GROUP_L1}
METHOD_CODES = {"sgd": METHOD_SGD, "svrg": METHOD_SVRG, "saga": METHOD_SAGA}

cdef enum:
    STATUS_OK = 0
    STATUS_NOMEM = -1


cdef inline double _fprime(double z, double yi, int loss) noexcept nogil:
    """Derivative of f_i at the margin z."""
    if loss == LOSS_SQUARED:
        return z - yi
    # logistic, yi in {-1, +1}: d/dz log(1 + exp(-yi z)) = -yi / (1 + exp(yi z))
    return -yi / (1.0 + exp(yi * z))


cdef inline double _soft(double u, double thr) noexcept nogil:
    # NaN fails the first test and propagates: a diverging inner loop must
    # reach the objective (which the step control rejects), not be reset to 0
    if fabs(u) <= thr:
        return 0.0
    if u > 0.0:
        return u - thr
    return u + thr


cdef inline void _store(double* p, double old, double new, bint atomic) noexcept nogil:
    # Most coordinates of a row stay where they are (zero before and after the
    # soft threshold once the support is found): writing them anyway costs a
    # locked compare-and-swap and takes the cache line away from the other
    # threads, which read it.
    if new == old:
        return
    if atomic:
        dpt_atomic_add_double(p, new - old)
    else:
        p[0] = new


cdef int _run_thread(
    const float64_t* data, const index_t* indices, const index_t* indptr,
    const float64_t* y, float64_t* w, float64_t* mem, float64_t* gbar,
    const float64_t* dblock, const index_t* block_of, const index_t* block_ptr,
    index_t n, int loss, int penalty, int method, double step, double alpha,
    index_t n_iter, bitgen_t* rng, bint atomic, index_t max_row_nnz,
    index_t max_block, const float64_t* row_weight, const float64_t* alias_prob,
    const index_t* alias_idx,
) noexcept nogil:
    """``n_iter`` stochastic proximal steps of one thread; returns a status."""
    cdef float64_t* xr = <float64_t*> malloc((max_row_nnz + 1) * sizeof(float64_t))
    cdef float64_t* ub = <float64_t*> malloc((max_block + 1) * sizeof(float64_t))
    cdef float64_t* xb = <float64_t*> malloc((max_block + 1) * sizeof(float64_t))
    cdef index_t it, i, k, start, end, j, b, bs, m, jj
    cdef double zi, gi, diff, de, v, u, thr, new, db, nrm, scale, draw
    cdef double inv_n = 1.0 / n
    if xr == NULL or ub == NULL or xb == NULL:
        free(xr)
        free(ub)
        free(xb)
        return STATUS_NOMEM
    for it in range(n_iter):
        draw = uniform(rng) * n
        i = <index_t> draw
        if i >= n:
            i = n - 1
        if alias_prob != NULL and draw - i >= alias_prob[i]:
            i = alias_idx[i]  # Vose alias table: row i with probability p_i
        start = indptr[i]
        end = indptr[i + 1]
        # inconsistent read of w_hat on the support of x_i, and the margin
        zi = 0.0
        for k in range(start, end):
            if atomic:
                xr[k - start] = dpt_load_double(&w[indices[k]])
            else:
                xr[k - start] = w[indices[k]]
            zi = zi + data[k] * xr[k - start]
        gi = _fprime(zi, y[i], loss)
        if method == METHOD_SGD:
            diff = gi
        elif method == METHOD_SVRG:
            diff = gi - mem[i]
        elif atomic:
            # SAGA: swap the stored derivative atomically, so that two threads
            # visiting row i at once cannot both retire the same old value and
            # gbar stays (1/n) sum_i mem_i x_i
            diff = gi - dpt_exchange_double(&mem[i], gi)
        else:
            diff = gi - mem[i]
            mem[i] = gi
        # the data term of the estimate is weighted by 1 / (n p_i) under
        # importance sampling (the SAGA average below keeps the plain diff)
        de = diff if row_weight == NULL else diff * row_weight[i]
        if penalty == PENALTY_L1:
            for k in range(start, end):
                j = indices[k]
                v = de * data[k]
                if method != METHOD_SGD:
                    v = v + dblock[j] * gbar[j]
                u = xr[k - start] - step * v
                thr = step * alpha * dblock[j]
                new = _soft(u, thr)
                _store(&w[j], xr[k - start], new, atomic)
                if method == METHOD_SAGA:
                    if atomic:
                        dpt_atomic_add_double(&gbar[j], diff * data[k] * inv_n)
                    else:
                        gbar[j] = gbar[j] + diff * data[k] * inv_n
        else:
            k = start
            while k < end:
                b = block_of[indices[k]]
                bs = block_ptr[b]
                m = block_ptr[b + 1] - bs
                db = dblock[b]
                for jj in range(m):
                    if atomic:
                        xb[jj] = dpt_load_double(&w[bs + jj])
                    else:
                        xb[jj] = w[bs + jj]
                    ub[jj] = xb[jj]
                    if method != METHOD_SGD:
                        ub[jj] = ub[jj] - step * db * gbar[bs + jj]
                while k < end:
                    j = indices[k]
                    if block_of[j] != b:
                        break
                    ub[j - bs] = ub[j - bs] - step * de * data[k]
                    if method == METHOD_SAGA:
                        if atomic:
                            dpt_atomic_add_double(&gbar[j], diff * data[k] * inv_n)
                        else:
                            gbar[j] = gbar[j] + diff * data[k] * inv_n
                    k = k + 1
                nrm = 0.0
                for jj in range(m):
                    nrm = nrm + ub[jj] * ub[jj]
                nrm = sqrt(nrm)
                thr = step * alpha * db
                if nrm <= thr:
                    scale = 0.0
                else:
                    scale = 1.0 - thr / nrm
                for jj in range(m):
                    _store(&w[bs + jj], xb[jj], scale * ub[jj], atomic)
    free(xr)
    free(ub)
    free(xb)
    return STATUS_OK


cdef _check_arrays_and_codes(index_t n_data, index_t n_indices, index_t nnz, int loss,
                             int penalty, bint one_block_each, str what):
    """The checks every kernel makes on its compressed arrays and codes."""
    if n_indices < nnz or n_data < nnz:
        raise ValueError("indices/data shorter than indptr[-1]")
    if loss not in (LOSS_SQUARED, LOSS_LOGISTIC):
        raise ValueError(f"unknown loss code {loss}")
    if penalty not in (PENALTY_L1, PENALTY_GROUP_L1):
        raise ValueError(f"unknown penalty code {penalty}")
    if penalty == PENALTY_L1 and not one_block_each:
        raise ValueError(f"the l1 penalty needs one block per {what}")


def sparse_prox_epoch(
    const float64_t[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
    const float64_t[::1] y, float64_t[::1] w, float64_t[::1] mem, float64_t[::1] gbar,
    const float64_t[::1] dblock, const index_t[::1] block_of, const index_t[::1] block_ptr,
    int loss, int penalty, int method, double step, double alpha, index_t n_iter,
    list generators, const float64_t[::1] row_weight=None,
    const float64_t[::1] alias_prob=None, const index_t[::1] alias_idx=None,
):
    """Run ``n_iter`` sparse proximal stochastic steps, split over threads.

    Private kernel: the Python layer builds consistent inputs (canonical CSR
    with sorted int64 compact indices, blocks contiguous).  One thread per
    entry of ``generators``; thread ``t`` performs ``n_iter // n_jobs`` steps
    (plus one for ``t < n_iter % n_jobs``) with its own bit generator.

    Parameters
    ----------
    data, indices, indptr : CSR arrays of the active sub-matrix, shape (n, p_s)
    y : ndarray of shape (n,)
        Targets (squared loss) or labels in {-1, +1} (logistic loss).
    w : ndarray of shape (p_s,)
        Shared iterate, updated in place.
    mem : ndarray of shape (n,)
        SVRG: f_i'(x_i . w0); SAGA: stored derivatives (updated); SGD: unused.
    gbar : ndarray of shape (p_s,)
        SVRG: full gradient at w0; SAGA: running average (updated); SGD: unused.
    dblock : ndarray of shape (q_s,)
        Block weights d_B = 1 / P(the sampled row meets B): n / n_B under
        uniform sampling (n_B rows meet B); 0 for blocks no row meets.
    block_of : ndarray of shape (p_s,), int64
    block_ptr : ndarray of shape (q_s + 1,), int64
    loss, penalty, method : int
        Codes from ``LOSS_CODES``, ``PENALTY_CODES``, ``METHOD_CODES``.
    step, alpha : float
        Step size and regularisation strength (> 0).
    n_iter : int
        Total number of stochastic steps (all threads together).
    generators : list of numpy.random.Generator
        One per thread; their locks are held for the duration of the call.
    row_weight, alias_prob, alias_idx : ndarray of shape (n,) or None
        Importance sampling: rows are drawn from the Vose alias table
        (``alias_prob``, ``alias_idx`` from :func:`build_alias`) of the
        probabilities p_i, and the data term of row i is weighted by
        ``row_weight[i] = 1 / (n p_i)``; ``dblock`` must then hold
        1 / P(row meets B).  All three None: uniform sampling.

    Returns
    -------
    status : int
        0 on success.

    Raises
    ------
    ValueError
        Inconsistent shapes or codes.
    MemoryError
        If a thread could not allocate its work buffers.
    """
    cdef index_t n = indptr.shape[0] - 1
    cdef index_t p = w.shape[0]
    cdef index_t q = dblock.shape[0]
    cdef int n_jobs = len(generators)
    cdef int t, status = STATUS_OK
    cdef index_t max_row_nnz = 0, max_block = 1, r
    cdef bint atomic
    if n < 1:
        raise ValueError("the matrix must have at least one row")
    if y.shape[0] != n or mem.shape[0] != n:
        raise ValueError("y and mem must have one entry per row")
    if gbar.shape[0] != p or block_of.shape[0] != p:
        raise ValueError("gbar and block_of must have one entry per active feature")
    if block_ptr.shape[0] != q + 1:
        raise ValueError("block_ptr must have len(dblock) + 1 entries")
    _check_arrays_and_codes(data.shape[0], indices.shape[0], indptr[n], loss, penalty,
                            q == p, "feature")
    if method not in (METHOD_SGD, METHOD_SVRG, METHOD_SAGA):
        raise ValueError(f"unknown method code {method}")
    if n_jobs < 1:
        raise ValueError("generators must hold at least one numpy Generator")
    if n_iter < 0:
        raise ValueError("n_iter must be >= 0")
    cdef bint weighted = row_weight is not None
    if weighted != (alias_prob is not None) or weighted != (alias_idx is not None):
        raise ValueError("row_weight, alias_prob and alias_idx go together")
    if weighted and (row_weight.shape[0] != n or alias_prob.shape[0] != n
                     or alias_idx.shape[0] != n):
        raise ValueError("row_weight, alias_prob and alias_idx must have one entry per row")
    cdef const float64_t* rw_ptr = NULL
    cdef const float64_t* ap_ptr = NULL
    cdef const index_t* ai_ptr = NULL
    if weighted:
        rw_ptr = &row_weight[0]
        ap_ptr = &alias_prob[0]
        ai_ptr = &alias_idx[0]
    if p == 0 or n_iter == 0 or indptr[n] == 0:
        return STATUS_OK
    for r in range(n):
        if indptr[r + 1] - indptr[r] > max_row_nnz:
            max_row_nnz = indptr[r + 1] - indptr[r]
    for r in range(q):
        if block_ptr[r + 1] - block_ptr[r] > max_block:
            max_block = block_ptr[r + 1] - block_ptr[r]
    atomic = n_jobs > 1

    cdef bitgen_t** rngs = <bitgen_t**> malloc(n_jobs * sizeof(bitgen_t*))
    cdef index_t* counts = <index_t*> malloc(n_jobs * sizeof(index_t))
    cdef int* statuses = <int*> malloc(n_jobs * sizeof(int))
    if rngs == NULL or counts == NULL or statuses == NULL:
        free(rngs)
        free(counts)
        free(statuses)
        raise MemoryError()
    bit_generators = [g.bit_generator for g in generators]
    locks = [bg.lock for bg in bit_generators]
    try:
        for t in range(n_jobs):
            rngs[t] = get_bitgen(bit_generators[t])
            counts[t] = n_iter // n_jobs + (1 if t < n_iter % n_jobs else 0)
            statuses[t] = STATUS_OK
        for lock in locks:
            lock.acquire()
        try:
            with nogil:
                for t in prange(n_jobs, schedule="static", chunksize=1, num_threads=n_jobs):
                    statuses[t] = _run_thread(
                        &data[0], &indices[0], &indptr[0], &y[0], &w[0], &mem[0], &gbar[0],
                        &dblock[0], &block_of[0], &block_ptr[0], n, loss, penalty, method,
                        step, alpha, counts[t], rngs[t], atomic, max_row_nnz, max_block,
                        rw_ptr, ap_ptr, ai_ptr)
        finally:
            for lock in locks:
                lock.release()
        for t in range(n_jobs):
            if statuses[t] != STATUS_OK:
                status = statuses[t]
    finally:
        free(rngs)
        free(counts)
        free(statuses)
    if status == STATUS_NOMEM:
        raise MemoryError("sparse_prox_epoch: a thread could not allocate its buffers")
    return status


def compressed_matvec(const float64_t[::1] data, const index_t[::1] indices,
                      const index_t[::1] indptr, const float64_t[::1] v, float64_t[::1] out,
                      double scale=1.0, int n_jobs=1):
    """out[r] = scale * sum_k data[k] v[indices[k]] over indptr[r] <= k < indptr[r+1].

    For a CSR matrix A this is ``scale * A @ v``; for a CSC matrix it is
    ``scale * A.T @ v``.  Rows (CSR) or columns (CSC) are split over ``n_jobs``
    threads.
    """
    cdef index_t m = indptr.shape[0] - 1
    cdef index_t r, k
    cdef double acc
    if out.shape[0] != m:
        raise ValueError(f"out must have {m} entries (len(indptr) - 1), got {out.shape[0]}")
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be >= 1, got {n_jobs}")
    if m == 0:
        return
    if n_jobs == 1:
        # no parallel region: entering one costs more than a small product
        with nogil:
            for r in range(m):
                acc = 0.0
                for k in range(indptr[r], indptr[r + 1]):
                    acc = acc + data[k] * v[indices[k]]
                out[r] = scale * acc
        return
    with nogil:
        for r in prange(m, schedule="static", num_threads=n_jobs):
            acc = 0.0
            for k in range(indptr[r], indptr[r + 1]):
                acc = acc + data[k] * v[indices[k]]
            out[r] = scale * acc


def compressed_scatter(const float64_t[::1] data, const index_t[::1] indices,
                       const index_t[::1] indptr, const float64_t[::1] v, float64_t[::1] out):
    """out[indices[k]] += v[c] * data[k] over every segment c with v[c] != 0.

    For a CSC matrix A this adds ``A @ v`` to ``out`` at the cost of the
    non-zeros of the columns where ``v`` is non-zero (``out`` has one entry per
    row).  For a CSR matrix it adds ``A.T @ v``.
    """
    cdef index_t m = indptr.shape[0] - 1
    cdef index_t c, k, r = out.shape[0]
    cdef double vc
    if v.shape[0] != m:
        raise ValueError(f"v must have {m} entries (len(indptr) - 1), got {v.shape[0]}")
    with nogil:
        for c in range(m):
            vc = v[c]
            if vc == 0.0:
                continue
            for k in range(indptr[c], indptr[c + 1]):
                if indices[k] < 0 or indices[k] >= r:
                    with gil:
                        raise ValueError(f"index {indices[k]} outside out (length {r})")
                out[indices[k]] = out[indices[k]] + vc * data[k]


def compressed_sq_norms(const float64_t[::1] data, const index_t[::1] indptr,
                        float64_t[::1] out):
    """out[r] = sum_k data[k]^2 over indptr[r] <= k < indptr[r+1].

    Squared row norms of a CSR matrix, or squared column norms of a CSC matrix.
    """
    cdef index_t m = indptr.shape[0] - 1
    cdef index_t r, k
    cdef double acc
    if out.shape[0] != m:
        raise ValueError(f"out must have {m} entries (len(indptr) - 1), got {out.shape[0]}")
    with nogil:
        for r in range(m):
            acc = 0.0
            for k in range(indptr[r], indptr[r + 1]):
                acc = acc + data[k] * data[k]
            out[r] = acc


def build_alias(const float64_t[::1] p):
    """Vose's alias table of the probabilities ``p`` (non-negative, sum 1).

    Returns ``(alias_prob, alias_idx)``: with U uniform on [0, 1), i = floor(nU)
    and f = nU - i, the row drawn is i if f < alias_prob[i], else alias_idx[i];
    row i is then drawn with probability p[i] (up to rounding in the table).
    """
    cdef index_t n = p.shape[0]
    cdef index_t i, l, g, ns = 0, nl = 0
    prob_arr = np.ones(n)
    alias_arr = np.arange(n, dtype=np.int64)
    scaled_arr = np.multiply(p, n)
    small_arr = np.empty(n, dtype=np.int64)
    large_arr = np.empty(n, dtype=np.int64)
    cdef float64_t[::1] prob = prob_arr
    cdef index_t[::1] alias = alias_arr
    cdef float64_t[::1] scaled = scaled_arr
    cdef index_t[::1] small = small_arr
    cdef index_t[::1] large = large_arr
    with nogil:
        for i in range(n):
            if scaled[i] < 1.0:
                small[ns] = i
                ns = ns + 1
            else:
                large[nl] = i
                nl = nl + 1
        while ns > 0 and nl > 0:
            ns = ns - 1
            l = small[ns]
            nl = nl - 1
            g = large[nl]
            prob[l] = scaled[l]
            alias[l] = g
            scaled[g] = (scaled[g] + scaled[l]) - 1.0
            if scaled[g] < 1.0:
                small[ns] = g
                ns = ns + 1
            else:
                large[nl] = g
                nl = nl + 1
        # what is left has scaled == 1 up to rounding
        while nl > 0:
            nl = nl - 1
            prob[large[nl]] = 1.0
        while ns > 0:
            ns = ns - 1
            prob[small[ns]] = 1.0
    return prob_arr, alias_arr


# ---------------------------------------------------------------------------
# Cyclic proximal coordinate descent on a working set (the sub-problems of the
# working-set solver, dptoolkit.dsal.solve_working_set).
#
#   minimise  (1/n) sum_i f_i(z_i) + alpha * sum_B Omega_B(w_B),   z = X_W w
#
# over the columns of a working set W, given as a compact CSC matrix (columns
# 0 .. m-1, rows in the original numbering 0 .. n-1).  One coordinate (l1) or
# block (group l1) step is the proximal gradient step with the block's own
# Lipschitz constant L_B = ||X_B||_2^2 / (gamma n) (Tseng and Yun 2009;
# Massias, Gramfort and Salmon, ICML 2018, Algorithm 1 uses it for the squared
# loss, where it is exact coordinate minimisation, Friedman et al. 2010):
#
#   g_B   = X_B^T f'(z) / n
#   w_B  <- prox_{(alpha / L_B) Omega_B}(w_B - g_B / L_B)
#   z    <- z + X_B (w_B^new - w_B^old)        (only where the column has entries)
#
# A step costs the non-zeros of the block's columns; the margins z of all n
# rows are kept up to date in place, so the caller can evaluate the loss and
# the residuals between calls without a pass over X.
# ---------------------------------------------------------------------------

cdef inline double _cd_set(const float64_t* data, const index_t* indices,
                           const index_t* indptr, float64_t* w, float64_t* z, index_t l,
                           index_t j, double new) noexcept nogil:
    """w[l] <- new and z <- z + (new - old) x_j (column j); returns |new - old|."""
    cdef double diff = new - w[l]
    cdef index_t k
    if diff == 0.0:
        return 0.0
    w[l] = new
    for k in range(indptr[j], indptr[j + 1]):
        z[indices[k]] = z[indices[k]] + diff * data[k]
    return fabs(diff)


cdef double _cd_pass(const float64_t* data, const index_t* indices, const index_t* indptr,
                     const float64_t* y, float64_t* w, float64_t* z,
                     const float64_t* lips, const index_t* bptr, const index_t* cols,
                     const index_t* visit, index_t n_visit, int loss, int penalty,
                     double alpha, double inv_n, float64_t* ub) noexcept nogil:
    """One cyclic pass of proximal coordinate (l1) or block (group l1) descent.

    Coefficient ``l`` of ``w`` is column ``cols[l]`` of the CSC arrays (``cols``
    NULL: column ``l``); block ``t`` is coefficients ``bptr[t] .. bptr[t+1]-1``
    with constant ``lips[t]`` (a block with ``lips[t] <= 0`` is skipped).  The
    pass visits the blocks ``visit[:n_visit]`` (NULL: ``0 .. n_visit-1``).
    ``ub`` holds the largest block.  Returns the largest coefficient change."""
    cdef index_t s, t, b, l, j, k
    cdef double g, L, nrm, scale, diff, max_change = 0.0
    for s in range(n_visit):
        b = s if visit == NULL else visit[s]
        L = lips[b]
        if L <= 0.0:
            continue
        if penalty == PENALTY_L1:
            l = bptr[b]
            j = l if cols == NULL else cols[l]
            g = 0.0
            if loss == LOSS_SQUARED:
                for k in range(indptr[j], indptr[j + 1]):
                    g = g + data[k] * (z[indices[k]] - y[indices[k]])
            else:
                for k in range(indptr[j], indptr[j + 1]):
                    g = g + data[k] * _fprime(z[indices[k]], y[indices[k]], loss)
            diff = _cd_set(data, indices, indptr, w, z, l, j,
                           _soft(w[l] - g * inv_n / L, alpha / L))
            if diff > max_change:
                max_change = diff
            continue
        nrm = 0.0
        for l in range(bptr[b], bptr[b + 1]):
            j = l if cols == NULL else cols[l]
            g = 0.0
            for k in range(indptr[j], indptr[j + 1]):
                g = g + data[k] * _fprime(z[indices[k]], y[indices[k]], loss)
            t = l - bptr[b]
            ub[t] = w[l] - g * inv_n / L
            nrm = nrm + ub[t] * ub[t]
        nrm = sqrt(nrm)
        if nrm <= alpha / L:
            scale = 0.0
        else:
            scale = 1.0 - alpha / (L * nrm)
        for l in range(bptr[b], bptr[b + 1]):
            j = l if cols == NULL else cols[l]
            diff = _cd_set(data, indices, indptr, w, z, l, j, scale * ub[l - bptr[b]])
            if diff > max_change:
                max_change = diff
    return max_change


cdef index_t _max_block(const index_t* bptr, index_t q) noexcept nogil:
    cdef index_t b, mx = 1
    for b in range(q):
        if bptr[b + 1] - bptr[b] > mx:
            mx = bptr[b + 1] - bptr[b]
    return mx


cdef _check_block_ptr(const index_t[::1] block_ptr, index_t q, index_t m):
    cdef index_t b
    if block_ptr.shape[0] != q + 1 or block_ptr[0] != 0 or block_ptr[q] != m:
        raise ValueError("block_ptr must have one entry per block plus one, from 0 to "
                         "the number of columns")
    for b in range(q):
        if block_ptr[b + 1] < block_ptr[b]:
            raise ValueError("block_ptr must be non-decreasing")


def cd_epochs(const float64_t[::1] data, const index_t[::1] indices,
              const index_t[::1] indptr, const float64_t[::1] y, float64_t[::1] w,
              float64_t[::1] z, const float64_t[::1] lipschitz,
              const index_t[::1] block_ptr, int loss, int penalty, double alpha,
              index_t n_epochs, const index_t[::1] order=None):
    """Run ``n_epochs`` cyclic passes of proximal coordinate descent in place.

    Private kernel: the Python layer builds consistent inputs.  The passes are
    those of the sub-problems of :func:`working_set` (the same ``_cd_pass``).

    Parameters
    ----------
    data, indices, indptr : CSC arrays of the working-set columns, shape (n, m)
        Row indices in ``[0, n)``; columns in block order.
    y : ndarray of shape (n,)
        Targets (squared loss) or labels in {-1, +1} (logistic loss).
    w : ndarray of shape (m,)
        Coefficients of the working set, updated in place.
    z : ndarray of shape (n,)
        Margins ``X_W w`` (plus the fixed contribution of columns outside the
        working set, which are zero in the solver), updated in place.
    lipschitz : ndarray of shape (q,)
        ``L_B = ||X_B||_2^2 / (gamma n)`` per block (an upper bound is valid);
        a block with ``L_B <= 0`` (no entries) is skipped.
    block_ptr : ndarray of int64 of shape (q + 1,)
        Block ``b`` is columns ``block_ptr[b] .. block_ptr[b+1]-1``.
    loss, penalty : int
        Codes from ``LOSS_CODES``, ``PENALTY_CODES``.
    alpha : float
        Regularisation strength (> 0).
    n_epochs : int
        Passes over the blocks (>= 0).
    order : ndarray of int64 of shape (r,) or None, default=None
        The blocks a pass visits, in that order (e.g. the non-zero ones only,
        the "active set cycling" of Friedman, Hastie and Tibshirani 2010,
        Section 2.6); None visits every block in increasing order.

    Returns
    -------
    max_change : float
        Largest absolute coefficient change of the last pass.

    Raises
    ------
    ValueError
        Inconsistent shapes or codes.
    MemoryError
        If the block buffers cannot be allocated.
    """
    cdef index_t m = indptr.shape[0] - 1
    cdef index_t n = z.shape[0]
    cdef index_t q = lipschitz.shape[0]
    cdef index_t ep, t
    cdef double max_change = 0.0
    if w.shape[0] != m:
        raise ValueError(f"w must have one entry per column ({m}), got {w.shape[0]}")
    if y.shape[0] != n:
        raise ValueError(f"y and z must have the same length, got {y.shape[0]} and {n}")
    _check_block_ptr(block_ptr, q, m)
    _check_arrays_and_codes(data.shape[0], indices.shape[0], indptr[m], loss, penalty,
                            q == m, "column")
    if n_epochs < 0:
        raise ValueError(f"n_epochs must be >= 0, got {n_epochs}")
    cdef index_t n_visit = q if order is None else order.shape[0]
    cdef const index_t* order_ptr = NULL
    if order is not None:
        for t in range(n_visit):
            if order[t] < 0 or order[t] >= q:
                raise ValueError(f"order holds block {order[t]} outside [0, {q})")
        if n_visit:
            order_ptr = &order[0]
    if m == 0 or n == 0 or n_epochs == 0 or n_visit == 0:
        return 0.0
    cdef float64_t* ub = <float64_t*> malloc(_max_block(&block_ptr[0], q) * sizeof(float64_t))
    if ub == NULL:
        raise MemoryError()
    with nogil:
        for ep in range(n_epochs):
            max_change = _cd_pass(&data[0], &indices[0], &indptr[0], &y[0], &w[0], &z[0],
                                  &lipschitz[0], &block_ptr[0], NULL, order_ptr, n_visit,
                                  loss, penalty, alpha, 1.0 / n, ub)
    free(ub)
    return max_change


# ---------------------------------------------------------------------------
# The working-set solver in one call: Massias, Gramfort and Salmon, ICML 2018
# (Algorithms 3-4); Massias, Vaiter, Gramfort and Salmon, JMLR 2020; Bertrand
# and Massias, AISTATS 2021; Ndiaye et al., JMLR 2017 (the sphere test).
#
# Per outer iteration: the certificate (the full-problem duality gap with the
# best of the rescaled residual, the extrapolated residual of the last
# sub-problem and the best dual point so far), the Gap Safe sphere test, the
# choice of the working set of blocks and the sub-problem (cyclic proximal
# coordinate descent with active set cycling, Anderson extrapolation of the
# primal iterates and of the residuals; or a Python callable, e.g. DSAL's
# screened SVRG loop).  The steps, their order and the constants are those of
# the pure-Python reference in tests/_dsal_reference.py, which this kernel is
# tested against; sums are sequential here (pairwise in NumPy), the small
# linear solve of the extrapolation is Gaussian elimination with partial
# pivoting (LAPACK there) and ties of the priorities are broken by block index,
# so the two agree to rounding.  The full-problem passes X^T v (the certificate)
# run over ``n_jobs`` threads, one column each, so the result does not depend
# on ``n_jobs``.
# ---------------------------------------------------------------------------

cdef inline double _loss_value(double z, double yi, int loss) noexcept nogil:
    """f_i(z): (z - y_i)^2 / 2, or log(1 + exp(-y_i z)) as numpy.logaddexp(0, .)."""
    cdef double d, t
    if loss == LOSS_SQUARED:
        d = z - yi
        return 0.5 * (d * d)
    t = -yi * z
    if t > 0.0:
        return t + log1p(exp(-t))
    return log1p(exp(t))


cdef inline double _xlogx(double s) noexcept nogil:
    if s == 0.0:
        return 0.0
    return s * log(s)


cdef double _dual_value(const float64_t* v, const float64_t* y, index_t n, double dual_norm,
                        double alpha, int loss, double* c_out) noexcept nogil:
    """Dual objective of the rescaled point -c v / (n alpha) (tests/_dsal_reference.py:
    dual_objective)."""
    cdef double c, s, u, acc = 0.0, dual
    cdef index_t i
    c = alpha / (dual_norm if dual_norm > alpha else alpha)
    c_out[0] = c
    if not isfinite(c):
        return -INFINITY
    if loss == LOSS_LOGISTIC:
        for i in range(n):
            s = -c * v[i] * y[i]
            if s < 0.0 or s > 1.0:
                return -INFINITY
    for i in range(n):
        u = c * v[i]
        if loss == LOSS_SQUARED:
            acc = acc + (0.5 * u * u + u * y[i])
        else:
            s = -u * y[i]
            s = 0.0 if s < 0.0 else (1.0 if s > 1.0 else s)
            acc = acc + (_xlogx(s) + _xlogx(1.0 - s))
    dual = -acc / n
    if not isfinite(dual):
        return -INFINITY
    return dual


cdef void _tmatvec(const float64_t* data, const index_t* indices, const index_t* indptr,
                   const index_t* cols, index_t m, const float64_t* v, index_t n,
                   float64_t* out, int n_jobs) noexcept nogil:
    """out[l] = x_j^T v / n for j = cols[l] (cols NULL: j = l), one column a thread."""
    cdef index_t l, j, k
    cdef double acc
    if n_jobs <= 1:
        for l in range(m):
            j = l if cols == NULL else cols[l]
            acc = 0.0
            for k in range(indptr[j], indptr[j + 1]):
                acc = acc + data[k] * v[indices[k]]
            out[l] = acc / n
        return
    for l in prange(m, schedule="static", num_threads=n_jobs):
        j = l if cols == NULL else cols[l]
        acc = 0.0
        for k in range(indptr[j], indptr[j + 1]):
            acc = acc + data[k] * v[indices[k]]
        out[l] = acc / n


cdef inline double _block_norm(const float64_t* g, index_t s, index_t e,
                               int penalty) noexcept nogil:
    """|g_s| (l1, one coefficient a block) or ||g_{s:e}||_2 (group l1)."""
    cdef double acc = 0.0
    cdef index_t l
    if penalty == PENALTY_L1:
        return fabs(g[s])
    for l in range(s, e):
        acc = acc + g[l] * g[l]
    return sqrt(acc)


cdef double _block_norms(const float64_t* g, const index_t* bptr, index_t q, int penalty,
                         float64_t* out) noexcept nogil:
    """out[t] = the norm of block t of g (out may be NULL); returns the largest (NaN wins)."""
    cdef index_t t
    cdef double x, mx = 0.0
    for t in range(q):
        x = _block_norm(g, bptr[t], bptr[t + 1], penalty)
        if out != NULL:
            out[t] = x
        if x > mx or x != x:
            mx = x
    return mx


cdef double _objective(const float64_t* z, const float64_t* y, index_t n, const float64_t* w,
                       const index_t* bptr, index_t q, double alpha, int loss,
                       int penalty) noexcept nogil:
    cdef double a = 0.0, b = 0.0
    cdef index_t i
    for i in range(n):
        a = a + _loss_value(z[i], y[i], loss)
    for i in range(q):
        b = b + _block_norm(w, bptr[i], bptr[i + 1], penalty)
    return a / n + alpha * b


cdef inline bint _block_nonzero(const float64_t* w, index_t s, index_t e) noexcept nogil:
    cdef index_t l
    for l in range(s, e):
        if w[l] != 0.0:
            return True
    return False


cdef bint _anderson(float64_t** rows, index_t K, index_t length, float64_t* gram,
                    float64_t* coef, float64_t* out) noexcept nogil:
    """Anderson extrapolation of the K + 1 vectors rows[0..K] (the reference's
    extrapolate_residuals).

    coef[k] (k < K) is the weight of rows[k + 1]; out their combination.  False
    when the K x K system U U^T c = 1 (U the successive differences) is singular
    or the weights are not finite."""
    cdef index_t a, b, i, piv
    cdef double acc, ua, tmp, s = 0.0
    for a in range(K):
        for b in range(a, K):
            acc = 0.0
            for i in range(length):
                ua = rows[a + 1][i] - rows[a][i]
                acc = acc + ua * (rows[b + 1][i] - rows[b][i])
            gram[a * K + b] = acc
            gram[b * K + a] = acc
        coef[a] = 1.0
    # Gaussian elimination with partial pivoting
    for a in range(K):
        piv = a
        for b in range(a + 1, K):
            if fabs(gram[b * K + a]) > fabs(gram[piv * K + a]):
                piv = b
        if gram[piv * K + a] == 0.0:
            return False
        if piv != a:
            for b in range(K):
                tmp = gram[a * K + b]
                gram[a * K + b] = gram[piv * K + b]
                gram[piv * K + b] = tmp
            tmp = coef[a]
            coef[a] = coef[piv]
            coef[piv] = tmp
        for b in range(a + 1, K):
            tmp = gram[b * K + a] / gram[a * K + a]
            if tmp != 0.0:
                for i in range(a, K):
                    gram[b * K + i] = gram[b * K + i] - tmp * gram[a * K + i]
                coef[b] = coef[b] - tmp * coef[a]
    for a in range(K - 1, -1, -1):
        acc = coef[a]
        for b in range(a + 1, K):
            acc = acc - gram[a * K + b] * coef[b]
        coef[a] = acc / gram[a * K + a]
    for a in range(K):
        if not isfinite(coef[a]):
            return False
        s = s + coef[a]
    if s == 0.0 or not isfinite(s):
        return False
    for a in range(K):
        coef[a] = coef[a] / s
    for i in range(length):
        acc = 0.0
        for a in range(K):
            acc = acc + coef[a] * rows[a + 1][i]
        out[i] = acc
    return True


cdef inline bint _prio_less(index_t a, index_t b, const float64_t* key) noexcept nogil:
    return key[a] < key[b] or (key[a] == key[b] and a < b)


cdef void _select_smallest(index_t* arr, index_t n, index_t k,
                           const float64_t* key) noexcept nogil:
    """Reorder arr so that arr[:k] are its k smallest by (key, index) (quickselect)."""
    cdef index_t lo = 0, hi = n - 1, i, j, pivot, tmp, target = k - 1
    while lo < hi:
        pivot = arr[lo + (hi - lo) // 2]
        i = lo
        j = hi
        while i <= j:
            while _prio_less(arr[i], pivot, key):
                i = i + 1
            while _prio_less(pivot, arr[j], key):
                j = j - 1
            if i <= j:
                tmp = arr[i]
                arr[i] = arr[j]
                arr[j] = tmp
                i = i + 1
                j = j - 1
        if target <= j:
            hi = j
        elif target >= i:
            lo = i
        else:
            break


cdef int _cmp_index(const void* a, const void* b) noexcept nogil:
    cdef index_t x = (<const index_t*> a)[0], y = (<const index_t*> b)[0]
    return (x > y) - (x < y)


cdef struct _Problem:
    const float64_t* data
    const index_t* indices
    const index_t* indptr
    const float64_t* y
    const index_t* block_ptr
    index_t n
    index_t p
    index_t q
    int loss
    int penalty
    int n_jobs
    double alpha
    float64_t* w
    float64_t* z
    float64_t* fp
    float64_t* g
    float64_t* bd
    float64_t* prio_dual
    float64_t* best_bd
    float64_t* best_u
    float64_t* ub
    double best_dual


cdef void _margins(_Problem* P) noexcept nogil:
    """z = X w from the columns of the support (compressed_scatter)."""
    cdef index_t i, c, k
    cdef double vc
    for i in range(P.n):
        P.z[i] = 0.0
    for c in range(P.p):
        vc = P.w[c]
        if vc == 0.0:
            continue
        for k in range(P.indptr[c], P.indptr[c + 1]):
            P.z[P.indices[k]] = P.z[P.indices[k]] + vc * P.data[k]


cdef double _evaluate(_Problem* P, const float64_t* extra, double* gap) noexcept nogil:
    """Primal at w; sets the gap of the best dual point so far, prio_dual (c times the
    block dual norms of the better of the two candidates f'(z) and ``extra``) and,
    when a candidate is the best so far, best_bd and best_u."""
    cdef index_t i, b, n = P.n, q = P.q, cand
    cdef double primal, dn, dual, c, cur = -INFINITY
    cdef const float64_t* v
    primal = _objective(P.z, P.y, n, P.w, P.block_ptr, q, P.alpha, P.loss, P.penalty)
    for i in range(n):
        P.fp[i] = _fprime(P.z[i], P.y[i], P.loss)
    for cand in range(2 if extra != NULL else 1):
        if cand == 0:
            v = P.fp
        else:
            v = extra
        _tmatvec(P.data, P.indices, P.indptr, NULL, P.p, v, n, P.g, P.n_jobs)
        dn = _block_norms(P.g, P.block_ptr, q, P.penalty, P.bd)
        dual = _dual_value(v, P.y, n, dn, P.alpha, P.loss, &c)
        if cand == 0 or dual > cur:
            cur = dual
            for b in range(q):
                P.prio_dual[b] = c * P.bd[b]
        if dual > P.best_dual:
            P.best_dual = dual
            for b in range(q):
                P.best_bd[b] = c * P.bd[b]
            for i in range(n):
                P.best_u[i] = c * v[i]
    gap[0] = primal - P.best_dual
    return primal


cdef index_t _subproblem(_Problem* P, const index_t* feats, index_t m, const index_t* bptr,
                         index_t mq, float64_t* w_ws, const float64_t* lips, double tol,
                         index_t max_epochs, bint accelerate, bint cycle, index_t K,
                         index_t check, float64_t* work, index_t* order, float64_t* v_out,
                         bint* has_v) noexcept nogil:
    """The reference's solve_subproblem on the columns feats[:m] (blocks bptr[:mq + 1]):
    coordinate descent with active set cycling and Anderson extrapolation, to a
    sub-problem gap <= tol.  Returns the epochs run; v_out receives the best
    residual (plain or extrapolated)."""
    cdef index_t n = P.n, i, t, l, epochs = 0, n_order = 0, n_it = 0, n_res = 0, a
    cdef double inv_n = 1.0 / n, alpha = P.alpha, primal, best, d_acc, c, dn
    cdef bint full
    cdef float64_t* z = P.z
    cdef const float64_t* y = P.y
    # work: K+1 iterates (m), K+1 margins (n), K+1 residuals (n), K+1 images (m),
    # w_acc (m), z_acc (n), r_acc (n), g_acc (m), gram (K*K), coef (K)
    cdef float64_t* it_rows[64]
    cdef float64_t* mg_rows[64]
    cdef float64_t* res_rows[64]
    cdef float64_t* img_rows[64]
    cdef float64_t* tmp_ptr
    cdef float64_t* base = work
    for a in range(K + 1):
        it_rows[a] = base
        base = base + m
        mg_rows[a] = base
        base = base + n
        res_rows[a] = base
        base = base + n
        img_rows[a] = base
        base = base + m
    cdef float64_t* w_acc = base
    cdef float64_t* z_acc = w_acc + m
    cdef float64_t* r_acc = z_acc + n
    cdef float64_t* g_acc = r_acc + n
    cdef float64_t* gram = g_acc + m
    cdef float64_t* coef = gram + K * K
    has_v[0] = False
    while epochs < max_epochs:
        full = (not cycle) or epochs % check == 0
        _cd_pass(P.data, P.indices, P.indptr, y, w_ws, z, lips, bptr, feats,
                 NULL if full else order, mq if full else n_order, P.loss, P.penalty,
                 alpha, inv_n, P.ub)
        if full and cycle:
            n_order = 0
            for t in range(mq):
                if _block_nonzero(w_ws, bptr[t], bptr[t + 1]):
                    order[n_order] = t
                    n_order = n_order + 1
        epochs = epochs + 1
        if accelerate:
            memcpy(it_rows[n_it], w_ws, m * sizeof(float64_t))
            memcpy(mg_rows[n_it], z, n * sizeof(float64_t))
            n_it = n_it + 1
            if n_it == K + 1:
                if _anderson(it_rows, K, m, gram, coef, w_acc):
                    for i in range(n):
                        c = 0.0
                        for a in range(K):
                            c = c + coef[a] * mg_rows[a + 1][i]
                        z_acc[i] = c
                    if (_objective(z_acc, y, n, w_acc, bptr, mq, alpha, P.loss, P.penalty)
                            < _objective(z, y, n, w_ws, bptr, mq, alpha, P.loss,
                                         P.penalty)):
                        memcpy(w_ws, w_acc, m * sizeof(float64_t))
                        memcpy(z, z_acc, n * sizeof(float64_t))
                n_it = 0
        if epochs % check != 0 and epochs < max_epochs:
            continue
        # the check: residual f'(z), its image X_W^T f'(z) / n, in the ring of K + 1
        if n_res == K + 1:     # drop the oldest: rotate the rows
            tmp_ptr = res_rows[0]
            for a in range(K):
                res_rows[a] = res_rows[a + 1]
            res_rows[K] = tmp_ptr
            tmp_ptr = img_rows[0]
            for a in range(K):
                img_rows[a] = img_rows[a + 1]
            img_rows[K] = tmp_ptr
            n_res = K
        for i in range(n):
            res_rows[n_res][i] = _fprime(z[i], y[i], P.loss)
        # the image X_W^T r / n (signed: the extrapolation combines the images)
        _tmatvec(P.data, P.indices, P.indptr, feats, m, res_rows[n_res], n, img_rows[n_res], 1)
        dn = _block_norms(img_rows[n_res], bptr, mq, P.penalty, NULL)
        n_res = n_res + 1
        primal = _objective(z, y, n, w_ws, bptr, mq, alpha, P.loss, P.penalty)
        best = _dual_value(res_rows[n_res - 1], y, n, dn, alpha, P.loss, &c)
        memcpy(v_out, res_rows[n_res - 1], n * sizeof(float64_t))
        has_v[0] = True
        if n_res == K + 1:
            if _anderson(res_rows, K, n, gram, coef, r_acc):
                for l in range(m):
                    c = 0.0
                    for a in range(K):
                        c = c + coef[a] * img_rows[a + 1][l]
                    g_acc[l] = c
                dn = _block_norms(g_acc, bptr, mq, P.penalty, NULL)
                d_acc = _dual_value(r_acc, y, n, dn, alpha, P.loss, &c)
                if d_acc > best:
                    best = d_acc
                    memcpy(v_out, r_acc, n * sizeof(float64_t))
        if primal - best <= tol:
            break
    return epochs


def working_set(const float64_t[::1] data, const index_t[::1] indices,
                const index_t[::1] indptr, const float64_t[::1] y, float64_t[::1] w,
                const index_t[::1] block_ptr, const float64_t[::1] opnorm, double alpha,
                int loss, int penalty, bint screening, double tol, index_t max_outer,
                index_t p0, index_t max_epochs, bint accelerate, bint cycle, index_t K,
                index_t check, double tol_ratio, double screen_margin, double gamma,
                double t_start, int n_jobs=1, subsolve=None):
    """The working-set solver of :func:`dptoolkit.dsal.solve_working_set` in one call
    (private kernel; the Python layer builds consistent inputs).

    Parameters
    ----------
    data, indices, indptr : CSC arrays of the whole problem, shape (n, p)
        Canonical (sorted row indices, no duplicates), columns in block order.
    y : ndarray of shape (n,)
    w : ndarray of shape (p,)
        Start, updated in place to the solution.
    block_ptr : ndarray of int64 of shape (q + 1,)
        Block ``b`` is columns ``block_ptr[b] .. block_ptr[b+1]-1`` (l1: one
        column a block).
    opnorm : ndarray of shape (q,)
        ``||X_B||_2`` per block (an upper bound is valid; ``block_opnorms``).
    alpha, screening, tol, max_outer, p0, max_epochs, accelerate, cycle
        As ``solve_working_set``.
    loss, penalty : int
        Codes of ``LOSS_CODES`` and ``PENALTY_CODES``.
    K, check, tol_ratio, screen_margin, gamma
        ``WS_K``, ``WS_CHECK``, ``WS_TOL_RATIO``, the margin of the sphere test,
        ``GAMMA[loss]``.
    t_start : float
        ``time.perf_counter()`` at the start of the fit (for the time history).
    n_jobs : int, default=1
        Threads of the full-problem passes (one column a thread: the result does
        not depend on it).
    subsolve : callable or None, default=None
        ``subsolve(ws, w_ws, tol, primal) -> (v, epochs)`` solves the sub-problem
        of the blocks ``ws`` (int64, increasing) from ``w_ws`` (their
        coefficients, updated in place) to an absolute gap ``tol`` and returns a
        residual vector of shape (n,) and the epochs run.  None: coordinate
        descent in this kernel.

    Returns
    -------
    dict
        The keys of ``solve_working_set``'s result, with ``alive`` (bool per
        block) and ``best_u`` (the scaled residual of the best dual point) in
        place of ``active`` and ``dual_point``.
    """
    cdef index_t n = y.shape[0], p = indptr.shape[0] - 1, q = opnorm.shape[0]
    cdef index_t i, j, b, t, l, k, ws_size = 0, mq = 0, m = 0, prev_mq = 0, n_cand, n_supp
    cdef index_t n_alive, n_alive_feats, n_iter = 0, n_epochs = 0, epochs
    cdef double primal, gap, radius, score, o, g2
    cdef bint moved, converged = False, has_v, same
    if w.shape[0] != p:
        raise ValueError(f"w must have {p} entries, got {w.shape[0]}")
    _check_block_ptr(block_ptr, q, p)
    _check_arrays_and_codes(data.shape[0], indices.shape[0], indptr[p], loss, penalty,
                            q == p, "column")
    if K < 1 or K > 63 or check < 1:
        raise ValueError("K must be in [1, 63] and check >= 1")
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be >= 1, got {n_jobs}")
    for k in range(indptr[p]):
        if indices[k] < 0 or indices[k] >= n:
            raise ValueError(f"row index {indices[k]} outside [0, {n})")
    alive_arr = np.ones(q, dtype=np.uint8)
    best_u_arr = np.zeros(n)
    cdef unsigned char[::1] alive = alive_arr
    cdef float64_t[::1] best_u = best_u_arr
    times, primals, gaps, active_sizes, ws_sizes, ws_epochs = [], [], [], [], [], []
    # doubles: z, fp, v (n each); g, w_ws (p each); lips, lips_ws, bd, prio_dual,
    # best_bd, prio (q each); the largest block; the sub-problem's work array
    cdef index_t n_work = (K + 1) * (2 * p + 2 * n) + 2 * p + 2 * n + K * K + K
    cdef index_t max_block = _max_block(&block_ptr[0], q)
    cdef float64_t* dbuf = <float64_t*> malloc(
        (3 * n + 2 * p + 6 * q + max_block + n_work + 1) * sizeof(float64_t))
    cdef index_t* ibuf = <index_t*> malloc((5 * q + p + 2) * sizeof(index_t))
    if dbuf == NULL or ibuf == NULL:
        free(dbuf)
        free(ibuf)
        raise MemoryError()
    cdef float64_t* z = dbuf
    cdef float64_t* fp = z + n
    cdef float64_t* v = fp + n
    cdef float64_t* g = v + n
    cdef float64_t* w_ws = g + p
    cdef float64_t* lips = w_ws + p
    cdef float64_t* lips_ws = lips + q
    cdef float64_t* bd = lips_ws + q
    cdef float64_t* prio_dual = bd + q
    cdef float64_t* best_bd = prio_dual + q
    cdef float64_t* prio = best_bd + q
    cdef float64_t* ub = prio + q
    cdef float64_t* work = ub + max_block
    cdef index_t* cand = ibuf
    cdef index_t* ws = cand + q
    cdef index_t* prev_ws = ws + q
    cdef index_t* order = prev_ws + q
    cdef index_t* ws_ptr = order + q
    cdef index_t* feats = ws_ptr + q + 1
    cdef const index_t* bp = &block_ptr[0]
    cdef _Problem P
    P.data = &data[0] if data.shape[0] else NULL
    P.indices = &indices[0] if indices.shape[0] else NULL
    P.indptr = &indptr[0]
    P.y = &y[0]
    P.block_ptr = bp
    P.n = n
    P.p = p
    P.q = q
    P.loss = loss
    P.penalty = penalty
    P.n_jobs = n_jobs
    P.alpha = alpha
    P.w = &w[0]
    P.z = z
    P.fp = fp
    P.g = g
    P.bd = bd
    P.prio_dual = prio_dual
    P.best_bd = best_bd
    P.best_u = &best_u[0]
    P.ub = ub
    P.best_dual = -INFINITY
    try:
        with nogil:
            n_alive_feats = p
            for b in range(q):
                o = opnorm[b]
                lips[b] = (o * o) / (gamma * n)
                if not o > 0.0:     # a block no row meets is zero at every optimum
                    for j in range(bp[b], bp[b + 1]):
                        w[j] = 0.0
                best_bd[b] = 0.0
            _margins(&P)
            primal = _evaluate(&P, NULL, &gap)
        while True:
            with nogil:
                n_alive = 0
                for b in range(q):
                    n_alive = n_alive + alive[b]
                if screening and n_alive > 0:
                    g2 = gap if not 0.0 > gap else 0.0
                    radius = sqrt(2.0 * g2 / (gamma * n)) / alpha
                    moved = False
                    for b in range(q):
                        if not alive[b]:
                            continue
                        score = best_bd[b] / alpha + radius * opnorm[b]
                        if score < 1.0 - screen_margin:
                            alive[b] = 0
                            n_alive_feats = n_alive_feats - (bp[b + 1] - bp[b])
                            for j in range(bp[b], bp[b + 1]):
                                if w[j] != 0.0:
                                    moved = True
                                    w[j] = 0.0
                    if moved:   # the point moves: evaluate again
                        _margins(&P)
                        primal = _evaluate(&P, NULL, &gap)
            times.append(time.perf_counter() - t_start)
            primals.append(primal)
            gaps.append(gap)
            if gap <= tol * fabs(primal):
                converged = True
                break
            with nogil:
                n_cand = n_supp = 0
                for b in range(q):
                    if alive[b] and opnorm[b] > 0.0:
                        cand[n_cand] = b
                        n_cand = n_cand + 1
                        if _block_nonzero(&w[0], bp[b], bp[b + 1]):
                            n_supp = n_supp + 1
            if n_iter == max_outer or n_cand == 0:
                break
            with nogil:
                ws_size = max(p0, 2 * n_supp, ws_size)
                if ws_size > n_cand:
                    ws_size = n_cand
                for i in range(n_cand):
                    b = cand[i]
                    if _block_nonzero(&w[0], bp[b], bp[b + 1]):
                        prio[b] = -INFINITY
                    else:
                        prio[b] = (1.0 - prio_dual[b] / alpha) / opnorm[b]
                        if prio[b] != prio[b]:
                            prio[b] = INFINITY
                prev_mq = mq
                for i in range(prev_mq):
                    prev_ws[i] = ws[i]
                while True:
                    mq = ws_size
                    for i in range(n_cand):
                        ws[i] = cand[i]
                    if ws_size < n_cand:
                        _select_smallest(ws, n_cand, ws_size, prio)
                        qsort(ws, ws_size, sizeof(index_t), _cmp_index)
                    same = mq == prev_mq
                    if same:
                        for i in range(mq):
                            if ws[i] != prev_ws[i]:
                                same = False
                                break
                    # the same set again would give the same sub-problem: grow it
                    if ws_size >= n_cand or not same:
                        break
                    ws_size = min(n_cand, 2 * ws_size)
                # the columns of the working set, block after block
                m = 0
                ws_ptr[0] = 0
                for t in range(mq):
                    b = ws[t]
                    lips_ws[t] = lips[b]
                    for j in range(bp[b], bp[b + 1]):
                        feats[m] = j
                        w_ws[m] = w[j]
                        m = m + 1
                    ws_ptr[t + 1] = m
            active_sizes.append(n_alive_feats)
            ws_sizes.append(m)
            if subsolve is None:
                with nogil:
                    epochs = _subproblem(&P, feats, m, ws_ptr, mq, w_ws, lips_ws,
                                         tol_ratio * gap, max_epochs, accelerate, cycle, K,
                                         check, work, order, v, &has_v)
            else:
                w_ws_arr = np.empty(m)
                for l in range(m):
                    w_ws_arr[l] = w_ws[l]
                v_arr, epochs = subsolve(np.array(<index_t[:mq]> ws if mq else [],
                                                  dtype=np.int64),
                                         w_ws_arr, tol_ratio * gap, primal)
                v_arr = np.ascontiguousarray(v_arr, dtype=np.float64)
                if v_arr.shape[0] != n or w_ws_arr.shape[0] != m:
                    raise ValueError("subsolve must return a residual of shape (n_samples,) "
                                     "and keep w_ws's shape")
                for l in range(m):
                    w_ws[l] = w_ws_arr[l]
                for i in range(n):
                    v[i] = v_arr[i]
                has_v = True
            with nogil:
                for l in range(m):
                    w[feats[l]] = w_ws[l]
                _margins(&P)   # exact margins of w for the certificate
                primal = _evaluate(&P, v if has_v else NULL, &gap)
            n_iter = n_iter + 1
            n_epochs = n_epochs + epochs
            ws_epochs.append(epochs)
    finally:
        free(dbuf)
        free(ibuf)
    return {
        "primal": primal, "dual": P.best_dual, "gap": gap, "n_iter": n_iter,
        "n_epochs": n_epochs, "converged": converged, "alive": alive_arr.view(bool),
        "best_u": best_u_arr, "times": np.array(times), "primals": np.array(primals),
        "gaps": np.array(gaps), "active_sizes": np.array(active_sizes, dtype=np.int64),
        "ws_sizes": np.array(ws_sizes, dtype=np.int64),
        "ws_epochs": np.array(ws_epochs, dtype=np.int64),
    }


def compressed_transpose(const float64_t[::1] data, const index_t[::1] indices,
                         const index_t[::1] indptr, index_t n_out):
    """The other compressed format of a matrix, without its explicit zeros.

    From CSR arrays (``indptr`` over rows, ``indices`` columns in ``[0, n_out)``)
    the CSC arrays, and the other way round, with int64 indices; within each
    output segment the indices increase, so the output is canonical when the
    input has no duplicate entries.  Stored zeros are dropped.

    Returns
    -------
    (data, indices, indptr) or None
        None when an entry is NaN or infinite.

    Raises
    ------
    ValueError
        An index outside ``[0, n_out)`` or arrays shorter than ``indptr[-1]``.
    """
    cdef index_t m = indptr.shape[0] - 1, r, k, c, nnz = 0, pos
    cdef bint finite = True
    if m < 0 or n_out < 0:
        raise ValueError("indptr must have at least one entry and n_out be >= 0")
    if data.shape[0] < indptr[m] or indices.shape[0] < indptr[m]:
        raise ValueError("indices/data shorter than indptr[-1]")
    out_ptr_arr = np.zeros(n_out + 1, dtype=np.int64)
    cdef index_t[::1] out_ptr = out_ptr_arr
    with nogil:
        for k in range(indptr[m]):
            if not isfinite(data[k]):
                finite = False
                break
            if data[k] != 0.0:
                c = indices[k]
                if c < 0 or c >= n_out:
                    with gil:
                        raise ValueError(f"index {c} outside [0, {n_out})")
                out_ptr[c + 1] = out_ptr[c + 1] + 1
    if not finite:
        return None
    for c in range(n_out):
        out_ptr[c + 1] = out_ptr[c + 1] + out_ptr[c]
    nnz = out_ptr[n_out]
    out_data_arr = np.empty(nnz)
    out_idx_arr = np.empty(nnz, dtype=np.int64)
    nxt_arr = out_ptr_arr[:n_out].copy()
    cdef float64_t[::1] out_data = out_data_arr
    cdef index_t[::1] out_idx = out_idx_arr
    cdef index_t[::1] nxt = nxt_arr
    with nogil:
        for r in range(m):
            for k in range(indptr[r], indptr[r + 1]):
                if data[k] != 0.0:
                    c = indices[k]
                    pos = nxt[c]
                    nxt[c] = pos + 1
                    out_idx[pos] = r
                    out_data[pos] = data[k]
    return out_data_arr, out_idx_arr, out_ptr_arr
