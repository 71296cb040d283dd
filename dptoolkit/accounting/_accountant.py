"""One accountant: privacy events in, (epsilon, delta) out.

:class:`PrivacyAccountant` composes :mod:`~dptoolkit.accounting.events` and
converts the composition to an (epsilon, delta) guarantee by one of several
valid methods, chosen by ``composition``; ``composition="auto"`` (the default) takes the smallest epsilon
among those that apply, which is valid because each is a valid guarantee at
the same delta.

``"basic"``
    Every leaf is (epsilon_i, delta_i)-DP; the composition is (sum epsilon_i,
    sum delta_i)-DP (Dwork and Roth 2014, Theorem 3.16).  Poisson or
    without-replacement subsampling of a pure epsilon-DP event uses the
    amplification ``log(1 + q (e^epsilon - 1))`` (Balle, Barthe and Gaboardi
    2018, Theorems 9-10).  Gaussian and zCDP leaves have no pure bound here.
``"advanced"``
    Heterogeneous advanced composition of the pure/approximate leaves
    (Dwork, Rothblum and Vadhan 2010, full bound, in the form of Kairouz, Oh
    and Viswanath 2015, Theorem 3.5): ``sqrt(2 ln(1/delta') sum epsilon_i^2) +
    sum epsilon_i (e^epsilon_i - 1)`` with ``delta = sum delta_i + delta'``;
    the better of this and basic.
``"rdp"``
    Renyi DP (Mironov 2017) order by order, converted with the improved
    conversion (Canonne, Kamath and Steinke 2020, Proposition 12).  Leaf RDP:
    exponential mechanism ``min(epsilon, alpha r^2 / 8)`` with r its bounded-range
    parameter (bounded range,
    Cesar and Rogers 2021, Lemma 3.2); other pure-DP events ``min(epsilon, alpha
    epsilon^2 / 2)`` (Bun and Steinke 2016, Proposition 1.4); Laplace and
    Gaussian exactly; Poisson- and without-replacement-subsampled Gaussian
    (Mironov, Talwar and Zhang 2019; Wang, Balle and Kasiviswanathan 2019);
    zCDP ``rho alpha``; random repetition with selection (Papernot and Steinke
    2022, Theorems 2 and 6); a data-independent choice among events
    (:class:`~dptoolkit.accounting.events.MaxOfEvents`) the maximum of their RDP
    at every order.  Approximate-DP leaves (delta_i > 0) are taken
    out of the RDP part and added by basic composition: the RDP part is
    converted at ``delta - sum delta_i`` and ``sum epsilon_i`` is added.

A method that does not apply to an event (e.g. ``"basic"`` for a Gaussian
step) gives ``inf``.
"""
import functools
import math
import warnings

import numpy as np

from .._docstrings import fill_doc
from .._validation import check_choice, check_positive_int, check_scalar_range
from . import events as ev
from ._rdp import (
    _check_orders,
    rdp_gaussian,
    rdp_laplace,
    rdp_poisson_subsampled_gaussian,
    rdp_sampled_without_replacement_gaussian,
    rdp_to_epsilon,
)

__all__ = ["PrivacyAccountant", "ACCOUNTING_METHODS", "epsilon_of_event",
           "calibrate_parameter", "basic_guarantee", "tnb_success_probability"]

#: Methods of :class:`PrivacyAccountant`.
ACCOUNTING_METHODS = ("auto", "rdp", "advanced", "basic")


class _Unsupported(Exception):
    """A method does not apply to an event."""


# ----------------------------------------------------------------- pure / approx DP
def _pure_pairs(event, mult=1):
    """[(epsilon_i, delta_i, multiplicity)] of the leaves, or _Unsupported."""
    if isinstance(event, ev.NoOpEvent):
        return []
    if isinstance(event, (ev.PureDPEvent, ev.ExponentialMechanismEvent)):
        return [(event.epsilon, 0.0, mult)]
    if isinstance(event, ev.ApproxDPEvent):
        return [(event.epsilon, event.delta, mult)]
    if isinstance(event, ev.LaplaceEvent):
        return [(1.0 / event.noise_multiplier, 0.0, mult)]
    if isinstance(event, ev.GaussianEvent) and math.isinf(event.noise_multiplier):
        return []
    if isinstance(event, ev.SelfComposedEvent):
        return _pure_pairs(event.event, mult * event.count) if event.count else []
    if isinstance(event, ev.ComposedEvent):
        return [p for e in event.events for p in _pure_pairs(e, mult)]
    if isinstance(event, ev.MaxOfEvents):
        # each child by basic composition; a data-independent choice among them is
        # (max epsilon, max delta)-DP
        sums = [_pair_sums(_pure_pairs(e, 1)) for e in event.events]
        return [(max(e for e, _ in sums), max(d for _, d in sums), mult)]
    if isinstance(event, ev.RepeatAndSelectEvent) and event.shape == 1.0:
        # geometric number of runs of an epsilon-DP event, the best released:
        # 3 epsilon-DP (Liu and Talwar 2019, Theorem 3.4); the runs' deltas by a
        # union bound over the expected number of runs
        eps, delta = _pair_sums(_pure_pairs(event.event, 1))
        return [(3.0 * eps, event.mean * delta, mult)]
    if isinstance(event, (ev.PoissonSampledEvent, ev.SampledWithoutReplacementEvent)):
        q = (event.sampling_rate if isinstance(event, ev.PoissonSampledEvent)
             else event.sample_size / event.n_samples)
        eps, delta = _pair_sums(_pure_pairs(event.event, 1))
        # amplification by subsampling (Balle, Barthe, Gaboardi 2018)
        return [(math.log1p(q * math.expm1(eps)) if eps < 700 else eps, q * delta, mult)]
    raise _Unsupported(type(event).__name__)


def _pair_sums(pairs):
    """(sum epsilon_i, sum delta_i) of [(epsilon_i, delta_i, multiplicity_i)]."""
    return (math.fsum(e * m for e, _, m in pairs), math.fsum(d * m for _, d, m in pairs))


def _basic(event, delta):
    eps, d = _pair_sums(_pure_pairs(event))
    return (eps, d) if d <= delta * (1 + 1e-12) else (math.inf, d)


def basic_guarantee(event):
    """(sum epsilon_i, sum delta_i) of an event's leaves by basic composition.

    Parameters
    ----------
    event : PrivacyEvent

    Returns
    -------
    epsilon, delta : float
        ``(inf, 0.0)`` when a leaf has no pure or approximate-DP bound (e.g. a
        Gaussian mechanism).
    """
    ev._check_event(event, "event")
    try:
        pairs = _pure_pairs(event)
    except _Unsupported:
        return math.inf, 0.0
    return _pair_sums(pairs)


def _advanced(event, delta):
    pairs = _pure_pairs(event)
    eps_basic, d_sum = _pair_sums(pairs)
    best = eps_basic if d_sum <= delta * (1 + 1e-12) else math.inf
    slack = delta - d_sum
    if slack > 0 and pairs:
        sq = math.fsum(e * e * m for e, _, m in pairs)
        with np.errstate(over="ignore"):
            lin = math.fsum(e * float(np.expm1(e)) * m for e, _, m in pairs)
        best = min(best, math.sqrt(2.0 * math.log(1.0 / slack) * sq) + lin)
    return best, delta


# ------------------------------------------------------------------------- RDP
def _rdp_curve(event, orders):
    """(rdp curve, [(epsilon_i, delta_i, multiplicity_i)] approximate leaves taken out).

    Multiplicities (not repeated entries) keep a self-composition of ``count``
    approximate leaves O(1) in memory whatever ``count``."""
    zero = np.zeros_like(orders)
    if isinstance(event, ev.NoOpEvent):
        return zero, []
    if isinstance(event, ev.ExponentialMechanismEvent):
        br = event.bounded_range
        return np.minimum(event.epsilon, orders * br * br / 8.0), []
    if isinstance(event, ev.PureDPEvent):
        e = event.epsilon
        return np.minimum(e, orders * e * e / 2.0), []
    if isinstance(event, ev.ApproxDPEvent):
        if event.delta == 0.0:
            return _rdp_curve(ev.PureDPEvent(event.epsilon), orders)
        return zero, [(event.epsilon, event.delta, 1)]
    if isinstance(event, ev.LaplaceEvent):
        return rdp_laplace(noise_multiplier=event.noise_multiplier, orders=orders), []
    if isinstance(event, ev.GaussianEvent):
        if math.isinf(event.noise_multiplier):
            return zero, []
        return rdp_gaussian(noise_multiplier=event.noise_multiplier, orders=orders), []
    if isinstance(event, ev.ZCDPEvent):
        return event.rho * orders, []
    if isinstance(event, ev.SelfComposedEvent):
        curve, approx = _rdp_curve(event.event, orders)
        return (float(event.count) * curve,
                [(e, d, m * event.count) for e, d, m in approx])
    if isinstance(event, ev.ComposedEvent):
        total, approx = zero.copy(), []
        for e in event.events:
            curve, a = _rdp_curve(e, orders)
            total = total + curve
            approx.extend(a)
        return total, approx
    if isinstance(event, ev.PoissonSampledEvent):
        inner = event.event
        if event.sampling_rate == 0.0:
            return zero, []
        if isinstance(inner, ev.GaussianEvent):
            if math.isinf(inner.noise_multiplier):
                return zero, []
            return rdp_poisson_subsampled_gaussian(
                noise_multiplier=inner.noise_multiplier, sampling_rate=event.sampling_rate,
                orders=orders), []
        if event.sampling_rate == 1.0:
            return _rdp_curve(inner, orders)
        raise _Unsupported("Poisson subsampling of a non-Gaussian event")
    if isinstance(event, ev.SampledWithoutReplacementEvent):
        inner = event.event
        if isinstance(inner, ev.GaussianEvent):
            return rdp_sampled_without_replacement_gaussian(
                noise_multiplier=inner.noise_multiplier,
                sampling_rate=event.sample_size / event.n_samples, orders=orders), []
        raise _Unsupported("sampling without replacement of a non-Gaussian event")
    if isinstance(event, ev.RepeatAndSelectEvent):
        return _repeat_and_select_rdp(event, orders)
    if isinstance(event, ev.MaxOfEvents):
        # conditioned on the (data-independent) choice, the chosen child: its RDP is
        # at most the pointwise maximum, its approximate parts at most the largest
        # sums (see MaxOfEvents)
        curves, sums = [], []
        for e in event.events:
            curve, approx = _rdp_curve(e, orders)
            curves.append(curve)
            sums.append(_pair_sums(approx))
        eps_a, delta_a = max(e for e, _ in sums), max(d for _, d in sums)
        return (np.max(curves, axis=0),
                [(eps_a, delta_a, 1)] if eps_a > 0 or delta_a > 0 else [])
    raise _Unsupported(type(event).__name__)


def _repeat_and_select_rdp(event, orders):
    """RDP of random repetition with selection (Papernot and Steinke 2022).

    Truncated negative binomial with ``shape = eta`` and mean ``mu``
    (Theorem 2): for orders lambda > 1 and any lambda_hat > 1,
    ``eps(lambda) <= eps_Q(lambda) + (1 + eta)(1 - 1/lambda_hat) eps_Q(lambda_hat)
    + (1 + eta) log(1/gamma) / lambda_hat + log(E[K]) / (lambda - 1)``, where
    ``gamma`` is the success probability; the bound is minimised over
    ``lambda_hat`` among the orders.  Poisson (``shape = inf``, Theorem 6):
    ``eps(lambda) <= eps_Q(lambda) + mu delta_hat + log(mu) / (lambda - 1)`` with
    ``delta_hat`` the delta of the inner event at epsilon ``eps_hat``, which needs
    an (eps_hat, delta_hat) pair: ``eps_Q(lambda) + mu (e^eps_hat - 1)`` ...; the
    Poisson case is not implemented here (dp-accounting's form is used by the
    tests instead).

    Approximate-DP parts (0, delta_i) of the inner event (a floating-point
    deviation that each run avoids except with probability delta_i) are taken
    out with total ``mean * sum delta_i``: by a union bound over the runs, the
    expected number of runs ``E[K] = mean`` times each run's failure
    probability.  Parts with epsilon_i > 0 are refused (K is unbounded).
    """
    curve, approx = _rdp_curve(event.event, orders)
    if any(e > 0 for e, _, _ in approx):
        raise _Unsupported("random repetition of an (epsilon > 0, delta)-DP event")
    eta, mu = event.shape, event.mean
    if math.isinf(eta):
        raise _Unsupported("Poisson repetition")
    # success probability gamma of the truncated negative binomial with mean mu
    gamma = tnb_success_probability(eta, mu)
    log_inv_gamma = -math.log(gamma)
    lam_hat = orders
    extra = np.min((1.0 + eta) * (1.0 - 1.0 / lam_hat) * curve
                   + (1.0 + eta) * log_inv_gamma / lam_hat)
    approx_out = [(0.0, mu * math.fsum(d * m for _, d, m in approx), 1)] if approx else []
    return curve + extra + math.log(mu) / (orders - 1.0), approx_out


def tnb_success_probability(eta, mu):
    """Success probability gamma of the truncated negative binomial of mean mu.

    Parameters
    ----------
    eta : float
        Shape, >= 0 (0: the logarithmic distribution).
    mu : float
        Mean, > 1.

    Returns
    -------
    gamma : float
        In (0, 1).

    Raises
    ------
    TypeError
        Non-numeric ``eta`` or ``mu``.
    ValueError
        ``eta`` < 0 or not finite; ``mu`` <= 1 or not finite.

    Mean: ``eta (1 - gamma) / (gamma (1 - gamma^eta))`` for eta > 0 and
    ``(1 - gamma) / (gamma log(1/gamma))`` for eta = 0 (Papernot and Steinke
    2022, Section 2); decreasing in gamma, solved by bisection.
    """
    eta = check_scalar_range(eta, "eta", low=0.0)
    mu = check_scalar_range(mu, "mu", low=1.0, low_open=True)

    def mean(g):
        if eta == 0.0:
            return (1.0 - g) / (g * -math.log(g))
        return eta * (1.0 - g) / (g * -math.expm1(eta * math.log(g)))

    lo, hi = 1e-300, 1.0 - 1e-15
    for _ in range(200):
        mid = math.sqrt(lo * hi) if hi / lo > 4 else 0.5 * (lo + hi)
        if mean(mid) > mu:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _rdp(event, delta, orders):
    curve, approx = _rdp_curve(event, np.asarray(orders, dtype=np.float64))
    eps_a, d_a = _pair_sums(approx)
    rest = delta - d_a
    if rest <= 0:
        return math.inf, delta
    if not np.any(curve):
        return eps_a, delta
    eps, _ = rdp_to_epsilon(orders, curve, rest)
    return eps + eps_a, delta


_METHODS = {"basic": _basic, "advanced": _advanced}


@fill_doc
def epsilon_of_event(event, delta, *, composition="auto", orders=None):
    """Epsilon of an event at a given delta.

    Parameters
    ----------
    event : PrivacyEvent
    delta : float
        In [0, 1).  ``0`` allows only pure-DP methods (``"basic"``).
    composition : {"auto", "rdp", "advanced", "basic"}, default="auto"
        How the event's parts compose; see ``dptoolkit.accounting._accountant``.
    orders : array-like of float, default=None
        RDP orders (``None``: ``DEFAULT_RDP_ORDERS``).

    Returns
    -------
    epsilon : float
        >= 0; ``inf`` when the method does not apply or no finite bound exists.

    Raises
    ------
    TypeError
        ``event`` is not a :class:`~dptoolkit.accounting.events.PrivacyEvent`.
    ValueError
        ``delta`` or ``composition`` out of range.
    """
    ev._check_event(event, "event")
    delta = check_scalar_range(delta, "delta", low=0.0, high=1.0, high_open=True)
    composition = check_choice(composition, "composition", ACCOUNTING_METHODS)
    orders = _check_orders(orders)
    methods = ("basic", "advanced", "rdp") if composition == "auto" else (composition,)
    best = math.inf
    for m in methods:
        if m != "basic" and delta == 0.0:
            continue
        try:
            eps = _rdp(event, delta, orders)[0] if m == "rdp" else _METHODS[m](event, delta)[0]
        except _Unsupported:
            continue
        best = min(best, eps)
    return float(best)


def bracket_search(feasible, *, initial, low, high, rtol, on_floor=None):
    """Smallest ``x`` in ``[low, high]`` with ``feasible(x)``, for a monotone predicate
    (false below a threshold, true above it).

    The search starts at ``initial`` (clamped to the range), halves or doubles
    it until the threshold is bracketed, then bisects (geometric midpoints while
    the bracket spans more than a factor 2, arithmetic ones after) until
    ``hi - lo <= rtol * hi``.  The returned ``hi`` was evaluated and is
    feasible.  A predicate already true at ``low`` returns ``low`` and calls
    ``on_floor(low)`` first (the caller says what the floor means).  This is
    the one search behind every calibration of the toolkit
    (:func:`calibrate_parameter` and
    :func:`~dptoolkit.accounting.calibrate_noise_multiplier`).

    Raises
    ------
    ValueError
        ``feasible(high)`` is false: no ``x`` in the range is feasible.
    """
    hi = min(max(initial, low), high)
    if feasible(hi):
        if hi == low:
            return _at_floor(on_floor, low)
        lo = max(hi / 2.0, low)
        while feasible(lo):
            if lo == low:
                return _at_floor(on_floor, low)
            hi, lo = lo, max(lo / 2.0, low)
    else:
        lo = hi
        hi *= 2.0
        while not feasible(hi):
            lo = hi
            hi *= 2.0
            if hi > high:
                if feasible(high):
                    hi = high
                    break
                raise ValueError(f"no value in [{low!r}, {high!r}] is feasible")
    # Invariant: feasible(hi) and not feasible(lo).
    while hi - lo > rtol * hi:
        mid = math.sqrt(lo * hi) if hi / lo > 2.0 else 0.5 * (lo + hi)
        if feasible(mid):
            hi = mid
        else:
            lo = mid
    return float(hi)


def _at_floor(on_floor, low):
    if on_floor is not None:
        on_floor(low)
    return float(low)


@fill_doc
def calibrate_parameter(make_event, *, target_epsilon, delta, low, high, composition="auto",
                        increasing=True, rtol=1e-9, orders=None, initial=None):
    """Largest (or smallest) parameter whose event meets a target epsilon.

    The one calibration routine of the toolkit: every estimator finds its noise
    scale or per-step budget here, from the same events it reports
    (:func:`epsilon_of_event`).  Epsilon must be monotone in ``x``.

    Parameters
    ----------
    make_event : callable
        ``x -> PrivacyEvent``.
    target_epsilon : float
        > 0.
    delta : float
        In [0, 1).
    low, high : float
        ``0 < low < high``; the range searched.
    composition : {"auto", "rdp", "advanced", "basic"}, default="auto"
        How :func:`epsilon_of_event` composes the event's parts.
    increasing : bool, default=True
        ``True``: epsilon increases with ``x`` (a per-step epsilon); the
        largest feasible ``x`` is returned.  ``False``: epsilon decreases with
        ``x`` (a noise multiplier); the smallest feasible ``x`` is returned.
    rtol : float, default=1e-9
        Relative width of the final bracket.
    orders : array-like of float, default=None
        RDP orders (``None``: ``DEFAULT_RDP_ORDERS``).
    initial : float, default=None
        ``None``: geometric bisection of ``[low, high]``.  A value (only with
        ``increasing=False``): the search starts there and doubles or halves
        to bracket the answer (``bracket_search``), which costs fewer
        evaluations when the answer is near ``initial``; an answer at
        ``low`` (the target is met at the smallest value searched) is
        returned with a ``UserWarning`` that less than the target is spent.

    Returns
    -------
    x : float
        Feasible: ``epsilon_of_event(make_event(x)) <= target_epsilon``.

    Raises
    ------
    TypeError
        ``make_event`` is not callable; non-numeric ``low``, ``high`` or
        ``target_epsilon``.
    ValueError
        ``low`` or ``high`` not finite and > 0, ``low >= high``; no ``x`` in the
        range is feasible; ``initial`` with ``increasing=True``.
    """
    if not callable(make_event):
        raise TypeError("make_event must be a callable parameter -> PrivacyEvent, got "
                        f"{type(make_event).__name__}")
    target = check_scalar_range(target_epsilon, "target_epsilon", low=0.0, low_open=True)
    low = check_scalar_range(low, "low", low=0.0, low_open=True)
    high = check_scalar_range(high, "high", low=0.0, low_open=True)
    if low >= high:
        raise ValueError(f"low must be < high (the bracket [low, high]), got low={low!r}, "
                         f"high={high!r}")
    composition = check_choice(composition, "composition", ACCOUNTING_METHODS)

    def ok(x):
        return epsilon_of_event(make_event(x), delta, composition=composition,
                                orders=orders) <= target

    if initial is not None:
        if increasing:
            raise ValueError("initial is supported for a decreasing epsilon (a noise "
                             "scale: increasing=False)")
        initial = check_scalar_range(initial, "initial", low=0.0, low_open=True)

        def floor_warning(x):
            warnings.warn(
                f"target_epsilon={target!r} is met at the floor {x!r} of the noise "
                "searched (epsilon "
                f"{epsilon_of_event(make_event(x), delta, composition=composition, orders=orders):.6g}); "
                "the noise is not lowered further, so less than the target is spent",
                UserWarning, stacklevel=3)
        try:
            return bracket_search(ok, initial=initial, low=low, high=high, rtol=rtol,
                                  on_floor=floor_warning)
        except ValueError:
            raise ValueError(f"no parameter in [{low:g}, {high:g}] meets epsilon={target!r} "
                             f"at delta={delta!r} with composition {composition!r}") from None
    feasible, infeasible = (low, high) if increasing else (high, low)
    if not ok(feasible):
        raise ValueError(f"no parameter in [{low:g}, {high:g}] meets epsilon={target!r} at "
                         f"delta={delta!r} with composition {composition!r}")
    if ok(infeasible):
        return infeasible
    for _ in range(300):
        mid = math.sqrt(feasible * infeasible)
        if ok(mid):
            feasible = mid
        else:
            infeasible = mid
        if abs(feasible - infeasible) <= rtol * max(feasible, infeasible):
            break
    return feasible


#: epsilon_of_event memoised for the reports: events are frozen, and a fit asks
#: twice (check, then record).
_epsilon_of_event = functools.lru_cache(maxsize=256)(epsilon_of_event)


def accounted_spend(event, claimed):
    """``(epsilon, delta)`` that the accountant gives the event at the claimed delta.

    Every estimator reports and charges what
    :func:`~dptoolkit.accounting.epsilon_of_event` says of its released event,
    never the target it calibrated for; a claim below the accountant's figure
    is a privacy bug and raises.

    Parameters
    ----------
    event : PrivacyEvent or None
        The released event.
    claimed : tuple (epsilon, delta) or None
        What the fit calibrated for.

    Returns
    -------
    tuple (epsilon, delta) or None
        ``(epsilon_of_event(event, delta), delta)``; ``claimed`` itself without an
        event, with ``delta >= 1`` or an infinite epsilon (nothing to refine).

    Raises
    ------
    RuntimeError
        The accountant's epsilon exceeds the claimed one.
    """
    if claimed is None:
        return None
    epsilon, delta = float(claimed[0]), float(claimed[1])
    if event is None or delta >= 1.0 or not math.isfinite(epsilon):
        return epsilon, delta           # no finite guarantee to refine
    accounted = _epsilon_of_event(event, delta)
    if not accounted <= epsilon * (1.0 + 1e-9):
        raise RuntimeError(
            f"internal error: the fit claims epsilon={epsilon!r} at delta={delta!r} but "
            f"the accountant gives {accounted!r} for its event {event!r}; nothing was "
            "released (please report this)")
    return accounted, delta


@fill_doc
class PrivacyAccountant:
    """Composes privacy events and reports the guarantee.

    Parameters
    ----------
    composition : {"auto", "rdp", "advanced", "basic"}, default="auto"
        How the events compose into (epsilon, delta); see the module
        docstring.  ``"auto"`` takes the smallest valid epsilon.
    orders : array-like of float, default=None
        RDP orders.

    Attributes
    ----------
    events : list of PrivacyEvent
        What was composed, in order.

    Examples
    --------
    >>> from dptoolkit.accounting import PrivacyAccountant
    >>> from dptoolkit.accounting.events import (ExponentialMechanismEvent,
    ...     PoissonSampledEvent, GaussianEvent)
    >>> acc = PrivacyAccountant()
    >>> _ = acc.compose(ExponentialMechanismEvent(0.0156), count=1000)
    >>> round(acc.get_epsilon(1e-5), 3)
    0.998
    >>> _ = acc.compose(PoissonSampledEvent(0.01, GaussianEvent(5.0)), count=100)
    >>> acc.get_epsilon(1e-5) > 0.998
    True
    """

    def __init__(self, *, composition="auto", orders=None):
        self.composition = check_choice(composition, "composition", ACCOUNTING_METHODS)
        self.orders = None if orders is None else _check_orders(orders)
        self.events = []

    def __repr__(self):
        return (f"PrivacyAccountant(composition={self.composition!r}, "
                f"n_events={len(self.events)})")

    @property
    def event(self):
        """The composition of everything so far, as one event."""
        return ev.ComposedEvent(tuple(self.events))

    def compose(self, event, count=1):
        """Add ``event`` run ``count`` times; returns self."""
        ev._check_event(event, "event")
        count = check_positive_int(count, "count")
        self.events.append(event if count == 1 else ev.SelfComposedEvent(event, count))
        return self

    def get_epsilon(self, delta):
        """Epsilon of the composition at ``delta`` (see :func:`epsilon_of_event`)."""
        return epsilon_of_event(self.event, delta, composition=self.composition,
                                orders=self.orders)

    def get_guarantee(self, delta):
        """``(epsilon, delta)`` of the composition."""
        return self.get_epsilon(delta), float(delta)
