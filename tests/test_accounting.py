"""Tests of dptoolkit.accounting."""
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from dptoolkit.accounting import (
    DEFAULT_RDP_ORDERS,
    BudgetAccountant,
    MomentsAccountant,
    RDPAccountant,
    advanced_composition,
    basic_composition,
    calibrate_noise_multiplier,
    laplace_report_noisy_max_composition,
    optimal_composition,
    per_step_epsilon,
    rdp_gaussian,
    rdp_laplace,
    rdp_poisson_subsampled_gaussian,
    rdp_sampled_without_replacement_gaussian,
    rdp_to_delta,
    rdp_to_epsilon,
)
from dptoolkit.exceptions import BudgetExceededError


# ---------------------------------------------------------------------------
# Composition theorems
# ---------------------------------------------------------------------------

def test_basic_composition():
    eps_tot, delta_tot = basic_composition(epsilon=0.5, delta=1e-6, k=10)
    assert eps_tot == 5.0 and delta_tot == pytest.approx(1e-5, rel=1e-15)
    assert basic_composition(epsilon=0.5) == (0.5, 0.0)
    assert basic_composition(epsilon=0.5, delta=0.3, k=10)[1] == 1.0


def test_advanced_composition_closed_form():
    eps, k, ds = 0.01, 1000, 1e-5
    expected = eps * math.sqrt(2 * k * math.log(1 / ds)) + k * eps * (math.exp(eps) - 1)
    eps_tot, delta_tot = advanced_composition(epsilon=eps, delta=0.0, k=k, delta_slack=ds)
    assert eps_tot == pytest.approx(expected, rel=1e-14)
    assert eps_tot == pytest.approx(1.6179288002268, rel=1e-12)
    assert delta_tot == ds
    _, delta_tot = advanced_composition(epsilon=eps, delta=1e-8, k=k, delta_slack=ds)
    assert delta_tot == pytest.approx(k * 1e-8 + ds, rel=1e-14)


def _log_advanced_epsilon(eps, k, delta_slack):
    """log of the DRV bound computed in log space (no overflow), for reference."""
    a = math.sqrt(2 * k * math.log(1 / delta_slack))
    # eps (a + k (e^eps - 1)) = eps e^eps k (1 + (a - k) e^-eps / k)
    return math.log(eps) + eps + math.log(k) + math.log1p((a - k) * math.exp(-eps) / k)


@pytest.mark.parametrize("eps", [709.0, 709.79, 710.0, 1e4, 1e300])
@pytest.mark.parametrize("k", [1, 3, 10**6])
def test_advanced_composition_large_epsilon_is_inf_not_overflow_error(eps, k):
    # the bound exceeds the largest float there: inf is its rounded value
    # (math.expm1 used to raise OverflowError for eps > 709.78)
    assert _log_advanced_epsilon(eps, k, 1e-5) > math.log(sys.float_info.max)
    eps_tot, delta_tot = advanced_composition(epsilon=eps, delta=1e-9, k=k, delta_slack=1e-5)
    assert eps_tot == math.inf
    assert delta_tot == pytest.approx(k * 1e-9 + 1e-5, rel=1e-14)
    # and the basic bound, which is then the useful one, is finite
    assert math.isfinite(basic_composition(epsilon=eps, k=k)[0])


@pytest.mark.parametrize("eps", [30.0, 300.0, 690.0, 700.0])
def test_advanced_composition_large_finite_epsilon(eps):
    k, ds = 2, 1e-5
    eps_tot, _ = advanced_composition(epsilon=eps, delta=0.0, k=k, delta_slack=ds)
    assert math.isfinite(eps_tot)
    assert math.log(eps_tot) == pytest.approx(_log_advanced_epsilon(eps, k, ds), rel=1e-14)


def test_per_step_epsilon_up_to_largest_float():
    # the bracket and Newton's derivative evaluate e^eps near log(DBL_MAX)
    target = sys.float_info.max
    for k in [1, 2, 1000, 10**9]:
        eps = per_step_epsilon(epsilon_total=target, delta_slack=1e-5, k=k)
        total, _ = advanced_composition(epsilon=eps, delta=0.0, k=k, delta_slack=1e-5)
        # relative condition number of the inverse ~ eps ~ 700
        assert abs(total - target) <= 1e-12 * target


@pytest.mark.parametrize("target", [1e-300, 1e-100, 1e-12, 1e-3, 0.1, 1.0, 10.0, 1e4, 1e100, 1e300])
@pytest.mark.parametrize("k", [1, 2, 1000, 400_000, 10**9])
@pytest.mark.parametrize("delta_slack", [1e-300, 1e-8, 0.5, 1 - 1e-16])
def test_per_step_epsilon_inverts_advanced_composition(target, k, delta_slack):
    eps = per_step_epsilon(epsilon_total=target, delta_slack=delta_slack, k=k)
    assert eps > 0
    total, _ = advanced_composition(epsilon=eps, delta=0.0, k=k, delta_slack=delta_slack)
    assert abs(total - target) <= 1e-12 * target


def test_per_step_epsilon_monotone_and_round_trip():
    targets = np.logspace(-3, 2, 30)
    eps = [per_step_epsilon(epsilon_total=t, delta_slack=1e-6, k=4000) for t in targets]
    assert np.all(np.diff(eps) > 0)
    # eps -> total -> eps round trip
    for e in [1e-6, 1e-3, 0.1, 1.0, 5.0]:
        total, _ = advanced_composition(epsilon=e, delta=0.0, k=50, delta_slack=1e-5)
        assert per_step_epsilon(epsilon_total=total, delta_slack=1e-5, k=50) == pytest.approx(e, rel=1e-12)


@pytest.mark.parametrize("kwargs, exc", [
    (dict(epsilon=-1.0, delta=0.0, k=1, delta_slack=1e-5), ValueError),
    (dict(epsilon=0.0, delta=0.0, k=1, delta_slack=1e-5), ValueError),
    (dict(epsilon=float("nan"), delta=0.0, k=1, delta_slack=1e-5), ValueError),
    (dict(epsilon=float("inf"), delta=0.0, k=1, delta_slack=1e-5), ValueError),
    (dict(epsilon="1", delta=0.0, k=1, delta_slack=1e-5), TypeError),
    (dict(epsilon=1.0, delta=1.0, k=1, delta_slack=1e-5), ValueError),
    (dict(epsilon=1.0, delta=-0.1, k=1, delta_slack=1e-5), ValueError),
    (dict(epsilon=1.0, delta=0.0, k=0, delta_slack=1e-5), ValueError),
    (dict(epsilon=1.0, delta=0.0, k=1.5, delta_slack=1e-5), TypeError),
    (dict(epsilon=1.0, delta=0.0, k=1, delta_slack=0.0), ValueError),
    (dict(epsilon=1.0, delta=0.0, k=1, delta_slack=1.0), ValueError),
])
def test_advanced_composition_bad_input(kwargs, exc):
    with pytest.raises(exc):
        advanced_composition(**kwargs)


@pytest.mark.parametrize("kwargs, exc", [
    (dict(epsilon_total=0.0, delta_slack=1e-5, k=1), ValueError),
    (dict(epsilon_total=-1.0, delta_slack=1e-5, k=1), ValueError),
    (dict(epsilon_total=float("inf"), delta_slack=1e-5, k=1), ValueError),
    (dict(epsilon_total=float("nan"), delta_slack=1e-5, k=1), ValueError),
    (dict(epsilon_total=None, delta_slack=1e-5, k=1), TypeError),
    (dict(epsilon_total=1.0, delta_slack=0.0, k=1), ValueError),
    (dict(epsilon_total=1.0, delta_slack=1.5, k=1), ValueError),
    (dict(epsilon_total=1.0, delta_slack=1e-5, k=0), ValueError),
])
def test_per_step_epsilon_bad_input(kwargs, exc):
    with pytest.raises(exc):
        per_step_epsilon(**kwargs)


def test_basic_composition_bad_input():
    with pytest.raises(ValueError, match="epsilon"):
        basic_composition(epsilon=-1.0, delta=0.0, k=3)
    with pytest.raises(ValueError, match="k"):
        basic_composition(epsilon=1.0, delta=0.0, k=0)
    with pytest.raises(TypeError):
        basic_composition(1.0)


# ---------------------------------------------------------------------------
# Optimal (KOV) composition
# ---------------------------------------------------------------------------

def test_optimal_composition_matches_dp_accounting():
    pld_accountant = pytest.importorskip("dp_accounting.pld.accountant")
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    for eps, delta, k, slack in [(0.01, 0.0, 1000, 1e-5), (0.1, 0.0, 100, 1e-6),
                                 (0.5, 1e-6, 100, 1e-5), (1.0, 0.0, 10, 1e-3),
                                 (0.05, 1e-8, 900, 1e-6)]:
        mine, delta_tot = optimal_composition(epsilon=eps, delta=delta, k=k, delta_slack=slack)
        total_delta = 1 - (1 - delta) ** k * (1 - slack)
        ref = pld_accountant.advanced_composition(
            DifferentialPrivacyParameters(eps, delta), k, total_delta)
        assert mine == pytest.approx(ref, rel=1e-12)
        assert delta_tot <= total_delta * (1 + 1e-12)
        drv, _ = advanced_composition(epsilon=eps, delta=delta, k=k, delta_slack=slack)
        assert mine <= min(drv, k * eps) + 1e-12


def test_optimal_composition_known_value():
    eps, delta = optimal_composition(epsilon=0.01, delta=0.0, k=1000, delta_slack=1e-5)
    assert eps == pytest.approx(1.2)
    assert 0 < delta <= 1e-5


def test_optimal_composition_edge_cases():
    assert optimal_composition(epsilon=0.3, delta=0.0, k=1, delta_slack=1e-5) == (0.3, 0.0)
    # zero slack: only i = 0 is allowed -> basic composition
    assert optimal_composition(epsilon=0.3, delta=0.0, k=7, delta_slack=0.0)[0] == pytest.approx(2.1)
    # huge k * eps must not overflow (dp-accounting's float version overflows
    # once (1 + e^eps)^k > 1e308, e.g. eps=0.05, k=2000)
    eps, _ = optimal_composition(epsilon=0.05, delta=1e-8, k=2000, delta_slack=1e-6)
    drv, _ = advanced_composition(epsilon=0.05, delta=1e-8, k=2000, delta_slack=1e-6)
    assert 0 < eps <= drv
    eps, _ = optimal_composition(epsilon=5.0, delta=0.0, k=500, delta_slack=1e-6)
    assert np.isfinite(eps) and eps <= 2500.0
    with pytest.raises(ValueError, match="delta_slack"):
        optimal_composition(epsilon=0.3, delta=0.0, k=7, delta_slack=1.0)


# ---------------------------------------------------------------------------
# RDP accountant versus dp-accounting (test-only dependency)
# ---------------------------------------------------------------------------
# The comparison grid.  RDP depends on (q, sigma); steps scale it; delta enters
# only the conversion.
GRID_Q = (1e-3, 1e-2, 0.1, 1.0)
GRID_SIGMA = (0.5, 0.8, 1.1, 2.0, 4.0, 10.0)
GRID_STEPS = (1, 100, 10**4)
GRID_DELTA = (1e-5, 1e-8)


@pytest.fixture(scope="module")
def dpacc():
    dp_accounting = pytest.importorskip("dp_accounting")
    import logging

    logging.getLogger("absl").setLevel(logging.ERROR)  # its non-convergence notices
    return dp_accounting


@pytest.fixture(scope="module")
def dpacc_grid(dpacc):
    """dp-accounting's epsilons on the whole grid, through its public API."""
    out = {}
    for q in GRID_Q:
        for sigma in GRID_SIGMA:
            for steps in GRID_STEPS:
                acc = dpacc.rdp.RdpAccountant()
                acc.compose(dpacc.PoissonSampledDpEvent(q, dpacc.GaussianDpEvent(sigma)), steps)
                for delta in GRID_DELTA:
                    out[q, sigma, steps, delta] = acc.get_epsilon(delta)
    return out


def test_default_orders_are_dp_accountings(dpacc):
    from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS as ref

    assert np.array_equal(np.asarray(DEFAULT_RDP_ORDERS), np.asarray(ref, dtype=float))


def test_grid_epsilons_match_dp_accounting_same_series(dpacc_grid):
    """Same orders, same conversion, same (dp-accounting's)
    fractional-order series -> epsilons agree to 1e-6 relative on the whole grid."""
    worst = 0.0
    for q in GRID_Q:
        for sigma in GRID_SIGMA:
            base = RDPAccountant(series="absolute").compose_subsampled_gaussian(
                noise_multiplier=sigma, sampling_rate=q)
            for steps in GRID_STEPS:
                acc = RDPAccountant(series="absolute").compose_rdp(base.rdp, steps=steps)
                for delta in GRID_DELTA:
                    ref = dpacc_grid[q, sigma, steps, delta]
                    mine = acc.get_epsilon(delta)
                    worst = max(worst, abs(mine - ref) / ref)
    assert worst <= 1e-6, worst


def test_grid_exact_series_never_looser_than_dp_accounting(dpacc_grid):
    """With the exact (signed) series the epsilon is never larger than
    dp-accounting's, and equal where the optimal order is an integer."""
    integer_orders = [a for a in DEFAULT_RDP_ORDERS if float(a).is_integer()]
    for q in GRID_Q:
        for sigma in GRID_SIGMA:
            rdp1 = rdp_poisson_subsampled_gaussian(noise_multiplier=sigma, sampling_rate=q)
            for steps in GRID_STEPS:
                for delta in GRID_DELTA:
                    ref = dpacc_grid[q, sigma, steps, delta]
                    eps, order = rdp_to_epsilon(DEFAULT_RDP_ORDERS, steps * rdp1, delta)
                    assert eps <= ref * (1 + 1e-9)
                    if q == 1.0:
                        assert eps == pytest.approx(ref, rel=1e-9)
            # integer orders alone: both implement the same exact formula
            acc = RDPAccountant(orders=integer_orders).compose_subsampled_gaussian(
                noise_multiplier=sigma, sampling_rate=q, steps=100)
            import dp_accounting

            ref_acc = dp_accounting.rdp.RdpAccountant(orders=integer_orders)
            ref_acc.compose(dp_accounting.PoissonSampledDpEvent(
                q, dp_accounting.GaussianDpEvent(sigma)), 100)
            for delta in GRID_DELTA:
                assert acc.get_epsilon(delta) == pytest.approx(ref_acc.get_epsilon(delta),
                                                               rel=1e-8)
                assert acc.get_delta(1.0) == pytest.approx(ref_acc.get_delta(1.0), rel=1e-6,
                                                           abs=1e-300)


def _numerical_rdp(q, sigma, alpha):
    """RDP of the Poisson-subsampled Gaussian by quadrature of its definition:
    A = E_{z ~ N(0, s^2)} [((1-q) + q exp((2z - 1)/(2 s^2)))^alpha]."""
    from scipy import integrate, stats

    def integrand(z):
        return math.exp(stats.norm.logpdf(z, scale=sigma) + alpha * np.logaddexp(
            math.log1p(-q), math.log(q) + (2 * z - 1) / (2 * sigma**2)))

    z0 = sigma**2 * math.log(1 / q - 1) + 0.5
    val, _ = integrate.quad(integrand, -60 * sigma, 60 * sigma * (1 + alpha), limit=2000,
                            points=sorted({0.0, 0.5, z0}), epsabs=0, epsrel=1e-13)
    return math.log(val) / (alpha - 1)


@pytest.mark.parametrize("q, sigma, alpha", [
    (0.1, 1.1, 1.5), (0.1, 0.5, 1.7), (0.1, 0.8, 1.1), (0.01, 0.5, 1.5),
    (0.1, 4.0, 2.8), (0.001, 10.0, 1.5), (0.01, 2.0, 7.3), (0.1, 2.0, 5.5), (0.01, 0.8, 3.0),
])
def test_rdp_matches_numerical_integration(q, sigma, alpha):
    """The exact series (fractional) and the exact sum (integer) equal the
    defining integral; dp-accounting's absolute-value series is larger."""
    exact = rdp_poisson_subsampled_gaussian(noise_multiplier=sigma, sampling_rate=q,
                                            orders=[alpha])[0]
    assert exact == pytest.approx(_numerical_rdp(q, sigma, alpha), rel=1e-7)
    absolute = rdp_poisson_subsampled_gaussian(noise_multiplier=sigma, sampling_rate=q,
                                               orders=[alpha], series="absolute")[0]
    assert absolute >= exact * (1 - 1e-12)


def test_rdp_tiny_values_are_accurate():
    """A - 1 is summed without cancellation: RDP ~ 1e-13 still has ~all digits
    (second-order expansion q^2 alpha / (2 sigma^2) ... for small q / large sigma)."""
    q, sigma = 1e-6, 50.0
    rdp = rdp_poisson_subsampled_gaussian(noise_multiplier=sigma, sampling_rate=q,
                                          orders=[2.0, 3.0])
    # exact: A_2 - 1 = q^2 (e^{1/s^2} - 1)
    assert rdp[0] == pytest.approx(math.log1p(q * q * math.expm1(1 / sigma**2)), rel=1e-12)
    assert rdp[1] > 0


def test_rdp_accountant_api_and_chaining(dpacc):
    acc = RDPAccountant()
    out = acc.compose_subsampled_gaussian(noise_multiplier=1.1, sampling_rate=0.01, steps=500)
    assert out is acc
    acc.compose_gaussian(noise_multiplier=5.0, steps=2).compose_laplace(noise_multiplier=10.0)
    ref = dpacc.rdp.RdpAccountant()
    ref.compose(dpacc.PoissonSampledDpEvent(0.01, dpacc.GaussianDpEvent(1.1)), 500)
    ref.compose(dpacc.GaussianDpEvent(5.0), 2)
    ref.compose(dpacc.LaplaceDpEvent(10.0))
    # the optimum here is at an integer order, where both are exact
    assert acc.get_epsilon(1e-6) == pytest.approx(ref.get_epsilon(1e-6), rel=1e-8)
    assert acc.get_delta(2.0) == pytest.approx(ref.get_delta(2.0), rel=1e-6)
    assert len(acc.history) == 3
    # copies are independent
    cp = acc.copy().compose_gaussian(noise_multiplier=1.0)
    assert cp.get_epsilon(1e-6) > acc.get_epsilon(1e-6)


def test_laplace_and_gaussian_rdp_match_dp_accounting(dpacc):
    orders = DEFAULT_RDP_ORDERS
    for b in (0.3, 1.0, 7.0):
        ref = dpacc.rdp.RdpAccountant()
        ref.compose(dpacc.LaplaceDpEvent(b), 3)
        mine = RDPAccountant().compose_laplace(noise_multiplier=b, steps=3)
        for delta in GRID_DELTA:
            assert mine.get_epsilon(delta) == pytest.approx(ref.get_epsilon(delta), rel=1e-9)
    # Laplace RDP tends to its pure epsilon for large orders, and is <= it
    r = rdp_laplace(noise_multiplier=2.0, orders=orders)
    assert np.all(r <= 0.5 + 1e-15) and r[-1] == pytest.approx(0.5, rel=1e-2)
    assert np.allclose(rdp_gaussian(noise_multiplier=2.0, orders=[2, 4]), [0.25, 0.5])


def test_conversions():
    orders = np.array([1.5, 2.0, 8.0, 32.0])
    rdp = np.array([0.01, 0.02, 0.1, 0.5])
    delta = 1e-5
    classic = rdp + math.log(1 / delta) / (orders - 1)
    eps, order = rdp_to_epsilon(orders, rdp, delta, conversion="classic")
    assert eps == pytest.approx(classic.min()) and order == orders[np.argmin(classic)]
    improved = rdp + np.log((orders - 1) / orders) - (math.log(delta) + np.log(orders)) / (orders - 1)
    eps_i, _ = rdp_to_epsilon(orders, rdp, delta)
    assert eps_i == pytest.approx(improved.min()) and eps_i < eps
    # get_delta inverts get_epsilon (same conversion)
    for conv in ("classic", "improved"):
        e, _ = rdp_to_epsilon(orders, rdp, delta, conversion=conv)
        d, _ = rdp_to_delta(orders, rdp, e, conversion=conv)
        assert d <= delta * (1 + 1e-9) and d == pytest.approx(delta, rel=1e-6)
    # KL clause: tiny RDP gives epsilon 0 under the improved conversion
    assert rdp_to_epsilon(orders, np.full(4, 1e-12), 1e-5)[0] == 0.0
    # infinite RDP everywhere -> infinite epsilon, delta 1
    assert rdp_to_epsilon(orders, np.full(4, np.inf), 1e-5)[0] == np.inf
    assert rdp_to_delta(orders, np.full(4, np.inf), 1.0)[0] == 1.0


def test_moments_accountant_reproduces_abadi():
    """Abadi et al. 2016, Sec. 3.1: q = 0.01, sigma = 4, T = 10^4, delta = 1e-5
    gives "eps ~ 1.26" with the moments accountant.  Exact integer log moments
    (lambda = 1..32) and the tail bound give 1.2586 (lambda = 19); the RDP
    accountant with the improved conversion gives 1.0355."""
    ma = MomentsAccountant().compose_subsampled_gaussian(noise_multiplier=4.0, sampling_rate=0.01,
                                                         steps=10**4)
    eps, order = ma.get_epsilon_and_order(1e-5)
    assert round(eps, 2) == 1.26
    assert eps == pytest.approx(1.258575, abs=1e-6) and order == 20.0
    assert ma.log_moments.shape == (32,)
    rdp = RDPAccountant().compose_subsampled_gaussian(noise_multiplier=4.0, sampling_rate=0.01,
                                                      steps=10**4)
    assert rdp.get_epsilon(1e-5) == pytest.approx(1.035490, abs=1e-6)
    assert rdp.get_epsilon(1e-5, conversion="classic") == pytest.approx(eps, rel=1e-12)


# ---------------------------------------------------------------------------
# Sampling without replacement
# ---------------------------------------------------------------------------

def test_without_replacement_requires_replace_one():
    with pytest.raises(ValueError, match="replace_one"):
        RDPAccountant().compose_subsampled_gaussian(noise_multiplier=1.0, sampling_rate=0.01,
                                                    sampling="without_replacement")
    with pytest.raises(ValueError, match="add_remove"):
        RDPAccountant(neighboring_relation="replace_one").compose_subsampled_gaussian(
            noise_multiplier=1.0, sampling_rate=0.01, sampling="poisson")
    with pytest.raises(ValueError, match="sampling"):
        RDPAccountant().compose_subsampled_gaussian(noise_multiplier=1.0, sampling_rate=0.01,
                                                    sampling="shuffle")


@pytest.mark.parametrize("q, sigma", [(0.01, 1.0), (0.1, 2.0), (0.001, 4.0), (0.05, 0.8)])
def test_without_replacement_vs_dp_accounting(dpacc, q, sigma):
    """WBK Theorem 9 (ours) is never below dp-accounting's Theorem 27 bound and
    equals it for orders > 256, where dp-accounting also uses Theorem 9."""
    n = 100_000
    m = int(round(q * n))
    rel = dpacc.NeighboringRelation.REPLACE_ONE
    for orders, equal in [([512.0, 1024.0], True), (list(range(2, 40)) + [2.5, 7.5], False)]:
        ref = dpacc.rdp.RdpAccountant(orders=orders, neighboring_relation=rel)
        ref.compose(dpacc.SampledWithoutReplacementDpEvent(n, m, dpacc.GaussianDpEvent(sigma)), 50)
        mine = RDPAccountant(orders=orders, neighboring_relation="replace_one")
        mine.compose_subsampled_gaussian(noise_multiplier=sigma, sampling_rate=m / n, steps=50,
                                         sampling="without_replacement")
        for delta in GRID_DELTA:
            e_ref, e_mine = ref.get_epsilon(delta), mine.get_epsilon(delta)
            if equal:
                assert e_mine == pytest.approx(e_ref, rel=1e-9)
            else:
                assert e_mine >= e_ref * (1 - 1e-12)
                assert e_mine <= 1.5 * e_ref + 1e-3  # same bound family, not wildly loose


def test_without_replacement_rdp_properties():
    orders = np.arange(2, 20, dtype=float)
    r = rdp_sampled_without_replacement_gaussian(noise_multiplier=1.5, sampling_rate=0.02,
                                                 orders=orders)
    # (alpha - 1) * rdp is convex and increasing; rdp itself increasing
    cgf = (orders - 1) * r
    assert np.all(np.diff(r) >= 0) and np.all(np.diff(cgf, 2) >= -1e-12)
    full = rdp_sampled_without_replacement_gaussian(noise_multiplier=1.5, sampling_rate=1.0,
                                                    orders=orders)
    assert np.allclose(full, orders / (2 * 1.5**2))


# ---------------------------------------------------------------------------
# Calibration
# ---------------------------------------------------------------------------

# (sampling_rate, steps, delta, target_epsilon): every grid value appears.
CALIBRATION_CASES = [
    (1e-3, 10**4, 1e-8, 0.5),
    (1e-2, 10**4, 1e-5, 1.0),
    (0.1, 100, 1e-5, 2.0),
    (1.0, 1, 1e-5, 1.0),
    (1e-2, 100, 1e-8, 0.3),
]


@pytest.mark.parametrize("q, steps, delta, target", CALIBRATION_CASES)
def test_calibration_matches_dp_accounting(dpacc, q, steps, delta, target):
    from dp_accounting import mechanism_calibration

    def make_event(sigma):
        return dpacc.SelfComposedDpEvent(
            dpacc.PoissonSampledDpEvent(q, dpacc.GaussianDpEvent(sigma)), steps)

    ref = mechanism_calibration.calibrate_dp_mechanism(
        dpacc.rdp.RdpAccountant, make_event, target, delta, tol=1e-8)
    mine = calibrate_noise_multiplier(target_epsilon=target, delta=delta, sampling_rate=q,
                                      steps=steps, series="absolute", tol=1e-7)
    assert mine == pytest.approx(ref, rel=1e-4)
    exact = calibrate_noise_multiplier(target_epsilon=target, delta=delta, sampling_rate=q,
                                       steps=steps, tol=1e-5)
    assert exact <= ref * (1 + 1e-4)
    eps = RDPAccountant().compose_subsampled_gaussian(
        noise_multiplier=exact, sampling_rate=q, steps=steps).get_epsilon(delta)
    assert eps <= target


def test_calibration_never_exceeds_target_and_is_tight():
    rng = np.random.default_rng(0)
    for _ in range(2):
        q = float(10 ** rng.uniform(-3, -1))
        steps = int(rng.integers(1, 2000))
        target = float(10 ** rng.uniform(-0.5, 1))
        tol = 1e-5
        sigma = calibrate_noise_multiplier(target_epsilon=target, delta=1e-6, sampling_rate=q,
                                           steps=steps, tol=tol)

        def eps_of(s):
            return RDPAccountant().compose_subsampled_gaussian(
                noise_multiplier=s, sampling_rate=q, steps=steps).get_epsilon(1e-6)

        assert eps_of(sigma) <= target
        assert eps_of(sigma * (1 - 2 * tol)) > target


def test_calibration_moments_and_template_accountant():
    s_ma = calibrate_noise_multiplier(target_epsilon=1.26, delta=1e-5, sampling_rate=0.01,
                                      steps=10**4, accountant="moments", tol=1e-6)
    assert s_ma == pytest.approx(4.0, rel=2e-3)  # Abadi et al.'s sigma for eps ~ 1.26
    # a template that already spent half: the remaining steps need more noise
    spent = RDPAccountant().compose_subsampled_gaussian(noise_multiplier=2.0, sampling_rate=0.01,
                                                        steps=1000)
    fresh = calibrate_noise_multiplier(target_epsilon=2.0, delta=1e-5, sampling_rate=0.01,
                                       steps=1000)
    rest = calibrate_noise_multiplier(target_epsilon=2.0, delta=1e-5, sampling_rate=0.01,
                                      steps=1000, accountant=spent)
    assert rest > fresh
    total = spent.copy().compose_subsampled_gaussian(noise_multiplier=rest, sampling_rate=0.01,
                                                     steps=1000)
    assert total.get_epsilon(1e-5) <= 2.0
    assert len(spent.history) == 1  # template untouched
    # without replacement calibrates under replace-one
    s_wor = calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5, sampling_rate=0.01,
                                       steps=1000, sampling="without_replacement")
    assert s_wor > 0


@pytest.mark.parametrize("kwargs, match", [
    (dict(target_epsilon=0.0), "target_epsilon"),
    (dict(target_epsilon=-1.0), "target_epsilon"),
    (dict(target_epsilon=float("nan")), "target_epsilon"),
    (dict(target_epsilon=float("inf")), "target_epsilon"),
    (dict(delta=0.0), "delta"),
    (dict(delta=1.0), "delta"),
    (dict(sampling_rate=0.0), "sampling_rate"),
    (dict(sampling_rate=1.5), "sampling_rate"),
    (dict(steps=0), "steps"),
    (dict(tol=0.0), "tol"),
    (dict(accountant="pld"), "accountant"),
    (dict(sampling="shuffle"), "sampling"),
    (dict(accountant="moments", sampling="without_replacement"), "Poisson"),
    # classic conversion: eps >= min_alpha log(1/delta)/(alpha-1) ~ 0.011 for any noise
    (dict(target_epsilon=0.01, conversion="classic"), "no noise multiplier"),
    (dict(target_epsilon=0.05, max_noise_multiplier=2.0), "max_noise_multiplier"),
])
def test_calibration_bad_input(kwargs, match):
    base = dict(target_epsilon=1.0, delta=1e-5, sampling_rate=0.01, steps=100)
    base.update(kwargs)
    with pytest.raises(ValueError, match=match):
        calibrate_noise_multiplier(**base)


def test_calibration_unreachable_with_spent_template():
    spent = RDPAccountant().compose_gaussian(noise_multiplier=0.5, steps=10)
    with pytest.raises(ValueError, match="no noise multiplier"):
        calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5, sampling_rate=0.01,
                                   steps=10, accountant=spent)
    with pytest.raises(TypeError):
        calibrate_noise_multiplier(target_epsilon="1", delta=1e-5, sampling_rate=0.01, steps=10)


# ---------------------------------------------------------------------------
# RDP bad input
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, exc", [
    (dict(noise_multiplier=0.0), ValueError),
    (dict(noise_multiplier=-1.0), ValueError),
    (dict(noise_multiplier=float("nan")), ValueError),
    (dict(noise_multiplier="1"), TypeError),
    (dict(sampling_rate=0.0), ValueError),
    (dict(sampling_rate=1.01), ValueError),
    (dict(sampling_rate=float("inf")), ValueError),
    (dict(steps=0), ValueError),
    (dict(steps=2.5), TypeError),
])
def test_compose_bad_input(kwargs, exc):
    base = dict(noise_multiplier=1.0, sampling_rate=0.01, steps=1)
    base.update(kwargs)
    with pytest.raises(exc):
        RDPAccountant().compose_subsampled_gaussian(**base)


def test_accountant_bad_input():
    with pytest.raises(ValueError, match="order"):
        RDPAccountant(orders=[1.0, 2.0])
    with pytest.raises(ValueError, match="order"):
        RDPAccountant(orders=[2.0, np.inf])
    with pytest.raises(ValueError):
        RDPAccountant(orders=[])
    with pytest.raises(ValueError, match="neighboring_relation"):
        RDPAccountant(neighboring_relation="swap")
    with pytest.raises(ValueError, match="conversion"):
        RDPAccountant(conversion="best")
    acc = RDPAccountant().compose_gaussian(noise_multiplier=1.0)
    for bad in (0.0, 1.0, -1e-5, float("nan")):
        with pytest.raises(ValueError, match="delta"):
            acc.get_epsilon(bad)
    with pytest.raises(ValueError, match="epsilon"):
        acc.get_delta(-1.0)
    with pytest.raises(ValueError, match="shape"):
        acc.compose_rdp([0.1, 0.2])
    with pytest.raises(ValueError):
        acc.compose_rdp(-np.ones(len(DEFAULT_RDP_ORDERS)))


# ---------------------------------------------------------------------------
# BudgetAccountant
# ---------------------------------------------------------------------------

def test_budget_basic_protocol():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    assert acc.check(0.5, 1e-6) is True
    acc.spend(0.5, 1e-6, label="a")
    assert acc.spent == pytest.approx((0.5, 1e-6))
    eps_rem, delta_rem = acc.remaining()
    assert eps_rem == pytest.approx(0.5) and delta_rem == pytest.approx(9e-6)
    assert acc.remaining(2) == pytest.approx((0.25, 4.5e-6))
    acc.spend(*acc.remaining())  # spending exactly the remainder is allowed
    with pytest.raises(BudgetExceededError):
        acc.check(1e-9)
    with pytest.raises(ValueError):  # BudgetExceededError is a ValueError
        acc.spend(0.1)
    assert len(acc.spends) == 2  # the failed spend was not recorded


def test_budget_exceeded_before_work():
    acc = BudgetAccountant(epsilon=1.0, delta=0.0)
    with pytest.raises(BudgetExceededError, match="budget"):
        acc.spend(0.1, 1e-9)  # any delta > 0 exceeds a pure budget
    with pytest.raises(BudgetExceededError):
        acc.check(1.5)
    assert acc.spent == (0.0, 0.0)


def test_budget_advanced_composition():
    k, eps = 1000, 0.01
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5, composition="advanced", delta_slack=1e-5)
    for _ in range(k):
        acc.spend(eps)
    expected, _ = advanced_composition(epsilon=eps, delta=0.0, k=k, delta_slack=1e-5)
    assert acc.spent[0] == pytest.approx(expected, rel=1e-12)  # 1.618 < basic 10.0
    assert acc.spent[1] == pytest.approx(1e-5)
    basic = BudgetAccountant(epsilon=2.0, delta=1e-5)
    with pytest.raises(BudgetExceededError):
        for _ in range(k):
            basic.spend(eps)
    # few large spends: the basic bound is smaller and needs no slack
    acc2 = BudgetAccountant(epsilon=3.0, delta=1e-5, composition="advanced")
    acc2.spend(1.0).spend(1.0)
    assert acc2.spent == (2.0, 0.0)
    e_rem, d_rem = acc2.remaining()
    acc2.spend(e_rem, d_rem)
    with pytest.raises(BudgetExceededError):
        acc2.spend(1e-6)
    # remaining(k) for advanced: k more spends fit, slightly more do not
    acc3 = BudgetAccountant(epsilon=1.0, delta=1e-6, composition="advanced")
    e_each, d_each = acc3.remaining(500)
    for _ in range(500):
        acc3.spend(e_each, d_each)
    with pytest.raises(BudgetExceededError):
        acc3.check(1e-3)


def test_budget_advanced_composition_huge_spend_no_overflow_warning():
    # e^eps overflows for eps > 709.78: advanced bound inf, basic chosen, no warning
    acc = BudgetAccountant(epsilon=1e4, delta=1e-5, composition="advanced")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        acc.spend(800.0).spend(1.0)
        assert acc.spent == (801.0, 0.0)


def test_talwar_helpers_importable_not_public_and_documented_in_the_study():
    """The private-LASSO scale is an internal of the estimators: importable from
    dptoolkit.accounting (the wings and the studies use it), not in its __all__, and
    derived on the sparse LASSO study page (automodule of the private module)."""
    import dptoolkit.accounting as acc
    from dptoolkit.accounting import _talwar

    helpers = ["laplace_report_noisy_max_scale", "laplace_report_noisy_max_epsilon",
               "laplace_report_noisy_max_composition", "talwar_noise_scale"]
    for name in helpers:
        assert name not in acc.__all__
        assert getattr(acc, name) is getattr(_talwar, name)
    study = Path(__file__).resolve().parents[1] / "docs" / "studies" / "sparse_lasso.rst"
    if not study.exists():
        pytest.skip("docs/ not available")
    assert ".. automodule:: dptoolkit.accounting._talwar" in study.read_text()
    # every exported name is in the accounting section of the API page
    api = Path(__file__).resolve().parents[1] / "docs" / "api.rst"
    text = api.read_text()
    section = text[text.index("currentmodule:: dptoolkit.accounting"):]
    section = section[:section.index(".. _api_", 1)]
    listed = {line.strip() for line in section.splitlines() if line.startswith("   ")}
    exported = {name for name in acc.__all__ if callable(getattr(acc, name))}  # not constants
    assert exported <= listed, exported - listed


def test_laplace_report_noisy_max_composition_checks_delta_slack():
    # a large step (basic composition wins) must not hide a bad delta_slack
    for slack in [0.0, 1.0, -0.1]:
        with pytest.raises(ValueError, match="delta_slack"):
            laplace_report_noisy_max_composition(noise_scale=0.1, sensitivity=1.0,
                                                 max_iter=10, delta_slack=slack)
    eps, delta, eps_step, how = laplace_report_noisy_max_composition(
        noise_scale=0.1, sensitivity=1.0, max_iter=10, delta_slack=1e-5)
    assert (eps, delta, eps_step, how) == (200.0, 0.0, 20.0, "basic")


def test_budget_bad_input():
    with pytest.raises(ValueError, match="epsilon"):
        BudgetAccountant(epsilon=0.0)
    with pytest.raises(ValueError, match="epsilon"):
        BudgetAccountant(epsilon=float("nan"))
    with pytest.raises(TypeError):
        BudgetAccountant(epsilon="1")
    with pytest.raises(ValueError, match="delta"):
        BudgetAccountant(epsilon=1.0, delta=1.5)
    with pytest.raises(ValueError, match="composition"):
        BudgetAccountant(epsilon=1.0, composition="rdp")
    with pytest.raises(ValueError, match="delta"):
        BudgetAccountant(epsilon=1.0, delta=0.0, composition="advanced")
    with pytest.raises(ValueError, match="delta_slack"):
        BudgetAccountant(epsilon=1.0, delta=1e-6, composition="advanced", delta_slack=1e-5)
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="epsilon"):
            acc.check(bad)
    with pytest.raises(ValueError, match="delta"):
        acc.check(0.1, -1e-9)
    with pytest.raises(TypeError):
        acc.spend(None)
    # a tracking-only accountant never refuses
    track = BudgetAccountant()
    track.spend(100.0, 0.5)
    assert track.spent == (100.0, 0.5)


# ---------------------------------------------------------------------------
# Privacy events and the one accountant (PrivacyAccountant / epsilon_of_event)
# versus dp-accounting, and the Frank-Wolfe budget split built on them
# ---------------------------------------------------------------------------
from dptoolkit.accounting import (  # noqa: E402
    PrivacyAccountant,
    calibrate_parameter,
    epsilon_of_event,
)
from dptoolkit.accounting.events import (  # noqa: E402
    ComposedEvent,
    ExponentialMechanismEvent,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    RepeatAndSelectEvent,
    SelfComposedEvent,
    ZCDPEvent,
)

EM_GRID_T = (10, 1000, 4000, 400000)
EM_GRID_EPS = (1e-4, 1e-3, 1e-2, 0.1)


@pytest.mark.parametrize("delta", GRID_DELTA)
@pytest.mark.parametrize("eps_step", EM_GRID_EPS)
@pytest.mark.parametrize("steps", EM_GRID_T)
def test_exponential_mechanism_composition_matches_dp_accounting_zcdp(dpacc, steps,
                                                                      eps_step, delta):
    # T exponential-mechanism steps: eps'^2/8-zCDP each (bounded range, Cesar and
    # Rogers 2021, Lemma 3.2); dp-accounting composes ZCDpEvent(eps'^2/8) T times.
    ours = PrivacyAccountant(composition="rdp").compose(ExponentialMechanismEvent(eps_step),
                                                   count=steps).get_epsilon(delta)
    acc = dpacc.rdp.RdpAccountant()
    acc.compose(dpacc.ZCDpEvent(eps_step ** 2 / 8.0), steps)
    assert ours == pytest.approx(acc.get_epsilon(delta), rel=1e-6)
    # "best" is the smallest valid bound: never above RDP nor basic composition
    event = SelfComposedEvent(ExponentialMechanismEvent(eps_step), steps)
    best = epsilon_of_event(event, delta)
    assert best <= min(ours, steps * eps_step) * (1 + 1e-12)
    assert best == pytest.approx(min(ours, epsilon_of_event(event, delta, composition="basic"),
                                     epsilon_of_event(event, delta, composition="advanced")),
                                 rel=1e-15)


@pytest.mark.parametrize("rho", [1e-6, 1e-3, 0.05, 2.0])
@pytest.mark.parametrize("delta", GRID_DELTA)
def test_zcdp_to_rdp_closed_form(rho, delta):
    # rho-zCDP is RDP rho * alpha at every order alpha (Bun and Steinke 2016,
    # Definition 1.1); with one order the conversion is the improved formula of
    # Canonne, Kamath and Steinke 2020, Proposition 12.
    for alpha in (1.5, 2.0, 10.0, 64.0, 1024.0):
        eps = epsilon_of_event(ZCDPEvent(rho), delta, composition="rdp", orders=[alpha])
        closed = (rho * alpha + math.log((alpha - 1.0) / alpha)
                  - (math.log(delta) + math.log(alpha)) / (alpha - 1.0))
        if delta >= math.sqrt(-math.expm1(-rho * alpha)):
            closed = 0.0
        assert eps == pytest.approx(max(closed, 0.0), rel=1e-12, abs=1e-300)
        assert eps == rdp_to_epsilon([alpha], [rho * alpha], delta)[0]
    # over the default orders: the same conversion of the curve rho * alpha
    orders = np.asarray(DEFAULT_RDP_ORDERS)
    assert epsilon_of_event(ZCDPEvent(rho), delta, composition="rdp") == pytest.approx(
        rdp_to_epsilon(orders, rho * orders, delta)[0], rel=1e-14)
    # T exponential-mechanism steps are exactly (T eps'^2 / 8)-zCDP below the cap
    eps_step = math.sqrt(8.0 * rho / 100)
    if 1024 * eps_step / 8 < 1:          # min(eps', alpha eps'^2/8) never caps
        assert epsilon_of_event(SelfComposedEvent(ExponentialMechanismEvent(eps_step), 100),
                                delta, composition="rdp") == pytest.approx(
            epsilon_of_event(ZCDPEvent(rho), delta, composition="rdp"), rel=1e-12)


def _fw_budget(max_iter, epsilon, **kw):
    """Budget split of private Frank-Wolfe over all 2^20 features (no candidate
    screening where the estimator offers one: the reference values are for the
    steps alone)."""
    from dptoolkit.linear_model import FrankWolfeLassoClassifier

    if "k" in FrankWolfeLassoClassifier(epsilon=None).get_params():
        kw.setdefault("k", None)
    return FrankWolfeLassoClassifier(max_iter=max_iter, epsilon=epsilon, delta=1e-5,
                                     **kw).budget(2 ** 20)


@pytest.mark.parametrize("max_iter,epsilon,zcdp,advanced", [
    (1000, 1.0, "1.56e-02", "6.33e-03"),
    (4000, 1.0, "7.82e-03", "3.16e-03"),
])
def test_frank_wolfe_reference_per_step_epsilon(max_iter, epsilon, zcdp, advanced):
    # Per-step epsilon of private Frank-Wolfe at D = 2^20, delta = 1e-5, to 3
    # significant digits: zCDP of bounded-range steps (default) and the exact
    # inverse of the full Dwork-Rothblum-Vadhan bound (composition="advanced").
    b = _fw_budget(max_iter, epsilon)
    assert b.composition == "zcdp" and f"{b.epsilon_step:.2e}" == zcdp
    b = _fw_budget(max_iter, epsilon, composition="advanced")
    assert b.composition == "advanced" and f"{b.epsilon_step:.2e}" == advanced


def test_frank_wolfe_reference_per_step_epsilon_long_run():
    # T = 400000, epsilon = 0.1.  The exact mechanism's per-step epsilon is 9.31e-5
    # (zCDP; Renyi orders dense around the optimum, ~180) and 3.28e-5 (DRV).  The
    # grouped sampler's floating-point delta, T (1 + e^eps') delta_fp = 7.8e-7, is
    # taken out of delta = 1e-5 first, and the default order grid has no order
    # between 128 and 256: the estimator's steps are 9.25e-5 and 3.27e-5.
    from dptoolkit.linear_model._frank_wolfe._budget import floating_point_bounds

    T, eps, delta = 400000, 0.1, 1e-5
    dense = np.concatenate([DEFAULT_RDP_ORDERS, np.arange(64.0, 2049.0)])
    exact_z = calibrate_parameter(
        lambda x: SelfComposedEvent(ExponentialMechanismEvent(x), T), target_epsilon=eps,
        delta=delta, low=1e-12, high=eps, composition="rdp", orders=dense)
    assert f"{exact_z:.2e}" == "9.31e-05"
    assert f"{per_step_epsilon(epsilon_total=eps, delta_slack=delta, k=T):.2e}" == "3.28e-05"
    gamma, delta_fp = floating_point_bounds("grouped", 2 ** 20, 0)
    b = _fw_budget(T, eps)
    assert b.composition == "zcdp" and f"{b.epsilon_step:.2e}" == "9.25e-05"
    delta_steps = T * (1 + math.exp(b.epsilon_step)) * delta_fp
    assert 7e-7 < delta_steps < 8e-7
    b = _fw_budget(T, eps, composition="advanced")
    assert b.composition == "advanced" and f"{b.epsilon_step:.2e}" == "3.27e-05"
    assert b.epsilon_step == pytest.approx(
        per_step_epsilon(epsilon_total=eps, delta_slack=delta - delta_steps, k=T)
        - 2 * gamma, rel=1e-6)


def test_frank_wolfe_zcdp_refused_for_laplace():
    # Laplace report-noisy-max is not a bounded-range mechanism: no eps^2/8 zCDP.
    from dptoolkit.linear_model import FrankWolfeLassoClassifier

    for selector in ("laplace", "laplace_talwar"):
        est = FrankWolfeLassoClassifier(max_iter=10, epsilon=1.0, delta=1e-5,
                                        mechanism=selector, composition="zcdp")
        with pytest.raises(ValueError, match="bounded-range"):
            est.budget(100)
        rng = np.random.default_rng(0)
        X = rng.uniform(-1, 1, size=(20, 5)); y = (X[:, 0] > 0).astype(int)
        with pytest.raises(ValueError, match="bounded-range"):
            est.fit(X, y)
        assert not hasattr(est, "coef_")


def test_mixed_events_match_dp_accounting(dpacc):
    # Poisson-subsampled Gaussian steps, Laplace releases and exponential-mechanism
    # steps composed in Renyi DP, against dp-accounting's RdpAccountant.
    event = ComposedEvent((
        SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(1.1)), 1000),
        SelfComposedEvent(LaplaceEvent(20.0), 5),
        SelfComposedEvent(ExponentialMechanismEvent(0.01), 200),
        GaussianEvent(8.0),
    ))
    for delta in GRID_DELTA:
        acc = dpacc.rdp.RdpAccountant()
        acc.compose(event.to_dp_accounting())
        ours = epsilon_of_event(event, delta, composition="rdp")
        assert ours == pytest.approx(acc.get_epsilon(delta), rel=1e-6)
        acc2 = PrivacyAccountant()
        for e in event.events:
            acc2.compose(e)
        assert acc2.get_epsilon(delta) == pytest.approx(epsilon_of_event(event, delta),
                                                        rel=1e-15)


@pytest.mark.parametrize("shape", [0.0, 1.0])
@pytest.mark.parametrize("mean", [3.0, 10.0, 100.0])
def test_repeat_and_select_matches_dp_accounting(dpacc, shape, mean):
    # Random repetition with selection (Papernot and Steinke 2022, Theorem 2):
    # logarithmic (shape 0) and geometric (shape 1) numbers of runs.
    inner = SelfComposedEvent(PoissonSampledEvent(0.02, GaussianEvent(1.5)), 300)
    event = RepeatAndSelectEvent(inner, mean, shape)
    for delta in GRID_DELTA:
        acc = dpacc.rdp.RdpAccountant()
        acc.compose(event.to_dp_accounting())
        ours = epsilon_of_event(event, delta, composition="rdp")
        assert ours == pytest.approx(acc.get_epsilon(delta), rel=1e-6)
        assert ours > epsilon_of_event(inner, delta, composition="rdp")


def _crossing_children():
    """Children of a MaxOfEvents whose RDP curves cross: none dominates at every order."""
    return (SelfComposedEvent(PoissonSampledEvent(0.02, GaussianEvent(1.5)), 300),
            SelfComposedEvent(ExponentialMechanismEvent(0.05), 100),
            LaplaceEvent(2.0),
            GaussianEvent(4.0))


def test_max_of_events_rdp_matches_dp_accounting_order_by_order(dpacc):
    # MaxOfEvents: the children's RDP maximised at every order.  dp-accounting has
    # no such event; with one order, its epsilon is increasing in the RDP value,
    # so the max over the children of dp-accounting's one-order epsilons is the
    # one-order epsilon of the maximum curve.
    from dptoolkit.accounting._accountant import _rdp_curve
    from dptoolkit.accounting.events import MaxOfEvents

    children = _crossing_children()
    event = MaxOfEvents(children)
    orders = np.asarray(DEFAULT_RDP_ORDERS)
    curves = np.array([_rdp_curve(c, orders)[0] for c in children])
    assert len(set(np.argmax(curves, axis=0))) >= 2  # the curves cross
    np.testing.assert_array_equal(_rdp_curve(event, orders)[0], curves.max(axis=0))
    for alpha in (1.5, 2.0, 3.0, 8.0, 20.0, 32.0, 64.0, 256.0):
        for delta in GRID_DELTA:
            theirs = []
            for child in children:
                acc = dpacc.rdp.RdpAccountant(orders=[alpha])
                acc.compose(child.to_dp_accounting())
                theirs.append(acc.get_epsilon(delta))
            ours = epsilon_of_event(event, delta, composition="rdp", orders=[alpha])
            assert ours == pytest.approx(max(theirs), rel=1e-6), alpha
    # every order together: the best order of the maximum curve, not the max of
    # the children's epsilons (which would be smaller: each picks its own order)
    for delta in GRID_DELTA:
        ours = epsilon_of_event(event, delta, composition="rdp")
        assert ours == rdp_to_epsilon(orders, curves.max(axis=0), delta)[0]
        assert ours >= max(epsilon_of_event(c, delta, composition="rdp") for c in children)


def test_max_of_events_to_dp_accounting_and_pure_dp():
    from dptoolkit.accounting import basic_guarantee
    from dptoolkit.accounting.events import ApproxDPEvent, MaxOfEvents, PureDPEvent

    g = GaussianEvent(2.0)
    assert MaxOfEvents((g, g)).to_dp_accounting() == g.to_dp_accounting()
    dpacc = pytest.importorskip("dp_accounting")
    assert isinstance(MaxOfEvents((g, GaussianEvent(3.0))).to_dp_accounting(),
                      dpacc.UnsupportedDpEvent)
    # pure/approximate DP: each child by basic composition, then the largest epsilon
    # and the largest delta (of possibly different children)
    event = MaxOfEvents((SelfComposedEvent(PureDPEvent(0.1), 3),
                         ComposedEvent((PureDPEvent(0.2), ApproxDPEvent(0.0, 1e-7)))))
    assert basic_guarantee(event) == pytest.approx((0.3, 1e-7), rel=1e-15)
    assert epsilon_of_event(event, 1e-7, composition="basic") == pytest.approx(0.3, rel=1e-15)
    assert basic_guarantee(MaxOfEvents((PureDPEvent(0.1), g))) == (math.inf, 0.0)
    assert event.leaves() == [PureDPEvent(0.1), PureDPEvent(0.2), ApproxDPEvent(0.0, 1e-7)]
    # Renyi DP with approximate parts: the maximum curve, converted at delta less the
    # largest delta of the children's approximate parts
    event = MaxOfEvents((ComposedEvent((ZCDPEvent(0.01), ApproxDPEvent(0.0, 1e-9))),
                         ZCDPEvent(0.02)))
    orders = np.asarray(DEFAULT_RDP_ORDERS)
    assert epsilon_of_event(event, 1e-5, composition="rdp") == pytest.approx(
        rdp_to_epsilon(orders, 0.02 * orders, 1e-5 - 1e-9)[0], rel=1e-14)


@pytest.mark.parametrize("shape,mean", [(0.0, 5.0), (1.0, 10.0), (2.0, 10.0)])
def test_repeat_and_select_of_max_of_events(dpacc, shape, mean):
    # Papernot and Steinke 2022, Theorem 2, on the maximum curve of one run:
    # (a) a child that dominates at every order: exactly dp-accounting's
    # RepeatAndSelectDpEvent of that child;
    from dptoolkit.accounting.events import MaxOfEvents, PureDPEvent

    big = SelfComposedEvent(PoissonSampledEvent(0.02, GaussianEvent(1.5)), 300)
    small = SelfComposedEvent(PoissonSampledEvent(0.02, GaussianEvent(3.0)), 300)
    for delta in GRID_DELTA:
        acc = dpacc.rdp.RdpAccountant()
        acc.compose(RepeatAndSelectEvent(big, mean, shape).to_dp_accounting())
        ours = epsilon_of_event(RepeatAndSelectEvent(MaxOfEvents((small, big)), mean,
                                                     shape), delta, composition="rdp")
        assert ours == pytest.approx(acc.get_epsilon(delta), rel=1e-6)
    # (b) crossing closed-form curves, PureDPEvent(1) (min(1, alpha / 2)) above
    # GaussianEvent(3) (alpha / 18) below order 18 and under it above: the theorem by
    # hand on their maximum, minimised over lambda_hat among the orders
    from dptoolkit.accounting import tnb_success_probability

    orders = np.asarray(DEFAULT_RDP_ORDERS)
    curve = np.maximum(np.minimum(1.0, orders / 2.0), orders / 18.0)
    gamma = tnb_success_probability(shape, mean)
    theorem = (curve + np.min((1 + shape) * (1 - 1 / orders) * curve
                              + (1 + shape) * math.log(1 / gamma) / orders)
               + math.log(mean) / (orders - 1))
    event = RepeatAndSelectEvent(MaxOfEvents((PureDPEvent(1.0), GaussianEvent(3.0))),
                                 mean, shape)
    for delta in GRID_DELTA:
        assert epsilon_of_event(event, delta, composition="rdp") == pytest.approx(
            rdp_to_epsilon(orders, theorem, delta)[0], rel=1e-12)
        for child in (PureDPEvent(1.0), GaussianEvent(3.0)):  # each alone is cheaper
            assert epsilon_of_event(RepeatAndSelectEvent(child, mean, shape), delta,
                                    composition="rdp") <= epsilon_of_event(event, delta,
                                                                      composition="rdp")


def test_budget_events_composition_beats_basic_sum_for_two_fw_fits():
    # Two private Frank-Wolfe fits charged to one accountant: composing their
    # events (zCDP of exponential-mechanism steps) gives less than the sum.
    from dptoolkit.linear_model import FrankWolfeLassoClassifier

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(40, 6)); y = (X[:, 0] > 0).astype(int)
    events = BudgetAccountant(epsilon=10.0, delta=1e-4, composition="events")
    basic = BudgetAccountant(epsilon=10.0, delta=1e-4)
    for seed in (0, 1):
        for acc in (events, basic):
            FrankWolfeLassoClassifier(max_iter=200, epsilon=1.0, delta=1e-5,
                                      accountant=acc, random_state=seed).fit(X, y)
    assert basic.spent[0] == pytest.approx(2.0, rel=1e-9) and basic.spent[0] <= 2.0
    assert len(events.events) == 2
    eps_events, delta_events = events.spent
    assert eps_events < 0.9 * basic.spent[0]
    assert delta_events == 1e-4
    assert eps_events == pytest.approx(
        epsilon_of_event(ComposedEvent(tuple(events.events)), 1e-4), rel=1e-15)


def test_event_traversal_functions():
    """child_events / describe_event / count_steps / noise_multipliers on one tree."""
    from dptoolkit.accounting.events import (ComposedEvent, GaussianEvent, LaplaceEvent,
                                             PoissonSampledEvent, SelfComposedEvent,
                                             child_events, count_steps, describe_event,
                                             noise_multipliers)

    step = PoissonSampledEvent(sampling_rate=0.01, event=GaussianEvent(noise_multiplier=1.5))
    tree = ComposedEvent((SelfComposedEvent(step, 300), LaplaceEvent(noise_multiplier=10.0)))
    assert child_events(tree) == [SelfComposedEvent(step, 300), LaplaceEvent(noise_multiplier=10.0)]
    assert child_events(LaplaceEvent(noise_multiplier=10.0)) == []
    assert count_steps(tree) == 300 and count_steps(LaplaceEvent(noise_multiplier=10.0)) == 1
    assert noise_multipliers(tree) == [1.5, 10.0] and noise_multipliers(None) == []
    lines = describe_event(tree, "")
    assert lines[0] == "ComposedEvent()"
    assert lines[1] == "  SelfComposedEvent(count=300)"
    assert lines[2].startswith("    PoissonSampledEvent(sampling_rate=0.01")
    assert lines[-1] == "  LaplaceEvent(noise_multiplier=10)"
    assert describe_event(None) == []


def test_old_spelling_of_add_remove_is_deprecated():
    with pytest.warns(DeprecationWarning, match="add_remove"):
        acc = RDPAccountant(neighboring_relation="add_or_remove_one")
    assert acc.neighboring_relation == "add_remove"
    assert RDPAccountant().neighboring_relation == "add_remove"


def test_event_to_dict_is_json_ready_and_nested():
    import json

    from dptoolkit.accounting.events import (ComposedEvent, GaussianEvent, PureDPEvent,
                                             SelfComposedEvent, event_to_dict)

    event = ComposedEvent((GaussianEvent(float("inf")), SelfComposedEvent(PureDPEvent(0.5), 3)))
    out = json.loads(json.dumps(event_to_dict(event), allow_nan=False))
    assert out == {"type": "ComposedEvent", "events": [
        {"type": "GaussianEvent", "noise_multiplier": "inf"},
        {"type": "SelfComposedEvent", "event": {"type": "PureDPEvent", "epsilon": 0.5},
         "count": 3}]}
    assert event_to_dict(None) is None
    with pytest.raises(TypeError, match="event"):
        event_to_dict({"type": "PureDPEvent"})
