"""Frank-Wolfe kernels and FrankWolfeLassoClassifier (Raff, Khanna and Lu, NeurIPS 2023)."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dptoolkit.linear_model._frank_wolfe import _fw_fast
from dptoolkit.linear_model._frank_wolfe._grouped_sampler import GroupedExpSampler
from dptoolkit.accounting import epsilon_of_event, per_step_epsilon
from dptoolkit.datasets import load_libsvm
from dptoolkit.exceptions import DataClippedWarning
from dptoolkit.linear_model import FrankWolfeLassoClassifier

from _fw_reference import fast_fw, standard_fw


def _problem(n=300, d=80, density=0.08, seed=0, binary=True):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr")
    if binary:
        X.data[:] = 1.0
    else:
        X.data = rng.uniform(-1, 1, X.nnz)
    w = np.zeros(d)
    w[:5] = rng.normal(0, 3, 5)
    p = 1 / (1 + np.exp(-(X @ w)))
    y = (rng.random(n) < p).astype(float)
    return X, y


def _fit(X, y, **kw):
    """A fit, non-private unless ``kw`` gives epsilon."""
    return FrankWolfeLassoClassifier(**{"epsilon": None, **kw}).fit(X, y)


# ---------------------------------------------------------------- kernels vs reference
@pytest.mark.parametrize("binary", [True, False])
def test_standard_matches_reference(binary):
    X, y = _problem(binary=binary)
    w_ref, js_ref, gaps_ref = standard_fw(X, y, 5.0, 60)
    clf = _fit(X, y, l1_bound=5.0, max_iter=60, solver="standard")
    np.testing.assert_allclose(clf.coef_[0], w_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(clf.gap_history_, gaps_ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("refresh_tol", [np.inf, 0.3, 0.05, 0.0])
def test_fast_matches_reference_algorithm2(refresh_tol):
    """The kernel takes exactly the steps of the pure-Python Algorithm 2 + refresh."""
    X, y = _problem(binary=False, seed=3)
    w_ref, js_ref, gaps_ref, n_ref = fast_fw(X, y, 5.0, 150, refresh_tol)
    clf = _fit(X, y, l1_bound=5.0, max_iter=150, solver="fast", mechanism="argmax",
               refresh_tol=refresh_tol)
    np.testing.assert_allclose(clf.coef_[0], w_ref, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(clf.gap_history_, gaps_ref, rtol=1e-8, atol=1e-11)
    assert clf.solver_stats_["n_refresh"] == n_ref


def _assert_same_path(X, y, l1_bound, max_iter, **fast_kw):
    std = _fit(X, y, l1_bound=l1_bound, max_iter=max_iter, solver="standard")
    fast = _fit(X, y, l1_bound=l1_bound, max_iter=max_iter, solver="fast",
                refresh_tol=0.0, **fast_kw)
    f_std, f_fast = std.objective(X, y), fast.objective(X, y)
    assert abs(f_std - f_fast) <= 1e-9 * abs(f_std)
    # same steps: the supports and weights agree (ties aside)
    np.testing.assert_allclose(fast.coef_, std.coef_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(fast.gap_history_, std.gap_history_, rtol=1e-6, atol=1e-12)
    return std, fast


@pytest.mark.parametrize("selector", ["argmax", "pairing_heap", "fibonacci_heap"])
def test_fast_rho0_equals_standard_synthetic(selector):
    X, y = _problem(n=400, d=300, seed=5)
    _assert_same_path(X, y, 10.0, 200, mechanism=selector)


def test_fast_rho0_equals_standard_a9a(data_file):
    X, y = load_libsvm(data_file("a9a.bz2"), n_features=123)
    _assert_same_path(X[:8000], y[:8000], 50.0, 150, mechanism="pairing_heap")


def test_fast_rho0_equals_standard_colon_cancer(data_file):
    X, y = load_libsvm(data_file("colon-cancer.bz2"), n_features=2000)
    X = sp.csr_array(np.clip(X.toarray(), -1, 1))
    _assert_same_path(X, y, 5.0, 300, mechanism="fibonacci_heap")


@pytest.mark.parametrize("selector", ["pairing_heap", "fibonacci_heap"])
@pytest.mark.parametrize("refresh_tol", [np.inf, 0.3])
def test_heap_selection_agrees_with_argmax(selector, refresh_tol):
    X, y = _problem(n=500, d=400, seed=11, binary=False)
    a = _fit(X, y, l1_bound=8.0, max_iter=300, mechanism="argmax", refresh_tol=refresh_tol)
    b = _fit(X, y, l1_bound=8.0, max_iter=300, mechanism=selector, refresh_tol=refresh_tol)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=1e-14)


def test_nonprivate_converges_and_tol_stops():
    X, y = _problem(n=500, d=50, seed=2)
    clf = _fit(X, y, l1_bound=3.0, max_iter=3000, solver="fast")
    assert np.abs(clf.coef_).sum() <= 3.0 + 1e-9
    assert clf.gap_history_[-1] < 1e-3
    stopped = _fit(X, y, l1_bound=3.0, max_iter=3000, tol=1e-2)
    assert stopped.n_iter_ < 3000 and stopped.gap_history_[-1] <= 1e-2


# ---------------------------------------------------------------- private selection
def test_log_weight_is_log_2cosh():
    """The kernel's log-weight of both signs (series for small arguments)."""
    a = np.concatenate([np.linspace(-50, 50, 2001), np.geomspace(1e-12, 1e3, 500)])
    for coef in (1e-6, 1e-3, 0.0123, 1.0, 30.0):
        exact = np.logaddexp(coef * a, -coef * a)
        np.testing.assert_allclose(_fw_fast.log_weight_array(coef, a), exact,
                                   rtol=2e-16 * 4, atol=0)


def _first_step_probabilities(X, y, coef):
    """Exact exponential-mechanism law of the first vertex over the 2D signed vertices.

    At t = 1, w = 0 and alpha = X^T (1/2 - y) exactly; vertex sigma*e_j has log-weight
    -sigma * coef * alpha_j.  Returned in the order (j, sigma=+1), (j, sigma=-1).
    """
    alpha = X.T @ (0.5 - y)
    logits = np.concatenate([-coef * alpha, coef * alpha])
    p = np.exp(logits - logits.max())
    return p / p.sum()


@pytest.mark.parametrize("selector,solver", [("grouped", "fast"), ("exponential", "fast"),
                                             ("noisy_max", "fast"),
                                             ("exponential", "standard"),
                                             ("noisy_max", "standard")])
def test_private_first_step_is_the_exponential_mechanism(selector, solver):
    """Chi-square test of the first private vertex (coordinate AND sign).

    20,000 independent first steps from one seeded generator; the p-value threshold
    1e-4 is the false-failure rate of each parametrisation (5 cases: 5e-4 in all).
    """
    X, y = _problem(n=60, d=7, density=0.4, seed=4)
    Xr = sp.csr_array(X)
    Xr.indices = Xr.indices.astype(np.int64)
    Xr.indptr = Xr.indptr.astype(np.int64)
    Xc = sp.csc_array(Xr)
    Xc.indices = Xc.indices.astype(np.int64)
    Xc.indptr = Xc.indptr.astype(np.int64)
    coef = 0.05
    probs = _first_step_probabilities(Xr, y, coef)
    rng = np.random.default_rng(20231110)
    d = X.shape[1]
    counts = np.zeros(2 * d)
    code = _fw_fast.SELECTOR_CODES[selector]
    n_draws = 20000
    for _ in range(n_draws):
        args = (Xr.data, Xr.indices, Xr.indptr, Xc.data, Xc.indices, Xc.indptr, y, 1.0,
                code, coef, rng.bit_generator)
        k = (_fw_fast.FastFW(*args, group_size=3) if solver == "fast"
             else _fw_fast.StandardFW(*args))
        k.run(1, np.zeros(1))
        w = k.coef()
        j = int(np.flatnonzero(w)[0])
        counts[j if w[j] > 0 else d + j] += 1
    expected = probs * n_draws
    assert expected.min() > 5
    p_value = stats.chisquare(counts, expected).pvalue
    assert p_value > 1e-4, (p_value, counts, expected)


def test_private_budget_and_attributes():
    X, y = _problem()
    clf = _fit(X, y, l1_bound=5.0, max_iter=500, epsilon=1.0, delta=1e-5,
               composition="advanced", random_state=0)
    # the grouped sampler's floating-point (gamma, delta) enter the split
    gamma, fp_delta = GroupedExpSampler(X.shape[1]).floating_point_bounds()
    fp_delta += 2 * 2.0 ** -53  # the sign draw
    eps0_max = per_step_epsilon(epsilon_total=1.0, delta_slack=1e-5, k=500)
    slack = 1e-5 - 500 * (1 + np.exp(eps0_max + 2 * gamma)) * fp_delta
    eps_adv = per_step_epsilon(epsilon_total=1.0, delta_slack=slack, k=500)
    # the accountant's figure for the released event (RDP of the bounded-range steps
    # beats the advanced composition that calibrated them)
    assert clf.privacy_spent_ == (epsilon_of_event(clf.privacy_event_, 1e-5), 1e-5)
    assert clf.privacy_spent_[0] <= 1.0
    assert clf.n_iter_ == 500  # private fits never stop early, whatever the gaps
    assert clf.epsilon_step_ == pytest.approx(max(eps_adv, 1.0 / 500) - 2 * gamma,
                                              rel=1e-12)
    # the O(D) selectors' quantisation (gamma, delta_fp) enters the split as well
    exact = _fit(X, y, l1_bound=5.0, max_iter=500, epsilon=1.0, delta=1e-5,
                 mechanism="exponential", composition="advanced", random_state=0)
    unit = 2.0 ** -53
    fp_delta = 3 * X.shape[1] * unit + 2 * unit
    slack = 1e-5 - 500 * (1 + np.exp(eps0_max + 16 * unit)) * fp_delta
    assert exact.epsilon_step_ == pytest.approx(
        per_step_epsilon(epsilon_total=1.0, delta_slack=slack, k=500) - 16 * unit,
        rel=1e-14)
    assert clf.gap_history_ is None
    assert np.abs(clf.coef_).sum() <= 5.0 + 1e-9
    # few steps: basic composition is the better bound and is used
    small = _fit(X, y, l1_bound=5.0, max_iter=3, epsilon=1.0, delta=1e-5, random_state=0)
    assert small.composition_ == "basic" and small.epsilon_step_ == pytest.approx(1 / 3)
    pure = _fit(X, y, l1_bound=5.0, max_iter=50, epsilon=1.0, random_state=0,
                mechanism="exponential")
    assert pure.composition_ == "basic"
    assert pure.privacy_spent_[0] == 1.0 and 0 < pure.privacy_spent_[1] < 1e-11
    grouped = _fit(X, y, l1_bound=5.0, max_iter=50, epsilon=1.0, random_state=0)
    assert grouped.privacy_spent_[0] == 1.0 and 0 < grouped.privacy_spent_[1] < 1e-9


@pytest.mark.parametrize("solver", ["fast", "standard"])
def test_private_fit_releases_no_data_dependent_counters(solver):
    """solver_stats_ of a private fit is the same on neighbouring datasets."""
    X, y = _problem()
    kw = dict(l1_bound=5.0, max_iter=100, epsilon=1.0, delta=1e-5, solver=solver,
              random_state=0)
    a = _fit(X, y, **kw).solver_stats_
    b = _fit(X[1:], y[1:], **kw).solver_stats_
    assert a == b == {"n_iter": 100, "n_refresh": a["n_refresh"]}


def test_private_multinomial_releases_no_data_dependent_counters():
    X, y = _problem(n=90)
    y3 = np.arange(90) % 3
    kw = dict(l1_bound=5.0, max_iter=20, epsilon=1.0, delta=1e-5, random_state=0,
              mechanism="exponential")
    a = _fit(X, y3, **kw).solver_stats_
    b = _fit(X[1:], y3[1:], **kw).solver_stats_
    assert a == b and "touched_nnz" not in a


def test_private_reproducible_and_seed_dependent():
    X, y = _problem()
    kw = dict(l1_bound=5.0, max_iter=200, epsilon=0.5, delta=1e-5)
    a = _fit(X, y, random_state=7, **kw).coef_
    b = _fit(X, y, random_state=7, **kw).coef_
    c = _fit(X, y, random_state=8, **kw).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_private_learns_with_large_epsilon():
    X, y = _problem(n=2000, d=100, seed=9)
    priv = _fit(X, y, l1_bound=5.0, max_iter=300, epsilon=100.0, delta=1e-5,
                random_state=0)
    nonpriv = _fit(X, y, l1_bound=5.0, max_iter=300)
    assert priv.objective(X, y) < nonpriv.objective(X, y) + 0.02


def test_huge_epsilon_makes_the_floating_point_delta_vacuous():
    X, y = _problem()
    with pytest.raises(ValueError, match="floating-point delta"):
        _fit(X, y, max_iter=300, epsilon=1e4, delta=1e-5, random_state=0)


def test_private_clips_out_of_bound_data():
    X, y = _problem(binary=False)
    X = X * 3.0
    with pytest.warns(DataClippedWarning):
        _fit(X, y, epsilon=1.0, delta=1e-5, max_iter=10, random_state=0)
    # the clipped fit equals a fit on data clipped beforehand
    clipped = X.copy()
    clipped.data = np.clip(clipped.data, -1, 1)
    with pytest.warns(DataClippedWarning):
        a = _fit(X, y, epsilon=1.0, delta=1e-5, max_iter=10, random_state=0).coef_
    b = _fit(clipped, y, epsilon=1.0, delta=1e-5, max_iter=10, random_state=0).coef_
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="public bound"):
        _fit(X, y, epsilon=1.0, delta=1e-5, max_iter=10, clip_data=False)


def test_accepts_all_sparse_formats_and_dense():
    X, y = _problem()
    ref = _fit(X, y, l1_bound=5.0, max_iter=50).coef_
    for fmt in ("csr", "csc", "coo", "lil", "dok", "bsr"):
        np.testing.assert_allclose(_fit(sp.csr_matrix(X).asformat(fmt), y, l1_bound=5.0,
                                        max_iter=50).coef_, ref, rtol=1e-12)
    np.testing.assert_allclose(_fit(X.toarray(), y, l1_bound=5.0, max_iter=50).coef_, ref,
                               rtol=1e-12)


def test_predict_api():
    X, y = _problem()
    labels = np.where(y > 0, "spam", "ham")
    clf = _fit(X, labels, l1_bound=5.0, max_iter=100)
    assert list(clf.classes_) == ["ham", "spam"]
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(clf.predict(X)) <= {"ham", "spam"}
    assert 0.5 < clf.score(X, labels) <= 1.0
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), proba, rtol=1e-12)


def test_verbose_runs_in_chunks(capsys):
    X, y = _problem()
    quiet = _fit(X, y, l1_bound=5.0, max_iter=250)
    loud = _fit(X, y, l1_bound=5.0, max_iter=250, verbose=1)
    np.testing.assert_allclose(loud.coef_, quiet.coef_, rtol=1e-12)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("params,exc,match", [
    (dict(epsilon=0.0), ValueError, "epsilon"),
    (dict(epsilon=-1.0), ValueError, "epsilon"),
    (dict(epsilon=float("nan")), ValueError, "epsilon"),
    (dict(epsilon="1"), TypeError, "epsilon"),
    (dict(epsilon=1.0, delta=0.0), ValueError, "delta"),
    (dict(epsilon=1.0, delta=1.0), ValueError, "delta"),
    (dict(epsilon=1.0, delta=-0.1), ValueError, "delta"),
    (dict(delta=1e-5), ValueError, "delta"),
    (dict(l1_bound=0.0), ValueError, "l1_bound"),
    (dict(l1_bound=-2.0), ValueError, "l1_bound"),
    (dict(l1_bound=np.inf), ValueError, "l1_bound"),
    (dict(max_iter=0), ValueError, "max_iter"),
    (dict(max_iter=2.5), TypeError, "max_iter"),
    (dict(solver="dense"), ValueError, "solver"),
    (dict(mechanism="magic"), ValueError, "mechanism"),
    (dict(mechanism="grouped"), ValueError, "mechanism"),
    (dict(epsilon=1.0, mechanism="argmax"), ValueError, "mechanism"),
    (dict(solver="standard", mechanism="pairing_heap"), ValueError, "solver='fast'"),
    (dict(refresh_tol=-0.1), ValueError, "refresh_tol"),
    (dict(neighbouring="swap"), ValueError, "neighbouring"),
    (dict(epsilon=1.0, tol=1e-3), ValueError, "tol"),
])
def test_bad_parameters(params, exc, match):
    X, y = _problem(n=50, d=10)
    with pytest.raises(exc, match=match):
        _fit(X, y, max_iter=params.pop("max_iter", 5), **params)


def test_bad_data():
    X, y = _problem(n=50, d=10)
    Xd = X.toarray()
    Xd[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        _fit(Xd, y, max_iter=5)
    Xd[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        _fit(Xd, y, max_iter=5)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        _fit(X, y[:-1], max_iter=5)
    with pytest.raises(ValueError, match="at least two classes"):
        _fit(X, np.zeros(50), max_iter=5)
    with pytest.raises(ValueError, match="2D"):
        _fit(np.ones(50), y, max_iter=5)
    clf = _fit(X, y, max_iter=5)
    with pytest.raises(ValueError, match="features"):
        clf.predict(np.ones((3, 11)))


def test_kernel_run_checks_the_gap_buffer():
    X, y = _problem(n=30, d=5)
    Xr = sp.csr_array(X)
    Xc = sp.csc_array(X)
    arrs = [a.astype(np.int64) if a.dtype.kind == "i" else a
            for M in (Xr, Xc) for a in (M.data, M.indices, M.indptr)]
    for cls in (_fw_fast.StandardFW, _fw_fast.FastFW):
        k = cls(*arrs, y, 1.0, 0, 0.0, np.random.default_rng(0).bit_generator)
        k.run(3, np.zeros(3))
        with pytest.raises(ValueError, match="room"):
            k.run(1, np.zeros(3))  # iteration 4 does not fit


def test_selector_resolved():
    X, y = _problem()
    assert _fit(X, y, max_iter=5).mechanism_ == "argmax"
    assert _fit(X, y, max_iter=5, epsilon=1.0).mechanism_ == "grouped"
    assert _fit(X, y, max_iter=5, epsilon=1.0, solver="standard").mechanism_ == \
        "exponential"


def test_budget_accountant_checked_before_work_and_spent():
    from dptoolkit.accounting import BudgetAccountant
    from dptoolkit.exceptions import BudgetExceededError

    X, y = _problem()
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    kw = dict(l1_bound=5.0, max_iter=50, epsilon=0.6, delta=5e-6, accountant=acc,
              mechanism="exponential", random_state=0)
    _fit(X, y, **kw)
    assert acc.spent == pytest.approx((0.6, 5e-6))
    with pytest.raises(BudgetExceededError):
        _fit(X, y, **kw)
    assert acc.spent == pytest.approx((0.6, 5e-6))  # nothing spent by the refusal


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_data_refused_before_the_spend(fmt):
    """The data checks of a private fit come before the spend (the template's
    _check_fit_data): entries outside the public bound with clip_data=False, NaN
    and infinity (sparse input: found by the same pass over the values) raise and
    charge nothing; the same data clipped, or a dense NaN, are refused or fitted as
    before."""
    from dptoolkit.accounting import BudgetAccountant

    X, y = _problem()
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    kw = dict(l1_bound=5.0, max_iter=10, epsilon=1.0, delta=1e-5, accountant=acc,
              classes=[0, 1], random_state=0)
    big = sp.csr_array(X, copy=True)
    big.data[0] = 3.0
    with pytest.raises(ValueError, match="public bound"):
        _fit(big.asformat(fmt), y, clip_data=False, **kw)
    for bad, match in ((np.nan, r"\bX\b.*NaN"), (np.inf, r"\bX\b.*infinity"),
                       (-np.inf, r"\bX\b.*infinity")):
        Xb = sp.csr_array(X, copy=True)
        Xb.data[1] = bad
        with pytest.raises(ValueError, match=match):
            _fit(Xb.asformat(fmt), y, **kw)
        with pytest.raises(ValueError, match=match):
            _fit(Xb.toarray(), y, **kw)
    assert acc.spent == (0, 0)
    with pytest.warns(DataClippedWarning):
        _fit(big.asformat(fmt), y, **kw)
    assert acc.spent == pytest.approx((1.0, 1e-5))


from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402


@parametrize_with_checks([
    FrankWolfeLassoClassifier(l1_bound=5.0, max_iter=50, epsilon=None),
    FrankWolfeLassoClassifier(l1_bound=5.0, max_iter=50, solver="standard", epsilon=None),
    FrankWolfeLassoClassifier(l1_bound=5.0, max_iter=30, epsilon=5.0, delta=1e-5,
                              random_state=0),
])
def test_sklearn_estimator_checks(estimator, check):
    import warnings as _w
    with _w.catch_warnings():
        # the checks' data exceed the public bound of private fits: clipped, warned
        _w.simplefilter("ignore", DataClippedWarning)
        check(estimator)


# ---------------------------------------------------------------- the exact refresh
def _kernel_arrays(X, index_dtype=np.int64):
    Xr = sp.csr_array(X)
    Xc = sp.csc_array(Xr)
    return [a.astype(index_dtype) if a.dtype.kind == "i" else a
            for M in (Xr, Xc) for a in (M.data, M.indices, M.indptr)]


def _fast_kernel(X, y, selector, refresh_tol, refresh_mode=_fw_fast.REFRESH_AUTO,
                 coef=0.0, seed=0, index_dtype=np.int64, l1_bound=5.0):
    args = (*_kernel_arrays(X, index_dtype), y, l1_bound, _fw_fast.SELECTOR_CODES[selector],
            coef, np.random.default_rng(seed).bit_generator)
    return _fw_fast.FastFW(*args, refresh_tol=refresh_tol, refresh_mode=refresh_mode)


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("refresh_tol", [0.3, 0.0])
@pytest.mark.parametrize("selector,coef", [("argmax", 0.0), ("pairing_heap", 0.0),
                                           ("grouped", 0.5)])
def test_refresh_modes_take_the_same_steps(binary, refresh_tol, selector, coef):
    """A refresh by a full pass over X (the paper's text) and one over the rows whose
    gradient changed (plus the selector updated for the changed coordinates) take
    the same steps: they differ only in the rounding of alpha = X^T q, and q is the
    same bit for bit.  (Binary X with a heap: exact ties of |alpha_j| are broken by
    the heap's insertion order, and rounding can break a tie differently; the
    argmax scan and the sampler are not affected here.)"""
    if binary and selector == "pairing_heap":
        pytest.skip("exact ties: the heap may break them differently")
    X, y = _problem(n=300, d=120, density=0.05, seed=7, binary=binary)
    T = 120
    runs = {}
    for mode in (_fw_fast.REFRESH_FULL, _fw_fast.REFRESH_INCREMENTAL, _fw_fast.REFRESH_AUTO):
        k = _fast_kernel(X, y, selector, refresh_tol, mode, coef=coef, seed=3)
        gaps = np.zeros(T)
        k.run(T, gaps)
        runs[mode] = (k.coef(), gaps, k.stats.as_dict(), k.state())
    full = runs[_fw_fast.REFRESH_FULL]
    for mode in (_fw_fast.REFRESH_INCREMENTAL, _fw_fast.REFRESH_AUTO):
        coef_, gaps, stats_, state = runs[mode]
        np.testing.assert_array_equal(coef_, full[0])  # same vertices, same weights
        np.testing.assert_allclose(gaps, full[1], rtol=1e-10, atol=1e-10)
        assert stats_["n_refresh"] == full[2]["n_refresh"]
        # the maintained state is consistent: alpha = X^T q, h = <alpha, wt>
        Xr = sp.csr_array(X)
        np.testing.assert_array_equal(state["q"], full[3]["q"])
        np.testing.assert_allclose(state["alpha"], Xr.T @ state["q"], rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(state["h"], state["alpha"] @ state["wt"], rtol=1e-10,
                                   atol=1e-10)
    assert full[2]["n_full_refresh"] == full[2]["n_refresh"]
    assert runs[_fw_fast.REFRESH_INCREMENTAL][2]["n_full_refresh"] == 0


def test_refresh_at_rho0_makes_q_and_alpha_exact_after_every_refresh():
    """refresh_tol=0 refreshes at every step: right after it, q is computed at the
    current margins exactly and alpha is X^T q to rounding, whichever the mode."""
    X, y = _problem(n=200, d=60, seed=9, binary=False)
    Xr = sp.csr_array(X)
    for mode in (_fw_fast.REFRESH_FULL, _fw_fast.REFRESH_INCREMENTAL):
        k = _fast_kernel(X, y, "argmax", 0.0, mode)
        gaps = np.zeros(40)
        for t in range(40):
            k.run(1, gaps)
            s = k.state()
            # refreshed at the start of step t (w_m folded to 1), then scaled by
            # 1 - eta_t: rows of the chosen feature are exact at w_m, the others at 1
            v = s["w_m"] * s["vt"]
            at_refresh = 1 / (1 + np.exp(-s["vt"])) - y
            now = 1 / (1 + np.exp(-v)) - y
            assert s["w_m"] == 1.0 - 2.0 / (t + 3.0)
            err = np.minimum(np.abs(s["q"] - at_refresh), np.abs(s["q"] - now))
            assert err.max() <= 1e-15
            np.testing.assert_allclose(s["alpha"], Xr.T @ s["q"], rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(v, Xr @ k.coef(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("selector,coef", [("argmax", 0.0), ("grouped", 0.3)])
def test_fast_kernel_accepts_int32_indices(selector, coef):
    X, y = _problem(n=200, d=90, seed=12, binary=False)
    out = []
    for dt in (np.int64, np.int32):
        k = _fast_kernel(X, y, selector, 0.3, coef=coef, seed=1, index_dtype=dt)
        k.run(60, np.zeros(60))
        out.append(k.coef())
    np.testing.assert_array_equal(out[0], out[1])


@pytest.mark.parametrize("refresh_tol", [np.inf, 0.3])
def test_heavy_steps_by_a_full_pass_match_reference(refresh_tol):
    """A step whose changed rows hold more than half of X updates alpha by one full
    pass (never more work than a standard step); the steps are those of the
    pure-Python Algorithm 2 + refresh."""
    X, y = _problem(n=300, d=40, density=0.1, seed=13, binary=False)
    X = sp.csr_array(sp.hstack([sp.csr_array(np.ones((300, 1))), X]))  # a dense column
    # labels mostly 1: the dense column keeps a large gradient and is chosen often
    y = np.where(np.arange(300) < 240, 1.0, y)
    w_ref, js_ref, gaps_ref, n_ref = fast_fw(X, y, 5.0, 150, refresh_tol)
    clf = _fit(X, y, l1_bound=5.0, max_iter=150, solver="fast", mechanism="argmax",
               refresh_tol=refresh_tol)
    assert clf.solver_stats_["n_full_steps"] > 0
    np.testing.assert_allclose(clf.coef_[0], w_ref, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(clf.gap_history_, gaps_ref, rtol=1e-8, atol=1e-11)
    # private (grouped sampler): the full-pass steps keep alpha = X^T q
    k = _fast_kernel(X, y, "grouped", refresh_tol, coef=20.0, seed=5)
    k.run(100, np.zeros(100))
    s = k.state()
    assert k.stats.n_full_steps > 0
    np.testing.assert_allclose(s["alpha"], sp.csr_array(X).T @ s["q"], rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("params,exc,match", [
    (dict(composition="rdp"), ValueError, "composition"),
    (dict(composition=None), ValueError, "composition"),
    (dict(epsilon=1.0, delta=1e-5, mechanism="laplace", composition="zcdp"), ValueError,
     "bounded-range"),
    (dict(epsilon=1.0, composition="zcdp"), ValueError, "delta > 0"),
    (dict(k=0), ValueError, r"\bk\b"),
    (dict(k=2.5), TypeError, r"\bk\b"),
    (dict(k="all"), TypeError, r"\bk\b"),
    (dict(epsilon=1.0, k=4), ValueError, r"\bk\b"),   # pure DP: no zCDP
    (dict(epsilon=1.0, delta=1e-5, composition="advanced", k=4), ValueError,
     r"\bk\b"),
    (dict(selection_share=0.0), ValueError, "selection_share"),
    (dict(selection_share=1.0), ValueError, "selection_share"),
    (dict(n_samples_public=0), ValueError, "n_samples_public"),
    (dict(n_samples_public=2.5), TypeError, "n_samples_public"),
    (dict(max_iter="many"), TypeError, "max_iter"),
    (dict(l1_bound="large"), ValueError, "l1_bound"),
    (dict(l1_bound=0.0), ValueError, "l1_bound"),
    (dict(l1_bound=-1.0), ValueError, "l1_bound"),
])
def test_bad_new_parameters(params, exc, match):
    X, y = _problem(n=50, d=10)
    with pytest.raises(exc, match=match):
        FrankWolfeLassoClassifier(**{"epsilon": None, **params}).fit(X, y)


def test_budget_method_bad_input():
    clf = FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="n_samples"):
        clf.budget(1000)                       # max_iter="auto" needs N
    with pytest.raises(ValueError, match="n_features"):
        clf.budget(0, n_samples=100)
    with pytest.raises(ValueError, match="private"):
        FrankWolfeLassoClassifier(epsilon=None).budget(10, n_samples=100)
    b = clf.budget(2 ** 20, n_samples=25_000)
    assert b.composition == "zcdp" and b.screening_noise_multiplier is not None


def _excess_bound(T, lam, M, c):
    """B(T, lambda) of private_defaults, in units where eps'(T) = a / sqrt(T)."""
    return 2 * c * lam ** 2 / T + 2 * lam * np.sqrt(T) / M


@pytest.mark.parametrize("n_classes", [1, 20])
def test_private_defaults_minimise_the_excess_risk_bound(n_classes):
    from dptoolkit.linear_model._frank_wolfe._budget import STEP_FRACTION, private_defaults

    N, eps, delta, k = 5325, 1.0, 1e-5, 4096
    L = 1.0 if n_classes == 1 else 2.0
    c = 1.0 if n_classes == 1 else 4.0
    lam, T = private_defaults(n_samples=N, epsilon=eps, delta=delta, n_drawn=k,
                              n_classes=n_classes, lipschitz=L)
    lg = math.log(1 / delta)
    a = math.sqrt(8 * (math.sqrt(lg + eps) - math.sqrt(lg)) ** 2)
    M = N * a / (n_classes * L * math.log(2 * k))
    from scipy.optimize import minimize_scalar

    t_star = minimize_scalar(lambda t: _excess_bound(t, lam, M, c), bounds=(1, 1e6),
                             method="bounded", options=dict(xatol=1e-6)).x
    assert T == max(10, math.ceil(STEP_FRACTION * t_star))
    # the radius is the largest whose bound at its T* is the zero model's loss
    h0 = math.log(max(2, n_classes))
    assert _excess_bound(t_star, lam, M, c) == pytest.approx(h0, rel=1e-4)
    assert _excess_bound(t_star, 1.01 * lam, M, c) > h0
    # a given radius keeps its value and gets its own T*
    lam50, T50 = private_defaults(n_samples=N, epsilon=eps, delta=delta, n_drawn=k,
                                  n_classes=n_classes, lipschitz=L, l1_bound=50.0)
    assert lam50 == 50.0 and T50 > T


def test_private_defaults_pure_and_monotone():
    from dptoolkit.linear_model._frank_wolfe._budget import STEP_FRACTION, private_defaults

    lam, T = private_defaults(n_samples=20000, epsilon=1.0, delta=0.0, n_drawn=1000)
    m = 20000 / math.log(2000)
    assert T == math.ceil(STEP_FRACTION * math.sqrt(lam * m))
    assert 4 * lam ** 1.5 / math.sqrt(m) == pytest.approx(math.log(2))
    # more data, budget or fewer candidates: a larger radius and more steps
    base = private_defaults(n_samples=5000, epsilon=1.0, delta=1e-5, n_drawn=4096)
    for kw in (dict(n_samples=20000), dict(epsilon=4.0), dict(n_drawn=256)):
        lam2, T2 = private_defaults(**{**dict(n_samples=5000, epsilon=1.0, delta=1e-5,
                                              n_drawn=4096), **kw})
        assert lam2 > base[0] and T2 > base[1]
    # replace-one doubles the sensitivity: a smaller radius, fewer steps
    lam2, T2 = private_defaults(n_samples=5000, epsilon=1.0, delta=1e-5, n_drawn=4096,
                                neighbouring="replace_one")
    assert lam2 < base[0] and T2 < base[1]
    # huge budgets stay finite and clipped
    lam2, T2 = private_defaults(n_samples=5000, epsilon=1e300, delta=1e-5, n_drawn=4096)
    assert T2 == 100_000 and math.isfinite(lam2)


def test_auto_l1_bound_and_max_iter_are_resolved_from_public_quantities():
    from dptoolkit.linear_model._frank_wolfe._budget import private_defaults

    X, y = _problem()
    n, d = X.shape
    est = FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, n_samples_public=n,
                                    random_state=0, classes=[0, 1]).fit(X, y)
    lam, T = private_defaults(n_samples=n, epsilon=1.0, delta=1e-5, n_drawn=d)
    assert est.n_iter_ == T and est.l1_bound_ == lam
    assert np.abs(est.coef_).sum() <= lam * (1 + 1e-9)
    # the same fit with the values given explicitly: the same model
    again = FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, n_samples_public=n,
                                      l1_bound=lam, max_iter=T, random_state=0,
                                      classes=[0, 1]).fit(X, y)
    np.testing.assert_array_equal(est.coef_, again.coef_)
    # the private defaults depend on N, not on the rows given
    other = FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, n_samples_public=10 * n,
                                      random_state=0, classes=[0, 1]).fit(X, y)
    assert other.n_iter_ > est.n_iter_
    # non-private: the paper's setting
    nonpriv = FrankWolfeLassoClassifier(epsilon=None).fit(X, y)
    assert nonpriv.n_iter_ == 1000 and np.abs(nonpriv.coef_).sum() <= 50.0 + 1e-9


def test_auto_screening_keeps_at_least_max_iter_candidates():
    """k="auto": MIN_AUTO_CANDIDATES candidates, or max_iter when the fit takes
    more steps (T steps can reach T distinct features); the radius and the steps of
    "auto" are those of the candidates drawn from, at selection_share 0.25."""
    from dptoolkit.linear_model._frank_wolfe._budget import (MIN_AUTO_CANDIDATES,
                                                             private_defaults)

    X, y = _problem(n=400, d=3000, density=0.01)
    common = dict(epsilon=1.0, delta=1e-5, n_samples_public=400, classes=[0, 1],
                  random_state=0, start="zero")
    est = FrankWolfeLassoClassifier(**common).fit(X, y)
    assert est.screened_features_.size == MIN_AUTO_CANDIDATES == 1024
    # selection_share="auto" is 0.25 with the zero start
    assert FrankWolfeLassoClassifier(epsilon=None).selection_share == "auto"
    assert est.budget(3000, n_samples=400).event == FrankWolfeLassoClassifier(
        selection_share=0.25, **common).budget(3000, n_samples=400).event
    lam, T = private_defaults(n_samples=400, epsilon=1.0, delta=1e-5, n_drawn=1024,
                              selection_share=0.25)
    assert est.l1_bound_ == lam and est.n_iter_ == T
    more = FrankWolfeLassoClassifier(max_iter=1500, **common).fit(X, y)
    assert more.screened_features_.size == 1500
    assert more.l1_bound_ == private_defaults(n_samples=400, epsilon=1.0, delta=1e-5,
                                              n_drawn=1500, selection_share=0.25)[0]
    # as many steps as features: nothing to screen
    every = FrankWolfeLassoClassifier(max_iter=3000, **common).fit(X, y)
    assert every.screened_features_ is None
    # the budget's event is that of the candidates used
    b = FrankWolfeLassoClassifier(max_iter=1500, **common).budget(3000, n_samples=400)
    assert b.screening_noise_multiplier is not None
