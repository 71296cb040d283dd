"""DP-IGHT (Wang & Gu 2019), the private IGHT baseline of Khanna, Lu and Raff."""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dptoolkit.accounting import BudgetAccountant, RDPAccountant, calibrate_noise_multiplier
from dptoolkit.datasets import clip_rows, make_correlated_classification
from dptoolkit.exceptions import BudgetExceededError, DataClippedWarning, PrivacyLeakWarning
from dptoolkit.linear_model import DPIGHTClassifier


def _data(n=500, d=30, seed=0):
    X, y, w = make_correlated_classification(n, d, coef=(4.0, -3.0, 3.0, 2.0),
                                             random_state=seed)
    X, _ = clip_rows(X, 1.0, "l2")
    return X, y, w


def _reference_iht(X, y, s, eta, T):
    """Non-private IGHT: theta <- H_s(theta - eta * mean gradient), plain loops."""
    n, d = X.shape
    theta = np.zeros(d)
    for _ in range(T):
        p = 1.0 / (1.0 + np.exp(-(X @ theta)))
        z = theta - eta * (X.T @ (p - y)) / n
        keep = np.argsort(-np.abs(z), kind="stable")[:s]
        theta = np.zeros(d)
        theta[keep] = z[keep]
    return theta


def test_nonprivate_limit_matches_reference():
    """epsilon = 1e9: sigma = 1.8e-4, noise std ~7e-7 per step; same path as plain IGHT."""
    X, y, _ = _data()
    ref = _reference_iht(X, y, 4, 2.0, 60)
    clf = DPIGHTClassifier(sparsity=4, max_iter=60, learning_rate=2.0, epsilon=1e9,
                           delta=1e-5, n_samples_public=X.shape[0], random_state=0).fit(X, y)
    np.testing.assert_allclose(clf.coef_[0], ref, rtol=1e-4, atol=1e-6)
    assert np.count_nonzero(clf.coef_) <= 4


@pytest.mark.parametrize("neighbouring, factor", [("add_remove", 1.0), ("replace_one", 2.0)])
def test_noise_scale_is_the_calibrated_gaussian(neighbouring, factor):
    """X = 0: the gradient sum is 0, so after one step without thresholding
    coef = -(eta / N) b with b ~ N(0, (sigma Delta)^2 I), Delta = C (2C replace-one).
    d = 4000 draws: the sample variance is within 5 standard errors (false failure
    < 1e-6); a factor-2 error in the scale would be off by ~300 standard errors."""
    n, d, eta, C = 50, 4000, 3.0, 0.5
    X = np.zeros((n, d))
    y = np.r_[np.zeros(25), np.ones(25)]
    clf = DPIGHTClassifier(sparsity=d, max_iter=1, learning_rate=eta, epsilon=1.0, delta=1e-5,
                           row_norm_bound=C, neighbouring=neighbouring,
                           n_samples_public=n, random_state=3).fit(X, y)
    sigma = calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5, sampling_rate=1.0,
                                       steps=1)
    assert clf.noise_multiplier_ == pytest.approx(sigma)
    std = eta / n * sigma * factor * C
    z = clf.coef_[0] / std
    assert abs(np.var(z) - 1.0) < 5 * math.sqrt(2.0 / d)
    assert stats.kstest(z, "norm").pvalue > 1e-6


def test_privacy_spent_and_accountant():
    X, y, _ = _data()
    acc = BudgetAccountant(epsilon=1.0, delta=1e-4)
    clf = DPIGHTClassifier(sparsity=5, max_iter=100, epsilon=0.8, delta=1e-5, accountant=acc,
                           random_state=0).fit(X, y)
    eps, delta = clf.privacy_spent_
    expected = RDPAccountant().compose_gaussian(noise_multiplier=clf.noise_multiplier_,
                                                steps=100).get_epsilon(1e-5)
    assert eps == pytest.approx(expected) and eps <= 0.8 and eps > 0.8 * (1 - 1e-4)
    assert delta == 1e-5
    assert acc.spent == (pytest.approx(eps), pytest.approx(1e-5))
    with pytest.raises(BudgetExceededError):
        DPIGHTClassifier(sparsity=5, max_iter=100, epsilon=0.5, delta=1e-5,
                         accountant=acc).fit(X, y)
    assert len(acc.spends) == 1


def test_learns_the_support_with_large_epsilon():
    X, y, w = make_correlated_classification(3000, 40, random_state=1)
    X, _ = clip_rows(X, 1.0, "l2")
    clf = DPIGHTClassifier(sparsity=8, max_iter=300, learning_rate=4.0, epsilon=50.0,
                           delta=1e-5, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.9
    assert len(set(np.flatnonzero(clf.coef_[0])) & set(range(7))) >= 6


def test_row_clipping_and_formats():
    X, y, _ = _data(n=200, d=20)
    with pytest.warns(DataClippedWarning):
        DPIGHTClassifier(sparsity=3, max_iter=5, random_state=0).fit(3 * X, y)
    with pytest.raises(ValueError, match="row_norm_bound"):
        DPIGHTClassifier(sparsity=3, max_iter=5, clip_data=False).fit(3 * X, y)
    ref = DPIGHTClassifier(sparsity=3, max_iter=20, random_state=1).fit(X, y).coef_
    for fmt in ("csr", "csc", "coo"):
        got = DPIGHTClassifier(sparsity=3, max_iter=20, random_state=1).fit(
            sp.csr_array(X).asformat(fmt), y).coef_
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    clf = DPIGHTClassifier(sparsity=3, max_iter=5, random_state=0).fit(X, 2 * y - 1)
    assert set(clf.predict(X)) <= {-1.0, 1.0}
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


@pytest.mark.parametrize("params, exc, match", [
    (dict(sparsity=0), ValueError, "sparsity"),
    (dict(sparsity=21), ValueError, "sparsity"),
    (dict(sparsity=2.5), TypeError, "sparsity"),
    (dict(max_iter=0), ValueError, "max_iter"),
    (dict(learning_rate=0.0), ValueError, "learning_rate"),
    (dict(epsilon=-1.0), ValueError, "epsilon"),
    (dict(delta=0.0), ValueError, "delta"),
    (dict(delta=1.0), ValueError, "delta"),
    (dict(row_norm_bound=0.0), ValueError, "row_norm_bound"),
    (dict(neighbouring="bounded"), ValueError, "neighbouring"),
    (dict(clip_data=1), TypeError, "clip_data"),
    (dict(n_samples_public=0), ValueError, "n_samples_public"),
    (dict(n_samples_public=10.5), TypeError, "n_samples_public"),
])
def test_bad_parameters(params, exc, match):
    X, y, _ = _data(n=60, d=20)
    with pytest.raises(exc, match=match):
        DPIGHTClassifier(**params).fit(X, y)


def test_public_dataset_size():
    """The step uses the public N; reading it from the data warns under add/remove."""
    X, y, _ = _data(n=100, d=10)
    with pytest.warns(PrivacyLeakWarning, match="n_samples_public"):
        DPIGHTClassifier(sparsity=2, max_iter=3, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        a = DPIGHTClassifier(sparsity=2, max_iter=3, neighbouring="replace_one",
                             random_state=0).fit(X, y)
        b = DPIGHTClassifier(sparsity=2, max_iter=3, n_samples_public=100,
                             neighbouring="replace_one", random_state=0).fit(X, y)
        c = DPIGHTClassifier(sparsity=2, max_iter=3, n_samples_public=200,
                             neighbouring="replace_one", random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    # one step from 0: theta_1 = H_s(-(eta / N) (grad + b)), so N = 200 halves it
    one = [DPIGHTClassifier(sparsity=10, max_iter=1, n_samples_public=m, random_state=0)
           .fit(X, y).coef_ for m in (100, 200)]
    np.testing.assert_allclose(one[1], one[0] / 2.0)


def test_bad_data():
    X, y, _ = _data(n=60, d=20)
    with pytest.raises(ValueError, match="Only binary"):
        DPIGHTClassifier(sparsity=2).fit(X, np.arange(60) % 3)
    with pytest.raises(ValueError, match="1 class"):
        DPIGHTClassifier(sparsity=2).fit(X, np.zeros(60))
    Xn = X.copy()
    Xn[1, 1] = np.inf
    with pytest.raises(ValueError):
        DPIGHTClassifier(sparsity=2).fit(Xn, y)


# -------------------------------------------------------------- scikit-learn API
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402


@parametrize_with_checks([DPIGHTClassifier(sparsity=1, max_iter=100, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_screening_event_and_coefficients():
    """With screening the fit is the Gaussian screening composed with the T steps;
    coef_ lives on the screened columns; the guarantee is the composed RDP."""
    import scipy.sparse as sp

    from dptoolkit.accounting import epsilon_of_event

    rng = np.random.default_rng(0)
    X = sp.csr_array((rng.random((300, 5000)) < 0.01).astype(float))
    y = (X[:, [0]].toarray().ravel() > 0).astype(int)
    clf = DPIGHTClassifier(epsilon=1.0, n_samples_public=300, max_iter=10, sparsity=20,
                           random_state=0).fit(X, y)
    assert clf.screened_features_.shape == (4096,)
    assert set(np.flatnonzero(clf.coef_[0])) <= set(clf.screened_features_)
    assert np.count_nonzero(clf.coef_) <= 20
    eps = epsilon_of_event(clf.privacy_event_, 1e-5, method="rdp")
    assert eps == pytest.approx(clf.privacy_spent_[0], rel=1e-9)
    assert clf.privacy_spent_[0] <= 1.0
    with pytest.raises(ValueError, match="screening"):
        DPIGHTClassifier(screening=5, sparsity=20, n_samples_public=300).fit(X, y)
    off = DPIGHTClassifier(epsilon=1.0, n_samples_public=300, max_iter=10, sparsity=20,
                           screening=None, random_state=0).fit(X, y)
    assert off.screened_features_ is None
