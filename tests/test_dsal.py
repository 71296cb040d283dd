"""Tests of DSAL (Bao, Wu, Xian and Huang, IJCAI 2022): the sparse proximal kernel
against a pure-Python reference, the solvers against scikit-learn's Lasso, the safety
of the Gap Safe screening, the public engine interface, threads, and bad input.

Randomness: every stochastic test uses a fixed seed.  The solvers stop on a
duality-gap certificate, so their results do not depend on the seed beyond
rounding; the assertions compare certified objectives with margins far above
that (no statistical false-failure rate to state: a failure means a bug).
"""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso, LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from dptoolkit.dsal import _prox_fast
from dptoolkit.datasets import load_libsvm, load_text_corpus
from dptoolkit.linear_model import DSALLasso, ProxASAGALasso, ProxSVRGLasso
from dptoolkit.linear_model import lasso_alpha_max, lasso_duality_gap

# --------------------------------------------------------------------------
# pure-Python reference of one inner loop (one thread), written from the
# paper's eq. 4-6 / Algorithm 1 and Pedregosa et al.'s ProxASAGA
# --------------------------------------------------------------------------


def reference_epoch(data, indices, indptr, y, w, mem, gbar, dblock, block_of, block_ptr,
                    loss, penalty, method, step, alpha, n_iter, generator, row_weight=None,
                    alias_prob=None, alias_idx=None):
    """Return (w, mem, gbar) after ``n_iter`` steps; inputs are not modified."""
    w, mem, gbar = list(w), list(mem), list(gbar)
    n = len(indptr) - 1
    for _ in range(n_iter):
        draw = generator.random() * n
        i = min(int(draw), n - 1)
        if alias_prob is not None and draw - i >= alias_prob[i]:
            i = int(alias_idx[i])
        cols = [int(c) for c in indices[indptr[i]:indptr[i + 1]]]
        vals = [float(v) for v in data[indptr[i]:indptr[i + 1]]]
        w_hat = [w[j] for j in cols]
        z = 0.0
        for v, x in zip(vals, w_hat):
            z = z + v * x
        if loss == "squared":
            fp = z - y[i]
        else:
            fp = -y[i] / (1.0 + math.exp(y[i] * z))
        diff = fp if method == "sgd" else fp - mem[i]
        de = diff if row_weight is None else diff * row_weight[i]
        if penalty == "l1":
            for j, v, x in zip(cols, vals, w_hat):
                grad = de * v
                if method != "sgd":
                    grad = grad + dblock[j] * gbar[j]
                u = x - step * grad
                thr = step * alpha * dblock[j]
                w[j] = u - thr if u > thr else (u + thr if u < -thr else 0.0)
                if method == "saga":
                    gbar[j] = gbar[j] + diff * v * (1.0 / n)
        else:
            touched = []
            for j in cols:
                b = int(block_of[j])
                if b not in touched:
                    touched.append(b)
            for b in touched:
                bs, be = int(block_ptr[b]), int(block_ptr[b + 1])
                u = {}
                for j in range(bs, be):
                    u[j] = w[j]
                    if method != "sgd":
                        u[j] = u[j] - step * dblock[b] * gbar[j]
                for j, v in zip(cols, vals):
                    if block_of[j] == b:
                        u[j] = u[j] - step * de * v
                        if method == "saga":
                            gbar[j] = gbar[j] + diff * v * (1.0 / n)
                nrm = math.sqrt(sum(u[j] * u[j] for j in range(bs, be)))
                thr = step * alpha * dblock[b]
                scale = 0.0 if nrm <= thr else 1.0 - thr / nrm
                for j in range(bs, be):
                    w[j] = scale * u[j]
        if method == "saga":
            mem[i] = fp
    return np.array(w), np.array(mem), np.array(gbar)


def _random_kernel_inputs(seed, penalty, loss, n=25, p=18):
    rng = np.random.default_rng(seed)
    X = sp.random_array((n, p), density=0.3, rng=rng, format="csr")
    X.data = rng.standard_normal(X.nnz)
    X = sp.csr_array(X.toarray())
    X[3, :] = 0.0  # an empty row
    X = sp.csr_array(X.toarray())
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    if loss == "squared":
        y = rng.standard_normal(n)
    else:
        y = rng.choice([-1.0, 1.0], size=n)
    if penalty == "l1":
        block_ptr = np.arange(p + 1, dtype=np.int64)
    else:
        cuts = np.sort(rng.choice(np.arange(1, p), size=5, replace=False))
        block_ptr = np.concatenate([[0], cuts, [p]]).astype(np.int64)
    sizes = np.diff(block_ptr)
    block_of = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    dblock = rng.uniform(1.0, 3.0, size=sizes.size)
    w = rng.standard_normal(p) * 0.1
    w[rng.random(p) < 0.3] = 0.0
    mem = rng.standard_normal(n) * 0.1
    gbar = rng.standard_normal(p) * 0.1
    return X, y, w, mem, gbar, dblock, block_of, block_ptr


@pytest.mark.parametrize("sampling", ["uniform", "importance"])
@pytest.mark.parametrize("method", ["sgd", "svrg", "saga"])
@pytest.mark.parametrize("penalty", ["l1", "group_l1"])
@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_kernel_matches_reference(method, penalty, loss, sampling):
    X, y, w, mem, gbar, dblock, block_of, block_ptr = _random_kernel_inputs(
        7, penalty, loss)
    step, alpha, n_iter = 0.05, 0.3, 120
    weights = {}
    if sampling == "importance":
        prob = np.random.default_rng(2).random(X.shape[0]) + 0.1
        prob /= prob.sum()
        alias_prob, alias_idx = _prox_fast.build_alias(prob)
        weights = dict(row_weight=1.0 / (X.shape[0] * prob), alias_prob=alias_prob,
                       alias_idx=alias_idx)
    ref_w, ref_mem, ref_gbar = reference_epoch(
        X.data, X.indices, X.indptr, y, w, mem, gbar, dblock, block_of, block_ptr,
        loss, penalty, method, step, alpha, n_iter, np.random.default_rng(11), **weights)
    kw, kmem, kgbar = w.copy(), mem.copy(), gbar.copy()
    _prox_fast.sparse_prox_epoch(
        X.data, X.indices, X.indptr, y, kw, kmem, kgbar, dblock, block_of, block_ptr,
        _prox_fast.LOSS_CODES[loss], _prox_fast.PENALTY_CODES[penalty],
        _prox_fast.METHOD_CODES[method], step, alpha, n_iter, [np.random.default_rng(11)],
        **weights)
    np.testing.assert_allclose(kw, ref_w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(kmem, ref_mem, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(kgbar, ref_gbar, rtol=1e-12, atol=1e-15)
    assert not np.array_equal(kw, w)  # the loop did something


@pytest.mark.parametrize("penalty", ["l1", "group_l1"])
def test_kernel_step_touches_only_support(penalty):
    """One step changes only the support of the sampled row (l1) or the blocks it
    meets (group l1): the per-iteration cost is that of the sparse row."""
    X, y, w, mem, gbar, dblock, block_of, block_ptr = _random_kernel_inputs(
        3, penalty, "squared", n=40, p=60)
    n = X.shape[0]
    for seed in range(20):
        i = min(int(np.random.default_rng(seed).random() * n), n - 1)
        kw = w.copy()
        _prox_fast.sparse_prox_epoch(
            X.data, X.indices, X.indptr, y, kw, mem.copy(), gbar.copy(), dblock, block_of,
            block_ptr, 0, _prox_fast.PENALTY_CODES[penalty], 1, 0.1, 0.01, 1,
            [np.random.default_rng(seed)])
        cols = X.indices[X.indptr[i]:X.indptr[i + 1]]
        allowed = np.zeros(X.shape[1], dtype=bool)
        if penalty == "l1":
            allowed[cols] = True
        else:
            for b in np.unique(block_of[cols]):
                allowed[block_ptr[b]:block_ptr[b + 1]] = True
        assert np.array_equal(kw[~allowed], w[~allowed])


@pytest.mark.parametrize("penalty", ["l1", "group_l1"])
def test_kernel_propagates_nan(penalty):
    """A non-finite gradient must reach w (the step control then rejects the
    loop); the soft threshold must not turn NaN into 0."""
    X, y, w, mem, gbar, dblock, block_of, block_ptr = _random_kernel_inputs(
        4, penalty, "squared", n=40, p=60)
    gbar = np.full_like(gbar, np.nan)
    kw = w.copy()
    _prox_fast.sparse_prox_epoch(
        X.data, X.indices, X.indptr, y, kw, mem.copy(), gbar, dblock, block_of, block_ptr,
        0, _prox_fast.PENALTY_CODES[penalty], 1, 0.1, 0.01, 40, [np.random.default_rng(0)])
    changed = kw != w
    assert np.all(np.isnan(kw[changed | np.isnan(kw)]))
    assert np.isnan(kw).sum() >= 0.5 * np.count_nonzero(np.diff(X.tocsc().indptr))


def test_kernel_threads_run_and_split_work():
    X, y, w, mem, gbar, dblock, block_of, block_ptr = _random_kernel_inputs(
        5, "l1", "squared", n=200, p=50)
    kw = np.zeros_like(w)
    gens = np.random.default_rng(0).spawn(2)
    _prox_fast.sparse_prox_epoch(
        X.data, X.indices, X.indptr, y, kw, mem, gbar, dblock, block_of, block_ptr,
        0, 0, 1, 0.01, 0.01, 1000, gens)
    assert np.all(np.isfinite(kw)) and np.any(kw != 0)
    # each thread drew from its own generator: both advanced by ~500 draws
    fresh = np.random.default_rng(0).spawn(2)
    for g, f in zip(gens, fresh):
        f.random(500)
        assert g.random() == f.random()


def test_alias_table_is_exact():
    """The probability the alias table gives each row, computed exactly from the
    table, equals p (to rounding); and a seeded draw of 200,000 rows matches p
    (chi-square test at level 1e-6: false-failure rate 1e-6)."""
    from scipy.stats import chisquare
    rng = np.random.default_rng(4)
    p = rng.random(50) ** 3
    p[[3, 17]] = 0.0
    p /= p.sum()
    prob, alias = _prox_fast.build_alias(p)
    n = p.size
    implied = np.zeros(n)
    np.add.at(implied, np.arange(n), prob / n)
    np.add.at(implied, alias, (1.0 - prob) / n)
    np.testing.assert_allclose(implied, p, atol=1e-15)
    u = np.random.default_rng(5).random(200_000) * n
    i = np.minimum(u.astype(np.int64), n - 1)
    draws = np.where(u - i >= prob[i], alias[i], i)
    counts = np.bincount(draws, minlength=n)
    assert counts[3] == 0 and counts[17] == 0
    keep = p > 0
    assert chisquare(counts[keep], 200_000 * p[keep]).pvalue > 1e-6


def test_kernel_bad_input():
    X, y, w, mem, gbar, dblock, block_of, block_ptr = _random_kernel_inputs(1, "l1", "squared")
    args = [X.data, X.indices, X.indptr, y, w, mem, gbar, dblock, block_of, block_ptr]
    with pytest.raises(ValueError, match="unknown loss"):
        _prox_fast.sparse_prox_epoch(*args, 5, 0, 1, 0.1, 0.1, 10, [np.random.default_rng()])
    with pytest.raises(ValueError, match="generators"):
        _prox_fast.sparse_prox_epoch(*args, 0, 0, 1, 0.1, 0.1, 10, [])
    with pytest.raises(ValueError, match="one entry per row"):
        _prox_fast.sparse_prox_epoch(X.data, X.indices, X.indptr, y[:-1], w, mem, gbar, dblock,
                                     block_of, block_ptr, 0, 0, 1, 0.1, 0.1, 10,
                                     [np.random.default_rng()])


def test_matvec_kernels():
    rng = np.random.default_rng(0)
    A = sp.random_array((40, 30), density=0.2, rng=rng, format="csr")
    A.indices = A.indices.astype(np.int64)
    A.indptr = A.indptr.astype(np.int64)
    C = sp.csc_array(A)
    C.indices = C.indices.astype(np.int64)
    C.indptr = C.indptr.astype(np.int64)
    w, v = rng.standard_normal(30), rng.standard_normal(40)
    for n_jobs in (1, 2):
        out = np.empty(40)
        _prox_fast.compressed_matvec(A.data, A.indices, A.indptr, w, out, 1.0, n_jobs)
        np.testing.assert_allclose(out, A @ w, rtol=1e-12)
        out = np.empty(30)
        _prox_fast.compressed_matvec(C.data, C.indices, C.indptr, v, out, 0.5, n_jobs)
        np.testing.assert_allclose(out, 0.5 * (A.T @ v), rtol=1e-12)
    with pytest.raises(ValueError, match="out must have"):
        _prox_fast.compressed_matvec(A.data, A.indices, A.indptr, w, np.empty(3))


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def _sklearn_ready(X):
    """scikit-learn's Lasso takes sparse input with 32-bit indices only."""
    X = sp.csc_matrix(X)
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X


def _sklearn_lasso(X, y, alpha):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return Lasso(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=200_000).fit(
            _sklearn_ready(X), y).coef_


def _libsvm_pm1(data_file, name, n_features, n_rows=None):
    X, y = load_libsvm(data_file(name), n_features=n_features)
    if n_rows is not None:
        X, y = X[:n_rows], y[:n_rows]
    return sp.csr_array(X), 2.0 * y - 1.0  # {0, 1} -> -1/+1 regression targets


def _hashed_20news(data_file):
    """20news-bydate test split, comp.* (+1) against rec.* (-1), word unigrams
    hashed to 2^16 binary features (3545 documents)."""
    X, y, _ = load_text_corpus(data_file("text/20news-bydate.tar.xz"), "test",
                               n_features=2**16, ngram_range=(1, 1),
                               positive="comp.", negative="rec.")
    return sp.csr_array(X), 2.0 * y - 1.0


# --------------------------------------------------------------------------
# correctness against scikit-learn, certificates, screening safety
# --------------------------------------------------------------------------

def _check_against_sklearn(X, y, ratio, **kw):
    alpha = ratio * lasso_alpha_max(X, y)
    tol = 1e-8
    model = DSALLasso(alpha=alpha, tol=tol, random_state=0, **kw).fit(X, y)
    assert model.dual_gap_ <= tol * model.objective_
    coef_sk = _sklearn_lasso(X, y, alpha)
    p_sk = lasso_duality_gap(X, y, coef_sk, alpha)[0]
    p_ds, _, gap_full = lasso_duality_gap(X, y, model.coef_, alpha)
    assert abs(p_ds - model.objective_) <= 1e-12 * p_ds
    assert abs(p_ds - p_sk) <= 1e-5 * p_sk
    # no feature non-zero in scikit-learn's solution was screened out
    assert not np.any((coef_sk != 0) & ~model.active_features_)
    return model, coef_sk


@pytest.mark.parametrize("ratio", [0.5, 0.05])
def test_a9a_matches_sklearn(data_file, ratio):
    X, y = _libsvm_pm1(data_file, "a9a.bz2", 123, n_rows=6000)
    model, _ = _check_against_sklearn(X, y, ratio)
    assert model.active_set_size_[-1] < 123  # screening did remove features


def test_w8a_matches_sklearn(data_file):
    X, y = _libsvm_pm1(data_file, "w8a.bz2", 300, n_rows=8000)
    model, coef_sk = _check_against_sklearn(X, y, 0.05)
    assert model.active_set_size_[-1] < 300


def test_colon_cancer_matches_sklearn(data_file):
    X, y = _libsvm_pm1(data_file, "colon-cancer.bz2", 2000)
    # n = 62 rows, 2000 dense columns: longer inner loops amortise the full gradient
    model, _ = _check_against_sklearn(X, y, 0.3, n_inner=10 * X.shape[0])
    assert model.active_set_size_[-1] < 100


def test_20news_hashed_matches_sklearn(data_file):
    X, y = _hashed_20news(data_file)
    model, _ = _check_against_sklearn(X, y, 0.1, n_jobs=2)
    assert model.active_set_size_[-1] < 0.05 * X.shape[1]


@pytest.mark.parametrize("name,n_features,n_rows", [
    ("colon-cancer.bz2", 2000, None),
    ("a9a.bz2", 123, 3000),
    ("w8a.bz2", 300, 3000),
])
def test_screening_never_removes_an_active_feature(data_file, name, n_features, n_rows):
    """Over many alphas, including just below alpha_max, no feature that is
    non-zero in a high-accuracy scikit-learn solution is ever screened, and at the
    DSAL solution every screened feature has |x_j^T theta| < 1 (strictly
    inside the dual constraint, hence zero at the optimum)."""
    X, y = _libsvm_pm1(data_file, name, n_features, n_rows)
    n = X.shape[0]
    amax = lasso_alpha_max(X, y)
    ratios = [0.9999, 0.999, 0.99, 0.95, 0.8, 0.6, 0.45, 0.3, 0.2]
    if name != "colon-cancer.bz2":
        ratios += [0.1, 0.05]
    for ratio in ratios:
        alpha = ratio * amax
        model = DSALLasso(alpha=alpha, tol=1e-9, n_inner=max(n, 1000), random_state=1).fit(X, y)
        coef_sk = _sklearn_lasso(X, y, alpha)
        screened = ~model.active_features_
        assert not np.any((coef_sk != 0) & screened), ratio
        # dual point at the (certified) DSAL solution, over all features
        r = y - X @ model.coef_
        corr = np.abs(X.T @ r) / n
        theta_corr = corr / max(alpha, corr.max())
        assert np.all(theta_corr[screened] < 1.0)
        assert screened.sum() > 0


def test_alpha_above_alpha_max_screens_everything():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 20))
    y = rng.standard_normal(50)
    amax = lasso_alpha_max(X, y)
    np.testing.assert_allclose(amax, np.abs(X.T @ y).max() / 50)
    model = DSALLasso(alpha=1.01 * amax).fit(X, y)
    assert np.all(model.coef_ == 0)
    assert not model.active_features_.any()
    assert model.dual_gap_ <= 1e-12


def _synthetic(seed=0, n=300, p=80):
    rng = np.random.default_rng(seed)
    X = sp.random_array((n, p), density=0.15, rng=rng, format="csr")
    X.data = rng.standard_normal(X.nnz)
    w = np.zeros(p)
    w[:min(p, 6)] = [2.0, -1.5, 1.0, 0.5, -0.5, 0.25][:p]
    y = X @ w + 0.1 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("cls,kw", [
    (DSALLasso, {}),
    (DSALLasso, {"sampling": "uniform"}),
    (DSALLasso, {"n_jobs": 2}),
    (ProxSVRGLasso, {}),
    (ProxSVRGLasso, {"n_jobs": 2}),
    (ProxASAGALasso, {}),
    (ProxASAGALasso, {"sampling": "uniform"}),
    (ProxASAGALasso, {"n_jobs": 2}),
])
def test_solvers_agree_with_sklearn(cls, kw):
    X, y = _synthetic()
    alpha = 0.05 * lasso_alpha_max(X, y)
    model = cls(alpha=alpha, tol=1e-9, random_state=0, max_outer=2000, **kw).fit(X, y)
    coef_sk = _sklearn_lasso(X, y, alpha)
    p_sk = lasso_duality_gap(X, y, coef_sk, alpha)[0]
    assert model.dual_gap_ <= 1e-9 * model.objective_
    assert abs(model.objective_ - p_sk) <= 1e-7 * p_sk
    np.testing.assert_allclose(model.coef_, coef_sk, atol=1e-3)


def test_naive_variant_decreases_and_is_consistent():
    """Sha-DSAL-Naive (Algorithm 1) converges sublinearly: within a fixed budget
    it gets close to, but is not certified at, the optimum."""
    X, y = _synthetic(1)
    alpha = 0.1 * lasso_alpha_max(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        naive = DSALLasso(alpha=alpha, variance_reduction=False, working_set=False,
                          max_outer=60, random_state=0).fit(X, y)
    exact = DSALLasso(alpha=alpha, tol=1e-10, random_state=0).fit(X, y)
    assert naive.objective_history_[-1] < naive.objective_history_[0]
    assert np.all(np.diff(naive.objective_history_) <= 0)  # safeguarded: monotone
    assert naive.objective_ - exact.objective_ < 1e-2 * exact.objective_
    assert naive.objective_ >= exact.objective_ - exact.dual_gap_


@pytest.mark.parametrize("cls", [DSALLasso, ProxASAGALasso])
def test_step_safeguard_recovers_from_a_diverging_step(cls):
    """A step 1e4 times too large overflows the first inner loops: they are
    undone and the step halved until it works, silently (no RuntimeWarning),
    and the fit still certifies the optimum."""
    X, y = _synthetic(7)
    alpha = 0.1 * lasso_alpha_max(X, y)
    kw = {"working_set": False} if cls is DSALLasso else {}  # the stochastic loop's step
    ref = cls(alpha=alpha, tol=1e-8, random_state=0, **kw).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = cls(alpha=alpha, tol=1e-8, random_state=0, max_outer=2000,
                    step_size=1e4 * ref.step_size_, **kw).fit(X, y)
    assert model.n_step_halvings_ >= 10
    assert model.step_size_ <= 8 * ref.step_size_  # halved down to a working step
    assert model.dual_gap_ <= 1e-8 * model.objective_
    assert abs(model.objective_ - ref.objective_) <= 2e-8 * ref.objective_


def test_screening_shrinks_active_set_monotonically():
    X, y = _synthetic(2, n=400, p=300)
    alpha = 0.2 * lasso_alpha_max(X, y)
    model = DSALLasso(alpha=alpha, tol=1e-10, random_state=0).fit(X, y)
    sizes = model.active_set_size_
    assert np.all(np.diff(sizes) <= 0)
    assert sizes[-1] < 0.2 * 300
    assert sizes[-1] >= np.count_nonzero(model.coef_)
    assert len(model.gap_history_) == model.n_iter_ + 1


@pytest.mark.parametrize("cls", [DSALLasso, ProxSVRGLasso, ProxASAGALasso])
def test_warm_start_path(cls):
    """A decreasing path with warm_start=True certifies the same solutions as cold
    fits; refitting at the same alpha starts certified (no outer iteration); the
    path starts each fit with screening already effective."""
    X, y = _synthetic(3, n=300, p=200)
    amax = lasso_alpha_max(X, y)
    warm = cls(tol=1e-9, warm_start=True, random_state=0, max_outer=2000)
    for ratio in (0.5, 0.05, 0.04):
        alpha = ratio * amax
        warm.set_params(alpha=alpha).fit(X, y)
        cold = cls(alpha=alpha, tol=1e-9, random_state=0, max_outer=2000).fit(X, y)
        assert warm.dual_gap_ <= 1e-9 * warm.objective_
        assert abs(warm.objective_ - cold.objective_) <= 2e-9 * cold.objective_
        if cls is DSALLasso and ratio == 0.04:  # a close start: the first loop is screened
            assert warm.active_set_size_[0] < X.shape[1] == cold.active_set_size_[0]
    assert warm.fit(X, y).n_iter_ == 0  # the start is certified at this alpha
    # new data where a feature of the previous support never occurs: its
    # coefficient must not be carried over (no step would ever touch it)
    j = int(np.flatnonzero(warm.coef_)[0])
    X2 = X.tolil()
    X2[:, j] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        refit = warm.fit(sp.csr_array(X2), y)
    assert refit.coef_[j] == 0.0 and refit.dual_gap_ <= 1e-9 * refit.objective_
    with pytest.raises(ValueError, match="warm_start"):
        warm.fit(X[:, :50], y)  # coef_ of another shape
    with pytest.raises(TypeError, match="warm_start"):
        cls(alpha=0.1, warm_start="yes").fit(X, y)


# --------------------------------------------------------------------------
# logistic loss and group l1
# --------------------------------------------------------------------------

def test_logistic_matches_sklearn():
    rng = np.random.default_rng(0)
    n, p = 400, 60
    X = sp.random_array((n, p), density=0.2, rng=rng, format="csr")
    X.data = rng.standard_normal(X.nnz)
    labels = np.where(X @ np.r_[np.ones(5), np.zeros(p - 5)] + 0.3 * rng.standard_normal(n) > 0,
                      "yes", "no")
    amax = lasso_alpha_max(X, labels, loss="logistic")
    alpha = 0.1 * amax
    model = DSALLasso(alpha=alpha, loss="logistic", tol=1e-9, random_state=0).fit(X, labels)
    assert model.dual_gap_ <= 1e-9 * model.objective_
    assert set(model.predict(X)) <= {"yes", "no"}
    assert model.score(X, labels) > 0.8
    clf = LogisticRegression(C=1.0 / (n * alpha), l1_ratio=1.0, solver="liblinear",
                             fit_intercept=False, tol=1e-10, max_iter=10_000)
    clf.fit(_sklearn_ready(X), labels)
    p_sk = lasso_duality_gap(X, labels, clf.coef_.ravel(), alpha, loss="logistic")[0]
    assert model.objective_ <= p_sk + 1e-9
    assert abs(model.objective_ - p_sk) <= 1e-5 * p_sk
    assert not np.any((clf.coef_.ravel() != 0) & ~model.active_features_)


def _group_fista(X, y, alpha, groups, n_iter=20000):
    """Dense accelerated proximal gradient for the group Lasso (test reference)."""
    X = X.toarray() if sp.issparse(X) else X
    n = X.shape[0]
    L = np.linalg.norm(X, 2) ** 2 / n
    w = np.zeros(X.shape[1])
    v, t = w.copy(), 1.0
    for _ in range(n_iter):
        u = v - X.T @ (X @ v - y) / (n * L)
        w_new = np.zeros_like(u)
        for g in groups:
            nrm = np.linalg.norm(u[g])
            if nrm > alpha / L:
                w_new[g] = (1 - alpha / (L * nrm)) * u[g]
        t_new = (1 + math.sqrt(1 + 4 * t * t)) / 2
        v = w_new + (t - 1) / t_new * (w_new - w)
        w, t = w_new, t_new
    return w


@pytest.mark.parametrize("n_jobs,sampling", [(1, "importance"), (1, "uniform"),
                                             (2, "importance")])
def test_group_lasso(n_jobs, sampling):
    rng = np.random.default_rng(3)
    n, p = 200, 40
    X = sp.random_array((n, p), density=0.3, rng=rng, format="csr")
    X.data = rng.standard_normal(X.nnz)
    perm = rng.permutation(p)  # groups are not contiguous in the original order
    groups = [perm[k:k + 4] for k in range(0, p, 4)]
    w_true = np.zeros(p)
    w_true[groups[0]] = 1.0
    w_true[groups[3]] = -0.5
    y = X @ w_true + 0.1 * rng.standard_normal(n)
    amax = lasso_alpha_max(X, y, penalty="group_l1", groups=groups)
    assert np.isclose(amax, max(np.linalg.norm(X[:, g].T @ y) for g in groups) / n)
    alpha = 0.2 * amax
    model = DSALLasso(alpha=alpha, penalty="group_l1", groups=groups, tol=1e-10,
                      n_jobs=n_jobs, sampling=sampling, random_state=0).fit(X, y)
    assert model.dual_gap_ <= 1e-10 * model.objective_
    w_ref = _group_fista(X, y, alpha, groups)
    p_ref = lasso_duality_gap(X, y, w_ref, alpha, penalty="group_l1", groups=groups)[0]
    assert abs(model.objective_ - p_ref) <= 1e-6 * p_ref
    # whole groups are zero or not; no group non-zero at the optimum was screened
    for g in groups:
        nz = model.coef_[g] != 0
        assert nz.all() or not nz.any()
        if np.linalg.norm(w_ref[g]) > 1e-6:
            assert model.active_features_[g].all()
    assert not model.active_features_.all()


# --------------------------------------------------------------------------
# scikit-learn API, input formats, bad input
# --------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "coo", "lil", "dok", "bsr"])
def test_accepts_every_format(fmt):
    X, y = _synthetic(4, n=120, p=30)
    alpha = 0.1 * lasso_alpha_max(X, y)
    Xf = X.toarray() if fmt == "dense" else sp.csr_matrix(X).asformat(fmt)
    ref = DSALLasso(alpha=alpha, tol=1e-10, random_state=0).fit(X, y)
    model = DSALLasso(alpha=alpha, tol=1e-10, random_state=0).fit(Xf, y)
    np.testing.assert_allclose(model.coef_, ref.coef_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(model.predict(Xf), X @ model.coef_)
    assert model.n_features_in_ == 30


def test_input_is_not_modified():
    X, y = _synthetic(5, n=60, p=10)
    X = sp.csr_array(X)
    X.data[0] = 0.0  # an explicit zero
    data, indices = X.data.copy(), X.indices.copy()
    DSALLasso(alpha=0.01).fit(X, y)
    assert np.array_equal(X.data, data) and np.array_equal(X.indices, indices)


@pytest.mark.parametrize("alpha", [0.0, -1.0])
def test_bad_alpha(alpha):
    X, y = _synthetic(n=30, p=5)
    for cls in (DSALLasso, ProxSVRGLasso, ProxASAGALasso):
        with pytest.raises(ValueError, match="alpha"):
            cls(alpha=alpha).fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        DSALLasso(alpha=float("nan")).fit(X, y)
    with pytest.raises(TypeError, match="alpha"):
        DSALLasso(alpha="big").fit(X, y)


@pytest.mark.parametrize("n_jobs", [0, -1])
def test_bad_n_jobs(n_jobs):
    X, y = _synthetic(n=30, p=5)
    with pytest.raises(ValueError, match="n_jobs"):
        DSALLasso(alpha=0.1, n_jobs=n_jobs).fit(X, y)
    with pytest.raises(TypeError, match="n_jobs"):
        DSALLasso(alpha=0.1, n_jobs=1.5).fit(X, y)


@pytest.mark.parametrize("groups,match", [
    ([[0, 1], [1, 2, 3, 4]], "more than one group"),
    ([[0, 1], [2, 3]], "in no group"),
    ([[0, 1, 2], [], [3, 4]], "empty"),
    ([[0, 1, 2], [3, 4, 5]], "outside"),
    ([[0, 1, 2], [-1, 3, 4]], "outside"),
    ([], "at least one group"),
])
def test_groups_must_partition(groups, match):
    X, y = _synthetic(n=30, p=5)
    with pytest.raises(ValueError, match=match):
        DSALLasso(alpha=0.1, penalty="group_l1", groups=groups).fit(X, y)


def test_groups_type_and_consistency_errors():
    X, y = _synthetic(n=30, p=5)
    with pytest.raises(TypeError, match="groups"):
        DSALLasso(alpha=0.1, penalty="group_l1", groups=[[0, 1.5], [2, 3, 4]]).fit(X, y)
    with pytest.raises(ValueError, match="needs groups"):
        DSALLasso(alpha=0.1, penalty="group_l1").fit(X, y)
    with pytest.raises(ValueError, match="only used with"):
        DSALLasso(alpha=0.1, groups=[[0, 1, 2, 3, 4]]).fit(X, y)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_inf_rejected(bad):
    X, y = _synthetic(n=30, p=5)
    Xd = X.toarray()
    Xd[2, 3] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        DSALLasso(alpha=0.1).fit(Xd, y)
    Xs = sp.csr_array(X)
    Xs.data[0] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        DSALLasso(alpha=0.1).fit(Xs, y)
    yb = y.copy()
    yb[0] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        DSALLasso(alpha=0.1).fit(X, yb)


def test_other_bad_parameters():
    X, y = _synthetic(n=30, p=5)
    with pytest.raises(ValueError, match="loss"):
        DSALLasso(alpha=0.1, loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="penalty"):
        DSALLasso(alpha=0.1, penalty="l2").fit(X, y)
    with pytest.raises(ValueError, match="tol"):
        DSALLasso(alpha=0.1, tol=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="step_size"):
        DSALLasso(alpha=0.1, step_size=0.0).fit(X, y)
    with pytest.raises(ValueError, match="n_inner"):
        DSALLasso(alpha=0.1, n_inner=0).fit(X, y)
    with pytest.raises(ValueError, match="max_outer"):
        DSALLasso(alpha=0.1, max_outer=0).fit(X, y)
    with pytest.raises(ValueError, match="sampling"):
        DSALLasso(alpha=0.1, sampling="lipschitz").fit(X, y)
    with pytest.raises(TypeError, match="screening"):
        DSALLasso(alpha=0.1, screening="yes").fit(X, y)
    with pytest.raises(ValueError, match="two classes"):
        DSALLasso(alpha=0.1, loss="logistic").fit(X, np.arange(30) % 3)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        DSALLasso(alpha=0.1).fit(X, y[:-1])


def test_not_converged_warns():
    X, y = _synthetic(6)
    with pytest.warns(ConvergenceWarning, match="max_outer"):
        DSALLasso(alpha=0.01 * lasso_alpha_max(X, y), max_outer=1, n_inner=5).fit(X, y)


@parametrize_with_checks([DSALLasso(random_state=0), ProxSVRGLasso(random_state=0),
                          ProxASAGALasso(random_state=0)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_sklearn_clone_and_params():
    from sklearn.base import clone
    model = DSALLasso(alpha=0.3, n_jobs=2, screening=False)
    c = clone(model)
    assert c.get_params() == model.get_params()
    assert ProxSVRGLasso().get_params()["alpha"] == 1.0


# --------------------------------------------------------------------------
# Dis-DSAL helpers that need no MPI (dptoolkit.dsal.mpi)
# --------------------------------------------------------------------------

def test_distributed_step_quotas_follow_the_rows():
    """Quotas sum to n_inner, differ from n_inner n_k / n by less than 1, and
    equal it in expectation.  The mean over 20,000 seeded draws is checked to
    4 standard errors (sd <= 1/2): false-failure rate below 1e-4 per worker."""
    from dptoolkit.dsal.mpi import _split_rows, _step_quotas
    for n, k, n_inner in [(10, 3, 10), (1000, 3, 777), (7, 7, 3), (25000, 4, 25000),
                          (11, 3, 5), (9, 4, 1)]:
        splits = _split_rows(n, k)
        share = n_inner * np.array([b - a for a, b in splits]) / n
        rng = np.random.default_rng(0)
        draws = np.array([_step_quotas(n_inner, splits, n, rng) for _ in range(20_000)])
        assert np.all(draws.sum(axis=1) == n_inner)
        assert np.all(np.abs(draws - share) < 1)
        assert np.all(np.abs(draws.mean(axis=0) - share) <= 4 * 0.5 / np.sqrt(20_000))
        q = _step_quotas(n_inner, splits, n)
        assert q.sum() == n_inner and np.all(np.abs(q - share) < 1)


@pytest.mark.parametrize("sampling", ["uniform", "importance"])
def test_distributed_block_weights_are_those_of_the_joint_sampling(sampling):
    """d_B = 1 / P(row meets B) under the workers' joint sampling: every block met
    by some row gets E[d_B 1(row meets B)] = 1, also blocks one worker holds."""
    from dptoolkit.dsal.mpi import _split_rows, _system_sampling
    from dptoolkit.dsal._problem import ActiveProblem, prepare_problem, row_sampling
    X, y = _synthetic(4, n=90, p=40)
    X = X.toarray()
    X[:30, 35:] = 0.0
    X[30:, 30:35] = 0.0  # features 30-34 live in the first worker's rows only
    Xr, Xc, yv, _, blocks = prepare_problem(sp.csr_array(X), y, "squared", "l1", None)
    prob = ActiveProblem.full(Xr, Xc, blocks, "l1", sampling)
    splits = _split_rows(90, 3)
    dblock, l_eff, p = _system_sampling(prob, splits, sampling)
    assert abs(p.sum() - 1.0) < 1e-12
    for a, b in splits:  # each worker's own sampling, scaled by its share of the rows
        local, l_k = row_sampling(prob.row_sq[a:b], sampling)
        expect = np.full(b - a, 1.0 / (b - a)) if local is None else local
        np.testing.assert_allclose(p[a:b], expect * (b - a) / 90, rtol=1e-12)
        assert l_k <= l_eff
    meets = (Xr != 0).toarray()
    reach = meets.T @ p
    met = reach > 0
    np.testing.assert_allclose(dblock[met] * reach[met], 1.0, rtol=1e-12)
    assert np.all(dblock[~met] == 0)
    if sampling == "uniform":
        np.testing.assert_allclose(dblock[met], 90 / meets.sum(axis=0)[met], rtol=1e-12)


class _FakeStatus:
    def __init__(self):
        self.src, self.cnt = None, 0

    def Get_source(self):
        return self.src

    def Get_count(self, datatype):
        return self.cnt


class _FakeMPI:
    DOUBLE = None
    ANY_SOURCE = -1
    Status = _FakeStatus


class _FakeServerComm:
    """The server side of Dis-DSAL's inner loop against simulated workers: after a
    CONTINUE a worker is in flight; ``pick`` chooses whose increment arrives next
    (any asynchronous schedule).  Records, per arriving batch, how many batches of
    other workers arrived between its read and its return."""

    def __init__(self, pick, p):
        self.pick, self.p = pick, p
        self.inflight, self.arrivals, self.missed, self.stops = {}, [], [], []
        self.t = 0

    def bcast(self, obj, root=0):
        return obj

    def Bcast(self, buf, root=0):
        pass

    def Send(self, buf, dest, tag):
        from dptoolkit.dsal.mpi import _TAG_CONTINUE
        if tag == _TAG_CONTINUE:
            assert dest not in self.inflight
            self.inflight[dest] = self.t
        else:
            self.stops.append(dest)

    def Iprobe(self, source, tag, status):
        assert self.inflight, "deadlock: no worker in flight"
        status.src = self.pick(sorted(self.inflight))
        status.cnt = 2
        return True

    def Recv(self, buf, source, tag):
        read = self.inflight.pop(source)
        self.t += 1
        self.missed.append(sum(1 for k, t in self.arrivals if t > read and k != source))
        self.arrivals.append((source, self.t))
        buf[0][:] = [float(source % self.p), 1.0]  # worker k adds 1 to coordinate k % p


def test_distributed_inner_loop_schedules():
    """Dis-DSAL's server loop over 600 random asynchronous schedules (a slow
    worker, random quotas including zero): it always terminates, each worker
    returns ceil(quota / batch) batches and gets one STOP, all increments are
    applied, and no batch misses more than (2s + 1)(K - 1) batches of the others
    (the staleness the batch rule assumes).  Deterministic given the seed; the
    property must hold for every schedule, so there is no false-failure rate."""
    from dptoolkit.dsal.mpi import _server_inner
    rng = np.random.default_rng(7)
    for _ in range(600):
        n_workers = int(rng.integers(1, 6))
        bound = int(rng.integers(0, 4))
        batch = int(rng.integers(1, 5))
        quotas = rng.integers(0, 25, n_workers)
        quotas[rng.random(n_workers) < 0.2] = 0
        slow, p_slow = int(rng.integers(1, n_workers + 1)), float(rng.random())

        def pick(inflight):
            fast = [k for k in inflight if k != slow] or inflight
            return int(rng.choice(inflight if rng.random() < p_slow else fast))

        comm = _FakeServerComm(pick, 8)
        w = np.zeros(8)
        stats = {"messages": 0, "doubles_sent": 0, "doubles_received": 0, "held": 0}
        _server_inner(comm, _FakeMPI, w, np.zeros(8), np.zeros(8), 0.1, 0.1, batch,
                      list(quotas), bound, None, stats)
        assert stats["messages"] == sum(-(-int(q) // batch) for q in quotas)
        assert sorted(comm.stops) == list(range(1, n_workers + 1)) and not comm.inflight
        assert w.sum() == stats["messages"]
        if comm.missed:
            assert max(comm.missed) <= (2 * bound + 1) * (n_workers - 1)


# --------------------------------------------------------------------------
# the public engine interface (dptoolkit.dsal)
# --------------------------------------------------------------------------

def test_engine_benchmark_window_is_importable_documented_and_not_public():
    """The engine is private; the pieces the benchmarks time stay importable from
    dptoolkit.dsal (architecture rule 3), documented, and out of its __all__."""
    import dptoolkit.dsal as dsal_engine
    assert dsal_engine.__all__ == []
    for name in ("prepare_problem", "ActiveProblem", "Evaluation", "inner_epoch",
                 "solve_working_set"):
        obj = getattr(dsal_engine, name)
        assert obj.__doc__ and obj.__doc__.strip(), name
        assert f"``{name}``" in dsal_engine.__doc__, name


@pytest.mark.parametrize("method", ["sgd", "svrg", "saga"])
def test_engine_inner_epoch_is_the_kernel(method):
    """inner_epoch passes the problem's arrays and codes to the kernel unchanged."""
    from dptoolkit.dsal._outer import inner_epoch
    from dptoolkit.dsal._problem import ActiveProblem, prepare_problem
    from dptoolkit.dsal._screening import Evaluation
    X, y = _synthetic(3, n=120, p=30)
    Xr, Xc, yv, _, blocks = prepare_problem(X, y, "squared", "l1", None)
    prob = ActiveProblem.full(Xr, Xc, blocks, "l1", "importance")
    ev = Evaluation.local(prob, np.zeros(prob.n_features), yv, 0.01, "squared", "l1", 1)
    outs = []
    for run in range(2):
        w, mem, gbar = np.zeros(prob.n_features), ev.fp.copy(), ev.g.copy()
        if run == 0:
            inner_epoch(prob, yv, w, mem, gbar, loss="squared", penalty="l1", method=method,
                        step=0.5 / prob.l_max, alpha=0.01, n_steps=200,
                        generators=[np.random.default_rng(5)])
        else:
            _prox_fast.sparse_prox_epoch(
                prob.csr.data, prob.csr.indices, prob.csr.indptr, yv, w, mem, gbar,
                prob.dblock, prob.block_of, prob.block_ptr, _prox_fast.LOSS_CODES["squared"],
                _prox_fast.PENALTY_CODES["l1"], _prox_fast.METHOD_CODES[method],
                0.5 / prob.l_max, 0.01, 200, [np.random.default_rng(5)],
                **prob.sampling_kwargs())
        outs.append((w, mem, gbar))
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_engine_solve_is_what_fit_runs():
    """solve + expand_solution give the estimator's coef_ bit for bit (same seed)."""
    from dptoolkit.dsal._outer import solve
    from dptoolkit.dsal._problem import expand_solution, prepare_problem
    X, y = _synthetic(4, n=150, p=40)
    alpha = 0.05 * lasso_alpha_max(X, y)
    model = DSALLasso(alpha=alpha, working_set=False, random_state=0).fit(X, y)
    Xr, Xc, yv, _, blocks = prepare_problem(X, y, "squared", "l1", None)
    res = solve(Xr, Xc, yv, alpha, loss="squared", penalty="l1", blocks=blocks,
                method="svrg", screening=True, n_jobs=1, step_size=None, n_inner=yv.size,
                tol=1e-6, max_outer=500, generators=np.random.default_rng(0).spawn(1),
                sampling="importance")
    coef, active = expand_solution(blocks, res["problem"], res["w"], X.shape[1])
    np.testing.assert_array_equal(coef, model.coef_)
    np.testing.assert_array_equal(active, model.active_features_)
    assert res["n_iter"] == model.n_iter_


def test_duality_gap_refuses_non_finite_coef():
    from dptoolkit.linear_model import lasso_duality_gap

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 5))
    y = rng.normal(size=20)
    coef = np.zeros(5)
    coef[2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        lasso_duality_gap(X, y, coef, 0.1)


# --------------------------------------------------------------------------
# the working-set solver with dual extrapolation (Massias, Gramfort, Salmon,
# ICML 2018; Massias, Vaiter, Gramfort, Salmon, JMLR 2020)
# --------------------------------------------------------------------------

def reference_cd_epoch(X, y, w, alpha, lipschitz, block_ptr, loss):
    """One cyclic pass of proximal block coordinate descent, from the definition:
    the gradient recomputed from X w at every block, no maintained margins."""
    X = X.toarray()
    n = X.shape[0]
    w = np.array(w, dtype=float)
    for b in range(len(block_ptr) - 1):
        L = lipschitz[b]
        if L <= 0:
            continue
        cols = list(range(block_ptr[b], block_ptr[b + 1]))
        z = X @ w
        fp = z - y if loss == "squared" else -y / (1.0 + np.exp(y * z))
        u = w[cols] - X[:, cols].T @ fp / (n * L)
        nrm = np.linalg.norm(u)
        w[cols] = 0.0 if nrm <= alpha / L else (1.0 - alpha / (L * nrm)) * u
    return w


@pytest.mark.parametrize("loss", ["squared", "logistic"])
@pytest.mark.parametrize("penalty", ["l1", "group_l1"])
def test_cd_kernel_matches_reference(penalty, loss):
    X, y, w, _, _, _, _, block_ptr = _random_kernel_inputs(11, penalty, loss)
    Xc = sp.csc_array(X)
    Xc.indices = Xc.indices.astype(np.int64)
    Xc.indptr = Xc.indptr.astype(np.int64)
    n = X.shape[0]
    col_sq = np.asarray(Xc.multiply(Xc).sum(axis=0)).ravel()
    gamma = 1.0 if loss == "squared" else 4.0
    # Frobenius norms of the blocks bound their spectral norms: a valid step
    lips = np.add.reduceat(col_sq, block_ptr[:-1]) / (gamma * n)
    lips[0] = 0.0  # a skipped block keeps its value
    alpha = 0.05
    w_ker, z = w.copy(), X @ w
    for _ in range(3):
        _prox_fast.cd_epochs(Xc.data, Xc.indices, Xc.indptr, y, w_ker, z, lips, block_ptr,
                             _prox_fast.LOSS_CODES[loss], _prox_fast.PENALTY_CODES[penalty],
                             alpha, 1)
    w_ref = w.copy()
    for _ in range(3):
        w_ref = reference_cd_epoch(X, y, w_ref, alpha, lips, block_ptr, loss)
    np.testing.assert_allclose(w_ker, w_ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(z, X @ w_ker, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(w_ker[block_ptr[0]:block_ptr[1]], w[block_ptr[0]:block_ptr[1]])


def test_cd_kernel_bad_input():
    X, y, w, _, _, _, _, block_ptr = _random_kernel_inputs(0, "l1", "squared")
    Xc = sp.csc_array(X)
    Xc.indices = Xc.indices.astype(np.int64)
    Xc.indptr = Xc.indptr.astype(np.int64)
    lips = np.ones(w.size)
    args = (Xc.data, Xc.indices, Xc.indptr)
    with pytest.raises(ValueError, match="w must have"):
        _prox_fast.cd_epochs(*args, y, w[:-1], X @ w, lips, block_ptr, 0, 0, 0.1, 1)
    with pytest.raises(ValueError, match="block_ptr"):
        _prox_fast.cd_epochs(*args, y, w, X @ w, lips[:-1], block_ptr[:-1], 0, 0, 0.1, 1)
    with pytest.raises(ValueError, match="loss code"):
        _prox_fast.cd_epochs(*args, y, w, X @ w, lips, block_ptr, 7, 0, 0.1, 1)
    with pytest.raises(ValueError, match="n_epochs"):
        _prox_fast.cd_epochs(*args, y, w, X @ w, lips, block_ptr, 0, 0, 0.1, -1)


def test_extrapolation_is_anderson_and_accelerates_a_linear_iteration():
    """The weights minimise ||sum_k c_k (r_{k+1} - r_k)|| subject to sum_k c_k = 1
    (checked against the closed form of that constrained least-squares problem
    solved another way), and on r_{k+1} = r* + T (r_k - r*) whose T has 4 tight
    clusters of eigenvalues (a vector autoregressive sequence, Massias et al. 2020,
    Section 3) the extrapolation is 100 times closer to r* than the last iterate."""
    from _dsal_reference import extrapolate_residuals
    from dptoolkit.dsal._working_set import WS_K
    rng = np.random.default_rng(0)
    d = 20
    Q = np.linalg.qr(rng.standard_normal((d, d)))[0]
    eig = np.repeat([0.95, 0.8, 0.6, 0.3], d // 4) + rng.uniform(-1e-3, 1e-3, d)
    T = Q @ np.diag(eig) @ Q.T
    r_star = rng.standard_normal(d)
    r = [r_star + rng.standard_normal(d)]
    for _ in range(WS_K):
        r.append(r_star + T @ (r[-1] - r_star))
    r_acc, c = extrapolate_residuals(r)
    # the constrained least squares by elimination: c = (1 - sum(b), b)
    U = np.diff(np.asarray(r), axis=0)
    b = np.linalg.lstsq((U[1:] - U[0]).T, -U[0], rcond=None)[0]
    np.testing.assert_allclose(c, np.r_[1.0 - b.sum(), b], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(r_acc, c @ np.asarray(r[1:]))
    assert np.linalg.norm(r_acc - r_star) < 1e-2 * np.linalg.norm(r[-1] - r_star)
    # converged iterates: U^T U singular, no extrapolation
    assert extrapolate_residuals([r_star] * (WS_K + 1)) == (None, None)


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_extrapolated_dual_point_is_feasible_after_rescaling(data_file, loss):
    """Residuals of coordinate descent on a9a, extrapolated and rescaled over all
    features: the dual point satisfies ||X^T theta||_inf <= 1 and its objective is
    below every primal value (weak duality), and better than the plain residual's."""
    from _dsal_reference import dual_objective, extrapolate_residuals
    from dptoolkit.dsal._problem import Compressed, prepare_problem
    from dptoolkit.dsal._screening import loss_derivative
    from dptoolkit.dsal._working_set import WS_K
    X, y = _libsvm_pm1(data_file, "a9a.bz2", 123, n_rows=3000)
    alpha = 0.01 * lasso_alpha_max(X, y, loss=loss)
    Xr, Xc, yv, _, _ = prepare_problem(X, y, loss, "l1", None)
    csc = Compressed.of(Xc)
    n, p = Xr.shape
    gamma = 1.0 if loss == "squared" else 4.0
    lips = np.asarray(Xc.multiply(Xc).sum(axis=0)).ravel() / (gamma * n)
    w, z = np.zeros(p), np.zeros(n)
    residuals = []
    # past the identification of the support, where extrapolation pays (Massias et
    # al. 2020, Section 3); coordinate descent is deterministic
    _prox_fast.cd_epochs(csc.data, csc.indices, csc.indptr, yv, w, z, lips,
                         np.arange(p + 1, dtype=np.int64), _prox_fast.LOSS_CODES[loss], 0,
                         alpha, 100)
    for _ in range(WS_K + 1):
        _prox_fast.cd_epochs(csc.data, csc.indices, csc.indptr, yv, w, z, lips,
                             np.arange(p + 1, dtype=np.int64), _prox_fast.LOSS_CODES[loss],
                             0, alpha, 10)
        residuals.append(loss_derivative(z, yv, loss))
    r_acc, _ = extrapolate_residuals(residuals)
    primal = lasso_duality_gap(X, y, w, alpha, loss=loss)[0]
    duals = []
    for v in (r_acc, residuals[-1]):
        bd = np.abs(Xc.T @ v) / n
        dual, c = dual_objective(v, bd, yv, alpha, loss)
        theta = -c * v / (n * alpha)
        assert np.abs(Xc.T @ theta).max() <= 1.0 + 1e-12
        assert dual <= primal
        duals.append(dual)
    assert duals[0] > duals[1]


def test_dual_objective_refuses_points_outside_the_logistic_domain():
    from _dsal_reference import dual_objective
    y = np.array([1.0, -1.0, 1.0])
    v = np.array([-0.5, 0.5, 0.7])   # -v_3 y_3 < 0: f* is infinite there
    assert dual_objective(v, np.array([0.01]), y, 0.1, "logistic")[0] == -np.inf
    v[2] = -0.2
    assert np.isfinite(dual_objective(v, np.array([0.01]), y, 0.1, "logistic")[0])


def _working_set_fit(X, y, alpha, **kw):
    from dptoolkit.dsal._problem import prepare_problem
    from dptoolkit.dsal._working_set import solve_working_set
    Xr, Xc, yv, _, blocks = prepare_problem(X, y, kw.pop("loss", "squared"), "l1", None)
    return solve_working_set(Xc, yv, alpha, loss="squared", penalty="l1", blocks=blocks,
                             screening=True, n_jobs=1, **kw)


@pytest.mark.parametrize("ratio", [0.1, 0.01, 0.001])
def test_working_set_matches_sklearn_on_a9a(data_file, ratio):
    X, y = _libsvm_pm1(data_file, "a9a.bz2", 123, n_rows=8000)
    alpha = ratio * lasso_alpha_max(X, y)
    tol = 1e-8
    model = DSALLasso(alpha=alpha, tol=tol).fit(X, y)
    assert model.dual_gap_ <= tol * model.objective_
    coef_sk = _sklearn_lasso(X, y, alpha)
    p_sk = lasso_duality_gap(X, y, coef_sk, alpha)[0]
    # both within their certified gaps of the optimum
    assert abs(model.objective_ - p_sk) <= 2 * tol * p_sk
    assert not np.any((coef_sk != 0) & ~model.active_features_)
    assert model.working_set_size_.max() <= 123
    assert model.n_epochs_ > 0 and model.step_size_ is None


def test_working_set_matches_sklearn_on_text(data_file):
    """20 Newsgroups (comp.* against rec.*, 3545 documents, 2^16 hashed words) at
    0.01 alpha_max: same objective as scikit-learn, and the sub-problems work on a
    small fraction of the features."""
    X, y = _hashed_20news(data_file)
    alpha = 0.01 * lasso_alpha_max(X, y)
    tol = 1e-8
    model = DSALLasso(alpha=alpha, tol=tol, n_jobs=2).fit(X, y)
    assert model.dual_gap_ <= tol * model.objective_
    coef_sk = _sklearn_lasso(X, y, alpha)
    p_sk = lasso_duality_gap(X, y, coef_sk, alpha)[0]
    assert abs(model.objective_ - p_sk) <= 2 * tol * p_sk
    assert not np.any((coef_sk != 0) & ~model.active_features_)
    assert model.working_set_size_.max() < 0.2 * X.shape[1]
    assert np.all(np.diff(model.active_set_size_) <= 0)


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_working_set_gap_is_that_of_the_full_problem(loss):
    """The returned gap is P(w) - D(theta) for the returned dual point, which is
    feasible for every feature (not only the working set or the features left by
    screening), and it bounds the distance to a high-accuracy optimum."""
    from dptoolkit.dsal._problem import prepare_problem
    from dptoolkit.dsal._screening import conjugate_values
    from dptoolkit.dsal._working_set import solve_working_set
    X, y = _synthetic(8, n=300, p=250)
    target = y if loss == "squared" else np.where(y > 0, 1.0, -1.0)
    alpha = 0.02 * lasso_alpha_max(X, target, loss=loss)
    Xr, Xc, yv, _, blocks = prepare_problem(X, target, loss, "l1", None)
    n = yv.size
    res = solve_working_set(Xc, yv, alpha, loss=loss, penalty="l1", blocks=blocks,
                            screening=True, n_jobs=1, tol=1e-7, max_outer=100)
    assert res["converged"]
    assert res["ws_sizes"][0] < X.shape[1]       # a true working set at the start
    assert (~res["active"]).sum() > 0              # and screening removed features
    theta = res["dual_point"]
    assert np.abs(X.T @ theta).max() <= 1.0 + 1e-12   # over all features
    primal = lasso_duality_gap(X, target, res["w"], alpha, loss=loss)[0]
    dual = -conjugate_values(-n * alpha * theta, yv, loss, 1.0).sum() / n
    np.testing.assert_allclose(res["primal"], primal, rtol=1e-13)
    np.testing.assert_allclose(res["gap"], primal - dual, rtol=1e-8, atol=1e-15)
    assert res["gap"] <= 1e-7 * primal
    ref = DSALLasso(alpha=alpha, loss=loss, tol=1e-12, max_outer=200).fit(X, target)
    assert 0.0 <= primal - ref.objective_ + 1e-12 * primal <= res["gap"] + 1e-12 * primal


def test_working_set_and_stochastic_loop_agree():
    X, y = _synthetic(9, n=250, p=150)
    alpha = 0.03 * lasso_alpha_max(X, y)
    ws = DSALLasso(alpha=alpha, tol=1e-10).fit(X, y)
    sto = DSALLasso(alpha=alpha, tol=1e-10, working_set=False, random_state=0).fit(X, y)
    assert abs(ws.objective_ - sto.objective_) <= 2e-10 * sto.objective_
    np.testing.assert_allclose(ws.coef_, sto.coef_, atol=1e-4)
    assert np.array_equal(ws.working_set_size_, ws.working_set_size_)
    assert np.array_equal(sto.working_set_size_, sto.active_set_size_)


def test_working_set_primal_extrapolation_changes_only_the_path(data_file):
    """Anderson extrapolation of the primal iterates (Bertrand and Massias 2021) is
    accepted only when it lowers the objective: with and without it, the same
    certified solution; with it, fewer epochs on a9a at 0.001 alpha_max."""
    X, y = _libsvm_pm1(data_file, "a9a.bz2", 123, n_rows=8000)
    alpha = 0.001 * lasso_alpha_max(X, y)
    runs = [_working_set_fit(X, y, alpha, tol=1e-8, max_outer=100, accelerate=acc)
            for acc in (True, False)]
    for r in runs:
        assert r["converged"] and r["gap"] <= 1e-8 * r["primal"]
    assert abs(runs[0]["primal"] - runs[1]["primal"]) <= 2e-8 * runs[1]["primal"]
    assert runs[0]["n_epochs"] < runs[1]["n_epochs"]


@pytest.mark.parametrize("kw", [{"subproblem_solver": "svrg"},
                                {"subproblem_solver": "svrg", "n_jobs": 2},
                                {"subproblem_solver": "svrg", "loss": "logistic"}])
def test_working_set_with_svrg_sub_problems(kw):
    """DSAL's own screened SVRG loop as the sub-problem solver certifies the same
    solution as coordinate descent."""
    X, y = _synthetic(10, n=250, p=150)
    target = np.where(y > 0, 1.0, -1.0) if kw.get("loss") == "logistic" else y
    alpha = 0.03 * lasso_alpha_max(X, target, loss=kw.get("loss", "squared"))
    cd = DSALLasso(alpha=alpha, tol=1e-9, **{k: v for k, v in kw.items()
                                              if k == "loss"}).fit(X, target)
    svrg = DSALLasso(alpha=alpha, tol=1e-9, random_state=0, **kw).fit(X, target)
    assert svrg.dual_gap_ <= 1e-9 * svrg.objective_
    assert abs(svrg.objective_ - cd.objective_) <= 2e-9 * cd.objective_
    assert svrg.working_set_size_[0] < X.shape[1]


def test_working_set_parameters():
    X, y = _synthetic(n=40, p=8)
    with pytest.raises(ValueError, match="subproblem_solver"):
        DSALLasso(alpha=0.1, subproblem_solver="newton").fit(X, y)
    with pytest.raises(TypeError, match="working_set"):
        DSALLasso(alpha=0.1, working_set="yes").fit(X, y)
    with pytest.raises(ValueError, match="variance_reduction=False.*working_set=False"):
        DSALLasso(alpha=0.1, variance_reduction=False).fit(X, y)


# --------------------------------------------------------------------------
# the working-set kernel against the pure-Python reference (tests/_dsal_reference.py)
# --------------------------------------------------------------------------

def _both_loops(X, y, alpha, loss, penalty="l1", groups=None, **kw):
    """(targets, [reference result, kernel result]) of the same problem."""
    import _dsal_reference
    from dptoolkit.dsal._problem import prepare_problem
    from dptoolkit.dsal._working_set import solve_working_set
    _, Xc, yv, _, blocks = prepare_problem(X, y, loss, penalty, groups, csr=False)
    common = dict(loss=loss, penalty=penalty, blocks=blocks, **kw)
    return yv, [_dsal_reference.solve_working_set(Xc, yv, alpha, **common),
                solve_working_set(Xc, yv, alpha, n_jobs=1, **common)]


def _check_certificate(X, target, yv, alpha, loss, res, tol, penalty="l1", groups=None):
    """The certificate, recomputed from the returned point and dual point: the
    dual point is feasible over every feature and the gap is P(w) - D(theta)."""
    from dptoolkit.dsal._problem import prepare_problem
    from dptoolkit.dsal._screening import block_norms, conjugate_values
    n = yv.size
    theta = res["dual_point"]
    if penalty == "l1":
        w = res["w"]
        assert np.abs(X.T @ theta).max() <= 1.0 + 1e-12
    else:
        blocks = prepare_problem(X, target, loss, penalty, groups, csr=False)[4]
        w = np.zeros(X.shape[1])
        w[blocks.perm] = res["w"]
        corr = np.asarray(X.T @ theta)[blocks.perm]
        assert block_norms(corr, blocks.ptr, penalty).max() <= 1.0 + 1e-12
    primal = lasso_duality_gap(X, target, w, alpha, loss=loss, penalty=penalty,
                               groups=groups)[0]
    dual = -conjugate_values(-n * alpha * theta, yv, loss, 1.0).sum() / n
    np.testing.assert_allclose(res["primal"], primal, rtol=1e-13)
    np.testing.assert_allclose(res["gap"], primal - dual, rtol=1e-8, atol=1e-15)
    assert res["gap"] <= tol * primal


@pytest.mark.parametrize("loss", ["squared", "logistic"])
@pytest.mark.parametrize("screening", [True, False])
@pytest.mark.parametrize("ratio", [0.1, 0.01])
def test_working_set_kernel_matches_reference(loss, screening, ratio):
    """The kernel runs the steps of the pure-Python reference.  Squared loss: the
    same working sets, sub-problem epochs and screened features, the same
    objectives and gap to rounding.  Logistic loss: the small linear systems of
    the Anderson extrapolation are ill-conditioned near convergence, so their
    solutions (LAPACK there, elimination in the kernel) differ by more than the
    rounding of the sums and an extrapolation can be taken in one loop and not in
    the other; both certify the gap and agree on the objective within it.  In
    both cases the certificate holds for the dual point returned (feasible over
    every feature)."""
    X, y = _synthetic(11, n=300, p=120)
    target = y if loss == "squared" else np.where(y > 0, 1.0, -1.0)
    alpha = ratio * lasso_alpha_max(X, target, loss=loss)
    yv, (ref, fast) = _both_loops(X, target, alpha, loss, screening=screening, tol=1e-8,
                                  max_outer=100)
    assert ref["converged"] and fast["converged"]
    if loss == "squared":
        for key in ("n_iter", "n_epochs", "ws_sizes", "ws_epochs", "active_sizes", "active"):
            assert np.array_equal(ref[key], fast[key]), key
        np.testing.assert_allclose(fast["w"], ref["w"], rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(fast["primals"], ref["primals"], rtol=1e-12)
        assert abs(fast["gap"] - ref["gap"]) <= 1e-12 * ref["primal"]
    else:
        assert np.array_equal(ref["ws_sizes"][:4], fast["ws_sizes"][:4])
        np.testing.assert_allclose(fast["primals"][0], ref["primals"][0], rtol=1e-13)
        np.testing.assert_allclose(fast["gaps"][0], ref["gaps"][0], rtol=1e-12)
    assert abs(fast["primal"] - ref["primal"]) <= 1e-8 * ref["primal"]
    assert fast["times"].shape == fast["gaps"].shape == (fast["n_iter"] + 1,)
    assert np.all(np.diff(fast["times"]) >= 0.0)
    _check_certificate(X, target, yv, alpha, loss, fast, 1e-8)


@pytest.mark.parametrize("loss", ["squared", "logistic"])
@pytest.mark.parametrize("ratio", [0.3, 0.05])
def test_working_set_kernel_matches_reference_group_l1(loss, ratio):
    """Group l1 (blocks of 1 to 7 columns, in a shuffled order): the kernel's
    block steps, block dual norms and block priorities are those of the reference;
    the same working sets and objectives to rounding (squared loss), the same
    certified optimum within the gap (both losses)."""
    X, y = _synthetic(17, n=250, p=90)
    target = y if loss == "squared" else np.where(y > 0, 1.0, -1.0)
    rng = np.random.default_rng(17)
    perm = rng.permutation(90)
    cuts = np.sort(rng.choice(np.arange(1, 90), size=20, replace=False))
    groups = [g.tolist() for g in np.split(perm, cuts)]
    alpha = ratio * lasso_alpha_max(X, target, loss=loss, penalty="group_l1", groups=groups)
    yv, (ref, fast) = _both_loops(X, target, alpha, loss, "group_l1", groups,
                                  screening=True, tol=1e-9, max_outer=100)
    assert ref["converged"] and fast["converged"]
    assert np.array_equal(ref["ws_sizes"][:3], fast["ws_sizes"][:3])
    if loss == "squared":
        for key in ("n_iter", "ws_sizes", "active_sizes", "active"):
            assert np.array_equal(ref[key], fast[key]), key
        np.testing.assert_allclose(fast["primals"], ref["primals"], rtol=1e-11)
    assert abs(fast["primal"] - ref["primal"]) <= 1e-9 * ref["primal"]
    assert fast["ws_sizes"][0] < X.shape[1]
    _check_certificate(X, target, yv, alpha, loss, fast, 1e-9, "group_l1", groups)


@pytest.mark.parametrize("name,n_features", [("australian.bz2", 14), ("housing.bz2", 13),
                                             ("a1a.bz2", 123)])
@pytest.mark.parametrize("ratio", [0.1, 0.01, 0.001])
def test_working_set_kernel_on_small_libsvm_sets(data_file, name, n_features, ratio):
    """On the small LIBSVM sets (explicit zeros, collinear one-hot columns), the
    kernel and the reference certify the relative gap and agree on the objective
    within it; the estimator's result is the kernel's exactly."""
    X, y = load_libsvm(data_file(name), n_features=n_features)
    X = sp.csr_array(X)
    if set(np.unique(y)) <= {0.0, 1.0}:
        y = 2.0 * y - 1.0
    alpha = ratio * lasso_alpha_max(X, y)
    _, (ref, fast) = _both_loops(X, y, alpha, "squared", screening=True, tol=1e-7,
                                 max_outer=200)
    for r in (ref, fast):
        assert r["converged"] and r["gap"] <= 1e-7 * r["primal"]
    assert abs(fast["primal"] - ref["primal"]) <= 1e-7 * ref["primal"]
    model = DSALLasso(alpha=alpha, tol=1e-7, max_outer=200).fit(X, y)
    assert model.n_iter_ == fast["n_iter"] and model.n_epochs_ == fast["n_epochs"]
    np.testing.assert_array_equal(model.coef_, fast["w"])   # l1: identity permutation
    assert model.dual_gap_ == fast["gap"]


def test_working_set_kernel_warm_start_and_cap():
    X, y = _synthetic(12, n=200, p=60)
    alpha = 0.01 * lasso_alpha_max(X, y)
    _, (cold_ref, cold) = _both_loops(X, y, alpha, "squared", screening=True, tol=1e-9,
                                      max_outer=100)
    # a warm start at the solution certifies at once, in both
    for warm in _both_loops(X, y, alpha, "squared", screening=True, tol=1e-9,
                            max_outer=100, w_init=cold["w"])[1]:
        assert warm["converged"] and warm["n_iter"] == 0
    # the cap on the outer iterations binds the same way
    for r in _both_loops(X, y, alpha, "squared", screening=True, tol=1e-14, max_outer=2)[1]:
        assert not r["converged"] and r["n_iter"] == 2 and r["gaps"].size == 3


def test_working_set_kernel_threads_do_not_change_the_result():
    """Above 100,000 non-zeros the full-problem passes run on n_jobs threads, one
    column each: the result is the same bit for bit for any n_jobs."""
    from dptoolkit.dsal._problem import COMPILED_LOOP_MAX_NNZ, prepare_problem
    from dptoolkit.dsal._working_set import solve_working_set
    X, y = _synthetic(16, n=1500, p=500)
    _, Xc, yv, _, blocks = prepare_problem(X, y, "squared", "l1", None, csr=False)
    assert Xc.nnz >= COMPILED_LOOP_MAX_NNZ
    alpha = 0.05 * lasso_alpha_max(X, y)
    kw = dict(loss="squared", penalty="l1", blocks=blocks, screening=True, tol=1e-8,
              max_outer=100)
    one, two = (solve_working_set(Xc, yv, alpha, n_jobs=n_jobs, **kw) for n_jobs in (1, 2))
    np.testing.assert_array_equal(one["w"], two["w"])
    assert one["n_epochs"] == two["n_epochs"] and one["gap"] == two["gap"]
    assert one["converged"]


def test_working_set_kernel_bad_input():
    from dptoolkit.dsal._problem import block_opnorms, prepare_problem
    X, y = _synthetic(12, n=50, p=20)
    _, Xc, yv, _, blocks = prepare_problem(X, y, "squared", "l1", None, csr=False)
    args = [Xc.data, Xc.indices.astype(np.int64), Xc.indptr.astype(np.int64), yv,
            np.zeros(20), blocks.ptr, block_opnorms(Xc, blocks.ptr, "l1"), 0.1, 0, 0,
            True, 1e-6, 10, 10, 100, True, True, 5, 10, 0.3, 1e-9, 1.0, 0.0]
    with pytest.raises(ValueError, match="w must have"):
        _prox_fast.working_set(*args[:4], np.zeros(19), *args[5:])
    with pytest.raises(ValueError, match="block_ptr"):
        _prox_fast.working_set(*args[:5], blocks.ptr[:-1], *args[6:])
    with pytest.raises(ValueError, match="one block per column"):
        _prox_fast.working_set(*args[:5], np.array([0, 10, 20]), np.ones(2), *args[7:])
    with pytest.raises(ValueError, match="n_jobs"):
        _prox_fast.working_set(*args, 0)
    with pytest.raises(ValueError, match="subsolve must return"):
        _prox_fast.working_set(*args, 1, lambda ws, w_ws, tol, primal: (np.zeros(3), 1))


def test_compressed_transpose_matches_scipy():
    rng = np.random.default_rng(13)
    X = sp.random_array((40, 25), density=0.3, rng=rng, format="csr")
    X.data[::4] = 0.0    # explicit zeros are dropped
    data, indices, indptr = _prox_fast.compressed_transpose(
        X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64), 25)
    ref = sp.csc_array(X)
    ref.eliminate_zeros()
    ref.sort_indices()
    assert indices.dtype == indptr.dtype == np.int64
    np.testing.assert_array_equal(indptr, ref.indptr)
    np.testing.assert_array_equal(indices, ref.indices)
    np.testing.assert_array_equal(data, ref.data)
    X.data[3] = np.nan
    assert _prox_fast.compressed_transpose(X.data, X.indices.astype(np.int64),
                                           X.indptr.astype(np.int64), 25) is None
    with pytest.raises(ValueError, match="outside"):
        _prox_fast.compressed_transpose(np.ones(2), np.array([0, 30]), np.array([0, 2]), 25)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_prepare_problem_canonical_csc_of_csr_and_csc(fmt):
    """The direct conversion of canonical CSR/CSC input gives the matrix
    check_sparse_X gives (no explicit zeros, int64 indices), and leaves X alone."""
    from dptoolkit._validation import check_sparse_X
    from dptoolkit.dsal._problem import prepare_problem
    X, y = _synthetic(14, n=50, p=20)
    X = sp.csr_array(X).asformat(fmt)
    X.data[::5] = 0.0
    before = X.data.copy()
    Xc = prepare_problem(X, y, "squared", "l1", None, csr=False)[1]
    (ref,) = check_sparse_X(X, formats=("csc",))
    ref = ref.copy()
    ref.eliminate_zeros()
    assert Xc.indices.dtype == Xc.indptr.dtype == np.int64 and not np.any(Xc.data == 0)
    np.testing.assert_array_equal(Xc.indptr, ref.indptr)
    np.testing.assert_array_equal(Xc.indices, ref.indices)
    np.testing.assert_array_equal(Xc.data, ref.data)
    np.testing.assert_array_equal(X.data, before)
    X.data[1] = np.inf
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        prepare_problem(X, y, "squared", "l1", None, csr=False)


def test_fit_validates_plain_input_once_and_keeps_sklearn_attributes():
    """Sparse or ndarray X with a 1-D numeric y skip scikit-learn's validate_data
    (checked once, in prepare_problem): same model, n_features_in_ set, and a
    feature_names_in_ of an earlier fit on named columns removed."""
    pd = pytest.importorskip("pandas")
    X, y = _synthetic(15, n=80, p=6)
    alpha = 0.05 * lasso_alpha_max(X, y)
    frame = pd.DataFrame(X.toarray(), columns=[f"f{j}" for j in range(6)])
    model = DSALLasso(alpha=alpha, tol=1e-10).fit(frame, list(y))
    assert list(model.feature_names_in_) == list(frame.columns)
    coef = model.coef_.copy()
    model.fit(X, y)
    assert not hasattr(model, "feature_names_in_") and model.n_features_in_ == 6
    np.testing.assert_allclose(model.coef_, coef, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="y contains NaN or infinity"):
        DSALLasso(alpha=alpha, loss="logistic").fit(X, np.where(y > 0, 1.0, np.nan))
