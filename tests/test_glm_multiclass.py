"""More than two classes for DP-SGD, DP-SCD and DP-IGHT.

* DP-SGD fits one multinomial (softmax) model: the per-example gradient
  x (p - e_y)^T, clipped to Frobenius norm C, gives the lot's sum sensitivity C
  whatever K, so the event is the binary one (same q, T, sigma).
* DP-IGHT fits one multinomial model with group hard thresholding: the summed
  gradient X^T (P - E_y) has sensitivity sqrt(2) C, the event is the binary one.
* DP-SCD with multi_class="ovr" fits K one-vs-rest models whose K T steps are
  ONE event, calibrated once for K T steps (its multinomial model is checked in
  tests/test_scd_multinomial.py).

Checked here: shapes and outputs (scikit-learn's conventions), that the event of
a K-class fit is the one the accountant calibrates (and is charged once), that
the one-vs-rest rows are the binary fits (non-private, same stream), that the
multinomial IGHT kernel and a private fit reproduce a numpy reference fed the same
normals, the noise scale and the one-step neighbour bound of that kernel, that the
non-private softmax fit reaches the multinomial optimum, the gradient bounds the
analysis uses (the softmax sqrt(2) ||x||, tight), and that private K-class fits learn on a small synthetic problem.  The
kernel-level neighbour test of the softmax step (sensitivity exactly C when the
row is clipped) and the kernel against its pure-Python reference are in
tests/test_multiclass.py.  Every random input has a fixed seed; the utility
checks are deterministic (seeded noise) with margins far from the thresholds.
"""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

from dptoolkit.accounting import BudgetAccountant, calibrate_noise_multiplier, epsilon_of_event
from dptoolkit.accounting.events import (GaussianEvent, PoissonSampledEvent,
                                         SelfComposedEvent)
from dptoolkit.linear_model import DPIGHTClassifier, DPSCDClassifier, DPSGDClassifier
from dptoolkit.linear_model._glm._base import softmax_objective, transform_rows

K = 4
N, D = 1200, 12


def _problem(n=N, d=D, k=K, seed=0):
    """Class = argmax of the first k features plus a little noise (separable-ish)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.argmax(X[:, :k] + 0.1 * rng.normal(size=(n, k)), axis=1)
    return X, y


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # seeded noise, non-private fits
        return fn(*args, **kw)


MAKERS = {
    "DPSGD": lambda **kw: DPSGDClassifier(**{"n_epochs": 5, **kw}),
    "DPSCD": lambda **kw: DPSCDClassifier(**{"n_epochs": 3, **kw}),
    "DPSCD-hinge": lambda **kw: DPSCDClassifier("hinge", **{"n_epochs": 3, **kw}),
    "DPIGHT": lambda **kw: DPIGHTClassifier(**{"sparsity": 6, "max_iter": 30, **kw}),
}


# ----------------------------------------------------------------------- shapes
@pytest.mark.parametrize("name", sorted(MAKERS))
@pytest.mark.parametrize("epsilon", [None, 4.0])
def test_shapes_and_outputs(name, epsilon):
    X, y = _problem()
    labels = np.array(["a", "b", "c", "d"])[y]
    est = _quiet(MAKERS[name](epsilon=epsilon, n_samples_public=N, classes=list("dcba"),
                              random_state=0).fit, X, labels)
    np.testing.assert_array_equal(est.classes_, list("abcd"))
    assert est.coef_.shape == (K, D) and est.intercept_.shape == (K,)
    dec = est.decision_function(X[:7])
    assert dec.shape == (7, K) and np.all(np.isfinite(dec))
    pred = est.predict(X[:7])
    np.testing.assert_array_equal(pred, est.classes_[np.argmax(dec, axis=1)])
    if name != "DPSCD-hinge":
        proba = est.predict_proba(X[:7])
        assert proba.shape == (7, K)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
        np.testing.assert_array_equal(np.argmax(proba, axis=1), np.argmax(dec, axis=1))
    else:
        assert not hasattr(est, "predict_proba")
    # sparse input: the same margins
    np.testing.assert_allclose(est.decision_function(sp.csr_array(X[:7])), dec,
                               rtol=1e-12, atol=1e-12)
    assert est.__sklearn_tags__().classifier_tags.multi_class


@pytest.mark.parametrize("name", ["DPSGD", "DPSCD", "DPIGHT"])
def test_declared_class_absent_from_y_gets_its_row(name):
    X, y = _problem()
    est = _quiet(MAKERS[name](epsilon=4.0, n_samples_public=N, classes=[0, 1, 2, 3, 4],
                              random_state=0).fit, X, y)
    assert est.coef_.shape == (5, D)
    assert set(np.unique(est.predict(X))) <= {0, 1, 2, 3, 4}


def test_coef_path_shapes():
    X, y = _problem()
    for make in (MAKERS["DPSGD"], MAKERS["DPSCD"]):
        est = make(epsilon=2.0, n_samples_public=N, classes=[0, 1, 2, 3],
                   fit_intercept=True, random_state=0)
        est.keep_coef_path = True   # a diagnostic attribute, not a parameter
        est = _quiet(est.fit, X, y)
        n_rec = est.epoch_path_.shape[0]
        assert est.coef_path_.shape == (n_rec, K, D)
        assert est.intercept_path_.shape == (n_rec, K)
        np.testing.assert_array_equal(est.coef_path_[-1], est.coef_)
        np.testing.assert_array_equal(est.intercept_path_[-1], est.intercept_)
        objs = est._path_objectives(X, y)
        assert objs.shape == (n_rec,) and objs[-1] == pytest.approx(est.objective(X, y))
        assert objs[-1] < objs[0]      # from W = 0: the fit descends


# -------------------------------------------------------------- privacy events
def test_dpsgd_multiclass_event_is_the_binary_event():
    """Sensitivity C whatever K: the K-class event is the binary one, sigma from the
    accountant at (q, T), privacy_spent_ its epsilon."""
    X, y = _problem()
    kw = dict(epsilon=1.0, delta=1e-5, n_samples_public=N, batch_size=60, n_epochs=3,
              random_state=0)
    multi = _quiet(DPSGDClassifier(classes=[0, 1, 2, 3], **kw).fit, X, y)
    binary = _quiet(DPSGDClassifier(classes=[0, 1], **kw).fit, X, (y == 1).astype(int))
    q, T = 60 / N, math.ceil(3 / (60 / N))
    sigma = calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5, sampling_rate=q,
                                       steps=T, accountant="rdp", sampling="poisson")
    expected = SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(sigma)), T)
    assert multi.privacy_event_ == binary.privacy_event_ == expected
    assert multi.noise_std_ == pytest.approx(sigma * 1.0)       # sigma * clip
    assert multi.sensitivity_ == 1.0
    eps = epsilon_of_event(multi.privacy_event_, 1e-5)
    assert multi.privacy_spent_[0] == pytest.approx(eps, rel=1e-9)
    assert 0.99 < eps <= 1.0 + 1e-9


@pytest.mark.parametrize("variant", ["dual", "primal"])
def test_dpscd_one_vs_rest_is_one_event_of_k_t_steps(variant):
    X, y = _problem()
    kw = dict(epsilon=1.0, delta=1e-5, n_samples_public=N, n_epochs=2,
              batch_size=40 if variant == "dual" else 4, variant=variant, random_state=0)
    multi = _quiet(DPSCDClassifier(classes=[0, 1, 2, 3], multi_class="ovr", **kw).fit, X, y)
    binary = _quiet(DPSCDClassifier(classes=[0, 1], **kw).fit, X, (y == 1).astype(int))
    T = binary.n_steps_
    assert multi.n_steps_ == K * T
    q = binary.sampling_rate_
    sigma = calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5, sampling_rate=q,
                                       steps=K * T, accountant="rdp", sampling="poisson")
    assert multi.privacy_event_ == SelfComposedEvent(
        PoissonSampledEvent(q, GaussianEvent(sigma)), K * T)
    # the same per-step sensitivity as a binary fit, more noise for K T steps
    assert multi.sensitivity_ == binary.sensitivity_
    assert multi.noise_multiplier_ > binary.noise_multiplier_
    eps = epsilon_of_event(multi.privacy_event_, 1e-5)
    assert multi.privacy_spent_[0] == pytest.approx(eps, rel=1e-9)
    assert 0.99 < eps <= 1.0 + 1e-9


@pytest.mark.parametrize("screening", [None, 8])
def test_dpight_multinomial_event_is_the_binary_event(screening):
    """Sensitivity sqrt(2) C whatever K: the same Gaussian steps as a binary fit,
    the noise standard deviation sqrt(2) times the binary one."""
    X, y = _problem(d=40)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    kw = dict(epsilon=1.0, delta=1e-5, n_samples_public=N, sparsity=4, max_iter=25,
              k=screening, random_state=0)
    multi = _quiet(DPIGHTClassifier(classes=[0, 1, 2, 3], **kw).fit, X, y)
    binary = _quiet(DPIGHTClassifier(classes=[0, 1], **kw).fit, X, (y == 1).astype(int))
    assert multi.privacy_event_ == binary.privacy_event_
    assert multi.privacy_spent_ == binary.privacy_spent_
    if screening is None:
        sigma = calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5,
                                           sampling_rate=1.0, steps=25)
        assert multi.privacy_event_ == SelfComposedEvent(GaussianEvent(sigma), 25)
    else:                  # the screening's columns bound the support
        assert np.count_nonzero(np.any(multi.coef_ != 0, axis=0)) <= 4
    eps = epsilon_of_event(multi.privacy_event_, 1e-5)
    assert multi.privacy_spent_[0] == pytest.approx(eps, rel=1e-6)
    assert 0.99 < eps <= 1.0 + 1e-9
    # group sparsity: at most `sparsity` features, each with its K class weights
    assert np.count_nonzero(np.any(multi.coef_ != 0, axis=0)) <= 4
    assert multi.learning_rate_ == 2.0        # 2 / R^2: the softmax is R^2/2-smooth


def _reference_ight_softmax(X, codes, k, s, step, T, noise=None):
    """Multinomial IGHT in numpy: W <- H_s(W - step (X^T (softmax(X W) - E_y) + B_t)),
    H_s keeping the s rows of largest squared norm (ties to the lower index)."""
    X = sp.csr_array(X)
    W = np.zeros((X.shape[1], k))
    E = np.eye(k)[codes]
    for t in range(T):
        Z = X @ W
        P = np.exp(Z - Z.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        G = X.T @ (P - E)
        if noise is not None:
            G = G + noise[t]
        U = W - step * G
        r = np.zeros(U.shape[0])
        for col in range(k):           # the kernel's summation order
            r += U[:, col] * U[:, col]
        keep = np.argsort(-r, kind="stable")[:s]
        keep = keep[r[keep] != 0.0]
        W = np.zeros_like(U)
        W[keep] = U[keep]
    return W


def test_ight_softmax_kernel_matches_reference():
    from dptoolkit.kernels import ight_fast, scd_fast

    rng = np.random.default_rng(2)
    X = sp.random(150, 40, density=0.15, random_state=3, format="csc")
    codes = rng.integers(0, 5, size=150)
    args = (X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64),
            codes.astype(np.int64))
    for std in (0.0, 0.5):
        theta = np.zeros((40, 5))
        status, n_iter = ight_fast.ight_softmax(
            *args, theta, step=0.2, noise_std=std, sparsity=6, max_iter=25,
            bit_generator=np.random.default_rng(4).bit_generator)
        assert (status, n_iter) == (ight_fast.STATUS_OK, 25)
        noise = scd_fast.standard_normals(25 * 40 * 5,
                                          np.random.default_rng(4).bit_generator)
        ref = _reference_ight_softmax(X, codes, 5, 6, 0.2, 25,
                                      std * noise.reshape(25, 40, 5))
        np.testing.assert_allclose(theta, ref, rtol=1e-10, atol=1e-13)
        assert np.count_nonzero(np.any(theta != 0, axis=1)) == 6
    theta = np.zeros((40, 5))
    status, n_iter = ight_fast.ight_softmax(*args, theta, step=1e308, noise_std=0.0,
                                            sparsity=6, max_iter=25)
    assert status == ight_fast.STATUS_NONFINITE and n_iter < 25
    assert np.all(np.isfinite(theta))
    with pytest.raises(ValueError, match="labels"):
        ight_fast.ight_softmax(*args[:3], np.full(150, 5, dtype=np.int64), np.zeros((40, 5)),
                               step=0.1, noise_std=0.0, sparsity=4, max_iter=1)
    with pytest.raises(ValueError, match="sparsity"):
        ight_fast.ight_softmax(*args, np.zeros((40, 5)), step=0.1, noise_std=0.0,
                               sparsity=41, max_iter=1)
    with pytest.raises(ValueError, match="bit_generator"):
        ight_fast.ight_softmax(*args, np.zeros((40, 5)), step=0.1, noise_std=1.0,
                               sparsity=4, max_iter=1)


@pytest.mark.parametrize("neighbouring, factor", [("add_remove", 1.0), ("replace_one", 2.0)])
def test_private_multinomial_ight_reproduces_the_reference(neighbouring, factor):
    """The whole private fit against numpy fed the same normals (D K per step,
    feature by feature, classes in order), scaled by sigma sqrt(2) factor C."""
    from dptoolkit.kernels import scd_fast

    X, y = _problem(n=300, d=25)
    X = 0.8 * X / np.linalg.norm(X, axis=1, keepdims=True)
    clf = _quiet(DPIGHTClassifier(sparsity=5, max_iter=30, epsilon=2.0, data_norm=0.8,
                                  neighbouring=neighbouring, n_samples_public=350,
                                  classes=[0, 1, 2, 3], random_state=7).fit, X, y)
    assert clf.learning_rate_ == pytest.approx(2.0 / 0.8 ** 2)
    noise = scd_fast.standard_normals(30 * 25 * K, np.random.default_rng(7).bit_generator)
    std = clf.noise_multiplier_ * math.sqrt(2.0) * factor * 0.8
    ref = _reference_ight_softmax(X, y, K, 5, clf.learning_rate_ / 350, 30,
                                  std * noise.reshape(30, 25, K))
    np.testing.assert_allclose(clf.coef_, ref.T, rtol=1e-9, atol=1e-12)


def test_multinomial_ight_noise_scale():
    """X = 0: one step without thresholding gives coef = -(eta / N) B with B ~
    N(0, (sigma sqrt(2) C)^2): d K = 6000 draws, sample variance within 5 standard
    errors (false failure < 1e-6); the binary scale (no sqrt 2) is ~90 standard
    errors off."""
    n, d, eta, C = 60, 2000, 3.0, 0.5
    X = np.zeros((n, d))
    y = np.arange(n) % 3
    clf = DPIGHTClassifier(sparsity=d, max_iter=1, learning_rate=eta, epsilon=1.0,
                           delta=1e-5, data_norm=C, n_samples_public=n,
                           k=None, classes=[0, 1, 2], random_state=3)
    clf = _quiet(clf.fit, X, y)
    sigma = calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5, sampling_rate=1.0,
                                       steps=1)
    assert clf.noise_multiplier_ == pytest.approx(sigma)
    z = clf.coef_.ravel() / (eta / n * sigma * math.sqrt(2.0) * C)
    assert abs(np.var(z) - 1.0) < 5 * math.sqrt(2.0 / z.size)


def test_multinomial_ight_step_neighbour_bound():
    """One kernel step (no noise, no thresholding) from the same W on neighbouring
    datasets (one row removed): the iterates differ by step ||x (p - e_y)^T||_F
    <= step sqrt(2) ||x||, close to the bound for a confidently wrong row."""
    from dptoolkit.kernels import ight_fast

    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 6))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    codes = rng.integers(0, 4, size=30)
    W0 = rng.normal(scale=20.0, size=(6, 4))   # confident predictions, many wrong
    worst = 0.0

    def step(Xa, ca):
        Xc = sp.csc_array(Xa)
        theta = W0.copy()
        ight_fast.ight_softmax(Xc.data, Xc.indices.astype(np.int64),
                               Xc.indptr.astype(np.int64), ca.astype(np.int64), theta,
                               step=0.1, noise_std=0.0, sparsity=6, max_iter=1)
        return theta

    full = step(X, codes)
    for i in range(30):
        keep = np.arange(30) != i
        diff = np.linalg.norm(full - step(X[keep], codes[keep]))
        assert diff <= 0.1 * math.sqrt(2.0) * (1 + 1e-9)
        worst = max(worst, diff / 0.1)
    assert worst > 0.99 * math.sqrt(2.0)


@pytest.mark.parametrize("name", ["DPSGD", "DPSCD", "DPIGHT"])
def test_accountant_charged_once_with_the_event(name):
    X, y = _problem()
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    est = _quiet(MAKERS[name](epsilon=1.0, n_samples_public=N, classes=[0, 1, 2, 3],
                              accountant=acc, random_state=0).fit, X, y)
    assert len(acc.events) == 1 and acc.events[0] == est.privacy_event_
    assert acc.spends[0][:2] == est.privacy_spent_


# ------------------------------------------------------- one-vs-rest = binary fits
def test_dpscd_non_private_first_row_is_the_binary_fit():
    """Row 0 of a non-private one-vs-rest fit is the binary fit of class 0 against
    the rest (the same stream state); every row is a binary SDCA solution."""
    X, y = _problem()
    multi = _quiet(DPSCDClassifier(n_epochs=3, random_state=0, epsilon=None,
                                   multi_class="ovr").fit, X, y)
    first = _quiet(DPSCDClassifier(n_epochs=3, random_state=0, epsilon=None).fit, X,
                   (y == 0).astype(int))
    np.testing.assert_array_equal(multi.coef_[0], first.coef_[0])
    assert multi.dual_coef_.shape == (N, K)


def test_dpight_non_private_is_the_multinomial_reference():
    X, y = _problem()
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    est = _quiet(DPIGHTClassifier(sparsity=5, max_iter=20, epsilon=None).fit, X, y)
    assert est.learning_rate_ == pytest.approx(2.0)
    ref = _reference_ight_softmax(X, y, K, 5, 2.0 / N, 20)
    np.testing.assert_allclose(est.coef_, ref.T, rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------ the softmax model
def test_dpsgd_non_private_reaches_the_multinomial_optimum():
    """Without noise and clipping, softmax SGD approaches scikit-learn's
    multinomial logistic regression on the same rows and penalty (objective gap
    below 1e-3; lbfgs at tol 1e-10 is the reference)."""
    X, y = _problem(n=600)
    alpha = 1e-2
    est = _quiet(DPSGDClassifier(alpha=alpha, clip=None, batch_size=600, n_epochs=3000,
                                 random_state=0, epsilon=None).fit, X, y)
    Xt, _ = transform_rows(X, "l2", False, 1.0)
    ref = LogisticRegression(C=1.0 / (alpha * 600), fit_intercept=False, tol=1e-10,
                             max_iter=10000).fit(Xt, y)
    f_ref = softmax_objective(Xt, y, ref.coef_.T, alpha=alpha)
    f_sgd = est.objective(X, y)
    assert f_ref <= f_sgd + 1e-9
    assert f_sgd - f_ref < 1e-3
    assert np.mean(est.predict(X) == ref.predict(Xt)) > 0.98


def test_softmax_gradient_is_x_times_residual_and_bounded_by_sqrt2():
    """The analysis' per-example gradient: d/dW of -log softmax(W^T x)_y equals
    x (p - e_y)^T (central differences), and its Frobenius norm is at most
    sqrt(2) ||x||, approached (> 0.999 sqrt 2) by a confident wrong prediction."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        k = int(rng.integers(3, 9))
        x = rng.normal(size=5)
        W = rng.normal(size=(5, k))
        label = int(rng.integers(k))
        codes = np.array([label])
        grad = np.zeros_like(W)
        h = 1e-6
        for idx in np.ndindex(W.shape):
            E = np.zeros_like(W)
            E[idx] = h
            grad[idx] = (softmax_objective(x[None], codes, W + E, alpha=0.0)
                         - softmax_objective(x[None], codes, W - E, alpha=0.0)) / (2 * h)
        a = x @ W
        p = np.exp(a - a.max())
        p /= p.sum()
        r = p - np.eye(k)[label]
        np.testing.assert_allclose(grad, np.outer(x, r), atol=1e-7)
        assert np.linalg.norm(np.outer(x, r)) <= math.sqrt(2) * np.linalg.norm(x) * (1 + 1e-12)
    x = np.array([1.0, 0.0])
    W = np.zeros((2, 5))
    W[0, 3] = 40.0                       # all mass on class 3, the label is 0
    a = x @ W
    p = np.exp(a - a.max())
    p /= p.sum()
    r = p - np.eye(5)[0]
    assert np.linalg.norm(np.outer(x, r)) > 0.999 * math.sqrt(2)


# ------------------------------------------------------------------- utility
@pytest.mark.parametrize("name, floor", [("DPSGD", 0.8), ("DPSCD", 0.8), ("DPIGHT", 0.7)])
def test_private_multiclass_learns(name, floor):
    """A private K = 4 fit at epsilon = 4 (seeded noise; chance is about 0.25, the
    non-private fits score above 0.9) is far above chance on held-out rows."""
    X, y = _problem(n=4000)
    Xtest, ytest = _problem(n=2000, seed=1)
    if name == "DPIGHT":
        X = X / 3.0
        Xtest = Xtest / 3.0
    make = {"DPSGD": lambda **kw: DPSGDClassifier(**kw),
            "DPSCD": lambda **kw: DPSCDClassifier(**kw),
            "DPIGHT": lambda **kw: DPIGHTClassifier(sparsity=6, **kw)}[name]
    est = _quiet(make(epsilon=4.0, n_samples_public=4000, classes=[0, 1, 2, 3],
                      random_state=0).fit, X, y)
    assert est.score(Xtest, ytest) > floor


# ------------------------------------------------------------------ refusals
def test_refusals_name_the_argument():
    X, y = _problem()
    with pytest.raises(ValueError, match="loss='hinge' is binary only"):
        DPSGDClassifier("hinge", epsilon=None).fit(X, y)
    for est in (DPSGDClassifier(epsilon=None), DPSCDClassifier(epsilon=None),
                DPIGHTClassifier(sparsity=2, epsilon=None)):
        with pytest.raises(ValueError, match="at least two classes"):
            _quiet(est.fit, X, np.zeros(N))
        with pytest.raises(ValueError, match="classes"):
            _quiet(type(est)(classes=[0, 1, 2]).fit, X, y)    # label 3 outside classes
