"""DP-IGHT (Wang & Gu 2019), the private IGHT baseline of Khanna, Lu and Raff."""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dptoolkit.accounting import BudgetAccountant, RDPAccountant, calibrate_noise_multiplier
from dptoolkit.datasets import clip_rows, make_correlated_classification
from dptoolkit.exceptions import (BudgetExceededError, DataClippedWarning, PrivacyLeakWarning,
                                  ScreeningUnavailableError)
from dptoolkit.kernels import ight_fast, scd_fast
from dptoolkit.linear_model import DPIGHTClassifier


def _data(n=500, d=30, seed=0):
    X, y, w = make_correlated_classification(n, d, coef=(4.0, -3.0, 3.0, 2.0),
                                             random_state=seed)
    X, _ = clip_rows(X, 1.0, "l2")
    return X, y, w


def _hard_threshold(z, s):
    """H_s by a stable sort: the s largest |z_j|, ties to the lower index."""
    keep = np.argsort(-np.abs(z), kind="stable")[:s]
    out = np.zeros_like(z)
    out[keep] = z[keep]
    return out


def _reference_iht(X, y, s, eta, T, noise=None, n_public=None):
    """(Noisy) IGHT in plain numpy: theta <- H_s(theta - eta/N (X^T(p - y) + noise_t))."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    n, d = X.shape
    n_public = n if n_public is None else n_public
    theta = np.zeros(d)
    for t in range(T):
        p = 1.0 / (1.0 + np.exp(-(X @ theta)))
        g = X.T @ (p - y) + (0.0 if noise is None else noise[t])
        theta = _hard_threshold(theta - eta / n_public * g, s)
    return theta


def test_nonprivate_fit_is_plain_iht():
    """epsilon=None (the default): no noise, nothing charged, no warning even for
    rows above data_norm and N read from the data; the path of plain IGHT."""
    X, y, _ = _data()
    X = 3.0 * X                                       # rows of norm up to 3: not clipped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = DPIGHTClassifier(sparsity=4, max_iter=60, learning_rate=0.3, epsilon=None).fit(X, y)
    np.testing.assert_allclose(clf.coef_[0], _reference_iht(X, y, 4, 0.3, 60),
                               rtol=1e-9, atol=1e-12)
    assert clf.privacy_event_ is None and clf.privacy_spent_ is None
    assert clf.noise_multiplier_ is None and clf.screened_features_ is None
    assert np.count_nonzero(clf.coef_) <= 4
    # learning_rate="auto": 4 / max ||x_i||^2 of the data (the loss's 1/beta)
    auto = DPIGHTClassifier(sparsity=4, max_iter=60, epsilon=None).fit(X, y)
    assert auto.learning_rate_ == pytest.approx(4.0 / np.max(np.sum(X * X, axis=1)))
    np.testing.assert_allclose(auto.coef_[0],
                               _reference_iht(X, y, 4, auto.learning_rate_, 60),
                               rtol=1e-9, atol=1e-12)
    assert auto.score(X, y) > 0.8


def test_private_fit_reproduces_the_reference_with_its_noise():
    """The whole private fit against plain numpy fed the same normals: the kernel's
    sampler (dptoolkit.kernels.scd_fast.standard_normals on the same seed), d draws
    per step in coordinate order, scaled by sigma * Delta."""
    X, y, _ = _data(n=300, d=25)
    for neighbouring, factor in (("add_remove", 1.0), ("replace_one", 2.0)):
        clf = DPIGHTClassifier(sparsity=5, max_iter=40, epsilon=2.0, data_norm=0.8,
                               neighbouring=neighbouring, n_samples_public=350,
                               random_state=7)
        with pytest.warns(DataClippedWarning):       # rows up to norm 1 > 0.8
            clf.fit(X, y)
        assert clf.learning_rate_ == 4.0 / 0.8 ** 2
        Xc, _ = clip_rows(X, 0.8, "l2")
        bits = np.random.default_rng(7).bit_generator
        noise = scd_fast.standard_normals(40 * 25, bits).reshape(40, 25)
        std = clf.noise_multiplier_ * factor * 0.8
        ref = _reference_iht(Xc, y, 5, clf.learning_rate_, 40, noise * std, 350)
        np.testing.assert_allclose(clf.coef_[0], ref, rtol=1e-9, atol=1e-12)


def test_nonprivate_limit_matches_reference():
    """epsilon = 1e9: sigma = 1.8e-4, noise std ~7e-7 per step; same path as plain IGHT."""
    X, y, _ = _data()
    ref = _reference_iht(X, y, 4, 2.0, 60)
    clf = DPIGHTClassifier(sparsity=4, max_iter=60, learning_rate=2.0, epsilon=1e9,
                           delta=1e-5, n_samples_public=X.shape[0], random_state=0).fit(X, y)
    np.testing.assert_allclose(clf.coef_[0], ref, rtol=1e-4, atol=1e-6)
    assert np.count_nonzero(clf.coef_) <= 4


@pytest.mark.parametrize("kind", ["normal", "integers", "ties", "zeros"])
def test_kernel_hard_threshold_matches_a_stable_sort(kind):
    """H_s of the kernel (radix selection on the bits of |u|) keeps the same entries
    as a stable sort, ties to the lower index, for every s."""
    rng = np.random.default_rng(1)
    for d in (1, 2, 7, 64, 1000):
        u = {"normal": rng.normal(size=d), "integers": rng.integers(-3, 4, d) * 1.0,
             "ties": rng.choice([-2.5, 2.5, 1.0, -0.0, 1e-300], d),
             "zeros": np.zeros(d)}[kind]
        for s in sorted({1, 2, d // 3 + 1, d // 2 + 1, d}):
            if s <= d:
                np.testing.assert_array_equal(ight_fast.hard_threshold(u, s),
                                              _hard_threshold(u, s))


def test_kernel_matches_reference_and_reports_divergence():
    """The kernel alone on a random sparse problem (with and without noise), and its
    status when an iterate overflows."""
    rng = np.random.default_rng(2)
    X = sp.random(150, 40, density=0.15, random_state=3, format="csc")
    y = (rng.random(150) < 0.4).astype(float)
    args = (X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64), y)
    for std in (0.0, 0.5):
        theta = np.zeros(40)
        status, n_iter = ight_fast.ight(*args, theta, step=0.2, noise_std=std, sparsity=6,
                                        max_iter=25,
                                        bit_generator=np.random.default_rng(4).bit_generator)
        assert (status, n_iter) == (ight_fast.STATUS_OK, 25)
        noise = scd_fast.standard_normals(25 * 40, np.random.default_rng(4).bit_generator)
        ref = _reference_iht(X, y, 6, 0.2 * 150, 25, std * noise.reshape(25, 40))
        np.testing.assert_allclose(theta, ref, rtol=1e-10, atol=1e-13)
    theta = np.zeros(40)
    status, n_iter = ight_fast.ight(*args, theta, step=1e308, noise_std=0.0, sparsity=6,
                                    max_iter=25)
    assert status == ight_fast.STATUS_NONFINITE and n_iter < 25
    assert np.all(np.isfinite(theta))
    with pytest.raises(ValueError, match="sparsity"):
        ight_fast.ight(*args, np.zeros(40), step=0.1, noise_std=0.0, sparsity=41,
                       max_iter=1)
    with pytest.raises(ValueError, match="bit_generator"):
        ight_fast.ight(*args, np.zeros(40), step=0.1, noise_std=1.0, sparsity=4,
                       max_iter=1)


def test_divergence_is_an_error_naming_learning_rate():
    X, y, _ = _data(n=100, d=10)
    with pytest.raises(ValueError, match="learning_rate"):
        DPIGHTClassifier(sparsity=3, max_iter=50, learning_rate=1e308,
                         n_samples_public=1, epsilon=None).fit(X, y)


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
                           data_norm=C, neighbouring=neighbouring,
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
    """Private fits clip rows to the public bound (or refuse with clip_data=False);
    dense and every sparse format give the same coefficients (one CSC conversion)."""
    X, y, _ = _data(n=200, d=20)
    private = dict(epsilon=1.0, n_samples_public=200)
    with pytest.warns(DataClippedWarning):
        DPIGHTClassifier(sparsity=3, max_iter=5, random_state=0, **private).fit(3 * X, y)
    with pytest.raises(ValueError, match="clip_data"):
        DPIGHTClassifier(sparsity=3, max_iter=5, clip_data=False, **private).fit(3 * X, y)
    for kw in (private, {}):
        ref = DPIGHTClassifier(sparsity=3, max_iter=20, random_state=1, **kw).fit(X, y).coef_
        for fmt in ("csr", "csc", "coo"):
            got = DPIGHTClassifier(sparsity=3, max_iter=20, random_state=1, **kw).fit(
                sp.csr_array(X).asformat(fmt), y).coef_
            np.testing.assert_array_equal(got, ref)
    clf = DPIGHTClassifier(sparsity=3, max_iter=5, random_state=0, **private).fit(X, 2 * y - 1)
    assert set(clf.predict(X)) <= {-1.0, 1.0}
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


@pytest.mark.parametrize("params, exc, match", [
    (dict(sparsity=0), ValueError, "sparsity"),
    (dict(sparsity=21), ValueError, "sparsity"),
    (dict(sparsity=2.5), TypeError, "sparsity"),
    (dict(max_iter=0), ValueError, "max_iter"),
    (dict(learning_rate=0.0), ValueError, "learning_rate"),
    (dict(epsilon=-1.0), ValueError, "epsilon"),
    (dict(delta=0.0, epsilon=1.0), ValueError, "delta"),
    (dict(delta=1.0, epsilon=1.0), ValueError, "delta"),
    (dict(delta=None, epsilon=1.0), ValueError, "delta"),
    (dict(learning_rate="fast"), TypeError, "learning_rate"),
    (dict(k=100), ValueError, r"\bk\b"),
    (dict(data_norm=0.0), ValueError, "data_norm"),
    (dict(neighbouring="bounded"), ValueError, "neighbouring"),
    (dict(clip_data=1), TypeError, "clip_data"),
    (dict(n_samples_public=0), ValueError, "n_samples_public"),
    (dict(n_samples_public=10.5), TypeError, "n_samples_public"),
])
def test_bad_parameters(params, exc, match):
    X, y, _ = _data(n=60, d=20)
    with pytest.raises(exc, match=match):
        DPIGHTClassifier(**{"epsilon": None, **params}).fit(X, y)


def test_public_dataset_size():
    """The step uses the public N; a private fit reading it from the data warns
    under add/remove (not under replace-one, and never without epsilon)."""
    X, y, _ = _data(n=100, d=10)
    private = dict(sparsity=2, max_iter=3, epsilon=1.0, classes=[0, 1], random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="n_samples_public"):
        DPIGHTClassifier(**private).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        a = DPIGHTClassifier(neighbouring="replace_one", **private).fit(X, y)
        b = DPIGHTClassifier(n_samples_public=100, neighbouring="replace_one",
                             **private).fit(X, y)
        DPIGHTClassifier(sparsity=2, max_iter=3, epsilon=None).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    # one step from 0: theta_1 = H_s(-(eta / N) (grad + b)), so N = 200 halves it
    one = [DPIGHTClassifier(sparsity=10, max_iter=1, n_samples_public=m, epsilon=1.0,
                            random_state=0).fit(X, y).coef_ for m in (100, 200)]
    np.testing.assert_allclose(one[1], one[0] / 2.0)


def test_bad_data():
    X, y, _ = _data(n=60, d=20)
    # three classes are one-vs-rest (tests/test_glm_multiclass.py)
    assert DPIGHTClassifier(sparsity=2, epsilon=None).fit(X, np.arange(60) % 3).coef_.shape == (3,
                                                                                                20)
    with pytest.raises(ValueError, match="1 class"):
        DPIGHTClassifier(sparsity=2, epsilon=None).fit(X, np.zeros(60))
    Xn = X.copy()
    Xn[1, 1] = np.inf
    with pytest.raises(ValueError):
        DPIGHTClassifier(sparsity=2, epsilon=None).fit(Xn, y)


# -------------------------------------------------------------- scikit-learn API
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402


@parametrize_with_checks([DPIGHTClassifier(sparsity=1, max_iter=100, random_state=0, epsilon=None),
                          DPIGHTClassifier(sparsity=1, max_iter=100, epsilon=1.0,
                                           random_state=0)])
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
    eps = epsilon_of_event(clf.privacy_event_, 1e-5, composition="rdp")
    assert eps == pytest.approx(clf.privacy_spent_[0], rel=1e-9)
    assert clf.privacy_spent_[0] <= 1.0
    with pytest.raises(ScreeningUnavailableError,
                       match=r"int k \(the private candidate screening\) needs a private fit"):
        DPIGHTClassifier(k=5, sparsity=20, n_samples_public=300, epsilon=None).fit(X, y)
    off = DPIGHTClassifier(epsilon=1.0, n_samples_public=300, max_iter=10, sparsity=20,
                           k=None, random_state=0).fit(X, y)
    assert off.screened_features_ is None


# ------------------------------------------------------------------ side channels
def test_declared_classes():
    """classes given: used as is (no label warning), a declared class may be absent
    from y, a label outside it is an error naming classes; classes=None warns in a
    private fit only."""
    from dptoolkit._private import DATA_DEPENDENT_NOTE

    X, y, _ = _data(n=100, d=10)
    labels = np.where(y == 1, "pos", "neg")
    private = dict(sparsity=3, max_iter=5, epsilon=1.0, n_samples_public=100,
                   random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf = DPIGHTClassifier(classes=["pos", "neg"], **private).fit(X, labels)
        only_neg = DPIGHTClassifier(classes=["neg", "pos"], **private).fit(
            X, np.full(100, "neg"))
        # non-private: no warning
        DPIGHTClassifier(sparsity=3, max_iter=5, epsilon=None).fit(X, labels)
    np.testing.assert_array_equal(clf.classes_, ["neg", "pos"])
    assert set(clf.predict(X)) <= {"neg", "pos"}
    np.testing.assert_array_equal(only_neg.classes_, ["neg", "pos"])
    # same data, declared or read: the same fit
    read = DPIGHTClassifier(**private)
    with pytest.warns(PrivacyLeakWarning, match="label set was read from the data"):
        read.fit(X, labels)
    np.testing.assert_array_equal(read.coef_, clf.coef_)
    other = labels.copy()
    other[0] = "third"
    with pytest.raises(ValueError, match="classes") as err:
        DPIGHTClassifier(classes=["neg", "pos"], **private).fit(X, other)
    assert DATA_DEPENDENT_NOTE in str(err.value)
    # a declared class absent from y still gets its (one-vs-rest) row
    assert DPIGHTClassifier(classes=[0, 1, 2], **private).fit(X, y).coef_.shape[0] == 3
    with pytest.raises(ValueError, match="classes"):
        DPIGHTClassifier(classes=[0, 0], **private).fit(X, y)


def test_data_dependent_messages_carry_no_count():
    """Rows above the public bound: one text for one row or many (no count), which
    says it depends on the data; clip_data=False refuses alike; a private fit's
    divergence does not say at which iteration."""
    from dptoolkit._private import DATA_DEPENDENT_NOTE

    X, y, _ = _data(n=100, d=10)
    private = dict(sparsity=3, max_iter=5, epsilon=1.0, n_samples_public=100,
                   classes=[0, 1], random_state=0)
    texts, errors = [], []
    for n_out in (1, 7):
        Xo = X.copy()
        Xo[:n_out] *= 5.0
        with pytest.warns(DataClippedWarning) as rec:
            DPIGHTClassifier(**private).fit(Xo, y)
        texts.append(" ".join(str(w.message) for w in rec))
        with pytest.raises(ValueError, match="clip_data") as err:
            DPIGHTClassifier(clip_data=False, **private).fit(Xo, y)
        errors.append(str(err.value))
    assert texts[0] == texts[1] and errors[0] == errors[1]
    assert DATA_DEPENDENT_NOTE in texts[0] and DATA_DEPENDENT_NOTE in errors[0]
    assert "7" not in texts[1] and "7" not in errors[1]
    with pytest.raises(ValueError, match="learning_rate") as err:
        DPIGHTClassifier(**{**private, "learning_rate": 1e308, "n_samples_public": 1,
                            "max_iter": 50, "epsilon": 1e6}).fit(X, y)
    assert DATA_DEPENDENT_NOTE in str(err.value) and " of 50" not in str(err.value)
