"""Private LASSO (Talwar et al., Laplace selector), the Sparsifier and the synthetic data
of Khanna, Lu and Raff, *Sparse Private LASSO Logistic Regression* (Section 4.2)."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from sklearn.exceptions import ConvergenceWarning

from dptoolkit.accounting import (BudgetAccountant, advanced_composition, epsilon_of_event,
                                  per_step_epsilon)
from dptoolkit.accounting._talwar import (
    laplace_report_noisy_max_composition,
    laplace_report_noisy_max_epsilon,
    laplace_report_noisy_max_scale,
    laplace_selector_parameters,
    talwar_noise_scale,
)
from dptoolkit.datasets import make_correlated_classification
from dptoolkit.exceptions import BudgetExceededError, DataClippedWarning, PrivacyLeakWarning
from dptoolkit.linear_model import (DEFAULT_REFRESH_TOL, FrankWolfeLassoClassifier,
                                  SparsifiedLassoClassifier)
from dptoolkit.linear_model import _l1_ball as l1_ball_module
from dptoolkit.linear_model import _sparsifier as sparsifier_module
from dptoolkit.linear_model._sparsifier import check_count_bounds, keep_largest, noisy_count
from dptoolkit.mechanisms import DoubleGeometric, ReportNoisyMax


def _problem(n=400, d=40, seed=0):
    X, y, _ = make_correlated_classification(n, d, coef=(3.0, -2.0, 2.0, 1.0),
                                             random_state=seed)
    return X, y


def _logistic_grad_sum(X, y, w):
    v = X @ w
    return X.T @ (0.5 * (1.0 + np.tanh(0.5 * v)) - y)


# --------------------------------------------------------------------------- accounting
def test_laplace_scale_is_twice_claim_3_9_for_non_monotone_scores():
    assert laplace_report_noisy_max_scale(epsilon=0.5, sensitivity=3.0) == pytest.approx(12.0)
    assert laplace_report_noisy_max_scale(epsilon=0.5, sensitivity=3.0,
                                          monotonic=True) == pytest.approx(6.0)
    # same rule as the mechanisms module
    rnm = ReportNoisyMax(epsilon=0.5, sensitivity=3.0, noise="laplace")
    assert rnm.noise_scale == pytest.approx(laplace_report_noisy_max_scale(
        epsilon=0.5, sensitivity=3.0))
    assert laplace_report_noisy_max_epsilon(noise_scale=12.0, sensitivity=3.0) == 0.5


def _tail(x, b):
    """P(Z1 - Z2 > x) for independent Laplace(b) Z1, Z2 (closed form)."""
    if x >= 0:
        return 0.25 * (2.0 + x / b) * math.exp(-x / b)
    return 1.0 - _tail(-x, b)


def test_factor_two_is_needed_and_enough():
    """Two vertices +-e_j with scores -a, +a; a neighbour moves a by Delta = 1.  With
    Laplace(b), P(ascent) = P(Z1 - Z2 > 2a): the ratio between neighbours exceeds
    e^(Delta/b) (Claim 3.9's scale is not enough) and never exceeds e^(2 Delta/b)."""
    b = 1.0
    worst = max(_tail(2 * a, b) / _tail(2 * a + 2, b) for a in np.linspace(0, 30, 301))
    assert worst > math.exp(1.0 / b) * 2.0          # far beyond e^(Delta/b)
    assert worst <= math.exp(2.0 / b) * (1 + 1e-12)  # within e^(2 Delta/b)
    assert worst > math.exp(2.0 / b) * 0.9           # and 2 Delta / b is nearly tight


def test_talwar_scale_as_printed_and_its_true_guarantee():
    eps, delta, T = 1.0, 1e-4, 1000
    b = talwar_noise_scale(epsilon=eps, delta=delta, max_iter=T)
    assert b == pytest.approx(math.sqrt(8 * T * math.log(1 / delta)) / eps)
    # mean units: lambda L sqrt(8 T log(1/delta)) / (n eps)
    assert talwar_noise_scale(epsilon=eps, delta=delta, max_iter=T, l1_bound=10.0,
                              n_samples=500) == pytest.approx(b * 10 / 500)
    tot, d, eps_step, comp = laplace_report_noisy_max_composition(
        noise_scale=b, sensitivity=1.0, max_iter=T, delta_slack=delta)
    e2 = 2.0 * eps / math.sqrt(8 * T * math.log(1 / delta))
    assert eps_step == pytest.approx(e2)
    assert comp == "advanced" and d == delta
    # the leading terms cancel: eps + T e2 (e^e2 - 1) > eps
    assert tot == pytest.approx(eps + T * e2 * math.expm1(e2), rel=1e-12)
    assert 1.04 < tot < 1.07
    # multinomial Algorithm 3 as printed: L = 2, (eps/K, delta/K)
    bk = talwar_noise_scale(epsilon=eps, delta=delta, max_iter=T, lipschitz=2.0,
                            n_classes=20)
    assert bk == pytest.approx(2 * math.sqrt(8 * T * math.log(20 / delta)) * 20 / eps)


def test_laplace_selector_parameters_correct_default():
    eps, delta, T = 1.0, 1e-5, 500
    step = per_step_epsilon(epsilon_total=eps, delta_slack=delta, k=T)
    out = laplace_selector_parameters("laplace", epsilon=eps, delta=delta, epsilon_step=step,
                                      composition="advanced", max_iter=T, sensitivity=1.0)
    assert out[:4] == (eps, delta, step, "advanced")
    assert out[4] == pytest.approx(2.0 / step)
    # the guarantee of that scale, recomputed, is the budget asked for
    tot, _ = advanced_composition(epsilon=laplace_report_noisy_max_epsilon(
        noise_scale=out[4], sensitivity=1.0), delta=0.0, k=T, delta_slack=delta)
    assert tot == pytest.approx(eps, rel=1e-10)
    with pytest.raises(ValueError, match="needs delta"):
        laplace_selector_parameters("laplace_talwar", epsilon=1.0, delta=0.0,
                                    epsilon_step=0.1, composition="basic", max_iter=10,
                                    sensitivity=1.0)
    with pytest.raises(ValueError, match="selector"):
        laplace_selector_parameters("gumbel", epsilon=1.0, delta=0.0, epsilon_step=0.1,
                                    composition="basic", max_iter=10, sensitivity=1.0)


# ------------------------------------------------------ private LASSO (Laplace selector)
@pytest.mark.parametrize("solver", ["fast", "standard"])
@pytest.mark.parametrize("selector", ["laplace", "laplace_talwar"])
def test_laplace_selector_nonprivate_limit_is_descent(solver, selector):
    """With negligible noise the vertex minimises <s, grad>: the path equals the
    non-private Frank-Wolfe path, and the first vertex is -lambda sign(alpha_j) e_j."""
    X, y = _problem()
    lam, T = 5.0, 40
    ref = FrankWolfeLassoClassifier(l1_bound=lam, max_iter=T, solver="standard",
                                    mechanism="argmax", epsilon=None).fit(X, y)
    kw = dict(delta=1e-6) if selector == "laplace_talwar" else {}
    priv = FrankWolfeLassoClassifier(l1_bound=lam, max_iter=T, epsilon=1e9, solver=solver,
                                     mechanism=selector, refresh_tol=0.0, random_state=0,
                                     **kw).fit(X, y)
    np.testing.assert_allclose(priv.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
    one = FrankWolfeLassoClassifier(l1_bound=lam, max_iter=1, epsilon=1e9, solver=solver,
                                    mechanism=selector, random_state=1, **kw).fit(X, y)
    alpha = _logistic_grad_sum(X, y, np.zeros(X.shape[1]))
    j = int(np.argmax(np.abs(alpha)))
    expected = np.zeros(X.shape[1])
    expected[j] = -(2.0 / 3.0) * lam * np.sign(alpha[j])   # eta_1 = 2/3
    np.testing.assert_allclose(one.coef_[0], expected, atol=1e-12)
    # and the loss went down
    assert one.objective(X, y) < math.log(2.0)


def _paper_appendix_b_first_vertex(X, y, l1_bound):
    """Appendix B, private_lasso line 43 in the zero-noise limit: argmax of
    constraint @ grad, i.e. the ASCENT vertex."""
    n, d = X.shape
    grad = _logistic_grad_sum(X, y, np.zeros(d)) / n
    constraint = l1_bound * np.vstack([np.eye(d), -np.eye(d)])
    return constraint[np.argmax(constraint @ grad)]


def test_paper_appendix_b_vertex_fails_the_descent_check():
    """The check above catches the paper's argmax: its first vertex has the wrong sign
    and increases the loss."""
    X, y = _problem()
    s = _paper_appendix_b_first_vertex(X, y, 5.0)
    one = FrankWolfeLassoClassifier(l1_bound=5.0, max_iter=1, epsilon=1e9,
                                    mechanism="laplace", random_state=0).fit(X, y)
    assert np.sign(s[np.flatnonzero(s)[0]]) == -np.sign(one.coef_[0][np.flatnonzero(s)[0]])
    w = (2.0 / 3.0) * s
    v = X @ w
    assert np.mean(np.logaddexp(0.0, v) - y * v) > math.log(2.0)


@pytest.mark.parametrize("solver", ["fast", "standard"])
def test_laplace_kernel_noise_scale(solver):
    """One feature, x_i = 1: alpha = n/2 - sum(y) = 2.  With epsilon = 1 and T = 1 the
    scale is b = 2 Delta / epsilon = 2, so P(ascent vertex +e) = P(Z1 - Z2 > 2 alpha)
    = 0.25 (2 + 4/2) e^-2 = 0.135 (with Claim 3.9's b = 1 it would be 0.027).
    3000 fits; |p_hat - p| < 4.42 sd has false-failure rate 1e-5."""
    X = np.ones((10, 1))
    y = np.array([1, 1, 1, 0, 0, 0, 0, 0, 0, 0], dtype=float)
    p = _tail(4.0, 2.0)
    rng = np.random.default_rng(12345)
    m = 3000
    ascent = 0
    for _ in range(m):
        clf = FrankWolfeLassoClassifier(l1_bound=1.0, max_iter=1, epsilon=1.0, solver=solver,
                                        mechanism="laplace", random_state=rng).fit(X, y)
        ascent += clf.coef_[0, 0] > 0
    sd = math.sqrt(p * (1 - p) / m)
    assert abs(ascent / m - p) < 4.42 * sd


def test_laplace_privacy_spent():
    X, y = _problem()
    n = X.shape[0]
    clf = FrankWolfeLassoClassifier(l1_bound=10.0, max_iter=300, epsilon=1.0, delta=1 / n,
                                    mechanism="laplace", random_state=0).fit(X, y)
    assert clf.privacy_spent_ == (epsilon_of_event(clf.privacy_event_, 1 / n), 1 / n)
    assert clf.privacy_spent_[0] <= 1.0
    paper = FrankWolfeLassoClassifier(l1_bound=10.0, max_iter=300, epsilon=1.0, delta=1 / n,
                                      mechanism="laplace_talwar", random_state=0).fit(X, y)
    eps_true, delta_true = paper.privacy_spent_
    expected = laplace_report_noisy_max_composition(
        noise_scale=talwar_noise_scale(epsilon=1.0, delta=1 / n, max_iter=300),
        sensitivity=1.0, max_iter=300, delta_slack=1 / n)
    # the accountant's figure for the paper's per-step epsilon: at most the paper's
    # own composition of it, and well above what its noise would give at 1.0 by it
    assert eps_true == epsilon_of_event(paper.privacy_event_, 1 / n)
    assert eps_true <= expected[0] * (1 + 1e-9) and expected[0] > 1.0
    assert delta_true == 1 / n
    # replace-one doubles the sensitivity: the printed scale is then worth ~2 epsilon
    rep = FrankWolfeLassoClassifier(l1_bound=10.0, max_iter=300, epsilon=1.0, delta=1 / n,
                                    mechanism="laplace_talwar", neighbouring="replace_one",
                                    random_state=0).fit(X, y)
    assert rep.privacy_spent_[0] > 1.5 * eps_true
    with pytest.raises(ValueError, match="needs delta"):
        FrankWolfeLassoClassifier(epsilon=1.0, mechanism="laplace_talwar").fit(X, y)


# ------------------------------------------------------------------------ the count
def test_count_bounds():
    assert check_count_bounds("sqrt", 100) == (10, 20)
    assert check_count_bounds("sqrt", 41) == (6, 13)      # widened outwards
    assert check_count_bounds("sqrt", 2) == (1, 3)
    assert check_count_bounds((3, 7.0), 100) == (3, 7)


@pytest.mark.parametrize("bounds, exc, match", [
    ((5, 5), ValueError, "alpha < beta"),
    ((6, 3), ValueError, "alpha < beta"),
    ((-1, 3), ValueError, "alpha"),
    ((1, -3), ValueError, "beta"),
    ((2.5, 6), ValueError, "integer"),
    ((2, np.nan), ValueError, "NaN"),
    ("cube", ValueError, "'sqrt'"),
    (3, TypeError, "pair"),
    ((1, 2, 3), TypeError, "pair"),
    (("a", 3), TypeError, "real"),
])
def test_bad_count_bounds(bounds, exc, match):
    with pytest.raises(exc, match=match):
        check_count_bounds(bounds, 100)


def _clipped_pmf(c0, alpha, beta, eps):
    """Exact law of clip(clip(c0) + Z, alpha, beta), Z double-geometric."""
    c0 = min(max(c0, alpha), beta)
    mech = DoubleGeometric(epsilon=eps, sensitivity=beta - alpha)
    ks = np.arange(alpha, beta + 1)
    pmf = mech.pmf(ks - c0)
    a = math.exp(-eps / (beta - alpha))
    # P(Z <= alpha - c0) and P(Z >= beta - c0): geometric tails of the discrete Laplace
    pmf[0] = mech.pmf(alpha - c0) / (1 - a)
    pmf[-1] = mech.pmf(beta - c0) / (1 - a)
    return ks, pmf


def _release_matches_noisy_law(release, c0, alpha, beta, eps, m=20000):
    """Chi-square goodness of fit of m releases against the exact law of the noisy
    count; p-value threshold 1e-4 = false-failure rate of a correct release."""
    ks, pmf = _clipped_pmf(c0, alpha, beta, eps)
    assert pmf.sum() == pytest.approx(1.0)
    draws = np.array([release() for _ in range(m)])
    if np.any((draws < alpha) | (draws > beta)):
        return False
    obs = np.array([(draws == k).sum() for k in ks])
    return stats.chisquare(obs, m * pmf).pvalue > 1e-4


def _paper_appendix_b_count(count, alpha, beta, eps, rho, d, rng):
    """Lines 55-63 of Khanna et al.'s Appendix B: line 58 overwrites the noisy count."""
    c = np.clip(count, alpha, beta)
    p = 1 - np.exp(-eps / (beta - alpha))
    c = round(c + rng.geometric(p) - rng.geometric(p))
    c = np.clip(count, alpha, beta)   # line 58
    c = c * rho
    return int(min(max(c, 0), d))


def test_released_count_has_the_double_geometric_law():
    """The released count is clip(clip(c0) + Z) with Z double-geometric,
    p = 1 - exp(-eps_1 / (beta - alpha)); the paper's Appendix B code fails this check
    (it always returns clip(c0))."""
    alpha, beta, eps, c0 = 7, 16, 2.0, 11
    rng = np.random.default_rng(7)
    ours = lambda: noisy_count(c0, count_bounds=(alpha, beta), epsilon=eps, n_coef=60,  # noqa: E731
                               random_state=rng)
    assert _release_matches_noisy_law(ours, c0, alpha, beta, eps)
    paper = lambda: _paper_appendix_b_count(c0, alpha, beta, eps, 1.0, 60, rng)  # noqa: E731
    assert not _release_matches_noisy_law(paper, c0, alpha, beta, eps, m=2000)
    # counts outside the bounds are clipped first
    low = lambda: noisy_count(2, count_bounds=(alpha, beta), epsilon=eps, n_coef=60,  # noqa: E731
                              random_state=rng)
    assert _release_matches_noisy_law(low, 2, alpha, beta, eps)


def test_noisy_count_precision_and_range():
    rng = np.random.default_rng(0)
    # huge epsilon: no noise; precision scales, then clip to [0, d] and round half up
    kw = dict(count_bounds=(4, 10), epsilon=1e9, random_state=rng)
    assert noisy_count(7, n_coef=100, **kw) == 7
    assert noisy_count(7, n_coef=100, precision=0.5, **kw) == 4       # 3.5 -> 4
    assert noisy_count(7, n_coef=100, precision=3.0, **kw) == 21
    assert noisy_count(7, n_coef=12, precision=3.0, **kw) == 12       # clipped to d
    assert noisy_count(0, n_coef=100, **kw) == 4                      # clipped to alpha
    with pytest.raises(ValueError, match="precision"):
        noisy_count(7, n_coef=100, precision=0.0, **kw)
    with pytest.raises(ValueError, match="count"):
        noisy_count(-1, n_coef=100, **kw)


def test_keep_largest():
    w = np.array([[0.1, -3.0, 0.0, 2.0, -2.0, 0.5]])
    np.testing.assert_array_equal(keep_largest(w, 2), [[0, -3.0, 0, 2.0, 0, 0]])
    np.testing.assert_array_equal(keep_largest(w, 0), np.zeros_like(w))
    np.testing.assert_array_equal(keep_largest(w, 10), w)
    W = np.array([[1.0, -5.0], [4.0, 0.0]])
    np.testing.assert_array_equal(keep_largest(W, 2), [[0, -5.0], [4.0, 0]])


# ---------------------------------------------------------------------- the estimator
def _sparsifier(**kw):
    # epsilon is the total: epsilon_count 0.5 + 0.95 for the private fit
    params = dict(l1_bound=5.0, max_iter=150, epsilon_count=0.5, epsilon=1.45, delta=1e-3,
                  nonprivate_max_iter=1500)
    params.update(kw)
    return SparsifiedLassoClassifier(**params)


def test_sparsifier_releases_the_noisy_count(tmp_path):
    """Fitted n_nonzero_ over 40 seeds follows the noisy law, not the constant clip(c0)
    of Appendix B.  The non-private fit is cached (memory=), as it is data-only.
    False failure: the mean test at 5 sd has rate < 1e-6; P(all 40 equal) < 1e-20."""
    X, y = _problem(n=300, d=60, seed=3)
    c0 = int(np.count_nonzero(sparsifier_module._nonprivate_coef(
        X, y, 50.0, "projected_gradient", 1500, 1e-4, 0.3, np.unique(y))[0]))
    alpha, beta = check_count_bounds("sqrt", 60)
    assert alpha < c0 < beta, "test data must put the true count inside the bounds"
    eps1 = 3.0
    rng = np.random.default_rng(2)
    counts = []
    for _ in range(40):
        est = _sparsifier(l1_bound=50.0, epsilon_count=eps1, epsilon=eps1 + 0.95,
                          memory=str(tmp_path), random_state=rng).fit(X, y)
        counts.append(est.n_nonzero_)
        assert np.count_nonzero(est.coef_) <= est.n_nonzero_
        np.testing.assert_array_equal(est.coef_, keep_largest(est.estimator_.coef_,
                                                              est.n_nonzero_))
    counts = np.array(counts)
    assert len(set(counts.tolist())) > 1
    ks, pmf = _clipped_pmf(c0, alpha, beta, eps1)
    mean, sd = (ks * pmf).sum(), math.sqrt(((ks - (ks * pmf).sum()) ** 2 * pmf).sum())
    assert abs(counts.mean() - mean) < 5 * sd / math.sqrt(len(counts))


def test_sparsifier_budget_and_accountant(monkeypatch):
    X, y = _problem()
    acc = BudgetAccountant(epsilon=2.0, delta=1e-2)
    est = _sparsifier(epsilon_count=0.05, epsilon=1.0, accountant=acc, random_state=0)
    est.fit(X, y)
    # epsilon is the total: the private fit gets epsilon - epsilon_count
    assert est.estimator_.epsilon == 1.0 - 0.05
    assert est.privacy_spent_ == (epsilon_of_event(est.privacy_event_, 1e-3), 1e-3)
    assert est.privacy_spent_[0] <= 0.05 + (1.0 - 0.05)
    assert acc.spent == (pytest.approx(est.privacy_spent_[0]), pytest.approx(1e-3))
    assert len(acc.spends) == 1
    # over budget: refused before any work (the non-private fit is never reached)
    small = BudgetAccountant(epsilon=0.9, delta=1e-2)

    def boom(*a, **k):
        raise AssertionError("work done before the budget check")

    monkeypatch.setattr(sparsifier_module, "_nonprivate_coef", boom)
    monkeypatch.setattr(FrankWolfeLassoClassifier, "_run", boom)
    with pytest.raises(BudgetExceededError):
        _sparsifier(accountant=small, random_state=0).fit(X, y)
    assert small.spends == []


def test_sparsifier_paper_scale_reports_true_budget():
    X, y = _problem()
    est = _sparsifier(mechanism="laplace_talwar", random_state=0).fit(X, y)
    assert est.privacy_spent_[0] == pytest.approx(0.5 + est.estimator_.privacy_spent_[0])
    # the accountant's figure for the paper's noise is above the nominal total (1.0)
    assert est.privacy_spent_[0] > 0.5 + 0.5


def test_sparsifier_is_sparse_and_predicts():
    X, y = _problem(n=600, d=60)
    est = _sparsifier(random_state=0).fit(X, y)
    alpha, beta = est.count_bounds_
    assert alpha <= est.n_nonzero_ <= beta
    assert np.count_nonzero(est.coef_) <= est.n_nonzero_
    assert np.count_nonzero(est.estimator_.coef_) > est.n_nonzero_   # private LASSO is dense
    assert est.predict(X).shape == (600,)
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(np.unique(est.predict(X))) <= {0.0, 1.0}
    assert 0.0 <= est.score(X, y) <= 1.0


def test_sparsifier_formats_and_reproducible():
    X, y = _problem(n=200, d=30)
    ref = _sparsifier(random_state=4).fit(X, y).coef_
    for fmt in ("csr", "csc", "coo", "lil", "dok"):
        Xs = sp.csr_array(X).asformat(fmt)
        np.testing.assert_array_equal(_sparsifier(random_state=4).fit(Xs, y).coef_, ref)
    other = _sparsifier(random_state=5).fit(X, y).coef_
    assert not np.array_equal(other, ref)


# ------------------------------------------------------- the non-private solver
def test_project_l1_rows_against_bisection():
    rng = np.random.default_rng(0)
    V = rng.normal(size=(4, 50)) * rng.uniform(0.1, 3.0, size=(4, 1))
    P = l1_ball_module.project_l1_rows(V, 2.0)
    for v, w in zip(V, P):
        if np.abs(v).sum() <= 2.0:
            np.testing.assert_array_equal(w, v)
            continue
        lo, hi = 0.0, np.abs(v).max()          # ||soft(v, tau)||_1 = 2 by bisection
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if np.maximum(np.abs(v) - mid, 0).sum() > 2.0 else (lo, mid)
        np.testing.assert_allclose(w, np.sign(v) * np.maximum(np.abs(v) - hi, 0), atol=1e-12)
        assert np.abs(w).sum() == pytest.approx(2.0, rel=1e-12)
    inside = 0.01 * V
    np.testing.assert_array_equal(l1_ball_module.project_l1_rows(inside, 2.0), inside)


def _sparse_binary(n=600, p=400, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.03, random_state=seed, format="csr")
    X.data[:] = 1.0
    w = np.zeros(p)
    w[:20] = rng.normal(scale=3.0, size=20)
    y = (X @ w + 0.5 * rng.normal(size=n) > 0).astype(float)
    return X, y


def test_l1_ball_logistic_solves_the_constrained_problem():
    """The constrained optimum is the L1-penalised one at mu = ||grad F(w*)||_inf
    (KKT): liblinear on the penalised problem must find the same weights, whatever
    the initial working set."""
    from scipy.special import expit
    from sklearn.linear_model import LogisticRegression

    X, y = _sparse_binary()
    n = X.shape[0]
    ref = None
    for working_set in (1, 16, 1024):
        W, n_iter, gap = l1_ball_module.l1_ball_logistic(
            X, y[:, None], 5.0, tol=1e-10, max_iter=5000, working_set=working_set)
        w = W.ravel()
        assert gap <= 1e-10 and n_iter < 5000
        assert np.abs(w).sum() == pytest.approx(5.0, rel=1e-9)  # the constraint is active
        if ref is None:
            mu = np.abs(X.T @ ((expit(X @ w) - y) / n)).max()
            ref = LogisticRegression(solver="liblinear", l1_ratio=1.0, C=1.0 / (n * mu),
                                     fit_intercept=False, tol=1e-10,
                                     max_iter=10_000).fit(X, y).coef_.ravel()
        np.testing.assert_allclose(w, ref, atol=1e-5)
        np.testing.assert_array_equal(w != 0, np.abs(ref) > 1e-8)


def test_l1_ball_logistic_multinomial_kkt():
    """Per-class L1 balls (Khanna, Lu and Raff (2023), Appendix A): at the solution every class k has
    ||w_k||_1 = lambda, gradient -mu_k sign(w_kj) on its support and |grad| <= mu_k off
    it; the gap bounds the distance to the optimum of 20,000 Frank-Wolfe steps."""
    from scipy.special import softmax

    X, y = _sparse_binary(seed=1)
    rng = np.random.default_rng(1)
    y = np.where(rng.random(y.size) < 0.3, 2, y).astype(int)
    Y = np.eye(3)[y]
    W, _, gap = l1_ball_module.l1_ball_logistic(X, Y, 3.0, tol=1e-9, max_iter=20_000)
    assert gap <= 1e-9
    G = np.asarray(X.T @ ((softmax(np.asarray(X @ W.T), axis=1) - Y) / X.shape[0])).T
    for w, g in zip(W, G):
        mu = np.abs(g).max()
        assert np.abs(w).sum() == pytest.approx(3.0, rel=1e-9)
        np.testing.assert_allclose(g[w != 0], -mu * np.sign(w[w != 0]), atol=1e-6)
    fw = FrankWolfeLassoClassifier(l1_bound=3.0, max_iter=20_000, epsilon=None).fit(X, y)
    loss = l1_ball_module._logistic_loss
    f_pg = loss(np.asarray(X @ W.T), Y)[0]
    f_fw = loss(np.asarray(X @ fw.coef_.T), Y)[0]
    assert f_pg <= f_fw + 1e-12


def test_l1_ball_logistic_warns_when_capped():
    X, y = _sparse_binary()
    with pytest.warns(ConvergenceWarning, match="nonprivate_max_iter"):
        _, n_iter, gap = l1_ball_module.l1_ball_logistic(X, y[:, None], 50.0, tol=1e-12,
                                                            max_iter=5)
    assert n_iter == 5 and gap > 1e-12


def test_nonprivate_sparsifier():
    """epsilon=None: no noise and no privacy; the count of the non-private solution,
    clipped to [alpha, beta], keeps the largest weights of that solution."""
    X, y = _problem(n=300, d=60, seed=3)
    est = SparsifiedLassoClassifier(l1_bound=50.0, random_state=0, epsilon=None).fit(X, y)
    W = sparsifier_module._nonprivate_coef(X, y, 50.0, "projected_gradient", 2000, 1e-4,
                                           0.3, np.unique(y))[0]
    alpha, beta = check_count_bounds("sqrt", 60)
    c = min(max(np.count_nonzero(W), alpha), beta)
    assert est.n_nonzero_ == c
    np.testing.assert_array_equal(est.coef_, keep_largest(W, c))
    assert est.privacy_spent_ is None and est.privacy_event_ is None
    assert est.estimator_ is None
    other = SparsifiedLassoClassifier(l1_bound=50.0, random_state=1, epsilon=None).fit(X, y)
    np.testing.assert_array_equal(other.coef_, est.coef_)
    half = SparsifiedLassoClassifier(l1_bound=50.0, precision=0.5, epsilon=None).fit(X, y)
    assert half.n_nonzero_ == math.floor(0.5 * c + 0.5)
    assert np.count_nonzero(half.coef_) <= half.n_nonzero_


def test_sparsifier_frank_wolfe_count():
    """nonprivate_solver="frank_wolfe": the count of nonprivate_max_iter Frank-Wolfe
    steps (Khanna, Lu and Raff's (2023) code), at most that many non-zeros."""
    X, y = _problem(n=300, d=60, seed=3)
    fw = FrankWolfeLassoClassifier(l1_bound=50.0, max_iter=7, refresh_tol=DEFAULT_REFRESH_TOL,
                                   epsilon=None).fit(X, y)
    est = SparsifiedLassoClassifier(l1_bound=50.0, nonprivate_solver="frank_wolfe",
                                    nonprivate_max_iter=7, count_bounds=(0, 60),
                                        epsilon=None).fit(X, y)
    np.testing.assert_array_equal(est.coef_, fw.coef_)
    assert est.n_nonzero_ == np.count_nonzero(fw.coef_) <= 7
    assert est.nonprivate_n_iter_ == 7


def test_sparsifier_public_bound():
    X, y = _problem(n=200, d=30)
    with pytest.warns(DataClippedWarning):
        _sparsifier(random_state=0).fit(3.0 * X, y)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        _sparsifier(clip_data=False, random_state=0).fit(3.0 * X, y)


@pytest.mark.parametrize("params, exc, match", [
    (dict(count_bounds=(8, 8)), ValueError, "alpha < beta"),
    (dict(count_bounds=(9, 3)), ValueError, "alpha < beta"),
    (dict(count_bounds=(-2, 3)), ValueError, "alpha"),
    (dict(count_bounds=(1.5, 3)), ValueError, "integer"),
    (dict(precision=0.0), ValueError, "precision"),
    (dict(precision=-1.0), ValueError, "precision"),
    (dict(precision=np.inf), ValueError, "precision"),
    (dict(epsilon_count=0.0), ValueError, "epsilon_count"),
    (dict(epsilon_count=-0.05), ValueError, "epsilon_count"),
    (dict(epsilon_count=None), TypeError, "epsilon_count"),
    (dict(epsilon=None), ValueError, "delta is set but epsilon is None"),
    (dict(epsilon=0.0), ValueError, "epsilon"),
    (dict(epsilon=0.5), ValueError, "epsilon_count must be smaller than epsilon"),
    (dict(epsilon=0.4), ValueError, "epsilon_count must be smaller than epsilon"),
    (dict(nonprivate_max_iter=0), ValueError, "nonprivate_max_iter"),
    (dict(nonprivate_solver="cd"), ValueError, "nonprivate_solver"),
    (dict(mechanism="argmax"), ValueError, "mechanism"),
    (dict(delta=1.5), ValueError, "delta"),
    (dict(clip_data="yes"), TypeError, "clip_data"),
])
def test_sparsifier_bad_parameters(params, exc, match):
    X, y = _problem(n=100, d=20)
    with pytest.raises(exc, match=match):
        _sparsifier(**params).fit(X, y)


def test_sparsifier_bad_data():
    X, y = _problem(n=100, d=20)
    with pytest.raises(ValueError, match="two classes"):
        _sparsifier().fit(X, np.zeros(100))
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        _sparsifier().fit(Xn, y)
    with pytest.raises(ValueError):
        _sparsifier().fit(X, y[:50])


# ------------------------------------------------------------------ synthetic data
def test_correlated_classification_matches_section_4_2():
    X, y, w = make_correlated_classification(random_state=0)
    assert X.shape == (10_000, 100)
    np.testing.assert_array_equal(w[:8], [10, 9, 8, 7, 6, 5, 4, 0.5])
    assert np.all(w[8:] == 0)
    assert np.abs(X).max() <= 1.0
    np.testing.assert_array_equal(y, (X @ w > 0).astype(float))
    # Sigma_jk = 0.5^|j-k| (features scaled by the public 5): correlations within
    # 0.04 of 0.5^|j-k| (standard error 0.01 at n = 10^4; false failure < 1e-4)
    C = np.corrcoef(X[:, :6].T)
    lags = np.abs(np.subtract.outer(np.arange(6), np.arange(6)))
    assert np.max(np.abs(C - 0.5 ** lags)) < 0.04
    # public scaling: marginal standard deviation 1 / bound
    assert np.std(X) == pytest.approx(0.2, rel=0.02)


def test_correlated_classification_scalings():
    with pytest.warns(PrivacyLeakWarning):
        X, y, w = make_correlated_classification(500, 20, scaling="max_abs", random_state=1)
    np.testing.assert_allclose(np.abs(X).max(axis=0), 1.0)
    Xr, _, _ = make_correlated_classification(500, 20, scaling=None, random_state=1)
    assert np.abs(Xr).max() > 1.0
    Xp, _, _ = make_correlated_classification(500, 20, random_state=1)
    np.testing.assert_allclose(Xp, np.clip(Xr / 5.0, -1, 1))


@pytest.mark.parametrize("kw, exc", [
    (dict(n_samples=0), ValueError),
    (dict(n_features=5), ValueError),                 # fewer than len(coef)
    (dict(correlation=1.0), ValueError),
    (dict(coef=[1.0, np.inf]), ValueError),
    (dict(coef="abc"), TypeError),
    (dict(scaling="std"), ValueError),
    (dict(bound=0.0), ValueError),
    (dict(random_state="x"), TypeError),
])
def test_correlated_classification_bad_input(kw, exc):
    with pytest.raises(exc):
        make_correlated_classification(**{**dict(n_samples=50, n_features=10), **kw})


# -------------------------------------------------------------- scikit-learn API
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402


@parametrize_with_checks([SparsifiedLassoClassifier(max_iter=50, nonprivate_max_iter=200,
                                                    random_state=0, epsilon=None)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_sparsifier_takes_n_from_n_samples_public_only():
    """The private fit's step count and event come from n_samples_public, never
    from the rows present: the same for 300 and 400 rows, no N warning; without
    it, a PrivacyLeakWarning naming n_samples_public."""
    import warnings

    X, y = _problem(n=400)
    fits = []
    for m in (300, 400):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = SparsifiedLassoClassifier(epsilon=1.0, epsilon_count=0.05, delta=1e-5,
                                            n_samples_public=1000, classes=[0, 1],
                                            random_state=0).fit(X[:m], y[:m])
        assert not [w for w in caught if "n_samples_public" in str(w.message)]
        fits.append((est.n_iter_, est.privacy_event_, est.privacy_spent_))
    assert fits[0] == fits[1]
    with pytest.warns(PrivacyLeakWarning, match="n_samples_public"):
        SparsifiedLassoClassifier(epsilon=1.0, delta=1e-5, classes=[0, 1],
                                  random_state=0).fit(X, y)


def test_auto_radius_is_the_private_fits_for_both_fits(monkeypatch):
    """l1_bound="auto" (the default): a private fit uses the radius the private
    Frank-Wolfe fit chooses from public quantities at epsilon - epsilon_count, and the
    non-private count is taken at that radius; a non-private fit uses 50."""
    from dptoolkit.linear_model import _sparsifier
    from dptoolkit.linear_model._frank_wolfe._budget import private_defaults

    X, y = _problem(n=300, d=60, seed=3)
    radii = []
    real = _sparsifier._nonprivate_coef

    def spy(X, y, l1_bound, *args):
        radii.append(l1_bound)
        return real(X, y, l1_bound, *args)

    monkeypatch.setattr(_sparsifier, "_nonprivate_coef", spy)
    assert SparsifiedLassoClassifier(epsilon=None).l1_bound == "auto"
    est = SparsifiedLassoClassifier(epsilon=1.05, epsilon_count=0.05, delta=1e-5,
                                    n_samples_public=300, classes=[0, 1],
                                    random_state=0).fit(X, y)
    lam, T = private_defaults(n_samples=300, epsilon=1.0, delta=1e-5, n_drawn=60)
    assert est.estimator_.l1_bound_ == pytest.approx(lam, rel=1e-12)
    assert est.estimator_.n_iter_ == T
    assert radii == [est.estimator_.l1_bound_]
    SparsifiedLassoClassifier(epsilon=None).fit(X, y)
    assert radii[-1] == 50.0
    with pytest.raises(ValueError, match="l1_bound"):
        SparsifiedLassoClassifier(l1_bound="big", epsilon=None).fit(X, y)


def test_the_private_fit_is_frank_wolfe_at_its_defaults():
    """Step (3) is Frank-Wolfe at its defaults with epsilon - epsilon_count (its
    candidate screening and, with two classes under zCDP, its naive-Bayes start),
    and the event is the count's pure-DP event composed with that fit's."""
    from dptoolkit.accounting.events import ComposedEvent, PureDPEvent

    n, d = 400, 3000            # more columns than the screening keeps: the start runs
    X = sp.random_array((n, d), density=0.01, rng=np.random.default_rng(0), format="csr")
    X.data[:] = 1.0
    y = (np.asarray(X[:, :20].sum(axis=1)).ravel() > 0).astype(int)
    kw = dict(delta=1e-5, n_samples_public=n, classes=[0, 1])
    est = SparsifiedLassoClassifier(epsilon=1.0, epsilon_count=0.05, random_state=0,
                                    **kw).fit(X, y)
    fw = est.estimator_
    defaults = FrankWolfeLassoClassifier().get_params()
    changed = {name for name, value in fw.get_params().items()
               if not np.array_equal(value, defaults[name])}
    assert changed <= {"epsilon", "delta", "n_samples_public", "classes", "clip_data"}
    reference = FrankWolfeLassoClassifier(epsilon=0.95, **kw)._privacy_plan(
        n, d, np.array([0, 1]))
    assert reference.params.start == "naive_bayes"
    assert fw._privacy_plan(n, d, np.array([0, 1])).params.start == "naive_bayes"
    assert est.privacy_event_ == ComposedEvent((PureDPEvent(0.05), reference.event))
    assert est.privacy_spent_ == (epsilon_of_event(est.privacy_event_, 1e-5), 1e-5)
    assert est.privacy_spent_[0] <= 0.05 + reference.spent[0]
