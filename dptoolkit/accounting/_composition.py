"""Composition theorems for (epsilon, delta)-differential privacy.

All functions are keyword-only, validate their input, and return the pair
``(epsilon_total, delta_total)`` (except :func:`per_step_epsilon`, which
returns one per-step epsilon).

Neighbouring relation: whatever relation the composed mechanisms are private
for; composition does not change it.  The theorems below hold for *adaptive*
composition (each mechanism may depend on the outputs of the previous ones).

References
----------
- [DRV10] C. Dwork, G. N. Rothblum, S. Vadhan. "Boosting and Differential
  Privacy." FOCS 2010, Theorem III.3.
- [DR14] C. Dwork, A. Roth. "The Algorithmic Foundations of Differential
  Privacy." 2014, Theorem 3.16 (basic) and Theorem 3.20 (advanced).
- [KOV15] P. Kairouz, S. Oh, P. Viswanath. "The Composition Theorem for
  Differential Privacy." ICML 2015, Theorem 3.3.
"""
import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaln, logsumexp

from .._docstrings import fill_doc
from .._validation import check_epsilon_delta, check_positive_int, check_scalar_range

__all__ = [
    "basic_composition",
    "advanced_composition",
    "per_step_epsilon",
    "optimal_composition",
]


def _check_delta_slack(delta_slack):
    return check_scalar_range(delta_slack, "delta_slack", low=0.0, high=1.0,
                              low_open=True, high_open=True)


def basic_composition(*, epsilon, delta=0.0, k=1):
    """Basic (sequential) composition of ``k`` (epsilon, delta)-DP mechanisms.

    The k-fold adaptive composition of (epsilon, delta)-DP mechanisms is
    (k epsilon, k delta)-DP ([DR14], Theorem 3.16).

    Parameters
    ----------
    epsilon : float
        Per-mechanism epsilon, > 0 and finite.
    delta : float, default=0.0
        Per-mechanism delta, in [0, 1).
    k : int, default=1
        Number of mechanisms, >= 1.

    Returns
    -------
    epsilon_total : float
        ``k * epsilon``.
    delta_total : float
        ``min(1, k * delta)``.

    Raises
    ------
    TypeError
        Non-numeric ``epsilon``/``delta`` or non-integer ``k``.
    ValueError
        ``epsilon`` <= 0, NaN or infinite; ``delta`` outside [0, 1); ``k`` < 1.

    References
    ----------
    - [DR14] C. Dwork, A. Roth. "The Algorithmic Foundations of Differential
      Privacy." 2014, Theorem 3.16.
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta)
    k = check_positive_int(k, "k")
    return k * epsilon, min(1.0, k * delta)


def _expm1(x):
    """``math.expm1`` that returns inf instead of raising OverflowError.

    ``math.expm1``/``math.exp`` raise for x > log(DBL_MAX) ~ 709.78, where the
    true value exceeds the largest float: inf is its correctly rounded value.
    """
    try:
        return math.expm1(x)
    except OverflowError:
        return math.inf


def _advanced_epsilon(epsilon, k, log_inv_slack):
    # eps * sqrt(2 k ln(1/delta')) + k eps (e^eps - 1), with expm1 for small eps;
    # inf when the value exceeds the float range (e^eps - 1 >= 1 there, so the
    # product overflows too).
    return epsilon * (math.sqrt(2.0 * k * log_inv_slack) + k * _expm1(epsilon))


@fill_doc
def advanced_composition(*, epsilon, delta, k, delta_slack):
    """Advanced composition (Dwork, Rothblum, Vadhan 2010), the full bound.

    For every ``delta_slack`` > 0 the k-fold adaptive composition of
    (epsilon, delta)-DP mechanisms is (epsilon_total, delta_total)-DP with

    .. math::

        \\varepsilon_{tot} = \\varepsilon \\sqrt{2k \\ln(1/\\delta')}
            + k \\varepsilon (e^{\\varepsilon} - 1), \\qquad
        \\delta_{tot} = k\\delta + \\delta'

    ([DRV10] Theorem III.3; [DR14] Theorem 3.20).  This is the *full*
    bound: the simplified form ``2 eps sqrt(2k ln(1/delta'))`` (used e.g. in
    Appendix B.2 of Raff et al. 2023) drops the second term and is only valid
    for small epsilon; it is deliberately not offered.

    The bound is not always better than :func:`basic_composition`; callers
    wanting the better of the two take the minimum themselves (both hold).
    :func:`~dptoolkit.accounting.optimal_composition` is never worse than
    either.

    **Large epsilon.**  The second term grows like :math:`k\\varepsilon
    e^{\\varepsilon}`; when the bound exceeds the largest float (always for
    ``epsilon`` > log(DBL_MAX) ~ 709.78, and for somewhat smaller ``epsilon``
    when ``k * epsilon`` is large) the returned ``epsilon_total`` is
    ``inf``, the correctly rounded value of the bound (no OverflowError).
    The statement it makes is true but vacuous; the basic composition
    ``k * epsilon``, which is then far smaller, is the useful bound.

    %(params_k_mechanisms)s
    delta_slack : float
        The slack delta' of the theorem, in (0, 1).

    Returns
    -------
    epsilon_total : float
        The bound above, ``inf`` if it exceeds the float range.
    delta_total : float
        ``k * delta + delta_slack`` (may exceed 1, in which case the
        guarantee is vacuous; it is returned unclipped so that the caller can
        see it).

    Raises
    ------
    TypeError
        Non-numeric input or non-integer ``k``.
    ValueError
        ``epsilon`` <= 0, NaN or infinite; ``delta`` outside [0, 1);
        ``delta_slack`` outside (0, 1); ``k`` < 1.

    See Also
    --------
    per_step_epsilon : the exact inverse in epsilon.

    References
    ----------
    - [DRV10] C. Dwork, G. N. Rothblum, S. Vadhan. "Boosting and
      Differential Privacy." FOCS 2010, Theorem III.3.
    - [DR14] C. Dwork, A. Roth. "The Algorithmic Foundations of Differential
      Privacy." 2014, Theorem 3.20.

    Examples
    --------
    >>> from dptoolkit.accounting import advanced_composition
    >>> eps, delta = advanced_composition(epsilon=0.01, delta=0.0, k=1000,
    ...                                   delta_slack=1e-5)
    >>> round(eps, 6), delta
    (1.617929, 1e-05)
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta)
    k = check_positive_int(k, "k")
    delta_slack = _check_delta_slack(delta_slack)
    eps_total = _advanced_epsilon(epsilon, k, -math.log(delta_slack))
    return eps_total, k * delta + delta_slack


def per_step_epsilon(*, epsilon_total, delta_slack, k):
    """Per-step epsilon whose k-fold advanced composition is ``epsilon_total``.

    Returns the unique ``eps > 0`` with

    .. math::

        \\varepsilon \\sqrt{2k \\ln(1/\\delta')}
        + k \\varepsilon (e^{\\varepsilon} - 1) = \\varepsilon_{tot},

    i.e. the exact inverse of :func:`advanced_composition` in epsilon (the
    left side is strictly increasing in eps, from 0 to infinity).  This is
    the single place where iterative algorithms (Frank-Wolfe, ...) derive
    their per-step budget from a total budget: each of the ``k`` steps run
    with ``eps`` (and per-step delta 0, e.g. the exponential mechanism)
    composes to (``epsilon_total``, ``delta_slack``)-DP.

    The root is bracketed analytically (``eps <= epsilon_total / a``,
    ``eps <= sqrt(epsilon_total / k)`` and ``eps <= max(1, log1p(epsilon_total
    / k))`` with ``a = sqrt(2 k ln(1/delta'))``), found by Brent's method and
    polished by Newton steps, so that ``advanced_composition`` of the result
    reproduces ``epsilon_total`` to about 1e-15 relative for targets from
    1e-300 to 1e300.

    Parameters
    ----------
    epsilon_total : float
        Total epsilon, > 0 and finite.
    delta_slack : float
        The slack delta' of advanced composition, in (0, 1).  The total
        delta of the composition is ``k * delta_step + delta_slack``.
    k : int
        Number of steps, >= 1.

    Returns
    -------
    epsilon : float
        The per-step epsilon, > 0.

    Raises
    ------
    TypeError
        Non-numeric input or non-integer ``k``.
    ValueError
        ``epsilon_total`` <= 0, NaN or infinite; ``delta_slack`` outside
        (0, 1); ``k`` < 1.

    References
    ----------
    - [DRV10] C. Dwork, G. N. Rothblum, S. Vadhan. "Boosting and
      Differential Privacy." FOCS 2010, Theorem III.3.

    Examples
    --------
    >>> from dptoolkit.accounting import advanced_composition, per_step_epsilon
    >>> eps = per_step_epsilon(epsilon_total=1.0, delta_slack=1e-6, k=4000)
    >>> total, _ = advanced_composition(epsilon=eps, delta=0.0, k=4000,
    ...                                 delta_slack=1e-6)
    >>> abs(total - 1.0) < 1e-12
    True
    """
    target = check_scalar_range(epsilon_total, "epsilon_total", low=0.0, low_open=True)
    delta_slack = _check_delta_slack(delta_slack)
    k = check_positive_int(k, "k")
    log_inv_slack = -math.log(delta_slack)
    a = math.sqrt(2.0 * k * log_inv_slack)

    def f(eps):
        return _advanced_epsilon(eps, k, log_inv_slack) - target

    # Upper bounds: the second term is >= 0 (eps <= T/a); expm1(e) >= e
    # (eps <= sqrt(T/k)); for eps >= 1, k eps expm1(eps) >= k expm1(eps)
    # (eps <= max(1, log1p(T/k))).  All keep f finite on the bracket.
    upper = min(target / a, math.sqrt(target / k), max(1.0, math.log1p(target / k)))
    lower = target / (a + k * _expm1(upper))
    # Guard the bracket against rounding in the bounds themselves.
    while f(upper) < 0.0:
        upper *= 1.0 + 1e-12
    while f(lower) > 0.0:
        lower *= 1.0 - 1e-12
    if f(upper) == 0.0:
        return upper
    if f(lower) == 0.0:
        return lower
    eps = brentq(f, lower, upper, xtol=max(lower * 1e-15, 5e-324), rtol=4 * np.finfo(float).eps,
                 maxiter=500)
    # Newton polish: f'(eps) = a + k expm1(eps) + k eps e^eps > 0.
    for _ in range(3):
        fx = f(eps)
        if fx == 0.0:
            break
        deriv = a + k * _expm1(eps) + k * eps * (_expm1(eps) + 1.0)
        new = eps - fx / deriv
        if not (lower <= new <= upper) or new == eps:
            break
        if abs(f(new)) >= abs(fx):
            break
        eps = new
    return eps


#: Largest ``k`` :func:`optimal_composition` takes: its bisection evaluates
#: sums of up to k/2 terms (k = 10**6 takes about 2 s and 8 MB per array).
OPTIMAL_COMPOSITION_MAX_K = 10**6


def _kov_log_delta_i(i, epsilon, k, log_norm):
    """log delta_i of [KOV15] Theorem 3.3 (-inf for i = 0).

    delta_i = sum_{l=0}^{i-1} C(k,l) (e^{(k-l) eps} - e^{(k-2i+l) eps}) / (1 + e^eps)^k
    with each bracket written e^{(k-l) eps} (1 - e^{-2(i-l) eps}).
    """
    if i == 0:
        return -np.inf
    ell = np.arange(i, dtype=np.float64)
    log_terms = (gammaln(k + 1.0) - gammaln(ell + 1.0) - gammaln(k - ell + 1.0)
                 + (k - ell) * epsilon + np.log(-np.expm1(-2.0 * (i - ell) * epsilon)) - log_norm)
    return float(logsumexp(log_terms))


@fill_doc
def optimal_composition(*, epsilon, delta, k, delta_slack):
    r"""Optimal composition of ``k`` identical (epsilon, delta)-DP mechanisms.

    Kairouz, Oh and Viswanath ([KOV15] Theorem 3.3): for every
    i in {0, ..., floor(k/2)} the k-fold adaptive composition is
    ((k - 2i) epsilon, 1 - (1 - delta)^k (1 - delta_i))-DP with

    .. math::

        \delta_i = \frac{\sum_{l=0}^{i-1} \binom{k}{l}
            \left(e^{(k-l)\varepsilon} - e^{(k-2i+l)\varepsilon}\right)}
            {(1 + e^{\varepsilon})^k},

    and this region is exactly the privacy region of the composition (no
    better statement is true for all (epsilon, delta)-DP mechanisms).  This
    function returns the smallest ``(k - 2i) epsilon`` with
    ``delta_i <= delta_slack``.  ``delta_i`` is increasing in i, so i is
    found by bisection; each ``delta_i`` is a log-sum-exp of positive terms
    (no overflow for large ``k * epsilon``).

    It is never worse than :func:`basic_composition` (i = 0) nor than
    :func:`advanced_composition` with the same ``delta_slack``.

    %(params_k_mechanisms)s
    delta_slack : float
        Allowed delta_i, in [0, 1).

    Returns
    -------
    epsilon_total : float
        ``(k - 2 i) * epsilon``.
    delta_total : float
        ``1 - (1 - delta)^k (1 - delta_i)`` with the chosen i; at most
        ``1 - (1 - delta)^k (1 - delta_slack) <= k delta + delta_slack``.

    Raises
    ------
    TypeError
        Non-numeric input or non-integer ``k``.
    ValueError
        ``epsilon`` <= 0, NaN or infinite; ``delta`` or ``delta_slack``
        outside [0, 1); ``k`` < 1.

    References
    ----------
    - [KOV15] P. Kairouz, S. Oh, P. Viswanath. "The Composition Theorem for
      Differential Privacy." ICML 2015, Theorem 3.3.

    Examples
    --------
    >>> from dptoolkit.accounting import optimal_composition
    >>> eps, delta = optimal_composition(epsilon=0.01, delta=0.0, k=1000,
    ...                                  delta_slack=1e-5)
    >>> round(eps, 6), delta < 1e-5
    (1.2, True)
    """
    epsilon, delta = check_epsilon_delta(epsilon, delta)
    k = check_positive_int(k, "k")
    if k > OPTIMAL_COMPOSITION_MAX_K:
        raise ValueError(f"k must be in [1, {OPTIMAL_COMPOSITION_MAX_K}] for "
                         f"optimal_composition, got {k}: the exact sum of [KOV15] "
                         "Theorem 3.3 costs O(k log k) time and O(k) memory; for more "
                         "steps use advanced_composition or the RDP accountant "
                         "(epsilon_of_event)")
    delta_slack = check_scalar_range(delta_slack, "delta_slack", low=0.0, high=1.0,
                                     high_open=True)
    log_norm = k * (epsilon + math.log1p(math.exp(-epsilon)))  # k log(1 + e^eps)
    log_slack = math.log(delta_slack) if delta_slack > 0 else -np.inf
    lo, hi = 0, k // 2  # delta_lo <= slack always (delta_0 = 0); find the largest such i
    if _kov_log_delta_i(hi, epsilon, k, log_norm) <= log_slack:
        lo = hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _kov_log_delta_i(mid, epsilon, k, log_norm) <= log_slack:
            lo = mid
        else:
            hi = mid
    delta_i = math.exp(_kov_log_delta_i(lo, epsilon, k, log_norm))
    delta_total = -math.expm1(k * math.log1p(-delta) + math.log1p(-delta_i))
    return (k - 2 * lo) * epsilon, delta_total
