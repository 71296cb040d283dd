"""Big-Step Little-Step sampler for the exponential mechanism (Raff et al. 2023, Alg. 4).

:class:`GroupedExpSampler` keeps ``n_items`` log-weights ``logw[i]`` (``-inf``
means weight 0) and draws an index ``i`` with probability
``p_i = exp(logw[i]) / sum_j exp(logw[j])``.  Changing one log-weight costs
O(1) (amortised, see *Rebuilds*); a draw costs O(n_groups + group_size), i.e.
O(sqrt(n)) with the default ``group_size = ceil(sqrt(n))``.  This is the
selection step of the private Frank-Wolfe solver (Raff, Khanna & Lu, NeurIPS
2023, Section 3.3), where every iteration changes the weights of the few
coordinates whose gradient moved and then draws one coordinate.

Representation
--------------
One global log reference ``ref`` and plain (linear-scale) doubles:
``weight[i] = exp(logw[i] - ref)``, ``group_sum[g]`` = sum of the weights of
the contiguous block ``[g * group_size, (g + 1) * group_size)`` and ``total`` =
sum of the group sums.  Groups are *contiguous* blocks, so both scans of a draw
are linear memory scans (the paper's text), not residues modulo sqrt(n) (its
pseudo-code).  ``ref`` is chosen so that the largest weight is ``exp(150)``
right after a rebuild.  Each item's ``logw`` and ``weight`` are stored side by
side (one ``(n_items, 2)`` array), so that an update reads and writes one cache
line, not one in each of two arrays; the sums run over the weights in the same
order as from a separate array, bit for bit.

Why not the paper's update (Algorithm 4 of Raff, Khanna and Lu, NeurIPS 2023)
-------------------------------------------------------------------------------
Algorithm 4 keeps *log* group sums and updates them by
``c <- c + log(1 - exp(v_old - c) + exp(v_new - c))``.  When one item dominates
its group and shrinks, ``1 - exp(v_old - c)`` cancels catastrophically: the
result keeps no correct digit (or is the log of a negative number), and the
error is never repaired, so after many updates the sampled law is no longer
the exponential mechanism.  Here every sum carries a *rigorous* bound on its
accumulated rounding error.  An update ``old -> new`` changes a group sum by
``new - old`` and adds at most ``DBL_EPSILON * (|group_sum| + new + old)`` to
its bound (one rounding for the difference, one for the sum); when the bound
exceeds ``rel_tol * group_sum`` (cancellation, or just many updates), the
group is re-summed exactly (pairwise summation, relative error below
``80 * DBL_EPSILON``).  The total is maintained the same way from the group
changes and re-summed from the group sums when its bound is violated.  Hence,
after every operation, every group sum and the total are within a relative
``rel_tol`` (default 1e-10) of the exact sums of the stored weights.  Each
update adds at least ``DBL_EPSILON * group_sum`` to the bound, so a group is
re-summed (O(group_size)) at least every ``rel_tol / DBL_EPSILON`` (~4.5e5)
of its updates, typically every ~2e5, and earlier when cancellation occurs;
the total likewise (O(n_groups)) every ~2e5 updates in all.  This is
``tests/test_grouped_sampler.py::test_paper_update_drifts``.

Why not the A-ExpJ jumps of Algorithm 4
----------------------------------------
A-ExpJ (Efraimidis & Spirakis) is a one-pass *reservoir* algorithm: it draws a
new random threshold each time the current sample changes, i.e. O(log n)
random variates, each of which may land in another group: O(sqrt(n) log n) per
draw.  Here the total weight is known, so plain inverse-CDF sampling is exact
and cheaper: one uniform picks a group by scanning the group sums (Big-Steps),
a second uniform picks the item by scanning that group (Little-Steps);
O(n_groups + group_size) per draw, no logarithms.

The second uniform (rather than reusing the residual of the first) keeps the
conditional law inside the group accurate to full double precision even when
the group holds a tiny fraction of the total mass: the residual
``u * total - (prefix sum)`` has an absolute error of order
``DBL_EPSILON * total`` and would quantise the within-group choice.

Each level uses *rejection* against a rigorous upper bound ``B`` of the sum it
scans (``B = (sum + error bound) * (1 + (len + 8) * DBL_EPSILON)``): draw
``x = U * B``; if ``x`` is not below the scanned prefix sum at the end of the
scan, redraw with ``B`` = that scanned sum (rejection happens with
probability about ``2 * rel_tol`` at most).  Conditionally on acceptance, ``x`` is
uniform on ``[0, scanned sum)``, so the probability of each group (item) is
its own floating-point increment of the scanned prefix sums: the maintained
sums' inaccuracy only enters as a *relative* factor within ``1 +- rel_tol``,
and no rounding edge can select an item of weight 0 or step out of bounds.

Floating-point guarantee (the paper's footnote 4: underflowing weights)
-----------------------------------------------------------------------
Let ``P`` be the exact law ``p_i ∝ exp(logw[i])`` of the stored log-weights and
``Q`` the law of one draw.  :meth:`GroupedExpSampler.floating_point_bounds`
returns ``(gamma, delta)`` such that, for every set ``S`` of indices,
``exp(-gamma) P(S) - delta <= Q(S) <= exp(gamma) P(S) + delta`` with
(``u = 2**-53``, ``G = n_groups``, ``m = group_size``)::

    gamma = 2.01 rel_tol + 1.05 (G + m + 1506) u        (~2.0e-10 by default)
    delta = 4.3 (G + m) u + 1.1 n exp(300) 2**-1022      (~1e-12 at n = 2**20)

Sources: the relative error of maintained sums (``2 rel_tol``); the rounding
of each prefix-sum increment (``u`` per group and per item, *additive* because
an increment is rounded relative to the prefix, not to itself: at most ``G +
m`` such terms reach any set); the 53-bit grid of the uniforms; the rounding
of ``exp(logw - ref)`` (``|logw - ref| <= 745`` ulps); and *underflow*: an
item with ``logw < ref - 708.4`` gets a subnormal or zero weight, i.e.
probability (almost) 0 instead of its true probability.  Because a rebuild is
forced whenever ``total < exp(-300)``, such an item's true probability is
below ``exp(300) * 2**-1022 = exp(-408.4)``, which gives the last term of
``delta`` (about ``1e-172 n``).  Consequently an exponential mechanism that is
``epsilon``-DP in exact arithmetic is, as implemented with this sampler,
``(epsilon + 2 gamma, (1 + exp(epsilon + 2 gamma)) delta)``-DP per draw; the
caller adds these to its budget (compose like any other per-step loss).

Batched updates
---------------
One Frank-Wolfe step changes the log-weights of thousands of coordinates spread
over most groups.  ``update_batch`` (Python: :meth:`GroupedExpSampler.update_items_batched`)
applies them in one pass: it writes every ``logw``/``weight`` exactly as the
per-item updates would (same values, same order) and adds each change to its
group sum with the same rigorous error bound, but checks each changed group's
bound (re-summing it when violated) and updates the total once per changed
group at the end of the batch instead of after every item.  The invariant above
(every group sum and the total within ``rel_tol`` of the exact sums of the
stored weights) holds after the batch, so the law of a draw and
:meth:`floating_point_bounds` are those of the per-item updates; the group sums
agree with the per-item ones bit for bit unless a group was re-summed, and the
total within the invariant.  A batch that would trigger a rebuild (or leaves or
enters the empty state) ends with one rebuild from the stored log-weights.  The
group of an item is a shift instead of a division when ``group_size`` is a
power of two (``2**20`` items: 1024).

A batch that changes a large part of the items (the refresh of the Frank-Wolfe
solver changes the gradient of most coordinates at once) is cheaper as
``reweight_batch`` (Python: :meth:`GroupedExpSampler.update_items_resummed`):
the same ``logw``/``weight`` writes, then every group sum and the total
re-summed exactly, as a rebuild does but at the current ``ref``.  The state is
then that of a rebuild with that reference, bit for bit, and the invariant
holds with fresh bounds; unlike a rebuild it spends no ``exp`` on the items
that did not change, nor a scan for the maximum.  The rebuild conditions of
the per-item updates (overflow and underflow guards, the empty state) apply
and end the batch with a rebuild, except that a re-weighting batch with scaled
weights that leaves the empty state takes the reference of a rebuild (the
largest log-weight given in the batch minus ``_REF_OFFSET``; every other weight
is 0) and stores the scaled weights: the state of a rebuild up to the scaled
weights' rounding (no ``exp`` for most items).

Scaled weights
--------------
``exp(logw - ref)`` is most of the cost of an update.  The caller of a batch may
give, with each log-weight, a *scaled weight* ``scaled = exp(logw - offset)``
for an ``offset`` of its choice, computed without ``exp`` to within a relative
``SCALED_REL_ERR = 16 u`` (``u = 2**-53``): the Frank-Wolfe solver's log-weights
are ``log(2 cosh x)``, and for small ``x`` (almost every coordinate at private
budgets) ``cosh x`` is a short polynomial, for ``x`` up to 4 the product of a
tabulated ``cosh x_k`` and a short series in ``x - x_k``
(``_fw_fast.log_weight_scaled``).  The
stored weight is then ``scale * scaled`` with ``scale = exp(offset - ref)``
computed once per batch from the exact split ``offset - ref = hi + lo``
(TwoSum), within 4 u; it is used when ``|offset - ref| <= 700``.  Such a weight
is within a relative 21 u of ``exp(logw - ref)`` for the stored ``logw``,
against ``746 u`` for ``exp(fl(logw - ref))`` itself (whose argument is rounded
at ``|logw - ref|`` up to 745): the error analysis below, which allows each
weight the latter, holds for either.  The draws' law is the same; a draw
differs from that of unscaled updates only when its uniform falls within a few
ulps of the boundary between two items (the sums' last bits may differ).  The
log-weights stored are the ones given, so rebuilds and re-sums do not depend on
which way the weights were computed.

Rebuilds
--------
A full O(n) rebuild (new ``ref``, every weight recomputed) happens when an
update sets ``logw[i] > ref + 600`` (overflow guard: the total stays below
``n exp(600)``) or leaves ``total < exp(-300)`` (underflow guard: see above).
A rebuild puts the maximum at ``ref + 150``, so before the next one the
maximum log-weight must move by more than 450 nats: the number of rebuilds is
at most ``1 + (total variation of max_i logw[i] over the updates) / 450``.  In
Frank-Wolfe the maximum drifts slowly, so rebuilds are rare; an adversary that
moves the maximum up and down by 450 nats at every update makes each update
O(n) (counted in :attr:`GroupedExpSampler.n_rebuilds`).  Setting every weight
to ``-inf`` and back is O(1) (counter :attr:`GroupedExpSampler.n_finite`).

References
----------
.. [1] E. Raff, A. Khanna, F. Lu. Scaling Up Differentially Private LASSO
   Regularized Logistic Regression via Faster Frank-Wolfe Iterations.
   NeurIPS 2023, Section 3.3, Algorithm 4.
.. [2] P. S. Efraimidis, P. G. Spirakis. Weighted random sampling with a
   reservoir. Information Processing Letters 97(5), 2006.
.. [3] N. J. Higham. Accuracy and Stability of Numerical Algorithms, 2nd ed.,
   SIAM 2002, Chapter 4 (error bounds of recursive and pairwise summation).
.. [4] I. Mironov. On significance of the least significant bits for
   differential privacy. CCS 2012.
"""
import math

import numpy as np

from libc.float cimport DBL_EPSILON
from libc.math cimport INFINITY, exp, fabs, log
from libc.string cimport memcpy
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from numpy.random cimport bitgen_t

from dptoolkit._random cimport get_bitgen, uniform
from dptoolkit._typedefs cimport intp_t

from dptoolkit._validation import check_positive_int, check_random_state, check_scalar_range

__all__ = ["GroupedExpSampler", "floating_point_bounds"]

cdef extern from *:
    """
    #define DPT_GS_PREFETCH(p) __builtin_prefetch((const void*)(p))
    """
    void prefetch "DPT_GS_PREFETCH"(const void* p) noexcept nogil

# How many items ahead a batch prefetches the record it will update (_batch).
cdef intp_t _BATCH_PREFETCH = 48

# Rebuild when an update would set logw - ref above this (overflow guard).
cdef double _REBASE_HI = 600.0
# Rebuild when the total falls below exp(-_REBASE_LO) (underflow guard).
cdef double _REBASE_LO = 300.0
cdef double _TINY = exp(-_REBASE_LO)
# After a rebuild the largest log-weight sits at ref + _REF_OFFSET.
cdef double _REF_OFFSET = 150.0
# Relative error bound of a fresh pairwise sum of non-negative terms: at most
# 15 + ceil(log2(n)) roundings of u = DBL_EPSILON / 2 each, n < 2**64.
cdef double _FRESH_REL_ERR = 80.0 * DBL_EPSILON
# Draw attempts per level before giving up (only reachable with NaN stored).
cdef int _MAX_ATTEMPTS = 64

REBASE_HI = _REBASE_HI
REBASE_LO = _REBASE_LO
REF_OFFSET = _REF_OFFSET
#: Smallest and largest accepted ``rel_tol``.
REL_TOL_RANGE = (1e-13, 1e-2)


cdef double _pairwise_sum(const double* x, intp_t n) noexcept nogil:
    """Pairwise sum (leaves of at most 16 terms summed left to right)."""
    cdef intp_t i, half
    cdef double s = 0.0
    if n <= 16:
        for i in range(n):
            s += x[i]
        return s
    half = n // 2
    return _pairwise_sum(x, half) + _pairwise_sum(x + half, n - half)


cdef double _pairwise_sum2(const double* x, intp_t n) noexcept nogil:
    """_pairwise_sum of x[0], x[2], ..., x[2 (n - 1)] (the weights, stored
    beside the log-weights): the same additions in the same order."""
    cdef intp_t i, half
    cdef double s = 0.0
    if n <= 16:
        for i in range(n):
            s += x[2 * i]
        return s
    half = n // 2
    return _pairwise_sum2(x, half) + _pairwise_sum2(x + 2 * half, n - half)


#: Relative error a caller's scaled weight may have (module docstring, *Scaled
#: weights*): ``scaled = exp(logw - offset) * (1 + e)`` with ``|e| <= SCALED_REL_ERR``.
SCALED_REL_ERR = 16.0 * 2.0 ** -53
# Largest |offset - ref| for which exp(offset - ref) is a normal double.
cdef double _SCALE_RANGE = 700.0


cdef inline double _scale_of(double offset, double ref) noexcept nogil:
    """exp(offset - ref) to within 4 u (u = 2**-53) relative, or -1.0 when
    ``|offset - ref| > _SCALE_RANGE`` (the scaled path is then not used).

    The difference is split exactly into ``hi + lo`` (Knuth's TwoSum), so the
    rounding of ``offset - ref`` (up to ``|offset - ref| * u``, i.e. hundreds of
    u) does not enter: exp(hi + lo) = exp(hi) (1 + lo + O(lo**2)), |lo| <= 1e-13."""
    cdef double hi = offset - ref, bb, lo, e
    if not (fabs(hi) <= _SCALE_RANGE):
        return -1.0
    bb = hi - offset
    lo = (offset - (hi - bb)) + (-ref - bb)
    e = exp(hi)
    return e + e * lo


cdef inline intp_t _group_of(intp_t item, int shift, intp_t m) noexcept nogil:
    """The group of ``item``: a shift when ``m = 2**shift``, else a division."""
    if shift >= 0:
        return item >> shift
    return item // m


def _check_log_weight_value(value, name):
    value = check_scalar_range(value, name, allow_inf=True)
    if value == math.inf:
        raise ValueError(f"{name} must be < +inf (use -inf for weight 0), got inf")
    return value


def _check_log_weight_array(log_weights, n_items, name="log_weights"):
    arr = np.asarray(log_weights)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.ndim != 1 or (n_items is not None and arr.shape[0] != n_items):
        expected = f"({n_items},)" if n_items is not None else "(n,)"
        raise ValueError(f"{name} must have shape {expected}, got {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    if np.isposinf(arr).any():
        raise ValueError(f"{name} must be < +inf (use -inf for weight 0)")
    return arr


def _check_updates(items, log_weights, n_items):
    """Validated (items, float64 log-weights) of a list of updates."""
    idx = np.asarray(items)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"items must be an integer array, got dtype {idx.dtype}")
    if idx.ndim != 1:
        raise ValueError(f"items must be 1-D, got shape {idx.shape}")
    if idx.size and (idx.min() < 0 or idx.max() >= n_items):
        raise ValueError(f"items must be in [0, {n_items})")
    vals = _check_log_weight_array(log_weights, None)
    if vals.shape[0] != idx.shape[0]:
        raise ValueError(f"items and log_weights must have the same length, got "
                         f"{idx.shape[0]} and {vals.shape[0]}")
    return idx, vals


def _check_sizes(n_items, group_size, rel_tol):
    """Validated ``(n_items, group_size, rel_tol)`` of a sampler (``group_size``
    None: ``ceil(sqrt(n_items))``)."""
    n = check_positive_int(n_items, "n_items", maximum=2**31 - 1)
    if group_size is None:
        m = math.isqrt(n)
        if m * m < n:
            m += 1
    else:
        m = check_positive_int(group_size, "group_size")
        if m > n:
            raise ValueError(f"group_size must be in [1, n_items={n}], got {m}")
    rel_tol = check_scalar_range(rel_tol, "rel_tol", low=REL_TOL_RANGE[0],
                                 high=REL_TOL_RANGE[1])
    return n, m, rel_tol


def floating_point_bounds(n_items, group_size=None, rel_tol=1e-10):
    """:meth:`GroupedExpSampler.floating_point_bounds` of a sampler of these sizes,
    without building one (the bounds depend on the sizes only).

    Parameters
    ----------
    n_items, group_size, rel_tol
        As for :class:`GroupedExpSampler` (same ranges, same errors).

    Returns
    -------
    gamma, delta : float
        See :meth:`GroupedExpSampler.floating_point_bounds`.
    """
    n, m, rel_tol = _check_sizes(n_items, group_size, rel_tol)
    n_groups = (n + m - 1) // m
    u = 2.0 ** -53
    gamma = 2.01 * rel_tol + 1.05 * (n_groups + m + 1506) * u
    delta = (4.3 * (n_groups + m) * u
             + 1.1 * n * math.exp(_REBASE_LO - 1022 * math.log(2.0)))
    return gamma, delta


def _unpickle(n_items, group_size, rel_tol, log_weights, state=None):
    sampler = GroupedExpSampler(n_items, group_size, rel_tol)
    if state is not None:
        sampler._set_state(log_weights, *state)
    elif np.isfinite(log_weights).any():
        sampler.set_log_weights(log_weights)
    return sampler


# A bit generator whose next_double reads a buffer of uniforms (drawn elsewhere
# from a NumPy Generator by ``random``, which returns next_double's doubles in
# order), so that ``sample`` draws from shipped uniforms with its own arithmetic.
ctypedef struct _Uniforms:
    const double* u
    intp_t n
    intp_t pos
    bint short           # a draw needed more uniforms than the buffer held


cdef double _next_buffered(void* st) noexcept nogil:
    cdef _Uniforms* b = <_Uniforms*> st
    if b.pos >= b.n:
        b.short = True
        return 0.0       # any value: the caller discards a short draw
    b.pos += 1
    return b.u[b.pos - 1]


cdef uint64_t _no_integers(void* st) noexcept nogil:
    (<_Uniforms*> st).short = True       # sample() draws doubles only
    return 0


cdef uint32_t _no_integers32(void* st) noexcept nogil:
    (<_Uniforms*> st).short = True
    return 0


cdef class GroupedExpSampler:
    """Exponential-mechanism sampler with O(1) updates and O(sqrt(n)) draws.

    Draws index ``i`` with probability ``exp(logw[i]) / sum_j exp(logw[j])``
    up to the floating-point effects bounded by :meth:`floating_point_bounds`
    (see the module docstring for the design and the error analysis).  A new
    sampler holds ``logw = -inf`` everywhere: call :meth:`set_log_weights`
    (or ``build`` from Cython) before drawing.

    This class is a data structure, not a privacy mechanism: the caller
    computes the log-weights ``epsilon * score / (2 * sensitivity)`` and
    accounts for the privacy loss (plus ``floating_point_bounds()``).

    Parameters
    ----------
    n_items : int
        Number of items, in [1, 2**31 - 1].
    group_size : int or None, default=None
        Size of the contiguous groups, in ``[1, n_items]`` (the last group may
        be smaller).  ``None``: ``ceil(sqrt(n_items))``, which minimises the
        worst-case draw cost ``n_groups + group_size``.
    rel_tol : float, default=1e-10
        Bound on the relative error of every maintained sum (group sums and
        total), in ``[1e-13, 1e-2]``; enters the guarantee as
        ``gamma ~ 2 * rel_tol``.  Smaller values re-sum groups more often.

    Attributes
    ----------
    n_items, group_size, n_groups : int
        Sizes (``n_groups = ceil(n_items / group_size)``).
    rel_tol : float
        As given.
    n_finite : int
        Number of items with a finite log-weight (positive weight).
    n_group_resums, n_total_resums, n_rebuilds : int
        Counters of exact group re-sums, total re-sums and full rebuilds
        forced by updates (:meth:`set_log_weights` is not counted).

    Notes
    -----
    Cython interface (``cimport``, all ``noexcept nogil``): ``build(logw)``
    (O(n)), ``update(item, logw)`` (O(1) amortised), ``sample(rng)`` (returns
    -1 when every weight is 0; check it), ``log_total()``.

    References
    ----------
    .. [1] E. Raff, A. Khanna, F. Lu. Scaling Up Differentially Private LASSO
       Regularized Logistic Regression via Faster Frank-Wolfe Iterations.
       NeurIPS 2023, Algorithm 4 (corrected: see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from dptoolkit.linear_model._frank_wolfe._grouped_sampler import GroupedExpSampler
    >>> s = GroupedExpSampler(4)
    >>> s.set_log_weights(np.log([1.0, 2.0, 3.0, 4.0]))
    >>> s.update_item(0, -np.inf)
    >>> s.probabilities().round(3).tolist()
    [0.0, 0.222, 0.333, 0.444]
    >>> bool(np.all(s.draw(1000, random_state=0) > 0))
    True
    """

    def __init__(self, n_items, group_size=None, rel_tol=1e-10):
        # checked as Python ints before the C assignments (no OverflowError);
        # the arrays are allocated up front, hence the cap on n_items
        cdef intp_t n, m
        n, m, self.rel_tol = _check_sizes(n_items, group_size, rel_tol)
        self.n_items = n
        self.group_size = m
        self.n_groups = (n + m - 1) // m
        # log-weight and weight of an item side by side: an update reads and
        # writes one cache line (16 bytes of a 64-byte line), not one per array
        pairs = np.zeros((n, 2))
        pairs[:, 0] = -np.inf
        self.lw_w = pairs
        self.logw = self.lw_w[:, 0]
        self.weight = self.lw_w[:, 1]
        self.group_sum = np.zeros(self.n_groups)
        self.group_err = np.zeros(self.n_groups)
        self.ref = 0.0
        self.total = 0.0
        self.total_err = 0.0
        self.n_finite = 0
        self.n_group_resums = 0
        self.n_total_resums = 0
        self.n_rebuilds = 0
        self.group_shift = -1
        if m & (m - 1) == 0:
            self.group_shift = m.bit_length() - 1
        self.g_touched = np.zeros(self.n_groups, dtype=np.uint8)
        # one slot more than the groups: _batch writes slot n_touched at every change
        self.g_list = np.zeros(self.n_groups + 1, dtype=np.intp)
        self.g_old = np.zeros(self.n_groups + 1)

    def __reduce__(self):
        # the whole state, so that a copy draws and updates as the original bit
        # for bit (a rebuild from the log-weights would move ``ref`` and the sums)
        return (_unpickle, (self.n_items, self.group_size, self.rel_tol,
                            np.asarray(self.logw).copy(),
                            (np.asarray(self.weight).copy(),
                             np.asarray(self.group_sum).copy(),
                             np.asarray(self.group_err).copy(), self.ref, self.total,
                             self.total_err, self.n_finite, self.n_group_resums,
                             self.n_total_resums, self.n_rebuilds)))

    def _set_state(self, logw, weight, group_sum, group_err, ref, total, total_err,
                   n_finite, n_group_resums, n_total_resums, n_rebuilds):
        # the inverse of __reduce__'s state (arrays of the sampler's sizes)
        if (np.shape(logw) != (self.n_items,) or np.shape(weight) != (self.n_items,)
                or np.shape(group_sum) != (self.n_groups,)
                or np.shape(group_err) != (self.n_groups,)):
            raise ValueError("the state's arrays do not have the sampler's sizes")
        np.asarray(self.logw)[:] = logw
        np.asarray(self.weight)[:] = weight
        np.asarray(self.group_sum)[:] = group_sum
        np.asarray(self.group_err)[:] = group_err
        self.ref, self.total, self.total_err = ref, total, total_err
        self.n_finite, self.n_group_resums = n_finite, n_group_resums
        self.n_total_resums, self.n_rebuilds = n_total_resums, n_rebuilds

    # ------------------------------------------------------------------
    # Cython interface
    # ------------------------------------------------------------------
    cdef void build(self, const double[:] logw) noexcept nogil:
        """Set every log-weight and recompute all sums exactly: O(n)."""
        cdef intp_t i, g, n = self.n_items
        cdef intp_t nf = 0
        cdef double v, big = -INFINITY, ref
        if <const double*> &logw[0] != <const double*> &self.logw[0]:
            for i in range(n):
                self.logw[i] = logw[i]
        for i in range(n):
            v = self.logw[i]
            if v > -INFINITY:
                nf += 1
                if v > big:
                    big = v
        self.n_finite = nf
        if nf == 0:
            self.ref = 0.0
            for i in range(n):
                self.weight[i] = 0.0
            for g in range(self.n_groups):
                self.group_sum[g] = 0.0
                self.group_err[g] = 0.0
            self.total = 0.0
            self.total_err = 0.0
            return
        ref = big - _REF_OFFSET
        self.ref = ref
        for i in range(n):
            self.weight[i] = exp(self.logw[i] - ref)
        self.resum_all()

    cdef void resum_all(self) noexcept nogil:
        """Every group sum and the total re-summed exactly from the stored
        weights (pairwise), with fresh error bounds: O(n)."""
        cdef intp_t g, start, stop, n = self.n_items, m = self.group_size
        cdef double s
        for g in range(self.n_groups):
            start = g * m
            stop = start + m if start + m < n else n
            s = _pairwise_sum2(&self.weight[start], stop - start)
            self.group_sum[g] = s
            self.group_err[g] = _FRESH_REL_ERR * s
        s = _pairwise_sum(&self.group_sum[0], self.n_groups)
        self.total = s
        self.total_err = _FRESH_REL_ERR * s

    cdef void update(self, intp_t item, double logw) noexcept nogil:
        """Set ``logw[item]``: O(1) amortised (see *Rebuilds*)."""
        cdef double old_lw = self.logw[item]
        cdef double d, new, old, gs_old, gs, err, dg, t, terr
        cdef intp_t g, start, stop, m = self.group_size
        if logw == old_lw:
            return
        self.logw[item] = logw
        if old_lw > -INFINITY:
            self.n_finite -= 1
        if logw > -INFINITY:
            self.n_finite += 1
        g = _group_of(item, self.group_shift, self.group_size)
        if self.n_finite == 0:
            # Every weight is now exactly 0, and so is every other group sum
            # (a group sum within rel_tol of an exact 0 is 0).
            self.weight[item] = 0.0
            self.group_sum[g] = 0.0
            self.group_err[g] = 0.0
            self.total = 0.0
            self.total_err = 0.0
            return
        if self.n_finite == 1 and logw > -INFINITY and not (old_lw > -INFINITY):
            # Leaving the empty state: this is the only positive weight.
            self.ref = logw - _REF_OFFSET
            new = exp(logw - self.ref)
            self.weight[item] = new
            self.group_sum[g] = new
            self.group_err[g] = 0.0
            self.total = new
            self.total_err = 0.0
            return
        d = logw - self.ref
        if d > _REBASE_HI:
            self.n_rebuilds += 1
            self.build(self.logw)
            return
        new = exp(d)
        old = self.weight[item]
        self.weight[item] = new
        # group sum, with a rigorous bound on its accumulated rounding error
        gs_old = self.group_sum[g]
        gs = gs_old + (new - old)
        err = self.group_err[g] + DBL_EPSILON * (fabs(gs) + new + old)
        if err > self.rel_tol * gs:          # also catches gs <= 0 with err > 0
            start = g * m
            stop = start + m if start + m < self.n_items else self.n_items
            gs = _pairwise_sum2(&self.weight[start], stop - start)
            err = _FRESH_REL_ERR * gs
            self.n_group_resums += 1
        self.group_sum[g] = gs
        self.group_err[g] = err
        # total, same scheme, from the group's change
        dg = gs - gs_old
        t = self.total + dg
        terr = self.total_err + DBL_EPSILON * (fabs(t) + fabs(dg))
        self.set_total(t, terr)

    cdef void set_total(self, double t, double terr) noexcept nogil:
        """Store the total ``t`` with its error bound ``terr``: re-summed from the
        group sums when the bound exceeds ``rel_tol * t``, and a rebuild when it
        fell below exp(-_REBASE_LO) (underflow guard)."""
        if terr > self.rel_tol * t:
            t = _pairwise_sum(&self.group_sum[0], self.n_groups)
            terr = _FRESH_REL_ERR * t
            self.n_total_resums += 1
        self.total = t
        self.total_err = terr
        if t < _TINY:
            self.n_rebuilds += 1
            self.build(self.logw)

    cdef void update_batch(self, const int32_t* items, const double* logws,
                           intp_t n) noexcept nogil:
        """``update(items[k], logws[k])`` for k = 0..n-1, the sums updated once
        per changed group (module docstring, *Batched updates*): O(n + changed
        groups), plus the re-sums and rebuilds the invariant needs."""
        self._batch(items, logws, NULL, 0.0, n, False)

    cdef void _batch(self, const int32_t* items, const double* logws,
                     const double* scaled, double offset, intp_t n,
                     bint resum) noexcept nogil:
        # update_batch (resum False: each change added to its group sum with its
        # error bound) or reweight_batch (resum True: every sum re-computed at
        # the end); the logw/weight writes and the rebuild guards are shared.
        # scaled (module docstring, *Scaled weights*): weight = scale * scaled[r]
        # where scaled[r] >= 0, scale = exp(offset - ref) computed once.
        cdef intp_t r, k, item, g, start, stop, n_touched = 0, nf = self.n_finite
        cdef intp_t m = self.group_size
        cdef double lw, old_lw, d, new, old, gs, err, dg, t, terr, ref = self.ref
        cdef double scale = _scale_of(offset, ref) if scaled != NULL else -1.0
        cdef unsigned char first
        cdef bint rebuild = nf == 0        # leaving the empty state: rebuild at the end
        cdef bint overflow = False
        # item i: logw[2 i] and weight[2 i] (one record, one cache line)
        cdef double* logw = &self.lw_w[0, 0]
        cdef double* weight = logw + 1
        cdef double* gsum = &self.group_sum[0]
        cdef double* gerr = &self.group_err[0]
        cdef unsigned char* touched = &self.g_touched[0]
        cdef intp_t* glist = &self.g_list[0]
        cdef double* gold = &self.g_old[0]
        cdef double big = -INFINITY
        if rebuild and resum and scaled != NULL:
            # a re-weighting batch that leaves the empty state (the solver's first
            # refresh): the reference a rebuild would take (every other weight is
            # 0), then the batch's scaled weights as for any re-weighting, so no
            # exp is spent on most items (module docstring, *Scaled weights*)
            for r in range(n):
                if logws[r] > big:
                    big = logws[r]
            if big > -INFINITY:
                ref = big - _REF_OFFSET
                self.ref = ref
                scale = _scale_of(offset, ref)
                rebuild = False
        for r in range(n):
            # the records are spread over n_items * 16 bytes: fetch each one
            # _BATCH_PREFETCH items ahead (at 16, about half of a Frank-Wolfe
            # step's batch time was spent waiting on them)
            if r + _BATCH_PREFETCH < n:
                k = items[r + _BATCH_PREFETCH]
                prefetch(logw + 2 * k)
            item = items[r]
            lw = logws[r]
            old_lw = logw[2 * item]
            if lw == old_lw:
                continue
            logw[2 * item] = lw
            if old_lw > -INFINITY:
                nf -= 1
            if lw > -INFINITY:
                nf += 1
            if rebuild:
                continue                   # weights are recomputed by the rebuild
            d = lw - ref
            if d > _REBASE_HI:
                rebuild = True
                overflow = True
                continue
            if scale >= 0.0 and scaled[r] >= 0.0:
                new = scale * scaled[r]
            else:
                new = exp(d)
            old = weight[2 * item]
            weight[2 * item] = new
            if resum:
                continue                   # every sum is re-computed below
            g = _group_of(item, self.group_shift, self.group_size)
            # list g with its sum before the batch at its first change, without
            # a branch (about half the changes are a group's first: a branch
            # would be mispredicted): the slot n_touched is written every time
            # and kept only when the count moves past it
            first = 1 - touched[g]
            touched[g] = 1
            glist[n_touched] = g
            gold[n_touched] = gsum[g]
            n_touched += first
            # the per-item update's group sum and error bound, bit for bit
            gs = gsum[g] + (new - old)
            gerr[g] = gerr[g] + DBL_EPSILON * (fabs(gs) + new + old)
            gsum[g] = gs
        self.n_finite = nf
        for r in range(n_touched):
            touched[glist[r]] = 0
        if rebuild or nf == 0:
            if overflow:
                self.n_rebuilds += 1
            self.build(self.logw)
            return
        if resum:
            self.resum_all()
            if self.total < _TINY:         # underflow guard, as set_total
                self.n_rebuilds += 1
                self.build(self.logw)
            return
        t = self.total
        terr = self.total_err
        for r in range(n_touched):
            g = glist[r]
            gs = gsum[g]
            err = gerr[g]
            if err > self.rel_tol * gs:          # also catches gs <= 0 with err > 0
                start = g * m
                stop = start + m if start + m < self.n_items else self.n_items
                gs = _pairwise_sum2(&self.weight[start], stop - start)
                err = _FRESH_REL_ERR * gs
                gsum[g] = gs
                gerr[g] = err
                self.n_group_resums += 1
            dg = gs - gold[r]
            t = t + dg
            terr = terr + DBL_EPSILON * (fabs(t) + fabs(dg))
        self.set_total(t, terr)

    cdef void reweight_batch(self, const int32_t* items, const double* logws,
                             intp_t n) noexcept nogil:
        """``update(items[k], logws[k])`` for k = 0..n-1 with the sums re-computed
        once, exactly (module docstring, *Batched updates*): O(n + n_items).

        For batches that change a large part of the items: the log-weights and
        weights are written as the per-item updates write them (same ``ref``),
        then every group sum and the total are re-summed as a rebuild does, so
        the state is that of a rebuild at the current ``ref`` bit for bit, and
        no exp is spent on the items that did not change.  Falls back to a
        rebuild where an update would (overflow guard, empty state, underflow
        guard)."""
        self._batch(items, logws, NULL, 0.0, n, True)

    cdef intp_t sample(self, bitgen_t* rng) noexcept nogil:
        """Draw one index: O(n_groups + group_size); -1 if all weights are 0."""
        cdef intp_t g = -1, h, j, start, stop, n_groups = self.n_groups
        cdef intp_t m = self.group_size
        cdef int attempt
        cdef double bound, x, acc
        cdef const double* gsum = &self.group_sum[0]
        cdef const double* w
        if not (self.total > 0.0):
            return -1
        # Big-Steps: choose a group with probability ~ group_sum[g]
        bound = (self.total + self.total_err) * (1.0 + (n_groups + 8) * DBL_EPSILON)
        for attempt in range(_MAX_ATTEMPTS):
            x = uniform(rng) * bound
            acc = 0.0
            for h in range(n_groups):
                acc += gsum[h]
                if x < acc:
                    g = h
                    break
            if g >= 0:
                break
            if not (acc > 0.0):
                return -1
            bound = acc                      # reject; retry against the scanned sum
        if g < 0:
            return -1
        # Little-Steps: choose an item of group g with probability ~ weight
        start = g * m
        stop = start + m if start + m < self.n_items else self.n_items
        w = &self.weight[0]                  # item j's weight at w[2 j]
        bound = (gsum[g] + self.group_err[g]) * (1.0 + (stop - start + 8) * DBL_EPSILON)
        for attempt in range(_MAX_ATTEMPTS):
            x = uniform(rng) * bound
            acc = 0.0
            for j in range(start, stop):
                acc += w[2 * j]
                if x < acc:
                    return j
            if not (acc > 0.0):
                return -1
            bound = acc
        return -1

    cdef double log_total(self) noexcept nogil:
        """``log(sum_i exp(logw[i]))`` within ``rel_tol`` (``-inf`` if empty)."""
        if not (self.total > 0.0):
            return -INFINITY
        return self.ref + log(self.total)

    # ------------------------------------------------------------------
    # Python interface
    # ------------------------------------------------------------------
    def set_log_weights(self, log_weights):
        """Set all log-weights and recompute every sum exactly (O(n)).

        Parameters
        ----------
        log_weights : array-like of shape (n_items,)
            Real log-weights (natural log); ``-inf`` means weight 0.

        Raises
        ------
        TypeError
            If ``log_weights`` is not numeric.
        ValueError
            If its shape is not ``(n_items,)``, it contains NaN or ``+inf``, or
            every entry is ``-inf`` (nothing could be drawn).
        """
        arr = _check_log_weight_array(log_weights, self.n_items)
        if not (arr > -np.inf).any():
            raise ValueError("log_weights are all -inf: at least one item needs a "
                             "positive weight")
        cdef const double[::1] view = arr
        with nogil:
            self.build(view)

    def update_item(self, item, log_weight):
        """Set ``logw[item] = log_weight`` (O(1) amortised).

        Parameters
        ----------
        item : int
            Index in ``[0, n_items)``.
        log_weight : float
            New log-weight, ``< +inf``; ``-inf`` means weight 0.

        Raises
        ------
        TypeError, ValueError
            For a non-integer or out-of-range ``item``, a NaN or ``+inf``
            ``log_weight``.
        """
        cdef intp_t i = check_positive_int(item, "item", minimum=0)
        if i >= self.n_items:
            raise ValueError(f"item must be in [0, {self.n_items}), got {i}")
        cdef double lw = _check_log_weight_value(log_weight, "log_weight")
        with nogil:
            self.update(i, lw)

    def update_items(self, items, log_weights):
        """Apply ``update_item(items[k], log_weights[k])`` for k = 0, 1, ... in order.

        Parameters
        ----------
        items : array-like of int of shape (n_updates,)
            Indices in ``[0, n_items)`` (repeats allowed: the last one wins).
        log_weights : array-like of shape (n_updates,)
            New log-weights, ``< +inf``; ``-inf`` means weight 0.

        Raises
        ------
        TypeError, ValueError
            For non-integer or out-of-range indices, mismatched lengths, NaN
            or ``+inf`` log-weights.
        """
        idx, vals = _check_updates(items, log_weights, self.n_items)
        cdef const int64_t[::1] iv = np.ascontiguousarray(idx, dtype=np.int64)
        cdef const double[::1] vv = vals
        cdef intp_t k
        with nogil:
            for k in range(iv.shape[0]):
                self.update(<intp_t> iv[k], vv[k])

    def update_items_batched(self, items, log_weights, scaled=None, offset=0.0):
        """Same as :meth:`update_items`, applied as one batch (``update_batch``).

        The stored log-weights and weights are those of :meth:`update_items`;
        the group sums and the total are brought up to date once per changed
        group (module docstring, *Batched updates*), so they satisfy the same
        ``rel_tol`` invariant and draws follow the same law.  ``items`` and
        ``log_weights`` as for :meth:`update_items` (int32 items: ``n_items`` is
        at most 2**31 - 1).

        Parameters
        ----------
        items, log_weights : array-like of shape (n_updates,)
            As for :meth:`update_items`.
        scaled : array-like of shape (n_updates,), optional
            Scaled weights (module docstring, *Scaled weights*): where
            ``scaled[k] >= 0`` it must equal ``exp(log_weights[k] - offset)``
            within a relative :data:`SCALED_REL_ERR`, and the stored weight is
            computed from it without an ``exp``; a negative entry means "not
            given" (the weight is ``exp(log_weights[k] - ref)`` as without).
        offset : float, default=0.0
            The log-scale of ``scaled``, finite.

        Raises
        ------
        TypeError, ValueError
            As :meth:`update_items`; ``scaled`` of another length or with NaN or
            ``+inf``, ``offset`` not finite.
        """
        self._apply_batch(items, log_weights, False, scaled, offset)

    def update_items_resummed(self, items, log_weights, scaled=None, offset=0.0):
        """Same as :meth:`update_items`, applied as one batch whose sums are
        re-computed exactly at the end (``reweight_batch``).

        The stored log-weights and weights are those of :meth:`update_items`
        (same ``ref``); every group sum and the total are then re-summed as
        :meth:`set_log_weights` does, so the state is that of a rebuild that
        kept the current reference, and draws follow the same law.  O(n_updates
        + n_items): for batches that change a large part of the items.
        ``items``, ``log_weights``, ``scaled`` and ``offset`` as for
        :meth:`update_items_batched`.

        Raises
        ------
        TypeError, ValueError
            As :meth:`update_items_batched`.
        """
        self._apply_batch(items, log_weights, True, scaled, offset)

    def _apply_batch(self, items, log_weights, bint resum, scaled=None, offset=0.0):
        idx, vals = _check_updates(items, log_weights, self.n_items)
        cdef double off = check_scalar_range(offset, "offset")
        cdef const double[::1] sv
        cdef const double* sp = NULL
        if scaled is not None:
            sarr = _check_log_weight_array(scaled, idx.shape[0], "scaled")
            if np.isinf(sarr).any():
                raise ValueError("scaled must be finite (negative: not given), got inf")
            sv = sarr
            if sv.shape[0] > 0:
                sp = &sv[0]
        if idx.size == 0:
            return
        cdef const int32_t[::1] iv = np.ascontiguousarray(idx, dtype=np.int32)
        cdef const double[::1] vv = vals
        with nogil:
            self._batch(&iv[0], &vv[0], sp, off, iv.shape[0], resum)

    def draw(self, size=1, random_state=None):
        """Draw ``size`` independent indices.

        Parameters
        ----------
        size : int, default=1
            Number of draws, in [0, 2**31 - 1].
        random_state : None, int, SeedSequence or numpy.random.Generator
            Source of randomness (see
            :func:`dptoolkit._validation.check_random_state`); ``None`` seeds
            from OS entropy.

        Returns
        -------
        ndarray of int64 of shape (size,)

        Raises
        ------
        ValueError
            If every log-weight is ``-inf``, or ``size`` is negative.
        """
        # the draws are held in one array: at most 2**31 - 1 of them
        size = check_positive_int(size, "size", minimum=0, maximum=2**31 - 1)
        if self.n_finite == 0:
            raise ValueError("cannot draw: all log-weights are -inf")
        rng = check_random_state(random_state)
        bitgen = rng.bit_generator
        cdef bitgen_t* c_rng = get_bitgen(bitgen)
        out = np.empty(size, dtype=np.int64)
        cdef int64_t[::1] ov = out
        cdef intp_t k, r = 0, n = size
        with bitgen.lock, nogil:
            for k in range(n):
                r = self.sample(c_rng)
                if r < 0:
                    break
                ov[k] = r
        if r < 0:
            raise RuntimeError("GroupedExpSampler state is invalid (NaN or +inf "
                               "log-weight passed to the Cython interface)")
        return out

    def draw_from_uniforms(self, const double[::1] uniforms, pos=0):
        """One draw, consuming ``uniforms[pos:]`` in order instead of a bit
        generator's doubles: the index :meth:`draw` returns for a generator whose
        next doubles are those (``Generator.random(n)`` returns them in the order
        ``draw`` consumes them), by the same code.

        A draw consumes two uniforms, more after a rejection (module docstring;
        probability about ``4 * rel_tol``).

        Parameters
        ----------
        uniforms : ndarray of float64 of shape (n,)
            Uniforms on [0, 1), drawn by the caller.
        pos : int, default=0
            The first one to use, in ``[0, n]``.

        Returns
        -------
        index : int
            The item drawn, or -1 if ``uniforms[pos:]`` ran out before the draw
            ended (nothing drawn: draw again with more).
        pos : int
            The position after the uniforms consumed (``pos`` when -1).

        Raises
        ------
        ValueError
            If every log-weight is ``-inf`` or ``pos`` is outside ``[0, n]``.
        """
        if self.n_finite == 0:
            raise ValueError("cannot draw: all log-weights are -inf")
        if not 0 <= pos <= uniforms.shape[0]:
            raise ValueError(f"pos must be in [0, {uniforms.shape[0]}], got {pos}")
        cdef _Uniforms buf
        cdef bitgen_t gen
        cdef intp_t r
        buf.u = &uniforms[0] if uniforms.shape[0] > 0 else NULL
        buf.n = uniforms.shape[0]
        buf.pos = pos
        buf.short = False
        gen.state = &buf
        gen.next_double = _next_buffered
        gen.next_uint64 = _no_integers
        gen.next_uint32 = _no_integers32
        gen.next_raw = _no_integers
        with nogil:
            r = self.sample(&gen)
        if buf.short:
            return -1, pos
        if r < 0:
            raise RuntimeError("GroupedExpSampler state is invalid (NaN or +inf "
                               "log-weight passed to the Cython interface)")
        return r, buf.pos

    def log_total_weight(self):
        """Maintained ``log(sum_i exp(logw[i]))`` (relative error <= ``rel_tol``).

        Returns
        -------
        float
            ``-inf`` when every log-weight is ``-inf``.
        """
        return self.log_total()

    def log_group_weights(self):
        """Maintained ``log`` of each group's weight sum.

        Returns
        -------
        ndarray of float64 of shape (n_groups,)
            ``ref + log(group_sum)``; ``-inf`` for groups of weight 0
            (including groups entirely more than ~708 nats below ``ref``).
        """
        with np.errstate(divide="ignore"):
            return self.ref + np.log(np.asarray(self.group_sum))

    def log_weights(self):
        """Copy of the stored log-weights, ndarray of shape (n_items,)."""
        return np.asarray(self.logw).copy()

    def probabilities(self):
        """Exact target law ``exp(logw) / sum(exp(logw))``, computed afresh.

        Returns
        -------
        ndarray of float64 of shape (n_items,)

        Raises
        ------
        ValueError
            If every log-weight is ``-inf``.
        """
        lw = np.asarray(self.logw)
        top = lw.max()
        if top == -np.inf:
            raise ValueError("probabilities undefined: all log-weights are -inf")
        p = np.exp(lw - top)
        return p / p.sum()

    def floating_point_bounds(self):
        """Bounds ``(gamma, delta)`` on the deviation of one draw from the exact law.

        For every set ``S`` of indices,
        ``exp(-gamma) P(S) - delta <= Q(S) <= exp(gamma) P(S) + delta``, where
        ``P`` is the exact law of the stored log-weights and ``Q`` the law of
        one draw.  An exponential mechanism that is ``epsilon``-DP in exact
        arithmetic is therefore ``(epsilon + 2 gamma, (1 + exp(epsilon + 2
        gamma)) delta)``-DP per draw as implemented.  See the module docstring
        for the derivation.

        Returns
        -------
        gamma : float
            ``2.01 rel_tol + 1.05 (n_groups + group_size + 1506) 2**-53``.
        delta : float
            ``4.3 (n_groups + group_size) 2**-53 + 1.1 n_items exp(300) 2**-1022``.
        """
        return floating_point_bounds(self.n_items, self.group_size, self.rel_tol)
