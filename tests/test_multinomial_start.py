"""The K-class naive-Bayes start of the multinomial private LASSO: the kernel's
``set_start`` (step size 2/(t + t0 + 2)), the start built from the screening's
release of the per-class sums (post-processing), and its use at the defaults."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dptoolkit.linear_model import FrankWolfeLassoClassifier
from dptoolkit.linear_model._frank_wolfe import _class_start, _fw_multinomial_fast
from dptoolkit.linear_model._frank_wolfe._screening import START_COORDINATES_PER_STEP

D_TEXT = 3000   # more than the 1024 candidates of k="auto"


def _softmax(V):
    V = V - V.max(axis=1, keepdims=True)
    E = np.exp(V)
    return E / E.sum(axis=1, keepdims=True)


def _text(n=900, d=D_TEXT, K=3, seed=0, row_nnz=12, shares=None):
    """Binary rows of ``row_nnz`` words: frequent words shared by every class and
    3 of each class's own 20 words."""
    rng = np.random.default_rng(seed)
    y = rng.choice(K, n, p=shares)
    p = 1.0 / np.arange(1, d + 1)
    p[:20 * K] = 0.0
    p /= p.sum()
    rows = []
    for i in range(n):
        own = rng.choice(20, 3, replace=False) + 20 * y[i]
        rest = rng.choice(d, row_nnz - 3, replace=False, p=p)
        rows.append(np.sort(np.concatenate([own, rest])))
    X = sp.csr_array((np.ones(n * row_nnz), np.concatenate(rows),
                      np.arange(0, n * row_nnz + 1, row_nnz)), shape=(n, d))
    return X, y


def _reference(X, y, K, l1_bound, T, W0, t0):
    """Algorithm 3 without noise from W0 with step 2/(t + t0 + 2)."""
    Y = np.eye(K)[y]
    W = W0.copy()
    for t in range(1, T + 1):
        G = (X.T @ (_softmax(X @ W.T) - Y)).T
        S = np.zeros_like(W)
        for k in range(K):
            j = int(np.argmax(np.abs(G[k])))
            S[k, j] = -l1_bound * np.sign(G[k, j])
        eta = 2.0 / (t + t0 + 2.0)
        W = (1 - eta) * W + eta * S
    return W


def _kernel(X, y, K, l1_bound, seed=0):
    Xc = sp.csc_array(X)
    return _fw_multinomial_fast.MultinomialFW(
        np.ascontiguousarray(Xc.data, dtype=np.float64), Xc.indices.astype(np.int64),
        Xc.indptr.astype(np.int64), np.asarray(y, dtype=np.int64), K, l1_bound,
        _fw_multinomial_fast.SELECTOR_CODES["argmax"], 0.0,
        np.random.default_rng(seed).bit_generator)


def test_kernel_from_a_start_matches_reference():
    """The kernel's scores start at X W0^T (its first gradient is that of W0) and
    its steps are those of 2/(t + t0 + 2); fails on a kernel that ignores the
    start or the offset t0."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (200, 15))
    X[rng.random(X.shape) > 0.4] = 0.0
    y = rng.integers(0, 4, 200)
    W0 = np.zeros((4, 15))
    W0[:, [0, 3, 7]] = rng.uniform(-1, 1, (4, 3))
    W0 *= 2.0 / np.abs(W0).sum(axis=1, keepdims=True).max()
    k = _kernel(X, y, 4, 2.0)
    k.set_start(W0, 9.0)
    G0 = (X.T @ (_softmax(X @ W0.T) - np.eye(4)[y])).T
    np.testing.assert_allclose(k.gradient_sum(), G0, rtol=1e-10, atol=1e-12)
    assert k.run(25, np.zeros(25)) == 25
    np.testing.assert_allclose(k.coef(), _reference(X, y, 4, 2.0, 25, W0, 9.0),
                               rtol=1e-9, atol=1e-12)


def test_kernel_start_refusals():
    X = sp.csr_array(np.eye(6)[:, :4])
    k = _kernel(X, np.array([0, 1, 2, 0, 1, 2]), 3, 1.0)
    with pytest.raises(ValueError, match="shape"):
        k.set_start(np.zeros((2, 4)), 0.0)
    with pytest.raises(ValueError, match="L1 ball"):
        k.set_start(np.full((3, 4), 0.5), 0.0)
    with pytest.raises(ValueError, match="t_offset"):
        k.set_start(np.zeros((3, 4)), -1.0)
    k.run(1, np.zeros(1))
    with pytest.raises(ValueError, match="first step"):
        k.set_start(np.zeros((3, 4)), 0.0)


def test_start_is_naive_bayes_in_the_ball():
    """Every row in its L1 ball, the largest on the sphere; its argmax is that of
    multinomial naive Bayes with a uniform prior and smoothing s; columns whose
    noisy total is below the threshold get 0."""
    rng = np.random.default_rng(1)
    sums = rng.uniform(0, 50, (4, 40))
    sums[:, 30:] = 0.1                       # totals below 4 * sqrt(4) * s
    columns = np.arange(5, 40)
    s = 2.0
    w0 = _class_start.multinomial_naive_bayes_start(sums, columns, 3.0, s)
    assert w0.shape == (4, 35)
    norms = np.abs(w0).sum(axis=1)
    assert np.all(norms <= 3.0 * (1 + 1e-12)) and np.isclose(norms.max(), 3.0)
    assert not w0[:, 25:].any()
    S = sums[:, 5:30] + _class_start.SMOOTHING * s
    logp = np.log(S) - np.log(S.sum(axis=1, keepdims=True))
    Xt = rng.integers(0, 2, (50, 25)).astype(float)
    np.testing.assert_array_equal(np.argmax(Xt @ w0[:, :25].T, axis=1),
                                  np.argmax(Xt @ logp.T, axis=1))
    assert not _class_start.multinomial_naive_bayes_start(sums, columns, 3.0, 1e3).any()
    with pytest.raises(ValueError, match="sums"):
        _class_start.multinomial_naive_bayes_start(sums[:2], columns, 3.0, s)


def test_start_steps_rule():
    """``start_steps="auto"``: T times a row's mean nnz over 4; else as given."""
    class Kernel:
        def set_start(self, w0, t0):
            self.w0, self.t0 = w0, t0

    class P:
        l1_bound, max_iter, start_steps = 2.0, 20, None

    sums = np.zeros((3, 10))
    sums[:, :6] = [[90, 10, 10, 50, 5, 30], [10, 90, 10, 50, 5, 30], [10, 10, 90, 50, 5, 30]]
    k = Kernel()
    _class_start.set_multinomial_start(k, sums, np.arange(10), P, 1.0)
    nnz = np.count_nonzero(k.w0) / 3
    assert 0 < nnz < 10 and k.t0 == 20 * nnz / START_COORDINATES_PER_STEP
    P.start_steps = 5.0
    _class_start.set_multinomial_start(k, sums, np.arange(10), P, 1.0)
    assert k.t0 == 5.0


def _fit(X, y, K, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FrankWolfeLassoClassifier(epsilon=kw.pop("epsilon", 2.0), delta=1e-5,
                                         n_samples_public=X.shape[0],
                                         classes=list(range(K)), random_state=0,
                                         **kw).fit(X, y)


def test_k_class_fit_starts_from_the_release(monkeypatch):
    """``start='naive_bayes'`` with K > 2 starts from the start of the released
    per-class sums (the screening's statistic: no other data read), charges the
    same event as the zero start at the same ``selection_share`` (post-processing),
    and changes the fit; ``start='auto'`` keeps the zero start for K > 2.  Fails on
    the old code (K > 2 refused the start)."""
    X, y = _text()
    seen = []
    real = _class_start.multinomial_naive_bayes_start

    def recorded(sums, columns, l1_bound, noise_std, **kw):
        seen.append((sums.copy(), columns.copy(), l1_bound, noise_std))
        return real(sums, columns, l1_bound, noise_std, **kw)

    monkeypatch.setattr(_class_start, "multinomial_naive_bayes_start", recorded)
    est = _fit(X, y, 3, start="naive_bayes")
    assert len(seen) == 1
    sums, columns, l1_bound, noise_std = seen[0]
    assert sums.shape == (3, D_TEXT) and columns.size == 1024
    assert l1_bound == est.l1_bound_
    zero = _fit(X, y, 3, start="zero", selection_share=0.75)
    assert zero.privacy_spent_ == est.privacy_spent_
    assert est.privacy_spent_[0] <= 2.0 * (1 + 1e-9)
    assert not np.array_equal(zero.coef_, est.coef_)
    auto = _fit(X, y, 3)
    assert len(seen) == 1                   # K > 2 at the defaults: the zero start
    np.testing.assert_array_equal(auto.coef_, _fit(X, y, 3, start="zero").coef_)


def test_start_refused_without_a_private_fit():
    X, y = _text(n=90)
    with pytest.raises(ValueError, match="start"):
        FrankWolfeLassoClassifier(start="naive_bayes", epsilon=None,
                                  classes=[0, 1, 2]).fit(X, y)


def test_small_classes_are_predicted_from_the_start():
    """Two classes with 8 % of the examples each and their own words: from the
    start they get more test predictions than from zero (epsilon 1, N 1,500,
    K 4; fixed seeds, so the comparison is deterministic)."""
    shares = [0.46, 0.38, 0.08, 0.08]
    X, y = _text(n=1500, K=4, shares=shares, seed=3)
    Xt, _ = _text(n=1000, K=4, shares=shares, seed=4)
    start = _fit(X, y, 4, epsilon=1.0, start="naive_bayes").predict(Xt)
    zero = _fit(X, y, 4, epsilon=1.0, start="zero").predict(Xt)
    assert np.sum(np.isin(start, [2, 3])) > 1.5 * np.sum(np.isin(zero, [2, 3]))


def test_k_class_start_refused_on_a_dask_array():
    """The distributed multinomial fit has no start: an explicit K-class start is
    refused there (before anything is released or charged) rather than ignored."""
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    X, y = _text(n=300)
    blocks = [da.from_delayed(dask.delayed(sp.csr_matrix)(X[i * 100:(i + 1) * 100]),
                              shape=(100, X.shape[1]), dtype=np.float64,
                              meta=sp.csr_matrix((0, 0))) for i in range(3)]
    Xd, yd = da.concatenate(blocks), da.from_array(y.astype(float), chunks=100)
    est = FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, n_samples_public=300,
                                    classes=[0, 1, 2], start="naive_bayes")
    with pytest.raises(ValueError, match="start='naive_bayes'.*Dask"):
        est.fit(Xd, yd)
    assert not hasattr(est, "coef_")
