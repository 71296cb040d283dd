"""The privacy plan: every private estimator computes its event and spend from
public quantities in ``_privacy_plan(n_samples, n_features, classes)``, which
``fit`` calls first and :func:`~dptoolkit._private.plan_spend` calls directly.

For every private configuration of the contract tests (tests/test_private_contract.py,
their non-private variants included) and of the noise-handle walk
(tests/test_noise_handles.py, which covers every private class of the package):

* ``plan_spend`` gives exactly the ``privacy_event_`` and ``privacy_spent_`` of a
  real fit (no tolerance: the fit records its plan);
* ``plan_spend`` never fits anything: with ``fit`` of every private class replaced
  by a function that raises, it still plans (the old ``plan_spend`` ran ``fit`` up
  to the privacy check, so these tests fail on it);
* the shape and the label set alone (no stand-in data) give the same plan;
* a fit plans once; the plan and its parameters are frozen.

A third-party estimator that follows the contract without ``_privacy_plan`` gets
a TypeError naming the method.
"""
import dataclasses
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from dptoolkit._plan import PrivacyPlan
from dptoolkit._private import PrivateEstimatorMixin, plan_spend

import test_noise_handles as walk
import test_private_contract as contract


def _all_subclasses(cls):
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub} | _all_subclasses(sub)
    return out


def _configurations():
    """``(id, make, X, y)``: the contract cases (private and non-private) and the walk."""
    out = []
    for case in contract.CASES:
        X, y = contract._data(case.data)
        out.append(pytest.param(case.make, X, y, id=case.name))
        if case.nonprivate is not None:
            out.append(pytest.param(lambda c=case: c.make(**c.nonprivate), X, y,
                                    id=f"{case.name}-nonprivate"))
    for name, (make, kind) in {**walk.FACTORIES, **walk.FACTORIES_NESTED}.items():
        X, y = walk._data("binary" if kind == "multinomial" else kind)
        if kind == "multinomial":
            y = np.arange(y.shape[0]) % 3
        out.append(pytest.param(make, X, y, id=f"walk-{name}"))
    return out


CONFIGURATIONS = _configurations()


@pytest.fixture
def no_fit(monkeypatch):
    """Make every private class's ``fit`` raise (the plan must not run one)."""
    def install():
        def refuse(self, *args, **kwargs):
            raise AssertionError(f"plan_spend called {type(self).__name__}.fit")

        for cls in _all_subclasses(PrivateEstimatorMixin):
            if hasattr(cls, "fit"):
                monkeypatch.setattr(cls, "fit", refuse)
    return install


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # public-size and label-set warnings
        return fn(*args, **kwargs)


@pytest.mark.parametrize("make,X,y", CONFIGURATIONS)
def test_plan_spend_is_the_fit_without_fitting(make, X, y, no_fit):
    fitted = _quiet(make().fit, X, y)
    est = make()
    no_fit()
    event, spent = _quiet(plan_spend, est, X, y)
    assert event == fitted.privacy_event_
    assert spent == fitted.privacy_spent_           # exactly: the fit records its plan
    assert not hasattr(est, "privacy_spent_")       # the estimator itself untouched


@pytest.mark.parametrize("make,X,y", CONFIGURATIONS)
def test_the_shape_and_the_label_set_are_enough(make, X, y, no_fit):
    est = make()
    no_fit()
    from_data = _quiet(plan_spend, est, X, y)
    classes = _quiet(est._label_set, y) if "classes" in est.get_params(deep=False) else None
    from_shape = _quiet(plan_spend, est, n_samples=X.shape[0], n_features=X.shape[1],
                        classes=classes)
    assert from_shape == from_data


@pytest.mark.parametrize("make,X,y", CONFIGURATIONS)
def test_fit_plans_once_and_the_plan_is_frozen(make, X, y, monkeypatch):
    est = make()
    cls = type(est)
    plans = []
    original = cls._privacy_plan

    def spy(self, *args):
        plan = original(self, *args)
        if self is est:
            plans.append(plan)
        return plan

    monkeypatch.setattr(cls, "_privacy_plan", spy)
    _quiet(est.fit, X, y)
    assert len(plans) == 1
    plan = plans[0]
    assert isinstance(plan, PrivacyPlan)
    assert (plan.event, plan.spent) == (est.privacy_event_, est.privacy_spent_)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.event = None
    params = plan.params
    if dataclasses.is_dataclass(params):
        field = dataclasses.fields(params)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(params, field, None)
    else:                                           # the pipeline's named tuple
        assert isinstance(params, tuple)


# ----------------------------------------------------------------- errors
class _WithoutPlan(PrivateEstimatorMixin, BaseEstimator):
    """A third-party estimator following the contract, without ``_privacy_plan``."""

    def __init__(self, epsilon=1.0):
        self.epsilon = epsilon

    def fit(self, X, y=None):
        raise AssertionError("plan_spend must not fit")


def test_a_contract_estimator_without_a_plan_gets_a_type_error():
    with pytest.raises(TypeError, match=r"_WithoutPlan .*_privacy_plan\(n_samples, "
                                        r"n_features, classes\)"):
        plan_spend(_WithoutPlan(), np.zeros((10, 3)))


def test_an_estimator_outside_the_contract_gets_a_type_error():
    from sklearn.linear_model import LogisticRegression

    with pytest.raises(TypeError, match="private-estimator contract"):
        plan_spend(LogisticRegression(), np.zeros((10, 3)))


def test_a_shape_is_needed():
    make = walk.FACTORIES["DPSIS"][0]
    with pytest.raises(ValueError, match="n_samples and n_features"):
        plan_spend(make(), n_samples=10)
    with pytest.raises(ValueError, match="n_features"):
        plan_spend(make(), n_samples=10, n_features=0)


def test_a_classifier_without_a_label_set_cannot_be_planned():
    est = walk.FACTORIES["FrankWolfeLassoClassifier"][0](classes=None)
    with pytest.raises(ValueError, match="label set"):
        plan_spend(est, n_samples=80, n_features=8)
    # with the label set given, the plan is the one of the declared classes
    assert plan_spend(est, n_samples=80, n_features=8, classes=[0, 1]) == plan_spend(
        walk.FACTORIES["FrankWolfeLassoClassifier"][0](), n_samples=80, n_features=8)


def test_invalid_parameters_are_refused_by_the_plan_as_by_fit():
    make = walk.FACTORIES["DPSGDClassifier"][0]
    with pytest.raises(ValueError, match="epsilon"):
        plan_spend(make().set_params(epsilon=-1.0), n_samples=80, n_features=8)


@pytest.mark.parametrize("model", ["frank-wolfe", "dp-sgd", "dp-scd", "dp-ight",
                                   "dp-nb-logistic", "sparsifier", "select-then-fit",
                                   "search"])
def test_the_command_line_accounts_without_fitting(model, no_fit, capsys):
    from dptoolkit.cli import main

    no_fit()
    status = main(["account", "--model", model, "--epsilon", "1", "--delta", "1e-5",
                   "--n-samples", "5000", "--n-features", "1000"])
    out = capsys.readouterr().out
    assert status == 0 and "guarantee: (" in out and "privacy event:" in out
