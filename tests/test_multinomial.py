"""Multinomial private LASSO (Khanna, Lu and Raff, Appendix A, Algorithm 3)."""
import dataclasses
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dptoolkit.linear_model._frank_wolfe import _fw_multinomial_fast
from dptoolkit.accounting import BudgetAccountant, epsilon_of_event, per_step_epsilon
from dptoolkit.accounting._talwar import (
    laplace_report_noisy_max_composition,
    talwar_noise_scale,
)
from dptoolkit.linear_model import FrankWolfeLassoClassifier, SparsifiedLassoClassifier
from dptoolkit.linear_model._sparsifier import check_count_bounds


def _softmax(V):
    V = V - V.max(axis=1, keepdims=True)
    E = np.exp(V)
    return E / E.sum(axis=1, keepdims=True)


def _problem(n=300, d=25, K=4, seed=0, density=None):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    if density is not None:
        X[rng.random((n, d)) > density] = 0.0
    W = np.zeros((K, d))
    m = min(5, d)
    W[:, :m] = rng.normal(0, 3, (K, m))
    y = np.argmax(X @ W.T + rng.gumbel(size=(n, K)), axis=1)
    return X, y


def reference_fw(X, y, K, l1_bound, T):
    """Algorithm 3 without noise: per class the vertex minimising <s, G_k>; returns
    (W, sum-form gaps)."""
    n, d = X.shape
    Y = np.eye(K)[y]
    W = np.zeros((K, d))
    gaps = []
    for t in range(1, T + 1):
        G = (X.T @ (_softmax(X @ W.T) - Y)).T          # (K, d)
        S = np.zeros_like(W)
        for k in range(K):
            j = int(np.argmax(np.abs(G[k])))
            S[k, j] = -l1_bound * np.sign(G[k, j])
        gaps.append(float(np.sum(G * (W - S))))
        eta = 2.0 / (t + 2.0)
        W = (1 - eta) * W + eta * S
    return W, np.array(gaps)


def test_kernel_matches_reference():
    X, y = _problem(density=0.4)
    W_ref, gaps_ref = reference_fw(X, y, 4, 8.0, 80)
    clf = FrankWolfeLassoClassifier(l1_bound=8.0, max_iter=80, epsilon=None).fit(X, y)
    assert clf.coef_.shape == (4, X.shape[1])
    np.testing.assert_allclose(clf.coef_, W_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(clf.gap_history_, gaps_ref / X.shape[0], rtol=1e-8,
                               atol=1e-12)
    # every row in its L1 ball, the loss decreased
    assert np.all(np.abs(clf.coef_).sum(axis=1) <= 8.0 + 1e-9)
    assert clf.objective(X, y) < math.log(4) - 0.1
    assert clf.solver_stats_["n_iter"] == 80


def test_kernel_gradient_matches_numpy():
    X, y = _problem(n=80, d=12, K=3, seed=2, density=0.5)
    Xc = sp.csc_array(X)
    k = _fw_multinomial_fast.MultinomialFW(
        Xc.data, Xc.indices.astype(np.int64), Xc.indptr.astype(np.int64),
        y.astype(np.int64), 3, 4.0, 0, 0.0, np.random.default_rng(0).bit_generator)
    k.run(7, np.zeros(7))
    W = k.coef()
    G = (X.T @ (_softmax(X @ W.T) - np.eye(3)[y])).T
    np.testing.assert_allclose(k.gradient_sum(), G, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("code", sorted(_fw_multinomial_fast.SELECTOR_CODES.values()))
def test_select_vertices_is_the_kernels_selection(code):
    """``select_vertices`` on the kernel's gradient makes the kernel's step: the
    same vertex per class and the same draws (generator states equal), step
    after step, for every selector code (the distributed fit selects with it)."""
    X, y = _problem(n=120, d=30, K=4, seed=3, density=0.5)
    Xc = sp.csc_array(X)
    l1, coef = 5.0, 0.05
    bits, twin = np.random.PCG64(11), np.random.PCG64(11)
    kernel = _fw_multinomial_fast.MultinomialFW(
        Xc.data, Xc.indices.astype(np.int64), Xc.indptr.astype(np.int64),
        y.astype(np.int64), 4, l1, code, coef, bits)
    gaps = np.zeros(6)
    for t in range(1, 7):
        G = kernel.gradient_sum()                 # (K, D)
        best, sigma = _fw_multinomial_fast.select_vertices(G.T, code, coef, twin)
        before = kernel.coef()
        kernel.run(1, gaps)
        eta = 2.0 / (t + 2.0)
        step = kernel.coef() - (1.0 - eta) * before
        want = np.zeros_like(step)
        want[np.arange(4), best] = eta * sigma * l1
        np.testing.assert_allclose(step, want, rtol=1e-12, atol=1e-12)
        assert twin.state == bits.state
    with pytest.raises(ValueError, match="gradient must be"):
        _fw_multinomial_fast.select_vertices(np.zeros(4), code, coef, twin)
    with pytest.raises(ValueError, match="unknown selector code"):
        _fw_multinomial_fast.select_vertices(np.zeros((3, 4)), 99, coef, twin)


@pytest.mark.parametrize("selector", ["exponential", "noisy_max", "laplace",
                                      "laplace_talwar"])
def test_private_nonprivate_limit(selector):
    """With negligible noise every selector takes the non-private (descent) path."""
    X, y = _problem()
    W_ref, _ = reference_fw(X, y, 4, 5.0, 30)
    kw = dict(delta=1e-6) if selector == "laplace_talwar" else {}
    clf = FrankWolfeLassoClassifier(l1_bound=5.0, max_iter=30, epsilon=1e10,
                                    mechanism=selector, random_state=0, **kw).fit(X, y)
    np.testing.assert_allclose(clf.coef_, W_ref, rtol=1e-9, atol=1e-12)


def _first_vertices(X, y, K, n_fits, **kw):
    """(class, signed vertex index in [0, 2p)) of the first step of n_fits T=1 fits."""
    rng = np.random.default_rng(99)
    d = X.shape[1]
    out = np.zeros((n_fits, K), dtype=int)
    for r in range(n_fits):
        W = FrankWolfeLassoClassifier(l1_bound=1.0, max_iter=1, random_state=rng,
                                      **kw).fit(X, y).coef_
        for k in range(K):
            j = int(np.flatnonzero(W[k])[0])
            out[r, k] = j if W[k, j] > 0 else d + j
    return out


@pytest.mark.parametrize("selector", ["exponential", "noisy_max"])
def test_first_step_is_the_exponential_mechanism(selector):
    """T = 1, basic composition: eps_step = epsilon; joint sensitivity L = 2, so each
    class draws vertex sigma e_j with probability proportional to
    exp(-sigma c G[k, j]), c = eps / (2 L) = eps / 4.  2000 fits, chi-square per class;
    p-value threshold 1e-4 per class (false-failure rate < 3e-4)."""
    X, y = _problem(n=40, d=3, K=3, seed=4)
    eps = 0.5
    G = (X.T @ (_softmax(np.zeros((40, 3))) - np.eye(3)[y])).T
    draws = _first_vertices(X, y, 3, 2000, epsilon=eps, mechanism=selector)
    c = eps / 4.0
    for k in range(3):
        scores = np.concatenate([-G[k], G[k]])        # +e_j then -e_j
        p = np.exp(c * scores - np.max(c * scores))
        p /= p.sum()
        obs = np.bincount(draws[:, k], minlength=6)
        assert stats.chisquare(obs, 2000 * p).pvalue > 1e-4
        # and the mechanism is not the non-private argmax
        assert len(np.unique(draws[:, k])) > 1


def test_first_step_laplace_scale():
    """One feature x_i = 1: at W = 0, G[k] = n/K - n_k.  Laplace scale
    b = 2 L / eps_step = 4 / eps (T = 1), so class k picks the ascent vertex with
    probability P(Z1 - Z2 > 2|G[k]|).  2500 fits, each class within 4.42 sd (false
    failure 1e-5 per class)."""
    X = np.ones((12, 1))
    y = np.array([0] * 7 + [1] * 4 + [2] * 1)
    eps = 2.0
    b = 4.0 / eps
    G = 12 / 3 - np.bincount(y)
    draws = _first_vertices(X, y, 3, 2500, epsilon=eps, mechanism="laplace")
    for k in range(3):
        x = 2 * abs(G[k])
        p_ascent = 0.25 * (2 + x / b) * math.exp(-x / b)
        descent = 0 if G[k] < 0 else 1                 # +e (index 0) if G < 0
        ascent_freq = np.mean(draws[:, k] != descent)
        assert abs(ascent_freq - p_ascent) < 4.42 * math.sqrt(p_ascent * (1 - p_ascent)
                                                             / 2500)


def test_joint_sensitivity_is_two():
    """Adding one example changes class k's sum-gradient by at most r_k in every
    coordinate with sum_k r_k <= 2 (Theorem 4's L = 2): the quantity the per-step
    budget is calibrated on.  Random W and examples, including confident mistakes that
    approach the bound."""
    rng = np.random.default_rng(5)
    for trial in range(200):
        K, d = rng.integers(3, 8), rng.integers(2, 10)
        W = rng.normal(0, 5, (K, d))
        x = rng.uniform(-1, 1, d)
        yk = rng.integers(K)
        r = np.abs(_softmax((W @ x)[None, :])[0] - np.eye(K)[yk])
        dG = np.abs(np.outer(r, x))                    # change of G (K x d) per coordinate
        assert dG.max(axis=1).sum() <= 2.0 + 1e-12
        assert r.max() <= 1.0
    # a confident mistake: r sums to almost 2
    W = np.zeros((3, 1))
    W[0, 0] = 50.0
    r = np.abs(_softmax((W @ np.ones(1))[None, :])[0] - np.eye(3)[1])
    assert r.sum() > 1.999


def test_privacy_parameters_and_accountant():
    X, y = _problem()
    T, eps, delta = 200, 1.0, 1e-4
    acc = BudgetAccountant(epsilon=3.0, delta=1e-3)
    clf = FrankWolfeLassoClassifier(l1_bound=5.0, max_iter=T, epsilon=eps, delta=delta,
                                    composition="advanced", accountant=acc,
                                    random_state=0).fit(X, y)
    assert clf.privacy_spent_ == (epsilon_of_event(clf.privacy_event_, delta), delta)
    assert clf.privacy_spent_[0] <= eps
    assert clf.epsilon_step_ == pytest.approx(per_step_epsilon(epsilon_total=eps,
                                                               delta_slack=delta, k=T))
    assert clf.composition_ == "advanced" and clf.gap_history_ is None
    assert acc.spent == (pytest.approx(clf.privacy_spent_[0]), pytest.approx(delta))
    paper = FrankWolfeLassoClassifier(l1_bound=5.0, max_iter=T, epsilon=eps, delta=delta,
                                      mechanism="laplace_talwar", random_state=0).fit(X, y)
    b = talwar_noise_scale(epsilon=eps, delta=delta, max_iter=T, lipschitz=2.0, n_classes=4)
    expected = laplace_report_noisy_max_composition(noise_scale=b, sensitivity=2.0,
                                                    max_iter=T, delta_slack=delta)
    assert paper.privacy_spent_[0] <= expected[0] * (1 + 1e-9)
    assert paper.privacy_spent_[0] == epsilon_of_event(paper.privacy_event_, delta)
    assert expected[0] < eps / 2   # the printed Algorithm 3 is K-fold too noisy
    with pytest.raises(Exception, match="budget"):
        # the two fits spent 2 delta of the 1e-3: a third with delta 1e-3 cannot pay
        FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-3, accountant=acc).fit(X, y)


def test_predict_api_and_labels():
    X, y = _problem(n=200, K=3)
    names = np.array(["cat", "dog", "emu"])[y]
    clf = FrankWolfeLassoClassifier(l1_bound=10.0, max_iter=200, epsilon=None).fit(X, names)
    np.testing.assert_array_equal(clf.classes_, ["cat", "dog", "emu"])
    proba = clf.predict_proba(X)
    assert proba.shape == (200, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.log(proba), clf.predict_log_proba(X), atol=1e-10)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(proba, axis=1)])
    assert clf.decision_function(X).shape == (200, 3)
    assert clf.score(X, names) > 0.6
    assert clf.objective(X, names) == pytest.approx(
        -np.mean(np.log(proba[np.arange(200), y])))


def test_formats_and_seeds():
    X, y = _problem(n=150, d=10, K=3, density=0.5)
    ref = FrankWolfeLassoClassifier(l1_bound=5.0, max_iter=50, epsilon=1.0,
                                    random_state=3).fit(X, y).coef_
    for fmt in ("csr", "csc", "coo"):
        got = FrankWolfeLassoClassifier(l1_bound=5.0, max_iter=50, epsilon=1.0,
                                        random_state=3).fit(sp.csr_array(X).asformat(fmt),
                                                            y).coef_
        np.testing.assert_array_equal(got, ref)
    other = FrankWolfeLassoClassifier(l1_bound=5.0, max_iter=50, epsilon=1.0,
                                      random_state=4).fit(X, y).coef_
    assert not np.array_equal(other, ref)


@pytest.mark.parametrize("kw, match", [
    (dict(epsilon=1.0, mechanism="grouped"), "more than two classes"),
    (dict(mechanism="pairing_heap"), "more than two classes"),
    (dict(epsilon=1.0, mechanism="argmax"), "mechanism"),
    (dict(l1_bound=0.0), "l1_bound"),
    (dict(epsilon=1.0, tol=0.1), "tol"),
])
def test_bad_input(kw, match):
    X, y = _problem(n=60, d=6, K=3)
    with pytest.raises(ValueError, match=match):
        FrankWolfeLassoClassifier(**{"epsilon": None, **kw}).fit(X, y)


def test_public_bound_clipping():
    X, y = _problem(n=60, d=6, K=3)
    with pytest.warns(Warning, match="clipped"):
        FrankWolfeLassoClassifier(epsilon=1.0, max_iter=5).fit(3 * X, y)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        FrankWolfeLassoClassifier(epsilon=1.0, max_iter=5, clip_data=False).fit(3 * X, y)


def test_sparsifier_on_multinomial():
    X, y = _problem(n=300, d=30, K=4)
    # epsilon is the total: 0.5 for the count, 0.95 for the private fit
    est = SparsifiedLassoClassifier(l1_bound=5.0, max_iter=100, epsilon_count=0.5,
                                    epsilon=1.45, delta=1e-3, nonprivate_max_iter=500,
                                    random_state=0).fit(X, y)
    assert est.coef_.shape == (4, 30)
    assert est.count_bounds_ == check_count_bounds("sqrt", 4 * 30)
    assert np.count_nonzero(est.coef_) <= est.n_nonzero_
    assert est.privacy_spent_ == (pytest.approx(1.45), 1e-3)
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(np.unique(est.predict(X))) <= set(range(4))


def test_screened_floating_point_delta_counts_the_candidates():
    # 20 Newsgroups' shape: 20 classes, 2^20 hashed features, N = 11,314, and
    # 801 steps (the former max_iter="auto" at epsilon = 2).  The screened fit
    # draws over 4096 candidates per class, so its floating-point delta is that of
    # 4096 features (fits at delta = 1e-5 for every epsilon in [0.1, 8]);
    # unscreened, 801 draws over 2^20 features per class exceed delta = 1e-5 and
    # the guard still refuses.
    for eps in (0.1, 2.0, 8.0):
        budget = FrankWolfeLassoClassifier(epsilon=eps, delta=1e-5, max_iter=801).budget(
            2 ** 20, n_classes=20, n_samples=11314)
        assert budget.screening_noise_multiplier is not None
        assert budget.epsilon == eps and budget.delta == 1e-5
        fp_delta = budget.event.events[-1].delta
        assert 0 < fp_delta < 1e-6
    with pytest.raises(ValueError, match="floating-point delta .* over 1048576 features "
                                         "for each of 20 classes"):
        FrankWolfeLassoClassifier(epsilon=2.0, delta=1e-5, max_iter=801,
                                  k=None).budget(
            2 ** 20, n_classes=20, n_samples=11314)


def test_auto_defaults_for_k_classes():
    from dptoolkit.linear_model._frank_wolfe._budget import private_defaults

    X, y = _problem(n=400, d=30, K=4)
    est = FrankWolfeLassoClassifier(epsilon=4.0, delta=1e-5, n_samples_public=400,
                                    classes=[0, 1, 2, 3], random_state=0).fit(X, y)
    lam, T = private_defaults(n_samples=400, epsilon=4.0, delta=1e-5, n_drawn=30,
                              n_classes=4, lipschitz=2.0)
    assert est.l1_bound_ == lam and est.n_iter_ == T
    assert np.all(np.abs(est.coef_).sum(axis=1) <= lam * (1 + 1e-9))
    assert FrankWolfeLassoClassifier(epsilon=None).fit(X, y).l1_bound_ == 50.0


def test_one_fit_skeleton_kernel_factory():
    from dptoolkit.linear_model._frank_wolfe import _fw_fast, _kernels

    X, y = _problem(n=120, d=12, K=3)
    est = FrankWolfeLassoClassifier(max_iter=20, epsilon=None).fit(X, y)
    assert est.mechanism_ == "argmax" and est.coef_.shape == (3, 12)
    assert est.solver_stats_["solver"] == "multinomial" and "touched_nnz" in est.solver_stats_
    priv = FrankWolfeLassoClassifier(max_iter=20, epsilon=1.0, delta=1e-5,
                                     classes=[0, 1, 2], n_samples_public=120,
                                     random_state=0).fit(X, y)
    assert priv.mechanism_ == "exponential"
    assert priv.solver_stats_ == {"n_iter": 20, "solver": "multinomial"}
    # the factory's choice for two classes and for K > 2
    csr = sp.csr_array(X)
    csc = sp.csc_array(X)

    def views(dtype):
        return ((csr.data, csr.indices.astype(dtype), csr.indptr.astype(np.int64)),
                (csc.data, csc.indices.astype(dtype), csc.indptr.astype(np.int64)))

    p = FrankWolfeLassoClassifier(l1_bound=1.0, max_iter=5,
                                  epsilon=None)._check_params(multinomial=True)
    rng = np.random.default_rng(0)
    for classes, solver, kind in ((np.arange(3), "fast", _fw_multinomial_fast.MultinomialFW),
                                  (np.arange(2), "fast", _fw_fast.FastFW),
                                  (np.arange(2), "standard", _fw_fast.StandardFW)):
        p2 = dataclasses.replace(p, l1_bound=1.0)
        yy = np.minimum(y, classes.size - 1)
        csr_v, csc_v = views(_kernels.index_dtype(classes.size, solver))
        kernel, spec = _kernels.make_kernel(
            y=yy, classes=classes, csr=csr_v, csc=csc_v, p=p2, solver=solver,
            mechanism="argmax", kernel_parameter=0.0, bit_generator=rng.bit_generator)
        assert isinstance(kernel, kind) and spec.name == "argmax"
