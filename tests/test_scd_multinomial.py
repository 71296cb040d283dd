"""DP-SCD's multinomial (softmax) model for K > 2 classes.

Checked here: the neighbour bound of one step (adding a row to a batch changes
the shared matrix V by exactly x_k zeta_k^T, of Frobenius norm at most C, also
when the scaling binds), that the privacy event is the binary fit's (one event
of T steps whatever K, sensitivity C), the auto clip and step, that the
non-private fit approaches the multinomial optimum, probabilities, refusals, and
that at the same budget the multinomial model beats one-vs-rest on a 10-class
synthetic problem.  Every random input has a fixed seed; the utility checks use
seeded noise with margins far from their thresholds (deterministic: false-failure
rate 0 for the given seeds).
"""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

from dptoolkit.accounting import calibrate_noise_multiplier
from dptoolkit.accounting.events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent
from dptoolkit.linear_model import DPSCDClassifier
from dptoolkit.linear_model._glm import _scd
from dptoolkit.linear_model._glm._scd_defaults import _softmax_step
from test_glm_multiclass import _problem, _quiet   # (n, d, k, seed) -> X, y


def _one_step(X, y, k, clip, step=0.3):
    """V after one noiseless step on the batch of every row (sampling rate 1)."""
    W, _, A = _scd._softmax_dual_scd(
        sp.csr_array(X), y, k, rng=np.random.default_rng(0), step=step, lam_n=1.0,
        clip=clip, sampling_rate=1.0, batch_size=X.shape[0], n_steps=1, noise_std=0.0,
        rec_steps=np.zeros(0, dtype=np.int64))
    return W, A           # W = V / lam_n with lam_n = 1


@pytest.mark.parametrize("clip", [math.inf, 0.05])
def test_one_step_neighbour_changes_v_by_the_added_row_only(clip):
    """Add/remove one row: V' - V = x_k zeta_k^T, ||.||_F <= C (Damaskinos et al.
    (2021), Lemma 1 with a K-dimensional block); with C = 0.05 the scaling binds
    (the unscaled update has norm about 0.3 sqrt(1 - 1/K))."""
    k = 5
    X, y = _problem(40, 6, k)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    full, A = _one_step(X, y, k, clip)
    worst = 0.0
    for drop in range(0, 40, 7):
        keep = np.arange(40) != drop
        part, _ = _one_step(X[keep], y[keep], k, clip)
        diff = full - part
        np.testing.assert_allclose(diff, np.outer(X[drop], A[drop]), atol=1e-12)
        norm = np.linalg.norm(diff)
        assert norm <= min(clip, 0.3 * math.sqrt(2.0)) * (1 + 1e-9)
        worst = max(worst, norm)
    if math.isfinite(clip):
        assert worst == pytest.approx(clip, rel=1e-9)     # the bound is attained


@pytest.mark.parametrize("k", [3, 10])
def test_multinomial_event_is_the_binary_event(k):
    """One event of T steps whatever K (not K T): sigma from the accountant at (q, T),
    the binary fit's noise multiplier; sensitivity C = 0.3 s sqrt(1 - 1/K) with the
    private step s = 2 lambda N / (2 lambda N + L / 10)."""
    X, y = _problem(1200, 12, k)
    kw = dict(epsilon=1.0, delta=1e-5, n_samples_public=1200, batch_size=40, n_epochs=2,
              random_state=0)
    multi = _quiet(DPSCDClassifier(classes=list(range(k)), **kw).fit, X, y)
    binary = _quiet(DPSCDClassifier(classes=[0, 1], **kw).fit, X, (y == 1).astype(int))
    q, T = 40 / 1200, math.ceil(2 / (40 / 1200))
    sigma = calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5, sampling_rate=q,
                                       steps=T, accountant="rdp", sampling="poisson")
    assert multi.privacy_event_ == binary.privacy_event_ == SelfComposedEvent(
        PoissonSampledEvent(q, GaussianEvent(sigma)), T)
    assert multi.n_steps_ == T
    s = _softmax_step(1e-4, 1200, 40, private=True)
    assert s == pytest.approx(2 * 0.12 / (2 * 0.12 + 4))
    assert _softmax_step(1e-4, 1200, 40) == pytest.approx(2 * 0.12 / (2 * 0.12 + 40))
    assert multi.sensitivity_ == pytest.approx(0.3 * s * math.sqrt(1 - 1 / k))
    assert multi.noise_std_ == pytest.approx(sigma * multi.sensitivity_)
    assert multi.coef_.shape == (k, 12) and multi.dual_coef_ is None


@pytest.mark.parametrize("eps, n_public, expected", [
    (4.0, 10**5, 20.0),                                   # the multinomial cap binds
    (2.0, 11314, math.sqrt(2.0 * 11314 * 320) / 180)])    # the rule, above 10 passes
def test_multinomial_auto_epochs_cap_is_20_and_the_plan_sees_t(eps, n_public, expected):
    """n_epochs="auto" of the multinomial model: sqrt(epsilon N L) / 180 in [1, 20]
    (one-vs-rest and binary fits keep [1, 10]); the event has the T = ceil(E / q)
    steps of those passes, the noise multiplier is calibrated for them and the
    fit spends exactly its budget.  Deterministic (no statistical check)."""
    X, y = _problem(300, 6, 3)
    kw = dict(epsilon=eps, delta=1e-5, n_samples_public=n_public, random_state=0)
    multi = _quiet(DPSCDClassifier(classes=[0, 1, 2], **kw).fit, X, y)
    ovr = _quiet(DPSCDClassifier(classes=[0, 1, 2], multi_class="ovr", **kw).fit, X, y)
    L = multi.batch_size_
    assert L == min(max(100, math.ceil(3 * math.sqrt(n_public))), 1000)
    assert multi.n_epochs_ == pytest.approx(expected, rel=1e-12)
    assert ovr.n_epochs_ == 10.0
    q = L / n_public
    T = math.ceil(multi.n_epochs_ / q)
    assert multi.n_steps_ == T
    sigma = calibrate_noise_multiplier(target_epsilon=eps, delta=1e-5, sampling_rate=q,
                                       steps=T, accountant="rdp", sampling="poisson")
    assert multi.privacy_event_ == SelfComposedEvent(
        PoissonSampledEvent(q, GaussianEvent(sigma)), T)
    assert multi.privacy_spent_[0] == pytest.approx(eps, rel=1e-5)
    assert multi.privacy_spent_[1] == 1e-5


def test_one_vs_rest_stays_available_and_pays_k_t_steps():
    X, y = _problem(1200, 12, 4)
    kw = dict(epsilon=1.0, n_samples_public=1200, batch_size=40, n_epochs=2, random_state=0)
    ovr = _quiet(DPSCDClassifier(multi_class="ovr", **kw).fit, X, y)
    multi = _quiet(DPSCDClassifier(**kw).fit, X, y)
    assert ovr.n_steps_ == 4 * multi.n_steps_
    assert ovr.noise_multiplier_ > 1.5 * multi.noise_multiplier_
    # the hinge loss and the other variants have no multinomial form: "auto" is OvR
    hinge = _quiet(DPSCDClassifier("hinge", **kw).fit, X, y)
    assert hinge.n_steps_ == ovr.n_steps_


def test_non_private_fit_approaches_the_multinomial_optimum():
    """SDCA on the softmax loss: 60 epochs of batches of 20 reach scikit-learn's
    multinomial logistic regression at C = 1/(lambda N) to within 1e-5 of its
    objective (4e-7 observed) and agree on at least 99 % of the predictions."""
    X, y = _problem(600, 8, 4)
    lam = 1e-3
    est = _quiet(DPSCDClassifier(epsilon=None, alpha=lam, n_epochs=60, batch_size=20,
                                 random_state=0).fit, X, y)
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)      # normalize="l2"
    ref = LogisticRegression(C=1.0 / (lam * 600), fit_intercept=False, tol=1e-10,
                             max_iter=10000).fit(Z, y)

    def objective(W):
        M = Z @ W.T
        M = M - M.max(axis=1, keepdims=True)
        logp = M - np.log(np.exp(M).sum(axis=1, keepdims=True))
        return -logp[np.arange(600), y].mean() + lam / 2 * np.sum(W ** 2)

    assert objective(est.coef_) <= (1 + 1e-5) * objective(ref.coef_)
    assert np.mean(est.predict(X) == ref.predict(Z)) >= 0.99
    assert est.dual_coef_.shape == (600, 4)
    # each dual block stays in e_y - simplex: sums to 0, alpha_iy in [0, 1]
    np.testing.assert_allclose(est.dual_coef_.sum(axis=1), 0.0, atol=1e-12)


def test_probabilities_are_the_softmax_of_the_margins():
    X, y = _problem(600, 8, 4)
    est = _quiet(DPSCDClassifier(epsilon=2.0, n_samples_public=600, random_state=0).fit, X, y)
    d = est.decision_function(X[:9])
    e = np.exp(d - d.max(axis=1, keepdims=True))
    np.testing.assert_allclose(est.predict_proba(X[:9]), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-12)


def test_multinomial_refusals_name_the_argument():
    X, y = _problem(300, 5, 3)
    for kw in (dict(loss="hinge"), dict(variant="sequential"), dict(perturb_dual=True)):
        with pytest.raises(ValueError, match="multi_class='multinomial' needs"):
            _quiet(DPSCDClassifier(epsilon=None, multi_class="multinomial", **kw).fit, X, y)
    with pytest.raises(ValueError, match="multi_class"):
        _quiet(DPSCDClassifier(epsilon=None, multi_class="softmax").fit, X, y)


def test_multinomial_beats_one_vs_rest_at_the_same_budget():
    """10 classes, epsilon 1, N = 6000 (chance 0.1; seeded noise, observed margins
    of several points each way): the multinomial model, paying the binary noise
    multiplier, is above one-vs-rest, which pays for 10 T steps."""
    X, y = _problem(6000, 20, 10)
    Xt, yt = _problem(3000, 20, 10, seed=1)
    kw = dict(epsilon=1.0, n_samples_public=6000, random_state=0)
    multi = _quiet(DPSCDClassifier(**kw).fit, X, y).score(Xt, yt)
    ovr = _quiet(DPSCDClassifier(multi_class="ovr", **kw).fit, X, y).score(Xt, yt)
    assert multi > ovr + 0.02


def test_lazy_noise_has_the_eager_variance():
    """With step 0 (no updates) V is the noise alone: every entry must be the sum
    of T independent N(0, noise_std^2), whether its row is read every step
    (features 0-2, in every row), sometimes (3-9) or never (10-19), recorded mid-way
    or not.  Mean of V^2 / (T noise_std^2) over 200 seeded runs: at least 1,800
    chi-square(1) values per group, standard error at most 0.034; the bound 0.15
    is 4.5 of them (false-failure rate below 1e-5 for a correct sampler)."""
    X = np.zeros((30, 20))
    X[:, :3] = 1.0
    X[np.arange(30), 3 + np.arange(30) % 7] = 1.0
    X = sp.csr_array(X / np.linalg.norm(X, axis=1, keepdims=True))
    y = np.arange(30) % 3
    T = 25
    sq = {name: [] for name in ("always", "sometimes", "never", "recorded")}
    for seed in range(200):
        W, path, _ = _scd._softmax_dual_scd(
            X, y, 3, rng=np.random.default_rng(seed), step=0.0, lam_n=1.0, clip=1.0,
            sampling_rate=0.2, batch_size=6, n_steps=T, noise_std=2.0,
            rec_steps=np.array([9], dtype=np.int64))
        sq["always"].append(W[:3] ** 2 / (T * 4.0))
        sq["sometimes"].append(W[3:10] ** 2 / (T * 4.0))
        sq["never"].append(W[10:] ** 2 / (T * 4.0))
        sq["recorded"].append(path[0] ** 2 / (10 * 4.0))
    for name, values in sq.items():
        assert abs(np.mean(values) - 1.0) < 0.15, name
