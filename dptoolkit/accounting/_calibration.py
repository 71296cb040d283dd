"""Noise calibration: the smallest noise multiplier meeting a privacy target."""
import warnings

from .._validation import check_positive_int, check_scalar_range
from ._accountant import bracket_search
from ._rdp import (
    _check_choice,
    _check_noise_multiplier,
    _check_sampling_rate,
    rdp_to_epsilon,
)
from ._rdp_accountant import MomentsAccountant, RDPAccountant

__all__ = ["MIN_NOISE_MULTIPLIER", "calibrate_noise_multiplier"]

#: Default floor of the calibrated noise multiplier.  Below it the
#: fractional-order series of the subsampled Gaussian ([MTZ19] Sec. 3.3) needs
#: more than 10**6 terms (tens of seconds per evaluation), and one step there
#: already costs epsilon > 5e7 at delta = 1e-5: a target above that is met at
#: the floor (with a ``UserWarning``), so a huge finite epsilon is a fast fit
#: whose spend (computed at the floor) is below the target, never a hang.
MIN_NOISE_MULTIPLIER = 1e-4


def _make_accountant(accountant, sampling, orders, conversion, series):
    relation = "add_remove" if sampling == "poisson" else "replace_one"
    if isinstance(accountant, RDPAccountant):
        if orders is not None or conversion is not None or series is not None:
            raise ValueError("orders, conversion and series are taken from the accountant "
                             "instance; do not pass them as well")
        return accountant.copy()
    _check_choice(accountant, "accountant", ("rdp", "moments"))
    if accountant == "moments":
        if sampling != "poisson":
            raise ValueError("the moments accountant (Abadi et al. 2016) assumes Poisson "
                             "sampling; use accountant='rdp' with "
                             "sampling='without_replacement'")
        if orders is not None or (conversion not in (None, "classic")) or series is not None:
            raise ValueError("accountant='moments' fixes orders 2..33, the classic conversion "
                             "and integer orders only")
        return MomentsAccountant()
    return RDPAccountant(orders, neighboring_relation=relation,
                         conversion="improved" if conversion is None else conversion,
                         series="exact" if series is None else series)


def calibrate_noise_multiplier(*, target_epsilon, delta, sampling_rate, steps,
                               accountant="rdp", sampling="poisson", orders=None,
                               conversion=None, series=None, tol=1e-6,
                               max_noise_multiplier=1e6,
                               min_noise_multiplier=MIN_NOISE_MULTIPLIER):
    """Smallest noise multiplier such that ``steps`` subsampled Gaussian steps
    are (``target_epsilon``, ``delta``)-DP.

    Mechanism: the subsampled Gaussian of
    ``RDPAccountant.compose_subsampled_gaussian`` (sum of clipped
    contributions of a sampled batch plus N(0, (noise_multiplier *
    sensitivity)^2) noise), run ``steps`` times and composed by the chosen
    accountant.  Epsilon is non-increasing in the noise multiplier, so the
    answer is found by bisection (on a doubling/halving bracket) until the
    bracket ``[lo, hi]`` satisfies ``hi - lo <= tol * hi``.  The returned
    value is always the upper end ``hi``, whose epsilon was computed and is
    ``<= target_epsilon``: the result never exceeds the target.  The search
    never goes below ``min_noise_multiplier``: a target that this floor
    already meets (a huge epsilon, e.g. 1e300) returns the floor, with a
    ``UserWarning`` stating it, in a bounded number of evaluations.

    Parameters
    ----------
    target_epsilon : float
        > 0 and finite.
    delta : float
        In (0, 1).
    sampling_rate : float
        In (0, 1]; 1 means no subsampling (the Gaussian mechanism).
    steps : int
        Number of steps (iterations), >= 1.
    accountant : {"rdp", "moments"} or RDPAccountant, default="rdp"
        ``"rdp"``: ``RDPAccountant`` (default orders, ``conversion``
        default "improved", exact series).  ``"moments"``:
        ``MomentsAccountant`` (Abadi et al. 2016: integer moments 1..32,
        classic conversion), as used by the DP-SCD paper.  An
        ``RDPAccountant`` instance: its settings *and what it has
        already composed* are used (the instance is not modified), so the
        result calibrates the remaining ``steps`` against the total target.
    sampling : {"poisson", "without_replacement"}, default="poisson"
        How batches are drawn; it must be what the algorithm does (see
        ``dptoolkit.accounting._rdp``).  ``"without_replacement"`` uses
        the replace-one relation and the [WBK19] bound.
    orders : array-like of float, default=None
        RDP orders for ``accountant="rdp"``.
    conversion : {"improved", "classic"}, default=None
        RDP -> DP conversion for ``accountant="rdp"`` (None: "improved").
    series : {"exact", "absolute"}, default=None
        Fractional-order series for ``accountant="rdp"`` (None: "exact").
    tol : float, default=1e-6
        Relative tolerance on the noise multiplier, in (0, 1).
    max_noise_multiplier : float, default=1e6
        Largest noise multiplier tried.
    min_noise_multiplier : float, default=MIN_NOISE_MULTIPLIER (1e-4)
        Smallest noise multiplier tried, > 0 and < ``max_noise_multiplier``.
        Below 1e-4 one evaluation of the subsampled-Gaussian RDP can take
        tens of seconds; a target met there is returned as this floor.

    Returns
    -------
    noise_multiplier : float
        ``sigma / sensitivity``; its epsilon is <= ``target_epsilon`` and
        the smallest feasible value is within relative ``tol`` below it.

    Raises
    ------
    TypeError
        Non-numeric input.
    ValueError
        Invalid ranges (``min_noise_multiplier >= max_noise_multiplier``); a target that no noise
        can meet (e.g. with the
        classic conversion epsilon >= min over orders of
        log(1/delta)/(alpha - 1) however large the noise, or a template
        accountant that has already spent more than the target); a target
        that needs a noise multiplier above ``max_noise_multiplier``.

    Examples
    --------
    >>> from dptoolkit.accounting import RDPAccountant, calibrate_noise_multiplier
    >>> sigma = calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5,
    ...                                    sampling_rate=0.01, steps=1000)
    >>> eps = (RDPAccountant()
    ...        .compose_subsampled_gaussian(noise_multiplier=sigma,
    ...                                     sampling_rate=0.01, steps=1000)
    ...        .get_epsilon(1e-5))
    >>> eps <= 1.0
    True
    """
    target = check_scalar_range(target_epsilon, "target_epsilon", low=0.0, low_open=True)
    delta = check_scalar_range(delta, "delta", low=0.0, high=1.0, low_open=True, high_open=True)
    sampling_rate = _check_sampling_rate(sampling_rate)
    steps = check_positive_int(steps, "steps")
    tol = check_scalar_range(tol, "tol", low=0.0, high=1.0, low_open=True, high_open=True)
    max_sigma = _check_noise_multiplier(max_noise_multiplier)
    min_sigma = check_scalar_range(min_noise_multiplier, "min_noise_multiplier", low=0.0,
                                   high=max_sigma, low_open=True, high_open=True)
    _check_choice(sampling, "sampling", ("poisson", "without_replacement"))
    base = _make_accountant(accountant, sampling, orders, conversion, series)
    orders_arr, base_rdp, conv = base.orders, base.rdp, base.conversion

    # With infinite noise each step's RDP is 0: the floor of what can be met.
    floor, _ = rdp_to_epsilon(orders_arr, base_rdp, delta, conversion=conv)
    if floor >= target:
        raise ValueError(
            f"no noise multiplier meets target_epsilon={target!r} at delta={delta!r}: even "
            f"infinite noise gives epsilon={floor!r} with these orders, conversion "
            f"{conv!r} and what the accountant has already composed")

    def epsilon_of(sigma):
        acc = base.copy()
        acc.compose_subsampled_gaussian(noise_multiplier=sigma, sampling_rate=sampling_rate,
                                        steps=steps, sampling=sampling)
        return acc.get_epsilon(delta)

    def floor_warning(sigma):
        warnings.warn(
            f"target_epsilon={target!r} is met at the floor min_noise_multiplier="
            f"{sigma!r} (epsilon {epsilon_of(sigma):.6g}); the noise is not lowered "
            "further, so less than the target is spent", UserWarning, stacklevel=4)

    try:
        return bracket_search(lambda sigma: epsilon_of(sigma) <= target, initial=1.0,
                              low=min_sigma, high=max_sigma, rtol=tol,
                              on_floor=floor_warning)
    except ValueError:
        raise ValueError(f"target_epsilon={target!r} needs noise_multiplier > "
                         f"max_noise_multiplier={max_sigma!r}") from None
