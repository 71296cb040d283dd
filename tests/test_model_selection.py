"""PrivateHyperparameterSearch: guarantee, behaviour, bad input, empirical neighbour test."""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dptoolkit.accounting import BudgetAccountant, epsilon_of_event
from dptoolkit.accounting import tnb_success_probability as _tnb_gamma
from dptoolkit.accounting.events import (ComposedEvent, ExponentialMechanismEvent,
                                         GaussianEvent, RepeatAndSelectEvent,
                                         SelfComposedEvent)
from dptoolkit.exceptions import BudgetExceededError
from dptoolkit.linear_model import (DPIGHTClassifier, DPSGDClassifier,
                                    FrankWolfeLassoClassifier, SparsifiedLassoClassifier)
from dptoolkit.model_selection import PrivateHyperparameterSearch


def _problem(n=400, d=30, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.2).astype(float)
    w = np.zeros(d)
    w[:3] = [2.0, -2.0, 1.5]
    y = (X @ w + 0.3 * rng.standard_normal(n) > 0.2).astype(int)
    return sp.csr_array(X), y


def _search(**kw):
    base = dict(estimator=FrankWolfeLassoClassifier(max_iter=30, n_samples_public=320,
                                                    epsilon=None),
                param_distributions={"l1_bound": [1.0, 5.0, 20.0]}, epsilon=1.0,
                delta=1e-5, random_state=0)
    base.update(kw)
    return PrivateHyperparameterSearch(**base)


def test_search_guarantee_matches_papernot_steinke_theorem_2():
    X, y = _problem()
    s = _search().fit(X, y)
    ev = s.privacy_event_
    assert isinstance(ev, RepeatAndSelectEvent) and ev.mean == 10.0 and ev.shape == 1.0
    eps = epsilon_of_event(ev, 1e-5)
    assert s.privacy_spent_ == (eps, 1e-5)
    assert eps <= 1.0 and eps > 0.99  # calibrated to 1e-3 relative on the run epsilon
    # Theorem 2 by hand at one order pair, from the run's RDP curve
    from dptoolkit.accounting._accountant import _rdp_curve
    orders = np.array([2.0, 8.0, 32.0])
    run, _ = _rdp_curve(ev.event, orders)
    gamma = _tnb_gamma(1.0, 10.0)
    assert gamma == pytest.approx(0.1)
    theorem = run + np.min(2 * (1 - 1 / orders) * run + 2 * np.log(1 / gamma) / orders) \
        + np.log(10.0) / (orders - 1)
    curve, _ = _rdp_curve(ev, orders)
    np.testing.assert_allclose(curve, theorem, rtol=1e-12)


def test_search_event_matches_dp_accounting():
    dpa = pytest.importorskip("dp_accounting")
    run = ComposedEvent((SelfComposedEvent(ExponentialMechanismEvent(0.02), 200),
                         GaussianEvent(8.0)))
    for shape in (0.0, 1.0, 2.0):
        ev = RepeatAndSelectEvent(run, 10.0, shape)
        acc = dpa.rdp.RdpAccountant()
        acc.compose(ev.to_dp_accounting())
        assert epsilon_of_event(ev, 1e-6, composition="rdp") == pytest.approx(
            acc.get_epsilon(1e-6), rel=1e-6)


def test_search_selects_and_releases_one_model():
    X, y = _problem()
    s = _search().fit(X, y)
    assert s.best_params_["l1_bound"] in (1.0, 5.0, 20.0)
    assert 0 < s.epsilon_run_ < 1.0
    assert s.predict(X).shape == (X.shape[0],)
    assert s.score(X, y) == s.best_estimator_.score(X, y)
    # the other runs' scores and hyperparameters, and their number K, are not released
    assert not hasattr(s, "cv_results_") and not hasattr(s, "n_runs_")


def test_pure_dp_search_liu_talwar():
    X, y = _problem()
    s = _search(delta=0.0, estimator=FrankWolfeLassoClassifier(max_iter=30, epsilon=None)).fit(X, y)
    assert s.epsilon_run_ == pytest.approx(0.9 / 3)
    # pure up to the floating-point delta of the runs, n_runs times (union bound)
    assert s.privacy_spent_[0] == 1.0 and 0 < s.privacy_spent_[1] < 1e-8
    with pytest.raises(ValueError, match="geometric"):
        _search(delta=0.0, distribution="logarithmic").fit(X, y)
    with pytest.raises(ValueError, match="pure-DP estimator"):
        _search(delta=0.0, estimator=DPSGDClassifier(epsilon=None),
                param_distributions={"learning_rate": [0.1, 1.0]}).fit(X, y)


def test_accountant_refuses_before_any_run(monkeypatch):
    X, y = _problem()
    calls = []
    orig = FrankWolfeLassoClassifier._run
    monkeypatch.setattr(FrankWolfeLassoClassifier, "_run",
                        lambda self, *a: calls.append(1) or orig(self, *a))
    acc = BudgetAccountant(epsilon=0.5, delta=1e-4)
    with pytest.raises(BudgetExceededError):
        _search(accountant=acc).fit(X, y)
    assert calls == [] and acc.spends == [] and acc.events == []
    acc = BudgetAccountant(epsilon=2.0, delta=1e-4)
    s = _search(accountant=acc).fit(X, y)
    assert len(acc.spends) == 1 and acc.events == [s.privacy_event_] and calls


@pytest.mark.parametrize("kw,exc,match", [
    ({"epsilon": 0.0}, ValueError, "epsilon"),
    ({"epsilon": None}, ValueError, "epsilon"),
    ({"delta": 1.0}, ValueError, "delta"),
    ({"n_runs": 1.0}, ValueError, "n_runs"),
    ({"n_runs": "ten"}, TypeError, "n_runs"),
    ({"distribution": "poisson"}, ValueError, "distribution"),
    ({"distribution": "negative_binomial", "shape": -1.0}, ValueError, "shape"),
    ({"validation_fraction": 1.0}, ValueError, "validation_fraction"),
    ({"score_noise": 0.0}, ValueError, "score_noise"),
    ({"param_distributions": {"epsilon": [1.0]}}, ValueError, "must not set"),
    ({"param_distributions": {"nope": [1.0]}}, ValueError, "nope"),
    ({"param_distributions": []}, TypeError, "param_distributions"),
    ({"estimator": object()}, TypeError, "estimator"),
    ({"estimator": FrankWolfeLassoClassifier(neighbouring="replace_one", epsilon=None)}, ValueError,
     "add/remove"),
    ({"accountant": "acc"}, TypeError, "accountant"),
])
def test_bad_input(kw, exc, match):
    X, y = _problem(n=40)
    with pytest.raises(exc, match=match):
        _search(**kw).fit(X, y)


def test_empirical_neighbour_test_of_the_whole_search():
    """The released choice (which l1_bound won) on neighbouring datasets D, D - {x}.

    For every outcome o and both directions, P_D(o) <= e^eps P_D'(o) + delta must
    hold.  With R runs per dataset we compare one-sided Clopper-Pearson bounds at
    level 1e-4 each (6 comparisons): the test fails falsely with probability below
    1e-3 if the search is (eps, delta)-DP.  A search that ignored the score noise
    or leaked the data through K would be caught only if its violation is large:
    this is a smoke test of the composition, not a proof.
    """
    rng = np.random.default_rng(12345)
    n, d = 12, 4
    X = sp.csr_array((rng.random((n, d)) < 0.5).astype(float))
    y = np.arange(n) % 2
    X[0, 0], y[0] = 1.0, 1
    Xn, yn = X[1:], y[1:]
    est = FrankWolfeLassoClassifier(max_iter=3, n_samples_public=10, mechanism="exponential",
                                    solver="standard", epsilon=None)
    grid = {"l1_bound": [0.5, 50.0]}
    eps = 1.0
    R = 400
    outcomes = {}
    for name, (XX, yy) in {"D": (X, y), "D'": (Xn, yn)}.items():
        counts = np.zeros(2)
        for r in range(R):
            s = PrivateHyperparameterSearch(est, grid, epsilon=eps, delta=1e-5, n_runs=3.0,
                                            validation_fraction=0.25, score_noise=30.0,
                                            random_state=r)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s.fit(XX, yy)
            counts[grid["l1_bound"].index(s.best_params_["l1_bound"])] += 1
        outcomes[name] = counts
    alpha = 1e-4
    for a, b in (("D", "D'"), ("D'", "D")):
        for o in range(2):
            ka, kb = outcomes[a][o], outcomes[b][o]
            p_a_low = stats.beta.ppf(alpha, ka, R - ka + 1) if ka > 0 else 0.0
            p_b_high = stats.beta.ppf(1 - alpha, kb + 1, R - kb) if kb < R else 1.0
            assert p_a_low <= math.exp(eps) * p_b_high + 1e-5, (a, b, o, outcomes)


def test_warnings_of_the_runs_reach_the_user_once():
    from dptoolkit.exceptions import PrivacyLeakWarning

    X, y = _problem()
    # max_iter="auto", no n_samples_public: N from X (the label set is declared)
    est = FrankWolfeLassoClassifier(classes=[0, 1], epsilon=None)
    with pytest.warns(PrivacyLeakWarning, match="n_samples_public") as record:
        _search(estimator=est, n_runs=5.0).fit(X, y)
    leaks = [w for w in record if issubclass(w.category, PrivacyLeakWarning)]
    assert len(leaks) == 1


def _spy_fits(monkeypatch):
    """Record (rows, n_samples_public) of every privacy plan: the runs' (each fit
    plans first) and the calibration's (the public size of the training part, no
    fit)."""
    seen = []
    orig = FrankWolfeLassoClassifier._privacy_plan

    def plan(self, n_samples, n_features, classes):
        seen.append((n_samples, self.n_samples_public))
        return orig(self, n_samples, n_features, classes)

    monkeypatch.setattr(FrankWolfeLassoClassifier, "_privacy_plan", plan)
    return seen


class _NoScoreNoise(np.random.Generator):
    """A generator whose Gaussian draws are 0 (the score noise), for exact scores."""

    def normal(self, loc=0.0, scale=1.0, size=None):
        return 0.0


def test_n_samples_public_sets_split_sizes_runs_n_and_score_scale(monkeypatch):
    """With n_samples_public = N the validation part is round(0.2 N) = 60 rows
    whatever the data's size (400 rows here), the other 340 train; an estimator
    without its own N gets N - 60 = 240, one with its own keeps it; best_score_
    is (count + noise) / 60: with the noise at 0, the best run's count over the
    60 validation rows; no PrivacyLeakWarning."""
    X, y = _problem(n=400)
    seen = _spy_fits(monkeypatch)
    scored = []
    orig_predict = FrankWolfeLassoClassifier.predict
    monkeypatch.setattr(FrankWolfeLassoClassifier, "predict",
                        lambda self, Xv: scored.append(Xv.shape[0]) or orig_predict(self, Xv))
    kw = dict(n_samples_public=300, classes=[0, 1], n_runs=3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = _search(estimator=FrankWolfeLassoClassifier(max_iter=30, epsilon=None), **kw,
                    random_state=_NoScoreNoise(np.random.PCG64(0))).fit(X, y)
    # the runs train on 340 rows; the budget is calibrated on a 240-row stand-in
    assert set(seen) == {(340, 240), (240, 240)}
    assert seen.count((340, 240)) == len(scored) >= 1 and set(scored) == {60}
    count = s.best_score_ * 60
    assert 0 <= count <= 60 and count == pytest.approx(round(count), abs=1e-9)
    assert s.best_estimator_.n_samples_public == 240
    seen.clear()
    _search(estimator=FrankWolfeLassoClassifier(max_iter=30, n_samples_public=320, epsilon=None),
            **kw).fit(X, y)
    assert {run for run in seen if run[0] == 340} == {(340, 320)}


def test_n_samples_public_makes_the_budget_independent_of_the_data_size():
    """The runs' budget is calibrated on a public stand-in of N - n_val rows and
    the runs get N - n_val as their N: the same event and run epsilon on data of
    400 and 401 rows.  Without n_samples_public both followed the rows (DP-SGD's
    sampling rate and number of steps depend on N)."""
    X, y = _problem(n=401)
    est = DPSGDClassifier(n_epochs=1, batch_size=20, epsilon=None)
    grid = {"learning_rate": [0.1, 1.0]}
    data = ((X[:400], y[:400]), (X, y))
    fits = [_search(estimator=est, param_distributions=grid, n_samples_public=400,
                    classes=[0, 1], n_runs=2.0).fit(XX, yy) for XX, yy in data]
    assert fits[0].privacy_event_ == fits[1].privacy_event_
    assert fits[0].epsilon_run_ == fits[1].epsilon_run_
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_rows = [_search(estimator=est, param_distributions=grid, classes=[0, 1],
                             n_runs=2.0).fit(XX, yy) for XX, yy in data]
    assert from_rows[0].privacy_event_ != from_rows[1].privacy_event_


def test_without_n_samples_public_the_search_warns_once():
    """n_samples_public=None: one PrivacyLeakWarning naming it, for the search
    and its runs (their N, the training part's size, comes from the search), with
    the same text on N and N + 1 rows; with the estimator's N given too, the same
    single warning."""
    from dptoolkit.exceptions import PrivacyLeakWarning

    X, y = _problem(n=401)
    texts = []
    for XX, yy, est in ((X[:400], y[:400], FrankWolfeLassoClassifier(classes=[0, 1], epsilon=None)),
                        (X, y, FrankWolfeLassoClassifier(classes=[0, 1], epsilon=None)),
                        (X, y, FrankWolfeLassoClassifier(max_iter=30, n_samples_public=320,
                                                         classes=[0, 1], epsilon=None))):
        with pytest.warns(PrivacyLeakWarning) as record:
            _search(estimator=est, n_runs=3.0).fit(XX, yy)
        leaks = [str(w.message) for w in record if issubclass(w.category, PrivacyLeakWarning)]
        assert len(leaks) == 1 and "n_samples_public" in leaks[0]
        assert "best_score_" in leaks[0] and "400" not in leaks[0] and "401" not in leaks[0]
        texts.append(leaks[0])
    assert len(set(texts)) == 1


def test_runs_warnings_reach_the_user_once_with_n_samples_public():
    """The runs' own warnings (here: the label set read from each training part)
    are passed on once, next to none of the search's own."""
    from dptoolkit.exceptions import PrivacyLeakWarning

    X, y = _problem()
    with pytest.warns(PrivacyLeakWarning) as record:
        _search(n_samples_public=400, n_runs=5.0).fit(X, y)
    leaks = [str(w.message) for w in record if issubclass(w.category, PrivacyLeakWarning)]
    assert len(leaks) == 1 and "classes is None" in leaks[0]


@pytest.mark.parametrize("value,exc", [(0, ValueError), (-5, ValueError), (3, ValueError),
                                       (2.5, TypeError), ("400", TypeError),
                                       (True, TypeError)])
def test_bad_n_samples_public(value, exc):
    X, y = _problem(n=40)
    with pytest.raises(exc, match="n_samples_public"):
        _search(n_samples_public=value, classes=[0, 1]).fit(X, y)


def test_too_few_rows_for_the_public_validation_part():
    """N = 400: 80 validation rows; data of 80 rows leave none to train: refused,
    by a message that prints only public numbers and says it depends on the data."""
    from dptoolkit._private import DATA_DEPENDENT_NOTE

    X, y = _problem(n=81)
    with pytest.raises(ValueError, match="validation part of 80") as info:
        _search(n_samples_public=400, classes=[0, 1]).fit(X[:80], y[:80])
    assert DATA_DEPENDENT_NOTE in str(info.value)
    s = _search(n_samples_public=400, classes=[0, 1], n_runs=2.0).fit(X, y)
    assert s.predict(X).shape == y.shape


# ---------------------------------------------------------------------------
# a grid that changes the runs' privacy event (max_iter): the guarantee covers
# every run, and what is released is the best run alone
# ---------------------------------------------------------------------------

def _planned_training_event(est, n_train, n_features):
    """The training event ``est`` makes on ``n_train`` rows (a public stand-in)."""
    from dptoolkit._private import plan_spend

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return plan_spend(est, sp.csr_array((n_train, n_features)),
                          np.resize([0, 1], n_train))[0]


def test_grid_over_max_iter_covers_every_runs_event(monkeypatch):
    """Audit of the guarantee on the runs' own events.  With max_iter in the grid,
    Papernot and Steinke's Theorem 2 applied to each candidate's actual run (its
    training event at epsilon_run_, then the score) must be within the claimed
    epsilon: the template's event (max_iter unset) is not the runs'.  Every run
    actually made has one of the accounted training events."""
    X, y = _problem(n=400)
    grid = {"max_iter": [1, 10, 60]}
    fits = []
    orig = FrankWolfeLassoClassifier.fit

    def fit(self, X, y):
        orig(self, X, y)
        if X.shape[0] == 320:  # a run on the training part (not a plan on the stand-in)
            fits.append(self.privacy_event_)
        return self

    monkeypatch.setattr(FrankWolfeLassoClassifier, "fit", fit)
    est = FrankWolfeLassoClassifier(classes=[0, 1], epsilon=None)
    s = _search(estimator=est, param_distributions=grid, n_samples_public=400,
                classes=[0, 1], n_runs=5.0).fit(X, y)
    claimed, delta = s.privacy_spent_
    assert claimed <= 1.0 and delta == 1e-5
    search = s.privacy_event_
    training, score = search.event.events
    actual = []
    for max_iter in grid["max_iter"]:
        run = _planned_training_event(
            est.set_params(max_iter=max_iter, epsilon=s.epsilon_run_, delta=delta,
                           n_samples_public=320), 320, X.shape[1])
        actual.append(run)
        theorem = RepeatAndSelectEvent(ComposedEvent((run, score)), search.mean,
                                       search.shape)
        assert epsilon_of_event(theorem, delta) <= claimed * (1 + 1e-12), max_iter
    from dptoolkit.accounting.events import MaxOfEvents

    # the accounted run is the maximum over exactly these events, at every order
    assert isinstance(training, MaxOfEvents) and set(training.events) == set(actual)
    assert fits and set(fits) <= set(actual)
    # one point costs more than the template's (max_iter unset) event would: the
    # search is calibrated for it
    template_run = _planned_training_event(
        FrankWolfeLassoClassifier(classes=[0, 1], epsilon=s.epsilon_run_, delta=delta,
                                  n_samples_public=320), 320, X.shape[1])
    assert max(epsilon_of_event(RepeatAndSelectEvent(ComposedEvent((run, score)),
                                                     search.mean, search.shape), delta)
               for run in actual) > epsilon_of_event(RepeatAndSelectEvent(
                   ComposedEvent((template_run, score)), search.mean, search.shape), delta)


def test_pure_dp_search_covers_every_point_of_the_grid():
    """Liu and Talwar 2019, Theorem 3.4: every run epsilon/3-DP, whichever point of
    the grid it drew (the run's event is the max over the points)."""
    from dptoolkit.accounting import basic_guarantee
    from dptoolkit.accounting.events import MaxOfEvents

    X, y = _problem()
    s = _search(delta=0.0, estimator=FrankWolfeLassoClassifier(epsilon=None),
                param_distributions={"max_iter": [1, 40]}, n_samples_public=400,
                classes=[0, 1]).fit(X, y)
    run = s.privacy_event_.event
    assert isinstance(run.events[0], MaxOfEvents) and len(run.events[0].events) == 2
    assert basic_guarantee(run)[0] <= 1.0 / 3.0 * (1 + 1e-9)


def test_distribution_over_an_event_changing_parameter_is_refused():
    """A distribution (rvs) over max_iter: the runs' events would vary beyond any
    finite list; refused, naming the parameter.  A distribution over a parameter
    that leaves the event unchanged (l1_bound) is accepted, with one event."""
    X, y = _problem()
    kw = dict(n_samples_public=400, classes=[0, 1], n_runs=3.0)
    with pytest.raises(ValueError, match=r"param_distributions\['max_iter'\].*list"):
        _search(estimator=FrankWolfeLassoClassifier(epsilon=None),
                param_distributions={"max_iter": stats.randint(1, 50),
                                     "l1_bound": [1.0, 5.0]}, **kw).fit(X, y)
    s = _search(param_distributions={"l1_bound": stats.loguniform(1.0, 50.0)},
                **kw).fit(X, y)
    from dptoolkit.accounting.events import MaxOfEvents

    assert not isinstance(s.privacy_event_.event.events[0], MaxOfEvents)
    assert 1.0 <= s.best_params_["l1_bound"] <= 50.0


def test_a_run_outside_the_accounted_events_releases_nothing(monkeypatch):
    """A distribution that changes the event only away from the checked points is
    caught at the run: ValueError naming it, no attribute set, nothing charged."""
    X, y = _problem()

    class _Tricky:  # the runs draw max_iter=3; the probes (patched) see only 30
        def rvs(self, random_state=None):
            return 3

    from dptoolkit.model_selection import _search_candidates as search_module

    monkeypatch.setattr(search_module, "_probe_values", lambda name, dist: [30])
    acc = BudgetAccountant(epsilon=5.0, delta=1e-4)
    s = _search(estimator=FrankWolfeLassoClassifier(epsilon=None),
                param_distributions={"max_iter": _Tricky()}, n_samples_public=400,
                classes=[0, 1], accountant=acc)
    with pytest.raises(ValueError, match=r"max_iter.*lists"):
        s.fit(X, y)
    assert not hasattr(s, "best_estimator_") and acc.spends == []


def test_too_many_points_refused():
    X, y = _problem(n=40)
    with pytest.raises(ValueError, match="too many points"):
        _search(param_distributions={"l1_bound": list(np.linspace(1, 2, 50)),
                                     "max_iter": list(range(1, 50))}).fit(X, y)


def test_only_the_released_runs_warnings_reach_the_user_marked_outside(monkeypatch):
    """Which hyperparameters the other runs drew (and so how many runs there were)
    is not released: the released run's warnings are passed on, each once and
    marked as outside the guarantee (the data chose that run); the other runs'
    warnings, data-dependent ones included, are not."""
    from dptoolkit._private import DATA_DEPENDENT_NOTE, data_dependent_warning

    X, y = _problem()
    drawn = []
    orig = FrankWolfeLassoClassifier.fit

    def fit(self, X, y):
        if X.shape[0] == 340:  # a run (the plans use a 240-row stand-in)
            drawn.append(self.l1_bound)
            warnings.warn(f"a run with l1_bound={self.l1_bound}", UserWarning)
            if self.l1_bound == 20.0:
                data_dependent_warning("a notice about the data", UserWarning)
        return orig(self, X, y)

    monkeypatch.setattr(FrankWolfeLassoClassifier, "fit", fit)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        s = _search(n_samples_public=300, classes=[0, 1], n_runs=8.0,
                    random_state=3).fit(X, y)
    # several hyperparameters tried, 20.0 among them but not released: a test that
    # can fail (the other runs' data-dependent warning was passed on before)
    assert len(set(drawn)) >= 2 and 20.0 in drawn and s.best_params_["l1_bound"] != 20.0
    texts = [str(w.message) for w in record if issubclass(w.category, UserWarning)]
    best = s.best_params_["l1_bound"]
    expected = (f"a run with l1_bound={best} (a warning of the run the search released) "
                f"{DATA_DEPENDENT_NOTE}")
    assert [t for t in texts if t.startswith("a run with")] == [expected]
    assert not any("a notice about the data" in t for t in texts)


def test_search_over_the_sparsifier_fits():
    """The Sparsifier's epsilon must exceed its epsilon_count: the search calibrates
    its runs' budget above it (and refuses a budget that cannot)."""
    X, y = _problem(n=200, d=20)
    search = PrivateHyperparameterSearch(
        SparsifiedLassoClassifier(max_iter=10), {"l1_bound": [1.0, 5.0]}, epsilon=1.0,
        delta=1e-5, n_runs=3.0, n_samples_public=200, classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    assert search.epsilon_run_ > 0.05 and search.privacy_spent_[0] <= 1.0
    assert search.best_estimator_.epsilon == search.epsilon_run_
    with pytest.raises(ValueError, match="epsilon_count"):
        PrivateHyperparameterSearch(
            SparsifiedLassoClassifier(max_iter=10, epsilon_count=0.5),
            {"l1_bound": [1.0]}, epsilon=0.6, n_samples_public=200,
            classes=[0, 1]).fit(X, y)


def test_search_over_dp_ight_fits():
    """DP-IGHT (300 steps by default) refuses a budget too small for its noise
    multiplier: the search's bracket starts where it plans."""
    X, y = _problem(n=200, d=20)
    search = PrivateHyperparameterSearch(
        DPIGHTClassifier(), {"sparsity": [2, 5]}, epsilon=1.0, n_runs=3.0,
        n_samples_public=200, classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    assert 0.0 < search.epsilon_run_ < 1.0 and search.privacy_spent_[0] <= 1.0
