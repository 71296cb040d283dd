# Frank-Wolfe kernels for L1-constrained logistic regression (Raff, Khanna and Lu, 2023).
#
#   minimise  F(w) = sum_i [log(1 + exp(x_i.w)) - y_i x_i.w]   s.t. ||w||_1 <= l1_bound,
#
# labels y_i in {0, 1}.  The kernels work with the *sum* of per-example losses:
# alpha = X^T q with q_i = sigmoid(x_i.w) - y_i is the gradient of F, and the
# gap <alpha, w - s> is N times the gap of the mean loss (the Python layer
# divides).  Step size eta_t = 2 / (t + 2) for t = 1..T, as in the paper, or
# eta_t = 2 / (t + t0 + 2) from a start w0 in the L1 ball given by set_start: step
# t is the step k = t + t0 of Jaggi (2013), gamma_k = 2/(k + 2), so w0 stands for
# its iterate x_{t0+1}, and the induction of Jaggi's Theorem 1 (h_{k+1} <=
# (1 - gamma_k) h_k + gamma_k^2 C_f / 2) gives h(w_t) <= 2 C_f / (t + t0 + 3)
# from any feasible w0 with h(w0) <= 2 C_f / (t0 + 3) (exact linear minimisation;
# the private steps add the mechanism's error as for the zero start).
#
# StandardFW  Algorithm 1: each iteration recomputes v = X w (CSR), q, alpha =
#             X^T q (CSC) and takes one O(D) pass for the vertex and one for w.
# FastFW      Algorithm 2: w = w_m * wt with a scalar w_m, margins v = w_m * vt
#             maintained exactly, row gradients q_i recomputed only for rows that
#             contain the chosen feature, alpha and the gap updated sparsely, the
#             vertex chosen by a priority queue (heaps) or the grouped sampler.
#             Bounded staleness (Algorithm 2 as printed never refreshes): rows not touched
#             keep q_i computed at an older scale of w; everything is recomputed
#             exactly whenever the product of (1 - eta) since the last refresh
#             drops below 1 - refresh_tol, so every stored q_i was computed at a
#             margin within relative error refresh_tol of the current one.  The
#             refresh gives the q of a recomputation from scratch, bit for bit;
#             alpha is updated over the rows whose q changed (or recomputed by a
#             full pass when they hold most of X), see FastFW.
#
# Vertex selection (``selector`` codes, shared with the Python layer):
#   non-private: 0 argmax (O(D) scan), 1 pairing heap, 2 Fibonacci heap (Alg. 3)
#   private:     10 exponential mechanism by inverse CDF (O(D) per step),
#                11 noisy max = Gumbel-max over the 2D signed vertices (O(D)),
#                12 grouped Big-Step Little-Step sampler (Alg. 4, fast solver),
#                13 Laplace report-noisy-max over the 2D signed vertices
#                   (Talwar et al., as printed in Raff, Khanna and Lu (2023) and Khanna, Lu and Raff (2023)).
#   The private selectors 10-12 all implement the exponential mechanism over the
#   2D vertices s = sigma * l1_bound * e_j, score u(s) = -<s, alpha>, with
#   log-weight sigma * (-coef) * alpha_j where coef = eps_step / (2 * sensitivity
#   of the sum-score / l1_bound).  The coordinate is drawn with log-weight
#   logaddexp(coef*alpha_j, -coef*alpha_j) and then the sign with
#   P(descent) = sigmoid(2 coef |alpha_j|) (the sign is sampled: both signed
#   vertices are in the mechanism's range).
#   For selector 13 ``coef`` is the Laplace noise scale b on the score
#   -sigma*alpha_j (sum-score units, l1_bound factored out).
cimport cython
from cython.parallel cimport prange
from libc.math cimport exp, log, log1p, fabs, INFINITY, isfinite
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memcpy, memset
from libc.stdint cimport int32_t, int64_t, uint64_t
from numpy.random cimport bitgen_t

import os

import numpy as np

from dptoolkit._openmp cimport DPT_OPENMP_ENABLED, omp_get_max_threads
from dptoolkit._typedefs cimport float64_t, intp_t, index_t
from dptoolkit._random cimport get_bitgen, uniform, uniform_open, standard_gumbel, laplace
from dptoolkit._math cimport sigmoid, sign_of
from dptoolkit.linear_model._frank_wolfe._heap cimport LazyMaxQueue
from dptoolkit.linear_model._frank_wolfe._grouped_sampler cimport GroupedExpSampler
from dptoolkit.linear_model._frank_wolfe._csc_fast cimport _all_ones
# the set-up kernels (_csc_fast), also reached from here (dptoolkit.kernels.fw_fast)
from dptoolkit.linear_model._frank_wolfe._csc_fast import (  # noqa: F401
    _check_csr_arrays, _csc_block_bits, _map_indices, _number_columns, column_order,
    csr_is_canonical, csr_to_csc, csr_to_numbered_csc)

cdef double LN2 = 0.6931471805599453

cdef extern from *:
    """
    #define DPT_PREFETCH(p) __builtin_prefetch((const void*)(p))
    """
    void prefetch "DPT_PREFETCH"(const void* p) noexcept nogil

# Prefetch distance (items) of the loops that gather/scatter by index.
cdef intp_t PF = 16

# Marks: one bit per coordinate (word j >> 6, bit j & 63) flags the coordinates
# whose alpha changed since the selector last saw them.  A bit rather than a
# byte: 2^20 coordinates take 128 KiB, which stays in the core's L2 cache beside
# alpha and the sampler's records (a byte array of 1 MiB missed it at about
# every other mark of a step's scatter).
cdef extern from *:
    """
    #define DPT_CTZ64(x) __builtin_ctzll(x)
    """
    int ctz64 "DPT_CTZ64"(uint64_t x) noexcept nogil

cdef inline uint64_t _mark_bit(intp_t k) noexcept nogil:
    return (<uint64_t> 1) << (k & 63)

cdef inline int _test_and_mark(uint64_t* marks, intp_t k) noexcept nogil:
    # set k's mark; returns 1 if it was already set (branch-free)
    cdef uint64_t word = marks[k >> 6]
    marks[k >> 6] = word | _mark_bit(k)
    return <int> ((word >> (k & 63)) & 1)

cdef inline void _unmark(uint64_t* marks, intp_t k) noexcept nogil:
    marks[k >> 6] &= ~_mark_bit(k)

cdef inline intp_t _n_mark_words(intp_t d) noexcept nogil:
    return (d + 63) >> 6

cdef inline intp_t _scatter_rows(double[::1] alpha, const int32_t[::1] rows,
                                 const double[::1] gam, intp_t n_rows,
                                 const index_t[::1] indptr, const int32_t[::1] idx,
                                 const float64_t[::1] data, bint binary,
                                 uint64_t* marks, int32_t[::1] dirty_list,
                                 bint mark) noexcept nogil:
    """alpha += X^T gamma over the listed rows (CSR scatter, prefetching PF
    non-zeros ahead; binary X: x * 1.0 == x, no multiply).  With ``mark``, every
    coordinate written is marked (marks: bits, see _test_and_mark) and listed
    once in dirty_list (branch-free append: dirty_list has room for one more
    than the features); returns the number listed."""
    cdef intp_t m, k, n_dirty = 0
    cdef index_t p, lo, hi
    cdef double g
    for m in range(n_rows):
        g = gam[m]
        lo = indptr[rows[m]]
        hi = indptr[rows[m] + 1]
        for p in range(lo, hi):
            if p + PF < hi:
                prefetch(&alpha[idx[p + PF]])
            k = idx[p]
            if binary:
                alpha[k] = alpha[k] + g
            else:
                alpha[k] = alpha[k] + g * data[p]
            if mark:
                dirty_list[n_dirty] = <int32_t> k
                n_dirty += 1 - _test_and_mark(marks, k)
    return n_dirty


# The full pass alpha = X^T q (CSC gather) sums each column in the order of its
# non-zeros, one floating-point add after the other: a chain of dependent adds
# (about 4 cycles each) that the compiler may not reorder.  _gather_columns keeps
# that order per column but walks N_LANES contiguous column ranges of about
# nnz / N_LANES non-zeros side by side, so that N_LANES independent chains are in
# flight: every alpha_j is the same sum in the same order, bit for bit.
cdef enum:
    N_LANES = 4

ctypedef struct _Lane:
    intp_t c        # current column
    intp_t end_c    # one past the lane's last column
    index_t p       # next non-zero of column c
    index_t e       # end of column c
    double acc      # partial sum of column c

cdef inline _Lane _lane_store(_Lane L, const index_t* indptr, double* alpha,
                              uint64_t* marks, bint mark) noexcept nogil:
    # column L.c is summed (p == e): store it (with ``mark``, mark a bitwise
    # change: the marks are clear on entry) and move on to the next column with
    # non-zeros left (empty columns store 0.0), or past the lane's range
    # (L.c == L.end_c)
    while True:
        if mark:
            marks[L.c >> 6] |= (<uint64_t> (L.acc != alpha[L.c])) << (L.c & 63)
        alpha[L.c] = L.acc
        L.c += 1
        L.acc = 0.0
        if L.c >= L.end_c:
            return L
        L.e = indptr[L.c + 1]
        if L.p < L.e:
            return L

cdef inline _Lane _lane_start(intp_t c0, intp_t c1, const index_t* indptr, double* alpha,
                              uint64_t* marks, bint mark) noexcept nogil:
    cdef _Lane L
    L.c = c0
    L.end_c = c1
    L.p = indptr[c0]
    L.e = indptr[c0 + 1] if c0 < c1 else L.p
    L.acc = 0.0
    if c0 < c1 and L.p == L.e:
        L = _lane_store(L, indptr, alpha, marks, mark)
    return L

cdef inline double _sum_column(double acc, const int32_t* ix, const float64_t* d,
                               const double* q, index_t n, bint binary) noexcept nogil:
    # acc + d[0] q[ix[0]] + ... + d[n-1] q[ix[n-1]], added in that order (binary
    # X: the products are q[ix[k]], d is not read)
    cdef index_t k
    if binary:
        for k in range(n):
            acc = acc + q[ix[k]]
    else:
        for k in range(n):
            acc = acc + d[k] * q[ix[k]]
    return acc

cdef inline _Lane _lane_finish(_Lane L, const index_t* indptr, const int32_t* idx,
                               const float64_t* data, const double* q, double* alpha,
                               uint64_t* marks, bint mark, bint binary) noexcept nogil:
    # the rest of the lane's columns, one after the other
    while L.c < L.end_c:
        L.acc = _sum_column(L.acc, idx + L.p, NULL if binary else data + L.p, q, L.e - L.p,
                            binary)
        L.p = L.e
        L = _lane_store(L, indptr, alpha, marks, mark)
    return L

cdef inline index_t _min_index(index_t a, index_t b) noexcept nogil:
    return a if a < b else b

cdef void _gather_columns(const index_t* indptr, const int32_t* idx, const float64_t* data,
                          const double* q, double* alpha, uint64_t* marks,
                          const intp_t* bounds, bint mark, bint binary) noexcept nogil:
    """alpha_j = sum_p x_pj q_{i_p} over column j's non-zeros in order, for every
    column (binary X: data not read); lane l sums columns bounds[l] .. bounds[l+1] - 1.
    With ``mark``, j is marked where alpha_j changed (bitwise; the marks of the
    columns summed must be clear on entry)."""
    cdef _Lane L0 = _lane_start(bounds[0], bounds[1], indptr, alpha, marks, mark)
    cdef _Lane L1 = _lane_start(bounds[1], bounds[2], indptr, alpha, marks, mark)
    cdef _Lane L2 = _lane_start(bounds[2], bounds[3], indptr, alpha, marks, mark)
    cdef _Lane L3 = _lane_start(bounds[3], bounds[4], indptr, alpha, marks, mark)
    cdef index_t n, k
    cdef const int32_t* i0
    cdef const int32_t* i1
    cdef const int32_t* i2
    cdef const int32_t* i3
    cdef const float64_t* d0
    cdef const float64_t* d1
    cdef const float64_t* d2
    cdef const float64_t* d3
    cdef double a0, a1, a2, a3
    while (L0.c < L0.end_c and L1.c < L1.end_c and L2.c < L2.end_c
           and L3.c < L3.end_c):
        # every lane is inside a column with non-zeros left: run them side by
        # side up to the first column end (no branch in the inner loop)
        n = _min_index(_min_index(L0.e - L0.p, L1.e - L1.p),
                       _min_index(L2.e - L2.p, L3.e - L3.p))
        i0, i1, i2, i3 = idx + L0.p, idx + L1.p, idx + L2.p, idx + L3.p
        a0, a1, a2, a3 = L0.acc, L1.acc, L2.acc, L3.acc
        if binary:
            for k in range(n):
                a0 = a0 + q[i0[k]]
                a1 = a1 + q[i1[k]]
                a2 = a2 + q[i2[k]]
                a3 = a3 + q[i3[k]]
        else:
            d0, d1, d2, d3 = data + L0.p, data + L1.p, data + L2.p, data + L3.p
            for k in range(n):
                a0 = a0 + d0[k] * q[i0[k]]
                a1 = a1 + d1[k] * q[i1[k]]
                a2 = a2 + d2[k] * q[i2[k]]
                a3 = a3 + d3[k] * q[i3[k]]
        L0.acc, L1.acc, L2.acc, L3.acc = a0, a1, a2, a3
        L0.p += n
        L1.p += n
        L2.p += n
        L3.p += n
        if L0.p == L0.e:
            L0 = _lane_store(L0, indptr, alpha, marks, mark)
        if L1.p == L1.e:
            L1 = _lane_store(L1, indptr, alpha, marks, mark)
        if L2.p == L2.e:
            L2 = _lane_store(L2, indptr, alpha, marks, mark)
        if L3.p == L3.e:
            L3 = _lane_store(L3, indptr, alpha, marks, mark)
    _lane_finish(L0, indptr, idx, data, q, alpha, marks, mark, binary)
    _lane_finish(L1, indptr, idx, data, q, alpha, marks, mark, binary)
    _lane_finish(L2, indptr, idx, data, q, alpha, marks, mark, binary)
    _lane_finish(L3, indptr, idx, data, q, alpha, marks, mark, binary)


# Threads.  The full pass runs its columns in n_parts contiguous parts of about
# equal non-zeros, one OpenMP thread each, each part by N_LANES lanes
# (_gather_columns): a part writes alpha and the marks at its own columns only
# (its first column a multiple of 64 when marking: _parts_on_mark_words), and
# every column is still summed in its own order, so alpha is the same bits for any
# number of threads.  The number of threads follows scikit-learn's practice: the
# OpenMP maximum (OMP_NUM_THREADS, or a threadpoolctl limit, when set), else the
# CPUs this process may run on; one when built without OpenMP.

OPENMP_ENABLED = bool(DPT_OPENMP_ENABLED)   # built with OpenMP (setup.py)

# GNU OpenMP's thread pool does not survive fork(): a child forked after the parent
# ran a parallel loop hangs in its first one.  Such a child runs on one thread.
_threads_used = False
_forked_after_threads = False


def _after_fork_in_child():
    global _forked_after_threads
    _forked_after_threads = _forked_after_threads or _threads_used


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _openmp_effective_n_threads():
    """Threads for the parallel loops (module comment): >= 1."""
    global _threads_used
    if not DPT_OPENMP_ENABLED or _forked_after_threads:
        return 1
    _threads_used = True
    n = omp_get_max_threads()
    if not os.environ.get("OMP_NUM_THREADS"):
        cpus = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                else os.cpu_count())
        n = min(n, cpus or 1)
    return max(1, n)


# The short columns.  In column_order's numbering the last ~3/4 of the columns
# with entries hold at most SHORT_COLUMN entries each (on IMDB 740,000 columns,
# a quarter of nnz(X)): there the lanes above change column every few entries and
# most of their time goes to the mispredicted column ends.  _gather_short sums such
# a column with a fixed number of adds (1, 3, 7 or 15: the least power of two
# minus one that holds it), the k-th add's term being the entry's product when
# k < n and +0.0 otherwise (its bits masked, no branch), so the only branch is the
# column's size class, which stays the same over long runs of the numbering.
# Adding +0.0 leaves a sum unchanged bit for bit unless the sum is -0.0, and a sum
# started at +0.0 is never -0.0 (round to nearest: x + y is -0.0 only when both
# are): every alpha_j is the same sum as the column's own adds in order.
cdef enum:
    SHORT_COLUMN = 15

cdef inline double _kept(double v, bint keep) noexcept nogil:
    # v when keep, else +0.0 (the bits masked: no branch)
    cdef uint64_t u
    memcpy(&u, &v, sizeof(double))
    u &= (<uint64_t> 0) - (<uint64_t> keep)
    memcpy(&v, &u, sizeof(double))
    return v

cdef inline double _sum_short(const int32_t* ix, const float64_t* d, const double* q,
                              index_t n, int m, bint binary) noexcept nogil:
    # _sum_column(0.0, ...) for 1 <= n <= m: m adds, the terms past the column's own (the
    # next columns' entries: valid rows) masked to +0.0
    cdef double acc = 0.0
    cdef int k
    for k in range(m):
        acc = acc + _kept(q[ix[k]] if binary else d[k] * q[ix[k]], k < n)
    return acc

cdef inline void _gather_short_as(const index_t* indptr, const int32_t* idx,
                                  const float64_t* data, const double* q, double* alpha,
                                  uint64_t* marks, intp_t c0, intp_t c1, bint mark,
                                  bint binary) noexcept nogil:
    # _gather_short, inlined with ``mark`` and ``binary`` as constants
    cdef intp_t c
    cdef index_t p, n, nnz = indptr[c1] if c1 > c0 else 0
    cdef const float64_t* d = NULL
    cdef double acc
    for c in range(c0, c1):
        p = indptr[c]
        n = indptr[c + 1] - p
        if not binary:
            d = data + p
        if n > SHORT_COLUMN or p + SHORT_COLUMN > nnz:   # (the loads past the end)
            acc = _sum_column(0.0, idx + p, d, q, n, binary)
        elif n <= 1:
            acc = (0.0 + (q[idx[p]] if binary else d[0] * q[idx[p]])) if n == 1 else 0.0
        elif n <= 3:
            acc = _sum_short(idx + p, d, q, n, 3, binary)
        elif n <= 7:
            acc = _sum_short(idx + p, d, q, n, 7, binary)
        else:
            acc = _sum_short(idx + p, d, q, n, SHORT_COLUMN, binary)
        if mark:
            marks[c >> 6] |= (<uint64_t> (acc != alpha[c])) << (c & 63)
        alpha[c] = acc

cdef void _gather_short(const index_t* indptr, const int32_t* idx, const float64_t* data,
                        const double* q, double* alpha, uint64_t* marks, intp_t c0,
                        intp_t c1, bint mark, bint binary) noexcept nogil:
    """alpha_j for the columns c0 .. c1 - 1 (any length; fastest for at most
    SHORT_COLUMN entries), each summed over its non-zeros in order, with ``mark``
    as _gather_columns."""
    if mark and binary:
        _gather_short_as(indptr, idx, data, q, alpha, marks, c0, c1, True, True)
    elif mark:
        _gather_short_as(indptr, idx, data, q, alpha, marks, c0, c1, True, False)
    elif binary:
        _gather_short_as(indptr, idx, data, q, alpha, marks, c0, c1, False, True)
    else:
        _gather_short_as(indptr, idx, data, q, alpha, marks, c0, c1, False, False)


cdef void _gather_parts(const index_t* indptr, const int32_t* idx, const float64_t* data,
                        const double* q, double* alpha, uint64_t* marks,
                        const intp_t* bounds, int n_parts, const intp_t* tails,
                        int n_threads, bint mark, bint binary) noexcept nogil:
    """_gather_columns over n_parts column ranges, part t by lanes
    bounds[t * N_LANES] .. bounds[(t + 1) * N_LANES], then _gather_short over the
    columns tails[t] .. tails[t + 1], on up to n_threads threads.  With ``mark``
    and several threads, every range a thread writes must start at a multiple of
    64 columns (_full_pass_lanes): a thread then writes its own mark words only."""
    cdef int t
    if n_parts <= 1 or n_threads <= 1:
        for t in range(n_parts):
            _gather_columns(indptr, idx, data, q, alpha, marks, bounds + t * N_LANES,
                            mark, binary)
            _gather_short(indptr, idx, data, q, alpha, marks, tails[t], tails[t + 1],
                          mark, binary)
        return
    for t in prange(n_parts, num_threads=n_threads, schedule="static"):
        _gather_columns(indptr, idx, data, q, alpha, marks, bounds + t * N_LANES,
                        mark, binary)
        _gather_short(indptr, idx, data, q, alpha, marks, tails[t], tails[t + 1],
                      mark, binary)


def _lane_bounds(c_indptr, n_parts=1):
    """The n_parts * N_LANES + 1 column bounds of _gather_parts: lane l starts at
    the first column whose non-zeros begin at or after l / (n_parts * N_LANES) of
    nnz(X)."""
    c_indptr = np.asarray(c_indptr, dtype=np.int64)
    n_cols = c_indptr.shape[0] - 1
    n_lanes = max(1, int(n_parts)) * N_LANES
    # integer targets ceil(nnz l / n_lanes): the first column whose pointer
    # reaches the real target l nnz / n_lanes (float targets would make
    # searchsorted convert all D + 1 pointers to float64 on every call)
    targets = -(-(c_indptr[n_cols] * np.arange(n_lanes + 1, dtype=np.int64)) // n_lanes)
    bounds = np.searchsorted(c_indptr[:n_cols], targets, side="left").astype(np.intp)
    bounds[0], bounds[n_lanes] = 0, n_cols
    return bounds


def _parts_on_mark_words(bounds):
    """The lane bounds of _lane_bounds with every part's first column moved down
    to a multiple of 64 (and the lanes before it clipped to it), so that the parts'
    threads mark coordinates in disjoint 64-bit words (_gather_parts)."""
    bounds = np.array(bounds, dtype=np.intp)
    n_parts = (bounds.shape[0] - 1) // N_LANES
    for t in range(1, n_parts):
        bounds[t * N_LANES] -= bounds[t * N_LANES] % 64
    # keep the bounds non-decreasing: the lanes before a moved start end there
    return np.minimum.accumulate(bounds[::-1])[::-1].copy()


def _short_tail(const index_t[::1] c_indptr, intp_t used):
    """The first column of the longest run of columns ending at column ``used`` - 1
    that hold at most SHORT_COLUMN entries each (``used`` when there is none)."""
    cdef intp_t c = used
    with nogil:
        while c > 0 and c_indptr[c] - c_indptr[c - 1] <= SHORT_COLUMN:
            c -= 1
    return c


def _full_pass_lanes(c_indptr, n_parts=1):
    """FastFW's full-pass layout over the columns up to the last one with entries
    (the trailing empty columns, in column_order's numbering every empty column,
    keep alpha_j = 0 from the start and are never summed): ``(lanes, tails)``.

    The columns are split at the start of their trailing run of short columns
    (_short_tail; moved up to a multiple of 64): before it, ``lanes`` are the
    n_parts * N_LANES + 1 bounds of _lane_bounds (parts on mark words when
    n_parts > 1); from it, ``tails`` are the n_parts + 1 bounds of the parts'
    ranges of short columns (_gather_short), of about equal numbers of columns,
    each starting at a multiple of 64 but the first."""
    c_indptr = np.asarray(c_indptr, dtype=np.int64)
    n_cols = c_indptr.shape[0] - 1
    n_parts = max(1, int(n_parts))
    used = int(np.searchsorted(c_indptr, c_indptr[n_cols], side="left")) if n_cols > 0 else 0
    start = min(-(-_short_tail(c_indptr, used) // 64) * 64, used)
    lanes = _lane_bounds(c_indptr[:start + 1], n_parts)
    if n_parts > 1:
        lanes = _parts_on_mark_words(lanes)
    tails = start + (used - start) * np.arange(n_parts + 1, dtype=np.intp) // n_parts
    tails[1:n_parts] -= tails[1:n_parts] % 64
    tails = np.maximum(tails, start)
    return lanes, tails


def gather_columns(c_indptr, c_indices, c_data, q, *, bint binary=False, bounds=None,
                   short_bounds=None, int n_threads=1):
    """alpha = X^T q by _gather_parts, FastFW's full pass (for tests and
    benchmarks): X given by CSC arrays (int64 indptr, int32 indices), q of shape
    (n_samples,); ``bounds``: k * N_LANES + 1 lane bounds, k parts, and
    ``short_bounds``: the k + 1 bounds of the parts' short-column ranges after
    them (default: none, the columns after the lanes are empty and get 0.0);
    both None: FastFW's layout for ``n_threads`` parts (_full_pass_lanes;
    (0, 0, 0, 0, D) sums the columns one after the other in one lane).  The
    parts run on up to ``n_threads`` threads."""
    cdef const index_t[::1] indptr = np.ascontiguousarray(c_indptr, dtype=np.int64)
    cdef const int32_t[::1] idx = np.ascontiguousarray(c_indices, dtype=np.int32)
    cdef const float64_t[::1] data = np.ascontiguousarray(c_data, dtype=np.float64)
    cdef const double[::1] qv = np.ascontiguousarray(q, dtype=np.float64)
    cdef intp_t d = indptr.shape[0] - 1
    n_threads = min(n_threads, _openmp_effective_n_threads()) if n_threads > 1 else 1
    if bounds is None:
        bounds, short_bounds = _full_pass_lanes(c_indptr, n_threads)
    cdef intp_t[::1] lanes = np.asarray(bounds, dtype=np.intp)
    if (lanes.shape[0] - 1) % N_LANES or lanes.shape[0] < N_LANES + 1:
        raise ValueError(f"bounds must have k * {N_LANES} + 1 entries, got {lanes.shape[0]}")
    cdef int n_parts = (lanes.shape[0] - 1) // N_LANES
    if short_bounds is None:
        short_bounds = np.full(n_parts + 1, lanes[lanes.shape[0] - 1])
    cdef intp_t[::1] tails = np.asarray(short_bounds, dtype=np.intp)
    if tails.shape[0] != n_parts + 1:
        raise ValueError(f"short_bounds must have {n_parts + 1} entries, got {tails.shape[0]}")
    alpha = np.full(d, np.nan)
    alpha[tails[n_parts]:] = 0.0  # columns past the short ranges: empty (sum 0.0)
    cdef double[::1] a = alpha
    if d > 0:
        with nogil:
            _gather_parts(&indptr[0], &idx[0] if idx.shape[0] else NULL,
                          &data[0] if data.shape[0] else NULL,
                          &qv[0] if qv.shape[0] else NULL, &a[0], NULL, &lanes[0],
                          n_parts, &tails[0], n_threads, False, binary)
    return alpha


# FastFW refresh: how alpha = X^T q is brought up to date (module comment).
cdef enum:
    RF_AUTO = 0
    RF_FULL = 1
    RF_INCREMENTAL = 2
REFRESH_AUTO = RF_AUTO
REFRESH_FULL = RF_FULL
REFRESH_INCREMENTAL = RF_INCREMENTAL
# auto: a full CSC pass when the rows whose gradient changed hold more than this
# fraction of nnz(X).  With a selector that tracks the changed coordinates (heaps,
# grouped sampler) the scatter also marks each coordinate it writes and costs 2.6
# to 3.3 gathers per non-zero (IMDB 2^20, scatter over half the rows vs one full
# gather, measured side by side): a third; without (argmax and the O(D)
# selectors) about two gathers: a half ...
cdef double FULL_PASS_FRACTION_TRACKED = 0.33
cdef double FULL_PASS_FRACTION = 0.5
# ... or when the incremental refreshes since the last full pass have processed
# this many times nnz(X) (bounds the accumulated rounding of alpha).
cdef double DRIFT_PASSES = 8.0
# The selector is rebuilt (O(D)) instead of updated item by item when more than
# this fraction of the D coordinates changed.
cdef double REBUILD_FRACTION = 0.125


# A step's row updates (margins, gradients) for a column of at least this many
# rows run on the OpenMP threads (FastFW.column_rows_parallel); shorter columns on
# one, where the threads' start would cost more than they save.
cdef intp_t PARALLEL_ROWS = 16384


cdef inline double _row_step(double* vt, double* q, const float64_t* y, intp_t i,
                             double dv, double w_m) noexcept nogil:
    # a step's update of row i: margin vt_i += dv, gradient q_i recomputed at
    # scale w_m; returns the gradient's change
    cdef double vti = vt[i] + dv
    cdef double qn = sigmoid(w_m * vti) - y[i]
    cdef double g = qn - q[i]
    vt[i] = vti
    q[i] = qn
    return g


cdef bint _rows_increase(const index_t[::1] indptr, const int32_t[::1] idx) noexcept nogil:
    # every column's row indices strictly increase (so no row twice in a column)
    cdef intp_t j, d = indptr.shape[0] - 1
    cdef index_t p
    for j in range(d):
        for p in range(indptr[j] + 1, indptr[j + 1]):
            if idx[p] <= idx[p - 1]:
                return False
    return True


cdef int _cmp_int32(const void* a, const void* b) noexcept nogil:
    cdef int32_t x = (<const int32_t*> a)[0], z = (<const int32_t*> b)[0]
    return (x > z) - (x < z)

cdef enum:
    SEL_ARGMAX = 0
    SEL_PAIRING = 1
    SEL_FIBONACCI = 2
    SEL_EXPONENTIAL = 10
    SEL_NOISY_MAX = 11
    SEL_GROUPED = 12
    SEL_LAPLACE = 13

SELECTOR_CODES = {
    "argmax": SEL_ARGMAX,
    "pairing_heap": SEL_PAIRING,
    "fibonacci_heap": SEL_FIBONACCI,
    "exponential": SEL_EXPONENTIAL,
    "noisy_max": SEL_NOISY_MAX,
    "grouped": SEL_GROUPED,
    "laplace": SEL_LAPLACE,
}
PRIVATE_SELECTORS = frozenset(["exponential", "noisy_max", "grouped", "laplace"])


# Log-weights of 0.01 <= x < 4 from a table (no exp, no log1p).  With x_k = k h
# (h = 1/LWT_PER_UNIT = 1/128) the nearest node and r = x - x_k (exact: Sterbenz,
# x and x_k are within a factor 2 for k >= 1), |r| <= h/2 = 1/256:
#   cosh x = cosh x_k (1 + z),  z = (cosh r - 1) + tanh(x_k) sinh r,
#   log(2 cosh x) = log(2 cosh x_k) + log1p(z),  |z| < 0.004,
# with cosh r - 1 = r^2/2 + r^4/24 + r^6/720, sinh r = r + r^3/6 + r^5/120 and
# log1p(z) to z^6 (truncation below 1e-18 relative to each), the table's
# log(2 cosh x_k), cosh x_k, tanh x_k rounded from 80-bit extended precision
# where the platform has it (half an ulp each), 32 bytes a node.  Measured
# against 80-bit references (tests/test_grouped_sampler.py): the log-weight
# within 2 u of log(2 cosh x) relative, the scaled weight C_k + C_k z within 2 u of
# cosh x (u = 2**-53), as the exp/log1p form they replace.
cdef enum:
    LWT_PER_UNIT = 128
    LWT_SIZE = 4 * LWT_PER_UNIT + 1
cdef double LWT_H = 1.0 / LWT_PER_UNIT
# node k: log(2 cosh x_k), cosh x_k, tanh x_k (and padding to 32 bytes)
cdef double _lwt[LWT_SIZE][4]


def _fill_log_weight_table():
    xk = np.arange(LWT_SIZE, dtype=np.longdouble) / LWT_PER_UNIT
    cdef const double[::1] lg = (np.log(np.longdouble(2.0))
                                 + np.log(np.cosh(xk))).astype(np.float64)
    cdef const double[::1] ch = np.cosh(xk).astype(np.float64)
    cdef const double[::1] th = np.tanh(xk).astype(np.float64)
    cdef intp_t k
    for k in range(LWT_SIZE):
        _lwt[k][0] = lg[k]
        _lwt[k][1] = ch[k]
        _lwt[k][2] = th[k]
        _lwt[k][3] = 0.0


_fill_log_weight_table()


cdef inline double log_weight_scaled(double coef, double a, double* scaled) noexcept nogil:
    # log(exp(coef*a) + exp(-coef*a)) = log(2 cosh x), x = coef*|a| (both signs of
    # coordinate j together), and in scaled[0] the scaled weight cosh x ~
    # exp(logw - LN2) for the sampler (_grouped_sampler, *Scaled weights*; u =
    # 2**-53), so that the sampler spends no exp on it:
    #   x < 0.01 (most coordinates at private budgets): the series ln 2 + x^2/2 -
    #     x^4/12 + x^6/45 (truncation 17 x^8/2520 < 1e-17) and 1 + x^2/2 + x^4/24 +
    #     x^6/720 (positive terms, truncation below 3e-21): within 3 u of
    #     exp(logw - LN2) (logw's rounding about 1 u, the series' 2 u);
    #   0.01 <= x < 4: the table above: logw < 4.7 within 6 u of log(2 cosh x)
    #     absolute, and the scaled weight within 2 u of cosh x: within 8 u of
    #     exp(logw - LN2);
    # both inside the sampler's SCALED_REL_ERR = 16 u.  x >= 4: x + log1p(exp(-2x))
    # (rare: the largest gradients) and -1 (the sampler computes exp(logw - ref)).
    cdef double x = coef * fabs(a)
    if x < LWT_SERIES_BELOW:
        return _log_weight_series(x, scaled)
    return _log_weight_table(x, scaled)


cdef double LWT_SERIES_BELOW = 0.01
# Coordinates whose log-weights FastFW.list_log_weights computes at a time, and
# the shares of series coordinates between which it splits a block by formula
# (measured on IMDB: at eps 1, about 0.45 of a step's coordinates, the split
# saves a tenth of the steps' time; at eps 0.1, about 0.75, it costs a twentieth).
cdef enum:
    LOG_WEIGHT_BLOCK = 2048
cdef double SPLIT_SHARE_LO = 0.3
cdef double SPLIT_SHARE_HI = 0.7

cdef inline double _log_weight_series(double x, double* scaled) noexcept nogil:
    # log_weight_scaled for x < LWT_SERIES_BELOW
    cdef double x2 = x * x
    scaled[0] = 1.0 + x2 * (0.5 + x2 * (1.0 / 24.0 + x2 * (1.0 / 720.0)))
    return LN2 + x2 * (0.5 + x2 * (-1.0 / 12.0 + x2 * (1.0 / 45.0)))


cdef inline double _log_weight_table(double x, double* scaled) noexcept nogil:
    # log_weight_scaled for x >= LWT_SERIES_BELOW
    cdef double r, r2, z, cz
    cdef const double* node
    cdef intp_t k
    if x < 4.0:
        k = <intp_t> (x * LWT_PER_UNIT + 0.5)      # 1 <= k <= 4 LWT_PER_UNIT
        node = _lwt[k]
        r = x - k * LWT_H
        r2 = r * r
        z = (r2 * (0.5 + r2 * (1.0 / 24.0 + r2 * (1.0 / 720.0)))
             + node[2] * (r + r * r2 * (1.0 / 6.0 + r2 * (1.0 / 120.0))))
        cz = node[1]
        scaled[0] = cz + cz * z
        return node[0] + z * (1.0 + z * (-0.5 + z * (1.0 / 3.0 + z * (-0.25 + z * (
            0.2 + z * (-1.0 / 6.0))))))
    scaled[0] = -1.0
    return x + log1p(exp(-2.0 * x))


cdef inline double log_weight(double coef, double a) noexcept nogil:
    # log(2 cosh(coef |a|)), log_weight_scaled's bits
    cdef double unused
    return log_weight_scaled(coef, a, &unused)


def log_weight_array(double coef, const double[::1] a):
    """The kernels' log-weight log(2 cosh(coef*|a|)) of each entry (for tests)."""
    out = np.empty(a.shape[0])
    cdef double[::1] o = out
    cdef intp_t i
    for i in range(a.shape[0]):
        o[i] = log_weight(coef, a[i])
    return out


def log_weight_scaled_array(double coef, const double[::1] a):
    """The kernels' log-weights and scaled weights (``cosh(coef*|a|)``, or -1 where
    the sampler computes the weight by ``exp``) of each entry, as the fast solver
    gives them to the grouped sampler (``offset = log 2``)."""
    out = np.empty(a.shape[0])
    sc = np.empty(a.shape[0])
    cdef double[::1] o = out, s = sc
    cdef intp_t i
    for i in range(a.shape[0]):
        o[i] = log_weight_scaled(coef, a[i], &s[i])
    return out, sc


#: The offset of the scaled weights log_weight_scaled_array returns.
SCALED_OFFSET = LN2


cdef inline double rnm_noise(bitgen_t* rng, bint gumbel, double scale) noexcept nogil:
    if gumbel:
        return standard_gumbel(rng)
    return laplace(rng, scale)


cdef inline double draw_sign(bitgen_t* rng, double coef, double a) noexcept nogil:
    # Exponential mechanism over the two signs of coordinate j: the descent
    # vertex -sign(a) * l1_bound * e_j has weight exp(coef*|a|), the ascent one
    # exp(-coef*|a|).  Returns sigma, the sign of the vertex.
    if uniform(rng) < sigmoid(2.0 * coef * fabs(a)):
        return -sign_of(a)
    return sign_of(a)


@cython.final
cdef class FWStats:
    """Counters of one Frank-Wolfe run (work done, for benchmarks and tests)."""
    cdef public long n_iter
    cdef public long n_refresh
    cdef public long touched_rows
    cdef public long touched_nnz
    cdef public long selector_updates
    cdef public long sampler_group_resums
    cdef public long sampler_rebuilds
    cdef public long n_full_refresh     # refreshes done by a full pass over X
    cdef public long refresh_nnz        # non-zeros processed by refreshes (in touched_nnz)
    cdef public long n_full_steps       # fast steps that updated alpha by a full pass

    def as_dict(self):
        return dict(n_iter=self.n_iter, n_refresh=self.n_refresh,
                    n_full_refresh=self.n_full_refresh, refresh_nnz=self.refresh_nnz,
                    n_full_steps=self.n_full_steps,
                    touched_rows=self.touched_rows, touched_nnz=self.touched_nnz,
                    selector_updates=self.selector_updates,
                    sampler_group_resums=self.sampler_group_resums,
                    sampler_rebuilds=self.sampler_rebuilds)


# The grouped sampler's fits number their columns by column_order from this many
# features on: there alpha (8 bytes a column) and the sampler's records (16) no
# longer fit the core's 2 MiB L2 cache beside the rest; below, the numbering
# would only cost its set-up (a pass over the indices and a copy of the CSC).
RENUMBER_MIN_FEATURES = 1 << 16


def renumbers(int selector, intp_t n_features):
    """Whether the fast solver works on its columns in :func:`column_order`'s
    numbering by default (``FastFW(renumber=-1)``): with the grouped sampler
    (``selector`` 12) on at least ``RENUMBER_MIN_FEATURES`` columns."""
    return selector == SEL_GROUPED and n_features >= RENUMBER_MIN_FEATURES


@cython.boundscheck(True)
@cython.wraparound(False)     # a negative index raises too (also in the debug build)
def _unnumber(const double[::1] v, const intp_t[::1] order):
    """out[order[i]] = v[i]: a vector in a numbering (column_order's), in the
    columns' own order (one pass)."""
    out = np.empty(v.shape[0])
    cdef double[::1] o = out
    cdef intp_t i
    if order.shape[0] != v.shape[0]:
        raise ValueError(f"order has {order.shape[0]} entries, the vector {v.shape[0]}")
    for i in range(v.shape[0]):
        o[order[i]] = v[i]               # checked: a bad order raises, never writes out
    return out


@cython.boundscheck(True)
@cython.wraparound(False)     # a negative index raises too (also in the debug build)
def _unnumber_support(const double[::1] v, const intp_t[::1] order,
                      const int32_t[::1] support, double scale):
    """out[order[j]] = v[j] * scale for j in ``support``, 0.0 elsewhere: the
    columns' own order of a vector in a numbering that is zero off ``support``."""
    out = np.zeros(v.shape[0])
    cdef double[::1] o = out
    cdef intp_t r, j
    if order.shape[0] != v.shape[0]:
        raise ValueError(f"order has {order.shape[0]} entries, the vector {v.shape[0]}")
    for r in range(support.shape[0]):
        j = support[r]
        o[order[j]] = v[j] * scale       # checked: a bad index raises
    return out


cdef class _FWBase:
    """State shared by both solvers: the data views and the iteration counter."""
    cdef const float64_t[::1] r_data
    cdef const index_t[::1] r_indices
    cdef const index_t[::1] r_indptr
    cdef const float64_t[::1] c_data
    cdef const index_t[::1] c_indices
    cdef const index_t[::1] c_indptr
    cdef const float64_t[::1] y
    cdef intp_t n_samples
    cdef intp_t n_features
    cdef double l1_bound
    cdef int selector
    cdef double mech_coef
    cdef object bit_generator
    cdef double[::1] alpha
    cdef double[::1] buf            # O(D) scratch for the O(D) private selectors
    cdef public long t              # iterations done
    cdef readonly double t_offset   # t0 of the step size 2 / (t + t0 + 2) (set_start)
    cdef public FWStats stats

    def __init__(self, r_data, r_indices, r_indptr, c_data, c_indices, c_indptr, y,
                 double l1_bound, int selector, double coef, bit_generator,
                 bint int64_indices=True):
        # int64_indices=False (FastFW): the index arrays are not kept as int64
        # views (the subclass keeps its own int32 copies; int32 input is not copied)
        self.r_data = r_data
        if int64_indices:
            self.r_indices = r_indices
            self.c_indices = c_indices
        self.r_indptr = np.asarray(r_indptr, dtype=np.int64)
        self.c_data = c_data
        self.c_indptr = np.asarray(c_indptr, dtype=np.int64)
        self.y = y
        self.n_samples = r_indptr.shape[0] - 1
        self.n_features = c_indptr.shape[0] - 1
        self.l1_bound = l1_bound
        self.selector = selector
        self.mech_coef = coef
        self.bit_generator = bit_generator
        self.alpha = np.zeros(self.n_features)
        self.buf = np.zeros(self.n_features if selector == SEL_EXPONENTIAL else 0)
        self.t = 0
        self.t_offset = 0.0
        self.stats = FWStats()

    cdef void check_start(self, const double[::1] w0, double t_offset) except *:
        # set_start's checks: before any step, D entries, in the L1 ball, t0 >= 0
        if self.t != 0:
            raise ValueError("set_start must come before the first step")
        if w0.shape[0] != self.n_features:
            raise ValueError(f"w0 has {w0.shape[0]} entries, expected {self.n_features}")
        w = np.asarray(w0)
        if not np.all(np.isfinite(w)) or np.abs(w).sum() > self.l1_bound * (1.0 + 1e-12):
            raise ValueError("w0 must be finite and in the L1 ball of radius l1_bound")
        if not (t_offset >= 0.0 and isfinite(t_offset)):
            raise ValueError(f"t_offset must be finite and >= 0, got {t_offset}")

    def run(self, long n_steps, double[::1] gaps, double tol=-INFINITY):
        """Run ``n_steps`` iterations, writing the (sum-form) FW gap of each to
        ``gaps[t]``.  Stops early when gap <= tol.  Returns the steps done."""
        cdef bitgen_t* rng = get_bitgen(self.bit_generator)
        cdef long done = 0
        if n_steps < 0 or gaps.shape[0] < self.t + n_steps:
            raise ValueError(f"gaps must have room for iterations {self.t + 1}.."
                             f"{self.t + n_steps}, it has {gaps.shape[0]} entries")
        with self.bit_generator.lock, nogil:
            done = self._run(n_steps, gaps, tol, rng)
        return done

    cdef long _run(self, long n_steps, double[::1] gaps, double tol,
                   bitgen_t* rng) noexcept nogil:
        # the solver's iterations (subclasses)
        return 0

    cdef void xt_q(self, const double[::1] q) noexcept nogil:
        # alpha = X^T q by columns (CSC gather: sequential writes)
        # (local memoryviews: C cannot hoist self->buffer loads out of the loop)
        cdef intp_t j
        cdef index_t p
        cdef double acc
        cdef const float64_t[::1] data = self.c_data
        cdef const index_t[::1] indices = self.c_indices, indptr = self.c_indptr
        cdef double[::1] alpha = self.alpha
        for j in range(self.n_features):
            acc = 0.0
            for p in range(indptr[j], indptr[j + 1]):
                acc = acc + data[p] * q[indices[p]]
            alpha[j] = acc

    cdef intp_t select_dense(self, bitgen_t* rng, double* sigma) noexcept nogil:
        # The O(D) selectors; returns j and writes the vertex sign to sigma.
        cdef intp_t j, best = 0, n = self.n_features
        cdef double a, m, v, g1, g2, total, target, acc, scale, c = self.mech_coef
        cdef bint gumbel
        cdef double[::1] alpha = self.alpha
        if self.selector == SEL_ARGMAX:
            m = -1.0
            for j in range(n):
                a = fabs(alpha[j])
                if a > m:
                    m = a
                    best = j
            sigma[0] = -sign_of(alpha[best])
            return best
        if self.selector == SEL_NOISY_MAX or self.selector == SEL_LAPLACE:
            # report-noisy-max over the 2D signed vertices sigma*e_j with score
            # -sigma*alpha_j: Gumbel noise on the scaled score is the exponential
            # mechanism (Gumbel-max trick); Laplace noise of scale c is Talwar's.
            gumbel = self.selector == SEL_NOISY_MAX
            scale = c if gumbel else 1.0
            m = -INFINITY
            for j in range(n):
                a = scale * alpha[j]
                g1 = -a + rnm_noise(rng, gumbel, c)     # vertex +l1_bound e_j
                g2 = a + rnm_noise(rng, gumbel, c)      # vertex -l1_bound e_j
                if g1 > m:
                    m = g1
                    best = j
                    sigma[0] = 1.0
                if g2 > m:
                    m = g2
                    best = j
                    sigma[0] = -1.0
            return best
        # SEL_EXPONENTIAL: inverse CDF over coordinates, then the sign.  Pass 1:
        # the largest |alpha_j|; pass 2: the exact weights exp(c a - M) +
        # exp(-c a - M) of both signs into buf and their sum; pass 3: adds only.
        m = 0.0
        for j in range(n):
            a = fabs(alpha[j])
            if a > m:
                m = a
        m = c * m
        total = 0.0
        for j in range(n):
            a = c * fabs(alpha[j])
            v = exp(a - m) + exp(-a - m)
            self.buf[j] = v
            total = total + v
        target = uniform(rng) * total
        acc = 0.0
        best = n - 1
        for j in range(n):
            acc = acc + self.buf[j]
            if acc > target:
                best = j
                break
        sigma[0] = draw_sign(rng, c, alpha[best])
        return best


cdef class StandardFW(_FWBase):
    """Algorithm 1 of Raff, Khanna and Lu (2023): dense-work Frank-Wolfe with sparse mat-vecs.

    Parameters (positional): CSR data/indices/indptr, CSC data/indices/indptr,
    y (float64, {0,1}), l1_bound, selector code, coef (see module comment),
    bit_generator (numpy BitGenerator).
    """
    cdef double[::1] w
    cdef double[::1] v
    cdef double[::1] q

    def __init__(self, *args):
        _FWBase.__init__(self, *args)
        if self.selector in (SEL_PAIRING, SEL_FIBONACCI, SEL_GROUPED):
            raise ValueError("the standard solver supports the argmax, exponential, "
                             "noisy_max and laplace selectors")
        self.w = np.zeros(self.n_features)
        self.v = np.zeros(self.n_samples)
        self.q = np.zeros(self.n_samples)

    cdef long _run(self, long n_steps, double[::1] gaps, double tol,
                   bitgen_t* rng) noexcept nogil:
        cdef intp_t i, j, n = self.n_samples, d = self.n_features
        cdef index_t p
        cdef long step
        cdef double acc, eta, s, sigma = 1.0, aw, gap
        cdef double[::1] w = self.w, v = self.v, q = self.q, alpha = self.alpha
        cdef const float64_t[::1] data = self.r_data, y = self.y
        cdef const index_t[::1] indices = self.r_indices, indptr = self.r_indptr
        for step in range(n_steps):
            self.t += 1
            # v = X w, q = grad of the loss at v (CSR)
            for i in range(n):
                acc = 0.0
                for p in range(indptr[i], indptr[i + 1]):
                    acc = acc + data[p] * w[indices[p]]
                v[i] = acc
                q[i] = sigmoid(acc) - y[i]
            self.xt_q(q)
            j = self.select_dense(rng, &sigma)
            s = sigma * self.l1_bound
            aw = 0.0
            for i in range(d):
                aw = aw + alpha[i] * w[i]
            gap = aw - s * alpha[j]
            gaps[self.t - 1] = gap
            eta = 2.0 / (self.t + self.t_offset + 2.0)
            for i in range(d):
                w[i] = (1.0 - eta) * w[i]
            w[j] = w[j] + eta * s
            self.stats.n_iter += 1
            self.stats.touched_nnz += 2 * self.r_indptr[n]
            if gap <= tol:
                return step + 1
        return n_steps

    def set_start(self, w0, double t_offset):
        """Start from ``w0`` (D floats, in the L1 ball) with the step size
        ``2 / (t + t_offset + 2)``; before the first step."""
        w0 = np.ascontiguousarray(w0, dtype=np.float64)
        self.check_start(w0, t_offset)
        np.asarray(self.w)[:] = w0
        self.t_offset = t_offset

    def coef(self):
        return np.asarray(self.w).copy()


cdef class FastFW(_FWBase):
    """Algorithm 2 of Raff, Khanna and Lu (2023) with bounded-staleness refresh.

    Positional parameters as StandardFW, except that the CSR/CSC index arrays
    may be int32 (used without a copy) or int64 (copied to int32 once); indptr
    may be either.  Extra parameters (keyword): refresh_tol (rho in [0, inf]), group_size
    (grouped sampler; 0 = ceil(sqrt(D))), refresh_mode (REFRESH_AUTO: cost
    model; REFRESH_FULL: every refresh is a full pass over X, as in the paper's
    text; REFRESH_INCREMENTAL: only rows whose gradient changed, for tests).

    The refresh (bounded staleness; Algorithm 2 as printed keeps stale q) makes q_i = sigmoid(x_i.w) - y_i
    exact for every row and alpha = X^T q, h = <alpha, wt> consistent with it;
    it runs at the same steps and yields the same q as a recomputation from
    scratch.  Only its cost (hence the fit time: a timing side channel like that
    of the sparse steps themselves; the counters n_full_refresh and refresh_nnz
    are not released by private fits) is data-dependent:

    * a row whose margin is 0 (no chosen feature) or whose recomputed gradient
      equals the stored one contributes nothing to the change of alpha, so
      alpha += X^T (q_new - q_old) over the *changed* rows only (CSR scatter);
      when those rows hold more than FULL_PASS_FRACTION(_TRACKED) of nnz(X), or the
      incremental refreshes since the last full pass have processed more than
      DRIFT_PASSES * nnz(X), alpha = X^T q is recomputed from scratch (CSC
      gather, the summation order of StandardFW, bit for bit);
    * the scale w_m is folded into wt over the chosen coordinates only, and the
      gap term h = <alpha, wt> is summed over them in increasing order (the
      other terms are +-0, so this is the full sum bit for bit);
    * the coordinates whose alpha_j changed (bitwise) are marked in a bit map
      (no branch in the scatter); the selector is updated for them only, in
      increasing order.  When more than REBUILD_FRACTION of the D coordinates
      changed, the heaps are rebuilt and the grouped sampler takes the new
      log-weights and re-sums its groups exactly (``reweight_batch``: the state
      of a rebuild at the sampler's current reference, without an exp for the
      unchanged coordinates).  An unchanged alpha_j keeps its stored
      log-weight / heap key, which is what a recomputation would give.

    A step applies the same rule: when the rows whose gradient the step changed
    hold more than FULL_PASS_FRACTION(_TRACKED) of nnz(X) (the mechanism drew a frequent
    feature), alpha = X^T q is recomputed by one full pass and the selector
    rebuilt or updated from the marks, instead of a scatter over those rows and
    one selector update per coordinate; such a step costs about one pass over X,
    less than a standard step (two passes and O(D) work), so the fast solver's
    time per step is bounded by the standard one's.  Counter: FWStats.n_full_steps (not released by
    private fits).

    ``renumber``: 1 works on the columns in :func:`column_order`'s numbering
    (frequent features first, so that their entries of alpha, of the marks and of
    the sampler's records stay in cache), 0 in their own order, -1 (default) the
    former with the grouped sampler on at least RENUMBER_MIN_FEATURES columns.
    The numbering changes neither alpha (each column is summed in its own
    order), nor the margins, nor the law of a private step (the exponential
    mechanism over the same vertices); it changes
    which vertex a given uniform draws (the sampler's groups follow the
    numbering; the Dask fit's selector takes the same numbering), the order of
    the heaps' and argmax's ties, and the rounding of the gap term h (summed in
    the numbering's increasing order).  ``set_start``, ``coef`` and ``state``
    speak the columns' own order; ``order`` is the numbering (None: the
    columns' own).

    ``column_order``: the arrays given are already in a numbering, as
    :func:`csr_to_numbered_csc` returns them (column i of the arrays is column
    ``column_order[i]`` of X; ``renumber`` is then not applied).  The estimator
    passes its kernel views so when ``renumbers(selector, D)``: the CSC in the
    columns' own order is then never built.

    ``from_csr_to_csc=True`` says that the CSC arrays were built by
    :func:`csr_to_csc` (or :func:`csr_to_numbered_csc`) from the given CSR arrays
    in canonical form (sorted column indices, no duplicates), as the estimator's
    kernel views are: the scans for repeated rows in a column and for binary
    values are then skipped (the builder's output answers both).

    Indices are read as int32 (half the memory traffic of int64; int32 input,
    what the estimator passes, is used without a copy), and
    when every stored value of X is 1.0 the multiplications by it are skipped
    (x * 1.0 == x exactly, so the results are unchanged).
    """
    cdef double[::1] wt
    cdef double w_m
    cdef double[::1] vt
    cdef double[::1] q
    cdef double h                 # <alpha, wt>
    cdef double prod              # product of (1 - eta) since the last refresh
    cdef double refresh_tol
    cdef uint64_t[::1] marks               # changed coordinates, one bit each (_test_and_mark)
    cdef int32_t[::1] dirty_list
    cdef LazyMaxQueue queue
    cdef GroupedExpSampler sampler
    cdef const int32_t[::1] r_idx          # int32 copies of the index arrays
    cdef const int32_t[::1] c_idx
    cdef bint binary                       # every stored value of X is 1.0
    cdef long nnz
    cdef int32_t[::1] support              # coordinates ever chosen (only they have wt != 0)
    cdef intp_t n_support
    cdef bint support_sorted
    cdef unsigned char[::1] in_support
    cdef int32_t[::1] rows                 # refresh scratch: rows whose gradient changed
    cdef double[::1] gam                   # ... and by how much
    cdef int refresh_mode
    cdef double drift_nnz                  # nnz processed incrementally since the last full pass
    cdef double full_fraction              # FULL_PASS_FRACTION(_TRACKED) for this selector
    cdef bint selector_ready               # the selector holds every coordinate
    cdef double[::1] lw_buf                # new log-weights of one batched sampler update
    cdef double[::1] sc_buf                # ... and their scaled weights (log_weight_scaled)
    cdef int32_t[::1] part_buf             # ... and their positions split by formula (list_log_weights)
    cdef bint split_formulas               # list_log_weights splits its next block
    cdef intp_t[::1] lanes                 # column bounds of the full pass (_gather_parts)
    cdef intp_t[::1] tails                 # ... and of its short-column ranges (_full_pass_lanes)
    cdef int n_threads                     # OpenMP threads of the full pass and of long columns
    cdef bint distinct_rows                # no column lists a row twice (parallel row updates)
    cdef readonly object order             # column_order's numbering, or None (columns' own)

    def __init__(self, *args, double refresh_tol=0.1, long group_size=0,
                 int refresh_mode=RF_AUTO, bint from_csr_to_csc=False,
                 int renumber=-1, column_order=None):
        _FWBase.__init__(self, *args, int64_indices=False)
        if refresh_mode not in (RF_AUTO, RF_FULL, RF_INCREMENTAL):
            raise ValueError(f"refresh_mode must be 0, 1 or 2, got {refresh_mode}")
        if self.n_samples >= 2 ** 31 - 1 or self.n_features >= 2 ** 31 - 1:
            raise ValueError("the fast solver needs n_samples and n_features below 2**31 - 1")
        self.refresh_tol = refresh_tol
        self.refresh_mode = refresh_mode
        # int32 or int64 index arrays are accepted; int32 ones are used as they are
        self.r_idx = np.asarray(args[1]).astype(np.int32, copy=False)
        self.c_idx = np.asarray(args[4]).astype(np.int32, copy=False)
        self.n_threads = 1
        self.lanes, self.tails = _full_pass_lanes(self.c_indptr, 1)
        if self.r_idx.shape[0] != self.r_data.shape[0] or self.c_idx.shape[0] != self.c_data.shape[0]:
            raise ValueError("index and data arrays of X differ in length")
        self.nnz = self.r_indptr[self.n_samples]
        if from_csr_to_csc:
            # the caller built the CSC arrays by csr_to_csc from these CSR arrays,
            # canonical (kernel_views): its rows increase within every column, and
            # its values are the CSR array itself exactly when every value is 1.0
            # (both scans below are then known: two passes over X saved)
            self.distinct_rows = True
            self.binary = self.nnz == 0 or (
                self.c_data.shape[0] > 0 and &self.c_data[0] == &self.r_data[0])
        else:
            with nogil:
                self.distinct_rows = _rows_increase(self.c_indptr, self.c_idx)
                # (the CSC values are the CSR array itself for binary data: csr_to_csc)
                self.binary = _all_ones(self.r_data) and (
                    self.c_data.shape[0] == 0 or &self.c_data[0] == &self.r_data[0]
                    or _all_ones(self.c_data))
        self.order = None
        if column_order is not None:
            column_order = np.asarray(column_order, dtype=np.intp)
            if column_order.shape != (self.n_features,):
                raise ValueError(f"column_order must have {self.n_features} entries, "
                                 f"got shape {column_order.shape}")
            if not np.array_equal(column_order, np.arange(self.n_features)):
                self.order = column_order
        else:
            if renumber == -1:
                renumber = renumbers(self.selector, self.n_features)
            if renumber and self.n_features > 1:
                self._renumber_columns()
        self.wt = np.zeros(self.n_features)
        self.w_m = 1.0
        self.vt = np.zeros(self.n_samples)
        self.q = np.zeros(self.n_samples)
        self.h = 0.0
        self.prod = 1.0
        self.marks = np.zeros(_n_mark_words(self.n_features) + 1, dtype=np.uint64)
        self.dirty_list = np.zeros(self.n_features + 1, dtype=np.int32)  # +1: branch-free append
        self.support = np.zeros(self.n_features, dtype=np.int32)
        self.n_support = 0
        self.support_sorted = True
        self.in_support = np.zeros(self.n_features, dtype=np.uint8)
        self.rows = np.zeros(self.n_samples, dtype=np.int32)
        self.gam = np.zeros(self.n_samples)
        self.drift_nnz = 0.0
        self.full_fraction = FULL_PASS_FRACTION
        if self.selector in (SEL_PAIRING, SEL_FIBONACCI, SEL_GROUPED):
            self.full_fraction = FULL_PASS_FRACTION_TRACKED
        self.selector_ready = False
        if self.selector == SEL_PAIRING:
            self.queue = LazyMaxQueue("pairing", self.n_features)
        elif self.selector == SEL_FIBONACCI:
            self.queue = LazyMaxQueue("fibonacci", self.n_features)
        elif self.selector == SEL_GROUPED:
            self.sampler = GroupedExpSampler(self.n_features,
                                             group_size if group_size > 0 else None)
            self.lw_buf = np.zeros(self.n_features + 1)
            self.sc_buf = np.zeros(self.n_features + 1)
            self.part_buf = np.zeros(LOG_WEIGHT_BLOCK, dtype=np.int32)
            self.split_formulas = True

    def _renumber_columns(self):
        # Work on the columns in column_order's numbering: the CSR indices mapped
        # (each row's entries keep their positions, so every row is summed and
        # scattered in the same order), the CSC columns copied in the new order
        # (each column's rows unchanged, so each alpha_j is the same sum, bit for
        # bit; binary data: the CSC values are all 1.0 in any order and may be
        # the CSR array itself, other data: copied too).  set_start, coef and
        # state map between the numberings.
        order, new_index, new_indptr, new_idx, new_data = _number_columns(
            self.c_indptr, self.c_idx, None if self.binary else self.c_data)
        if np.array_equal(order, np.arange(self.n_features)):
            return
        self.r_idx = _map_indices(self.r_idx, new_index)
        self.c_indptr = new_indptr
        self.c_idx = new_idx
        if new_data is not None:
            self.c_data = new_data
        self.lanes, self.tails = _full_pass_lanes(self.c_indptr, 1)
        self.order = order

    def _to_columns(self, v):
        # a vector in the kernel's numbering, in the columns' own order
        if self.order is None:
            return np.asarray(v)
        return _unnumber(v, self.order)

    def run(self, long n_steps, double[::1] gaps, double tol=-INFINITY):
        """Run ``n_steps`` iterations (see _FWBase.run) on the OpenMP threads
        available now (_openmp_effective_n_threads; the results do not depend
        on their number)."""
        cdef int n_threads = _openmp_effective_n_threads()
        if n_threads != self.n_threads:
            self.n_threads = n_threads
            self.lanes, self.tails = _full_pass_lanes(self.c_indptr, n_threads)
        cdef long done = _FWBase.run(self, n_steps, gaps, tol)
        if self.sampler is not None:
            self.stats.sampler_group_resums = self.sampler.n_group_resums
            self.stats.sampler_rebuilds = self.sampler.n_rebuilds
        if done < 0:
            raise FloatingPointError("the grouped sampler found no positive weight "
                                     "(non-finite gradient); check the data")
        return done

    def set_start(self, w0, double t_offset):
        """Start from ``w0`` (D floats, in the L1 ball) with the step size
        ``2 / (t + t_offset + 2)``; before the first step.

        Sets wt = w0 (w_m = 1), the margins vt = X w0 (CSR, each row summed in
        order) and the support (the non-zeros of w0, increasing); the first step's
        refresh then computes q, alpha and h from them, as for the zero start.
        """
        w0 = np.ascontiguousarray(w0, dtype=np.float64)
        self.check_start(w0, t_offset)
        if self.order is not None:      # in the kernel's numbering (_renumber_columns)
            w0 = np.ascontiguousarray(w0[self.order])
        cdef const double[::1] w = w0
        cdef intp_t i, j
        cdef index_t p
        cdef double acc
        for j in range(self.n_features):
            # (a zero of w0, -0.0 too, stays the +0.0 of wt: only the support is
            # ever non-zero, which coef() relies on)
            if w[j] != 0.0:
                self.wt[j] = w[j]
                self.in_support[j] = 1
                self.support[self.n_support] = <int32_t> j
                self.n_support += 1
        for i in range(self.n_samples):
            acc = 0.0
            for p in range(self.r_indptr[i], self.r_indptr[i + 1]):
                acc = acc + self.r_data[p] * w[self.r_idx[p]]
            self.vt[i] = acc
        self.t_offset = t_offset

    def state(self):
        """Copies of the maintained state (for tests): w_m, wt, vt, q, alpha, h,
        and with the grouped sampler the log-weights it holds (sampler_log_weights;
        -inf before the first refresh)."""
        out = dict(w_m=self.w_m, wt=self._to_columns(self.wt).copy(),
                   vt=np.asarray(self.vt).copy(), q=np.asarray(self.q).copy(),
                   alpha=self._to_columns(self.alpha).copy(), h=self.h, prod=self.prod)
        if self.sampler is not None:
            out["sampler_log_weights"] = self._to_columns(
                np.ascontiguousarray(self.sampler.logw)).copy()
        return out

    cdef void full_alpha(self, bint mark) noexcept nogil:
        # alpha = X^T q by columns (CSC gather), the summation order of xt_q
        # (_gather_columns: several columns side by side, each summed in order);
        # with ``mark``, j is marked where alpha_j changed (bitwise; the marks
        # are clear: every path that marks lists and clears them after)
        if self.n_features == 0:
            return
        _gather_parts(&self.c_indptr[0], &self.c_idx[0] if self.nnz > 0 else NULL,
                      &self.c_data[0] if self.c_data.shape[0] > 0 else NULL,
                      &self.q[0] if self.n_samples > 0 else NULL, &self.alpha[0],
                      &self.marks[0], &self.lanes[0], (self.lanes.shape[0] - 1) // N_LANES,
                      &self.tails[0], self.n_threads, mark, self.binary)

    cdef intp_t column_rows_parallel(self, intp_t j, double delta, double w_m,
                                     double* h_io, long* work_out) noexcept nogil:
        # A step's row updates for a long column j (the serial loop in _run, same
        # bits): the margins, gradients and their changes gam[k] (k the position in
        # the column) on n_threads threads, every write at a row of the column's
        # own (its rows are distinct); then on one thread, in column order, the
        # gap term h and the list of the rows whose gradient changed.  Returns
        # their number; work_out: their non-zeros.
        cdef index_t lo = self.c_indptr[j]
        cdef intp_t k, n = self.c_indptr[j + 1] - lo, n_rows = 0, i
        cdef const int32_t* ci = &self.c_idx[lo]
        cdef const float64_t* cd = NULL
        cdef double* vt = &self.vt[0]
        cdef double* q = &self.q[0]
        cdef double* gam = &self.gam[0]
        cdef const float64_t* y = &self.y[0]
        cdef const index_t* r_indptr = &self.r_indptr[0]
        cdef int32_t* rows = &self.rows[0]
        cdef bint binary = self.binary
        cdef double g, h = h_io[0]
        cdef long work = 0
        if not binary:
            cd = &self.c_data[lo]
        for k in prange(n, num_threads=self.n_threads, schedule="static"):
            gam[k] = _row_step(vt, q, y, ci[k], delta if binary else delta * cd[k], w_m)
        for k in range(n):
            g = gam[k]
            if g == 0.0:
                continue
            i = ci[k]
            h = h + g * vt[i]
            rows[n_rows] = <int32_t> i
            gam[n_rows] = g
            n_rows += 1
            work += r_indptr[i + 1] - r_indptr[i]
        h_io[0] = h
        work_out[0] = work
        return n_rows

    cdef void list_log_weights(self, intp_t n, bint unmark) noexcept nogil:
        # lw_buf[r], sc_buf[r] = log_weight_scaled(coef, alpha_k) and its scaled
        # weight for the coordinates k = dirty_list[r], r < n (with ``unmark``,
        # their marks cleared), in blocks of LOG_WEIGHT_BLOCK coordinates (their
        # buffers stay in the L1 cache).  Which formula a coordinate takes (series
        # or table) is a branch no predictor follows when both are frequent (at
        # eps 1 on IMDB about half of a step's coordinates take each): a block
        # is then split by formula first (x in lw_buf[r]; r listed from the front
        # of part_buf for the series, from its back for the table, both slots
        # written and one count moved: no branch), and each formula runs over
        # its own list.  When the last block's coordinates mostly took one
        # formula (outside SPLIT_SHARE_LO .. SPLIT_SHARE_HI), the branch is cheaper
        # than the split and the block is computed in order.  Same bits either way.
        cdef intp_t r, r0, r1, k, kk, i, n_series, n_table
        cdef double c = self.mech_coef, x
        cdef bint series, split
        cdef const double* alpha = &self.alpha[0]
        cdef uint64_t* marks = &self.marks[0]
        cdef const int32_t* dirty_list = &self.dirty_list[0]
        cdef double* lwb = &self.lw_buf[0]
        cdef double* scb = &self.sc_buf[0]
        cdef int32_t* part = &self.part_buf[0]
        r0 = 0
        while r0 < n:
            r1 = r0 + LOG_WEIGHT_BLOCK if r0 + LOG_WEIGHT_BLOCK < n else n
            n_series = 0
            n_table = 0
            split = self.split_formulas
            for r in range(r0, r1):
                if r + PF < n:
                    kk = dirty_list[r + PF]
                    prefetch(&alpha[kk])
                k = dirty_list[r]
                if unmark:
                    _unmark(marks, k)
                x = c * fabs(alpha[k])
                series = x < LWT_SERIES_BELOW
                if split:
                    lwb[r] = x
                    part[n_series] = <int32_t> r
                    part[r1 - r0 - 1 - n_table] = <int32_t> r
                    n_table += 1 - series
                elif series:
                    lwb[r] = _log_weight_series(x, &scb[r])
                else:
                    lwb[r] = _log_weight_table(x, &scb[r])
                n_series += series
            if split:
                for i in range(n_series):
                    r = part[i]
                    lwb[r] = _log_weight_series(lwb[r], &scb[r])
                for i in range(r1 - r0 - n_table, r1 - r0):
                    r = part[i]
                    lwb[r] = _log_weight_table(lwb[r], &scb[r])
            self.split_formulas = (SPLIT_SHARE_LO * (r1 - r0) <= n_series
                                   <= SPLIT_SHARE_HI * (r1 - r0))
            r0 = r1

    def _log_weights_of(self, coordinates, bint split):
        """(log-weights, scaled weights) of the kernel's alpha at ``coordinates``
        (in its numbering) by list_log_weights, its first block split by formula
        or not (for tests; the grouped sampler's kernel only)."""
        cdef const int32_t[::1] ks = np.asarray(coordinates, dtype=np.int32)
        cdef intp_t r, n = ks.shape[0]
        if self.sampler is None or n > self.n_features:
            raise ValueError("a grouped kernel and at most n_features coordinates")
        for r in range(n):
            if not 0 <= ks[r] < self.n_features:
                raise ValueError("coordinates out of range")
            self.dirty_list[r] = ks[r]
        self.split_formulas = split
        self.list_log_weights(n, False)
        return (np.asarray(self.lw_buf)[:n].copy(), np.asarray(self.sc_buf)[:n].copy())

    cdef void update_selector(self, intp_t n_dirty) noexcept nogil:
        # one queue/sampler update per listed coordinate; clears their marks
        cdef intp_t r, k
        cdef double[::1] alpha = self.alpha
        cdef uint64_t* marks = &self.marks[0]
        cdef const int32_t[::1] dirty_list = self.dirty_list
        if self.selector == SEL_PAIRING or self.selector == SEL_FIBONACCI:
            for r in range(n_dirty):
                k = dirty_list[r]
                _unmark(marks, k)
                self.queue.update(k, alpha[k])
        elif self.selector == SEL_GROUPED:
            # the new log-weights in list order, then one batched sampler update
            # (same weights as one update per coordinate; each changed group's
            # sum checked and the total updated once: _grouped_sampler)
            # (and their scaled weights: no exp in the sampler for most of them)
            self.list_log_weights(n_dirty, True)
            if n_dirty > 0:
                self.sampler._batch(&dirty_list[0], &self.lw_buf[0], &self.sc_buf[0], LN2,
                                    n_dirty, False)
        else:
            for r in range(n_dirty):
                _unmark(marks, dirty_list[r])
        self.stats.selector_updates += n_dirty

    cdef void selector_from_marks(self, bint force_rebuild) noexcept nogil:
        # The coordinates whose alpha changed are marked: list them in increasing
        # order and clear the marks (one pass over the mark words), then
        # bring the selector up to date for them.  Many changed coordinates
        # (more than REBUILD_FRACTION of D, or forced for the heaps): the heaps
        # are rebuilt; the sampler takes the new log-weights and re-sums every
        # group exactly (reweight_batch: no exp for the unchanged coordinates).
        # Few: one batched update (update_selector).
        cdef intp_t w, n_dirty = 0
        cdef intp_t n_words = _n_mark_words(self.n_features)
        cdef uint64_t word
        cdef uint64_t* marks = &self.marks[0]
        cdef int32_t[::1] dirty_list = self.dirty_list
        for w in range(n_words):
            word = marks[w]
            while word != 0:
                dirty_list[n_dirty] = <int32_t> ((w << 6) + ctz64(word))
                n_dirty += 1
                word = word & (word - 1)
        memset(marks, 0, n_words * sizeof(uint64_t))
        self.selector_from_list(n_dirty, force_rebuild)

    cdef void selector_from_list(self, intp_t n_dirty, bint force_rebuild) noexcept nogil:
        # the selector brought up to date for the n_dirty coordinates listed in
        # dirty_list, in increasing order (selector_from_marks)
        cdef intp_t d = self.n_features
        cdef int32_t[::1] dirty_list = self.dirty_list
        cdef bint many = n_dirty > REBUILD_FRACTION * d
        if self.selector == SEL_GROUPED and many:
            self.list_log_weights(n_dirty, False)     # (the marks are clear)
            self.sampler._batch(&dirty_list[0], &self.lw_buf[0], &self.sc_buf[0], LN2,
                                n_dirty, True)
            self.stats.selector_updates += n_dirty
        elif (self.selector == SEL_PAIRING or self.selector == SEL_FIBONACCI) and (
                force_rebuild or many):
            self.queue.build(self.alpha)
        else:
            self.update_selector(n_dirty)

    cdef void refresh(self) noexcept nogil:
        # Exact q for every row at the current scale; alpha, h and the selector
        # brought up to date (class docstring).
        cdef intp_t i, j, k, r, n = self.n_samples, d = self.n_features
        cdef intp_t n_rows = 0, n_dirty = 0
        cdef long work = 0
        cdef double h = 0.0, c = self.mech_coef, w_m = self.w_m, qn, g
        cdef double[::1] wt = self.wt, vt = self.vt, q = self.q, alpha = self.alpha
        cdef double[::1] gam = self.gam
        cdef double[::1] logw
        cdef const float64_t[::1] y = self.y
        cdef const index_t[::1] r_indptr = self.r_indptr
        cdef int32_t[::1] rows = self.rows, support = self.support
        cdef int32_t[::1] dirty_list = self.dirty_list
        cdef bint full, track, first
        cdef int selector = self.selector
        if w_m != 1.0:
            for r in range(self.n_support):
                j = support[r]
                wt[j] = wt[j] * w_m
            for i in range(n):
                vt[i] = vt[i] * w_m
            self.w_m = 1.0
        # exact row gradients; list the rows whose gradient changed
        for i in range(n):
            qn = sigmoid(vt[i]) - y[i]
            g = qn - q[i]
            q[i] = qn
            if g != 0.0:
                rows[n_rows] = <int32_t> i
                gam[n_rows] = g
                n_rows += 1
                work += r_indptr[i + 1] - r_indptr[i]
        if self.refresh_mode == RF_FULL:
            full = True
        elif self.refresh_mode == RF_INCREMENTAL:
            full = False
        else:
            full = (work > self.full_fraction * self.nnz
                    or self.drift_nnz + work > DRIFT_PASSES * self.nnz)
        track = (selector == SEL_PAIRING or selector == SEL_FIBONACCI
                 or selector == SEL_GROUPED)
        # the first refresh sets every coordinate's log-weight: nothing to mark
        first = track and not self.selector_ready
        if full:
            self.full_alpha(track and not first)
            self.drift_nnz = 0.0
            work = self.nnz
            self.stats.n_full_refresh += 1
        else:
            _scatter_rows(self.alpha, rows, gam, n_rows, r_indptr, self.r_idx, self.r_data,
                          self.binary, &self.marks[0], dirty_list, track)
            self.drift_nnz += work
        # gap term over the chosen coordinates, in increasing order
        if not self.support_sorted:
            qsort(&support[0], self.n_support, sizeof(int32_t), _cmp_int32)
            self.support_sorted = True
        for r in range(self.n_support):
            j = support[r]
            h = h + alpha[j] * wt[j]
        self.h = h
        self.prod = 1.0
        if first:
            # list coordinates 0 .. d - 1 (and clear the marks of an incremental
            # first refresh's scatter)
            memset(&self.marks[0], 0, _n_mark_words(d) * sizeof(uint64_t))
            for j in range(d):
                dirty_list[j] = <int32_t> j
            self.selector_ready = True
            self.selector_from_list(d, True)
        elif track:
            # (the heaps are rebuilt at every refresh, as before: their
            # tie-breaking depends on the order of insertions)
            self.selector_from_marks(selector != SEL_GROUPED)
        self.stats.n_refresh += 1
        self.stats.touched_nnz += work
        self.stats.refresh_nnz += work

    cdef long _run(self, long n_steps, double[::1] gaps, double tol,
                   bitgen_t* rng) noexcept nogil:
        cdef intp_t i, j, n_dirty
        cdef index_t p
        cdef long step
        cdef double eta, s, sigma = 1.0, gap, delta, qn, gamma, vti, c = self.mech_coef
        cdef double w_m, h
        cdef double[::1] alpha = self.alpha, vt = self.vt, q = self.q
        cdef const float64_t[::1] r_data = self.r_data, c_data = self.c_data, y = self.y
        cdef const int32_t[::1] r_idx = self.r_idx, c_idx = self.c_idx
        cdef const index_t[::1] r_indptr = self.r_indptr, c_indptr = self.c_indptr
        cdef uint64_t* marks = &self.marks[0]
        cdef int32_t[::1] dirty_list = self.dirty_list
        cdef bint binary = self.binary
        cdef int selector = self.selector
        cdef bint track = (selector == SEL_PAIRING or selector == SEL_FIBONACCI
                           or selector == SEL_GROUPED)
        cdef long touched_rows = 0, touched_nnz = 0, work
        cdef intp_t n_rows
        cdef int32_t[::1] rows = self.rows
        cdef double[::1] gam = self.gam
        if n_steps <= 0:
            return 0
        for step in range(n_steps):
            self.t += 1
            if self.t == 1 or self.prod < 1.0 - self.refresh_tol:
                self.refresh()
            # choose the vertex s = sigma * l1_bound * e_j
            if selector == SEL_PAIRING or selector == SEL_FIBONACCI:
                j = self.queue.get_next(alpha)
                sigma = -sign_of(alpha[j])
            elif selector == SEL_GROUPED:
                j = self.sampler.sample(rng)
                if j < 0:       # only if a NaN reached the sampler
                    self.t -= 1
                    return -1
                sigma = draw_sign(rng, c, alpha[j])
            else:
                j = self.select_dense(rng, &sigma)
            s = sigma * self.l1_bound
            gap = self.w_m * self.h - s * alpha[j]
            gaps[self.t - 1] = gap
            # w <- (1 - eta) w + eta s, as a scale change plus one coordinate
            eta = 2.0 / (self.t + self.t_offset + 2.0)
            self.w_m = self.w_m * (1.0 - eta)
            self.prod = self.prod * (1.0 - eta)
            if self.w_m < 1e-150:
                self.rescale()
            w_m = self.w_m
            delta = eta * s / w_m
            self.wt[j] = self.wt[j] + delta
            if not self.in_support[j]:
                self.in_support[j] = 1
                self.support[self.n_support] = <int32_t> j
                if self.n_support > 0 and self.support[self.n_support - 1] > j:
                    self.support_sorted = False
                self.n_support += 1
            h = self.h + alpha[j] * delta
            # rows containing feature j: exact margins and gradients; list the
            # rows whose gradient changed (binary X: x * 1.0 == x, no multiply)
            n_rows = 0
            work = 0
            if (self.n_threads > 1 and self.distinct_rows
                    and c_indptr[j + 1] - c_indptr[j] >= PARALLEL_ROWS):
                n_rows = self.column_rows_parallel(j, delta, w_m, &h, &work)
                touched_rows += c_indptr[j + 1] - c_indptr[j]
            else:
                for p in range(c_indptr[j], c_indptr[j + 1]):
                    i = c_idx[p]
                    gamma = _row_step(&vt[0], &q[0], &y[0], i,
                                      delta if binary else delta * c_data[p], w_m)
                    touched_rows += 1
                    if gamma == 0.0:
                        continue
                    h = h + gamma * vt[i]
                    rows[n_rows] = <int32_t> i
                    gam[n_rows] = gamma
                    n_rows += 1
                    work += r_indptr[i + 1] - r_indptr[i]
            self.h = h
            if work > self.full_fraction * self.nnz:
                # those rows hold most of X: alpha = X^T q by one full pass (a
                # gather, cheaper per non-zero than the scatter; never more work
                # than a standard step) and the selector from the marks
                self.full_alpha(track)
                self.drift_nnz = 0.0
                if track:
                    self.selector_from_marks(False)
                self.stats.n_full_steps += 1
                touched_nnz += self.nnz
            else:
                # alpha += X^T gamma over those rows, each changed coordinate
                # listed once (branch-free), then one selector update each
                n_dirty = _scatter_rows(alpha, rows, gam, n_rows, r_indptr, r_idx, r_data,
                                        binary, marks, dirty_list, track)
                touched_nnz += work
                self.update_selector(n_dirty)
            self.stats.n_iter += 1
            if gap <= tol:
                break
        self.stats.touched_rows += touched_rows
        self.stats.touched_nnz += touched_nnz
        return step + 1

    cdef void rescale(self) noexcept nogil:
        # keep wt finite when w_m becomes tiny (never needed for T < 1e70 with
        # eta = 2/(t+2), kept for safety)
        cdef intp_t i
        for i in range(self.n_features):
            self.wt[i] = self.wt[i] * self.w_m
        for i in range(self.n_samples):
            self.vt[i] = self.vt[i] * self.w_m
        self.h = self.h * self.w_m
        self.w_m = 1.0

    def coef(self):
        if self.order is None:
            return np.asarray(self.wt) * self.w_m
        # w_m * wt is zero off the support (set_start, the steps): scatter the
        # support only, in the columns' own order (the same values as a dense pass)
        return _unnumber_support(self.wt, self.order, self.support[:self.n_support],
                                 self.w_m)
