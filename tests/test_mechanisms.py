"""Tests of dptoolkit.mechanisms.

Statistical tests use fixed seeds.  Each states its false-failure rate: the
probability, over the randomness of the draws, that the test fails although
the mechanism is correct.  Neighbour tests use Hoeffding's inequality with a
union bound over all estimated probabilities, so their false-failure rate is
at most ``BETA`` = 1e-6 each; chi-square tests fail when the p-value is below
1e-6 (false-failure rate 1e-6).
"""
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dptoolkit.mechanisms import (
    DoubleGeometric,
    Exponential,
    Gaussian,
    GaussianAnalytic,
    Laplace,
    ReportNoisyMax,
    analytic_gaussian_sigma,
)

BETA = 1e-6
N_DRAWS = 200_000


def neighbour_test(samples_d, samples_dp, events, epsilon, delta):
    """Empirical DP check in the style of diffprivlib's neighbour tests.

    For every event S checks, in both directions,
    P[M(D) in S] <= e^eps P[M(D') in S] + delta, with each empirical
    probability allowed an error t = sqrt(log(4 m / BETA) / (2 n)) (Hoeffding,
    two-sided, union bound over the 2 m estimates): a correct mechanism fails
    with probability <= BETA.  Returns the list of violated events.
    """
    n = min(len(samples_d), len(samples_dp))
    m = len(events)
    t = math.sqrt(math.log(4 * m / BETA) / (2 * n))
    bad = []
    for name, ev in events:
        p1 = float(np.mean(ev(samples_d)))
        p2 = float(np.mean(ev(samples_dp)))
        slack = delta + (1 + math.exp(epsilon)) * t
        if p1 > math.exp(epsilon) * p2 + slack or p2 > math.exp(epsilon) * p1 + slack:
            bad.append((name, p1, p2))
    return bad


def threshold_events(thresholds):
    evs = []
    for c in thresholds:
        evs.append((f"> {c}", lambda x, c=c: x > c))
        evs.append((f"<= {c}", lambda x, c=c: x <= c))
    evs.append(("in [0, 1]", lambda x: (x >= 0) & (x <= 1)))
    return evs


def index_events(k):
    return [(f"== {i}", lambda x, i=i: x == i) for i in range(k)]


def check_mean_variance(samples, mean, variance, kurtosis):
    """Sample mean within 5.5 standard errors, sample variance within 5.5
    standard errors (var of s^2 ~ (kurtosis - 1) variance^2 / n):
    false-failure rate < 2 * 4e-8."""
    n = samples.size
    assert abs(samples.mean() - mean) <= 5.5 * math.sqrt(variance / n)
    se_var = math.sqrt((kurtosis - 1) / n) * variance
    assert abs(samples.var() - variance) <= 5.5 * se_var


# ---------------------------------------------------------------------------
# Laplace
# ---------------------------------------------------------------------------

def test_laplace_neighbours_and_moments():
    eps, sens = 1.0, 1.0
    mech = Laplace(epsilon=eps, sensitivity=sens, random_state=1)
    a = mech.randomise(np.zeros(N_DRAWS))
    b = mech.randomise(np.full(N_DRAWS, sens))
    events = threshold_events([-2, -1, 0, 0.5, 1, 2, 3])
    assert neighbour_test(a, b, events, eps, 0.0) == []
    check_mean_variance(a, 0.0, mech.variance, kurtosis=6.0)
    assert mech.variance == 2.0 and mech.scale == 1.0 and mech.bias == 0.0
    # the test can fail: noise for 2 * epsilon violates epsilon-DP
    broken = Laplace(epsilon=2 * eps, sensitivity=sens, random_state=2)
    assert neighbour_test(broken.randomise(np.zeros(N_DRAWS)),
                          broken.randomise(np.ones(N_DRAWS)), events, eps, 0.0)


def test_laplace_scalar_and_shapes():
    mech = Laplace(epsilon=0.5, sensitivity=2.0, random_state=0)
    out = mech.randomise(3)
    assert isinstance(out, float)
    arr = mech.randomise(np.zeros((3, 4)))
    assert arr.shape == (3, 4) and arr.dtype == np.float64
    assert len(set(arr.ravel())) == 12  # independent noise per entry


def test_reproducibility():
    for cls, kw in [(Laplace, {}), (GaussianAnalytic, dict(delta=1e-5)),
                    (Gaussian, dict(delta=1e-5)), (DoubleGeometric, {})]:
        eps = 0.5
        m1 = cls(epsilon=eps, sensitivity=1.0, random_state=42, **kw)
        m2 = cls(epsilon=eps, sensitivity=1.0, random_state=42, **kw)
        assert np.array_equal(m1.randomise(np.zeros(10, dtype=int)),
                              m2.randomise(np.zeros(10, dtype=int)))
    gen = np.random.default_rng(5)
    m3 = Laplace(epsilon=1.0, sensitivity=1.0, random_state=gen)
    assert m3._rng is gen
    # OS entropy by default: two fresh mechanisms disagree (probability 1)
    x = Laplace(epsilon=1.0, sensitivity=1.0).randomise(0.0)
    y = Laplace(epsilon=1.0, sensitivity=1.0).randomise(0.0)
    assert x != y


# ---------------------------------------------------------------------------
# Gaussian
# ---------------------------------------------------------------------------

def test_gaussian_classic_sigma_and_neighbours():
    eps, delta = 0.5, 1e-5
    mech = Gaussian(epsilon=eps, delta=delta, sensitivity=2.0, random_state=3)
    assert mech.sigma == pytest.approx(math.sqrt(2 * math.log(1.25 / delta)) * 2.0 / eps)
    a = mech.randomise(np.zeros(N_DRAWS))
    b = mech.randomise(np.full(N_DRAWS, 2.0))
    events = threshold_events([-10, -3, 0, 1, 2, 5, 15, 30])
    assert neighbour_test(a, b, events, eps, delta) == []
    check_mean_variance(a, 0.0, mech.variance, kurtosis=3.0)
    broken = Gaussian(epsilon=eps, delta=delta, sensitivity=0.2, random_state=4)
    assert neighbour_test(broken.randomise(np.zeros(N_DRAWS)),
                          broken.randomise(np.full(N_DRAWS, 2.0)), events, eps, delta)


def test_gaussian_analytic_matches_dp_accounting_and_is_tight():
    gm = pytest.importorskip("dp_accounting.gaussian_mechanism")
    for eps in (1e-3, 0.1, 1.0, 5.0, 50.0):
        for delta in (1e-12, 1e-5, 0.3):
            sigma = analytic_gaussian_sigma(epsilon=eps, delta=delta)
            assert sigma == pytest.approx(gm.get_sigma_gaussian(eps, delta), rel=1e-9)
            # exact profile: delta(sigma) <= delta, and equality to ~1e-9
            d = stats.norm.cdf(1 / (2 * sigma) - eps * sigma) - math.exp(eps) * stats.norm.cdf(
                -1 / (2 * sigma) - eps * sigma)
            assert d <= delta * (1 + 1e-9) and d == pytest.approx(delta, rel=1e-6)
            if eps < 1:
                classic = Gaussian(epsilon=eps, delta=delta, sensitivity=1.0).sigma
                assert sigma <= classic


def test_gaussian_analytic_neighbours():
    eps, delta = 1.0, 1e-5
    mech = GaussianAnalytic(epsilon=eps, delta=delta, sensitivity=1.0, random_state=5)
    a = mech.randomise(np.zeros(N_DRAWS))
    b = mech.randomise(np.ones(N_DRAWS))
    events = threshold_events([-5, -2, 0, 0.5, 1, 3, 8, 15])
    assert neighbour_test(a, b, events, eps, delta) == []
    check_mean_variance(b, 1.0, mech.variance, kurtosis=3.0)
    assert mech.variance == pytest.approx(mech.sigma ** 2)


# ---------------------------------------------------------------------------
# DoubleGeometric
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("eps, sens", [(0.1, 1.0), (1.0, 1.0), (3.0, 2.0), (0.5, 7.0)])
def test_double_geometric_pmf_chi_square(eps, sens):
    """Chi-square goodness of fit of the noise to the exact pmf
    (1-a)/(1+a) a^|k|, a = exp(-eps/sens); false-failure rate 1e-6."""
    mech = DoubleGeometric(epsilon=eps, sensitivity=sens, random_state=11)
    z = mech.randomise(np.zeros(N_DRAWS, dtype=np.int64))
    assert z.dtype == np.int64
    # bins: every k with expected count >= 20, tails pooled
    k_max = 0
    while N_DRAWS * mech.pmf(k_max + 1) >= 20:
        k_max += 1
    ks = np.arange(-k_max, k_max + 1)
    expected = N_DRAWS * mech.pmf(ks)
    tail = (N_DRAWS - expected.sum()) / 2
    observed = np.array([np.sum(z == k) for k in ks])
    obs = np.concatenate([[np.sum(z < -k_max)], observed, [np.sum(z > k_max)]])
    exp_ = np.concatenate([[tail], expected, [tail]])
    assert stats.chisquare(obs, exp_).pvalue > 1e-6
    assert mech.pmf(ks).sum() <= 1 + 1e-12
    a = math.exp(-eps / sens)
    assert mech.p == pytest.approx(1 - a)
    assert mech.variance == pytest.approx(2 * a / (1 - a) ** 2)
    # exact moments from the pmf (the tail beyond k_far is < 1e-300)
    k_far = int(700 * sens / eps)
    kk = np.arange(-k_far, k_far + 1, dtype=float)
    pk = mech.pmf(kk)
    var = np.sum(pk * kk**2)
    assert var == pytest.approx(mech.variance, rel=1e-9)
    check_mean_variance(z.astype(float), 0.0, mech.variance,
                        kurtosis=np.sum(pk * kk**4) / var**2)


def test_double_geometric_neighbours_and_integers():
    eps = 1.0
    mech = DoubleGeometric(epsilon=eps, sensitivity=1, random_state=12)
    a = mech.randomise(np.zeros(N_DRAWS, dtype=np.int64))
    b = mech.randomise(np.ones(N_DRAWS, dtype=np.int64))
    events = threshold_events([-3, -1, 0, 1, 2, 4])
    assert neighbour_test(a, b, events, eps, 0.0) == []
    broken = DoubleGeometric(epsilon=2.5 * eps, sensitivity=1, random_state=13)
    assert neighbour_test(broken.randomise(np.zeros(N_DRAWS, dtype=int)),
                          broken.randomise(np.ones(N_DRAWS, dtype=int)), events, eps, 0.0)
    out = mech.randomise(5)
    assert isinstance(out, int)
    assert isinstance(mech.randomise(5.0), int)  # integral floats accepted
    # Sparsifier parametrisation: p = 1 - exp(-eps_1 / (beta - alpha))
    sp = DoubleGeometric(epsilon=0.3, sensitivity=40 - 10)
    assert sp.p == pytest.approx(1 - math.exp(-0.3 / 30))


# ---------------------------------------------------------------------------
# Exponential mechanism
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["gumbel", "inverse_cdf"])
def test_exponential_distribution_chi_square(method):
    """Selections follow softmax(eps u / (2 sens)); false-failure rate 1e-6."""
    u = np.array([0.0, 1.0, 2.0, -np.inf, 3.5, 2.0])
    mech = Exponential(epsilon=1.0, sensitivity=1.0, method=method, random_state=21)
    idx = mech.select(u, size=N_DRAWS)
    p = mech.probabilities(u)
    assert p[3] == 0 and not np.any(idx == 3)
    w = np.exp(0.5 * (u - u.max()))
    assert np.allclose(p, w / w.sum(), rtol=1e-14)
    counts = np.bincount(idx, minlength=u.size)
    keep = p > 0
    assert stats.chisquare(counts[keep], N_DRAWS * p[keep]).pvalue > 1e-6


def test_exponential_neighbours_exact_and_empirical():
    eps = 1.0
    u, up = np.array([0.0, 0.0, 0.5]), np.array([1.0, -1.0, 0.2])  # |u - u'|_inf <= 1
    mech = Exponential(epsilon=eps, sensitivity=1.0, random_state=22)
    p, pp = mech.probabilities(u), mech.probabilities(up)
    assert np.all(p <= math.exp(eps) * pp * (1 + 1e-12))
    assert np.all(pp <= math.exp(eps) * p * (1 + 1e-12))
    a, b = mech.select(u, size=N_DRAWS), mech.select(up, size=N_DRAWS)
    assert neighbour_test(a, b, index_events(3), eps, 0.0) == []
    # monotonic=True halves the noise; on non-monotone neighbours that is 2 eps
    broken = Exponential(epsilon=eps, sensitivity=1.0, monotonic=True, random_state=23)
    assert neighbour_test(broken.select(u, size=N_DRAWS), broken.select(up, size=N_DRAWS),
                          index_events(3), eps, 0.0)
    assert mech.zcdp_rho == eps**2 / 8


def test_exponential_never_overflows():
    mech = Exponential(epsilon=50.0, sensitivity=1e-3, random_state=0)
    u = np.array([1e308, -1e308, 1e308, 5e307])
    p = mech.probabilities(u)
    assert np.all(np.isfinite(p)) and p.sum() == pytest.approx(1.0)
    assert p[0] == pytest.approx(0.5) and p[1] == 0.0
    assert mech.select(u) in (0, 2)
    assert Exponential(epsilon=50.0, sensitivity=1e-3, method="inverse_cdf",
                       random_state=0).select(u) in (0, 2)
    assert mech.select(u, candidates=np.array(["a", "b", "c", "d"])) in ("a", "c")


# ---------------------------------------------------------------------------
# Report noisy max
# ---------------------------------------------------------------------------

def permute_and_flip_probabilities(u, eps, sens):
    """Exact output distribution of permute-and-flip (McKenna-Sheldon 2020),
    by enumerating permutations."""
    u = np.asarray(u, dtype=float)
    k = u.size
    accept = np.exp(eps * (u - u.max()) / (2 * sens))
    probs = np.zeros(k)
    perms = list(itertools.permutations(range(k)))
    for perm in perms:
        reach = 1.0
        for r in perm:
            probs[r] += reach * accept[r] / len(perms)
            reach *= 1 - accept[r]
    return probs


def renyi(p, q, alpha):
    return math.log(np.sum(p**alpha * q**(1 - alpha))) / (alpha - 1)


def test_report_noisy_max_gumbel_is_exponential_mechanism():
    u = np.array([0.0, 1.0, 0.3, 2.0])
    rnm = ReportNoisyMax(epsilon=1.0, sensitivity=1.0, noise="gumbel", random_state=31)
    p = Exponential(epsilon=1.0, sensitivity=1.0).probabilities(u)
    counts = np.bincount(rnm.select(u, size=N_DRAWS), minlength=4)
    assert stats.chisquare(counts, N_DRAWS * p).pvalue > 1e-6
    assert rnm.zcdp_rho == 1.0 / 8


def test_report_noisy_max_exponential_is_permute_and_flip_and_not_bounded_range():
    """Exponential noise = permute-and-flip: eps-DP but NOT eps^2/8-zCDP
    (OpenDP issue #2911).  Our zcdp_rho says eps^2/2, which holds."""
    eps = 1.0
    u, up = np.array([0.0, 0.0]), np.array([1.0, -1.0])
    rnm = ReportNoisyMax(epsilon=eps, sensitivity=1.0, noise="exponential", random_state=32)
    for uu in (u, up, np.array([0.0, 1.0, 0.3, 2.0])):
        pf = permute_and_flip_probabilities(uu, eps, 1.0)
        counts = np.bincount(rnm.select(uu, size=N_DRAWS), minlength=uu.size)
        assert stats.chisquare(counts, N_DRAWS * pf).pvalue > 1e-6
    p, pp = permute_and_flip_probabilities(u, eps, 1.0), permute_and_flip_probabilities(up, eps, 1.0)
    assert np.all(pp <= math.exp(eps) * p) and np.all(p <= math.exp(eps) * pp)  # eps-DP
    alphas = np.linspace(1.1, 20, 200)
    div = np.array([max(renyi(pp, p, a), renyi(p, pp, a)) for a in alphas])
    assert np.any(div > alphas * eps**2 / 8)  # eps^2/8 would be a false claim
    assert np.all(div <= alphas * rnm.zcdp_rho)  # the claimed eps^2/2 holds
    # whereas the exponential mechanism satisfies eps^2/8 on the same pair
    em = Exponential(epsilon=eps, sensitivity=1.0)
    q, qp = em.probabilities(u), em.probabilities(up)
    assert np.all([max(renyi(qp, q, a), renyi(q, qp, a)) <= a * eps**2 / 8 for a in alphas])


@pytest.mark.parametrize("noise", ["laplace", "gumbel", "exponential"])
def test_report_noisy_max_neighbours(noise):
    eps = 1.0
    u, up = np.array([0.0, 0.0, 0.4]), np.array([1.0, -1.0, -0.6])
    rnm = ReportNoisyMax(epsilon=eps, sensitivity=1.0, noise=noise, random_state=33)
    a, b = rnm.select(u, size=N_DRAWS), rnm.select(up, size=N_DRAWS)
    assert neighbour_test(a, b, index_events(3), eps, 0.0) == []
    # claiming monotonicity for non-monotone neighbours halves the noise: detected
    # (on the two-candidate pair [0, 0] ~ [1, -1], where the ratio is largest)
    broken = ReportNoisyMax(epsilon=eps, sensitivity=1.0, noise=noise, monotonic=True,
                            random_state=34)
    assert neighbour_test(broken.select(u[:2], size=N_DRAWS),
                          broken.select(up[:2], size=N_DRAWS), index_events(2), eps, 0.0)
    assert neighbour_test(rnm.select(u[:2], size=N_DRAWS), rnm.select(up[:2], size=N_DRAWS),
                          index_events(2), eps, 0.0) == []
    assert rnm.noise_scale == 2.0 and broken.noise_scale == 1.0


def test_report_noisy_max_monotone_counting_queries():
    """Counts under add/remove move in the same direction: scale 1/eps is eps-DP."""
    eps = 1.0
    counts, counts_add = np.array([10.0, 10.0, 9.0]), np.array([11.0, 10.0, 10.0])
    rnm = ReportNoisyMax(epsilon=eps, sensitivity=1.0, noise="laplace", monotonic=True,
                         random_state=35)
    a, b = rnm.select(counts, size=N_DRAWS), rnm.select(counts_add, size=N_DRAWS)
    assert neighbour_test(a, b, index_events(3), eps, 0.0) == []
    assert isinstance(rnm.select(counts), int)
    assert rnm.randomise(counts, candidates=["x", "y", "z"]) in ("x", "y", "z")


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------

ALL = [
    (Laplace, {}),
    (Gaussian, dict(delta=1e-5)),
    (GaussianAnalytic, dict(delta=1e-5)),
    (DoubleGeometric, {}),
    (Exponential, {}),
    (ReportNoisyMax, {}),
]


@pytest.mark.parametrize("cls, extra", ALL)
@pytest.mark.parametrize("epsilon, exc", [
    (-1.0, ValueError), (0.0, ValueError), (float("nan"), ValueError),
    (float("inf"), ValueError), ("1", TypeError), (None, TypeError), (True, TypeError),
])
def test_bad_epsilon(cls, extra, epsilon, exc):
    with pytest.raises(exc, match="epsilon"):
        cls(epsilon=epsilon, sensitivity=1.0, **extra)


@pytest.mark.parametrize("cls, extra", ALL)
@pytest.mark.parametrize("sensitivity, exc", [
    (0.0, ValueError), (-1.0, ValueError), (float("nan"), ValueError),
    (float("inf"), ValueError), ("1", TypeError),
])
def test_bad_sensitivity(cls, extra, sensitivity, exc):
    eps = 0.5
    with pytest.raises(exc, match="sensitivity"):
        cls(epsilon=eps, sensitivity=sensitivity, **extra)


@pytest.mark.parametrize("cls", [Laplace, DoubleGeometric, Exponential, ReportNoisyMax])
@pytest.mark.parametrize("delta", [1e-5, -0.1, 1.0, float("nan")])
def test_bad_delta_pure(cls, delta):
    with pytest.raises(ValueError, match="delta"):
        cls(epsilon=1.0, delta=delta, sensitivity=1.0)


@pytest.mark.parametrize("cls", [Gaussian, GaussianAnalytic])
@pytest.mark.parametrize("delta", [0.0, -0.1, 1.0, 1.5, float("nan")])
def test_bad_delta_gaussian(cls, delta):
    with pytest.raises(ValueError, match="delta"):
        cls(epsilon=0.5, delta=delta, sensitivity=1.0)


def test_gaussian_classic_needs_small_epsilon():
    with pytest.raises(ValueError, match="epsilon"):
        Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    with pytest.raises(TypeError):
        Gaussian(0.5, 1e-5, 1.0)  # keyword-only
    assert GaussianAnalytic(epsilon=3.0, delta=1e-5, sensitivity=1.0).sigma > 0


@pytest.mark.parametrize("value, exc", [
    ("a", TypeError), ([1.0, "a"], TypeError), (None, TypeError), (True, TypeError),
    (float("nan"), ValueError), ([0.0, float("inf")], ValueError), (1 + 2j, TypeError),
])
def test_bad_values(value, exc):
    with pytest.raises(exc):
        Laplace(epsilon=1.0, sensitivity=1.0).randomise(value)
    with pytest.raises(exc):
        GaussianAnalytic(epsilon=1.0, delta=1e-5, sensitivity=1.0).randomise(value)


def test_double_geometric_bad_values():
    mech = DoubleGeometric(epsilon=1.0, sensitivity=1.0)
    for bad in (1.5, [1, 2.5], float("nan"), float("inf")):
        with pytest.raises(ValueError, match="integer"):
            mech.randomise(bad)
    with pytest.raises(TypeError):
        mech.randomise("3")
    with pytest.raises(ValueError, match="too small"):
        DoubleGeometric(epsilon=1e-6, sensitivity=1e10)


@pytest.mark.parametrize("cls", [Exponential, ReportNoisyMax])
def test_selection_bad_input(cls):
    mech = cls(epsilon=1.0, sensitivity=1.0)
    for bad in ([], [[1.0, 2.0]], [1.0, float("nan")], [1.0, float("inf")],
                [-float("inf"), -float("inf")]):
        with pytest.raises(ValueError):
            mech.select(bad)
    with pytest.raises(TypeError):
        mech.select(["a", "b"])
    for size in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="size"):
            mech.select([1.0, 2.0], size=size)
    with pytest.raises(TypeError, match="monotonic"):
        cls(epsilon=1.0, sensitivity=1.0, monotonic="yes")
    with pytest.raises(TypeError):
        cls(epsilon=1.0, sensitivity=1.0, random_state="seed")


def test_option_validation():
    with pytest.raises(ValueError, match="method"):
        Exponential(epsilon=1.0, sensitivity=1.0, method="rejection")
    with pytest.raises(ValueError, match="noise"):
        ReportNoisyMax(epsilon=1.0, sensitivity=1.0, noise="cauchy")


def test_select_refuses_candidates_of_another_length():
    from dptoolkit.mechanisms import Exponential, ReportNoisyMax

    for mech in (Exponential(epsilon=1.0, sensitivity=1.0, random_state=0),
                 ReportNoisyMax(epsilon=1.0, sensitivity=1.0, random_state=0)):
        with pytest.raises(ValueError, match="candidates"):
            mech.select([1.0, 2.0], candidates=["a", "b", "c"])
        assert mech.select([1.0, 2.0], candidates=["a", "b"]) in ("a", "b")
