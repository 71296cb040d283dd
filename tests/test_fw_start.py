"""Frank-Wolfe from a starting point: the kernels' ``set_start`` (step size
2/(t + t0 + 2)) and the estimator's ``start="naive_bayes"``, a post-processing of
the candidate screening's release of the per-class sums."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dptoolkit.accounting.events import GaussianEvent
from dptoolkit.linear_model import FrankWolfeLassoClassifier
from dptoolkit.linear_model._frank_wolfe import _estimator as fw_estimator, _fw_fast
from dptoolkit.linear_model._frank_wolfe._screening import (START_MAX_COORDINATES,
                                                            naive_bayes_start,
                                                            screening_statistic, start_steps)

D_TEXT = 3000   # more than the 1024 candidates of k="auto"


def _text(n=600, d=D_TEXT, seed=0, row_nnz=12):
    """Binary rows of exactly ``row_nnz`` words (equal row norms), frequent words
    shared by both classes and 20 words of each class."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    rows = []
    p = 1.0 / np.arange(1, d + 1)          # Zipf-like frequencies
    p /= p.sum()
    for i in range(n):
        informative = rng.choice(20, 3, replace=False) + (20 * y[i])
        rest = rng.choice(np.arange(40, d), row_nnz - 3, replace=False, p=p[40:] / p[40:].sum())
        rows.append(np.concatenate([informative, rest]))
    indices = np.concatenate(rows)
    X = sp.csr_array((np.ones(indices.size), indices, np.arange(0, n * row_nnz + 1, row_nnz)),
                     shape=(n, d))
    X.sort_indices()
    return X, y.astype(float)


def _kernels(X, y, selector, coef, seed, dtype=np.int64):
    Xc = X.tocsc()
    args = (X.data, X.indices.astype(dtype), X.indptr.astype(np.int64), Xc.data,
            Xc.indices.astype(dtype), Xc.indptr.astype(np.int64), y, 5.0, selector, coef)
    return (_fw_fast.StandardFW(*args, np.random.default_rng(seed).bit_generator),
            _fw_fast.FastFW(*args, np.random.default_rng(seed).bit_generator, refresh_tol=0.0))


@pytest.mark.parametrize("selector, coef", [(_fw_fast.SELECTOR_CODES["argmax"], 0.0),
                                            (_fw_fast.SELECTOR_CODES["exponential"], 0.05)])
def test_kernels_agree_from_a_start(selector, coef):
    """From the same start and t0, the standard solver and the fast one refreshed
    every step (refresh_tol=0) take the same steps (the fast one's margins start at
    X w0, its support at the non-zeros of w0)."""
    X, y = _text(n=300, d=400)
    w0 = np.zeros(400)
    w0[[0, 3, 25, 100]] = [1.5, -0.5, 1.0, 0.25]
    std, fast = _kernels(X, y, selector, coef, seed=1)
    for k in (std, fast):
        k.set_start(w0, 17.0)
        assert k.t_offset == 17.0
        gaps = np.zeros(60)
        assert k.run(60, gaps) == 60
    np.testing.assert_allclose(fast.coef(), std.coef(), rtol=1e-10, atol=1e-12)
    # a start coordinate never chosen keeps the weight
    # prod_{t=1}^{T} (1 - 2/(t + t0 + 2)) = (t0+1)(t0+2)/((T+t0+1)(T+t0+2))
    weight = 18.0 * 19.0 / (78.0 * 79.0)
    kept = [j for j in np.flatnonzero(w0)
            if np.isclose(std.coef()[j], weight * w0[j], rtol=1e-12)]
    assert kept


def test_zero_start_is_the_former_path():
    """set_start(0, t0=0) changes nothing, bit for bit (the default fits are those
    of the zero start)."""
    X, y = _text(n=300, d=400)
    code = _fw_fast.SELECTOR_CODES["exponential"]
    a, b = _kernels(X, y, code, 0.05, seed=3), _kernels(X, y, code, 0.05, seed=3)
    for k in b:
        k.set_start(np.zeros(400), 0.0)
    for ka, kb in zip(a, b):
        ga, gb = np.zeros(40), np.zeros(40)
        ka.run(40, ga)
        kb.run(40, gb)
        assert ka.coef().tobytes() == kb.coef().tobytes()
        assert ga.tobytes() == gb.tobytes()


def test_set_start_checks():
    X, y = _text(n=100, d=200)
    for k in _kernels(X, y, _fw_fast.SELECTOR_CODES["argmax"], 0.0, seed=0):
        with pytest.raises(ValueError, match="entries"):
            k.set_start(np.zeros(199), 0.0)
        with pytest.raises(ValueError, match="L1 ball"):
            k.set_start(np.full(200, 0.1), 0.0)      # ||w0||_1 = 20 > 5
        with pytest.raises(ValueError, match="L1 ball"):
            k.set_start(np.full(200, np.nan), 0.0)
        with pytest.raises(ValueError, match="t_offset"):
            k.set_start(np.zeros(200), -1.0)
        k.run(1, np.zeros(1))
        with pytest.raises(ValueError, match="before the first step"):
            k.set_start(np.zeros(200), 0.0)


def test_naive_bayes_start_shape():
    """The start from given (noisy) per-class sums: the log-count ratios over the
    candidates above the threshold, on the L1 sphere of radius l1_bound; 0 elsewhere,
    and the zero vector when no candidate passes."""
    sums = np.array([[50.0, 10.0, 40.0, 3.0, 0.0],
                     [10.0, 50.0, 40.0, 3.0, 0.0]])
    columns = np.array([0, 1, 2, 3])
    w0 = naive_bayes_start(sums, columns, l1_bound=2.0, noise_std=1.0)
    assert w0.shape == (4,)
    assert np.isclose(np.abs(w0).sum(), 2.0)
    assert w0[0] < 0 < w0[1] and np.isclose(w0[0], -w0[1])
    assert w0[2] == 0.0          # same share of both classes
    assert w0[3] == 0.0          # column sum 6 < 4 * sqrt(2) * 1: not kept
    p = (sums[:, :3] + 1.0) / (sums[:, :3] + 1.0).sum(axis=1, keepdims=True)
    r = np.log(p[1]) - np.log(p[0])
    np.testing.assert_allclose(w0[:3], 2.0 * r / np.abs(r).sum())
    assert not naive_bayes_start(sums, columns, 2.0, noise_std=100.0).any()


class _Recorder:
    """Stands in for a kernel: records set_start's arguments, runs the real one."""

    def __init__(self, kernel, log):
        self._kernel, self._log = kernel, log

    def set_start(self, w0, t_offset):
        self._log.append((np.array(w0), t_offset))
        self._kernel.set_start(w0, t_offset)

    def __getattr__(self, name):
        return getattr(self._kernel, name)


@pytest.fixture
def recorded_starts(monkeypatch):
    log = []
    make = fw_estimator._kernels.make_kernel

    def make_recorded(**kw):
        kernel, spec = make(**kw)
        return _Recorder(kernel, log), spec

    monkeypatch.setattr(fw_estimator._kernels, "make_kernel", make_recorded)
    return log


def _fit(X, y, **kw):
    params = dict(epsilon=2.0, delta=1e-5, n_samples_public=X.shape[0], classes=[0.0, 1.0],
                  random_state=0, start="naive_bayes")
    params.update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # the fixed seed's PrivacyLeakWarning
        return FrankWolfeLassoClassifier(**params).fit(X, y)


@pytest.mark.parametrize("solver", ["fast", "standard"])
def test_start_is_post_processing_of_the_release(recorded_starts, solver):
    """The start is naive_bayes_start of the released per-class sums (the
    screening's Gaussian draw, replayed from the seed), with t0 = max_iter
    nnz(w0) / 4 (at most 1024 candidates: below the cap); the candidates are the top of the sums' column sums."""
    X, y = _text()
    est = _fit(X, y, solver=solver, epsilon=8.0)
    (w0, t0), = recorded_starts
    budget = est.budget(D_TEXT)
    sums = screening_statistic(X, "mass", y.astype(np.int64), 2, class_sums=True)
    rng = np.random.default_rng(0)
    sums += rng.normal(0.0, budget.screening_noise_multiplier, sums.shape)
    columns = np.sort(np.argsort(-sums.sum(axis=0), kind="stable")[:1024])
    np.testing.assert_array_equal(est.screened_features_, columns)
    expected = naive_bayes_start(sums, columns, est.l1_bound_,
                                 budget.screening_noise_multiplier)
    np.testing.assert_array_equal(w0, expected)
    assert np.abs(w0).sum() == pytest.approx(est.l1_bound_) and (w0 != 0).sum() > 10
    assert t0 == est.n_iter_ * np.count_nonzero(w0) / 4
    assert np.abs(est.coef_).sum() <= est.l1_bound_ * (1 + 1e-12)


def test_start_steps_rule():
    """t0 "auto" = T nnz(w0) / 4 for starts of at most START_MAX_COORDINATES
    coordinates (the former rule), capped at T START_MAX_COORDINATES / 4 for denser
    ones (the former rule gave T nnz(w0) / 4, e.g. 4e6 for 4,000 coordinates and
    T = 4,000); a given t0 is kept."""
    assert START_MAX_COORDINATES == 1024
    w0 = np.zeros(5000)
    w0[:300] = 1.0
    assert start_steps(40, w0) == 40 * 300 / 4
    w0[:1024] = 1.0
    assert start_steps(40, w0) == 40 * 1024 / 4
    w0[:] = 1.0
    assert start_steps(4000, w0) == 4000 * 1024 / 4 == 1_024_000
    assert start_steps(4000, w0, given=7) == 7.0
    assert start_steps(4000, np.zeros(10)) == 0.0


def test_dense_start_keeps_the_steps_weight(recorded_starts):
    """A start denser than the cap (more than 1024 of 1,200 candidates kept at a
    large epsilon) counts as T 1024 / 4 steps in the fit, so the T steps keep about
    1 - (256/257)^2 = 1/128 of the weight of w_T (the former rule: T nnz(w0) / 4)."""
    X, y = _text(n=3000, d=1500, row_nnz=40)
    est = _fit(X, y, epsilon=20.0, k=1200, max_iter=50)
    (w0, t0), = recorded_starts
    assert np.count_nonzero(w0) > START_MAX_COORDINATES
    assert t0 == est.n_iter_ * START_MAX_COORDINATES / 4
    weight = (t0 + 1) * (t0 + 2) / ((t0 + 51) * (t0 + 52))
    assert 1.0 - weight > 0.0075      # about 1/128 (the former rule: 0.0066 here)


def test_start_reads_x_only_through_the_release(recorded_starts):
    """Two datasets with the same per-class sums (a word swapped between two rows of
    one class and equal norms) release the same sums under one seed, hence the same
    start, although the rows differ."""
    X, y = _text()
    X2 = X.tolil()
    i, k = np.flatnonzero(y == 1)[:2]
    a = next(j for j in X2.rows[i] if j not in X2.rows[k])
    b = next(j for j in X2.rows[k] if j not in X2.rows[i])
    X2[i, a], X2[i, b], X2[k, b], X2[k, a] = 0.0, 1.0, 0.0, 1.0
    X2 = sp.csr_array(X2)
    X2.eliminate_zeros()
    assert (X2 != X).nnz > 0
    s1 = screening_statistic(X, "mass", y.astype(np.int64), 2, class_sums=True)
    s2 = screening_statistic(X2, "mass", y.astype(np.int64), 2, class_sums=True)
    np.testing.assert_allclose(s1, s2, rtol=0, atol=1e-12)
    _fit(X, y)
    _fit(X2, y)
    (w1, t1), (w2, t2) = recorded_starts
    np.testing.assert_allclose(w1, w2, rtol=0, atol=1e-12)
    assert t1 == t2


def test_start_spends_the_same_budget():
    """The start is post-processing: for the same selection_share the privacy
    event and the guarantee are those of the zero start, whatever start_steps."""
    X, y = _text()
    zero = _fit(X, y, start="zero", selection_share=0.5)
    nb = _fit(X, y, selection_share=0.5)
    nb_t0 = _fit(X, y, selection_share=0.5, start_steps=3)
    assert nb.privacy_event_ == zero.privacy_event_ == nb_t0.privacy_event_
    assert nb.privacy_spent_ == zero.privacy_spent_ == nb_t0.privacy_spent_
    assert nb.n_iter_ == zero.n_iter_ and nb.l1_bound_ == zero.l1_bound_
    # selection_share "auto": 0.75 with the naive-Bayes start ("auto" here), 0.25
    # with the zero start
    events = {kw: FrankWolfeLassoClassifier(epsilon=2.0, delta=1e-5, **dict(kw)).budget(
        D_TEXT, n_samples=600).event for kw in [(), (("start", "naive_bayes"),),
                                                 (("selection_share", 0.75),),
                                                 (("start", "zero"),),
                                                 (("start", "zero"), ("selection_share", 0.25))]}
    assert events[()] == events[(("start", "naive_bayes"),)] == events[
        (("selection_share", 0.75),)]
    assert events[(("start", "zero"),)] == events[
        (("start", "zero"), ("selection_share", 0.25))] != events[()]
    # nothing on the model holds the released sums
    assert not any(isinstance(v, np.ndarray) and v.shape == (2, D_TEXT)
                   for v in vars(nb).values())


def test_start_refusals():
    X, y = _text()
    with pytest.raises(ValueError, match="start"):      # non-private
        FrankWolfeLassoClassifier(start="naive_bayes", epsilon=None).fit(X, y)
    with pytest.raises(ValueError, match="start.*screening"):   # nothing screened
        _fit(X[:, :500], y)
    with pytest.raises(ValueError, match="start.*screening"):
        _fit(X, y, k=None)
    with pytest.raises(ValueError, match="start.*screening"):   # advanced: no screening
        _fit(X, y, composition="advanced")


def test_start_on_a_local_dask_scheduler():
    """A Dask array on Dask's local threads (no cluster): the naive-Bayes start
    from the per-class sums summed over the blocks, the in-memory model."""
    da = pytest.importorskip("dask.array")
    X, y = _text()
    Xd = da.from_array(sp.csr_matrix(X), chunks=(300, D_TEXT), asarray=False)
    yd = da.from_array(y, chunks=300)
    mem, dist = _fit(X, y), _fit(Xd, yd)
    np.testing.assert_allclose(dist.coef_, mem.coef_, rtol=1e-9, atol=1e-12)
    assert not np.array_equal(mem.coef_, _fit(X, y, start="zero").coef_)


def test_auto_start():
    """start="auto": the naive-Bayes start for a private two-class fit that screens
    (in memory or on Dask), the zero start otherwise (no screening, K > 2, not
    private)."""
    X, y = _text()
    auto = _fit(X, y, start="auto")
    np.testing.assert_array_equal(auto.coef_, _fit(X, y).coef_)
    assert auto.privacy_event_ == _fit(X, y, selection_share=0.75).privacy_event_
    assert not np.array_equal(auto.coef_, _fit(X, y, start="zero").coef_)
    small = X[:, :500]                          # 500 features: no screening
    np.testing.assert_array_equal(_fit(small, y, start="auto").coef_,
                                  _fit(small, y, start="zero").coef_)
    y3 = np.arange(X.shape[0]) % 3
    np.testing.assert_array_equal(_fit(X, y3, start="auto", classes=[0, 1, 2]).coef_,
                                  _fit(X, y3, start="zero", classes=[0, 1, 2]).coef_)
    np.testing.assert_array_equal(
        _fit(X, y, start="auto", epsilon=None, delta=None, max_iter=50).coef_,
        _fit(X, y, start="zero", epsilon=None, delta=None, max_iter=50).coef_)
    # advanced composition (no screening)
    np.testing.assert_array_equal(_fit(X, y, start="auto", composition="advanced").coef_,
                                  _fit(X, y, start="zero", composition="advanced").coef_)


def test_screening_all_columns_buys_only_the_start():
    """An int screening of at least n_features with the naive-Bayes start keeps
    every column as a candidate (the release buys only the start; the former code
    refused: nothing screened); without the start it still screens nothing."""
    X, y = _text(d=800)
    est = _fit(X, y, k=800)
    np.testing.assert_array_equal(est.screened_features_, np.arange(800))
    assert est.privacy_event_ == _fit(X, y, k=5000).privacy_event_
    assert any(isinstance(e, GaussianEvent) for e in est.privacy_event_.events)
    assert _fit(X, y, k=800, start="zero").screened_features_ is None
