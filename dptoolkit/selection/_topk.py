"""Differentially private top-k selection: the canonical Lipschitz mechanism of
Shekelyan & Loukides and the peeling exponential-mechanism baseline.

Both routines take a score vector ``x`` whose every coordinate moves by at most
``sensitivity`` between neighbouring datasets (l-infinity sensitivity) and
return ``k`` indices.  They are pure Python with NumPy vectorisation; the
canonical Lipschitz mechanism evaluates its ``k (d - k) + 1`` utility classes
one head size at a time, so the extra memory is O(d) whatever ``k``.
"""
import numbers

import numpy as np

from .._validation import (
    check_epsilon_delta,
    check_positive_int,
    check_random_state,
    check_scalar_range,
)

__all__ = ["canonical_lipschitz_top_k", "peeling_top_k"]

# Classes with log(m) >= _LOG_M_LARGE ("huge" classes) get the maximal noise
# log(m) - log(E), E ~ Exp(1): the exact -log(1 - U^{1/m}) = -log(-expm1(-E/m))
# exceeds it by c(z) = -log((1 - e^-z)/z) in [0, z/2], z = E/m <= E e^-45, i.e. by
# less than 1.5e-20 E, below the rounding of values >= 45 (ulp 7e-15) for every
# E < 745 a double-precision draw can take.  Over a group of huge classes the
# maximum of a_p - log(E_p) is then sampled exactly by the Gumbel-max identity
# (max = logsumexp(a) + Gumbel, argmax ~ softmax(a), independent), with no
# per-class random draw.
_LOG_M_LARGE = 45.0
# Rows x classes processed at once in batched draws (bounded memory).
_CHUNK_ELEMENTS = 1 << 20


def _check_scores(scores):
    x = np.asarray(scores)
    if x.dtype.kind not in "biuf":
        raise TypeError(f"scores must be a numeric array, got dtype {x.dtype}")
    if x.ndim != 1:
        raise ValueError(f"scores must be 1-D of shape (n_items,), got shape {x.shape}")
    if x.size < 2:
        raise ValueError(f"scores must hold at least 2 items, got {x.size}")
    x = x.astype(np.float64, copy=False)
    if not np.all(np.isfinite(x)):
        raise ValueError("scores must be finite (no NaN or infinity)")
    return x


def _check_k(k, d):
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an integer, got {type(k).__name__}")
    if not 1 <= k <= d - 1:
        raise ValueError(f"k must be in [1, n_items - 1] = [1, {d - 1}], got {k}")
    return int(k)


def _check_size(size):
    if size is None:
        return None
    # the draws are held in one array: at most 2**31 - 1 of them
    return check_positive_int(size, "size", maximum=2**31 - 1)


def _random_subsets(n, s, rng):
    """Uniform random ``s``-subsets of ``{0, ..., n[r] - 1}``, one per row.

    Floyd's algorithm vectorised over rows: for j = n - s, ..., n - 1 draw
    t uniform on {0, ..., j}; insert t, or j if t is already in the set.  Every
    s-subset has probability 1 / C(n, s).

    Parameters
    ----------
    n : ndarray of int64, shape (n_rows,)
        Population sizes, each >= s.
    s : int
        Subset size (>= 0).

    Returns
    -------
    ndarray of int64, shape (n_rows, s)
    """
    n = np.asarray(n, dtype=np.int64)
    out = np.empty((n.size, s), dtype=np.int64)
    for i in range(s):
        j = n - s + i
        t = rng.integers(0, j + 1)
        if i:
            taken = np.any(out[:, :i] == t[:, None], axis=1)
            t = np.where(taken, j, t)
        out[:, i] = t
    return out


def _class_members(order, heads, tails, k, rng):
    """Draw one k-subset uniformly from each utility class (head, tail).

    The class C_{h,p} (0-based tail position p) is the set of k-subsets that
    contain the h best items order[:h], not order[h], contain order[p] and
    nothing after it, and k - h - 1 items of order[h+1:p].  (p = k - 1 with
    h = k - 1 is the true top-k.)
    """
    n_rows = heads.size
    out = np.empty((n_rows, k), dtype=np.int64)
    for h in np.unique(heads):
        rows = np.flatnonzero(heads == h)
        p = tails[rows]
        s = k - h - 1
        pos = np.empty((rows.size, k), dtype=np.int64)
        pos[:, :h] = np.arange(h)
        pos[:, h] = p
        if s:
            body = _random_subsets(p - h - 1, s, rng)
            pos[:, h + 1:] = body + (h + 1)
        out[rows] = order[pos]
    out.sort(axis=1)
    return out


def _max_exponential_noise(log_m, rng, shape):
    """Draw the max of m i.i.d. standard exponentials, m = exp(log_m), stably.

    The maximum of m i.i.d. Exp(1) variables has the law of
    F^{-1}(U^{1/m}) = -log(1 - U^{1/m}) with U uniform on [0, 1), computed as
    ``-log(-expm1(log(U) / m))`` (no cancellation when U^{1/m} is close to 1).
    For ``log_m >= _LOG_M_LARGE`` it is ``log m - log E`` with E ~ Exp(1) (equal
    to double precision, see the module constants; finite when m overflows).

    Parameters
    ----------
    log_m : ndarray of float64
        Log class sizes, broadcastable to ``shape``.
    shape : tuple
        Output shape.
    """
    log_m = np.broadcast_to(np.asarray(log_m, dtype=np.float64), shape)
    huge = log_m >= _LOG_M_LARGE
    with np.errstate(divide="ignore", over="ignore", under="ignore"):
        inv_m = np.exp(-np.where(huge, 0.0, log_m))
        small = -np.log(-np.expm1(np.log(rng.random(shape)) * inv_m))
        big = log_m - np.log(rng.standard_exponential(shape))
    return np.where(huge, big, small)


def _iter_log_class_sizes(d, k):
    """Yield ``(h, log_m)`` for h = k-1, ..., 0, where ``log_m[p - k]`` is the log
    size of class C_{h,p}, p = k, ..., d-1 (0-based tail position):
    m = C(p - h - 1, k - h - 1) (in 1-based t = p + 1: C(t - h - 2, k - h - 1)).

    Starts from h = k - 1 (m = 1) and applies C(n+1, r+1) = C(n, r) (n+1)/(r+1)
    in log space going down in h, so each step adds one precomputed log array
    (O(d) memory; the same array is updated in place and yielded each time).
    """
    n_tail = d - k
    log_pos = np.log(np.arange(1, d + 1, dtype=np.float64))  # log_pos[i] = log(i+1)
    log_m = np.zeros(n_tail)
    for h in range(k - 1, -1, -1):
        if h < k - 1:
            # log C(p-h-1, k-h-1) = log C(p-h-2, k-h-2) + log(p-h-1) - log(k-h-1)
            log_m += log_pos[k - h - 2: d - h - 2]
            log_m -= np.log(k - h - 1)
        yield h, log_m


def _class_values(xs, k, c_head, c_tail, rng, n_rows):
    """Winning class of the canonical Lipschitz mechanism for ``n_rows`` draws.

    For each head size h (k of them) the classes are split at the first tail
    position whose class size reaches e^45: below, one exact maximal noise
    -log(1 - U^{1/m}) per class and draw; above, one Gumbel per draw for the
    whole group and a categorical draw of the tail inside it (exact for the
    noise log m - log E, see ``_LOG_M_LARGE``).  Extra memory O(d) per chunk
    of rows.

    Parameters
    ----------
    xs : ndarray of float64, shape (d,)
        Normalised scores sorted in decreasing order.
    c_head, c_tail : float
        Utility of class (h, p) is c_tail * xs[p] - c_head * xs[h].

    Returns
    -------
    heads, tails : ndarray of int64, shape (n_rows,)
        The winning class (head size h, 0-based tail position p) of each draw.
    """
    d = xs.size
    # Class (k-1, k-1) = the true top-k, class size 1: Exp(1) noise.
    best = (c_tail - c_head) * xs[k - 1] + rng.standard_exponential(n_rows)
    heads = np.full(n_rows, k - 1, dtype=np.int64)
    tails = np.full(n_rows, k - 1, dtype=np.int64)
    tail_util = c_tail * xs[k:]                      # p = k, ..., d-1
    n_tail = d - k
    chunk = max(1, _CHUNK_ELEMENTS // n_tail)
    for h, log_m in _iter_log_class_sizes(d, k):
        util = tail_util - c_head * xs[h]
        # log m is non-decreasing in p for fixed h: huge classes form a suffix.
        split = n_tail if h == k - 1 else int(np.searchsorted(log_m, _LOG_M_LARGE))
        vmax = np.full(n_rows, -np.inf)
        amax = np.zeros(n_rows, dtype=np.int64)
        if split > 0:
            inv_m = None if h == k - 1 else np.exp(-log_m[:split])
            for r0 in range(0, n_rows, chunk):
                r1 = min(n_rows, r0 + chunk)
                shape = (r1 - r0, split)
                if inv_m is None:                    # m = 1: Exp(1)
                    noise = rng.standard_exponential(shape)
                else:
                    noise = np.log(rng.random(shape))
                    noise *= inv_m
                    with np.errstate(divide="ignore"):
                        noise = -np.log(-np.expm1(noise, out=noise), out=noise)
                noise += util[:split]
                am = np.argmax(noise, axis=1)
                amax[r0:r1] = am
                vmax[r0:r1] = noise[np.arange(r1 - r0), am]
                del noise
        if split < n_tail:
            a = util[split:] + log_m[split:]
            top = a.max()
            w = np.exp(a - top)
            cum = np.cumsum(w)
            lse = top + np.log(cum[-1])
            v2 = lse + rng.gumbel(size=n_rows)
            p2 = np.searchsorted(cum, rng.random(n_rows) * cum[-1], side="right")
            p2 = np.minimum(p2, cum.size - 1) + split
            better = v2 > vmax
            amax = np.where(better, p2, amax)
            vmax = np.where(better, v2, vmax)
        win = vmax > best
        best = np.where(win, vmax, best)
        heads = np.where(win, h, heads)
        tails = np.where(win, amax + k, tails)
    return heads, tails


def canonical_lipschitz_top_k(scores, k, *, epsilon, sensitivity=1.0, gamma=0.5,
                              random_state=None, size=None):
    r"""Private top-k selection with the canonical Lipschitz mechanism.

    Returns a set of ``k`` item indices drawn from the canonical Lipschitz
    mechanism with exponential noise of Shekelyan & Loukides (2022), as
    restated in Appendix A (Algorithm 2) of Swope et al. (2024).

    **Mechanism.**  Let ``x = scores / sensitivity`` and, for a k-subset ``y``,
    ``a(y) = max_{i not in y} x_i`` (best excluded score) and
    ``b(y) = min_{i in y} x_i`` (worst included score).  The loss is

    .. math::

        \mathrm{LOSS}(y \mid x) = (1 - \gamma) \max(a(y), b(y)) - \gamma\, b(y),

    which for ``gamma = 1/2`` is, up to a constant, the canonical loss
    :math:`\min_{v:\ \mathrm{top}_k(v) = y} \|x - v\|_\infty`.  The mechanism
    returns :math:`\arg\max_y \{-\tfrac{\epsilon}{2}\mathrm{LOSS}(y \mid x) + E_y\}`
    over all :math:`\binom{d}{k}` subsets, with :math:`E_y` i.i.d. standard
    exponential -- report-noisy-max with exponential noise over subsets.  The
    subsets fall into ``k (d - k) + 1`` classes ``C_{h,t}`` of equal loss (head
    = the ``h`` best items, excluded item ``j_{h+1}``, tail = worst included item
    ``j_t``, body = ``k - h - 1`` items among ``j_{h+2}, ..., j_{t-1}``), so
    only the maximum of the :math:`m = \binom{t-h-2}{k-h-1}` noises of a class
    is drawn, as :math:`-\log(1 - U^{1/m})`, and a uniform member of the
    winning class is returned.  Cost O(d log d + d k) time and O(d) memory.

    **Privacy.**  Neighbouring datasets are those for which every score moves
    by at most ``sensitivity`` (``|f_i(D) - f_i(D')| <= sensitivity`` for all
    ``i``; the relation between datasets -- add/remove or replace-one -- is the
    caller's, through the sensitivity it states).  Then ``a(y)`` and ``b(y)`` of
    the normalised scores move by at most 1, so LOSS has sensitivity
    ``(1 - gamma) + gamma = 1`` for every ``gamma`` in [0, 1], and
    report-noisy-max with Exp(1) noise on utilities ``-(epsilon / 2) LOSS`` is
    ``epsilon``-DP (pure DP, delta = 0; one release of one set, no composition
    inside).  The indices are returned **sorted by index**: the order of the
    items by score is not part of the release.

    ``gamma`` splits the budget between the best excluded score (weight
    ``(1 - gamma) epsilon / 2``) and the worst included score (weight
    ``gamma epsilon / 2``).  With :math:`\xi = x_{[k]} - x_{[k+1]}` the gap
    after the k-th normalised score, :math:`P(\text{output} \neq \text{top-}k)
    \le (\binom{d}{k} - 1) e^{-\gamma\epsilon\xi/2}` (Swope et al., Thm 4.1,
    from Shekelyan & Loukides Thm A.19-A.20 with the typo the former note
    corrected: the bound is on :math:`x_{[k]} - x_{[T]}`, not
    :math:`x_{[T]} - x_{[k]}`).  Larger ``gamma`` tightens this worst-case
    bound; Shekelyan & Loukides found ``gamma = 1/2`` better on average.

    **Corrections to the paper.**  Swope et al., Appendix A.4 and Algorithm 2
    (line 15) give the class size as :math:`\binom{t-h-1}{k-h-1}`, which
    counts ``j_{h+1}`` among the body candidates; but ``j_{h+1}`` is excluded
    by the definition of ``h``, and with that count the class sizes sum to more
    than :math:`\binom{d}{k}`.  The correct size is
    :math:`\binom{t-h-2}{k-h-1}` for ``h < k - 1`` (1 for ``h = k - 1``), and
    the body is drawn from ``j_{h+2}, ..., j_{t-1}``; the tests check both sums
    and the exact output law.  Log class sizes use the recurrence
    :math:`\binom{n+1}{r+1} = \binom{n}{r}\frac{n+1}{r+1}` in log space (a sum of
    logs, accurate to ~1e-14 absolute, where differences of ``gammaln`` values
    near 1e7 lose ~1e-9).  The maximal noise of a class is drawn as
    ``-log(-expm1(log(U) / m))`` (no cancellation when :math:`U^{1/m}` is near
    1).  For classes with :math:`m \ge e^{45}` it is ``log m - log E`` with
    ``E = -log U`` -- the same value to below double-precision rounding (the
    difference is at most ``E e^{-45} / 2``), finite however large ``m`` -- and
    then the maximum over all such classes of one head size is sampled at once
    by the Gumbel-max identity (logsumexp plus one Gumbel; the winning tail
    from the softmax), so huge classes cost no random draw each.

    Floating point: the law is sampled to double precision; as for any
    floating-point DP sampler this is not a bit-exact implementation of the
    real-valued mechanism (Mironov, CCS 2012).

    Parameters
    ----------
    scores : array-like of shape (n_items,)
        Finite scores, higher is better.  ``n_items >= 2``.
    k : int
        Number of items to select, ``1 <= k <= n_items - 1``.
    epsilon : float
        Privacy budget, > 0.
    sensitivity : float, default=1.0
        l-infinity sensitivity of the scores (> 0), in score units.
    gamma : float, default=0.5
        Loss weight in [0, 1] (see above).
    random_state : None, int, SeedSequence or numpy.random.Generator
        Source of randomness; ``None`` seeds from the OS.
    size : int, optional
        Number of independent draws, at most ``2**31 - 1``.  ``None`` returns
        one set.

    Returns
    -------
    ndarray of int64, shape (k,) or (size, k)
        Selected indices, sorted increasingly within each draw.

    Raises
    ------
    TypeError
        Non-numeric ``scores``, non-integer ``k`` or ``size``.
    ValueError
        ``scores`` not 1-D, shorter than 2 or not finite; ``k`` outside
        ``[1, n_items - 1]``; ``epsilon <= 0``; ``sensitivity <= 0``;
        ``gamma`` outside [0, 1]; ``size < 1``.

    References
    ----------
    M. Shekelyan and G. Loukides. Differentially private top-k selection via
    canonical Lipschitz mechanism. arXiv:2201.13376, 2022.

    R. Swope, A. Khanna, P. Doldo, S. Roy and E. Raff. Feature selection from
    differentially private correlations. AISec 2024, Appendix A, Algorithm 2.

    Examples
    --------
    >>> import numpy as np
    >>> from dptoolkit.selection import canonical_lipschitz_top_k
    >>> scores = np.array([10., 9., 1., 0., 8., 0.5])
    >>> canonical_lipschitz_top_k(scores, 3, epsilon=50.0, random_state=0)
    array([0, 1, 4])
    """
    x = _check_scores(scores)
    d = x.size
    k = _check_k(k, d)
    epsilon, _ = check_epsilon_delta(epsilon)
    sensitivity = check_scalar_range(sensitivity, "sensitivity", low=0.0, low_open=True)
    gamma = check_scalar_range(gamma, "gamma", low=0.0, high=1.0)
    n_draws = _check_size(size)
    rng = check_random_state(random_state)
    return _canonical_lipschitz(x, k, epsilon, sensitivity, gamma, rng, n_draws)


def _canonical_lipschitz(x, k, epsilon, sensitivity, gamma, rng, n_draws=None):
    """:func:`canonical_lipschitz_top_k` on validated arguments: the selectors' path
    (their constraint tables checked ``epsilon`` and ``gamma``; finite scores of the
    validated data, ``1 <= k < len(x)``, a Generator)."""
    x = np.asarray(x, dtype=np.float64) / sensitivity
    # Any order of tied scores gives the same output law (the loss depends on
    # score values only), so the faster unstable sort is fine.
    order = np.argsort(-x)
    xs = x[order]
    c_head = 0.5 * epsilon * (1.0 - gamma)
    c_tail = 0.5 * epsilon * gamma
    rows = 1 if n_draws is None else n_draws
    heads, tails = _class_values(xs, k, c_head, c_tail, rng, rows)
    out = _class_members(order, heads, tails, k, rng)
    return out[0] if n_draws is None else out


def peeling_top_k(scores, k, *, epsilon, sensitivity=1.0, monotonic=False,
                  method="oneshot", random_state=None, size=None):
    r"""Private top-k by peeling: k rounds of the exponential mechanism.

    Round ``r`` selects one of the items not selected yet with probability
    proportional to ``exp(epsilon_r * x_i / (2 * sensitivity))`` (``/
    sensitivity`` without the 2 when ``monotonic``), with ``epsilon_r =
    epsilon / k`` -- the :class:`dptoolkit.mechanisms.Exponential` mechanism.

    ``method="sequential"`` runs the k rounds literally (k draws of
    :class:`~dptoolkit.mechanisms.Exponential`, selected items excluded with
    utility ``-inf``; O(d k)).  ``method="oneshot"`` (default) samples the
    same law in O(d): the ``k`` largest of ``c x_i + G_i``, with ``c`` the
    mechanism's coefficient and ``G_i`` i.i.d. standard Gumbel, in decreasing
    order, have exactly the law of the k peeling rounds (Gumbel-max trick;
    Durfee & Rogers 2019, Lemma 4.2).  No weight is ever exponentiated.

    **Privacy.**  Neighbouring datasets move every score by at most
    ``sensitivity``; each round is the exponential mechanism (McSherry & Talwar
    2007) with budget ``epsilon / k``, ``epsilon / k``-DP; the k adaptive
    rounds compose by basic composition (Dwork & Roth 2014, Thm 3.16;
    ``dptoolkit.accounting.basic_composition``) to ``epsilon``-DP for the
    ordered sequence, hence for the set.  ``monotonic`` may be set only when,
    between neighbours, all scores move in the same direction (e.g. counts
    under add/remove); it halves the exponent's denominator.

    Parameters
    ----------
    scores : array-like of shape (n_items,)
        Finite scores, higher is better.
    k : int
        Number of rounds, ``1 <= k <= n_items - 1``.
    epsilon : float
        Total budget (> 0), ``epsilon / k`` per round.
    sensitivity : float, default=1.0
        l-infinity sensitivity of the scores (> 0).
    monotonic : bool, default=False
        Whether the scores are monotone between neighbours.
    method : {"oneshot", "sequential"}, default="oneshot"
        Sampling algorithm (same output law).
    random_state : None, int, SeedSequence or numpy.random.Generator
    size : int, optional
        Number of independent draws, at most ``2**31 - 1``.

    Returns
    -------
    ndarray of int64, shape (k,) or (size, k)
        Selected indices in the order the rounds selected them.

    Raises
    ------
    TypeError, ValueError
        As :func:`canonical_lipschitz_top_k`; unknown ``method``.

    References
    ----------
    D. Durfee and R. Rogers. Practical differentially private top-k selection
    with pay-what-you-get composition. NeurIPS 2019.

    F. McSherry and K. Talwar. Mechanism design via differential privacy.
    FOCS 2007.
    """
    from ..accounting import basic_composition
    from ..mechanisms import Exponential

    x = _check_scores(scores)
    d = x.size
    k = _check_k(k, d)
    epsilon, _ = check_epsilon_delta(epsilon)
    sensitivity = check_scalar_range(sensitivity, "sensitivity", low=0.0, low_open=True)
    if not isinstance(monotonic, (bool, np.bool_)):
        raise TypeError(f"monotonic must be a bool, got {type(monotonic).__name__}")
    if method not in ("oneshot", "sequential"):
        raise ValueError(f"method must be 'oneshot' or 'sequential', got {method!r}")
    n_draws = _check_size(size)
    rng = check_random_state(random_state)

    per_round = epsilon / k
    total, _ = basic_composition(epsilon=per_round, k=k)
    assert abs(total - epsilon) <= 1e-12 * epsilon
    mech = Exponential(epsilon=per_round, sensitivity=sensitivity, monotonic=bool(monotonic),
                       random_state=rng)
    rows = 1 if n_draws is None else n_draws
    out = np.empty((rows, k), dtype=np.int64)
    if method == "sequential":
        for r in range(rows):
            u = x.copy()
            for j in range(k):
                i = mech.select(u)
                out[r, j] = i
                u[i] = -np.inf
        return out[0] if n_draws is None else out
    u = mech.coefficient * x
    chunk = max(1, _CHUNK_ELEMENTS // d)
    for r0 in range(0, rows, chunk):
        r1 = min(rows, r0 + chunk)
        g = rng.gumbel(size=(r1 - r0, d))
        g += u
        top = np.argpartition(-g, k - 1, axis=1)[:, :k]
        vals = np.take_along_axis(g, top, axis=1)
        rank = np.argsort(-vals, axis=1, kind="stable")
        out[r0:r1] = np.take_along_axis(top, rank, axis=1)
    return out[0] if n_draws is None else out
