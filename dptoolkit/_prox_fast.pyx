# distutils: extra_compile_args = -fopenmp
# distutils: extra_link_args = -fopenmp
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
from libc.math cimport exp, sqrt, fabs
from libc.stdlib cimport malloc, free
from numpy.random cimport bitgen_t

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
# working-set solver, dsal_engine.solve_working_set).
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
                           const index_t* indptr, float64_t* w, float64_t* z, index_t j,
                           double new) noexcept nogil:
    """w[j] <- new and z <- z + (new - old) x_j; returns |new - old|."""
    cdef double diff = new - w[j]
    cdef index_t k
    if diff == 0.0:
        return 0.0
    w[j] = new
    for k in range(indptr[j], indptr[j + 1]):
        z[indices[k]] = z[indices[k]] + diff * data[k]
    return fabs(diff)


def cd_epochs(const float64_t[::1] data, const index_t[::1] indices,
              const index_t[::1] indptr, const float64_t[::1] y, float64_t[::1] w,
              float64_t[::1] z, const float64_t[::1] lipschitz,
              const index_t[::1] block_ptr, int loss, int penalty, double alpha,
              index_t n_epochs, const index_t[::1] order=None):
    """Run ``n_epochs`` cyclic passes of proximal coordinate descent in place.

    Private kernel: the Python layer builds consistent inputs.

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
    cdef index_t ep, b, bs, be, j, k, max_block = 1
    cdef double g, L, inv_n, nrm, scale, diff, max_change = 0.0
    if w.shape[0] != m:
        raise ValueError(f"w must have one entry per column ({m}), got {w.shape[0]}")
    if y.shape[0] != n:
        raise ValueError(f"y and z must have the same length, got {y.shape[0]} and {n}")
    if block_ptr.shape[0] != q + 1 or block_ptr[0] != 0 or block_ptr[q] != m:
        raise ValueError("block_ptr must have len(lipschitz) + 1 entries from 0 to the "
                         "number of columns")
    _check_arrays_and_codes(data.shape[0], indices.shape[0], indptr[m], loss, penalty,
                            q == m, "column")
    if n_epochs < 0:
        raise ValueError(f"n_epochs must be >= 0, got {n_epochs}")
    cdef index_t n_visit = q if order is None else order.shape[0]
    cdef index_t t
    cdef const index_t* order_ptr = NULL
    if order is not None:
        for t in range(n_visit):
            if order[t] < 0 or order[t] >= q:
                raise ValueError(f"order holds block {order[t]} outside [0, {q})")
        if n_visit:
            order_ptr = &order[0]
    if m == 0 or n == 0 or n_epochs == 0 or n_visit == 0:
        return 0.0
    for b in range(q):
        if block_ptr[b + 1] - block_ptr[b] > max_block:
            max_block = block_ptr[b + 1] - block_ptr[b]
    cdef float64_t* ub = <float64_t*> malloc(max_block * sizeof(float64_t))
    if ub == NULL:
        raise MemoryError()
    inv_n = 1.0 / n
    with nogil:
        for ep in range(n_epochs):
            max_change = 0.0
            if penalty == PENALTY_L1:
                for t in range(n_visit):
                    j = t if order_ptr == NULL else order_ptr[t]
                    L = lipschitz[j]
                    if L <= 0.0:
                        continue
                    g = 0.0
                    if loss == LOSS_SQUARED:
                        for k in range(indptr[j], indptr[j + 1]):
                            g = g + data[k] * (z[indices[k]] - y[indices[k]])
                    else:
                        for k in range(indptr[j], indptr[j + 1]):
                            g = g + data[k] * _fprime(z[indices[k]], y[indices[k]], loss)
                    diff = _cd_set(&data[0], &indices[0], &indptr[0], &w[0], &z[0], j,
                                   _soft(w[j] - g * inv_n / L, alpha / L))
                    if diff > max_change:
                        max_change = diff
            else:
                for t in range(n_visit):
                    b = t if order_ptr == NULL else order_ptr[t]
                    L = lipschitz[b]
                    if L <= 0.0:
                        continue
                    bs = block_ptr[b]
                    be = block_ptr[b + 1]
                    nrm = 0.0
                    for j in range(bs, be):
                        g = 0.0
                        for k in range(indptr[j], indptr[j + 1]):
                            g = g + data[k] * _fprime(z[indices[k]], y[indices[k]], loss)
                        ub[j - bs] = w[j] - g * inv_n / L
                        nrm = nrm + ub[j - bs] * ub[j - bs]
                    nrm = sqrt(nrm)
                    if nrm <= alpha / L:
                        scale = 0.0
                    else:
                        scale = 1.0 - alpha / (L * nrm)
                    for j in range(bs, be):
                        diff = _cd_set(&data[0], &indices[0], &indptr[0], &w[0], &z[0], j,
                                       scale * ub[j - bs])
                        if diff > max_change:
                            max_change = diff
    free(ub)
    return max_change
