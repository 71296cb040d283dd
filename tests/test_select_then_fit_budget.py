"""PrivateSelectThenFit with one total budget (``epsilon``, ``delta``, ``selection_share``).

* the pipeline sets the steps' budgets on its clones so that the composed event
  spends exactly (epsilon, delta) (the split at (epsilon/2, delta/2) spends about
  0.7 epsilon with DP-SIS's Gaussian selection and Frank-Wolfe);
* the split is the zCDP share: the Gaussian selection's rho is ``share`` of the
  total and Frank-Wolfe gets the ``(epsilon, delta)`` of the rest;
* pure DP (no delta): the shares of epsilon, basic composition;
* the plan is the fit's spend; the accountant is charged once and stays shared under
  ``sklearn.clone``; the user's objects are never modified;
* Frank-Wolfe's ``k="auto"`` does not screen the selected columns again
  (from the zero start);
* bad values name the parameter.

Every test fails on the pipeline without a total budget (no ``epsilon`` parameter).
No statistical assertion: the budgets are functions of public quantities.
"""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from dptoolkit._private import plan_spend
from dptoolkit.accounting import BudgetAccountant, epsilon_of_event
from dptoolkit.accounting.events import GaussianEvent, ZCDPEvent
from dptoolkit.exceptions import BudgetExceededError
from dptoolkit.linear_model import FrankWolfeLassoClassifier
from dptoolkit.selection import DPSIS, PrivateSelectThenFit

N, D = 300, 2000        # D > N: DPSIS's selector "auto" is the Gaussian release


def _text_like(seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random_array((N, D), density=0.02, rng=rng, format="csr")
    X.data[:] = 1.0
    y = (np.asarray(X[:, :5].sum(axis=1)).ravel() + rng.random(N) > 0.6).astype(int)
    return X, y


def _pipe(**kw):
    return PrivateSelectThenFit(**{
        "selector": DPSIS(y_bounds=(0, 1), n_samples_public=N, random_state=0, epsilon=None),
        "estimator": FrankWolfeLassoClassifier(n_samples_public=N, random_state=0, epsilon=None),
        "epsilon": 1.0, "delta": 1e-5, "classes": [0, 1], **kw})


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 8.0])
def test_the_pair_spends_the_whole_budget(epsilon):
    X, y = _text_like()
    pipe = _fit(_pipe(epsilon=epsilon), X, y)
    eps, delta = pipe.privacy_spent_
    assert delta == 1e-5
    assert eps <= epsilon * (1 + 1e-12)
    assert eps == pytest.approx(epsilon, rel=1e-7)
    assert eps == epsilon_of_event(pipe.privacy_event_, delta)
    assert pipe.privacy_event_.events == (pipe.selector_.privacy_event_,
                                          pipe.estimator_.privacy_event_)
    assert isinstance(pipe.selector_.privacy_event_, GaussianEvent)
    # each step alone guarantees its own pair at the pipeline's delta
    for step in (pipe.selector_, pipe.estimator_):
        assert step.privacy_spent_[1] == delta
        assert step.privacy_spent_[0] < epsilon
    # the former split, (epsilon/2, delta/2) to each step, leaves budget unspent
    half = PrivateSelectThenFit(
        DPSIS(epsilon=epsilon / 2, delta=5e-6, y_bounds=(0, 1), n_samples_public=N),
        FrankWolfeLassoClassifier(epsilon=epsilon / 2, delta=5e-6, n_samples_public=N),
        classes=[0, 1], epsilon=None)
    assert plan_spend(half, X, y)[1][0] < 0.8 * epsilon


@pytest.mark.parametrize("share", [0.25, 0.5, 0.75])
def test_the_split_is_the_zcdp_share(share):
    X, y = _text_like()
    pipe = _fit(_pipe(selection_share=share), X, y)
    sigma = pipe.selector_.privacy_event_.noise_multiplier
    rho_selection = 1.0 / (2.0 * sigma ** 2)        # the Gaussian mechanism's zCDP
    rho = rho_selection / share
    assert pipe.selector_.epsilon == pytest.approx(
        epsilon_of_event(ZCDPEvent(rho_selection), 1e-5), rel=1e-7)
    assert pipe.estimator_.epsilon == pytest.approx(
        epsilon_of_event(ZCDPEvent((1.0 - share) * rho), 1e-5), rel=1e-6)
    assert pipe.estimator_.delta == pipe.selector_.delta == 1e-5
    assert pipe.privacy_spent_[0] == pytest.approx(1.0, rel=1e-7)


def test_the_default_share_is_even():
    assert PrivateSelectThenFit(DPSIS(epsilon=None), FrankWolfeLassoClassifier(epsilon=None),
                                epsilon=None).selection_share == 0.5


@pytest.mark.parametrize("delta", [None, 0.0])
def test_pure_dp_splits_epsilon_by_basic_composition(delta):
    X, y = _text_like()
    pipe = _fit(_pipe(delta=delta, selection_share=0.3), X, y)
    assert pipe.selector_.epsilon == pytest.approx(0.3)
    assert pipe.estimator_.epsilon == pytest.approx(0.7)
    assert pipe.selector_.privacy_spent_ == (pytest.approx(0.3), 0.0)
    eps, delta_spent = pipe.privacy_spent_
    assert eps == pytest.approx(1.0, rel=1e-12)
    assert delta_spent < 1e-9            # Frank-Wolfe's floating-point delta only


@pytest.mark.parametrize("delta", [1e-5, None])
def test_the_plan_is_the_fit(delta):
    X, y = _text_like()
    pipe = _pipe(delta=delta)
    planned = plan_spend(pipe, X, y)
    _fit(pipe, X, y)
    assert planned == (pipe.privacy_event_, pipe.privacy_spent_)
    assert plan_spend(pipe, n_samples=N, n_features=D, classes=[0, 1]) == planned


def test_the_users_objects_are_not_modified():
    X, y = _text_like()
    pipe = _pipe()
    before = {name: clone(getattr(pipe, name)).get_params(deep=False)
              for name in ("selector", "estimator")}
    _fit(pipe, X, y)
    for name in ("selector", "estimator"):
        step = getattr(pipe, name)
        assert step.get_params(deep=False) == before[name]
        assert step.epsilon is None and not hasattr(step, "privacy_spent_")


def test_the_accountant_is_charged_once_and_stays_shared():
    X, y = _text_like()
    acc = BudgetAccountant(epsilon=3.0, delta=1e-4)
    pipe = _pipe(accountant=acc)
    assert clone(pipe).accountant is acc
    _fit(pipe, X, y)
    assert acc.spent[0] == pytest.approx(1.0, rel=1e-7)
    assert acc.spent[1] == pytest.approx(1e-5)
    assert len(acc.spends) == 1
    small = BudgetAccountant(epsilon=0.9, delta=1e-4)
    with pytest.raises(BudgetExceededError):
        _fit(_pipe(accountant=small), X, y)
    assert small.spends == []


def test_no_second_screening_of_the_selected_columns():
    """Frank-Wolfe's k="auto" screens more than 1024 columns with a quarter
    of its budget; inside the pipeline the columns are already selected (from the
    zero start; the naive-Bayes start keeps them all, tests/test_pipeline_start.py)."""
    X, y = _text_like()
    pipe = _fit(_pipe(selector=DPSIS(k=1500, y_bounds=(0, 1), n_samples_public=N,
                                     random_state=0, epsilon=None),
                      estimator=FrankWolfeLassoClassifier(n_samples_public=N, start="zero",
                                                          random_state=0, epsilon=None)), X, y)
    assert pipe.support_.sum() == 1500
    assert pipe.estimator_.k is None
    assert pipe.estimator_.screened_features_ is None
    assert not any(isinstance(e, GaussianEvent)
                   for e in pipe.estimator_.privacy_event_.events)
    assert pipe.estimator.k == "auto"            # the user's object
    # an int screening is the user's choice, kept
    kept = _fit(_pipe(selector=DPSIS(k=1500, y_bounds=(0, 1), n_samples_public=N, epsilon=None),
                      estimator=FrankWolfeLassoClassifier(n_samples_public=N,
                                                          k=512, epsilon=None)), X, y)
    assert kept.estimator_.screened_features_.size == 512


@pytest.mark.parametrize("params,error,match", [
    ({"selection_share": 0.0}, ValueError, r"selection_share (of \w+ )?must"),
    ({"selection_share": 1.0}, ValueError, r"selection_share (of \w+ )?must"),
    ({"selection_share": -0.5}, ValueError, r"selection_share (of \w+ )?must"),
    ({"selection_share": math.nan}, ValueError, r"selection_share (of \w+ )?must"),
    ({"selection_share": "half"}, TypeError, r"selection_share (of \w+ )?must"),
    ({"epsilon": 0.0}, ValueError, r"epsilon (of \w+ )?must"),
    ({"epsilon": -1.0}, ValueError, r"epsilon (of \w+ )?must"),
    ({"epsilon": math.inf}, ValueError, r"epsilon (of \w+ )?must"),
    ({"epsilon": "1"}, TypeError, r"epsilon (of \w+ )?must"),
    ({"delta": 1.0}, ValueError, r"delta (of \w+ )?must"),
    ({"delta": -1e-5}, ValueError, r"delta (of \w+ )?must"),
    ({"epsilon": None, "delta": 1e-5}, ValueError, "delta is set but epsilon is None"),
    ({"epsilon": 1e-3}, ValueError, "epsilon=0.001 at delta=1e-05 cannot be split"),
])
def test_bad_budget_names_the_parameter(params, error, match):
    X, y = _text_like()
    with pytest.raises(error, match=match):
        _fit(_pipe(**params), X, y)


def test_steps_without_a_budget_parameter_are_refused():
    from sklearn.feature_selection import SelectKBest
    X, y = _text_like()
    with pytest.raises(TypeError, match="selector SelectKBest has no epsilon and delta"):
        _fit(PrivateSelectThenFit(SelectKBest(k=5), FrankWolfeLassoClassifier(),
                                  epsilon=1.0, delta=1e-5, classes=[0, 1]), X, y)


def _three_classes():
    X, y = _text_like()
    return X, np.where(np.arange(N) % 3 == 0, 2, y)


def test_more_than_two_classes_are_refused_before_any_work_or_spend(monkeypatch):
    # DP-SIS's score and sensitivity are derived for two classes: three declared
    # classes are refused with a message naming classes, nothing fitted or charged
    X, y = _three_classes()
    monkeypatch.setattr(DPSIS, "fit", lambda *a, **k: pytest.fail("DPSIS was fitted"))
    acc = BudgetAccountant(epsilon=3.0, delta=1e-4)
    pipe = _pipe(classes=[0, 1, 2], accountant=acc)
    with pytest.raises(ValueError, match=r"classes declares 3 classes.*two classes"):
        pipe.fit(X, y)
    assert acc.spends == [] and acc.spent == (0.0, 0.0)
    assert not hasattr(pipe, "selector_") and not hasattr(pipe, "privacy_spent_")
    with pytest.raises(ValueError, match="two classes"):   # the plan refuses too
        plan_spend(_pipe(classes=[0, 1, 2]), n_samples=N, n_features=D, classes=[0, 1, 2])


def test_more_than_two_classes_read_from_y_are_refused():
    X, y = _three_classes()
    acc = BudgetAccountant(epsilon=3.0, delta=1e-4)
    with pytest.raises(ValueError, match=r"y has 3 classes.*declare it as classes.*two classes"):
        _fit(_pipe(classes=None, accountant=acc), X, y)
    assert acc.spends == []
