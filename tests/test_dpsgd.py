"""Tests of the DP-SGD baseline (Abadi et al. 2016) used in Damaskinos et al.'s experiments.

The kernel is compared with a pure-Python reference consuming the same uniforms
(the Poisson sampler and Gaussian sampler of tests/test_scd.py); full-batch
non-private gradient descent is compared with scikit-learn's solvers; the
sensitivity of one step is measured on neighbouring datasets; the noise
calibration is checked against the accountant.
"""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression, Ridge

from dptoolkit.linear_model._glm import _sgd_fast
from dptoolkit.exceptions import PrivacyLeakWarning
from dptoolkit.linear_model import DPSGDClassifier, DPSGDRegressor
from dptoolkit.linear_model._glm import _scd
from dptoolkit.linear_model._glm._base import _transform_rows, primal_objective
from dptoolkit.accounting.events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent

from test_scd import RefChunks, RefRNG, _dloss, _dense_unit_rows, _problem

LOSS = _sgd_fast.LOSS_CODES


def _ref_step_gradient(X, y, theta, batch, loss, clip, norms):
    """Summed clipped gradients of the lot (margins at ``theta``), dense."""
    margins = [float(np.dot(X.data[X.indptr[i]:X.indptr[i + 1]],
                            theta[X.indices[X.indptr[i]:X.indptr[i + 1]]])) for i in batch]
    grad = np.zeros(X.shape[1])
    for i, m in zip(batch, margins):
        s = _dloss(loss, m, y[i])
        gn = abs(s) * norms[i]
        if gn > clip:
            s = s * (clip / gn)
        lo, hi = X.indptr[i], X.indptr[i + 1]
        grad[X.indices[lo:hi]] += s * X.data[lo:hi]
    return grad


def ref_dpsgd(X, y, theta, *, loss, lam, learning_rate, clip, sampling_rate, batch_size,
              denominator, n_steps, noise_std, seed):
    """Mirror of _sgd_fast.dpsgd (lazy: each coordinate gets its pending noise as one
    normal when a lot reads it, and at the end)."""
    X = sp.csr_array(X)
    N, M = X.shape
    rng = RefRNG(seed)
    chunks = RefChunks(N)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    decay = 1.0 - learning_rate * lam
    c = learning_rate * noise_std / denominator if noise_std > 0 else 0.0
    start, pending = [0] * M, [0] * M

    def catch_up(m, t):
        if start[m] != t:
            theta[m] *= decay ** (t - start[m])
            start[m] = t
        if pending[m] != t:
            if c > 0:
                k = t - pending[m]
                var = sum(decay ** (2 * j) for j in range(k))
                theta[m] += c * math.sqrt(var) * rng.normal()
            pending[m] = t

    for t in range(n_steps):
        batch = (rng.poisson_batch(N, sampling_rate) if sampling_rate > 0
                 else chunks.next(rng, batch_size))
        touched = []
        for i in batch:
            for j in X.indices[X.indptr[i]:X.indptr[i + 1]]:
                if j not in touched:
                    touched.append(j)
                    catch_up(j, t)
        grad = _ref_step_gradient(X, y, theta, batch, loss, clip, norms)
        den = denominator if denominator > 0 else (len(batch) if batch else 1.0)
        for j in touched:
            theta[j] = decay * theta[j] - learning_rate * grad[j] / den
            start[j] = t + 1
    for m in range(M):
        catch_up(m, n_steps)
    return theta


def dense_dpsgd(X, y, theta, *, loss, lam, learning_rate, clip, sampling_rate,
                denominator, n_steps, noise_std, rng):
    """Abadi et al.'s Algorithm 1 as printed: dense noise on every coordinate at every
    step (numpy's Generator), Poisson lots."""
    X = sp.csr_array(X)
    N, M = X.shape
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    for _ in range(n_steps):
        batch = np.flatnonzero(rng.random(N) < sampling_rate)
        grad = _ref_step_gradient(X, y, theta, batch, loss, clip, norms)
        grad += noise_std * rng.standard_normal(M)
        theta = (1.0 - learning_rate * lam) * theta - learning_rate * grad / denominator
    return theta


@pytest.mark.parametrize("loss", ["squared", "logistic", "hinge"])
@pytest.mark.parametrize("private", [False, True])
def test_dpsgd_kernel_matches_reference(loss, private):
    X, sq, y = _problem(n=30, m=8, seed=21, loss=loss)
    N, M = X.shape
    kw = dict(lam=0.01, learning_rate=0.7, clip=0.4, sampling_rate=0.2 if private else 0.0,
              batch_size=4, denominator=6.0 if private else 0.0, n_steps=30,
              noise_std=0.3 if private else 0.0)
    th_ref = ref_dpsgd(X, y, np.zeros(M), loss=loss, seed=3, **kw)
    th = np.zeros(M)
    status, done = _sgd_fast.dpsgd(X.data, X.indices, X.indptr, y, np.sqrt(sq), th,
                                   loss=LOSS[loss], bit_generator=np.random.PCG64(3),
                                   record_steps=np.array([29], np.int64),
                                   trace=np.zeros((1, M)), **kw)
    assert status == 0 and done == 30
    np.testing.assert_allclose(th, th_ref, rtol=1e-10, atol=1e-12)
    assert np.any(th != 0)


def test_lazy_noise_of_unread_coordinates_is_the_dense_law():
    """A coordinate no lot reads ends as sum_t d^(T-1-t) (-eta z_t / L): N(0, c^2 S_T)
    with c = eta sigma C / L, S_T = sum_{j<T} d^(2j).  KS test over 20,000 such
    coordinates of one run (fixed seed); false-failure rate 1e-6."""
    from scipy import stats

    M, T, lam, lr, noise, L = 20_000, 40, 0.05, 0.9, 0.7, 5.0
    X = sp.csr_array(np.zeros((20, M)))
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    th = np.zeros(M)
    _sgd_fast.dpsgd(X.data, X.indices, X.indptr, np.ones(20), np.zeros(20), th,
                    loss=LOSS["logistic"], lam=lam, learning_rate=lr, clip=1.0,
                    sampling_rate=0.25, batch_size=5, denominator=L, n_steps=T,
                    noise_std=noise, bit_generator=np.random.PCG64(5),
                    record_steps=np.zeros(0, np.int64), trace=np.zeros((0, M)))
    d = 1.0 - lr * lam
    sd = lr * noise / L * math.sqrt(sum(d ** (2 * j) for j in range(T)))
    assert stats.kstest(th / sd, "norm").pvalue > 1e-6


def test_lazy_kernel_has_the_law_of_dense_dpsgd():
    """The lazy kernel and dense DP-SGD (noise on every coordinate at every step) give
    the same law of the final weights: two-sample KS test per coordinate over 1,500
    runs each (fixed seeds), level 1e-5 each, 8 coordinates: false-failure rate
    below 1e-4."""
    from scipy import stats

    X, sq, y = _problem(n=30, m=8, seed=21, loss="logistic")
    kw = dict(lam=0.05, learning_rate=0.7, clip=0.4, sampling_rate=0.2, denominator=6.0,
              n_steps=12, noise_std=0.3)
    R = 1500
    lazy = np.empty((R, 8))
    for r in range(R):
        th = np.zeros(8)
        _sgd_fast.dpsgd(X.data, X.indices, X.indptr, y, np.sqrt(sq), th,
                        loss=LOSS["logistic"], batch_size=6,
                        bit_generator=np.random.PCG64([7, r]),
                        record_steps=np.zeros(0, np.int64), trace=np.zeros((0, 8)), **kw)
        lazy[r] = th
    rng = np.random.default_rng(8)
    dense = np.array([dense_dpsgd(X, y, np.zeros(8), loss="logistic", rng=rng, **kw)
                      for _ in range(R)])
    for m in range(8):
        assert stats.ks_2samp(lazy[:, m], dense[:, m]).pvalue > 1e-5


def test_noise_needs_a_constant_denominator():
    X, sq, y = _problem(n=10, m=3, seed=1, loss="logistic")
    with pytest.raises(ValueError, match="denominator"):
        _sgd_fast.dpsgd(X.data, X.indices, X.indptr, y, np.sqrt(sq), np.zeros(3),
                        loss=LOSS["logistic"], lam=0.0, learning_rate=1.0, clip=1.0,
                        sampling_rate=0.0, batch_size=2, denominator=0.0, n_steps=2,
                        noise_std=1.0, bit_generator=np.random.PCG64(0),
                        record_steps=np.zeros(0, np.int64), trace=np.zeros((0, 3)))


def test_full_batch_gd_matches_sklearn_ridge():
    X = _dense_unit_rows(300, 10, 0)
    rng = np.random.default_rng(0)
    y = X @ rng.normal(size=10) + 0.1 * rng.normal(size=300)
    lam = 1e-3
    reg = DPSGDRegressor(alpha=lam, learning_rate=1.0, batch_size=300, clip=None,
                         n_epochs=3000, epsilon=None).fit(X, y)
    sk = Ridge(alpha=lam * 300, fit_intercept=False, tol=1e-14).fit(X, y)
    f = primal_objective(X, y, reg.coef_, loss="squared", alpha=lam)
    f_sk = primal_objective(X, y, sk.coef_, loss="squared", alpha=lam)
    assert abs(f - f_sk) <= 1e-6 * f_sk


def test_full_batch_gd_matches_sklearn_logistic():
    X = _dense_unit_rows(300, 10, 1)
    rng = np.random.default_rng(1)
    y = (X @ rng.normal(size=10) + 0.3 * rng.normal(size=300) > 0).astype(int)
    lam = 1e-2
    clf = DPSGDClassifier(alpha=lam, learning_rate=3.0, batch_size=300, clip=None,
                          n_epochs=4000, epsilon=None).fit(X, y)
    sk = LogisticRegression(C=1.0 / (lam * 300), fit_intercept=False, tol=1e-12,
                            max_iter=10000).fit(X, y)
    t = np.where(y == 1, 1.0, -1.0)
    f = primal_objective(X, t, clf.coef_.ravel(), loss="logistic", alpha=lam)
    f_sk = primal_objective(X, t, sk.coef_.ravel(), loss="logistic", alpha=lam)
    assert abs(f - f_sk) <= 1e-6 * f_sk


@pytest.mark.parametrize("loss", ["squared", "logistic", "hinge"])
def test_step_sensitivity_is_C(loss):
    """Adding one example changes the summed clipped gradient of a step by at most C
    (attained when that example's gradient is clipped)."""
    rng = np.random.default_rng(22)
    C, n, m = 0.2, 10, 6
    worst = 0.0
    for _ in range(100):
        X = _dense_unit_rows(n + 1, m, int(rng.integers(1 << 30)))
        X, sq = _transform_rows(X, "l2", False, 1.0)
        y = rng.normal(size=n + 1) * 3 if loss == "squared" else rng.choice([-1.0, 1.0], n + 1)
        theta0 = rng.normal(size=m) * 2
        grads = []
        for rows in (n + 1, n):
            Xr = sp.csr_array(X[:rows])
            Xr.indices = Xr.indices.astype(np.int64)
            Xr.indptr = Xr.indptr.astype(np.int64)
            th = theta0.copy()
            _sgd_fast.dpsgd(Xr.data, Xr.indices, Xr.indptr, y[:rows], np.sqrt(sq[:rows]), th,
                            loss=LOSS[loss], lam=0.0, learning_rate=1.0, clip=C,
                            sampling_rate=1.0, batch_size=rows, denominator=1.0, n_steps=1,
                            noise_std=0.0, bit_generator=np.random.PCG64(0),
                            record_steps=np.zeros(0, np.int64), trace=np.zeros((0, m)))
            grads.append(theta0 - th)
        d = np.linalg.norm(grads[0] - grads[1])
        assert d <= C * (1 + 1e-12)
        worst = max(worst, d)
    assert worst > 0.99 * C


def test_sigma_equals_calibration(monkeypatch):
    import dptoolkit.accounting as acc

    calls = []
    real, search = acc.calibrate_noise_multiplier, acc.calibrate_parameter
    # the one calibration routine, on the event of the steps
    monkeypatch.setattr(acc, "calibrate_parameter",
                        lambda make_event, **kw: calls.append(make_event(1.0))
                        or search(make_event, **kw))
    _scd._calibrate.cache_clear()
    X = _dense_unit_rows(250, 5, 23)
    y = (X[:, 0] > 0).astype(int)
    L, C, eps, delta, epochs = 25, 0.5, 0.5, 1e-3, 4
    n_pub = 300  # public N, deliberately not the 250 rows: q and T come from it
    clf = DPSGDClassifier("hinge", epsilon=eps, delta=delta, n_samples_public=n_pub,
                          batch_size=L, clip=C, n_epochs=epochs, learning_rate=0.5,
                          random_state=1).fit(X, y)
    q, T = L / n_pub, math.ceil(epochs * n_pub / L)
    assert calls == [SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(1.0)), T)]
    # the same noise as the RDP accountant's own calibration
    sigma = real(target_epsilon=eps, delta=delta, sampling_rate=q, steps=T)
    assert clf.noise_multiplier_ == sigma and clf.n_steps_ == T and clf.sampling_rate_ == q
    assert clf.n_samples_used_ == n_pub
    assert clf.noise_std_ == pytest.approx(sigma * C, rel=1e-15)
    assert clf.privacy_spent_[0] <= eps


def test_private_sgd_learns():
    rng = np.random.default_rng(24)
    X = rng.normal(size=(4000, 5))
    y = (X @ np.array([2.0, -1.0, 0.5, 0.0, 0.0]) > 0).astype(int)
    clf = DPSGDClassifier(epsilon=1.0, delta=1e-5, n_samples_public=4000, learning_rate=1.0,
                          batch_size=100, clip=1.0, n_epochs=5, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.9  # seeded


def test_neighbour_with_one_more_row_same_public_parameters(monkeypatch):
    """Add/remove-one at the estimator level: fits on D (n rows) and D + one row with
    the same ``n_samples_public`` give the kernel the same sampling rate, number of
    steps, divisor and noise (so the step is the subsampled Gaussian mechanism of
    sensitivity C for both, cf. test_step_sensitivity_is_C); with N read from the
    data (PrivacyLeakWarning) the sampling rate differs between them."""
    calls = []
    real = _sgd_fast.dpsgd

    def spy(*args, **kw):
        calls.append(dict(kw, n_rows=args[3].shape[0]))
        return real(*args, **kw)

    monkeypatch.setattr(_sgd_fast, "dpsgd", spy)
    X = _dense_unit_rows(61, 4, 43)
    y = (X[:, 0] > 0).astype(int)
    kw = dict(epsilon=1.0, n_samples_public=80, batch_size=8, n_epochs=1, classes=[0, 1],
              random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        for rows in (60, 61):
            DPSGDClassifier(**kw).fit(X[:rows], y[:rows])
    assert [c["n_rows"] for c in calls] == [60, 61]
    for key in ("loss", "lam", "learning_rate", "clip", "sampling_rate", "batch_size",
                "denominator", "n_steps", "noise_std"):
        assert calls[0][key] == calls[1][key], key
    assert calls[0]["sampling_rate"] == 8 / 80 and calls[0]["n_steps"] == 10
    assert calls[0]["denominator"] == 8.0
    calls.clear()
    for rows in (60, 61):
        with pytest.warns(PrivacyLeakWarning, match=r"n_samples_public.*same size"):
            DPSGDClassifier(**dict(kw, n_samples_public=None)).fit(X[:rows], y[:rows])
    assert calls[0]["sampling_rate"] != calls[1]["sampling_rate"]


def test_n_samples_public_warning_only_for_private_fits():
    X = _dense_unit_rows(40, 3, 44)
    y = (X[:, 0] > 0).astype(int)
    with pytest.warns(PrivacyLeakWarning, match=r"X.shape\[0\] was taken"):
        clf = DPSGDRegressor(epsilon=1.0, batch_size=4, n_epochs=1,
                             random_state=0).fit(X, X[:, 1])
    assert clf.n_samples_used_ == 40 and clf.sampling_rate_ == 4 / 40
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        plain = DPSGDClassifier(n_samples_public=70, batch_size=4, n_epochs=1,
                                random_state=0, epsilon=None).fit(X, y)
        assert plain.n_samples_used_ == 40 and plain.sampling_rate_ is None


def test_coef_path_and_intercept():
    X = _dense_unit_rows(100, 3, 25)
    y = X @ np.array([1.0, -1.0, 0.5]) + 2.0
    reg = DPSGDRegressor(learning_rate=0.5, batch_size=10, n_epochs=3, fit_intercept=True,
                         random_state=0, epsilon=None)
    reg.keep_coef_path = True   # a diagnostic attribute, not a parameter
    reg.fit(X, y)
    assert reg.coef_path_.shape == (4, 3)
    np.testing.assert_allclose(reg.coef_path_[-1], reg.coef_)
    Xt, _ = _transform_rows(X, "l2", True, 1.0)
    np.testing.assert_allclose(reg.predict(X), Xt @ np.append(reg.coef_, reg.intercept_))


@pytest.mark.parametrize("params,exc,match", [
    (dict(epsilon=0.0), ValueError, "epsilon"),
    (dict(epsilon=-0.1), ValueError, "epsilon"),
    (dict(epsilon=1.0, delta=1.5), ValueError, "delta"),
    (dict(batch_size=0), ValueError, "batch_size"),
    (dict(batch_size=41), ValueError, "batch_size"),
    (dict(clip=0.0), ValueError, "clip"),
    (dict(clip=None, epsilon=1.0), ValueError, "clip"),
    (dict(alpha=0.0), ValueError, "alpha"),
    (dict(learning_rate=0.0), ValueError, "learning_rate"),
    (dict(learning_rate=np.inf), ValueError, "learning_rate"),
    (dict(loss="squared"), ValueError, "loss"),
    (dict(n_epochs=-1), ValueError, "n_epochs"),
    (dict(n_samples_public=0), ValueError, "n_samples_public"),
    (dict(n_samples_public=40.0), TypeError, "n_samples_public"),
    (dict(n_samples_public=20, batch_size=25, epsilon=1.0), ValueError,
     r"batch_size.*n_samples_public"),
])
def test_bad_hyperparameters(params, exc, match):
    X = _dense_unit_rows(40, 3, 26)
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(exc, match=match):
        DPSGDClassifier(**params).fit(X, y)


def test_bad_data_and_divergence():
    X = _dense_unit_rows(40, 3, 27)
    y = (X[:, 0] > 0).astype(int)
    # three classes are the multinomial model; the hinge loss has no such form
    with pytest.raises(ValueError, match="loss='hinge' is binary only"):
        DPSGDClassifier("hinge", epsilon=None).fit(X, np.arange(40) % 3)
    with pytest.raises(ValueError, match="at least two classes"):
        DPSGDClassifier(epsilon=None).fit(X, np.zeros(40))
    Xb = X.copy()
    Xb[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DPSGDClassifier(epsilon=None).fit(Xb, y)
    yb = X[:, 0].copy()
    yb[1] = np.inf
    with pytest.raises(ValueError, match="NaN|inf"):
        DPSGDRegressor(epsilon=None).fit(X, yb)
    with pytest.raises(ValueError, match="diverged"):
        DPSGDRegressor(learning_rate=1e3, alpha=1.0, clip=None, n_epochs=300,
                       epsilon=None).fit(X, X[:, 0] * 1e3)
