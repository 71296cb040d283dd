"""DPNBLogisticClassifier: the release, the transformation, DP-SGD, the guarantee."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dptoolkit.accounting import RDPAccountant, epsilon_of_event
from dptoolkit.exceptions import PrivacyLeakWarning
from dptoolkit.linear_model import DPNBLogisticClassifier
from dptoolkit.linear_model._glm._nb_logistic import _transform, _unit_rows


def _text_like(n=3000, d=400, seed=0):
    """Binary bag of words: features 0-9 favour class 1, 10-19 class 0."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = np.full((n, d), 0.02)
    p[:, :10] += 0.15 * y[:, None]
    p[:, 10:20] += 0.15 * (1 - y)[:, None]
    return sp.csr_array((rng.random((n, d)) < p).astype(float)), y


def test_learns_and_is_sparse():
    X, y = _text_like()
    Xt, yt = _text_like(seed=1)
    clf = DPNBLogisticClassifier(epsilon=1.0, k=50, n_samples_public=3000,
                                 random_state=0).fit(X, y)
    assert clf.score(Xt, yt) > 0.8
    assert np.count_nonzero(clf.coef_) <= 50
    # the informative features are kept and signed as the data says
    kept = set(clf.feature_indices_)
    assert set(range(20)) <= kept
    assert np.all(clf.coef_[0, :10] > 0) and np.all(clf.coef_[0, 10:20] < 0)
    # coef_ predicts as the model (a positive per-row factor apart)
    np.testing.assert_array_equal(np.sign(clf.decision_function(Xt)),
                                  np.sign(Xt @ clf.coef_[0] + clf.intercept_[0]))
    proba = clf.predict_proba(Xt)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_guarantee_is_the_composition_of_release_and_steps():
    X, y = _text_like(n=1000)
    clf = DPNBLogisticClassifier(epsilon=0.7, delta=1e-6, k=20,
                                 n_samples_public=1000, n_epochs=4,
                                 random_state=0).fit(X, y)
    s1, s2 = clf.noise_multipliers_
    acc = RDPAccountant().compose_gaussian(noise_multiplier=s1)
    acc.compose_subsampled_gaussian(noise_multiplier=s2, sampling_rate=0.04,
                                    steps=clf.n_steps_)
    eps = acc.get_epsilon(1e-6)
    assert eps <= 0.7 and eps == pytest.approx(0.7, rel=1e-4)
    assert epsilon_of_event(clf.privacy_event_, 1e-6, composition="rdp") == pytest.approx(
        eps, rel=1e-9)
    assert clf.privacy_spent_ == (epsilon_of_event(clf.privacy_event_, 1e-6), 1e-6)
    assert clf.n_steps_ == 100
    # the release gets the share f of the zCDP budget: sigma_1 = sigma_all / sqrt(f)
    s_all = s1 * np.sqrt(0.75)
    assert RDPAccountant().compose_gaussian(noise_multiplier=s_all).get_epsilon(
        1e-6) == pytest.approx(0.7, rel=1e-6)


def test_release_matches_a_python_reference(monkeypatch):
    """The kept features and ratios are the top-k of the noisy per-class sums of the
    unit rows, computed here independently with the same noise draws."""
    X, y = _text_like(n=500, d=60)
    clf = DPNBLogisticClassifier(epsilon=2.0, k=15, n_samples_public=500,
                                 n_epochs=1, random_state=3).fit(X, y)
    rng = np.random.default_rng(3)
    Xd = X.toarray()
    U = Xd / np.linalg.norm(Xd, axis=1, keepdims=True).clip(1e-300)
    U[np.linalg.norm(Xd, axis=1) == 0] = 0
    sums = np.vstack([U[y == 0].sum(0), U[y == 1].sum(0)])
    noisy = sums + rng.normal(0.0, clf.noise_multipliers_[0], sums.shape)
    top = np.sort(np.argsort(-(noisy[0] + noisy[1]))[:15])
    np.testing.assert_array_equal(clf.feature_indices_, top)
    s = clf.noise_multipliers_[0]
    # the multinomial naive-Bayes log-count ratios: each class's smoothed sums
    # normalised to a distribution over the kept features (Wang and Manning 2012)
    pos = np.maximum(noisy[:, top], 0) + s
    p1, p0 = pos[1] / pos[1].sum(), pos[0] / pos[0].sum()
    r = np.log(p1) - np.log(p0)
    np.testing.assert_allclose(clf.log_count_ratios_, r, rtol=1e-10, atol=1e-12)
    Z = _transform(X, top, r).toarray()
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1.0)
    ref = np.hstack([Xd[:, top] * r, np.ones((500, 1))])
    np.testing.assert_allclose(Z, ref / np.linalg.norm(ref, axis=1, keepdims=True))
    np.testing.assert_allclose(_unit_rows(X).toarray(), U)


def test_leak_warning_without_public_n():
    X, y = _text_like(n=300)
    with pytest.warns(PrivacyLeakWarning, match="n_samples_public"):
        DPNBLogisticClassifier(epsilon=1.0, k=5, n_epochs=1).fit(X, y)


@pytest.mark.parametrize("kw,exc,match", [
    ({"epsilon": 0.0}, ValueError, "epsilon"),
    ({"delta": 0.0}, ValueError, "delta"),
    ({"delta": None}, ValueError, "delta"),
    ({"k": 0}, ValueError, r"\bk\b"),
    ({"k": 2.5}, TypeError, r"\bk\b"),
    ({"selection_share": 1.0}, ValueError, "selection_share"),
    ({"sampling_rate": 0.0}, ValueError, "sampling_rate"),
    ({"n_epochs": -1}, ValueError, "n_epochs"),
    ({"learning_rate": 0}, ValueError, "learning_rate"),
    ({"alpha": -1e-3}, ValueError, "alpha"),
    ({"averaging_fraction": 0.0}, ValueError, "averaging_fraction"),
    ({"n_samples_public": 0}, ValueError, "n_samples_public"),
    ({"accountant": "acc"}, TypeError, "accountant"),
])
def test_bad_input(kw, exc, match):
    X, y = _text_like(n=100, d=30)
    base = dict(epsilon=1.0, k=5, n_epochs=1, n_samples_public=100)
    with pytest.raises(exc, match=match):
        DPNBLogisticClassifier(**{**base, **kw}).fit(X, y)


def _multiclass_text_like(n=4000, d=400, n_classes=4, seed=0):
    """Bag of words with K classes: features 10c .. 10c+9 favour class c."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    p = np.full((n, d), 0.02)
    for c in range(n_classes):
        p[y == c, 10 * c:10 * c + 10] += 0.15
    return sp.csr_array((rng.random((n, d)) < p).astype(float)), y


def test_one_class_refused_and_nan_refused():
    X, y = _text_like(n=100, d=30)
    with pytest.raises(ValueError, match="at least two labels"):
        DPNBLogisticClassifier(n_samples_public=100, classes=[1], epsilon=None).fit(X, np.ones(100))
    Xd = X.toarray()
    Xd[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DPNBLogisticClassifier(n_samples_public=100, epsilon=None).fit(Xd, y)


def test_multiclass_learns_with_the_binary_event():
    """K = 4 classes: one release of the K per-class sums (L2 sensitivity 1, as for
    two classes) and softmax DP-SGD clipped to 1: the event and the noise multipliers
    are the binary model's at the same budget and split, and the model learns."""
    X, y = _multiclass_text_like()
    Xt, yt = _multiclass_text_like(seed=1)
    labels = np.array(["a", "b", "c", "d"])
    kw = dict(epsilon=1.0, k=60, n_samples_public=4000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)   # the fixed seed
        clf = DPNBLogisticClassifier(classes=labels, random_state=0, **kw).fit(X, labels[y])
        binary = DPNBLogisticClassifier(classes=[0, 1], random_state=0,
                                        selection_share=0.5, **kw).fit(X, y % 2)
    assert clf.privacy_event_ == binary.privacy_event_
    assert clf.noise_multipliers_ == binary.noise_multipliers_
    assert clf.coef_.shape == (4, X.shape[1]) and clf.intercept_.shape == (4,)
    assert np.count_nonzero(clf.coef_.any(axis=0)) <= 60
    proba = clf.predict_proba(Xt)
    assert proba.shape == (Xt.shape[0], 4)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    pred = clf.predict(Xt)
    assert set(pred) <= set(labels)
    np.testing.assert_array_equal(pred, labels[np.argmax(proba, axis=1)])
    # chance is 0.25; a fixed seed, the margin is wide (about 0.9 observed)
    assert np.mean(pred == labels[yt]) > 0.6


def test_multiclass_rows_scaled_by_the_spread_of_the_release():
    """K = 4: feature j of the rows is scaled by the standard deviation over the
    classes of the centred noisy naive-Bayes log-probabilities (mean 1), computed
    here from the same noise draws; the informative features get the larger scales,
    and the fit starts from naive Bayes (theta = centred log-probabilities / scale)."""
    X, y = _multiclass_text_like(n=1500)
    clf = DPNBLogisticClassifier(epsilon=2.0, k=80, n_samples_public=1500,
                                 classes=[0, 1, 2, 3], n_epochs=1, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)   # the fixed seed
        clf.fit(X, y)
    rng = np.random.default_rng(3)
    U = _unit_rows(X).toarray()
    sums = np.vstack([U[y == c].sum(0) for c in range(4)])
    s = clf.noise_multipliers_[0]
    noisy = sums + rng.normal(0.0, s, sums.shape)
    top = np.sort(np.argsort(-noisy.sum(0))[:80])
    np.testing.assert_array_equal(clf.feature_indices_, top)
    pos = np.maximum(noisy[:, top], 0) + s
    log_prob = np.log(pos) - np.log(pos.sum(axis=1, keepdims=True))
    spread = (log_prob - log_prob.mean(axis=0)).std(axis=0)
    np.testing.assert_allclose(clf.log_count_ratios_, spread / spread.mean(), rtol=1e-12)
    informative = np.isin(top, np.arange(40))
    assert clf.log_count_ratios_[informative].mean() > \
        2 * clf.log_count_ratios_[~informative].mean()
    # before any step the model is naive Bayes: theta * scale = centred log-probs
    zero = DPNBLogisticClassifier(epsilon=2.0, k=80, n_samples_public=1500,
                                  classes=[0, 1, 2, 3], n_epochs=1e-6, learning_rate=1e-12,
                                  random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        zero.fit(X, y)
    np.testing.assert_allclose(zero.coef_[:, top], (log_prob - log_prob.mean(axis=0)),
                               rtol=1e-6, atol=1e-9)


def test_auto_defaults_depend_on_public_quantities_only():
    from dptoolkit.linear_model._glm._nb_logistic import _auto_defaults

    from types import SimpleNamespace as validated   # the fields of NBValidated used

    auto = validated(k="auto", f="auto")
    assert _auto_defaults(auto, 2) == {"f": 0.75}   # k: after the calibration
    assert _auto_defaults(auto, 20) == {"k": 50_000, "f": 0.5}
    assert _auto_defaults(auto, 100) == {"k": 2**20 // 100, "f": 0.5}
    assert _auto_defaults(validated(k=7, f=0.3), 20) == {}
    with pytest.raises(ValueError, match=r"\bk\b"):
        DPNBLogisticClassifier(k="many", epsilon=None).fit(*_text_like(n=50, d=10))
    with pytest.raises(ValueError, match="selection_share"):
        DPNBLogisticClassifier(selection_share="half", epsilon=None).fit(*_text_like(n=50, d=10))
    with pytest.raises(ValueError, match="learning_rate"):
        DPNBLogisticClassifier(learning_rate="fast", epsilon=None).fit(*_text_like(n=50, d=10))


def test_binary_vocabulary_and_step_from_the_noise():
    """Two classes: ``k="auto"`` is the largest k whose step noise
    ``rho = sqrt(k + 1) sigma_2 / (qN)`` is at most 1, within [5000, 50000], and
    ``learning_rate="auto"`` is ``4 / sqrt(1 + rho^2)``: functions of (sigma_2, q, N)
    only, so the same public quantities give the same values whatever the data."""
    from dptoolkit.linear_model._glm._nb_logistic import (
        _auto_learning_rate, _binary_vocabulary, _gradient_noise_ratio)

    assert _binary_vocabulary(0.0, 0.04, 100) == 50_000          # no noise: the maximum
    assert _binary_vocabulary(7.31, 0.04, 25_000) == 18_712  # floor((1000 / 7.31)^2) - 1
    assert _binary_vocabulary(7.31, 0.04, 5_000) == 5000          # the floor
    assert _binary_vocabulary(1.0, 0.04, 25_000) == 50_000        # the cap
    k = _binary_vocabulary(6.0, 0.04, 25_000)
    assert _gradient_noise_ratio(k, 6.0, 0.04, 25_000) <= 1.0 < \
        _gradient_noise_ratio(k + 1, 6.0, 0.04, 25_000)
    assert _auto_learning_rate(k, 2, 0.0, 0.04, 100) == 4.0
    rho = _gradient_noise_ratio(5000, 7.31, 0.04, 5_000)
    assert _auto_learning_rate(5000, 2, 7.31, 0.04, 5_000) == pytest.approx(
        4.0 / np.sqrt(1 + rho ** 2), rel=1e-15)
    assert _auto_learning_rate(5000, 20, 7.31, 0.04, 5_000) == 4.0   # K > 2: unchanged
    # in a fit: two data sets of the same public size get the same k and step
    fits = []
    for seed in (0, 1):
        X, y = _text_like(n=2000, d=30_000 if seed else 9000, seed=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            fits.append(DPNBLogisticClassifier(epsilon=1.0, n_samples_public=3000,
                                               classes=[0, 1], n_epochs=2,
                                               random_state=seed).fit(X, y))
    s2 = fits[0].noise_multipliers_[1]
    assert fits[0].noise_multipliers_ == fits[1].noise_multipliers_
    assert fits[1].feature_indices_.size == _binary_vocabulary(s2, 0.04, 3000) == 5000
    assert fits[0].feature_indices_.size == 5000    # n_features 9000 > 5000: not capped
    for clf in fits:
        assert clf.learning_rate_ == _auto_learning_rate(5000, 2, s2, 0.04, 3000)
    fixed = DPNBLogisticClassifier(epsilon=1.0, n_samples_public=2000, classes=[0, 1],
                                   n_epochs=1, learning_rate=0.5, k=7,
                                   random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        fixed.fit(*_text_like(n=2000, d=50))
    assert fixed.learning_rate_ == 0.5 and fixed.feature_indices_.size == 7


def test_binary_fit_starts_from_naive_bayes():
    """Two classes: before any step the model is multinomial naive Bayes with a
    uniform prior on the kept features (theta = (1, ..., 1, 0), coef_[S] = r), so its
    predictions are naive Bayes's; post-processing of the release."""
    X, y = _text_like(n=1500)
    Xt, _ = _text_like(n=500, seed=1)
    zero = DPNBLogisticClassifier(epsilon=2.0, k=80, n_samples_public=1500,
                                  classes=[0, 1], n_epochs=1e-6, learning_rate=1e-12,
                                  random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        zero.fit(X, y)
    top, r = zero.feature_indices_, zero.log_count_ratios_
    np.testing.assert_allclose(zero.coef_[0, top], r, rtol=1e-6, atol=1e-9)
    assert abs(zero.intercept_[0]) < 1e-9
    nb = (Xt[:, top] @ r > 0).astype(int)
    np.testing.assert_array_equal(zero.predict(Xt), nb)


def test_multiclass_declared_class_may_be_absent():
    X, y = _multiclass_text_like(n_classes=3)
    clf = DPNBLogisticClassifier(epsilon=1.0, k=40, n_samples_public=4000,
                                 classes=[0, 1, 2, 3]).fit(X, y)
    assert clf.classes_.tolist() == [0, 1, 2, 3] and clf.coef_.shape[0] == 4


def test_sklearn_api():
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X, y = _text_like(n=400, d=40)
    clf = DPNBLogisticClassifier(epsilon=2.0, k=10, n_samples_public=400,
                                 n_epochs=2, random_state=0)
    a = clone(clf).fit(X, y).coef_
    b = clone(clf).fit(X.toarray(), y).coef_
    np.testing.assert_array_equal(a, b)  # dense and sparse input agree
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = make_pipeline(FunctionTransformer(accept_sparse=True), clf).fit(X, y)
    assert pipe.predict(X).shape == (400,)


def test_non_private_fit():
    X, y = _text_like()
    Xt, yt = _text_like(seed=1)
    clf = DPNBLogisticClassifier(k=50, random_state=0, epsilon=None).fit(X, y)
    assert clf.privacy_event_ is None and clf.privacy_spent_ is None
    assert clf.noise_multipliers_ is None
    assert clf.score(Xt, yt) > 0.85
